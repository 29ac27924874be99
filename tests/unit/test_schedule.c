/* The schedule (src/tir/schedule.c): warp specialization and persistent
 * tiles, in the simulator.
 *  - GEMM (f16 and bf16 outputs from bench/gemm.wave, f32 from
 *    examples/gemm_wgmma.wave) for every combination of the knobs, at
 *    shapes that divide, ragged ones (200x72x96) and with more tiles than
 *    multiprocessors (sms = 3, so that each workgroup loops over tiles),
 *    against float64: f32 results within 1e-5, f16 within 2e-3, bf16
 *    within 1e-2 (relative L2 error; the outputs round once);
 *  - the attention forward (plain and causal) specialized: its consumers
 *    synchronise on a named barrier;
 *  - the shape of a specialized program: the producer's region issues every
 *    tensor copy and no wgmma, the consumers' every wgmma and no copy,
 *    setmaxnreg as the remark says, the block one warpgroup larger;
 *  - every planted ring bug is still caught in the specialized form, at
 *    the line of the read the ring stages (an early read at the wgmma),
 *    and a producer that refills without waiting for the release is caught
 *    as refilling a stage a consumer still reads; consumers that ask the
 *    register pool for more than it holds never get it (deadlock);
 *  - specialize where it cannot apply is E0408 at the entry;
 *  - the compiler's choice where neither knob is given (compiler_choice);
 *  - longest walks first: the causal forward's query tiles in reverse,
 *    plain and persistent, the same bits as in order (longest_first). */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "../ref/kcase.c"
#include "../ref/ref.c"
#include "check.h"
#include "passes/dist.h"
#include "tir/tir.h"
#include "wavec.h"

/* defs: "SYM=V" (a hardware entry when SYM names one), NULL-ended. */
static wavec_ctx *build(const char *file, const char *kernel,
                        const char *const *defs, const char *hook,
                        wavec_kernel **out, wavec_status *st) {
  wavec_ctx *ctx = wavec_ctx_new(NULL, NULL);
  for (size_t i = 0; defs && defs[i]; i++) {
    char name[64];
    const char *eq = strchr(defs[i], '=');
    memcpy(name, defs[i], (size_t)(eq - defs[i]));
    name[eq - defs[i]] = 0;
    bool hw = false; /* a refused override leaves its error in ctx */
    for (size_t j = 0; wavec_hardware_key(j); j++)
      hw |= strcmp(name, wavec_hardware_key(j)) == 0;
    if (hw)
      CHECK(wavec_hardware_override(ctx, name, eq + 1) == WAVEC_OK);
    else
      wavec_define_int(ctx, name, atoll(eq + 1));
  }
  if (hook)
    CHECK(wavec_test_hook(ctx, hook) == WAVEC_OK);
  size_t len;
  char *src = slurp(file, &len);
  *st = src ? wavec_parse(ctx, file, src, len) : WAVEC_ERR_INVALID;
  free(src);
  *out = *st == WAVEC_OK ? wavec_kernel_find(ctx, kernel) : NULL;
  if (*out)
    *st = wavec_compile(*out, NULL);
  return ctx;
}

static const tir_prog *prog(wavec_kernel *k) { return k->k.tir; }

static int cases_run;

/* One GEMM c[M, N] = a[M, K] b[N, K]^T against float64. */
static void gemm_case(const char *file, const char *kernel, int M, int N,
                      int K, const char *const *knobs, double tol,
                      uint64_t *rng) {
  char what[256];
  kcase c;
  bool ok = kc_gemm_open(&c, file, kernel, M, N, K, knobs, what);
  CHECKF(ok, "%s: %s", what, c.err);
  if (ok) {
    double e = kc_gemm_err(&c, M, N, K, rng);
    CHECKF(e >= 0, "%s: %s", what, c.err);
    CHECKF(e < tol, "%s: rel err %.3g >= %.3g", what, e, tol);
    cases_run += e >= 0;
  }
  kc_close(&c);
}

