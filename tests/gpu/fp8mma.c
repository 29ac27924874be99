/* fp8 and int8 GEMMs on the GPU against float64 and int64 references
 * (tests/ref), as tests/unit/test_fp8mma.c runs them in the simulator, up
 * to sizes too large for it:
 *  - examples/gemm_fp8.wave: gemm_fp8 (wgmma, sm_90a) and gemm_fp8_sync
 *    (mma.sync m16n8k32 e4m3) at (M, N, K) in {(1, 64, 64), (17, 33, 112),
 *    (200, 72, 96), (129, 250, 48), (4097, 4095, 1008)} (the warp-level
 *    kernel also at K = 100), bf16 output with per-row scales: relative L2
 *    error against float64 at most 5e-3 (bf16 rounding alone gives about
 *    2e-3 in the simulator; Hopper's fp8 mma keeps fewer bits in its sums than f32, which
 *    the threshold allows for — it is provisional until a GPU run measures
 *    it, and the log prints every error);
 *  - tests/kernels/fp8mma.wave's e5m2 GEMMs, f32 output: at most 1e-3;
 *  - examples/gemm_i8.wave (wgmma and mma.sync m16n8k32 s8) and the
 *    kernels that start the accumulator near 2^31: bit-exact, s32 sums
 *    wrapping, against int64 sums modulo 2^32;
 *  - the lhs quantized in registers (gemm_fp8_cast, gemm_i8_cast).
 * Outputs start poisoned.
 *
 * Usage: fp8mma [--max N]: only cases whose sizes are all at most N (for
 * compute-sanitizer). Exit status 0 when every case matches, 1 when one
 * does not, 2 when there is no GPU (the message says why). Built and run
 * by tests/gpu/run.sh. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../ref/kcase.c"
#include "../ref/ref.c"
#include "support/half.h"

static int failed, passed;
static long max_size = 1L << 30;

static const char *const FP8 = "examples/gemm_fp8.wave",
                         *const I8 = "examples/gemm_i8.wave",
                         *const MORE = "tests/kernels/fp8mma.wave";

/* Runs on the GPU; false on failure (exit 2 at once without a GPU). */
static bool gpu(kcase *c, const char *what) {
  double ms = 0;
  if (wavec_gpu_run(c->k, c->buf, &ms) == WAVEC_OK)
    return true;
  const char *msg = wavec_errmsg(c->ctx);
  if (strstr(msg, "no CUDA driver") || strstr(msg, "no CUDA device") ||
      strstr(msg, "cuInit")) {
    printf("SKIP: %s\n", msg);
    exit(2);
  }
  printf("FAIL %s: %s\n", what, msg);
  failed++;
  return false;
}

static void verdict(bool ok, const char *what, const char *fmt, double v) {
  printf("%s %s: ", ok ? "ok  " : "FAIL", what);
  printf(fmt, v);
  printf("\n");
  ok ? passed++ : failed++;
}

/* Kernel `kernel` of `file` at (M, N, K), or false (counted) when it does
 * not compile or the sizes are above --max. */
static bool open_at(kcase *c, const char *file, const char *kernel, int M,
                    int N, int K, char *what, size_t wn) {
  memset(c, 0, sizeof *c);
  if (M > max_size || N > max_size || K > max_size)
    return false;
  char d[3][32];
  snprintf(d[0], 32, "M=%d", M);
  snprintf(d[1], 32, "N=%d", N);
  snprintf(d[2], 32, "K=%d", K);
  snprintf(what, wn, "%s %dx%dx%d", kernel, M, N, K);
  const char *defs[] = {d[0], d[1], d[2], NULL};
  if (kc_open(c, file, kernel, NULL, defs))
    return true;
  printf("FAIL %s: %s\n", what, c->err);
  failed++;
  return false;
}

/* Values spread over 2^-6 .. 2^6 times [-1, 1), rounded to the 8-bit
 * float type of input `name`. */
