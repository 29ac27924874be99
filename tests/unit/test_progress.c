/* The simulator's progress callback (wavec_options.progress): called once
 * after each workgroup with the workgroups done (1, 2, ... in order) and
 * their number in all, on every run; never when unset, or when the
 * caller's options end before the field. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "wavec.h"

typedef struct calls {
  uint64_t n, last_done, total;
  int out_of_order;
} calls;

static void on_progress(void *ud, uint64_t done, uint64_t total) {
  calls *c = ud;
  c->out_of_order |= done != c->last_done + 1 || (c->n && total != c->total);
  c->n++;
  c->last_done = done;
  c->total = total;
}

/* examples/gemm.wave (64 x 64 workgroup tiles) at M x N x 64, simulated
 * `runs` times with options of `size` bytes; the status. */
static wavec_status gemm(int64_t m, int64_t n, size_t size, calls *c,
                         int runs) {
  size_t len;
  char *src = slurp("examples/gemm.wave", &len);
  wavec_ctx *ctx = wavec_ctx_new(NULL, NULL);
  wavec_define_int(ctx, "M", m);
  wavec_define_int(ctx, "N", n);
  wavec_define_int(ctx, "K", 64);
  wavec_options opt = WAVEC_OPTIONS_INIT;
  opt.size = size;
  opt.progress = on_progress;
  opt.progress_ud = c;
  wavec_status st = src ? wavec_parse(ctx, "gemm.wave", src, len)
                        : WAVEC_ERR_INVALID;
  wavec_kernel *k = st == WAVEC_OK ? wavec_kernel_get(ctx, 0) : NULL;
  if (k)
    st = wavec_compile(k, &opt);
  void *bufs[3] = {0};
  for (size_t i = 0; st == WAVEC_OK && i < 3; i++) {
    wavec_arg_info a;
    wavec_arg_info_get(k, i, &a);
    bufs[i] = calloc(a.bytes, 1);
  }
  for (int r = 0; st == WAVEC_OK && r < runs; r++) {
    c->last_done = 0; /* each run counts from 1 */
    st = wavec_simulate(k, bufs);
  }
  CHECKF(st == WAVEC_OK, "%s", wavec_errmsg(ctx));
  for (size_t i = 0; i < 3; i++)
    free(bufs[i]);
  wavec_ctx_free(ctx);
  free(src);
  return st;
}

static void once_per_workgroup(void) {
  calls c = {0};
  gemm(192, 128, sizeof(wavec_options), &c, 1); /* 3 x 2 workgroups */
  CHECKF(c.n == 6 && c.last_done == 6 && c.total == 6 && !c.out_of_order,
         "%llu calls, last %llu of %llu, out of order %d",
         (unsigned long long)c.n, (unsigned long long)c.last_done,
         (unsigned long long)c.total, c.out_of_order);
}

static void every_run(void) {
  calls c = {0};
  gemm(64, 64, sizeof(wavec_options), &c, 3);
  CHECKF(c.n == 3 && c.total == 1 && !c.out_of_order, "%llu calls",
         (unsigned long long)c.n);
}

/* an older caller's options end before the callback: it is not read */
static void old_options(void) {
  calls c = {0};
  gemm(64, 64, offsetof(wavec_options, progress), &c, 1);
  CHECKF(c.n == 0, "%llu calls", (unsigned long long)c.n);
}

int main(void) {
  RUN(once_per_workgroup);
  RUN(every_run);
  RUN(old_options);
  CHECK_EXIT();
}
