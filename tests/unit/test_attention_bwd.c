/* Numerics of examples/attention_bwd.wave in the simulator: the whole
 * FlashAttention-2 training step. Per case, fresh f16 inputs q, k, v, do
 * (uniform in [-1, 1)); the forward kernel (examples/attention_fwd.wave, or
 * attention_fwd_causal) gives o and lse; attention_bwd_D gives D from do and
 * that o; attention_bwd_dkdv and attention_bwd_dq (or their _causal forms)
 * take the kernels' lse and D. Everything is compared with the float64
 * reference ref_attn_bwd, which recomputes the forward from q, k, v. The
 * backward kernels are also run alone, on float64 lse and D rounded to f32,
 * to separate their error from the forward's. The softmax scale is
 * 1/sqrt(K1), passed as the float hyperparameter SCALE (not the default).
 * Sizes: B in {1, 2}, M = K2 in {32, 64, 128}, N = K1 in {16, 32, 64}, with
 * the kernels' default blocks on their own NVIDIA m16n8k16 hardware, plus
 * 64 x 64 blocks with four waves, plus the 64-lane AMD MFMA 16x16x16
 * layouts, plus the warpgroup (wgmma) kernels of attention_bwd_wgmma.wave,
 * plus ragged sequence lengths (1, 77, 100) that no tile divides, plus the
 * warpgroup kernels at head dims 48, 80 and 96 (narrower swizzles).
 * Outputs start poisoned; the simulator fails a run that leaves
 * any element unwritten. Each case prints its errors and simulator times.
 *
 * Thresholds (relative L2 error, ‖out − ref‖ / ‖ref‖):
 *  - D against ref_attn_D of the same o the kernel read: 1e-5. Only the f32
 *    product and the f32 sum order differ from float64 (2^-24 per op).
 *  - D, dq, dk, dv against ref_attn_bwd: TOL = 2e-3. The pipeline rounds to
 *    f16 on the way, a relative step of 2^-11 (rms rounding error about
 *    2^-12/sqrt(3) = 1.4e-4 per value): the forward casts p to f16 for p·v
 *    (so o, and D = rowsum(do ∘ o), carry ~2e-4), the backward casts p (for
 *    pᵀ do) and ds (for dsᵀ q and ds k) to f16. Measured: 1.2e-4 to 3.1e-4
 *    in every case, so 2e-3 leaves a margin of 6x, while a wrong index, a
 *    missing SCALE (error ~3) or a dropped D term (~0.2) fails by far. */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../ref/kcase.c"
#include "../ref/ref.c"
#include "check.h"
#include "wavec.h"

#define TOL 2e-3

static int cases_run;
static double sim_seconds;

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* kc_open with the float hyperparameter SCALE as well (kc_open binds
 * integers only): the same steps, plus wavec_define_float. */
static bool open_case(kcase *c, const char *file, const char *kernel,
                      const kc_hw *hw, const char *const *defs, double scale) {
  memset(c, 0, sizeof *c);
  c->ctx = wavec_ctx_new(NULL, NULL);
  for (size_t i = 0; defs[i]; i++) {
    char name[64];
    const char *eq = strchr(defs[i], '=');
    memcpy(name, defs[i], (size_t)(eq - defs[i]));
    name[eq - defs[i]] = 0;
    wavec_define_int(c->ctx, name, atoll(eq + 1));
  }
  wavec_status st = wavec_define_float(c->ctx, "SCALE", scale);
  if (st == WAVEC_OK && hw)
    st = wavec_hardware_override(c->ctx, "threads_per_wave", hw->threads);
  if (st == WAVEC_OK && hw)
    st = wavec_hardware_override(c->ctx, "mma", hw->mma);
  size_t len;
  char *src = slurp(file, &len);
  if (st == WAVEC_OK)
    st = src ? wavec_parse(c->ctx, file, src, len) : WAVEC_ERR_INVALID;
  free(src);
  if (st == WAVEC_OK) {
    c->k = wavec_kernel_find(c->ctx, kernel);
    st = c->k ? wavec_compile(c->k, NULL) : WAVEC_ERR_INVALID;
  }
  CHECKF(st == WAVEC_OK, "%s %s: %s", file, kernel, wavec_errmsg(c->ctx));
  if (st != WAVEC_OK)
    return false;
  c->n = wavec_arg_count(c->k);
  for (size_t i = 0; i < c->n; i++) {
    wavec_arg_info_get(c->k, i, &c->info[i]);
    c->buf[i] = malloc(c->info[i].bytes);
    memset(c->buf[i], 0xff, c->info[i].bytes); /* poison */
  }
  return true;
}

