/* Issue order (lower.c, hardware(early_mma)) and groups of their own for
 * mmas whose results are touched in another order than issued (waits.c):
 *  - the one-pass backward issues dp = v doᵀ right after s = k qᵀ, and the
 *    wait before the exponentials keeps dp in flight (a partial wait, each
 *    chain a group of its own); dv runs while ds is computed; in program
 *    order (early_mma = 0) the first wait is a full one;
 *  - the results are the same bits either way (each accumulator's chain
 *    adds in the same order), and those of float64 within 1e-2;
 *  - a kernel whose mmas already come where they are ready (GEMM, the
 *    attention forward) has the same program either way. */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "../ref/kcase.c"
#include "../ref/ref.c"
#include "check.h"
#include "tir/tir.h"
#include "wavec.h"

/* The first wgmma wait inside the first loop that issues wgmmas, and the
 * accumulators (first registers) of the chains issued before it. */
static int64_t first_wait(const tir_prog *p, int *chains) {
  uint32_t last = 0;
  *chains = 0;
  bool in_loop = false;
  for (uint32_t i = 0; i < p->code.n; i++) {
    const tir_instr *in = &p->code.v[i];
    if (in->op == T_LOOP)
      in_loop = true;
    if (!in_loop)
      continue;
    if (in->op == T_WGMMA && in->list[0] != last) {
      last = in->list[0];
      ++*chains;
    }
    if (in->op == T_WGWAIT && *chains)
      return in->imm;
  }
  return -1;
}

static void backward_order(void) {
  double *out[2][3] = {{NULL}};
  size_t n = 2 * 192 * 64;
  for (int early = 0; early < 2; early++) {
    const char *defs[] = {"B=2", "M=192", "K2=192", "K1=64", "N=64",
                          "BLOCK_K2=128", "BLOCK_M=64", "stages=2",
                          early ? NULL : "early_mma=0", NULL};
    kcase c;
    bool ok = kc_open(&c, "examples/attention_bwd_wgmma.wave",
                      "attention_bwd_fused_wgmma", NULL, defs);
    CHECKF(ok, "early=%d: %s", early, c.err);
    if (!ok) {
      kc_close(&c);
      continue;
    }
    const tir_prog *p = c.k->k.tir;
    int chains;
    int64_t w = first_wait(p, &chains);
    /* early: s and dp issued, the wait before exp keeps dp; program
     * order: s alone, waited for in full */
    CHECKF(early ? w == 1 && chains == 2 : w == 0 && chains == 1,
           "early=%d: first wait keeps %lld groups after %d chains", early,
           (long long)w, chains);
    uint64_t rng = 5;
    double *in[6];
    static const char *const names[] = {"q", "k", "v", "do", "lse", "D"};
    for (int a = 0; a < 6; a++)
      in[a] = kc_input(&c, names[a], &rng);
    bool ran = kc_simulate(&c);
    CHECKF(ran, "early=%d: %s", early, c.err);
    if (ran) {
      out[early][0] = kc_output(&c, "dk");
      out[early][1] = kc_output(&c, "dv");
      out[early][2] = kc_output(&c, "dq_acc");
    }
    for (int a = 0; a < 6; a++)
      free(in[a]);
    kc_close(&c);
  }
  if (out[0][0] && out[1][0])
    for (int o = 0; o < 3; o++)
      CHECKF(!memcmp(out[0][o], out[1][o], n * sizeof(double)),
             "output %d: early mmas compute other bits", o);
  for (int e = 0; e < 2; e++)
    for (int o = 0; o < 3; o++)
      free(out[e][o]);
}

