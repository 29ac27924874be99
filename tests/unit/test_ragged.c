/* Ragged sizes in the simulator against float64 references: tiles that do
 * not divide their dimension (docs/LANGUAGE-additions.md, "Ragged sizes").
 * The examples as shipped, unchanged, at sizes their tiles do not divide:
 *  - GEMM (gemm.wave, mma.sync, and the 64-lane MFMA layouts; gemm_wgmma)
 *    at (M, N, K) in {(1, 64, 64), (17, 33, 100), (200, 72, 96),
 *    (129, 250, 40)} (the warpgroup GEMM also at (17, 33, 104));
 *  - attention forward (attention_fwd.wave, attention_fwd_wgmma.wave),
 *    plain and causal, at sequence lengths M = K2 in {1, 77, 100} (and
 *    1000 for attention_fwd.wave): the
 *    keys past the edge must enter neither the row max, nor the row sum,
 *    nor p · v;
 *  - reads with a fill value, writes past the edge dropped, and a row
 *    maximum over a ragged dimension (tests/kernels/ragged.wave);
 *  - rows held whole by a wave with no constraint on their dim (softmax,
 *    layer norm), padded up to the lanes where the size is not a
 *    multiple of them.
 * Outputs start poisoned; the simulator fails a run that leaves an element
 * unwritten or touches memory out of bounds through an unguarded access.
 * Thresholds as in test_numerics.c: 1e-5 for f32 GEMM results, 1e-2 for o
 * (p is cast to f16), 1e-3 for lse. */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "../ref/kcase.c"
#include "../ref/ref.c"
#include "check.h"
#include "wavec.h"

static int cases_run;

static bool simulate(kcase *c, const char *what) {
  bool ok = kc_simulate(c);
  CHECKF(ok, "%s: %s", what, c->err);
  cases_run += ok;
  return ok;
}

static void expect(kcase *c, const char *name, const double *ref, double tol,
                   const char *what) {
  double err = kc_rel_err(c, name, ref);
  CHECKF(err < tol, "%s: %s rel err %.3g >= %.3g", what, name, err, tol);
}

static const int gemm_sizes[][3] = {
    {1, 64, 64}, {17, 33, 100}, {200, 72, 96}, {129, 250, 40}};

static void gemm_case(const char *file, const char *kernel, const kc_hw *hw,
                      int M, int N, int K, const char *extra, uint64_t *rng) {
  char dm[32], dn[32], dk[32], what[160];
  snprintf(dm, sizeof dm, "M=%d", M);
  snprintf(dn, sizeof dn, "N=%d", N);
  snprintf(dk, sizeof dk, "K=%d", K);
  snprintf(what, sizeof what, "%s%s M=%d N=%d K=%d %s", kernel,
           hw ? " mfma" : "", M, N, K, extra ? extra : "");
  const char *defs[] = {dm, dn, dk, extra, NULL};
  kcase c;
  bool ok = kc_open(&c, file, kernel, hw, defs);
  CHECKF(ok, "%s: %s", what, c.err);
  if (ok) {
    /* a K whose f16 rows are not whole 16-byte copies: the operands stay
     * in global memory, and a remark says so and why */
    bool unstaged = K % 8 && !hw && !strcmp(kernel, "gemm");
    CHECKF(!unstaged || kc_has_remark(c.k, "read of 'a' feeds an mma but is "
                                           "not staged in shared memory"),
           "%s: no remark on the unstaged operand", what);
    double *a = kc_input(&c, "a", rng), *b = kc_input(&c, "b", rng);
    double *ref = malloc(sizeof *ref * (size_t)M * (size_t)N);
    ref_gemm((size_t)M, (size_t)N, (size_t)K, a, b, ref);
    if (simulate(&c, what))
      expect(&c, "c", ref, 1e-5, what);
    free(a), free(b), free(ref);
  }
  kc_close(&c);
}

