/* The main job: compile the acceptance kernels, run them (in the simulator
 * on a machine without a GPU), and print per kernel the size, the error
 * against a float64 reference and the compile time. Exit status non-zero if
 * any kernel fails or misses its error bound. */
#include <stdio.h>
#include <stdlib.h>

#include "../tests/ref/kcase.c"
#include "../tests/ref/ref.c"

static int failures;

static void row(const char *kernel, const char *size, const char *where,
                const kcase *c, const char *what, double err, double tol) {
  bool ok = err < tol;
  failures += !ok;
  printf("%-31s %-24s %-10s %8.2f ms  %-8s %9.2e  %s\n", kernel, size, where,
         c->compile_ms, what, err, ok ? "ok" : "FAIL");
}

static void fail(const char *kernel, const char *size, const kcase *c) {
  failures++;
  printf("%-31s %-24s FAILED\n%s\n", kernel, size, c->err);
}

static void gemm_in(const char *file, const char *kernel, const char *where,
                    int M, int N, int K) {
  char d[3][32], size[64];
  snprintf(d[0], 32, "M=%d", M);
  snprintf(d[1], 32, "N=%d", N);
  snprintf(d[2], 32, "K=%d", K);
  snprintf(size, sizeof size, "M=%d N=%d K=%d", M, N, K);
  const char *defs[] = {d[0], d[1], d[2], NULL};
  kcase c;
  uint64_t rng = 1;
  if (!kc_open(&c, file, kernel, NULL, defs) ||
      !(kc_input(&c, "a", &rng), kc_input(&c, "b", &rng), 1)) {
    fail(kernel, size, &c);
    kc_close(&c);
    return;
  }
  /* the inputs, as the kernel sees them */
  double *a = kc_output(&c, "a"), *b = kc_output(&c, "b");
  double *ref = malloc(sizeof *ref * (size_t)M * N);
  ref_gemm((size_t)M, (size_t)N, (size_t)K, a, b, ref);
  if (kc_simulate(&c))
    row(kernel, size, where, &c, "c", kc_rel_err(&c, "c", ref), 1e-5);
  else
    fail(kernel, size, &c);
  free(a), free(b), free(ref);
  kc_close(&c);
}

static void dkdv(const kc_hw *hw, int B, int M, int K2, int N, int K1) {
  char d[5][32], size[96], where[32];
  snprintf(d[0], 32, "B=%d", B);
  snprintf(d[1], 32, "M=%d", M);
  snprintf(d[2], 32, "K2=%d", K2);
  snprintf(d[3], 32, "N=%d", N);
  snprintf(d[4], 32, "K1=%d", K1);
  snprintf(size, sizeof size, "B=%d M=%d K2=%d N=%d K1=%d", B, M, K2, N, K1);
  snprintf(where, sizeof where, "sim %s", hw->name);
  const char *defs[] = {d[0], d[1], d[2], d[3], d[4], NULL};
  kcase c;
  uint64_t rng = 2;
  if (!kc_open(&c, "examples/attention_bwd_dkdv.wave", "attention_bwd_dkdv",
               hw, defs)) {
    fail("attention_bwd_dkdv", size, &c);
    kc_close(&c);
    return;
  }
  size_t bm = (size_t)B * M;
  double *q = kc_input(&c, "q", &rng), *k = kc_input(&c, "k", &rng),
         *v = kc_input(&c, "v", &rng), *dO = kc_input(&c, "do", &rng);
  double *lse = malloc(bm * sizeof *lse), *D = malloc(bm * sizeof *D),
         *o = malloc(bm * N * sizeof *o);
  ref_attn_fwd((size_t)B, (size_t)M, (size_t)K2, (size_t)K1, (size_t)N, 1.0, 0,
               q, k, v, o, lse);
  ref_attn_D((size_t)B, (size_t)M, (size_t)N, dO, o, D);
  kc_set(&c, "lse", lse);
  kc_set(&c, "D", D);
  double *s = malloc(bm * K2 * sizeof *s), *dp = malloc(bm * K2 * sizeof *dp),
         *p = malloc(bm * K2 * sizeof *p), *dps = malloc(bm * K2 * sizeof *dps),
         *dv = malloc((size_t)B * K2 * N * sizeof *dv),
         *dk = malloc((size_t)B * K2 * K1 * sizeof *dk);
  if (kc_simulate(&c)) {
    ref_dkdv_example((size_t)B, (size_t)M, (size_t)K2, (size_t)K1, (size_t)N,
                     0, q, k, v, dO, lse, D, s, NULL, dp, NULL, dv, dk);
    row("attention_bwd_dkdv", size, where, &c, "s", kc_rel_err(&c, "s", s), 1e-5);
    row("", "", "", &c, "dp", kc_rel_err(&c, "dp", dp), 1e-5);
    ref_dkdv_example((size_t)B, (size_t)M, (size_t)K2, (size_t)K1, (size_t)N,
                     REF_MIMIC_F16, q, k, v, dO, lse, D, NULL, p, NULL, dps,
                     dv, dk);
    row("", "", "", &c, "p", kc_rel_err(&c, "p", p), 1e-2);
    row("", "", "", &c, "dp_sub", kc_rel_err(&c, "dp_sub", dps), 1e-2);
    row("", "", "", &c, "dv", kc_rel_err(&c, "dv", dv), 1e-2);
    row("", "", "", &c, "dk", kc_rel_err(&c, "dk", dk), 1e-2);
  } else {
    fail("attention_bwd_dkdv", size, &c);
  }
  free(q), free(k), free(v), free(dO), free(lse), free(D), free(o);
  free(s), free(dp), free(p), free(dps), free(dv), free(dk);
  kc_close(&c);
}