/* Simulates; *secs gets the simulator's wall time. */
static bool run(kcase *c, double *secs) {
  double t0 = now_s();
  bool ok = kc_simulate(c);
  *secs = now_s() - t0;
  sim_seconds += *secs;
  CHECKF(ok, "%s", c->err);
  cases_run += ok;
  return ok;
}

static double expect(kcase *c, const char *name, const double *ref, double tol,
                     const char *what) {
  double err = kc_rel_err(c, name, ref);
  CHECKF(err < tol, "%s: %s rel err %.3g >= %.3g", what, name, err, tol);
  return err;
}

static double *alloc(size_t n) {
  return malloc((n ? n : 1) * sizeof(double));
}

/* Rounds x[0..n) to f32 in place. */
static void to_f32(size_t n, double *x) {
  for (size_t i = 0; i < n; i++)
    x[i] = (float)x[i];
}

static const char *const BWD = "examples/attention_bwd.wave";

static const char *const BWD_WG = "examples/attention_bwd_wgmma.wave";

/* A configuration: the causal kernels or not, a hardware override of the
 * backward kernels (NULL: their own NVIDIA m16n8k16), block sizes; wgmma:
 * the dkdv and dq kernels of attention_bwd_wgmma.wave (warpgroups). */
typedef struct cfg {
  bool causal;
  const kc_hw *hw;
  const char *blocks[4]; /* "SYM=V", NULL-terminated */
  bool wgmma;
} cfg;

/* Runs attention_bwd_dkdv and attention_bwd_dq on the given lse and D and
 * checks dq, dk, dv; err: dq, dk, dv; secs: dkdv, dq. */
static void backward(const cfg *g, const char *const *defs, double scale,
                     double *const in[6], const double *dq_ref,
                     const double *dk_ref, const double *dv_ref,
                     const char *what, double err[3], double secs[2]) {
  static const char *const names[6] = {"q", "k", "v", "do", "lse", "D"};
  char kn[64];
  for (int which = 0; which < 2; which++) {
    snprintf(kn, sizeof kn, "attention_bwd_%s%s%s", which ? "dq" : "dkdv",
             g->wgmma ? "_wgmma" : "", g->causal ? "_causal" : "");
    kcase c;
    if (open_case(&c, g->wgmma ? BWD_WG : BWD, kn, g->hw, defs, scale)) {
      for (int i = 0; i < 6; i++)
        kc_set(&c, names[i], in[i]);
      if (run(&c, &secs[which])) {
        if (which) {
          err[0] = expect(&c, "dq", dq_ref, TOL, what);
        } else {
          err[1] = expect(&c, "dk", dk_ref, TOL, what);
          err[2] = expect(&c, "dv", dv_ref, TOL, what);
        }
      }
    }
    kc_close(&c);
  }
}

/* The one-pass backward of attention_bwd_wgmma.wave: attention_bwd_prep
 * (D from do and o in f16, dq_acc zeroed), attention_bwd_fused_wgmma (dk,
 * dv, and dq's parts added into dq_acc by write(..., reduce = add): each
 * warpgroup's partial sum over its keys, for every key tile), then
 * attention_bwd_dq_scale (dq in f16); in: q, k, v, do, o, lse. err: dq,
 * dk, dv. */
static void fused(const cfg *g, const char *const *defs, double scale,
                  double *const in[6], const double *D_ref,
                  const double *dq_ref, const double *dk_ref,
                  const double *dv_ref, const char *what, double err[3]) {
  double t, *D_k = NULL, *acc = NULL;
  kcase c;
  if (open_case(&c, BWD_WG, "attention_bwd_prep", NULL, defs, scale)) {
    kc_set(&c, "do", in[3]), kc_set(&c, "o", in[4]);
    if (run(&c, &t)) {
      expect(&c, "D", D_ref, TOL, what);
      D_k = kc_output(&c, "D");
      acc = kc_output(&c, "dq_acc");
    }
  }
  kc_close(&c);
  if (D_k && open_case(&c, BWD_WG,
                       g->causal ? "attention_bwd_fused_wgmma_causal"
                                 : "attention_bwd_fused_wgmma",
                       NULL, defs, scale)) {
    static const char *const names[4] = {"q", "k", "v", "do"};
    for (int i = 0; i < 4; i++)
      kc_set(&c, names[i], in[i]);
    kc_set(&c, "lse", in[5]), kc_set(&c, "D", D_k);
    kc_set(&c, "dq_acc", acc);
    free(acc), acc = NULL;
    if (run(&c, &t)) {
      err[1] = expect(&c, "dk", dk_ref, TOL, what);
      err[2] = expect(&c, "dv", dv_ref, TOL, what);
      acc = kc_output(&c, "dq_acc");
    }
  }
  kc_close(&c);
  if (acc && open_case(&c, BWD_WG, "attention_bwd_dq_scale", NULL, defs, scale)) {
    kc_set(&c, "dq_acc", acc);
    if (run(&c, &t))
      err[0] = expect(&c, "dq", dq_ref, TOL, what);
  }
  kc_close(&c);
  free(D_k), free(acc);
}