static void gemm(void) {
  uint64_t rng = 41;
  for (size_t i = 0; i < 4; i++)
    gemm_case("examples/gemm.wave", "gemm", NULL, gemm_sizes[i][0],
              gemm_sizes[i][1], gemm_sizes[i][2], NULL, &rng);
  /* the 64-lane MFMA layouts: other fragments, the same guards */
  gemm_case("examples/gemm.wave", "gemm", &kc_mfma, 17, 33, 100, NULL, &rng);
  gemm_case("examples/gemm.wave", "gemm", &kc_mfma, 129, 250, 40, NULL, &rng);
}

static void gemm_wgmma(void) {
  uint64_t rng = 42;
  /* tensor copies (the hardware fills past the edge) and cp.async rings
   * (zero-filling copies); K = 100 (rows of 200 bytes) by 8-byte copies
   * either way, and K = 104 */
  for (int copies = 1; copies <= 2; copies++)
    for (size_t i = 0; i < 5; i++)
      gemm_case("examples/gemm_wgmma.wave", "gemm_wgmma", NULL,
                gemm_sizes[i < 4 ? i : 1][0], gemm_sizes[i < 4 ? i : 1][1],
                i == 4 ? 104 : gemm_sizes[i][2],
                copies == 1 ? "copies=1" : "copies=2", &rng);
  /* operands read with fills that are not 0: staged all the same */
  for (size_t i = 0; i < 4; i++)
    gemm_case("tests/kernels/ragged.wave", "gemm_wgmma_fill", NULL,
              gemm_sizes[i][0], gemm_sizes[i][1], gemm_sizes[i][2], NULL,
              &rng);
}

static void fwd_case(const char *file, const char *kernel, bool causal,
                     int S, int D, uint64_t *rng) {
  char d[5][32], what[160];
  snprintf(d[0], 32, "B=%d", 1);
  snprintf(d[1], 32, "M=%d", S);
  snprintf(d[2], 32, "K2=%d", S);
  snprintf(d[3], 32, "N=%d", D);
  snprintf(d[4], 32, "K1=%d", D);
  snprintf(what, sizeof what, "%s M=K2=%d N=K1=%d", kernel, S, D);
  const char *defs[] = {d[0], d[1], d[2], d[3], d[4], NULL};
  kcase c;
  bool ok = kc_open(&c, file, kernel, NULL, defs);
  CHECKF(ok, "%s: %s", what, c.err);
  if (ok) {
    double *q = kc_input(&c, "q", rng), *k = kc_input(&c, "k", rng),
           *v = kc_input(&c, "v", rng);
    double *o = malloc((size_t)S * D * sizeof *o),
           *lse = malloc((size_t)S * sizeof *lse);
    ref_attn_fwd(1, (size_t)S, (size_t)S, (size_t)D, (size_t)D, 0.125,
                 causal ? REF_CAUSAL : 0, q, k, v, o, lse);
    if (simulate(&c, what)) {
      expect(&c, "o", o, 1e-2, what);
      expect(&c, "lse", lse, 1e-3, what);
    }
    free(q), free(k), free(v), free(o), free(lse);
  }
  kc_close(&c);
}

static const int seq_lengths[] = {1, 77, 100};

static void attention_fwd(void) {
  uint64_t rng = 43;
  for (int causal = 0; causal < 2; causal++) {
    const char *k = causal ? "attention_fwd_causal" : "attention_fwd";
    for (size_t i = 0; i < 3; i++)
      fwd_case("examples/attention_fwd.wave", k, causal, seq_lengths[i], 32,
               &rng);
    /* 16 workgroups, 32 key tiles, the last 8 keys long */
    fwd_case("examples/attention_fwd.wave", k, causal, 1000, 64, &rng);
  }
}

static void attention_fwd_wgmma(void) {
  uint64_t rng = 44;
  for (int causal = 0; causal < 2; causal++)
    for (size_t i = 0; i < 3; i++)
      fwd_case("examples/attention_fwd_wgmma.wave",
               causal ? "attention_fwd_wgmma_causal" : "attention_fwd_wgmma",
               causal, seq_lengths[i], 64, &rng);
}