/* The knob combinations (persistent tiles with sms = 3: a workgroup loops
 * over several tiles at every shape below but the smallest). */
static const char *const combos[][5] = {
    {"specialize=1", NULL},
    {"specialize=1", "stages=4", NULL},
    {"specialize=1", "stages=2", NULL},
    {"persistent=1", "sms=3", NULL},
    {"persistent=1", "sms=3", "stages=4", NULL},
    {"persistent=1", "sms=2", "group_m=2", "copies=1", NULL},
    {"persistent=1", "sms=3", "specialize=1", NULL},
    {"persistent=1", "sms=4", "specialize=1", "stages=2", NULL},
    {"persistent=1", "specialize=1", NULL}, /* 132 sms: a tile each */
};
enum { NCOMBOS = sizeof combos / sizeof *combos };

static void gemm_specialized(void) {
  uint64_t rng = 51;
  static const int shapes[][3] = {
      {128, 128, 64}, {200, 72, 96}, {384, 640, 256}, {256, 256, 512}};
  for (size_t k = 0; k < NCOMBOS; k++)
    for (size_t s = 0; s < 4; s++)
      gemm_case("examples/gemm_wgmma.wave", "gemm_wgmma", shapes[s][0],
                shapes[s][1], shapes[s][2], combos[k], 1e-5, &rng);
  /* the benchmarks' kernels: f16 and bf16 results, 128x256 and 128x128
   * tiles of two warpgroups, one warpgroup of 64 rows */
  static const char *const bench[][6] = {
      {"specialize=1", NULL},
      {"specialize=1", "BLOCK_N=128", "stages=4", NULL},
      {"specialize=1", "BLOCK_M=64", "WAVES_M=1", "BLOCK_N=128", NULL},
      {"persistent=1", "sms=3", "BLOCK_N=128", NULL},
      {"persistent=1", "sms=3", "specialize=1", "BLOCK_N=128", "stages=4",
       NULL},
  };
  for (size_t k = 0; k < 5; k++) {
    gemm_case("bench/gemm.wave", "gemm_wgmma_f16", 384, 640, 256, bench[k],
              2e-3, &rng);
    gemm_case("bench/gemm.wave", "gemm_wgmma_bf16", 200, 72, 96, bench[k],
              1e-2, &rng);
  }
}

/* One persistent kernel of run-time sizes, compiled once, run at several:
 * the grid is min(tiles, sms) workgroups whatever the sizes. */
