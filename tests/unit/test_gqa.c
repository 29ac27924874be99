/* Grouped-query attention (tests/kernels/gqa.wave): query head h reads key
 * and value head h // G through a mapping that computes the coordinate.
 * The key and value tiles are staged (one key head a workgroup): on
 * warpgroups (tensor copies, plain, specialized and persistent, 2 and 3
 * stages) and on mma.sync (asynchronous copies), against float64 at
 * shapes tiles divide and ragged ones, with G = 1, 2, 4; the remark says
 * the tiles stream; and a workgroup holding several key heads keeps its
 * read in global memory with a remark saying why. Also tiles whose memory
 * dim takes another register dim's coordinate (keys stored along M, read
 * as K2; a key row given by the query head), which were staged at the
 * wrong tile. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../ref/kcase.c"
#include "../ref/ref.c"
#include "check.h"

static int cases_run;

/* k [B, HK, S, D] repeated to [B, H, S, D]: head h is head h / G */
static double *repeat_heads(const double *k, int B, int H, int HK, int S,
                            int D) {
  double *r = malloc((size_t)B * H * S * D * sizeof *r);
  for (int b = 0; b < B; b++)
    for (int h = 0; h < H; h++)
      memcpy(r + (((size_t)b * H + h) * S) * D,
             k + (((size_t)b * HK + h / (H / HK)) * S) * D,
             (size_t)S * D * sizeof *r);
  return r;
}

static void gqa(void) {
  static const struct {
    const char *kernel;
    int B, H, HK, S, D;
    const char *hw[4];
  } rows[] = {
      {"attention_gqa_wgmma", 1, 8, 2, 256, 64, {NULL}},
      {"attention_gqa_wgmma", 2, 4, 2, 200, 64, {"stages=2", NULL}},
      {"attention_gqa_wgmma", 1, 4, 1, 256, 128, {NULL}},
      {"attention_gqa_wgmma", 1, 8, 2, 256, 64,
       {"specialize=1", "persistent=1", "sms=3", NULL}},
      {"attention_gqa_wgmma", 1, 3, 3, 130, 64, {NULL}},
      {"attention_gqa", 1, 8, 2, 256, 64, {NULL}},
      {"attention_gqa", 2, 4, 2, 100, 32, {NULL}},
      {"attention_gqa", 1, 6, 3, 77, 64, {NULL}},
      {"gqa_keys_named_m", 1, 4, 2, 64, 32, {NULL}},
      {"gqa_keys_named_m", 2, 8, 2, 100, 64, {NULL}},
  };
  for (size_t r = 0; r < sizeof rows / sizeof *rows; r++) {
    int B = rows[r].B, H = rows[r].H, HK = rows[r].HK, S = rows[r].S,
        D = rows[r].D;
    char defs_s[8][32];
    snprintf(defs_s[0], 32, "B=%d", B);
    snprintf(defs_s[1], 32, "H=%d", H);
    snprintf(defs_s[2], 32, "HK=%d", HK);
    snprintf(defs_s[3], 32, "M=%d", S);
    snprintf(defs_s[4], 32, "K2=%d", S);
    snprintf(defs_s[5], 32, "K1=%d", D);
    snprintf(defs_s[6], 32, "N=%d", D);
    snprintf(defs_s[7], 32, "G=%d", H / HK);
    const char *defs[16];
    size_t n = 0;
    for (int i = 0; i < 8; i++)
      defs[n++] = defs_s[i];
    for (int i = 0; rows[r].hw[i]; i++)
      defs[n++] = rows[r].hw[i];
    defs[n] = NULL;
    kcase c;
    bool ok = kc_open(&c, "tests/kernels/gqa.wave", rows[r].kernel, NULL,
                      defs);
    CHECKF(ok, "%s row %zu: %s", rows[r].kernel, r, c.err);
    if (!ok) {
      kc_close(&c);
      continue;
    }
    CHECKF(kc_has_remark(c.k, "streams 'k', 'v' through shared memory"),
           "%s row %zu: k and v are not staged", rows[r].kernel, r);
    uint64_t rng = 40 + r;
    double *q = kc_input(&c, "q", &rng), *k = kc_input(&c, "k", &rng),
           *v = kc_input(&c, "v", &rng);
    double *kr = repeat_heads(k, B, H, HK, S, D),
           *vr = repeat_heads(v, B, H, HK, S, D);
    size_t no = (size_t)B * H * S * D;
    double *o = malloc(no * sizeof *o), *lse = malloc(no / D * sizeof *lse);
    ref_attn_fwd((size_t)B * H, S, S, D, D, 0.125, 0, q, kr, vr, o, lse);
    ok = kc_simulate(&c);
    CHECKF(ok, "%s row %zu: %s", rows[r].kernel, r, c.err);
    if (ok) {
      double eo = kc_rel_err(&c, "o", o), el = kc_rel_err(&c, "lse", lse);
      CHECKF(eo < 2e-3 && el < 1e-5, "%s row %zu: o %.3g lse %.3g",
             rows[r].kernel, r, eo, el);
      cases_run++;
    }
    free(q), free(k), free(v), free(kr), free(vr), free(o), free(lse);
    kc_close(&c);
  }
  /* s[h, m, j] = q[h, m, :] . k[h, :] for every j: the row of k the
   * mapping gives from h, whole along K1 or walked by a loop */
  static const char *const rowk[] = {"key_row_from_head",
                                     "key_row_from_head_loop"};
  static const int hs[][3] = {{3, 64, 32}, {40, 64, 32}, {5, 96, 64}};
  for (int kk = 0; kk < 2; kk++)
    for (int r = 0; r < 3; r++) {
      int H = hs[r][0], K2 = hs[r][1], K1 = hs[r][2], M = 32;
      char d0[32], d1[32], d2[32];
      snprintf(d0, 32, "H=%d", H);
      snprintf(d1, 32, "K2=%d", K2);
      snprintf(d2, 32, "K1=%d", K1);
      const char *defs[] = {d0, d1, d2, "M=32", NULL};
      kcase c;
      bool ok = kc_open(&c, "tests/kernels/gqa.wave", rowk[kk], NULL, defs);
      CHECKF(ok, "%s: %s", rowk[kk], c.err);
      if (ok) {
        uint64_t rng = 60 + r;
        double *q = kc_input(&c, "q", &rng), *k = kc_input(&c, "k", &rng);
        double *ref = malloc((size_t)H * M * K2 * sizeof *ref);
        for (int h = 0; h < H; h++)
          for (int m = 0; m < M; m++) {
            double dot = 0;
            for (int d = 0; d < K1; d++)
              dot += q[((size_t)h * M + m) * K1 + d] * k[(size_t)h * K1 + d];
            for (int j = 0; j < K2; j++)
              ref[((size_t)h * M + m) * K2 + j] = dot;
          }
        ok = kc_simulate(&c);
        CHECKF(ok, "%s H=%d K2=%d: %s", rowk[kk], H, K2, c.err);
        double e = ok ? kc_rel_err(&c, "s", ref) : 0;
        CHECKF(e < 1e-5, "%s H=%d K2=%d: rel err %g", rowk[kk], H, K2, e);
        cases_run += ok;
        free(q), free(k), free(ref);
      }
      kc_close(&c);
    }
  const char *defs[] = {"B=1", "H=4", "HK=2", "M=32", "K2=32", "K1=16", NULL};
  kcase c;
  bool ok = kc_open(&c, "tests/kernels/gqa.wave", "gqa_whole_heads", NULL,
                    defs);
  CHECKF(ok, "gqa_whole_heads: %s", c.err);
  if (ok)
    CHECKF(kc_has_remark(c.k, "the read's mapping computes the coordinate of "
                              "'HK' from 'H', which a workgroup holds more "
                              "than one coordinate of"),
           "gqa_whole_heads: no remark on the unstaged read");
  kc_close(&c);
}

