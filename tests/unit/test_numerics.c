/* Numerics in the simulator against float64 references (tests/ref), for
 * every example kernel, across sizes that force expansion along each
 * dimension, on both hardware kinds (32-lane NVIDIA m16n8k16 and 64-lane AMD
 * MFMA 16x16x16 layouts). Fresh random inputs per case; outputs start
 * unwritten (the simulator fails a run that leaves any element unwritten).
 *
 * Thresholds (relative L2 error, ‖out − ref‖ / ‖ref‖):
 *  - f32 results of mma on f16 inputs (gemm c, s, dp): 1e-5 — the products
 *    are exact, only the f32 accumulation differs from float64.
 *  - values the kernel rounds to f16 on the way (p, dp_sub, and dv, dk that
 *    are sums of them): 1e-2 against the reference that rounds where the
 *    kernel does (REF_MIMIC_F16); f16 has a relative step of 2^-11.
 *  - attention forward o and lse: 1e-2 (p is cast to f16 for p·v). */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "../ref/kcase.c"
#include "../ref/ref.c"
#include "check.h"
#include "wavec.h"

static int cases_run;

typedef kc_hw hw;
static const hw hws[2] = {{"nvidia", "32", "F32_16x8x16_F16"},
                          {"mfma", "64", "F32_16x16x16_F16"}};

static bool open_case(kcase *c, const char *file, const char *kernel,
                      const hw *h, const char *const *defs) {
  bool ok = kc_open(c, file, kernel, h, defs);
  CHECKF(ok, "%s", c->err);
  return ok;
}

static bool run(kcase *c) {
  bool ok = kc_simulate(c);
  CHECKF(ok, "%s", c->err);
  cases_run += ok;
  return ok;
}

#define close_case kc_close
#define input kc_input
#define set_input kc_set

static void expect(kcase *c, const char *name, const double *ref, double tol,
                   const char *what) {
  double err = kc_rel_err(c, name, ref);
  CHECKF(err < tol, "%s: %s rel err %.3g >= %.3g", what, name, err, tol);
}

static void gemm(void) {
  static const int sizes[][3] = {{64, 64, 32}, {128, 64, 64}, {64, 128, 96},
                                 {128, 128, 128}};
  uint64_t rng = 11;
  for (size_t h = 0; h < 2; h++)
    for (size_t s = 0; s < 4; s++) {
      char dm[32], dn[32], dk[32], what[160];
      snprintf(dm, sizeof dm, "M=%d", sizes[s][0]);
      snprintf(dn, sizeof dn, "N=%d", sizes[s][1]);
      snprintf(dk, sizeof dk, "K=%d", sizes[s][2]);
      snprintf(what, sizeof what, "gemm %s %s %s %s", hws[h].name, dm, dn, dk);
      const char *defs[] = {dm, dn, dk, NULL};
      kcase c;
      if (open_case(&c, "examples/gemm.wave", "gemm", &hws[h], defs)) {
        double *a = input(&c, "a", &rng), *b = input(&c, "b", &rng);
        double *ref = malloc(sizeof *ref * (size_t)sizes[s][0] * sizes[s][1]);
        ref_gemm((size_t)sizes[s][0], (size_t)sizes[s][1], (size_t)sizes[s][2],
                 a, b, ref);
        if (run(&c))
          expect(&c, "c", ref, 1e-5, what);
        free(a), free(b), free(ref);
      }
      close_case(&c);
    }
}

/* The warpgroup GEMM (wgmma from swizzled shared tiles): several
 * workgroups, warpgroups, K tiles and ring depths, and wgmma N < 128. */
