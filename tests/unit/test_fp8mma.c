/* fp8 and int8 GEMMs in the simulator (docs/LANGUAGE-additions.md, "fp8 and
 * int8 mma"), against float64 and int64 references, on Hopper's warpgroup
 * mma (the sm_90a kernels) and on the warp-level mma.sync (sm_89 and sm_80
 * kernels), at sizes their tiles divide and at ragged ones:
 *  - examples/gemm_fp8.wave: (a · bᵀ) · scale_a[m] · scale_b[n] in bf16 from
 *    e4m3 operands. The products are exact in f32 and only the f32 sums
 *    differ from float64 (by far less than a bf16 step), so every element
 *    is the float64 result rounded to bf16, or (where that result lies
 *    within the f32 error of a rounding boundary) the bf16 value next to
 *    it: at most one element in 500 may be the latter;
 *  - tests/kernels/fp8mma.wave's e5m2 GEMMs: the f32 accumulator itself,
 *    within 1e-5 relative L2 error as the f16 GEMMs of test_numerics;
 *  - examples/gemm_i8.wave and the kernels that start the accumulator from
 *    memory: bit-exact, s32 sums wrapping past 2^31 (mma without
 *    .satfinite), against int64 sums reduced modulo 2^32;
 *  - an lhs quantized in registers (cast to e4m3 or i8), which the wgmma
 *    takes as its register fragment.
 * Inputs span the formats' exponents (fp8) and all of [-128, 127] (i8);
 * outputs start poisoned, and the simulator fails a run that leaves an
 * element unwritten. */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "../ref/kcase.c"
#include "../ref/ref.c"
#include "check.h"
#include "support/half.h"
#include "wavec.h"

static const char *const FP8 = "examples/gemm_fp8.wave",
                         *const I8 = "examples/gemm_i8.wave",
                         *const MORE = "tests/kernels/fp8mma.wave";
static int cases_run;

/* Opens kernel `kernel` of `file` at (M, N, K) with one more definition
 * (NULL: none); false with a failed check when it does not compile. */
static bool open_at(kcase *c, const char *file, const char *kernel, int M,
                    int N, int K, const char *extra, char *what, size_t wn) {
  char dm[32], dn[32], dk[32];
  snprintf(dm, sizeof dm, "M=%d", M);
  snprintf(dn, sizeof dn, "N=%d", N);
  snprintf(dk, sizeof dk, "K=%d", K);
  snprintf(what, wn, "%s M=%d N=%d K=%d%s%s", kernel, M, N, K,
           extra ? " " : "", extra ? extra : "");
  const char *defs[] = {dm, dn, dk, extra, NULL};
  bool ok = kc_open(c, file, kernel, NULL, defs);
  CHECKF(ok, "%s: %s", what, c->err);
  return ok;
}

static bool simulate(kcase *c, const char *what) {
  bool ok = kc_simulate(c);
  CHECKF(ok, "%s: %s", what, c->err);
  cases_run += ok;
  return ok;
}

/* Values spread over 2^-6 .. 2^6 times [-1, 1), rounded to the 8-bit
 * float type of input `name` and set; returns them (malloc'd). */
static double *fp8_input(kcase *c, const char *name, uint64_t *rng) {
  size_t n = c->info[kc_arg(c, name)].elems;
  double *x = malloc(n * sizeof *x);
  for (size_t i = 0; i < n; i++)
    x[i] = ldexp(ref_rand_uniform(rng, -1, 1),
                 (int)(ref_rand_u64(rng) % 13) - 6);
  kc_set(c, name, x); /* rounds to the argument's type in place */
  return x;
}

/* n i8 values covering [-128, 127], set as input `name`. */
static double *i8_input(kcase *c, const char *name, uint64_t *rng) {
  size_t n = c->info[kc_arg(c, name)].elems;
  double *x = malloc(n * sizeof *x);
  for (size_t i = 0; i < n; i++)
    x[i] = (double)(int)(ref_rand_u64(rng) % 256) - 128;
  kc_set(c, name, x);
  return x;
}