static void persistent_dynamic(void) {
  static const int sizes[][3] = {{200, 72, 128}, {384, 640, 256},
                                 {129, 250, 64}, {64, 64, 64}};
  for (int spec = 0; spec < 2; spec++) {
    const char *defs[] = {"persistent=1", "sms=3",
                          spec ? "specialize=1" : NULL, NULL};
    wavec_kernel *k;
    wavec_status st;
    wavec_ctx *ctx = build("tests/kernels/dynamic.wave", "gemm_dyn_wgmma",
                           defs, NULL, &k, &st);
    CHECKF(st == WAVEC_OK, "%s", wavec_errmsg(ctx));
    uint64_t rng = 53;
    for (size_t s = 0; st == WAVEC_OK && s < 4; s++) {
      int M = sizes[s][0], N = sizes[s][1], K = sizes[s][2];
      const int64_t shapes[3][2] = {{M, K}, {N, K}, {M, N}};
      void *bufs[3];
      for (size_t i = 0; i < 3; i++) {
        wavec_arg_info a;
        CHECK(wavec_arg_shape(k, i, 2, shapes[i]) == WAVEC_OK);
        wavec_arg_info_get(k, i, &a);
        bufs[i] = malloc(a.bytes);
        memset(bufs[i], 0xff, a.bytes);
      }
      double *a = malloc(sizeof *a * (size_t)M * K),
             *b = malloc(sizeof *b * (size_t)N * K),
             *ref = malloc(sizeof *ref * (size_t)M * N);
      ref_rand_fill(&rng, (size_t)M * K, -1, 1, REF_F16, a);
      ref_pack((size_t)M * K, a, REF_F16, bufs[0]);
      ref_rand_fill(&rng, (size_t)N * K, -1, 1, REF_F16, b);
      ref_pack((size_t)N * K, b, REF_F16, bufs[1]);
      ref_gemm((size_t)M, (size_t)N, (size_t)K, a, b, ref);
      uint32_t grid[3], block[3];
      CHECK(wavec_launch_dims(k, grid, block, NULL) == WAVEC_OK);
      int tiles = ((M + 127) / 128) * ((N + 127) / 128);
      CHECKF(grid[0] == (uint32_t)(tiles < 3 ? tiles : 3) && grid[1] == 1 &&
                 grid[2] == 1 && block[0] == (spec ? 384u : 256u),
             "%dx%d: grid %u %u %u block %u", M, N, grid[0], grid[1],
             grid[2], block[0]);
      bool ok = wavec_simulate(k, bufs) == WAVEC_OK;
      CHECKF(ok, "%dx%dx%d spec %d: %s", M, N, K, spec, wavec_errmsg(ctx));
      if (ok) {
        double e = ref_rel_err_f32((size_t)M * N, bufs[2], ref);
        CHECKF(e < 1e-5, "%dx%dx%d spec %d: rel err %g", M, N, K, spec, e);
        cases_run++;
      }
      free(a), free(b), free(ref);
      for (size_t i = 0; i < 3; i++)
        free(bufs[i]);
    }
    wavec_ctx_free(ctx);
  }
}

/* The attention forward, plain and causal, at a ragged length: the
 * consumers stage q themselves behind their named barrier; persistent
 * tiles walk the causal mask's varying walks (the ring's position carried
 * across tiles of different lengths). */
static void attention_specialized(void) {
  uint64_t rng = 52;
  for (int causal = 0; causal < 4; causal++) {
    const char *kernel =
        causal % 2 ? "attention_fwd_wgmma_causal" : "attention_fwd_wgmma";
    const char *defs[] = {"B=1", "M=200", "K2=200", "N=64", "K1=64",
                          "specialize=1", causal >= 2 ? "persistent=1" : NULL,
                          "sms=2", NULL};
    kcase c;
    bool ok = kc_open(&c, "examples/attention_fwd_wgmma.wave", kernel, NULL,
                      defs);
    CHECKF(ok, "%s: %s", kernel, c.err);
    if (ok) {
      double *q = kc_input(&c, "q", &rng), *k = kc_input(&c, "k", &rng),
             *v = kc_input(&c, "v", &rng);
      double *o = malloc(200 * 64 * sizeof *o), *lse = malloc(200 * sizeof *lse);
      ref_attn_fwd(1, 200, 200, 64, 64, 0.125, causal % 2 ? REF_CAUSAL : 0, q,
                   k, v, o, lse);
      bool ran = kc_simulate(&c);
      CHECKF(ran, "%s: %s", kernel, c.err);
      if (ran) {
        double eo = kc_rel_err(&c, "o", o), el = kc_rel_err(&c, "lse", lse);
        CHECKF(eo < 1e-2 && el < 1e-3, "%s: o %.3g lse %.3g", kernel, eo, el);
        cases_run++;
      }
      const tir_prog *p = prog(c.k);
      int named = 0;
      for (uint32_t i = 0; i < p->code.n; i++)
        named += p->code.v[i].op == T_BAR && p->code.v[i].imm == 1 &&
                 p->code.v[i].imm2 == 256;
      CHECKF(named > 0, "%s: no named barrier of the consumers", kernel);
      free(q), free(k), free(v), free(o), free(lse);
    }
    kc_close(&c);
  }
}

