/* Staged wgmma operands whose rows are 64 or 32 bytes (promote.c picks the
 * widest of the 128-, 64- and 32-byte swizzles that divides a tile's rows;
 * tir.h's tir_swz):
 *  - the GEMMs of tests/kernels/swizzle.wave in the simulator against
 *    float64 (relative L2 error 1e-5: f32 sums of exact products): K tiles
 *    of 32 and 96 elements (64-byte rows), 16 and 48 (32-byte rows), an
 *    N-contiguous rhs in N tiles of 96 and 32 (64) and 80 and 48 (32),
 *    fp8 K tiles of 64 and 32 bytes; at ragged sizes, with the tensor-copy
 *    ring, a producer warpgroup in 3 stages, and cp.async copies (whose
 *    shared addresses the threads swizzle themselves, T_SWZ);
 *  - what the GPU is told: every wgmma descriptor's high word (swizzle
 *    mode 2 with a stride of 512 bytes for 64-byte rows, mode 3 with 256
 *    for 32), the N-contiguous rhs's panel stride, each tensor map's
 *    swizzle and box (wavec_tensor_map_info: its last dim the swizzle's
 *    bytes), the cp.async path's XOR mask;
 *  - attention on warpgroups at head dims 32, 48, 80 and 96
 *    (examples/attention_fwd_wgmma.wave, causal and not, ragged lengths;
 *    96 and 80 also in five other schedules) against float64: o (f16)
 *    and lse; o and the GEMMs' c leave through
 *    tensor stores from buffers in the same narrower swizzles
 *    (lower_store.c);
 *  - the refusals (E0701), with their reasons: a 64-byte-row tile of 24
 *    rows (not a whole 1024-byte group) and an N tile of 8 columns (16
 *    bytes). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../ref/kcase.c"
#include "../ref/ref.c"
#include "check.h"

static const char *const FILE_ = "tests/kernels/swizzle.wave";

typedef struct gcase {
  const char *kernel;
  const char *knob; /* BLOCK_K=.. or BLOCK_N=.. */
  int W[2];         /* the swizzle of a, of b */
} gcase;

static const gcase GEMMS[] = {
    {"gemm_nt", "BLOCK_K=32", {64, 64}},
    {"gemm_nt", "BLOCK_K=96", {64, 64}},
    {"gemm_nt", "BLOCK_K=16", {32, 32}},
    {"gemm_nt", "BLOCK_K=48", {32, 32}},
    {"gemm_nn", "BLOCK_N=96", {128, 64}},
    {"gemm_nn", "BLOCK_N=32", {128, 64}},
    {"gemm_nn", "BLOCK_N=80", {128, 32}},
    {"gemm_nn", "BLOCK_N=48", {128, 32}},
    {"gemm_fp8_nt", "BLOCK_K=64", {64, 64}},
    {"gemm_fp8_nt", "BLOCK_K=32", {32, 32}},
};

/* A descriptor's high word as ptx_mma.c writes it for W-byte rows. */
static unsigned long long desc_hi(int W) {
  unsigned long long mode = W == 128 ? 1 : W == 64 ? 2 : 3;
  return mode << 30 | (unsigned long long)(8 * W) >> 4;
}