/* The one-pass backward on mma.sync (attention_bwd.wave's
 * attention_bwd_fused): dk, dv and dq_acc (zeroed here) from q, k, v, do,
 * lse, D; dq = dq_acc * scale. err: dq, dk, dv. */
static void fused_sync(const char *const *defs, double scale,
                       double *const in[6], const double *dq_ref,
                       const double *dk_ref, const double *dv_ref,
                       const char *what, double err[3]) {
  static const char *const names[6] = {"q", "k", "v", "do", "lse", "D"};
  kcase c;
  double t;
  if (!open_case(&c, BWD, "attention_bwd_fused", NULL, defs, scale))
    return;
  for (int i = 0; i < 6; i++)
    kc_set(&c, names[i], in[i]);
  size_t n = c.info[kc_arg(&c, "dq_acc")].elems;
  double *zero = calloc(n, sizeof *zero);
  kc_set(&c, "dq_acc", zero);
  if (run(&c, &t)) {
    err[1] = expect(&c, "dk", dk_ref, TOL, what);
    err[2] = expect(&c, "dv", dv_ref, TOL, what);
    double *acc = kc_output(&c, "dq_acc");
    double num = 0, den = 0;
    for (size_t i = 0; i < n; i++) {
      double d = acc[i] * scale - dq_ref[i];
      num += d * d;
      den += dq_ref[i] * dq_ref[i];
    }
    err[0] = sqrt(num / (den > 0 ? den : 1));
    CHECKF(err[0] < TOL, "%s: one-pass dq rel err %.3g", what, err[0]);
    free(acc);
  }
  free(zero);
  kc_close(&c);
}

