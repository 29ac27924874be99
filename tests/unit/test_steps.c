/* The simulator's step budget (wavec_options.max_steps): a run that would
 * take more instructions of a wave than the budget fails with E0614 at the
 * innermost loop it was in, instead of running for ages; the budget counts
 * every run afresh, and 0 (or an options struct too old to have the field)
 * means WAVEC_DEFAULT_MAX_STEPS. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "ir/ir.h"
#include "wavec.h"

/* A loop over A tiles around a loop over B tiles, one wave. */
static const char spin[] =
    "kernel spin(a: Memory[A, f32], b: Memory[B, f32], y: Memory[M, f32]) {\n"
    "  constraints { workgroup(M, 32, 0)\n"
    "                hardware(threads_per_wave = 32)\n"
    "                tiling(A, 1)\n"
    "                tiling(B, 1) }\n"
    "  defaults { M = 32 }\n"
    "  r = iterate(A, ra = Register[M, f32](0.0)) {\n"
    "    s = iterate(B, rb = ra) {\n"
    "      yield rb + 1.0\n"
    "    }\n"
    "    yield s\n"
    "  }\n"
    "  write(r, y)\n"
    "}\n";

typedef struct result {
  wavec_status st;
  int code;
  uint32_t line, col;
  char msg[1024];
  float y0; /* y[0] after a run that passed */
} result;

/* Compiles src (A and B tiles) with max_steps in an options struct of
 * `size` bytes, then simulates it `runs` times; the last status. */
static result run(const char *file, const char *src, size_t len, int64_t A,
                  int64_t B, uint64_t max_steps, size_t size, int runs) {
  result r = {0};
  wavec_ctx *ctx = wavec_ctx_new(NULL, NULL);
  if (A) {
    wavec_define_int(ctx, "A", A);
    wavec_define_int(ctx, "B", B);
  }
  wavec_options opt = WAVEC_OPTIONS_INIT;
  opt.size = size;
  opt.max_steps = max_steps;
  r.st = wavec_parse(ctx, file, src, len);
  wavec_kernel *k = r.st == WAVEC_OK ? wavec_kernel_get(ctx, 0) : NULL;
  if (k)
    r.st = wavec_compile(k, &opt);
  size_t n = k ? wavec_arg_count(k) : 0;
  void *bufs[16] = {0};
  for (size_t i = 0; r.st == WAVEC_OK && i < n && i < 16; i++) {
    wavec_arg_info a;
    wavec_arg_info_get(k, i, &a);
    bufs[i] = calloc(a.bytes ? a.bytes : 1, 1);
  }
  for (int i = 0; r.st == WAVEC_OK && i < runs; i++)
    r.st = wavec_simulate(k, bufs);
  if (r.st == WAVEC_OK && n)
    r.y0 = ((float *)bufs[n - 1])[0];
  wavec_diag_info d;
  if (r.st != WAVEC_OK && wavec_diag(ctx, 0, &d) == WAVEC_OK) {
    r.code = d.code;
    r.line = d.loc.line;
    r.col = d.loc.col;
  }
  snprintf(r.msg, sizeof r.msg, "%s", wavec_errmsg(ctx));
  for (size_t i = 0; i < 16; i++)
    free(bufs[i]);
  wavec_ctx_free(ctx);
  return r;
}

static result spin_run(int64_t A, int64_t B, uint64_t max_steps, int runs) {
  return run("spin.wave", spin, sizeof spin - 1, A, B, max_steps,
             sizeof(wavec_options), runs);
}

/* The least budget that runs spin at A x B: every budget below fails,
 * every one from it passes. */
static uint64_t least_budget(int64_t A, int64_t B) {
  uint64_t lo = 1, hi = 1u << 24; /* fails at lo - 1 ... passes at hi */
  while (lo < hi) {
    uint64_t mid = lo + (hi - lo) / 2;
    if (spin_run(A, B, mid, 1).st == WAVEC_OK)
      hi = mid;
    else
      lo = mid + 1;
  }
  return lo;
}