/* Kernels whose mmas come where they are ready: the same thread program. */
static void unchanged(void) {
  static const struct {
    const char *file, *kernel, *defs[8];
  } rows[] = {
      {"examples/gemm_wgmma.wave", "gemm_wgmma",
       {"M=256", "N=256", "K=256", "BLOCK_M=256", NULL}},
      {"examples/attention_fwd_wgmma.wave", "attention_fwd_wgmma",
       {"B=1", "M=256", "K2=256", "K1=128", "N=128", NULL}},
      {"examples/attention_fwd_wgmma.wave", "attention_fwd_wgmma_causal",
       {"B=1", "M=256", "K2=256", "K1=64", "N=64", "specialize=1", NULL}},
  };
  for (size_t r = 0; r < sizeof rows / sizeof *rows; r++) {
    char *text[2] = {NULL, NULL};
    for (int early = 0; early < 2; early++) {
      const char *defs[10];
      size_t d = 0;
      for (; rows[r].defs[d]; d++)
        defs[d] = rows[r].defs[d];
      defs[d++] = early ? NULL : "early_mma=0";
      defs[d] = NULL;
      kcase c;
      bool ok = kc_open(&c, rows[r].file, rows[r].kernel, NULL, defs);
      CHECKF(ok, "%s: %s", rows[r].kernel, c.err);
      if (ok) {
        wv_buf b;
        wv_buf_init(&b, c.k->k.ctx);
        tir_print(c.k->k.ctx, c.k->k.tir, &b);
        text[early] = strdup(wv_buf_str(&b));
      }
      kc_close(&c);
    }
    CHECKF(text[0] && text[1] && !strcmp(text[0], text[1]),
           "%s: early mmas changed the program", rows[r].kernel);
    free(text[0]), free(text[1]);
  }
}

/* The one-pass backward at D = 128 (specialized, the warpgroups
 * exchanging ds, tensor reduces of dq): dk += ds q runs on under the
 * staging of dq's sums in the reduces' buffer (its barriers order only
 * that buffer, which no wgmma reads): the wait before the first write of
 * the buffer keeps a group in flight, and no full wait comes before the
 * reduces are issued; the results match float64. */
/* Runs the open one-pass backward c (M queries, K2 keys, head dim d,
 * REF_CAUSAL in flags or not) in the simulator on random q, k, v, do with
 * lse and D those of the forward (ref_attn_fwd, ref_attn_D), so that
 * ref_attn_bwd's gradients are the kernel's; checks dk, dv and dq against
 * them (relative L2 below 1e-2). */
static void backward_against_float64(kcase *c, size_t M, size_t K2, size_t d,
                                     int flags, uint64_t seed,
                                     const char *what) {
  const double SC = 0.125;
  uint64_t rng = seed;
  double *q = kc_input(c, "q", &rng), *k = kc_input(c, "k", &rng);
  double *v = kc_input(c, "v", &rng), *dO = kc_input(c, "do", &rng);
  double *o = calloc(M * d, sizeof *o), *lse = calloc(M, sizeof *lse);
  double *Dv = calloc(M, sizeof *Dv), *zero = calloc(M * d, sizeof *zero);
  ref_attn_fwd(1, M, K2, d, d, SC, flags, q, k, v, o, lse);
  ref_attn_D(1, M, d, dO, o, Dv);
  kc_set(c, "lse", lse);
  kc_set(c, "D", Dv);
  kc_set(c, "dq_acc", zero); /* (the sums are added into it) */
  bool ran = kc_simulate(c);
  CHECKF(ran, "%s: %s", what, c->err);
  if (ran) {
    double *rq = calloc(M * d, sizeof *rq), *rk = calloc(K2 * d, sizeof *rk);
    double *rv = calloc(K2 * d, sizeof *rv);
    ref_attn_bwd(1, M, K2, d, d, SC, flags, q, k, v, dO, rq, rk, rv, NULL);
    double *dk = kc_output(c, "dk"), *dv = kc_output(c, "dv");
    double *dq = kc_output(c, "dq_acc"); /* (dq / SCALE) */
    for (size_t e = 0; e < M * d; e++)
      dq[e] *= SC;
    double ev = ref_rel_err(K2 * d, dv, rv), ek = ref_rel_err(K2 * d, dk, rk),
           eq = ref_rel_err(M * d, dq, rq);
    CHECKF(ev < 1e-2 && ek < 1e-2 && eq < 1e-2, "%s: dv %g, dk %g, dq %g",
           what, ev, ek, eq);
    free(dk), free(dv), free(dq), free(rk), free(rv), free(rq);
  }
  free(q), free(k), free(v), free(dO), free(o), free(lse), free(Dv);
  free(zero);
}