/* Checks the PTX and the tensor maps of compiled case g. */
static void check_ptx(kcase *c, const gcase *g, bool cpasync) {
  const char *ptx = NULL;
  size_t len = 0;
  bool ok = wavec_emit_ptx(c->k, "sm_90a", &ptx, &len) == WAVEC_OK && ptx;
  CHECKF(ok, "%s %s: %s", g->kernel, g->knob, wavec_errmsg(c->ctx));
  if (!ok)
    return;
  for (int r = 0; r < 2; r++) {
    char hi[32];
    snprintf(hi, sizeof hi, "0x%llx}", desc_hi(g->W[r]));
    CHECKF(strstr(ptx, hi), "%s %s: no descriptor with high word %s", g->kernel,
           g->knob, hi);
  }
  /* no 128-byte descriptor where neither operand has 128-byte rows */
  if (g->W[0] != 128 && g->W[1] != 128)
    CHECKF(!strstr(ptx, "0x40000040}"), "%s %s: a 128-byte descriptor",
           g->kernel, g->knob);
  /* gemm_nn: b's panels are 64 rows (the K tile) of W bytes apart */
  if (!strcmp(g->kernel, "gemm_nn") && strstr(g->knob, "=96")) {
    char lbo[32];
    snprintf(lbo, sizeof lbo, "0x%x;", (64 * g->W[1] >> 4) << 16);
    CHECKF(strstr(ptx, lbo), "%s %s: no leading byte offset %s", g->kernel,
           g->knob, lbo);
  }
  if (cpasync) {
    /* the threads swizzle their cp.async addresses with W's mask */
    char mask[32];
    snprintf(mask, sizeof mask, ", 0x%x;", (g->W[1] / 16 - 1) << 4);
    CHECKF(strstr(ptx, mask), "%s %s copies=1: no swizzle mask%s", g->kernel,
           g->knob, mask);
    CHECK(wavec_tensor_map_count(c->k) == 0);
    return;
  }
  /* the operands' maps (the epilogue's tensor stores of c have one too) */
  size_t n = wavec_tensor_map_count(c->k), ops = 0;
  for (size_t i = 0; i < n; i++) {
    wavec_tensor_map_info ti;
    CHECK(wavec_tensor_map_info_get(c->k, i, &ti) == 0);
    if (ti.arg > 1)
      continue;
    ops++;
    int es = strstr(g->kernel, "fp8") ? 1 : 2;
    int want = g->W[ti.arg == 0 ? 0 : 1];
    CHECKF(ti.swizzle == want && (int)ti.box[ti.ndims - 1] * es == want,
           "%s %s: tensor map %zu: swizzle %d, box's last dim %u (want %d "
           "bytes)",
           g->kernel, g->knob, i, ti.swizzle, ti.box[ti.ndims - 1], want);
  }
  CHECKF(ops == 2, "%s %s: %zu tensor maps of the operands", g->kernel, g->knob,
         ops);
}

static void gemms(void) {
  static const int sz[][3] = {{128, 128, 192}, {200, 136, 208}};
  static const char *const hw[][2] = {
      {"stages=2", NULL}, {"stages=3", "specialize=1"}, {"copies=1", NULL}};
  uint64_t rng = 11;
  for (size_t i = 0; i < sizeof GEMMS / sizeof *GEMMS; i++)
    for (size_t s = 0; s < 2; s++)
      for (size_t h = 0; h < 3; h++) {
        const gcase *g = &GEMMS[i];
        int M = sz[s][0], N = sz[s][1], K = sz[s][2];
        const char *knobs[] = {g->knob, hw[h][0], hw[h][1], NULL};
        char what[256];
        kcase c;
        if (!kc_gemm_open(&c, FILE_, g->kernel, M, N, K, knobs, what)) {
          CHECKF(0, "%s: %s", what, c.err);
          kc_close(&c);
          continue;
        }
        double e = kc_gemm_err_as(&c, M, N, K, false,
                                  !strcmp(g->kernel, "gemm_nn"), &rng);
        CHECKF(e >= 0, "%s: %s", what, c.err);
        CHECKF(e >= 0 && e < 1e-5, "%s: rel err %g", what, e);
        printf("  %-48s rel err %.2g\n", what, e);
        if (s == 0 && h != 1)
          check_ptx(&c, g, h == 2);
        /* c (f32) leaves by tensor stores in panels its rows divide into:
         * 80 and 48 columns of 4 bytes, 64-byte panels */
        if (h == 0 && !strcmp(g->kernel, "gemm_nn") &&
            (strstr(g->knob, "=80") || strstr(g->knob, "=48")))
          CHECKF(kc_has_remark(c.k, "written with the 64-byte swizzle"),
                 "%s: c not stored in 64-byte panels", what);
        kc_close(&c);
      }
}

/* Attention forward on warpgroups at head dims no 128-byte row divides:
 * D = 32, 48, 80, 96 in the compiler's schedule, then D = 96 and 80 at
 * M = 256 in the others a user may ask for (a producer warpgroup with
 * overlap and ping-pong, persistent tiles, a cluster of 2 multicasting k
 * and v, the cp.async ring, 4 stages). */