/* What each region of a specialized GEMM holds. */
static void specialized_shape(void) {
  const char *defs[] = {"M=256", "N=256", "K=512", "specialize=1", NULL};
  wavec_kernel *pk;
  wavec_status st;
  wavec_ctx *ctx = build("examples/gemm_wgmma.wave", "gemm_wgmma", defs,
                         NULL, &pk, &st);
  CHECKF(st == WAVEC_OK, "%s", wavec_errmsg(ctx));
  if (st == WAVEC_OK) {
    const tir_prog *p = prog(pk);
    CHECK(p->block[0] == 384 && p->block[1] == 1 && p->maxnreg == 168);
    /* regions in order: the producer's, then the consumers' */
    int region = 0, depth = 0, ifs = 0, exits = 0;
    int tma[3] = {0}, wgmma[3] = {0}, dec = 0, inc = 0, bars0 = 0;
    for (uint32_t i = 0; i < p->code.n; i++) {
      const tir_instr *in = &p->code.v[i];
      if (in->op == T_IF && depth++ == 0)
        region = ++ifs;
      if (in->op == T_ENDIF && --depth == 0)
        region = 0;
      exits += in->op == T_EXIT && region == 1;
      tma[region] += in->op == T_TMA;
      wgmma[region] += in->op == T_WGMMA;
      dec += in->op == T_REGDEC && region == 1 && in->imm == 24;
      inc += in->op == T_REGINC && region == 2 && in->imm == 240;
      bars0 += in->op == T_BAR && in->imm == 0 && region == 0;
    }
    CHECKF(ifs == 2 && exits == 1, "%d regions, %d exits", ifs, exits);
    CHECKF(tma[1] > 0 && tma[0] == 0 && tma[2] == 0, "copies %d %d %d",
           tma[0], tma[1], tma[2]);
    CHECKF(wgmma[2] > 0 && wgmma[0] == 0 && wgmma[1] == 0, "wgmmas %d %d %d",
           wgmma[0], wgmma[1], wgmma[2]);
    CHECKF(dec == 1 && inc == 1 && bars0 == 1, "dec %d inc %d bars %d", dec,
           inc, bars0);
    CHECK(kc_has_remark(pk, "warp specialization: warpgroup 2 (threads 256 to "
                         "383) only issues the tensor copies") &&
          kc_has_remark(pk, "the producer gives back down to 24, the consumers "
                         "take 240 (setmaxnreg)"));
  }
  wavec_ctx_free(ctx);
}

/* Each planted ring bug, in the specialized form, at depths 2 and 4. */
static void specialized_bugs_are_caught(void) {
  static const struct {
    const char *hook, *code, *text, *line;
  } bugs[] = {
      {"tma-early-read", "error[E0603]",
       "while the tensor copy to it is in flight", "gemm_wgmma.wave:19:15"},
      {"tma-early-release", "error[E0603]", "tensor copy refills shared byte",
       "gemm_wgmma.wave:19:19"},
      {"tma-deadlock", "error[E0609]", "this wait can never complete",
       "gemm_wgmma.wave:19:19"},
      {"tma-tx-short", "error[E0610]", "transaction bytes",
       "gemm_wgmma.wave:19:19"},
      {"tma-no-empty-wait", "error[E0603]", "a stage a consumer still reads",
       "gemm_wgmma.wave:19:19"},
      {"spec-regs-greedy", "error[E0609]",
       "this setmaxnreg.inc can never get its registers",
       "gemm_wgmma.wave:6:8"},
  };
  static const char *const depths[] = {"stages=2", "stages=4"};
  for (size_t b = 0; b < sizeof bugs / sizeof *bugs; b++)
    for (int d = 0; d < 2; d++) {
      const char *defs[] = {"M=256", "N=256", "K=512", "specialize=1",
                            depths[d], NULL};
      wavec_kernel *pk;
      wavec_status st;
      wavec_ctx *ctx = build("examples/gemm_wgmma.wave", "gemm_wgmma", defs,
                             bugs[b].hook, &pk, &st);
      CHECKF(st == WAVEC_OK, "%s: %s", bugs[b].hook, wavec_errmsg(ctx));
      if (st == WAVEC_OK) {
        size_t na = wavec_arg_count(pk);
        void **bufs = calloc(na, sizeof *bufs);
        for (size_t i = 0; i < na; i++) {
          wavec_arg_info ai;
          wavec_arg_info_get(pk, i, &ai);
          bufs[i] = calloc(ai.bytes, 1);
        }
        wavec_status sim = wavec_simulate(pk, bufs);
        const char *msg = wavec_errmsg(ctx);
        CHECKF(sim == WAVEC_ERR_RUNTIME && strstr(msg, bugs[b].code) &&
                   strstr(msg, bugs[b].text) && strstr(msg, bugs[b].line),
               "%s %s: got: %s", bugs[b].hook, depths[d], msg);
        for (size_t i = 0; i < na; i++)
          free(bufs[i]);
        free(bufs);
      }
      wavec_ctx_free(ctx);
    }
}