/* Head dims that are not a multiple of the mma's K of 16 (40, 72, 24):
 * the reduction dim held whole is padded up to one (constraints.c), the
 * padding's products 0; on warpgroups v's N, read N-contiguous, is padded
 * up to a swizzled row of 16, its columns dropped by the write. Both
 * examples, plain and causal, at a length the tiles do not divide. */
static void head_dims(void) {
  static const int ds[] = {40, 72, 24};
  uint64_t rng = 45;
  for (int causal = 0; causal < 2; causal++)
    for (size_t i = 0; i < 3; i++) {
      fwd_case("examples/attention_fwd.wave",
               causal ? "attention_fwd_causal" : "attention_fwd", causal, 100,
               ds[i], &rng);
      fwd_case("examples/attention_fwd_wgmma.wave",
               causal ? "attention_fwd_wgmma_causal" : "attention_fwd_wgmma",
               causal, 130, ds[i], &rng);
    }
}

/* Causal attention aligned at the bottom right (tests/kernels/
 * causal_br.wave: query i sees keys j <= i + K2 - M, and each workgroup
 * walks only the key tiles its queries see, iterate(K2 <= M + (K2 - M))),
 * on warpgroups and mma.sync, a decoding query over 300 keys, a chunk of 50
 * over 130, 77 over 77 and 300 over 1000, against float64: the top-left
 * causal reference of K2 queries whose last M rows are these; at 512 over
 * 1024 the remarks say what the bound saves and that the walk is split
 * (masksplit recognizes the select's comparison moved by the offset). */
static void bottom_right(void) {
  {
    const char *defs[] = {"B=1", "M=512", "K2=1024", "N=64", "K1=64", NULL};
    kcase c;
    bool ok = kc_open(&c, "tests/kernels/causal_br.wave", "causal_br_wgmma",
                      NULL, defs);
    CHECKF(ok, "causal_br_wgmma 512/1024: %s", c.err);
    CHECKF(!ok || kc_has_remark(c.k, "iterate over 'K2' <= 'M' + 512: a "
                                     "workgroup walks 5 to 8 of the 8 tiles"),
           "causal_br_wgmma 512/1024: no remark on the bounded walk");
    /* the select's shifted comparison splits the walk as the plain one
     * does: the tiles it leaves whole first, without it */
    CHECKF(!ok || kc_has_remark(c.k, "iterate over 'K2': the mask compares "
                                     "'K2' with 'M'; the tiles it leaves "
                                     "whole are walked first"),
           "causal_br_wgmma 512/1024: the walk is not split");
    kc_close(&c);
    /* the offset spelled on the keys' side, as a chain of - and + */
    ok = kc_open(&c, "tests/kernels/causal_br.wave", "causal_br_spelled", NULL,
                 defs);
    CHECKF(ok && kc_has_remark(c.k, "the mask compares 'K2' with 'M'"),
           "causal_br_spelled 512/1024: the walk is not split: %s", c.err);
    kc_close(&c);
    /* at run-time sizes the remark says the bound is the run's */
    const char *dyn[] = {"B=1", "K1=64", "N=64", NULL};
    ok = kc_open(&c, "tests/kernels/causal_br.wave", "br_dyn", NULL, dyn);
    CHECKF(ok && kc_has_remark(c.k, "iterate over 'K2' <= 'M' with an "
                                    "offset: the tiles a workgroup walks are "
                                    "bounded at run time"),
           "br_dyn: no remark on its walk: %s", c.err);
    kc_close(&c);
  }
  static const int mk[][2] = {{1, 300}, {50, 130}, {77, 77}, {300, 1000}};
  static const char *const kernels[] = {"causal_br_wgmma", "causal_br",
                                        "causal_br_spelled"};
  uint64_t rng = 46;
  for (int kk = 0; kk < 3; kk++)
    for (size_t i = 0; i < 4; i++) {
      int M = mk[i][0], K2 = mk[i][1], D = 64;
      char d[5][32], what[96];
      snprintf(d[0], 32, "B=1");
      snprintf(d[1], 32, "M=%d", M);
      snprintf(d[2], 32, "K2=%d", K2);
      snprintf(d[3], 32, "N=%d", D);
      snprintf(d[4], 32, "K1=%d", D);
      snprintf(what, sizeof what, "%s M=%d K2=%d", kernels[kk], M, K2);
      const char *defs[] = {d[0], d[1], d[2], d[3], d[4], NULL};
      kcase c;
      bool ok = kc_open(&c, "tests/kernels/causal_br.wave", kernels[kk], NULL,
                        defs);
      CHECKF(ok, "%s: %s", what, c.err);
      if (!ok) {
        kc_close(&c);
        continue;
      }
      double *q = kc_input(&c, "q", &rng), *k = kc_input(&c, "k", &rng),
             *v = kc_input(&c, "v", &rng);
      size_t off = (size_t)(K2 - M);
      double *qa = calloc((size_t)K2 * D, sizeof *qa),
             *o = malloc((size_t)K2 * D * sizeof *o),
             *lse = malloc((size_t)K2 * sizeof *lse);
      memcpy(qa + off * D, q, (size_t)M * D * sizeof *qa);
      ref_attn_fwd(1, (size_t)K2, (size_t)K2, (size_t)D, (size_t)D, 0.125,
                   REF_CAUSAL, qa, k, v, o, lse);
      if (simulate(&c, what)) {
        expect(&c, "o", o + off * D, 1e-2, what);
        expect(&c, "lse", lse + off, 1e-3, what);
      }
      free(q), free(k), free(v), free(qa), free(o), free(lse);
      kc_close(&c);
    }
}