/* float64 a · bᵀ, row-major [M, N] (exact for the integer cases: the sums
 * stay below 2^53). */
static double *gemm_ref(int M, int N, int K, const double *a, const double *b) {
  double *r = malloc(sizeof *r * (size_t)M * (size_t)N);
  ref_gemm((size_t)M, (size_t)N, (size_t)K, a, b, r);
  return r;
}

/* The bf16 values next to bf16 x, below and above (x finite). */
static double bf16_step(double x, int dir) {
  uint16_t h = wv_f64_to_bf16(x);
  bool neg = h & 0x8000;
  if (x == 0)
    return dir > 0 ? wv_bf16_to_f32(0x0001) : wv_bf16_to_f32(0x8001);
  h = (uint16_t)(h + ((dir > 0) != neg ? 1 : -1));
  return wv_bf16_to_f32(h);
}

/* Every element of bf16 output `name` is bf16(ref) or a neighbour of it;
 * at most one in 500 is a neighbour. */
static void expect_bf16(kcase *c, const char *name, const double *ref,
                        size_t n, const char *what) {
  double *out = kc_output(c, name);
  size_t off = 0, bad = 0, worst = 0;
  for (size_t i = 0; i < n; i++) {
    double r = wv_bf16_to_f32(wv_f64_to_bf16(ref[i]));
    if (out[i] == r)
      continue;
    off++;
    if (out[i] != bf16_step(r, 1) && out[i] != bf16_step(r, -1) && !bad++)
      worst = i;
  }
  CHECKF(!bad, "%s: %s[%zu] = %g, float64 %g (%zu elements off by more "
         "than a bf16 step)", what, name, worst, out[worst], ref[worst], bad);
  CHECKF(off * 500 <= n, "%s: %zu of %zu elements one bf16 step off", what,
         off, n);
  free(out);
}

/* gemm_fp8 or gemm_fp8_sync at (M, N, K). */
static void fp8_case(const char *kernel, int M, int N, int K,
                     const char *extra, uint64_t *rng) {
  kcase c;
  char what[160];
  if (open_at(&c, FP8, kernel, M, N, K, extra, what, sizeof what)) {
    double *a = fp8_input(&c, "a", rng);
    double *b = fp8_input(&c, "b", rng);
    double *sa = kc_input(&c, "scale_a", rng), *sb = kc_input(&c, "scale_b", rng);
    double *ref = gemm_ref(M, N, K, a, b);
    for (int m = 0; m < M; m++)
      for (int n = 0; n < N; n++)
        ref[(size_t)m * N + n] *= sa[m] * sb[n];
    if (simulate(&c, what))
      expect_bf16(&c, "c", ref, (size_t)M * N, what);
    free(a), free(b), free(sa), free(sb), free(ref);
  }
  kc_close(&c);
}

/* The warpgroup kernel: tiles that divide, ragged M and N (K a multiple of
 * 16: staged rows are copied 16 bytes at a time), several workgroups,
 * K tiles and ring depths, and a wgmma N of 64. */
static void gemm_fp8_wgmma(void) {
  uint64_t rng = 81;
  fp8_case("gemm_fp8", 128, 128, 256, NULL, &rng);
  fp8_case("gemm_fp8", 256, 128, 512, "stages=4", &rng);
  fp8_case("gemm_fp8", 128, 256, 384, "BLOCK_N=64", &rng);
  fp8_case("gemm_fp8", 17, 33, 112, NULL, &rng);
  fp8_case("gemm_fp8", 200, 72, 96, NULL, &rng);
  fp8_case("gemm_fp8", 129, 250, 48, NULL, &rng);
}

/* The warp-level kernel (sm_89): the ragged sizes of issue 14, K = 100
 * included (its operands are not staged: loads guarded at K's edge). */