/* A mapping whose key head runs past the key heads (H = 4 over HK = 1
 * with G = 2: heads 2 and 3 read key head 1, which is not there): the read
 * gets its fill, 0, on both paths alike (the asynchronous copies of
 * mma.sync read nothing there; they read past k's end before), so heads 0
 * and 1 attend to key head 0 and heads 2 and 3 see zero scores and zero
 * values: o = 0, lse = ln K2. */
static void heads_past_the_edge(void) {
  static const char *const kernels[] = {"attention_gqa", "attention_gqa_wgmma"};
  const int H = 4, S = 64, D = 64;
  for (int kk = 0; kk < 2; kk++) {
    const char *defs[] = {"B=1", "H=4", "HK=1", "M=64", "K2=64",
                          "K1=64", "N=64", "G=2", NULL};
    kcase c;
    bool ok = kc_open(&c, "tests/kernels/gqa.wave", kernels[kk], NULL, defs);
    CHECKF(ok, "%s: %s", kernels[kk], c.err);
    if (!ok) {
      kc_close(&c);
      continue;
    }
    uint64_t rng = 70 + (uint64_t)kk;
    double *q = kc_input(&c, "q", &rng), *k = kc_input(&c, "k", &rng),
           *v = kc_input(&c, "v", &rng);
    size_t no = (size_t)H * S * D;
    double *o = calloc(no, sizeof *o), *lse = malloc(no / D * sizeof *lse);
    /* heads 0 and 1 both read key head 0 */
    ref_attn_fwd(1, S, S, D, D, 0.125, 0, q, k, v, o, lse);
    ref_attn_fwd(1, S, S, D, D, 0.125, 0, q + (size_t)S * D, k, v,
                 o + (size_t)S * D, lse + S);
    for (size_t i = 2 * (size_t)S; i < 4 * (size_t)S; i++)
      lse[i] = log((double)S);
    ok = kc_simulate(&c);
    CHECKF(ok, "%s: %s", kernels[kk], c.err);
    if (ok) {
      double eo = kc_rel_err(&c, "o", o), el = kc_rel_err(&c, "lse", lse);
      CHECKF(eo < 2e-3 && el < 1e-5, "%s: o %.3g lse %.3g", kernels[kk], eo,
             el);
      cases_run++;
    }
    free(q), free(k), free(v), free(o), free(lse);
    kc_close(&c);
  }
}

int main(void) {
  RUN(gqa);
  RUN(heads_past_the_edge);
  printf("  %d cases simulated against float64\n", cases_run);
  CHECK_EXIT();
}