/* Keys held whole on warpgroups (kernel attn_whole_keys_wgmma): K2 padded
 * to whole swizzle groups of k's and v's rows, K1 and N to the mma's K and
 * a swizzled row, at sizes none of them divides; the remark says why; o
 * against float64 (p rounded to f16 as the kernel's second mma takes it). */
static void whole_keys(void) {
  static const int sz[][4] = {
      {64, 100, 40, 24}, {64, 7, 16, 16}, {130, 257, 72, 40}};
  uint64_t rng = 47;
  for (size_t i = 0; i < 3; i++) {
    int M = sz[i][0], K2 = sz[i][1], K1 = sz[i][2], N = sz[i][3];
    char d[4][32], what[96];
    snprintf(d[0], 32, "M=%d", M);
    snprintf(d[1], 32, "K2=%d", K2);
    snprintf(d[2], 32, "K1=%d", K1);
    snprintf(d[3], 32, "N=%d", N);
    snprintf(what, sizeof what, "attn_whole_keys_wgmma %dx%dx%dx%d", M, K2, K1,
             N);
    const char *defs[] = {d[0], d[1], d[2], d[3], NULL};
    kcase c;
    bool ok = kc_open(&c, "tests/kernels/ragged.wave", "attn_whole_keys_wgmma", NULL, defs);
    CHECKF(ok, "%s: %s", what, c.err);
    if (!ok) {
      kc_close(&c);
      continue;
    }
    CHECKF(K2 % 32 == 0 || kc_has_remark(c.k, "whole swizzle groups of an "
                                              "operand's rows (32)"),
           "%s: no remark on K2's padding", what);
    double *q = kc_input(&c, "q", &rng), *k = kc_input(&c, "k", &rng),
           *v = kc_input(&c, "v", &rng);
    double *p = malloc((size_t)K2 * sizeof *p),
           *o = calloc((size_t)M * N, sizeof *o);
    for (int r = 0; r < M; r++) {
      double mx = -INFINITY, sum = 0;
      for (int j = 0; j < K2; j++) {
        double dot = 0;
        for (int x = 0; x < K1; x++)
          dot += q[(size_t)r * K1 + x] * k[(size_t)j * K1 + x];
        p[j] = dot;
        mx = dot > mx ? dot : mx;
      }
      for (int j = 0; j < K2; j++)
        sum += p[j] = exp(p[j] - mx);
      for (int j = 0; j < K2; j++) { /* (rounded to f16, as the cast) */
        uint16_t h;
        p[j] /= sum;
        ref_pack(1, &p[j], REF_F16, &h);
        ref_unpack(1, &h, REF_F16, &p[j]);
      }
      for (int j = 0; j < K2; j++)
        for (int x = 0; x < N; x++)
          o[(size_t)r * N + x] += p[j] * v[(size_t)j * N + x];
    }
    if (simulate(&c, what))
      expect(&c, "o", o, 1e-4, what);
    free(q), free(k), free(v), free(p), free(o);
    kc_close(&c);
  }
}