static void bwd_case(const cfg *g, int B, int MK, int NK, uint64_t *rng) {
  const size_t b = (size_t)B, m = (size_t)MK, n = (size_t)NK;
  const double scale = 1.0 / sqrt((double)NK);
  const int flags = g->causal ? REF_CAUSAL : 0;
  char d[7][32], what[256];
  snprintf(d[0], 32, "B=%d", B);
  snprintf(d[1], 32, "M=%d", MK);
  snprintf(d[2], 32, "K2=%d", MK);
  snprintf(d[3], 32, "N=%d", NK);
  snprintf(d[4], 32, "K1=%d", NK);
  /* the forward example's block of 64 queries, or all of them when fewer
   * (a multiple of 16: one m16 tile per wave); a length the block does not
   * divide is ragged */
  int fwd_block = MK >= 64 || MK % 16 ? 64 : MK;
  snprintf(d[5], 32, "BLOCK_M=%d", fwd_block);
  snprintf(d[6], 32, "WAVES=%d", fwd_block / 16);
  const char *fwd_defs[] = {d[0], d[1], d[2], d[3], d[4], d[5], d[6], NULL};
  const char *defs[12] = {d[0], d[1], d[2], d[3], d[4]};
  size_t nd = 5;
  int w =
      snprintf(what, sizeof what, "%s%s B=%d M=K2=%d N=K1=%d",
               g->causal ? "causal" : "plain",
               g->hw ? " mfma" : g->wgmma ? " wgmma" : "", B, MK, NK);
  for (size_t i = 0; g->blocks[i]; i++) {
    defs[nd++] = g->blocks[i];
    w += snprintf(what + w, sizeof what - (size_t)w, " %s", g->blocks[i]);
  }
  defs[nd] = NULL;

  double *q = alloc(b * m * n), *k = alloc(b * m * n), *v = alloc(b * m * n),
         *dO = alloc(b * m * n);
  ref_rand_fill(rng, b * m * n, -1, 1, REF_F16, q);
  ref_rand_fill(rng, b * m * n, -1, 1, REF_F16, k);
  ref_rand_fill(rng, b * m * n, -1, 1, REF_F16, v);
  ref_rand_fill(rng, b * m * n, -1, 1, REF_F16, dO);
  double *dq = alloc(b * m * n), *dk = alloc(b * m * n), *dv = alloc(b * m * n),
         *D = alloc(b * m), *lse = alloc(b * m), *o = alloc(b * m * n);
  ref_attn_bwd(b, m, m, n, n, scale, flags, q, k, v, dO, dq, dk, dv, D);
  ref_attn_fwd(b, m, m, n, n, scale, flags, q, k, v, o, lse);
  double *o_k = NULL, *lse_k = NULL, *D_k = NULL;
  double t_fwd = 0, t_D = 0, t_bwd[2] = {0, 0}, t_bwd64[2] = {0, 0};
  double e_D = NAN, e_bwd[3] = {NAN, NAN, NAN}, e_bwd64[3] = {NAN, NAN, NAN};

  /* forward (its own hardware): o, lse */
  kcase c;
  if (open_case(&c, "examples/attention_fwd.wave",
                g->causal ? "attention_fwd_causal" : "attention_fwd", NULL,
                fwd_defs, scale)) {
    kc_set(&c, "q", q), kc_set(&c, "k", k), kc_set(&c, "v", v);
    if (run(&c, &t_fwd)) {
      o_k = kc_output(&c, "o");
      lse_k = kc_output(&c, "lse");
    }
  }
  kc_close(&c);
  /* D from the forward's o (attention_bwd_D: a head dim of whole 32-lane
   * rows; the warpgroup pipeline's own D is prep's, below) */
  if (o_k && NK % 32 == 0) {
    if (open_case(&c, BWD, "attention_bwd_D", g->hw, defs, scale)) {
      kc_set(&c, "do", dO), kc_set(&c, "o", o_k);
      if (run(&c, &t_D)) {
        double *D_same = alloc(b * m);
        ref_attn_D(b, m, n, dO, o_k, D_same);
        expect(&c, "D", D_same, 1e-5, what);
        e_D = expect(&c, "D", D, TOL, what);
        D_k = kc_output(&c, "D");
        free(D_same);
      }
    }
    kc_close(&c);
  }
  /* the backward on the kernels' lse and D: the whole pipeline */
  if (lse_k && D_k) {
    double *in[6] = {q, k, v, dO, lse_k, D_k};
    backward(g, defs, scale, in, dq, dk, dv, what, e_bwd, t_bwd);
  }
  /* the backward alone, on float64 lse and D rounded to f32 */
  to_f32(b * m, lse), to_f32(b * m, D);
  double *in64[6] = {q, k, v, dO, lse, D};
  backward(g, defs, scale, in64, dq, dk, dv, what, e_bwd64, t_bwd64);

  printf("  %-44s rel err D %.1e dq %.1e dk %.1e dv %.1e (alone: dq %.1e dk "
         "%.1e dv %.1e); sim s: fwd %.2f D %.2f dkdv %.2f dq %.2f\n",
         what, e_D, e_bwd[0], e_bwd[1], e_bwd[2], e_bwd64[0], e_bwd64[1],
         e_bwd64[2], t_fwd, t_D, t_bwd[0], t_bwd[1]);
  /* mma.sync's one-pass form on the float64 lse and D */
  if (!g->wgmma && !g->hw && !g->causal) {
    double e_f[3] = {NAN, NAN, NAN};
    fused_sync(defs, scale, in64, dq, dk, dv, what, e_f);
    printf("  %-44s one pass (fused): dq %.1e dk %.1e dv %.1e\n", what,
           e_f[0], e_f[1], e_f[2]);
  }
  /* the one-pass form on the forward's o (in f16) and lse; its dq parts
   * added by the threads, and by tensor reduces (hardware(adds = 2)) */
  for (int adds = 1; adds <= 2 && g->wgmma && o_k && lse_k; adds++) {
    double e_f[3] = {NAN, NAN, NAN};
    double *in_f[6] = {q, k, v, dO, o_k, lse_k};
    const char *d2[16];
    size_t n2 = 0;
    while (defs[n2] && n2 < 14)
      d2[n2] = defs[n2], n2++;
    d2[n2++] = adds == 2 ? "adds=2" : "adds=1";
    d2[n2] = NULL;
    fused(g, d2, scale, in_f, D, dq, dk, dv, what, e_f);
    printf("  %-44s one pass (prep, fused, dq_scale; adds = %d): dq %.1e dk "
           "%.1e dv %.1e\n", what, adds, e_f[0], e_f[1], e_f[2]);
    CHECKF(!isnan(e_f[0]) && !isnan(e_f[1]) && !isnan(e_f[2]),
           "%s one pass, adds = %d: did not run", what, adds);
  }
  fflush(stdout);
  free(q), free(k), free(v), free(dO), free(dq), free(dk), free(dv), free(D);
  free(lse), free(o), free(o_k), free(lse_k), free(D_k);
}

