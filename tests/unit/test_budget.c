/* Compile time is a feature: source to PTX for every kernel of every
 * example (parse, every pass, the PTX printer) must stay within a budget.
 * The budget is generous, about 10x what this took when it was set (under
 * ASan+UBSan, as tests/run.sh runs it), so that only a real slowdown fails
 * it, such as a pass that turns quadratic. Each file is timed in CPU time,
 * the fastest of 3 runs. */
#include <dirent.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "wavec.h"

/* CPU milliseconds for all the examples below at the sizes of
 * source_to_ptx, under the sanitizers: 207 ms when it was set (a release
 * build: 86 ms). */
#define BUDGET_MS 2000.0

static const struct {
  const char *file;
  int nvidia;  /* --hardware threads_per_wave=32,mma=F32_16x8x16_F16 */
  int kernels; /* how many kernels the file has */
} files[] = {
    {"examples/gemm.wave", 0, 1},
    {"examples/gemm_wgmma.wave", 0, 1},
    {"examples/attention_fwd.wave", 0, 2},
    {"examples/attention_fwd_wgmma.wave", 0, 2},
    {"examples/attention_bwd.wave", 0, 6},
    {"examples/attention_bwd_dkdv.wave", 1, 1},
    {"examples/attention_bwd_wgmma.wave", 0, 8},
    {"examples/gemm_fp8.wave", 0, 2},
    {"examples/gemm_i8.wave", 0, 2},
};
#define NFILES (sizeof files / sizeof files[0])

/* CPU time of this process: the compiler is one thread, and CPU time
 * leaves out the waits of a machine shared with other work. */
static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Source to PTX for every kernel of file i, in ms; bytes of PTX made. */
static double source_to_ptx(size_t i, const char *src, size_t len,
                            size_t *bytes) {
  static const char *const defs[][2] = {{"B", "2"},    {"M", "256"},
                                        {"N", "128"},  {"K", "256"},
                                        {"K1", "128"}, {"K2", "256"}};
  double t0 = now_ms();
  wavec_ctx *ctx = wavec_ctx_new(NULL, NULL);
  for (size_t d = 0; d < sizeof defs / sizeof defs[0]; d++)
    wavec_define_int(ctx, defs[d][0], atoll(defs[d][1]));
  if (files[i].nvidia) {
    wavec_hardware_override(ctx, "threads_per_wave", "32");
    wavec_hardware_override(ctx, "mma", "F32_16x8x16_F16");
  }
  wavec_status st = wavec_parse(ctx, files[i].file, src, len);
  size_t n = wavec_kernel_count(ctx);
  CHECKF(st == WAVEC_OK && n == (size_t)files[i].kernels, "%s: %zu kernels: %s",
         files[i].file, n, wavec_errmsg(ctx));
  *bytes = 0;
  for (size_t k = 0; st == WAVEC_OK && k < n; k++) {
    wavec_kernel *kern = wavec_kernel_get(ctx, k);
    const char *ptx;
    size_t plen = 0;
    st = wavec_compile(kern, NULL);
    if (st == WAVEC_OK)
      st = wavec_emit_ptx(kern, "sm_90a", &ptx, &plen);
    CHECKF(st == WAVEC_OK, "%s %s: %s", files[i].file, wavec_kernel_name(kern),
           wavec_errmsg(ctx));
    *bytes += plen;
  }
  wavec_ctx_free(ctx);
  return now_ms() - t0;
}

/* The table above holds every example. */
static void every_example(void) {
  DIR *d = opendir("examples");
  CHECK(d);
  for (struct dirent *e; d && (e = readdir(d));) {
    size_t n = strlen(e->d_name);
    if (n < 5 || strcmp(e->d_name + n - 5, ".wave") != 0)
      continue;
    char path[300];
    snprintf(path, sizeof path, "examples/%s", e->d_name);
    size_t i = 0;
    while (i < NFILES && strcmp(files[i].file, path) != 0)
      i++;
    CHECKF(i < NFILES, "%s is not in test_budget.c's table", path);
  }
  if (d)
    closedir(d);
}

static void examples_within_budget(void) {
  double total = 0;
  size_t kernels = 0, bytes = 0;
  for (size_t i = 0; i < NFILES; i++) {
    size_t len, b = 0;
    char *src = slurp(files[i].file, &len);
    CHECKF(src, "cannot read %s", files[i].file);
    if (!src)
      continue;
    double best = 0;
    for (int rep = 0; rep < 3; rep++) {
      double ms = source_to_ptx(i, src, len, &b);
      best = rep == 0 || ms < best ? ms : best;
    }
    free(src);
    printf("  %-36s %d kernel(s) %8.2f ms\n", files[i].file, files[i].kernels,
           best);
    total += best;
    kernels += (size_t)files[i].kernels;
    bytes += b;
  }
  printf("  source to PTX, %zu kernels (%zu KiB of PTX): %.1f ms of CPU, "
         "budget %.0f ms\n",
         kernels, bytes >> 10, total, BUDGET_MS);
  CHECKF(total < BUDGET_MS,
         "source to PTX took %.1f ms, over the budget "
         "of %.0f ms",
         total, BUDGET_MS);
}

/* Compiling does not take longer for larger sizes: a causal attention
 * over 2^31 queries and keys (2^25 workgroups along M) compiles as fast
 * as one over 2^16. The passes walks and masksplit once looked at every
 * workgroup (5 s here in a release build, hours at 2^40; found looking
 * for a compile that fuzz inputs could make run away). */
static void sizes_cost_nothing(void) {
  static const int64_t sizes[] = {65536, INT64_C(2147483648)};
  size_t len;
  char *src = slurp("examples/attention_fwd.wave", &len);
  CHECK(src);
  double ms[2] = {0, 0};
  for (int i = 0; src && i < 2; i++) {
    wavec_ctx *ctx = wavec_ctx_new(NULL, NULL);
    wavec_define_int(ctx, "B", 1);
    wavec_define_int(ctx, "M", sizes[i]);
    wavec_define_int(ctx, "K2", sizes[i]);
    wavec_define_int(ctx, "N", 64);
    wavec_define_int(ctx, "K1", 64);
    double t0 = now_ms();
    wavec_status st =
        wavec_parse(ctx, "examples/attention_fwd.wave", src, len);
    wavec_kernel *k = wavec_kernel_find(ctx, "attention_fwd_causal");
    if (st == WAVEC_OK && k)
      st = wavec_compile(k, NULL);
    ms[i] = now_ms() - t0;
    CHECKF(st == WAVEC_OK && k, "M = %lld: %s", (long long)sizes[i],
           wavec_errmsg(ctx));
    wavec_ctx_free(ctx);
  }
  printf("  attention_fwd_causal, M = K2 = 2^16: %.1f ms, 2^31: %.1f ms\n",
         ms[0], ms[1]);
  CHECKF(ms[1] < 4 * ms[0] + 50, "2^31 took %.1f ms, 2^16 %.1f ms", ms[1],
         ms[0]);
  free(src);
}

int main(void) {
  RUN(every_example);
  RUN(examples_within_budget);
  RUN(sizes_cost_nothing);
  CHECK_EXIT();
}