static void stops_at_the_budget(void) {
  uint64_t n = least_budget(16, 16);
  /* a few instructions per inner iteration, one wave */
  CHECKF(n >= 3 * 16 * 16 && n <= 8 * 16 * 16, "%llu steps for 16 x 16",
         (unsigned long long)n);
  result pass = spin_run(16, 16, n, 1);
  CHECKF(pass.st == WAVEC_OK && pass.y0 == 256.0f, "%s (y[0] = %g)", pass.msg,
         pass.y0);
  result fail = spin_run(16, 16, n - 1, 1); /* at the last instruction */
  CHECKF(fail.st == WAVEC_ERR_RUNTIME && fail.code == 614 && fail.line == 13,
         "%s", fail.msg);
  /* in the middle: at the loop the run was in, mostly the inner one */
  int inner = 0;
  for (uint64_t b = n / 2; b < n / 2 + 10; b++) {
    fail = spin_run(16, 16, b, 1);
    CHECKF(fail.code == 614 && (fail.line == 7 || fail.line == 8), "%s",
           fail.msg);
    inner += fail.line == 8 && fail.col == 9;
  }
  CHECKF(inner >= 7, "%d of 10 budgets stopped in the inner loop", inner);
  CHECKF(strstr(fail.msg, "budget of ") && strstr(fail.msg, "--max-steps"),
         "%s", fail.msg);
  /* the steps grow with the trips of the inner loop */
  uint64_t n2 = least_budget(16, 32);
  CHECKF(n2 > n + 16 * 16 * 2, "%llu then %llu steps", (unsigned long long)n,
         (unsigned long long)n2);
}

/* Each run gets the whole budget. */
static void every_run_counts_afresh(void) {
  uint64_t n = least_budget(8, 8);
  result r = spin_run(8, 8, n, 3);
  CHECKF(r.st == WAVEC_OK, "%s", r.msg);
}

/* 0, or an options struct that ends before max_steps: the default, far
 * more than spin needs (and the field past `size` is not read). */
static void default_budget(void) {
  result r = spin_run(64, 64, 0, 1);
  CHECKF(r.st == WAVEC_OK && r.y0 == 4096.0f, "%s", r.msg);
  r = run("spin.wave", spin, sizeof spin - 1, 64, 64, 1,
          offsetof(wavec_options, max_steps), 1);
  CHECKF(r.st == WAVEC_OK && r.y0 == 4096.0f, "%s", r.msg);
  CHECK(WAVEC_DEFAULT_MAX_STEPS == UINT64_C(4294967296));
}

/* A kernel whose budget no wavec_compile set (a thread program built by
 * hand, as tests/gpu/ops.c builds one) runs under the default, not under
 * a budget of 0 steps (found on the GPU: every op of ops.c failed E0614). */
static void unset_budget(void) {
  wavec_ctx *ctx = wavec_ctx_new(NULL, NULL);
  wavec_define_int(ctx, "A", 4);
  wavec_define_int(ctx, "B", 4);
  CHECK(wavec_parse(ctx, "spin.wave", spin, sizeof spin - 1) == WAVEC_OK);
  wavec_kernel *k = wavec_kernel_get(ctx, 0);
  CHECK(k && wavec_compile(k, NULL) == WAVEC_OK);
  if (!k) {
    wavec_ctx_free(ctx);
    return;
  }
  k->k.max_steps = 0;
  float a[4] = {0}, b[4] = {0}, y[32] = {0};
  void *bufs[3] = {a, b, y};
  wavec_status st = wavec_simulate(k, bufs);
  CHECKF(st == WAVEC_OK && y[0] == 16.0f, "%s", wavec_errmsg(ctx));
  wavec_ctx_free(ctx);
}

/* tests/diag/sim_step_budget.wave: eight loops of 4096 trips (4096^8
 * iterations) stop at the innermost one. */
static void nested_4096_to_the_8th(void) {
  size_t len;
  char *src = slurp("tests/diag/sim_step_budget.wave", &len);
  CHECK(src != NULL);
  if (!src)
    return;
  result r = run("sim_step_budget.wave", src, len, 0, 0, 100000,
                 sizeof(wavec_options), 1);
  CHECK(r.st == WAVEC_ERR_RUNTIME);
  CHECKF(r.code == 614 && r.line == 28 && r.col == 38, "%s", r.msg);
  CHECKF(strstr(r.msg, "sim_step_budget.wave:28:38: error[E0614]: ") &&
             strstr(r.msg, "budget of 100000 steps"),
         "%s", r.msg);
  free(src);
}

int main(void) {
  RUN(stops_at_the_budget);
  RUN(every_run_counts_afresh);
  RUN(default_budget);
  RUN(unset_budget);
  RUN(nested_4096_to_the_8th);
  CHECK_EXIT();
}