/* Where warp specialization cannot apply: E0408 at the entry (or, given
 * on the command line, at the loop). */
static void specialize_refused(void) {
  static const struct {
    const char *file, *kernel;
    const char *defs[6];
    const char *text;
  } no[] = {
      {"examples/gemm_wgmma.wave", "gemm_wgmma",
       {"M=128", "N=128", "K=128", "specialize=1", "copies=1", NULL},
       "(not tensor copies: hardware(copies = 1))"},
      {"examples/gemm_wgmma.wave", "gemm_wgmma",
       {"M=128", "N=128", "K=128", "specialize=1", "stages=1", NULL},
       "it has no ring (stages = 1)"},
      {"examples/gemm.wave", "gemm",
       {"M=128", "N=128", "K=128", "specialize=1", NULL},
       "not a warpgroup one"},
  };
  for (size_t i = 0; i < sizeof no / sizeof *no; i++) {
    wavec_kernel *pk;
    wavec_status st;
    wavec_ctx *ctx = build(no[i].file, no[i].kernel, no[i].defs, NULL, &pk,
                           &st);
    const char *msg = wavec_errmsg(ctx);
    CHECKF(st == WAVEC_ERR_CONSTRAINT && strstr(msg, "error[E0408]") &&
               strstr(msg, "--hardware specialize=1") &&
               strstr(msg, no[i].text) && strstr(msg, ".wave:"),
           "%s: got: %s", no[i].kernel, msg);
    wavec_ctx_free(ctx);
  }
}

/* The compiler's choice where neither knob is given: both where the rings
 * leave room for one workgroup a multiprocessor (persistent tiles only
 * where neighbouring tiles share inputs), neither elsewhere, each said in
 * a remark; a knob given as 0 keeps its schedule off. */