static void dk_under_staging_at(int D) {
  char k1[16], nn[16];
  snprintf(k1, sizeof k1, "K1=%d", D), snprintf(nn, sizeof nn, "N=%d", D);
  /* (at D = 64 asked for: hardware(exchange = 1)) */
  const char *defs[] = {"B=1", "M=128", "K2=256", k1, nn,
                        "BLOCK_K2=128", "BLOCK_M=64", "stages=2",
                        D == 64 ? "exchange=1" : NULL, NULL};
  kcase c;
  bool ok = kc_open(&c, "examples/attention_bwd_wgmma.wave",
                    "attention_bwd_fused_wgmma", NULL, defs);
  CHECKF(ok, "D=%d: %s", D, c.err);
  if (!ok) {
    kc_close(&c);
    return;
  }
  /* (at D = 64 each warpgroup's 32 columns of dq start inside a 128-byte
   * panel of k) */
  CHECKF(kc_has_remark(c.k, "each wave computes"), "D=%d: no exchange", D);
  const tir_prog *p = c.k->k.tir;
  int64_t before = -1;  /* the last wait before the buffer's first write */
  bool full = false;    /* a full wait between that write and the reduce */
  bool staged = false, reduced = false, in_loop = false;
  for (uint32_t i = 0; i < p->code.n && !reduced; i++) {
    const tir_instr *in = &p->code.v[i];
    in_loop |= in->op == T_LOOP;
    if (!in_loop)
      continue;
    if (in->op == T_WGWAIT && !staged)
      before = in->imm;
    if (in->op == T_WGWAIT && staged && in->imm == 0)
      full = true;
    if ((in->op == T_STS || in->op == T_STSV) && in->tag == TIR_REGION_STORE)
      staged = true;
    if (in->op == T_TMAST && in->imm2 == TIR_TMAST_ADD)
      reduced = staged;
  }
  CHECKF(staged && reduced, "no staging of dq's reduces in the loop");
  CHECKF(before >= 1, "the wait before the staging keeps %lld groups",
         (long long)before);
  CHECK(!full);
  char what[32];
  snprintf(what, sizeof what, "D=%d", D);
  backward_against_float64(&c, 128, 256, (size_t)D, 0, 7, what);
  kc_close(&c);
}

static void dk_under_staging(void) {
  dk_under_staging_at(128);
  dk_under_staging_at(64);
}

/* lse and D an iteration ahead (lower_loop.c's prefetch): in the one-pass
 * backward at D = 64, causal and not, at a ragged 200 queries and keys
 * (the causal walks of some workgroups end early, of others start late):
 * their loads before the loop, and inside it each load of them masked
 * (past the walk's end it loads nothing); at D = 128, where the
 * accumulators leave 16 registers, lse's alone (its 16 distinct elements
 * a thread, loaded in pairs), not D's; gradients against float64 in all
 * four. */
static void reads_ahead(void) {
  for (int t = 0; t < 4; t++) {
    int D = t & 1 ? 64 : 128;
    bool causal = t >= 2;
    char k1[16], nn[16];
    snprintf(k1, sizeof k1, "K1=%d", D), snprintf(nn, sizeof nn, "N=%d", D);
    const char *defs[] = {"B=1", "M=200", "K2=200", k1, nn, "BLOCK_K2=128",
                          "BLOCK_M=64", "stages=2", NULL};
    kcase c;
    const char *kn = causal ? "attention_bwd_fused_wgmma_causal"
                            : "attention_bwd_fused_wgmma";
    bool ok = kc_open(&c, "examples/attention_bwd_wgmma.wave", kn, NULL, defs);
    CHECKF(ok, "%s D=%d: %s", kn, D, c.err);
    if (!ok) {
      kc_close(&c);
      continue;
    }
    const tir_prog *p = c.k->k.tir;
    size_t lse_arg = kc_arg(&c, "lse"), d_arg = kc_arg(&c, "D");
    /* (by loop depth: the walk's loop is the deepest holding them; of
     * the reads ahead: at D = 128 lse's alone) */
    int at[8] = {0}, masked[8] = {0}, depth = 0, deepest = 0;
    for (uint32_t i = 0; i < p->code.n; i++) {
      const tir_instr *in = &p->code.v[i];
      depth += in->op == T_LOOP;
      depth -= in->op == T_ENDLOOP;
      if ((in->op != T_LDG && in->op != T_LDGV) || depth >= 8 ||
          (in->imm != (int64_t)lse_arg &&
           (D == 128 || in->imm != (int64_t)d_arg)))
        continue;
      at[depth]++, masked[depth] += in->b != 0;
      deepest = depth > deepest ? depth : deepest;
    }
    int before = deepest ? at[deepest - 1] : 0, inside = at[deepest];
    int unmasked = inside - masked[deepest];
    printf("  %s D=%d: %s loads %d before the loop, %d in it\n", kn, D,
           D == 128 ? "lse" : "lse and D", before, inside);
    /* (at D = 128 the accumulators leave 16 registers: lse's) */
    CHECKF(before > 0 && inside > 0 && !unmasked,
           "%s D=%d: %d loads before the loop, %d in it, %d unmasked", kn, D,
           before, inside, unmasked);
    CHECKF(kc_has_remark(c.k, "read of 'lse' loaded an iteration ahead (16 "
                              "registers") &&
               kc_has_remark(c.k, "read of 'D' loaded an iteration ahead") ==
                   (D == 64),
           "%s D=%d: lse and D ahead other than the registers allow", kn, D);
    /* the loads ahead keep their guards on M's edge (200), and say so as
     * the loads in their iteration do */
    CHECKF(kc_has_remark(c.k, "read of 'lse' keeps a bounds guard on 'M' "
                              "(200 is not a multiple"),
           "%s D=%d: no remark on lse's guards", kn, D);
    char what[64];
    snprintf(what, sizeof what, "%s D=%d", kn, D);
    backward_against_float64(&c, 200, 200, (size_t)D,
                             causal ? REF_CAUSAL : 0, 11, what);
    kc_close(&c);
  }
}