/* B in {1, 2}, M = K2 in {32, 64, 128}, N = K1 in {16, 32, 64}. */
static void sizes(const cfg *g, uint64_t seed) {
  static const int ms[] = {32, 64, 128}, ns[] = {16, 32, 64};
  uint64_t rng = seed;
  for (int b = 1; b <= 2; b++)
    for (size_t i = 0; i < 3; i++)
      for (size_t j = 0; j < 3; j++)
        bwd_case(g, b, ms[i], ns[j], &rng);
}

/* The kernels as shipped: default blocks (32 keys x 32 queries, 2 waves). */
static void plain(void) {
  cfg g = {false, NULL, {NULL}, false};
  sizes(&g, 2024);
}

static void causal(void) {
  cfg g = {true, NULL, {NULL}, false};
  sizes(&g, 2025);
}

/* Larger blocks where they divide: 64 x 64, four waves of 16. */
static void large_blocks(void) {
  static const int ms[] = {64, 128}, ns[] = {16, 32, 64};
  uint64_t rng = 77;
  for (int causal_ = 0; causal_ < 2; causal_++) {
    cfg g = {causal_, NULL, {"BLOCK_M=64", "BLOCK_K2=64", "WAVES=4"}, false};
    for (size_t i = 0; i < 2; i++)
      for (size_t j = 0; j < 3; j++)
        bwd_case(&g, 2, ms[i], ns[j], &rng);
  }
}

/* The warpgroup kernels (128 keys x 64 queries for dk/dv, 128 queries x 64
 * keys for dq; K1 = N a multiple of the 64-element swizzled rows). */
static void wgmma(void) {
  static const int ms[] = {128, 256}, ns[] = {64, 128};
  uint64_t rng = 90;
  for (int causal_ = 0; causal_ < 2; causal_++) {
    cfg g = {causal_, NULL, {NULL}, true};
    for (size_t i = 0; i < 2; i++)
      for (size_t j = 0; j < 2; j++)
        bwd_case(&g, 1 + (int)(i == j), ms[i], ns[j], &rng);
  }
}

/* Sequence lengths the tiles do not divide (ragged: docs/LANGUAGE-
 * additions.md): M = K2 in {1, 77, 100}, plain and causal, the shipped
 * kernels unchanged (mma.sync, N = K1 = 32; warpgroups, 64). */
static void ragged(void) {
  static const int ms[] = {1, 77, 100};
  uint64_t rng = 91;
  for (int wg = 0; wg < 2; wg++)
    for (int causal_ = 0; causal_ < 2; causal_++) {
      cfg g = {causal_, NULL, {NULL}, wg != 0};
      for (size_t i = 0; i < 3; i++)
        bwd_case(&g, 1, ms[i], wg ? 64 : 32, &rng);
      /* D = 128: the one pass's dq mma exchanges ds between the
       * warpgroups (hardware(exchange)), its guards on K2's edge moved
       * to the other warpgroup's keys */
      if (wg)
        bwd_case(&g, 1, 100, 128, &rng);
    }
}

/* The warpgroup kernels at head dims no 128-byte row divides: their
 * staged q, k, v and do rows are 64 bytes (D = 96) or 32 (80, 48), in the
 * wgmma's narrower swizzles (tests/unit/test_swizzle.c has the GEMMs). */
static void head_dims(void) {
  static const int ms[] = {128, 100}, ns[] = {48, 80, 96};
  uint64_t rng = 92;
  for (int causal_ = 0; causal_ < 2; causal_++) {
    cfg g = {causal_, NULL, {NULL}, true};
    for (size_t i = 0; i < 2; i++)
      for (size_t j = 0; j < 3; j++)
        bwd_case(&g, 1, ms[i], ns[j], &rng);
  }
}