static void compiler_choice(void) {
  static const struct {
    const char *file, *kernel;
    const char *defs[10];
    int spec, pers; /* 1: chosen, 0: declined (a remark says why), -1: no
                       remark (not a candidate, or turned off) */
    const char *why;
  } rows[] = {
      {"bench/gemm.wave", "gemm_wgmma_bf16",
       {"M=384", "N=640", "K=256", "stages=4", NULL}, 1, 1, NULL},
      {"bench/gemm.wave", "gemm_wgmma_f16",
       {"M=384", "N=640", "K=256", "stages=4", "specialize=0", NULL}, -1, 1,
       NULL},
      {"bench/gemm.wave", "gemm_wgmma_f16",
       {"M=384", "N=640", "K=256", "stages=4", "persistent=0", NULL}, 1, -1,
       NULL},
      {"bench/gemm.wave", "gemm_wgmma_bf16",
       {"M=384", "N=640", "K=256", "stages=4", "workgroups_per_sm=1", NULL},
       0, 0, "not chosen: workgroups_per_sm is set"},
      {"bench/gemm.wave", "gemm_wgmma_bf16",
       {"M=384", "N=640", "K=256", "stages=2", "BLOCK_N=128", NULL}, 0, 0,
       "not chosen: two workgroups a multiprocessor fit its rings"},
      {"examples/attention_fwd_wgmma.wave", "attention_fwd_wgmma",
       {"B=2", "M=256", "K2=256", "N=128", "K1=128", "BLOCK_M=128",
        "BLOCK_K2=64", "stages=3", NULL},
       1, 0, "persistent tiles: not chosen: every input varies along grid "
             "axis 2 (B)"},
      {"examples/gemm.wave", "gemm", {"M=128", "N=128", "K=128", NULL}, -1, -1,
       NULL},
  };
  for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
    wavec_kernel *pk;
    wavec_status st;
    wavec_ctx *ctx = build(rows[i].file, rows[i].kernel, rows[i].defs, NULL,
                           &pk, &st);
    CHECKF(st == WAVEC_OK, "row %zu: %s", i, wavec_errmsg(ctx));
    if (st == WAVEC_OK) {
      const tir_prog *p = prog(pk);
      bool spec = kc_has_remark(pk, "warp specialization: warpgroup"),
           spec_no = kc_has_remark(pk, "warp specialization: not chosen"),
           pers = kc_has_remark(pk, "persistent tiles: ") &&
                  !kc_has_remark(pk, "persistent tiles: not chosen"),
           pers_no = kc_has_remark(pk, "persistent tiles: not chosen");
      CHECKF(spec == (rows[i].spec == 1) && spec_no == (rows[i].spec == 0),
             "row %zu %s: specialize %d, declined %d", i, rows[i].kernel,
             spec, spec_no);
      CHECKF(pers == (rows[i].pers == 1) && pers_no == (rows[i].pers == 0),
             "row %zu %s: persistent %d, declined %d", i, rows[i].kernel,
             pers, pers_no);
      CHECKF(!rows[i].why || kc_has_remark(pk, rows[i].why), "row %zu: no '%s'",
             i, rows[i].why);
      CHECKF(spec == kc_has_remark(pk, "the compiler's choice: its rings leave "
                                    "room for one workgroup"),
             "row %zu: the choice is not said", i);
      /* the block has the producer's warpgroup exactly when chosen */
      CHECKF((p->block[0] % 256 == 128) == spec, "row %zu: block %lld", i,
             (long long)p->block[0]);
    }
    wavec_ctx_free(ctx);
  }
  /* what the compiler chose computes what the plain schedule does, ragged
   * and with tiles looping (sms = 3 is not a request for persistent) */
  uint64_t rng = 53;
  static const char *const knobs[][3] = {{"stages=4", "sms=3", NULL},
                                         {"stages=4", NULL, NULL}};
  for (size_t k = 0; k < 2; k++) {
    gemm_case("bench/gemm.wave", "gemm_wgmma_bf16", 200, 520, 96, knobs[k],
              1e-2, &rng);
    gemm_case("bench/gemm.wave", "gemm_wgmma_f16", 384, 640, 256, knobs[k],
              2e-3, &rng);
  }
}

/* The ring's depth where stages is not given: a warpgroup GEMM that has a
 * multiprocessor to itself (its accumulators, or workgroups_per_sm = 1)
 * takes 4 slots and leaves 32 KiB for its store buffer; one that two
 * workgroups a multiprocessor fit keeps 3; a loop with work between its
 * mmas (the backward's softmax) keeps the two-workgroup rule; a given
 * stages wins. The deeper rings compute what the shallow ones do. */