static void gemm_fp8_sync(void) {
  uint64_t rng = 82;
  fp8_case("gemm_fp8_sync", 64, 64, 128, NULL, &rng);
  fp8_case("gemm_fp8_sync", 128, 64, 256, "BLOCK_K=128", &rng);
  fp8_case("gemm_fp8_sync", 1, 64, 64, NULL, &rng);
  fp8_case("gemm_fp8_sync", 17, 33, 100, NULL, &rng);
  fp8_case("gemm_fp8_sync", 200, 72, 96, NULL, &rng);
}

/* e5m2 operands, f32 results: 1e-5 relative L2 error. */
static void gemm_e5m2(void) {
  static const struct {
    const char *kernel;
    int M, N, K;
  } cs[] = {{"gemm_e5m2", 64, 64, 256}, {"gemm_e5m2", 100, 80, 176},
            {"gemm_e5m2_sync", 64, 64, 128}, {"gemm_e5m2_sync", 17, 33, 100}};
  uint64_t rng = 83;
  for (size_t i = 0; i < sizeof cs / sizeof *cs; i++) {
    kcase c;
    char what[160];
    if (!open_at(&c, MORE, cs[i].kernel, cs[i].M, cs[i].N, cs[i].K, NULL,
                 what, sizeof what)) {
      kc_close(&c);
      continue;
    }
    double *a = fp8_input(&c, "a", &rng);
    double *b = fp8_input(&c, "b", &rng);
    double *ref = gemm_ref(cs[i].M, cs[i].N, cs[i].K, a, b);
    if (simulate(&c, what)) {
      double err = kc_rel_err(&c, "c", ref);
      CHECKF(err < 1e-5, "%s: rel err %.3g", what, err);
    }
    free(a), free(b), free(ref);
    kc_close(&c);
  }
}

/* i32 output `name` equals (c0 +) ref modulo 2^32, element by element. */
static void expect_i32(kcase *c, const char *name, const double *ref,
                       const int32_t *c0, size_t n, const char *what,
                       size_t *wrapped) {
  const int32_t *out = c->buf[kc_arg(c, name)];
  size_t bad = 0, first = 0;
  for (size_t i = 0; i < n; i++) {
    int64_t exact = (int64_t)ref[i] + (c0 ? c0[i] : 0);
    int32_t want = (int32_t)(uint32_t)(uint64_t)exact;
    if (wrapped)
      *wrapped += exact != want;
    if (out[i] != want && !bad++)
      first = i;
  }
  CHECKF(!bad, "%s: %zu elements differ, first %s[%zu] = %d", what, bad,
         name, first, out[first]);
}

static void i8_case(const char *file, const char *kernel, int M, int N,
                    int K, bool from_memory, uint64_t *rng, size_t *wrapped) {
  kcase c;
  char what[160];
  if (open_at(&c, file, kernel, M, N, K, NULL, what, sizeof what)) {
    double *a = i8_input(&c, "a", rng), *b = i8_input(&c, "b", rng);
    double *ref = gemm_ref(M, N, K, a, b);
    int32_t *c0 = NULL;
    if (from_memory) { /* near both ends of the s32 range */
      c0 = c.buf[kc_arg(&c, "c0")];
      for (int i = 0; i < M * N; i++) {
        int32_t d = (int32_t)(ref_rand_u64(rng) % (1u << 16));
        c0[i] = i % 2 ? INT32_MAX - d : INT32_MIN + d;
      }
    }
    if (simulate(&c, what))
      expect_i32(&c, "c", ref, c0, (size_t)M * N, what, wrapped);
    free(a), free(b), free(ref);
  }
  kc_close(&c);
}

static void gemm_i8(void) {
  uint64_t rng = 84;
  static const int sizes[][3] = {{128, 128, 256}, {17, 33, 112},
                                 {200, 72, 96}};
  for (size_t i = 0; i < 3; i++)
    i8_case(I8, "gemm_i8", sizes[i][0], sizes[i][1], sizes[i][2], false, &rng,
            NULL);
  static const int sync[][3] = {{64, 64, 128}, {17, 33, 100}, {200, 72, 96},
                                {1, 64, 64}};
  for (size_t i = 0; i < 4; i++)
    i8_case(I8, "gemm_i8_sync", sync[i][0], sync[i][1], sync[i][2], false,
            &rng, NULL);
}