/* hardware(read_ahead): 0 keeps the loads in their iteration (D = 64 and
 * 128); 1 (32 registers) and 32 load both lse and D ahead at D = 128 past
 * the register rule (a remark each read). */
static void read_ahead_knob(void) {
  static const struct { const char *d, *knob; bool ahead, d_ahead; } t[] = {
      {"64", "read_ahead=0", false, false},
      {"128", "read_ahead=0", false, false},
      {"128", "read_ahead=1", true, true},
      {"128", "read_ahead=32", true, true}};
  for (int i = 0; i < 4; i++) {
    char k1[16], nn[16];
    snprintf(k1, sizeof k1, "K1=%s", t[i].d), snprintf(nn, sizeof nn, "N=%s", t[i].d);
    const char *defs[] = {"B=1", "M=256", "K2=256", k1, nn, "BLOCK_K2=128",
                          "BLOCK_M=64", "stages=2", t[i].knob, NULL};
    kcase c;
    bool ok = kc_open(&c, "examples/attention_bwd_wgmma.wave",
                      "attention_bwd_fused_wgmma", NULL, defs);
    CHECKF(ok, "%s", c.err);
    if (ok)
      CHECKF(kc_has_remark(c.k, "read of 'lse' loaded an iteration ahead") ==
                     t[i].ahead &&
                 kc_has_remark(c.k, "read of 'D' loaded an iteration ahead") ==
                     t[i].d_ahead,
             "D=%s %s", t[i].d, t[i].knob);
    kc_close(&c);
  }
}

/* The one-pass backward with 128-query tiles at D = 64: each warpgroup
 * holds dq's 128 rows as two wgmmas' clones, and both clones exchange ds
 * (each warpgroup 32 of the 64 columns, over the 128 keys): the remark,
 * no partial sums in shared memory, and gradients against float64 at a
 * ragged 200 (causal and not) and a whole 256; 192-query tiles, three
 * clones, at 200; and the threads' atomic adds (adds = 1) of the clones
 * instead of tensor reduces. */
static void wide_query_tiles(void) {
  /* (192-query tiles in 1 stage: 2 would need 243 KiB, more than sm_90a's
   * 227, which compiling refuses) */
  static const struct { const char *m, *bm, *st, *knob; bool causal; } t[] = {
      {"200", "BLOCK_M=128", "stages=2", NULL, false},
      {"200", "BLOCK_M=128", "stages=2", NULL, true},
      {"256", "BLOCK_M=128", "stages=2", NULL, false},
      {"200", "BLOCK_M=192", "stages=1", NULL, false},
      {"200", "BLOCK_M=128", "stages=2", "adds=1", true}};
  for (int i = 0; i < 5; i++) {
    char mm[16], kk[16];
    snprintf(mm, sizeof mm, "M=%s", t[i].m), snprintf(kk, sizeof kk, "K2=%s", t[i].m);
    const char *defs[] = {"B=1", mm, kk, "K1=64", "N=64", "BLOCK_K2=128",
                          t[i].bm, t[i].st, t[i].knob, NULL};
    const char *kn = t[i].causal ? "attention_bwd_fused_wgmma_causal"
                                 : "attention_bwd_fused_wgmma";
    kcase c;
    bool ok = kc_open(&c, "examples/attention_bwd_wgmma.wave", kn, NULL, defs);
    CHECKF(ok, "%s M=%s: %s", kn, t[i].m, c.err);
    if (!ok) {
      kc_close(&c);
      continue;
    }
    CHECKF(kc_has_remark(c.k, "each wave computes 32 of its 64 columns"),
           "%s M=%s: no exchange of the cloned dq", kn, t[i].m);
    CHECKF(!kc_has_remark(c.k, "they sum their parts"),
           "%s M=%s: dq's parts summed in shared memory", kn, t[i].m);
    char what[64];
    snprintf(what, sizeof what, "%s M=%s %s %s", kn, t[i].m, t[i].bm,
             t[i].knob ? t[i].knob : "");
    size_t n = (size_t)atoi(t[i].m);
    backward_against_float64(&c, n, n, 64, t[i].causal ? REF_CAUSAL : 0,
                             13 + (uint64_t)i, what);
    kc_close(&c);
  }
}