static void gemm_wgmma(void) {
  static const char *const cases[][6] = {
      {"M=128", "N=128", "K=64", NULL, NULL},
      {"M=256", "N=128", "K=256", NULL, NULL},
      {"M=128", "N=256", "K=192", "BLOCK_N=64", NULL},
      {"M=256", "N=256", "K=128", "BLOCK_M=64", "BLOCK_N=256"},
      /* rings of 3 and 4 slots: the last wgmma group of an iteration runs
       * on into the next */
      {"M=128", "N=128", "K=512", "stages=3", NULL},
      {"M=256", "N=256", "K=768", "BLOCK_N=128", "stages=4"},
  };
  uint64_t rng = 12;
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    int M = atoi(cases[i][0] + 2), N = atoi(cases[i][1] + 2),
        K = atoi(cases[i][2] + 2);
    char what[160];
    snprintf(what, sizeof what, "gemm_wgmma %s %s %s %s %s", cases[i][0],
             cases[i][1], cases[i][2], cases[i][3] ? cases[i][3] : "",
             cases[i][4] ? cases[i][4] : "");
    kcase c;
    if (open_case(&c, "examples/gemm_wgmma.wave", "gemm_wgmma", NULL, cases[i])) {
      double *a = input(&c, "a", &rng), *b = input(&c, "b", &rng);
      double *ref = malloc(sizeof *ref * (size_t)M * N);
      ref_gemm((size_t)M, (size_t)N, (size_t)K, a, b, ref);
      if (run(&c))
        expect(&c, "c", ref, 1e-5, what);
      free(a), free(b), free(ref);
    }
    close_case(&c);
  }
}

/* The LANGUAGE.md backward example: every intermediate output. */
static void dkdv_case(const hw *h, int B, int M, int K2, int N, int K1,
                      uint64_t *rng) {
  char d[5][32], what[256];
  snprintf(d[0], 32, "B=%d", B);
  snprintf(d[1], 32, "M=%d", M);
  snprintf(d[2], 32, "K2=%d", K2);
  snprintf(d[3], 32, "N=%d", N);
  snprintf(d[4], 32, "K1=%d", K1);
  snprintf(what, sizeof what, "dkdv %s B=%d M=%d K2=%d N=%d K1=%d", h->name,
           B, M, K2, N, K1);
  const char *defs[] = {d[0], d[1], d[2], d[3], d[4], NULL};
  kcase c;
  if (!open_case(&c, "examples/attention_bwd_dkdv.wave", "attention_bwd_dkdv",
                 h, defs)) {
    close_case(&c);
    return;
  }
  size_t bm = (size_t)B * M, bmk2 = bm * K2;
  double *q = input(&c, "q", rng), *k = input(&c, "k", rng),
         *v = input(&c, "v", rng), *dO = input(&c, "do", rng);
  /* lse and D as the forward pass would give them */
  double *lse = malloc(bm * sizeof *lse), *D = malloc(bm * sizeof *D);
  double *o = malloc(bm * N * sizeof *o);
  ref_attn_fwd((size_t)B, (size_t)M, (size_t)K2, (size_t)K1, (size_t)N, 1.0, 0,
               q, k, v, o, lse);
  ref_attn_D((size_t)B, (size_t)M, (size_t)N, dO, o, D);
  set_input(&c, "lse", lse);
  set_input(&c, "D", D);
  double *s = malloc(bmk2 * sizeof *s), *p = malloc(bmk2 * sizeof *p),
         *dp = malloc(bmk2 * sizeof *dp), *dps = malloc(bmk2 * sizeof *dps),
         *dv = malloc((size_t)B * K2 * N * sizeof *dv),
         *dk = malloc((size_t)B * K2 * K1 * sizeof *dk);
  if (run(&c)) {
    ref_dkdv_example((size_t)B, (size_t)M, (size_t)K2, (size_t)K1, (size_t)N,
                     0, q, k, v, dO, lse, D, s, NULL, dp, NULL, dv, dk);
    expect(&c, "s", s, 1e-5, what);
    expect(&c, "dp", dp, 1e-5, what);
    ref_dkdv_example((size_t)B, (size_t)M, (size_t)K2, (size_t)K1, (size_t)N,
                     REF_MIMIC_F16, q, k, v, dO, lse, D, NULL, p, NULL, dps,
                     dv, dk);
    expect(&c, "p", p, 1e-2, what);
    expect(&c, "dp_sub", dps, 1e-2, what);
    expect(&c, "dv", dv, 1e-2, what);
    expect(&c, "dk", dk, 1e-2, what);
  }
  free(q), free(k), free(v), free(dO), free(lse), free(D), free(o);
  free(s), free(p), free(dp), free(dps), free(dv), free(dk);
  close_case(&c);
}

/* The report's cases: N = K1 = 32 on both hardware kinds. */
static void dkdv_report_cases(void) {
  uint64_t rng = 7;
  for (size_t h = 0; h < 2; h++)
    dkdv_case(&hws[h], 1, 32, 32, 32, 32, &rng);
}