/* Accumulators that start near INT32_MAX and INT32_MIN: the s32 sums wrap
 * (about half the elements do), exactly as int64 sums modulo 2^32. */
static void i8_wraps(void) {
  uint64_t rng = 85;
  size_t wrapped = 0;
  i8_case(MORE, "gemm_i8_acc", 64, 64, 256, true, &rng, &wrapped);
  i8_case(MORE, "gemm_i8_acc", 70, 90, 112, true, &rng, &wrapped);
  i8_case(MORE, "gemm_i8_acc_sync", 64, 64, 128, true, &rng, &wrapped);
  i8_case(MORE, "gemm_i8_acc_sync", 33, 17, 100, true, &rng, &wrapped);
  CHECKF(wrapped > 1000, "only %zu sums wrapped", wrapped);
}

/* An lhs computed in registers (a cast to e4m3 or i8 of f16 values): the
 * wgmma takes it as its register fragment. The reference quantizes as
 * cvt does: nearest even, saturated (e4m3 to 448, i8 to [-128, 127]). */
static void lhs_in_registers(void) {
  uint64_t rng = 86;
  static const int sizes[][3] = {{64, 64, 256}, {100, 70, 112}};
  for (size_t i = 0; i < 2; i++) {
    int M = sizes[i][0], N = sizes[i][1], K = sizes[i][2];
    kcase c;
    char what[160];
    if (open_at(&c, MORE, "gemm_fp8_cast", M, N, K, NULL, what,
                sizeof what)) {
      size_t na = (size_t)M * K;
      double *a = malloc(na * sizeof *a), *q = malloc(na * sizeof *q);
      for (size_t j = 0; j < na; j++)
        a[j] = ldexp(ref_rand_uniform(&rng, -1, 1),
                     (int)(ref_rand_u64(&rng) % 12) - 4);
      a[0] = 1000; /* saturates to 448 */
      kc_set(&c, "a", a); /* f16 */
      for (size_t j = 0; j < na; j++)
        q[j] = wv_e4m3_to_f64(wv_f64_to_e4m3(a[j]));
      double *b = fp8_input(&c, "b", &rng);
      double *ref = gemm_ref(M, N, K, q, b);
      if (simulate(&c, what)) {
        double err = kc_rel_err(&c, "c", ref);
        CHECKF(err < 1e-5, "%s: rel err %.3g", what, err);
      }
      free(a), free(q), free(b), free(ref);
    }
    kc_close(&c);
    if (open_at(&c, MORE, "gemm_i8_cast", M, N, K, NULL, what, sizeof what)) {
      size_t na = (size_t)M * K;
      double *a = malloc(na * sizeof *a), *q = malloc(na * sizeof *q);
      for (size_t j = 0; j < na; j++)
        a[j] = ref_rand_uniform(&rng, -140, 140);
      kc_set(&c, "a", a); /* rounded to f16 in place */
      for (size_t j = 0; j < na; j++) {
        double r = nearbyint(a[j]);
        q[j] = r < -128 ? -128 : r > 127 ? 127 : r;
      }
      double *b = i8_input(&c, "b", &rng);
      double *ref = gemm_ref(M, N, K, q, b);
      if (simulate(&c, what))
        expect_i32(&c, "c", ref, NULL, (size_t)M * N, what, NULL);
      free(a), free(q), free(b), free(ref);
    }
    kc_close(&c);
  }
}

int main(void) {
  RUN(gemm_fp8_wgmma);
  RUN(gemm_fp8_sync);
  RUN(gemm_e5m2);
  RUN(gemm_i8);
  RUN(i8_wraps);
  RUN(lhs_in_registers);
  printf("  %d simulations\n", cases_run);
  CHECK_EXIT();
}