static double *fp8_input(kcase *c, const char *name, uint64_t *rng) {
  size_t n = c->info[kc_arg(c, name)].elems;
  double *x = malloc(n * sizeof *x);
  for (size_t i = 0; i < n; i++)
    x[i] = ldexp(ref_rand_uniform(rng, -1, 1),
                 (int)(ref_rand_u64(rng) % 13) - 6);
  kc_set(c, name, x);
  return x;
}

static double *i8_input(kcase *c, const char *name, uint64_t *rng) {
  size_t n = c->info[kc_arg(c, name)].elems;
  double *x = malloc(n * sizeof *x);
  for (size_t i = 0; i < n; i++)
    x[i] = (double)(int)(ref_rand_u64(rng) % 256) - 128;
  kc_set(c, name, x);
  return x;
}

static double *gemm_ref(int M, int N, int K, const double *a,
                        const double *b) {
  double *r = malloc(sizeof *r * (size_t)M * (size_t)N);
  ref_gemm((size_t)M, (size_t)N, (size_t)K, a, b, r);
  return r;
}

static void fp8_gemm(const char *kernel, int M, int N, int K, uint64_t *rng) {
  kcase c;
  char what[160];
  if (open_at(&c, FP8, kernel, M, N, K, what, sizeof what)) {
    double *a = fp8_input(&c, "a", rng), *b = fp8_input(&c, "b", rng);
    double *sa = kc_input(&c, "scale_a", rng), *sb = kc_input(&c, "scale_b", rng);
    double *ref = gemm_ref(M, N, K, a, b);
    for (int m = 0; m < M; m++)
      for (int n = 0; n < N; n++)
        ref[(size_t)m * N + n] *= sa[m] * sb[n];
    if (gpu(&c, what)) {
      double err = kc_rel_err(&c, "c", ref);
      verdict(err < 5e-3, what, "c rel err %.2e", err);
    }
    free(a), free(b), free(sa), free(sb), free(ref);
  }
  kc_close(&c);
}

static void e5m2_gemm(const char *kernel, int M, int N, int K,
                      uint64_t *rng) {
  kcase c;
  char what[160];
  if (open_at(&c, MORE, kernel, M, N, K, what, sizeof what)) {
    double *a = fp8_input(&c, "a", rng), *b = fp8_input(&c, "b", rng);
    double *ref = gemm_ref(M, N, K, a, b);
    if (gpu(&c, what)) {
      double err = kc_rel_err(&c, "c", ref);
      verdict(err < 1e-3, what, "c rel err %.2e", err);
    }
    free(a), free(b), free(ref);
  }
  kc_close(&c);
}

/* Elements of i32 output c that differ from (c0 +) ref modulo 2^32. */
static void expect_i32(kcase *c, const double *ref, const int32_t *c0,
                       size_t n, const char *what) {
  const int32_t *out = c->buf[kc_arg(c, "c")];
  size_t bad = 0;
  for (size_t i = 0; i < n; i++) {
    int64_t exact = (int64_t)ref[i] + (c0 ? c0[i] : 0);
    bad += out[i] != (int32_t)(uint32_t)(uint64_t)exact;
  }
  verdict(!bad, what, "%.0f elements differ from int64 modulo 2^32",
          (double)bad);
}

static void i8_gemm(const char *file, const char *kernel, int M, int N, int K,
                    bool from_memory, uint64_t *rng) {
  kcase c;
  char what[160];
  if (open_at(&c, file, kernel, M, N, K, what, sizeof what)) {
    double *a = i8_input(&c, "a", rng), *b = i8_input(&c, "b", rng);
    double *ref = gemm_ref(M, N, K, a, b);
    int32_t *c0 = NULL;
    if (from_memory) { /* near both ends of the s32 range: sums wrap */
      c0 = c.buf[kc_arg(&c, "c0")];
      for (int i = 0; i < M * N; i++) {
        int32_t d = (int32_t)(ref_rand_u64(rng) % (1u << 16));
        c0[i] = i % 2 ? INT32_MAX - d : INT32_MIN + d;
      }
    }
    if (gpu(&c, what))
      expect_i32(&c, ref, c0, (size_t)M * N, what);
    free(a), free(b), free(ref);
  }
  kc_close(&c);
}