/* hardware(mma_ahead): the one-pass backward issues the next
 * iteration's s and dp right after its own dk (1) or after dq's staging
 * (2), the last iteration peeled (each loop of the causal walk's split
 * its own): the remark, gradients against float64 at ragged and whole
 * sizes, 2 and 3 stages; where no loop opens with wgmmas it could issue
 * early (a GEMM's one group), E0408 when asked and nothing when not. */
static void mma_ahead(void) {
  static const struct { const char *m, *knob, *ra, *st; bool causal; } t[] = {
      {"256", "mma_ahead=1", "read_ahead=0", "stages=2", false},
      {"200", "mma_ahead=2", NULL, "stages=2", false},
      {"200", "mma_ahead=2", NULL, "stages=2", true},
      {"256", "mma_ahead=1", "read_ahead=0", "stages=3", true},
      {"128", "mma_ahead=2", NULL, "stages=3", true}};
  for (int i = 0; i < 5; i++) {
    char mm[16], kk[16];
    snprintf(mm, sizeof mm, "M=%s", t[i].m), snprintf(kk, sizeof kk, "K2=%s", t[i].m);
    const char *defs[] = {"B=1", mm, kk, "K1=64", "N=64", "BLOCK_K2=128",
                          "BLOCK_M=64", t[i].st, t[i].knob, t[i].ra, NULL};
    const char *kn = t[i].causal ? "attention_bwd_fused_wgmma_causal"
                                 : "attention_bwd_fused_wgmma";
    kcase c;
    bool ok = kc_open(&c, "examples/attention_bwd_wgmma.wave", kn, NULL, defs);
    CHECKF(ok, "%s M=%s %s: %s", kn, t[i].m, t[i].knob, c.err);
    if (!ok) {
      kc_close(&c);
      continue;
    }
    CHECKF(kc_has_remark(c.k, "mma_ahead: each iteration issues the next "
                              "one's first wgmmas"),
           "%s M=%s %s: no remark", kn, t[i].m, t[i].knob);
    char what[96];
    snprintf(what, sizeof what, "%s M=%s %s %s", kn, t[i].m, t[i].knob,
             t[i].st);
    size_t n = (size_t)atoi(t[i].m);
    backward_against_float64(&c, n, n, 64, t[i].causal ? REF_CAUSAL : 0,
                             41 + (uint64_t)i, what);
    kc_close(&c);
  }
  for (int ask = 0; ask < 2; ask++) {
    const char *defs[] = {"M=256", "N=256", "K=512", "persistent=0",
                          ask ? "mma_ahead=1" : "stages=3", NULL};
    kcase c;
    bool ok = kc_open(&c, "examples/gemm_wgmma.wave", "gemm_wgmma", NULL, defs);
    if (!ask)
      CHECKF(ok && !kc_has_remark(c.k, "mma_ahead"), "gemm: %s",
             ok ? "a remark" : c.err);
    else
      CHECKF(!ok && strstr(c.err, "error[E0408]") &&
                 strstr(c.err, "hardware(mma_ahead = 1)") &&
                 strstr(c.err, "a group it carries into the next") &&
                 strstr(c.err, ".wave:"),
             "gemm asked: got %s", c.err);
    kc_close(&c);
  }
}

int main(void) {
  RUN(backward_order);
  RUN(unchanged);
  RUN(dk_under_staging);
  RUN(reads_ahead);
  RUN(read_ahead_knob);
  RUN(wide_query_tiles);
  RUN(mma_ahead);
  CHECK_EXIT();
}