/* The dk/dv backward aligned at the bottom right (causal_br.wave's
 * dkdv_br: iterate(M >= K2 - (K2 - M)), the walk split) against float64:
 * the top-left causal backward of K2 queries whose last M rows are these,
 * the others with do = 0 (which adds nothing to dk or dv). */
static void bottom_right_backward(void) {
  static const int mk[][2] = {{50, 130}, {96, 300}, {64, 64}};
  uint64_t rng = 48;
  for (size_t i = 0; i < 3; i++) {
    const size_t M = (size_t)mk[i][0], K2 = (size_t)mk[i][1], D = 32,
                 off = K2 - M;
    char d[5][32], what[64];
    snprintf(d[0], 32, "B=1");
    snprintf(d[1], 32, "M=%zu", M);
    snprintf(d[2], 32, "K2=%zu", K2);
    snprintf(d[3], 32, "N=%zu", D);
    snprintf(d[4], 32, "K1=%zu", D);
    snprintf(what, sizeof what, "dkdv_br M=%zu K2=%zu", M, K2);
    const char *defs[] = {d[0], d[1], d[2], d[3], d[4], NULL};
    kcase c;
    bool ok = kc_open(&c, "tests/kernels/causal_br.wave", "dkdv_br", NULL, defs);
    CHECKF(ok, "%s: %s", what, c.err);
    if (!ok) {
      kc_close(&c);
      continue;
    }
    CHECKF(M == K2 || kc_has_remark(c.k, "the tiles it leaves whole are "
                                         "walked last"),
           "%s: the walk is not split", what);
    double *q = kc_input(&c, "q", &rng), *k = kc_input(&c, "k", &rng),
           *v = kc_input(&c, "v", &rng), *dO = kc_input(&c, "do", &rng);
    double *qa = calloc(K2 * D, sizeof *qa), *da = calloc(K2 * D, sizeof *da);
    memcpy(qa + off * D, q, M * D * sizeof *qa);
    memcpy(da + off * D, dO, M * D * sizeof *da);
    double *o = malloc(K2 * D * sizeof *o), *lse = malloc(K2 * sizeof *lse),
           *dq = malloc(K2 * D * sizeof *dq), *dk = malloc(K2 * D * sizeof *dk),
           *dv = malloc(K2 * D * sizeof *dv), *Dv = malloc(K2 * sizeof *Dv);
    ref_attn_fwd(1, K2, K2, D, D, 0.125, REF_CAUSAL, qa, k, v, o, lse);
    ref_attn_bwd(1, K2, K2, D, D, 0.125, REF_CAUSAL, qa, k, v, da, dq, dk, dv,
                 Dv);
    for (size_t r = 0; r < K2; r++) /* (as the kernels take them) */
      lse[r] = (float)lse[r], Dv[r] = (float)Dv[r];
    kc_set(&c, "lse", lse + off);
    kc_set(&c, "D", Dv + off);
    if (simulate(&c, what)) {
      expect(&c, "dk", dk, 1e-2, what);
      expect(&c, "dv", dv, 1e-2, what);
    }
    free(q), free(k), free(v), free(dO), free(qa), free(da), free(o);
    free(lse), free(dq), free(dk), free(dv), free(Dv);
    kc_close(&c);
  }
}