/* The sizes of an attention case with M = K2 and N = K1, as -D bindings
 * and as the text of its row. */
typedef struct attn_size {
  char d[5][32], text[96];
  const char *defs[6];
} attn_size;

static void attn_size_set(attn_size *a, int B, int M, int N) {
  snprintf(a->d[0], 32, "B=%d", B);
  snprintf(a->d[1], 32, "M=%d", M);
  snprintf(a->d[2], 32, "K2=%d", M);
  snprintf(a->d[3], 32, "N=%d", N);
  snprintf(a->d[4], 32, "K1=%d", N);
  snprintf(a->text, sizeof a->text, "B=%d M=K2=%d N=K1=%d", B, M, N);
  for (int i = 0; i < 5; i++)
    a->defs[i] = a->d[i];
  a->defs[5] = NULL;
}

static void fwd_in(const char *file, const char *kernel, const char *where,
                   int causal, int B, int M, int N) {
  attn_size as;
  attn_size_set(&as, B, M, N);
  const char *size = as.text, *const *defs = as.defs;
  kcase c;
  uint64_t rng = 3;
  if (!kc_open(&c, file, kernel, NULL, defs)) {
    fail(kernel, size, &c);
    kc_close(&c);
    return;
  }
  double *q = kc_input(&c, "q", &rng), *k = kc_input(&c, "k", &rng),
         *v = kc_input(&c, "v", &rng);
  double *o = malloc((size_t)B * M * N * sizeof *o),
         *lse = malloc((size_t)B * M * sizeof *lse);
  if (kc_simulate(&c)) {
    ref_attn_fwd((size_t)B, (size_t)M, (size_t)M, (size_t)N, (size_t)N, 0.125,
                 causal ? REF_CAUSAL : 0, q, k, v, o, lse);
    row(kernel, size, where, &c, "o", kc_rel_err(&c, "o", o), 1e-2);
    row("", "", "", &c, "lse", kc_rel_err(&c, "lse", lse), 1e-3);
  } else {
    fail(kernel, size, &c);
  }
  free(q), free(k), free(v), free(o), free(lse);
  kc_close(&c);
}

/* The backward's dk/dv and dq kernels of `file` (named attention_bwd_dkdv
 * and _dq, plus `suffix`) on fresh q, k, v, do and the float64 forward's lse
 * and D rounded to f32, against the float64 backward (tolerance: the f16
 * roundings of p and ds, see tests/unit/test_attention_bwd.c). */
static void bwd_in(const char *file, const char *suffix, const char *where,
                   int causal, int B, int M, int N) {
  attn_size as;
  attn_size_set(&as, B, M, N);
  const char *size = as.text, *const *defs = as.defs;
  char kn[2][64];
  snprintf(kn[0], 64, "attention_bwd_dkdv%s", suffix);
  snprintf(kn[1], 64, "attention_bwd_dq%s", suffix);
  const size_t b = (size_t)B, m = (size_t)M, n = (size_t)N;
  uint64_t rng = 5;
  double *x[4], *lse = malloc(b * m * sizeof *lse), *D = malloc(b * m * sizeof *D),
         *o = malloc(b * m * n * sizeof *o), *g[3];
  for (int i = 0; i < 4; i++) {
    x[i] = malloc(b * m * n * sizeof *x[i]);
    ref_rand_fill(&rng, b * m * n, -1, 1, REF_F16, x[i]);
  }
  for (int i = 0; i < 3; i++)
    g[i] = malloc(b * m * n * sizeof *g[i]);
  int flags = causal ? REF_CAUSAL : 0;
  ref_attn_bwd(b, m, m, n, n, 0.125, flags, x[0], x[1], x[2], x[3], g[0], g[1],
               g[2], D);
  ref_attn_fwd(b, m, m, n, n, 0.125, flags, x[0], x[1], x[2], o, lse);
  for (size_t i = 0; i < b * m; i++)
    lse[i] = (float)lse[i], D[i] = (float)D[i];
  static const char *const names[6] = {"q", "k", "v", "do", "lse", "D"};
  double *in[6] = {x[0], x[1], x[2], x[3], lse, D};
  for (int which = 0; which < 2; which++) {
    kcase c;
    if (!kc_open(&c, file, kn[which], NULL, defs)) {
      fail(kn[which], size, &c);
      kc_close(&c);
      continue;
    }
    for (int i = 0; i < 6; i++)
      kc_set(&c, names[i], in[i]);
    if (!kc_simulate(&c))
      fail(kn[which], size, &c);
    else if (which)
      row(kn[which], size, where, &c, "dq", kc_rel_err(&c, "dq", g[0]), 2e-3);
    else {
      row(kn[which], size, where, &c, "dk", kc_rel_err(&c, "dk", g[1]), 2e-3);
      row("", "", "", &c, "dv", kc_rel_err(&c, "dv", g[2]), 2e-3);
    }
    kc_close(&c);
  }
  for (int i = 0; i < 4; i++)
    free(x[i]);
  for (int i = 0; i < 3; i++)
    free(g[i]);
  free(lse), free(D), free(o);
}