static void auto_stages(void) {
  static const struct {
    const char *file, *kernel;
    const char *defs[10];
    const char *ring, *store;
  } rows[] = {
      {"bench/gemm.wave", "gemm_wgmma_bf16", {"M=384", "N=640", "K=256", NULL},
       "in 4 stages of 49152 bytes", "dedicated 32768-byte"},
      {"bench/gemm.wave", "gemm_wgmma_bf16_tn",
       {"M=384", "N=640", "K=256", NULL}, "in 4 stages of 49152 bytes",
       "dedicated 32768-byte"},
      {"bench/gemm.wave", "gemm_wgmma_bf16",
       {"M=384", "N=640", "K=256", "workgroups_per_sm=1", NULL},
       "in 4 stages of 49152 bytes", "dedicated 32768-byte"},
      {"bench/gemm.wave", "gemm_wgmma_bf16",
       {"M=384", "N=640", "K=256", "stages=2", NULL},
       "in 2 stages of 49152 bytes", "dedicated 65536-byte"},
      {"bench/gemm.wave", "gemm_wgmma_bf16",
       {"M=384", "N=640", "K=256", "BLOCK_N=128", NULL},
       "in 3 stages of 32768 bytes", NULL},
      {"examples/attention_bwd_wgmma.wave", "attention_bwd_fused_wgmma",
       {"B=2", "M=256", "K2=256", "K1=128", "N=128", "SCALE=0.125", NULL},
       "in 2 stages of 32768 bytes", NULL},
  };
  for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
    wavec_kernel *pk;
    wavec_status st;
    wavec_ctx *ctx = build(rows[i].file, rows[i].kernel, rows[i].defs, NULL,
                           &pk, &st);
    CHECKF(st == WAVEC_OK, "row %zu: %s", i, wavec_errmsg(ctx));
    if (st == WAVEC_OK) {
      CHECKF(kc_has_remark(pk, rows[i].ring), "row %zu: no '%s'", i,
             rows[i].ring);
      CHECKF(!rows[i].store || kc_has_remark(pk, rows[i].store),
             "row %zu: no '%s'", i, rows[i].store);
      /* the estimate no longer counts the accumulator twice */
      CHECKF(!kc_has_remark(pk, "expect spills"), "row %zu: spills said", i);
    }
    wavec_ctx_free(ctx);
  }
  uint64_t rng = 59;
  static const char *const none[] = {NULL};
  gemm_case("bench/gemm.wave", "gemm_wgmma_bf16", 200, 520, 96, none, 1e-2,
            &rng);
  gemm_case("bench/gemm.wave", "gemm_wgmma_f16", 384, 640, 320, none, 2e-3,
            &rng);
  gemm_case("bench/gemm.wave", "gemm_wgmma_f16", 130, 300, 101, none, 2e-3,
            &rng);
}

/* Longest walks first: where a causal walk grows with the query tile,
 * block i runs tile n - 1 - i (the id read as tiles - 1 - ctaid, or after
 * the persistent raster); the results are those of block i on tile i,
 * bit for bit, against float64; a kernel with no growing walk gets no
 * remark; longest_first = 1 there is E0408. */
static bool reversed_ctaid(const tir_prog *p) {
  for (uint32_t i = 0; i < p->code.n; i++) {
    const tir_instr *in = &p->code.v[i];
    if (in->op != T_SREG || in->imm != TIR_SREG_CTAID_X)
      continue;
    for (uint32_t j = i + 1; j < p->code.n && j < i + 8; j++)
      if (p->code.v[j].op == T_SUB && p->code.v[j].b == in->dst)
        return true;
  }
  return false;
}