static const char *const KERNELS = "tests/kernels/ragged.wave";

/* y[i] = x[i + 1]: the fill where i + 1 is past the edge. */
static void shift_fill(void) {
  static const char *const ns[] = {"N=100", "N=128", "N=1"};
  uint64_t rng = 45;
  for (size_t i = 0; i < 3; i++) {
    const char *defs[] = {ns[i], NULL};
    int n = atoi(ns[i] + 2);
    kcase c;
    bool ok = kc_open(&c, KERNELS, "shift_fill", NULL, defs);
    CHECKF(ok, "%s", c.err);
    if (ok) {
      double *x = kc_input(&c, "x", &rng), *ref = malloc(n * sizeof *ref);
      for (int j = 0; j < n; j++)
        ref[j] = j + 1 < n ? x[j + 1] : -1.5;
      if (simulate(&c, ns[i])) {
        double *y = kc_output(&c, "y");
        CHECKF(ref_max_abs_err((size_t)n, y, ref) == 0, "%s: y differs",
               ns[i]);
        free(y);
      }
      free(x), free(ref);
    }
    kc_close(&c);
  }
}

/* Row max, row sum, and a row sum whose read fills 5.0, over N in tiles
 * of 32: exact where N divides and where it does not. */
static void row_reduce(void) {
  static const int ns[] = {70, 64, 1, 33};
  uint64_t rng = 46;
  for (size_t i = 0; i < 4; i++) {
    char dn[16];
    snprintf(dn, sizeof dn, "N=%d", ns[i]);
    const char *defs[] = {"M=8", dn, NULL};
    int M = 8, N = ns[i];
    kcase c;
    bool ok = kc_open(&c, KERNELS, "row_reduce", NULL, defs);
    CHECKF(ok, "%s", c.err);
    if (ok) {
      size_t xi = kc_arg(&c, "x");
      double *x = malloc((size_t)M * N * sizeof *x);
      ref_rand_fill(&rng, (size_t)M * N, -2, -1, REF_F32, x);
      ref_pack((size_t)M * N, x, REF_F32, c.buf[xi]);
      double mx[8], sm[8];
      for (int r = 0; r < M; r++) {
        mx[r] = -INFINITY, sm[r] = 0;
        for (int j = 0; j < N; j++) {
          mx[r] = fmax(mx[r], x[r * N + j]);
          sm[r] += x[r * N + j];
        }
      }
      if (simulate(&c, dn)) {
        double *m = kc_output(&c, "mx"), *a = kc_output(&c, "s0"),
               *b = kc_output(&c, "s5");
        CHECKF(ref_max_abs_err(8, m, mx) == 0, "%s: row max differs", dn);
        CHECKF(ref_rel_err(8, a, sm) < 1e-6, "%s: row sum differs", dn);
        CHECKF(ref_rel_err(8, b, sm) < 1e-6,
               "%s: row sum of the read filled with 5 differs", dn);
        free(m), free(a), free(b);
      }
      free(x);
    }
    kc_close(&c);
  }
}

/* Rows held whole by a wave, N unconstrained: softmax and layer norm at
 * sizes that are and are not multiples of the 32 lanes (padded up and
 * masked: the padding enters neither max nor sums), below a wave (lanes
 * holding copies) and one. The remark names the padding. */
