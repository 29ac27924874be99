/* Regressions: kernels that once gave wrong numbers without any error.
 *  - rowsum: a sum carried through a loop took the carried value's layout
 *    instead of its input's, and dropped rows;
 *  - ints: integer constants (literals, i32 Register fills) became 0;
 * and a reduction whose dimension the waves split (partials meet in shared
 * memory); a warpgroup loop that touches its carried accumulator before
 * any wait (its wgmmas must not run on into the next iteration). */
#include <math.h>
#include <stdlib.h>

#include "../ref/kcase.c"
#include "../ref/ref.c"
#include "check.h"

static void carried_sum_keeps_rows(void) {
  static const char *const ops[] = {"rowsum", "rowsum_waves"};
  for (int m = 4, o = 0; m <= 16; m *= 2, o ^= 1) {
    char dm[16];
    snprintf(dm, sizeof dm, "M=%d", m);
    const char *defs[] = {dm, o ? "N=128" : "N=48", NULL};
    int n = o ? 128 : 48;
    kcase c;
    bool ok = kc_open(&c, "tests/kernels/regress.wave", ops[o], NULL, defs);
    CHECKF(ok, "%s", c.err);
    uint64_t rng = 3;
    if (ok) {
      double *x = kc_input(&c, "x", &rng);
      double ref[16];
      for (int i = 0; i < m; i++) {
        ref[i] = 0;
        for (int j = 0; j < n; j++)
          ref[i] += x[i * n + j];
      }
      ok = kc_simulate(&c);
      CHECKF(ok, "%s", c.err);
      if (ok)
        CHECKF(kc_rel_err(&c, "r", ref) < 1e-6, "%s M=%d: rel err %g", ops[o],
               m, kc_rel_err(&c, "r", ref));
      free(x);
    }
    kc_close(&c);
  }
}

static void integer_constants(void) {
  const char *defs[] = {"N=16", NULL};
  kcase c;
  bool ok = kc_open(&c, "tests/kernels/regress.wave", "ints", NULL, defs);
  CHECKF(ok, "%s", c.err);
  if (ok && kc_simulate(&c)) {
    double ref[16];
    for (int i = 0; i < 16; i++)
      ref[i] = i + 1 + 7;
    CHECK(kc_rel_err(&c, "y", ref) == 0);
  } else {
    CHECKF(0, "%s", c.err);
  }
  kc_close(&c);
}

/* decayed_gemm_wgmma: acc = 0.5 acc + a_t b_tᵀ per K tile t, so c = sum
 * over the T tiles of 0.5^(T-1-t) a_t b_tᵀ, with rings of 1 to 4 slots; at 3 and 4 slots the loop could
 * carry its wgmmas into the next iteration, but it touches the carried
 * accumulator first, so it must not. */
static void decayed_accumulator(void) {
  static const char *const depths[] = {"stages=1", "stages=2", "stages=3",
                                       "stages=4"};
  enum { M = 64, N = 128, K = 256, T = K / 64 };
  for (int d = 0; d < 4; d++) {
    const char *defs[] = {"M=64", "N=128", "K=256", depths[d], NULL};
    kcase c;
    bool ok = kc_open(&c, "tests/kernels/regress.wave", "decayed_gemm_wgmma",
                      NULL, defs);
    CHECKF(ok, "%s", c.err);
    uint64_t rng = 9;
    if (ok) {
      double *a = kc_input(&c, "a", &rng), *b = kc_input(&c, "b", &rng);
      double *ref = calloc((size_t)M * N, sizeof *ref);
      for (int t = 0; t < T; t++) {
        double w = ldexp(1.0, -(T - 1 - t));
        for (int i = 0; i < M; i++)
          for (int j = 0; j < N; j++) {
            double x = 0;
            for (int k = 64 * t; k < 64 * (t + 1); k++)
              x += a[i * K + k] * b[j * K + k];
            ref[i * N + j] = ref[i * N + j] + w * x;
          }
      }
      ok = kc_simulate(&c);
      CHECKF(ok, "%s: %s", depths[d], c.err);
      if (ok)
        CHECKF(kc_rel_err(&c, "c", ref) < 1e-5, "%s: rel err %g", depths[d],
               kc_rel_err(&c, "c", ref));
      free(a), free(b), free(ref);
    }
    kc_close(&c);
  }
}

int main(void) {
  RUN(carried_sum_keeps_rows);
  RUN(integer_constants);
  RUN(decayed_accumulator);
  CHECK_EXIT();
}