/* An lhs quantized in registers from f16 (the wgmma's register
 * fragment): e4m3 within 1e-3, i8 bit-exact. */
static void cast_gemm(int M, int N, int K, uint64_t *rng) {
  kcase c;
  char what[160];
  size_t na = (size_t)M * K;
  if (open_at(&c, MORE, "gemm_fp8_cast", M, N, K, what, sizeof what)) {
    double *a = malloc(na * sizeof *a), *q = malloc(na * sizeof *q);
    for (size_t j = 0; j < na; j++)
      a[j] = ldexp(ref_rand_uniform(rng, -1, 1),
                   (int)(ref_rand_u64(rng) % 12) - 4);
    kc_set(&c, "a", a);
    for (size_t j = 0; j < na; j++)
      q[j] = wv_e4m3_to_f64(wv_f64_to_e4m3(a[j]));
    double *b = fp8_input(&c, "b", rng), *ref = gemm_ref(M, N, K, q, b);
    if (gpu(&c, what)) {
      double err = kc_rel_err(&c, "c", ref);
      verdict(err < 1e-3, what, "c rel err %.2e", err);
    }
    free(a), free(q), free(b), free(ref);
  }
  kc_close(&c);
  if (open_at(&c, MORE, "gemm_i8_cast", M, N, K, what, sizeof what)) {
    double *a = malloc(na * sizeof *a), *q = malloc(na * sizeof *q);
    for (size_t j = 0; j < na; j++)
      a[j] = ref_rand_uniform(rng, -140, 140);
    kc_set(&c, "a", a);
    for (size_t j = 0; j < na; j++) {
      double r = nearbyint(a[j]);
      q[j] = r < -128 ? -128 : r > 127 ? 127 : r;
    }
    double *b = i8_input(&c, "b", rng), *ref = gemm_ref(M, N, K, q, b);
    if (gpu(&c, what))
      expect_i32(&c, ref, NULL, (size_t)M * N, what);
    free(a), free(q), free(b), free(ref);
  }
  kc_close(&c);
}

int main(int argc, char **argv) {
  if (argc == 3 && strcmp(argv[1], "--max") == 0)
    max_size = atol(argv[2]);
  uint64_t rng = 91;
  static const int wg[][3] = {{1, 64, 64},     {17, 33, 112},
                              {200, 72, 96},   {129, 250, 48},
                              {256, 256, 512}, {4097, 4095, 1008}};
  static const int sync[][3] = {{1, 64, 64},   {17, 33, 100},
                                {200, 72, 96}, {129, 250, 48},
                                {4097, 4095, 1008}};
  for (size_t i = 0; i < sizeof wg / sizeof *wg; i++) {
    fp8_gemm("gemm_fp8", wg[i][0], wg[i][1], wg[i][2], &rng);
    i8_gemm(I8, "gemm_i8", wg[i][0], wg[i][1], wg[i][2], false, &rng);
  }
  for (size_t i = 0; i < sizeof sync / sizeof *sync; i++) {
    fp8_gemm("gemm_fp8_sync", sync[i][0], sync[i][1], sync[i][2], &rng);
    i8_gemm(I8, "gemm_i8_sync", sync[i][0], sync[i][1], sync[i][2], false,
            &rng);
  }
  e5m2_gemm("gemm_e5m2", 256, 256, 512, &rng);
  e5m2_gemm("gemm_e5m2", 100, 80, 176, &rng);
  e5m2_gemm("gemm_e5m2_sync", 17, 33, 100, &rng);
  e5m2_gemm("gemm_e5m2_sync", 256, 256, 512, &rng);
  i8_gemm(MORE, "gemm_i8_acc", 256, 256, 512, true, &rng);
  i8_gemm(MORE, "gemm_i8_acc_sync", 33, 17, 100, true, &rng);
  cast_gemm(256, 256, 512, &rng);
  cast_gemm(100, 70, 112, &rng);
  printf("%d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