static void dkdv_all_sizes(void) {
  static const int nk[] = {16, 32, 64}, mk[] = {16, 32, 64, 128};
  uint64_t rng = 99;
  for (size_t h = 0; h < 2; h++)
    for (int b = 1; b <= 2; b++)
      for (size_t i = 0; i < 3; i++)
        for (size_t j = 0; j < 3; j++)
          for (size_t m = 0; m < 4; m++)
            for (size_t k2 = 0; k2 < 4; k2++)
              dkdv_case(&hws[h], b, mk[m], mk[k2], nk[i], nk[j], &rng);
}

static void fwd_case_in(const char *file, const char *kernel, int causal,
                        int B, int M, int N, const char *extra,
                        uint64_t *rng) {
  char d[5][32], what[256];
  snprintf(d[0], 32, "B=%d", B);
  snprintf(d[1], 32, "M=%d", M);
  snprintf(d[2], 32, "K2=%d", M);
  snprintf(d[3], 32, "N=%d", N);
  snprintf(d[4], 32, "K1=%d", N);
  snprintf(what, sizeof what, "%s B=%d M=K2=%d N=K1=%d %s", kernel, B, M, N,
           extra ? extra : "");
  const char *defs[] = {d[0], d[1], d[2], d[3], d[4], extra, NULL};
  kcase c;
  if (!open_case(&c, file, kernel, NULL, defs)) {
    close_case(&c);
    return;
  }
  double *q = input(&c, "q", rng), *k = input(&c, "k", rng),
         *v = input(&c, "v", rng);
  double *o = malloc((size_t)B * M * N * sizeof *o),
         *lse = malloc((size_t)B * M * sizeof *lse);
  if (run(&c)) {
    ref_attn_fwd((size_t)B, (size_t)M, (size_t)M, (size_t)N, (size_t)N, 0.125,
                 causal ? REF_CAUSAL : 0, q, k, v, o, lse);
    expect(&c, "o", o, 1e-2, what);
    expect(&c, "lse", lse, 1e-3, what);
  }
  free(q), free(k), free(v), free(o), free(lse);
  close_case(&c);
}

static void fwd_case(const char *kernel, int causal, int B, int M, int N,
                     uint64_t *rng) {
  fwd_case_in("examples/attention_fwd.wave", kernel, causal, B, M, N, NULL,
              rng);
}

/* The warpgroup forward: s = q kᵀ from shared memory, p · v with p in
 * registers and v N-contiguous; one and two 64-column panels (D = 64,
 * 128), K2 tiles of 64 and 128, one and several of them, and a ring of 4
 * slots (a wgmma group carried across iterations). */
static void attention_fwd_wgmma(void) {
  uint64_t rng = 6;
  static const struct {
    int B, M, N;
    const char *extra;
  } cs[] = {{1, 128, 64, NULL}, {2, 256, 64, "BLOCK_K2=128"},
            {1, 256, 128, NULL}, {1, 128, 128, "BLOCK_M=64"},
            {1, 128, 64, "stages=4"}};
  for (int causal = 0; causal < 2; causal++)
    for (size_t i = 0; i < sizeof cs / sizeof *cs; i++)
      fwd_case_in("examples/attention_fwd_wgmma.wave",
                  causal ? "attention_fwd_wgmma_causal" : "attention_fwd_wgmma",
                  causal, cs[i].B, cs[i].M, cs[i].N, cs[i].extra, &rng);
}

static void attention_fwd(void) {
  uint64_t rng = 5;
  static const int ms[] = {64, 128}, ns[] = {16, 32, 64};
  for (int causal = 0; causal < 2; causal++)
    for (int b = 1; b <= 2; b++)
      for (size_t m = 0; m < 2; m++)
        for (size_t n = 0; n < 3; n++)
          fwd_case(causal ? "attention_fwd_causal" : "attention_fwd", causal, b,
                   ms[m], ns[n], &rng);
}

int main(void) {
  RUN(gemm);
  RUN(gemm_wgmma);
  RUN(dkdv_report_cases);
  RUN(attention_fwd);
  RUN(attention_fwd_wgmma);
  RUN(dkdv_all_sizes);
  printf("  %d simulated runs\n", cases_run);
  CHECK_EXIT();
}