static void attention(void) {
  static const int ds[] = {32, 48, 80, 96, 96, 80}, ms[] = {128, 100};
  static const char *const sched[][3] = {
      {NULL},
      {"specialize=1", "overlap=1", "pingpong=1"},
      {"specialize=1", "persistent=1", "sms=2"},
      {"cluster=2", "stages=3"},
      {"copies=1"},
      {"stages=4"}};
  uint64_t rng = 12;
  /* cases 0-3: every D in the default schedule at both lengths; 4-5: one
   * D at M = 256 in each other schedule */
  for (size_t i = 0; i < 6; i++)
    for (size_t h = i < 4 ? 0 : 1; h < (i < 4 ? 1u : 6u); h++)
      for (size_t j = 0; j < (i < 4 ? 2u : 1u); j++)
        for (int causal = 0; causal < 2; causal++) {
          int D = ds[i], M = i < 4 ? ms[j] : 256;
          if (causal && sched[h][0] && !strcmp(sched[h][0], "cluster=2"))
            continue; /* a causal walk depends on the query tile: no cluster */
          char d[5][32], what[160];
          snprintf(d[0], 32, "B=2");
          snprintf(d[1], 32, "M=%d", M);
          snprintf(d[2], 32, "K2=%d", M);
          snprintf(d[3], 32, "K1=%d", D);
          snprintf(d[4], 32, "N=%d", D);
          const char *defs[] = {d[0],        d[1],        d[2],
                                d[3],        d[4],        sched[h][0],
                                sched[h][1], sched[h][2], NULL};
          int w =
              snprintf(what, sizeof what, "attention_fwd_wgmma%s D=%d M=K2=%d",
                       causal ? "_causal" : "", D, M);
          for (int x = 0; x < 3 && sched[h][x]; x++)
            w +=
                snprintf(what + w, sizeof what - (size_t)w, " %s", sched[h][x]);
          kcase c;
          if (!kc_open(&c, "examples/attention_fwd_wgmma.wave",
                       causal ? "attention_fwd_wgmma_causal"
                              : "attention_fwd_wgmma",
                       NULL, defs)) {
            CHECKF(0, "%s: %s", what, c.err);
            kc_close(&c);
            continue;
          }
          size_t n = 2 * (size_t)M * D;
          /* o (f16) leaves by tensor stores from panels of its rows' width
           * (where the rings are tensor copies: not with copies = 1) */
          char panels[64];
          snprintf(panels, sizeof panels, "column panels of %d bytes",
                   D * 2 % 128 == 0  ? 128
                   : D * 2 % 64 == 0 ? 64
                                     : 32);
          bool tma = !sched[h][0] || strcmp(sched[h][0], "copies=1");
          CHECKF(!tma || kc_has_remark(c.k, panels), "%s: no remark '%s'", what,
                 panels);
          double *q = kc_input(&c, "q", &rng), *k = kc_input(&c, "k", &rng),
                 *v = kc_input(&c, "v", &rng);
          double *o = malloc(n * sizeof *o), *lse = malloc(2 * M * sizeof *lse);
          ref_attn_fwd(2, (size_t)M, (size_t)M, (size_t)D, (size_t)D, 0.125,
                       causal ? REF_CAUSAL : 0, q, k, v, o, lse);
          bool ran = kc_simulate(&c);
          CHECKF(ran, "%s: %s", what, c.err);
          double eo = ran ? kc_rel_err(&c, "o", o) : -1,
                 el = ran ? kc_rel_err(&c, "lse", lse) : -1;
          /* p is cast to f16 for p · v, o rounded to f16 (2e-3: the bound
           * and reasoning of test_attention_bwd.c) */
          CHECKF(ran && eo < 2e-3 && el < 1e-5, "%s: rel err o %g lse %g", what,
                 eo, el);
          printf("  %-44s rel err o %.2g lse %.2g\n", what, eo, el);
          free(q), free(k), free(v), free(o), free(lse);
          kc_close(&c);
        }
}

/* Tiles no swizzle can hold are refused at the mma, with the reason. */
static void refusals(void) {
  static const struct {
    const char *kernel, *knob[3], *want;
  } bad[] = {
      {"gemm_nt",
       {"BLOCK_K=32", "BLOCK_N=24", NULL},
       "has 24 rows along 'N', not a multiple of 16 (64-byte swizzled rows "
       "in 1024-byte groups)"},
      {"gemm_nn",
       {"BLOCK_N=8", NULL, NULL},
       "is 8 elements, not a multiple of 16 (the 32-byte rows of the "
       "narrowest swizzled wgmma tile)"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    char what[256];
    kcase c;
    bool ok = kc_gemm_open(&c, FILE_, bad[i].kernel, 128, 128, 128, bad[i].knob,
                           what);
    CHECKF(!ok && strstr(c.err, "error[E0701]"), "%s: compiled", what);
    CHECKF(!ok && strstr(c.err, bad[i].want), "%s: %s", what, c.err);
    printf("  %s: %s\n", what, c.err);
    kc_close(&c);
  }
}

int main(void) {
  RUN(gemms);
  RUN(attention);
  RUN(refusals);
  CHECK_EXIT();
}
