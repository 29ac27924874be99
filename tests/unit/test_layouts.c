/* Warpgroup GEMMs over transposed operands (tests/kernels/layouts.wave),
 * in the simulator against float64 (relative L2 error 1e-5: f32 sums of
 * f16 products):
 *  - gemm_tn (lhs stored K x M: the wgmma's transpose-a) and gemm_tt (rhs
 *    K x N too) at 128x128x128, 200x136x192 (every dim ragged, M the
 *    lhs's contiguous one) and 64x64x64, with a plain ring, a producer
 *    warpgroup and 3 stages, and one stage;
 *  - the PTX: each wgmma's transposes (imm-trans-a 1; imm-trans-b 0 for
 *    gemm_tn, 1 for gemm_tt). */
#include <stdlib.h>
#include <string.h>

#include "../ref/kcase.c"
#include "../ref/ref.c"
#include "check.h"

static const char *const FILE_ = "tests/kernels/layouts.wave";

static void gemms(void) {
  static const int sz[][3] = {{128, 128, 128}, {200, 136, 192}, {64, 64, 64}};
  static const char *const hw[][2] = {
      {"stages=2", NULL}, {"stages=3", "specialize=1"}, {"stages=1", NULL}};
  for (int tt = 0; tt < 2; tt++)
    for (size_t s = 0; s < 3; s++)
      for (size_t h = 0; h < 3; h++) {
        int M = sz[s][0], N = sz[s][1], K = sz[s][2];
        char dm[16], dn[16], dk[16];
        snprintf(dm, sizeof dm, "M=%d", M);
        snprintf(dn, sizeof dn, "N=%d", N);
        snprintf(dk, sizeof dk, "K=%d", K);
        const char *defs[] = {dm, dn, dk, hw[h][0], hw[h][1], NULL};
        const char *kn = tt ? "gemm_tt" : "gemm_tn";
        kcase c;
        if (!kc_open(&c, FILE_, kn, NULL, defs)) {
          CHECKF(0, "%s: %s", kn, c.err);
          kc_close(&c);
          continue;
        }
        uint64_t rng = 5 + s;
        double *a = kc_input(&c, "at", &rng);
        double *b = kc_input(&c, tt ? "bt" : "b", &rng);
        double *ref = calloc((size_t)M * N, sizeof *ref);
        for (int i = 0; i < M; i++)
          for (int j = 0; j < N; j++) {
            double sum = 0;
            for (int k = 0; k < K; k++)
              sum += a[k * M + i] * (tt ? b[k * N + j] : b[j * K + k]);
            ref[i * N + j] = sum;
          }
        bool ok = kc_simulate(&c);
        CHECKF(ok, "%s %dx%dx%d %s: %s", kn, M, N, K, hw[h][0], c.err);
        double e = ok ? kc_rel_err(&c, "c", ref) : -1;
        CHECKF(ok && e < 1e-5, "%s %dx%dx%d %s: rel err %g", kn, M, N, K,
               hw[h][0], e);
        printf("  %s %dx%dx%d %s%s%s: rel err %.2g\n", kn, M, N, K, hw[h][0],
               hw[h][1] ? "," : "", hw[h][1] ? hw[h][1] : "", e);
        if (s == 0 && h == 0) {
          const char *ptx = NULL;
          size_t len = 0;
          bool emitted =
              wavec_emit_ptx(c.k, "sm_90a", &ptx, &len) == WAVEC_OK && ptx;
          CHECKF(emitted, "%s: %s", kn, wavec_errmsg(c.ctx));
          /* every wgmma: "..., scale-d, 1, 1, trans-a, trans-b;" */
          const char *want = tt ? ", 1, 1, 1, 1;" : ", 1, 1, 1, 0;";
          int n = 0, good = 0;
          for (const char *p = ptx; emitted && (p = strstr(p, "wgmma.mma_async"));
               p++) {
            const char *end = strchr(p, ';');
            n++;
            good += end && (size_t)(end - p) >= strlen(want) - 1 &&
                    !strncmp(end - (strlen(want) - 1), want, strlen(want));
          }
          CHECKF(n > 0 && good == n, "%s: %d of %d wgmmas end '%s'", kn, good,
                 n, want);
        }
        free(a), free(b), free(ref);
        kc_close(&c);
      }
}

/* A linear layer over a batch with one weight (kernel linear: w read
 * through a mapping that adds B): staged like a plain GEMM's rhs (the
 * remark says the loop streams 'a' and 'w'), in the plain schedule and a
 * producer warpgroup's, at sizes the tiles divide and ragged ones. */
static void shared_weight(void) {
  static const int sz[][4] = {{2, 128, 128, 128}, {3, 130, 100, 72}};
  static const char *const hw[] = {NULL, "specialize=1"};
  for (size_t s = 0; s < 2; s++)
    for (size_t h = 0; h < 2; h++) {
      int B = sz[s][0], M = sz[s][1], N = sz[s][2], K = sz[s][3];
      char db[16], dm[16], dn[16], dk[16];
      snprintf(db, sizeof db, "B=%d", B);
      snprintf(dm, sizeof dm, "M=%d", M);
      snprintf(dn, sizeof dn, "N=%d", N);
      snprintf(dk, sizeof dk, "K=%d", K);
      const char *defs[] = {db, dm, dn, dk, hw[h], NULL};
      kcase c;
      if (!kc_open(&c, FILE_, "linear", NULL, defs)) {
        CHECKF(0, "linear: %s", c.err);
        kc_close(&c);
        continue;
      }
      CHECKF(kc_has_remark(c.k, "streams 'a', 'w' through shared memory"),
             "linear: w is not staged");
      uint64_t rng = 9 + s;
      double *a = kc_input(&c, "a", &rng), *w = kc_input(&c, "w", &rng);
      double *ref = calloc((size_t)B * M * N, sizeof *ref);
      for (int b = 0; b < B; b++)
        for (int i = 0; i < M; i++)
          for (int j = 0; j < N; j++) {
            double sum = 0;
            for (int k = 0; k < K; k++)
              sum += a[((size_t)b * M + i) * K + k] * w[(size_t)j * K + k];
            ref[((size_t)b * M + i) * N + j] = sum;
          }
      bool ok = kc_simulate(&c);
      double e = ok ? kc_rel_err(&c, "c", ref) : -1;
      CHECKF(ok && e < 1e-5, "linear %dx%dx%dx%d %s: %s rel err %g", B, M, N,
             K, hw[h] ? hw[h] : "", ok ? "" : c.err, e);
      free(a), free(w), free(ref);
      kc_close(&c);
    }
}

int main(void) {
  RUN(gemms);
  RUN(shared_weight);
  CHECK_EXIT();
}