static void longest_first(void) {
  static const struct {
    const char *file, *kernel, *defs[10];
    bool grows, persistent;
  } rows[] = {
      {"examples/attention_fwd.wave", "attention_fwd_causal",
       {"B=2", "M=200", "K2=200", "N=32", "K1=32", NULL}, true, false},
      {"examples/attention_fwd_wgmma.wave", "attention_fwd_wgmma_causal",
       {"B=2", "M=200", "K2=200", "N=64", "K1=64", "specialize=1",
        "persistent=1", "sms=3", NULL},
       true, true},
      {"examples/attention_fwd.wave", "attention_fwd",
       {"B=1", "M=200", "K2=200", "N=32", "K1=32", NULL}, false, false},
  };
  for (size_t r = 0; r < sizeof rows / sizeof *rows; r++) {
    double *out[2][2] = {{0}};
    size_t n = 0;
    for (int off = 0; off < 2; off++) {
      const char *defs[12];
      size_t d = 0;
      for (; rows[r].defs[d]; d++)
        defs[d] = rows[r].defs[d];
      defs[d++] = off ? "longest_first=0" : NULL;
      defs[d] = NULL;
      kcase c;
      bool ok = kc_open(&c, rows[r].file, rows[r].kernel, NULL, defs);
      CHECKF(ok, "%s: %s", rows[r].kernel, c.err);
      if (!ok) {
        kc_close(&c);
        continue;
      }
      bool said = kc_has_remark(c.k, "longest walks first");
      CHECKF(said == (rows[r].grows && !off), "%s off=%d: remark %d",
             rows[r].kernel, off, said);
      if (!rows[r].persistent)
        CHECKF(reversed_ctaid(prog(c.k)) == said,
               "%s off=%d: the block id is%s read in reverse", rows[r].kernel,
               off, said ? " not" : "");
      uint64_t rng = 77;
      double *q = kc_input(&c, "q", &rng), *k = kc_input(&c, "k", &rng),
             *v = kc_input(&c, "v", &rng);
      int B = rows[r].defs[0][2] - '0', D = atoi(rows[r].defs[3] + 2);
      n = (size_t)B * 200 * D;
      double *o = malloc(n * sizeof *o), *lse = malloc(B * 200 * sizeof *lse);
      ref_attn_fwd(B, 200, 200, D, D, 0.125,
                   rows[r].grows ? REF_CAUSAL : 0, q, k, v, o, lse);
      bool ran = kc_simulate(&c);
      CHECKF(ran, "%s off=%d: %s", rows[r].kernel, off, c.err);
      if (ran) {
        double eo = kc_rel_err(&c, "o", o);
        CHECKF(eo < 1e-2, "%s off=%d: o %.3g", rows[r].kernel, off, eo);
        out[off][0] = kc_output(&c, "o");
        out[off][1] = kc_output(&c, "lse");
        cases_run++;
      }
      free(q), free(k), free(v), free(o), free(lse);
      kc_close(&c);
    }
    if (out[0][0] && out[1][0])
      CHECKF(!memcmp(out[0][0], out[1][0], n * sizeof(double)) &&
                 !memcmp(out[0][1], out[1][1], n / atoi(rows[r].defs[3] + 2) *
                                                   sizeof(double)),
             "%s: the reversed order computes other bits", rows[r].kernel);
    for (int i = 0; i < 2; i++)
      free(out[i][0]), free(out[i][1]);
  }
  const char *defs[] = {"M=256", "N=256", "K=128", "longest_first=1", NULL};
  wavec_kernel *pk;
  wavec_status st;
  wavec_ctx *ctx = build("examples/gemm.wave", "gemm", defs, NULL, &pk, &st);
  const char *msg = wavec_errmsg(ctx);
  CHECKF(st != WAVEC_OK && strstr(msg, "E0408") &&
             strstr(msg, "--hardware longest_first=1: no bounded iterate"),
         "gemm with longest_first=1: %s", msg);
  wavec_ctx_free(ctx);
}

int main(void) {
  RUN(compiler_choice);
  RUN(auto_stages);
  RUN(gemm_specialized);
  RUN(persistent_dynamic);
  RUN(attention_specialized);
  RUN(specialized_shape);
  RUN(specialized_bugs_are_caught);
  RUN(specialize_refused);
  RUN(longest_first);
  printf("  %d cases simulated against float64\n", cases_run);
  CHECK_EXIT();
}