static void gemm(int M, int N, int K) {
  gemm_in("examples/gemm.wave", "gemm", "sim nvidia", M, N, K);
}

static void fwd(const char *kernel, int causal, int B, int M, int N) {
  fwd_in("examples/attention_fwd.wave", kernel, "sim nvidia", causal, B, M, N);
}

int main(void) {
  printf("wavec %s — acceptance kernels (no GPU here: the simulator runs "
         "every thread)\n\n",
         wavec_version());
  printf("%-31s %-24s %-10s %11s  %-8s %9s\n", "kernel", "size", "target",
         "compile", "output", "rel err");
  gemm(256, 256, 128);
  for (int nk = 16; nk <= 64; nk *= 2) {
    dkdv(&kc_mfma, 1, 64, 64, nk, nk);
    dkdv(&kc_nvidia, 1, 64, 64, nk, nk);
  }
  fwd("attention_fwd", 0, 2, 128, 64);
  fwd("attention_fwd_causal", 1, 2, 128, 64);
  bwd_in("examples/attention_bwd.wave", "", "sim nvidia", 0, 2, 128, 64);
  bwd_in("examples/attention_bwd.wave", "_causal", "sim nvidia", 1, 2, 128,
         64);
  /* Hopper's warpgroup mma (wgmma) */
  gemm_in("examples/gemm_wgmma.wave", "gemm_wgmma", "sim wgmma", 256, 256,
          128);
  fwd_in("examples/attention_fwd_wgmma.wave", "attention_fwd_wgmma",
         "sim wgmma", 0, 2, 128, 64);
  fwd_in("examples/attention_fwd_wgmma.wave", "attention_fwd_wgmma_causal",
         "sim wgmma", 1, 2, 256, 128);
  bwd_in("examples/attention_bwd_wgmma.wave", "_wgmma", "sim wgmma", 0, 2,
         128, 64);
  bwd_in("examples/attention_bwd_wgmma.wave", "_wgmma_causal", "sim wgmma", 1,
         2, 256, 128);
  /* head dims whose rows are 64 and 32 bytes (narrower swizzles) */
  fwd_in("examples/attention_fwd_wgmma.wave", "attention_fwd_wgmma",
         "sim wgmma", 0, 2, 200, 96);
  bwd_in("examples/attention_bwd_wgmma.wave", "_wgmma_causal", "sim wgmma", 1,
         1, 128, 80);
  /* a K no tile divides, odd: the operands copied an element at a time */
  gemm_in("examples/gemm_wgmma.wave", "gemm_wgmma", "sim wgmma", 200, 136,
          101);
  /* 2048 keys at head dim 128: the example's defaults take 192x128 tiles
   * (three warpgroups of rows, a producer warpgroup) */
  fwd_in("examples/attention_fwd_wgmma.wave", "attention_fwd_wgmma_causal",
         "sim wgmma", 1, 1, 2048, 128);
  /* head dims no mma's K of 16 divides: 40 and 72 padded to 48 and 80 */
  fwd_in("examples/attention_fwd_wgmma.wave", "attention_fwd_wgmma",
         "sim wgmma", 0, 1, 130, 40);
  bwd_in("examples/attention_bwd_wgmma.wave", "_wgmma_causal", "sim wgmma", 1,
         1, 128, 72);
  printf("\n%s\n", failures ? "SOME KERNELS FAILED" : "all kernels match "
                                                       "their references");
  return failures ? 1 : 0;
}