/* Head dims whose tiles leave no room for the ring the compiler would
 * take: at D = 176 and 256 q's and do's two slots beside the resident k
 * and v are more shared memory than a workgroup has, and promote runs
 * again with one (compile.c, wv_lower_refit); the kernels run, and agree
 * with float64. */
static void wide_heads(void) {
  uint64_t rng = 93;
  cfg g = {false, NULL, {NULL}, true};
  bwd_case(&g, 1, 128, 176, &rng);
  g.causal = true;
  bwd_case(&g, 1, 100, 256, &rng);
}

/* Head dims not a multiple of the mma's K of 16 (40, 72): the reduction
 * dims held whole are padded (constraints.c); the whole pipeline (the
 * mma.sync forward, the warpgroup split kernels, the one pass with prep's
 * and dq_scale's 8-column vector tiles) against float64. */
static void odd_head_dims(void) {
  uint64_t rng = 95;
  cfg g = {false, NULL, {NULL}, true};
  bwd_case(&g, 1, 100, 40, &rng);
  g.causal = true;
  bwd_case(&g, 1, 128, 72, &rng);
}

/* A value head dim other than q's and k's (N != K1): prep zeroes dq_acc
 * over K1 (its default K1 = N gives the shipped calls their shapes), and
 * the one pass agrees with float64 (its inputs: the float64 forward's o
 * and lse, rounded as the kernels take them). Prep declared dq_acc over N
 * before: a user's dq_acc for the fused kernel did not fit it. */
static void value_dim(void) {
  static const int dims[][2] = {{64, 128}, {128, 64}, {48, 80}};
  uint64_t rng = 94;
  for (size_t t = 0; t < 3; t++) {
    const size_t m = 128, k1 = (size_t)dims[t][0], n = (size_t)dims[t][1];
    const double scale = 1.0 / sqrt((double)k1);
    char d[5][32], what[96];
    snprintf(d[0], 32, "B=1");
    snprintf(d[1], 32, "M=%zu", m);
    snprintf(d[2], 32, "K2=%zu", m);
    snprintf(d[3], 32, "K1=%zu", k1);
    snprintf(d[4], 32, "N=%zu", n);
    const char *defs[] = {d[0], d[1], d[2], d[3], d[4], NULL};
    snprintf(what, sizeof what, "wgmma M=K2=%zu K1=%zu N=%zu", m, k1, n);
    double *q = alloc(m * k1), *k = alloc(m * k1), *v = alloc(m * n),
           *dO = alloc(m * n), *o = alloc(m * n), *lse = alloc(m),
           *dq = alloc(m * k1), *dk = alloc(m * k1), *dv = alloc(m * n),
           *D = alloc(m);
    ref_rand_fill(&rng, m * k1, -1, 1, REF_F16, q);
    ref_rand_fill(&rng, m * k1, -1, 1, REF_F16, k);
    ref_rand_fill(&rng, m * n, -1, 1, REF_F16, v);
    ref_rand_fill(&rng, m * n, -1, 1, REF_F16, dO);
    ref_attn_fwd(1, m, m, k1, n, scale, 0, q, k, v, o, lse);
    ref_attn_bwd(1, m, m, k1, n, scale, 0, q, k, v, dO, dq, dk, dv, D);
    to_f32(m, lse); /* (o is rounded to f16 as prep takes it) */
    double *in[6] = {q, k, v, dO, o, lse};
    double err[3] = {NAN, NAN, NAN};
    cfg g = {false, NULL, {NULL}, true};
    fused(&g, defs, scale, in, D, dq, dk, dv, what, err);
    printf("  %-44s one pass: dq %.1e dk %.1e dv %.1e\n", what, err[0],
           err[1], err[2]);
    CHECKF(!isnan(err[0]) && !isnan(err[1]) && !isnan(err[2]),
           "%s: did not run", what);
    free(q), free(k), free(v), free(dO), free(o), free(lse), free(dq);
    free(dk), free(dv), free(D);
  }
}

/* The same source on the 64-lane AMD MFMA 16x16x16 layouts. */
static void mfma(void) {
  cfg g = {false, &kc_mfma, {NULL}, false};
  sizes(&g, 31);
}

int main(void) {
  RUN(plain);
  RUN(causal);
  RUN(large_blocks);
  RUN(mfma);
  RUN(wgmma);
  RUN(ragged);
  RUN(head_dims);
  RUN(wide_heads);
  RUN(value_dim);
  RUN(odd_head_dims);
  printf("  %d simulated runs, %.1f s in the simulator\n", cases_run,
         sim_seconds);
  CHECK_EXIT();
}