static void whole_rows(void) {
  static const int ns[] = {33, 1000, 777, 64, 20, 1};
  uint64_t rng = 47;
  for (size_t i = 0; i < sizeof ns / sizeof *ns; i++) {
    int M = 7, N = ns[i];
    char dm[16], dn[16], what[64];
    snprintf(dm, sizeof dm, "M=%d", M);
    snprintf(dn, sizeof dn, "N=%d", N);
    const char *defs[] = {dm, dn, NULL};
    for (int ln = 0; ln < 2; ln++) {
      snprintf(what, sizeof what, "%s N=%d", ln ? "layer_norm" : "row_softmax",
               N);
      kcase c;
      bool ok = kc_open(&c, KERNELS, ln ? "layer_norm" : "row_softmax", NULL,
                        defs);
      CHECKF(ok, "%s: %s", what, c.err);
      if (!ok) {
        kc_close(&c);
        continue;
      }
      bool padded = N > 32 && N % 32;
      CHECKF(padded == kc_has_remark(c.k, "held whole by a wave, is padded"),
             "%s: the remark on the padding", what);
      double *x = kc_input(&c, "x", &rng);
      double *ref = malloc((size_t)M * N * sizeof *ref);
      double *g = ln ? kc_input(&c, "g", &rng) : NULL;
      double *b = ln ? kc_input(&c, "b", &rng) : NULL;
      for (int r = 0; r < M; r++) {
        const double *row = x + (size_t)r * N;
        double *o = ref + (size_t)r * N, mx = -INFINITY, s = 0, v = 0;
        for (int j = 0; j < N; j++)
          mx = fmax(mx, row[j]), s += row[j];
        if (ln) {
          for (int j = 0; j < N; j++)
            v += (row[j] - s / N) * (row[j] - s / N);
          for (int j = 0; j < N; j++)
            o[j] = (row[j] - s / N) / sqrt(v / N + 1e-5) * g[j] + b[j];
        } else {
          double e = 0;
          for (int j = 0; j < N; j++)
            e += exp(row[j] - mx);
          for (int j = 0; j < N; j++)
            o[j] = exp(row[j] - mx) / e;
        }
      }
      if (simulate(&c, what))
        expect(&c, "y", ref, ln ? 1e-5 : 1e-3, what);
      free(x), free(ref), free(g), free(b);
      kc_close(&c);
    }
  }
}

/* Integer / and % truncate toward zero: signs of both operands. */
static void integer_division(void) {
  const char *defs[] = {"N=40", NULL};
  kcase c;
  bool ok = kc_open(&c, KERNELS, "int_div", NULL, defs);
  CHECKF(ok, "%s", c.err);
  if (ok) {
    int32_t *a = c.buf[kc_arg(&c, "a")], *b = c.buf[kc_arg(&c, "b")];
    for (int i = 0; i < 40; i++) {
      a[i] = (i % 2 ? -1 : 1) * (i * 7 + 1);
      b[i] = (i % 3 ? 1 : -1) * (i % 5 + 1);
    }
    a[0] = -15, b[0] = 7;  /* C: -2, remainder -1 (floor would be -3, 6) */
    a[1] = 15, b[1] = -7;  /* -2, 1 */
    a[2] = -15, b[2] = -7; /* 2, -1 */
    if (simulate(&c, "int_div")) {
      const int32_t *q = c.buf[kc_arg(&c, "q")], *r = c.buf[kc_arg(&c, "r")];
      CHECK(q[0] == -2 && r[0] == -1);
      CHECK(q[1] == -2 && r[1] == 1);
      CHECK(q[2] == 2 && r[2] == -1);
      for (int i = 0; i < 40; i++)
        CHECKF(q[i] == a[i] / b[i] && r[i] == a[i] % b[i],
               "%d / %d: %d rem %d", a[i], b[i], q[i], r[i]);
    }
  }
  kc_close(&c);
}

int main(void) {
  RUN(shift_fill);
  RUN(row_reduce);
  RUN(whole_rows);
  RUN(integer_division);
  RUN(gemm);
  RUN(gemm_wgmma);
  RUN(attention_fwd);
  RUN(attention_fwd_wgmma);
  RUN(head_dims);
  RUN(bottom_right);
  RUN(bottom_right_backward);
  RUN(whole_keys);
  printf("  %d simulated runs\n", cases_run);
  CHECK_EXIT();
}
