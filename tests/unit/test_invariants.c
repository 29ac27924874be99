/* The report's bugs, shown gone by structure rather than by eye, and the
 * checkers shown able to fail:
 *  - bug 1: the index of cast(s_ij) has exactly [B, M, K2] (never the mma's
 *    reduction dim K1), and `cast(s_ij) - lse_i` goes through an explicit
 *    broadcast of lse_i;
 *  - bug 2: with N = 32 the dp mma is a chain of two links along N, and
 *    every clone of cast(dp) and every write of dp reads the chain's last
 *    link;
 *  - a planted bug in expansion's operand lookup makes the verifier fail;
 *  - planted bugs in lowering (a dropped barrier, one lane's shifted index)
 *    make the simulator fail at the source line.
 * Uses the internal headers: these are facts about the compiler's graphs. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "passes/dist.h"
#include "tir/tir.h"

static const char *const nvidia[2] = {"32", "F32_16x8x16_F16"};
static const char *const mfma[2] = {"64", "F32_16x16x16_F16"};

/* hardware(stages = N) and hardware(copies = N) for the next build(), or
 * NULL */
static const char *stages, *copies;

/* Parses `file`, sets sizes and hardware (and a test hook), compiles
 * `kernel`. */
static wavec_ctx *build(const char *file, const char *kernel,
                        const char *const hw[2], int n, int k1, int m,
                        int k2, const char *hook, wavec_kernel **out,
                        wavec_status *st) {
  wavec_ctx *ctx = wavec_ctx_new(NULL, NULL);
  wavec_define_int(ctx, "B", 1);
  wavec_define_int(ctx, "M", m);
  wavec_define_int(ctx, "K2", k2);
  wavec_define_int(ctx, "N", n);
  wavec_define_int(ctx, "K1", k1);
  wavec_define_int(ctx, "K", k1);
  if (strstr(file, "attention_fwd_wgmma")) {
    /* the forward's tiles these cases were written for (its defaults now
     * follow the head dim and the key length: test_defaults.c) */
    wavec_define_int(ctx, "BLOCK_M", 128);
    wavec_define_int(ctx, "BLOCK_K2", 64);
  }
  if (hw) {
    wavec_hardware_override(ctx, "threads_per_wave", hw[0]);
    wavec_hardware_override(ctx, "mma", hw[1]);
  }
  if (hook)
    CHECK(wavec_test_hook(ctx, hook) == WAVEC_OK);
  if (stages)
    CHECK(wavec_hardware_override(ctx, "stages", stages) == WAVEC_OK);
  if (copies)
    CHECK(wavec_hardware_override(ctx, "copies", copies) == WAVEC_OK);
  size_t len;
  char *src = slurp(file, &len);
  *st = wavec_parse(ctx, file, src, len);
  free(src);
  *out = *st == WAVEC_OK ? wavec_kernel_find(ctx, kernel) : NULL;
  if (*out)
    *st = wavec_compile(*out, NULL);
  return ctx;
}

static wv_kernel *K(wavec_kernel *k) { return &k->k; }

static bool has_dims(wavec_ctx *ctx, const wv_layout *l, const char *const *d,
                     uint32_t nd) {
  if (!l || l->n != nd)
    return false;
  for (uint32_t i = 0; i < nd; i++)
    if (!wv_layout_dim(l, wavec_symbol(ctx, d[i])))
      return false;
  return true;
}

/* Bug 1: every clone of cast(s_ij) is indexed by exactly [B, M, K2], and
 * its subtraction of lse_i takes an explicit broadcast of the read. */
static void cast_of_mma_has_own_dims(void) {
  for (int h = 0; h < 2; h++) {
    wavec_kernel *pk;
    wavec_status st;
    wavec_ctx *ctx = build("examples/attention_bwd_dkdv.wave",
                           "attention_bwd_dkdv", h ? nvidia : mfma, 32, 32,
                           32, 32, NULL, &pk, &st);
    CHECKF(st == WAVEC_OK, "%s", wavec_errmsg(ctx));
    if (st != WAVEC_OK) {
      wavec_ctx_free(ctx);
      continue;
    }
    wv_kernel *k = K(pk);
    /* after the full pipeline the graph is the expanded one: find the
     * clones of cast(s_ij): CAST nodes whose operand is an mma named s_ij */
    const char *bmk2[] = {"B", "M", "K2"};
    uint32_t casts = 0, subs = 0;
    for (uint32_t id = 1; id < k->g->nodes.n; id++) {
      wv_node *n = wv_get(k->g, id);
      if (n->op != WAVEC_OP_CAST)
        continue;
      wv_node *o = wv_get(k->g, n->ops[0]);
      if (o->op != WAVEC_OP_MMA || !o->name || strcmp(o->name, "s_ij"))
        continue;
      casts++;
      CHECKF(has_dims(ctx, k->index->info[id].layout, bmk2, 3),
             "cast(s_ij) clone %%%u: index dims are not exactly [B, M, K2]",
             id);
      CHECK(!wv_type_has(&n->type, wavec_symbol(ctx, "K1")));
      /* its user: the subtraction, whose other operand is a broadcast of
       * the read of lse */
      for (uint32_t u = id + 1; u < k->g->nodes.n; u++) {
        wv_node *un = wv_get(k->g, u);
        if (un->op != WAVEC_OP_SUB || un->ops[0] != id)
          continue;
        subs++;
        wv_node *b = wv_get(k->g, un->ops[1]);
        CHECKF(b->op == WAVEC_OP_BROADCAST, "- lse_i is not a broadcast");
        CHECK(wv_get(k->g, b->ops[0])->op == WAVEC_OP_READ);
      }
    }
    CHECKF(casts > 0 && subs == casts, "casts %u subs %u", casts, subs);
    wavec_ctx_free(ctx);
  }
}

/* Bug 2: the dp chain along N, and who reads it. */
static void users_see_last_link(void) {
  for (int h = 0; h < 2; h++) {
    wavec_kernel *pk;
    wavec_status st;
    wavec_ctx *ctx = build("examples/attention_bwd_dkdv.wave",
                           "attention_bwd_dkdv", h ? nvidia : mfma, 32, 32,
                           32, 32, NULL, &pk, &st);
    CHECKF(st == WAVEC_OK, "%s", wavec_errmsg(ctx));
    if (st != WAVEC_OK) {
      wavec_ctx_free(ctx);
      continue;
    }
    wv_kernel *k = K(pk);
    wv_index *ix = k->index;
    int32_t links = 32 / 16; /* N = 32 in k16 steps, on both mma types */
    uint32_t chains = 0, readers = 0;
    wavec_sym dp = 0;
    for (uint32_t i = 0; i < k->args.n; i++)
      if (strcmp(wv_get(k->g, k->args.v[i])->name, "dp") == 0)
        dp = k->args.v[i];
    CHECK(dp != 0);
    for (uint32_t id = 1; id < k->g->nodes.n; id++) {
      wv_node *n = wv_get(k->g, id);
      if (n->op == WAVEC_OP_MMA && n->name && !strcmp(n->name, "dp_ij")) {
        CHECK(ix->info[id].link < links);
        if (ix->info[id].link == links - 1)
          chains++;
        if (ix->info[id].link > 0) {
          wv_node *prev = wv_get(k->g, n->ops[2]);
          CHECK(prev->op == WAVEC_OP_MMA &&
                ix->info[n->ops[2]].link == ix->info[id].link - 1);
        }
      }
      bool reads_dp = (n->op == WAVEC_OP_CAST) ||
                      (n->op == WAVEC_OP_WRITE && n->ops[1] == dp);
      if (!reads_dp)
        continue;
      wv_node *o = wv_get(k->g, n->ops[0]);
      if (o->op != WAVEC_OP_MMA || !o->name || strcmp(o->name, "dp_ij"))
        continue;
      readers++;
      CHECKF(ix->info[n->ops[0]].link == links - 1,
             "%s clone %%%u reads dp link %d of %d", wv_ops[n->op].name, id,
             ix->info[n->ops[0]].link, links);
    }
    /* a wave holds [M, K2] = 16 x 16 (BLOCK_M, BLOCK_K2): one MFMA 16x16
     * tile or two m16n8 tiles */
    CHECKF(chains == (h ? 2u : 1u), "%u dp chains", chains);
    CHECKF(readers == 2 * chains, "%u readers of %u chains", readers, chains);
    wavec_ctx_free(ctx);
  }
}

static void broken_lookup_is_caught(void) {
  wavec_kernel *pk;
  wavec_status st;
  wavec_ctx *ctx = build("examples/attention_bwd_dkdv.wave",
                         "attention_bwd_dkdv", mfma, 32, 32, 32, 32,
                         "expand-lookup", &pk, &st);
  CHECK(st == WAVEC_ERR_INTERNAL);
  const char *msg = wavec_errmsg(ctx);
  CHECKF(strstr(msg, "verifier after 'expand'") != NULL, "got: %s", msg);
  wavec_ctx_free(ctx);
  ctx = wavec_ctx_new(NULL, NULL);
  CHECK(wavec_test_hook(ctx, "no-such-hook") == WAVEC_ERR_INVALID);
  wavec_ctx_free(ctx);
}

/* Runs the kernel in the simulator on random inputs; returns the status and
 * leaves the message in ctx. */
static wavec_status simulate(wavec_kernel *k) {
  size_t n = wavec_arg_count(k);
  void *bufs[16] = {0};
  uint64_t rng = 1;
  for (size_t i = 0; i < n; i++) {
    wavec_arg_info a;
    wavec_arg_info_get(k, i, &a);
    bufs[i] = malloc(a.bytes);
    for (size_t j = 0; j < a.bytes / 2; j++) {
      rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
      ((uint16_t *)bufs[i])[j] = a.dtype == WAVEC_F32 ? 0 : (uint16_t)(0x3000 + (rng & 0x3ff));
    }
  }
  wavec_status st = wavec_simulate(k, bufs);
  for (size_t i = 0; i < n; i++)
    free(bufs[i]);
  return st;
}

static void dropped_barrier_is_a_race(void) {
  wavec_kernel *pk;
  wavec_status st;
  wavec_ctx *ctx = build("examples/attention_bwd_dkdv.wave",
                         "attention_bwd_dkdv", nvidia, 32, 32, 32, 32, NULL,
                         &pk, &st);
  CHECK(st == WAVEC_OK && simulate(pk) == WAVEC_OK);
  wavec_ctx_free(ctx);
  ctx = build("examples/attention_bwd_dkdv.wave", "attention_bwd_dkdv",
              nvidia, 32, 32, 32, 32, "drop-barrier", &pk, &st);
  CHECK(st == WAVEC_OK);
  if (st == WAVEC_OK) {
    CHECK(simulate(pk) == WAVEC_ERR_RUNTIME);
    const char *msg = wavec_errmsg(ctx);
    /* at one of the two conversions: for `mma(p_ij, do_t, dv_prev)` (line
     * 43) or `mma(ds_ij, q_t, dk_prev)` (line 55) */
    CHECKF(strstr(msg, ":43:18: error[E0603]: shared-memory race") ||
               strstr(msg, ":55:18: error[E0603]: shared-memory race"),
           "got: %s", msg);
  }
  wavec_ctx_free(ctx);
}

static void shifted_lane_is_caught(void) {
  wavec_kernel *pk;
  wavec_status st;
  wavec_ctx *ctx = build("examples/gemm.wave", "gemm", nvidia, 64, 64, 64,
                         64, "shift-lane", &pk, &st);
  CHECK(st == WAVEC_OK);
  if (st == WAVEC_OK) {
    CHECK(simulate(pk) == WAVEC_ERR_RUNTIME);
    const char *msg = wavec_errmsg(ctx);
    /* `write(acc, c)` is line 19 */
    CHECKF(strstr(msg, "gemm.wave:19:5: error[E0605]") != NULL ||
               strstr(msg, "gemm.wave:19:5: error[E0606]") != NULL,
           "got: %s", msg);
  }
  wavec_ctx_free(ctx);
}

/* The ring of staged tiles: a wait that leaves the tile being read in
 * flight, or a missing barrier before a slot is refilled, is caught at the
 * read of the tile (gemm.wave lines 15 and 16), for every ring depth; the
 * correct program simulates cleanly at every depth. */
static void ring_bugs_are_caught(void) {
  static const char *const depths[] = {"1", "2", "3", "4"};
  static const char *const hooks[] = {"ring-early-read", "ring-no-barrier"};
  for (int d = 0; d < 4; d++) {
    stages = depths[d];
    for (int h = -1; h < 2; h++) {
      wavec_kernel *pk;
      wavec_status st;
      wavec_ctx *ctx = build("examples/gemm.wave", "gemm", nvidia, 64, 128,
                             64, 64, h < 0 ? NULL : hooks[h], &pk, &st);
      CHECK(st == WAVEC_OK);
      if (st == WAVEC_OK) {
        wavec_status sim = simulate(pk);
        const char *msg = wavec_errmsg(ctx);
        if (h < 0 || d == 0) {
          /* depth 1 has no ring: the hooks change nothing */
          CHECKF(sim == WAVEC_OK, "stages %s: %s", stages, msg);
        } else {
          CHECKF(sim == WAVEC_ERR_RUNTIME, "stages %s, %s: not caught",
                 stages, hooks[h]);
          CHECKF((strstr(msg, "gemm.wave:15:") || strstr(msg, "gemm.wave:16:")) &&
                     (strstr(msg, "error[E0603]") || strstr(msg, "error[E0602]")),
                 "stages %s, %s: got: %s", stages, hooks[h], msg);
        }
      }
      wavec_ctx_free(ctx);
    }
  }
  stages = NULL;
}

/* A wgmma is asynchronous: with the waits left out (planted), the
 * simulator reports the first instruction that touches its registers
 * while it is in flight, at that instruction's line. With them, the GEMM
 * and the forward (lhs from registers, N-contiguous rhs) run clean. */
static void wgmma_waits_are_checked(void) {
  static const struct {
    const char *file, *kernel, *line;
  } ks[] = {{"examples/gemm_wgmma.wave", "gemm_wgmma", "gemm_wgmma.wave:21:5"},
            {"examples/attention_fwd_wgmma.wave", "attention_fwd_wgmma",
             "attention_fwd_wgmma.wave:"}};
  for (size_t i = 0; i < sizeof ks / sizeof *ks; i++)
    for (int h = 0; h < 2; h++) {
      wavec_kernel *pk;
      wavec_status st;
      wavec_ctx *ctx = build(ks[i].file, ks[i].kernel, NULL, 128, 64, 128, 128,
                             h ? "wgmma-no-wait" : NULL, &pk, &st);
      CHECKF(st == WAVEC_OK, "%s: %s", ks[i].kernel, wavec_errmsg(ctx));
      if (st == WAVEC_OK) {
        wavec_status sim = simulate(pk);
        const char *msg = wavec_errmsg(ctx);
        if (!h)
          CHECKF(sim == WAVEC_OK, "%s: %s", ks[i].kernel, msg);
        else
          CHECKF(sim == WAVEC_ERR_RUNTIME && strstr(msg, "error[E0608]") &&
                     strstr(msg, "wgmma") && strstr(msg, ks[i].line),
                 "%s without waits: got: %s", ks[i].kernel, msg);
      }
      wavec_ctx_free(ctx);
    }
}

static bool has_remark(wavec_kernel *k, const char *text);

/* The verifier after the pass waits: a program missing one of its waits is
 * refused, naming the instruction. */
static wavec_status verify_waits(wavec_ctx *ctx, const tir_prog *p) {
  WV_GUARD(ctx, ctx->status);
  wavec_status st = tir_verify_waits(ctx, p);
  WV_UNGUARD(ctx);
  return st;
}

static void wgmma_waits_verified(void) {
  wavec_kernel *pk;
  wavec_status st;
  wavec_ctx *ctx = build("examples/gemm_wgmma.wave", "gemm_wgmma", NULL, 128,
                         256, 128, 128, NULL, &pk, &st);
  CHECKF(st == WAVEC_OK, "%s", wavec_errmsg(ctx));
  if (st == WAVEC_OK) {
    tir_prog *p = wv_kernel_tir(K(pk));
    CHECK(tir_verify_waits(ctx, p) == WAVEC_OK);
    /* the first full wait, dropped */
    uint32_t i = 0;
    while (i < p->code.n &&
           !(p->code.v[i].op == T_WGWAIT && p->code.v[i].imm == 0))
      i++;
    CHECK(i < p->code.n);
    p->code.v[i].op = T_CPCOMMIT;
    st = verify_waits(ctx, p);
    CHECKF(st == WAVEC_ERR_INTERNAL &&
               strstr(wavec_errmsg(ctx), "touches what a wgmma in flight"),
           "a missing wait: %s", wavec_errmsg(ctx));
  }
  wavec_ctx_free(ctx);
}

/* Does the thread program hold an instruction whose printed form
 * contains `text`? */
/* Does the program carry a wgmma group from an iteration into the next
 * (a wait of TIR_WAIT_CARRY)? */
static bool carries(wavec_kernel *pk) {
  const tir_prog *p = wv_kernel_tir(K(pk));
  for (uint32_t i = 0; i < p->code.n; i++)
    if (p->code.v[i].op == T_WGWAIT && p->code.v[i].imm2 == TIR_WAIT_CARRY)
      return true;
  return false;
}

static bool tir_has(wavec_kernel *pk, const char *text) {
  wv_buf b;
  wv_buf_init(&b, pk->k.ctx);
  tir_print(pk->k.ctx, wv_kernel_tir(K(pk)), &b);
  return strstr(wv_buf_str(&b), text) != NULL;
}

/* A wgmma loop with a ring of 3 or more slots carries its last group of
 * wgmmas into the next iteration (a wait that leaves one group in flight
 * before the loop's end) and refills the ring one tile less ahead; the
 * simulator runs it clean. Planted: the ring refilled as far ahead as
 * without the carried group, which overwrites a slot the carried group
 * still reads; the simulator reports it at the read's line. The GEMM (no
 * touch of the accumulator in the loop), the dk/dv kernel (whose next
 * iteration waits for everything before it touches the carried dk) and
 * the forward (o_prev * corr written in place, so that p · v accumulates
 * into the carried registers and the yield copies nothing). */
static void wgmma_carried_group(void) {
  static const struct {
    const char *file, *kernel, *read_line;
    int n, k1, m, k2;
  } ks[] = {{"examples/gemm_wgmma.wave", "gemm_wgmma", "gemm_wgmma.wave:1",
             128, 512, 128, 128},
            {"examples/attention_bwd_wgmma.wave", "attention_bwd_dkdv_wgmma",
             "attention_bwd_wgmma.wave:", 64, 64, 512, 128},
            {"examples/attention_fwd_wgmma.wave", "attention_fwd_wgmma",
             "attention_fwd_wgmma.wave:", 64, 64, 128, 512}};
  static const char *const depths[] = {"2", "3", "4"};
  for (size_t i = 0; i < sizeof ks / sizeof *ks; i++)
    for (int d = 0; d < 3; d++)
      for (int h = 0; h < 2; h++) {
        stages = depths[d];
        /* the planted refill is a cp.async ring's bug (an mbarrier ring
         * would wait for the slot's release instead: tma_bugs_are_caught) */
        copies = h ? "1" : NULL;
        wavec_kernel *pk;
        wavec_status st;
        wavec_ctx *ctx =
            build(ks[i].file, ks[i].kernel, NULL, ks[i].n, ks[i].k1, ks[i].m,
                  ks[i].k2, h ? "wgmma-carry-near" : NULL, &pk, &st);
        CHECKF(st == WAVEC_OK, "%s: %s", ks[i].kernel, wavec_errmsg(ctx));
        if (st == WAVEC_OK) {
          bool carried = d > 0; /* a ring of 3 slots or more */
          CHECKF(carries(pk) == carried,
                 "%s stages %s: carried %d", ks[i].kernel, stages, carried);
          CHECKF(has_remark(pk, "the last wgmmas of an iteration run on into "
                                "the next one") == carried,
                 "%s stages %s: remark", ks[i].kernel, stages);
          wavec_status sim = simulate(pk);
          const char *msg = wavec_errmsg(ctx);
          if (!h || !carried)
            CHECKF(sim == WAVEC_OK, "%s stages %s: %s", ks[i].kernel, stages,
                   msg);
          else
            CHECKF(sim == WAVEC_ERR_RUNTIME && strstr(msg, "error[E0608]") &&
                       strstr(msg, "while a wgmma that reads it is in flight") &&
                       strstr(msg, ks[i].read_line),
                   "%s stages %s, ring too far ahead: got: %s", ks[i].kernel,
                   stages, msg);
        }
        wavec_ctx_free(ctx);
      }
  copies = NULL;
  /* a loop that touches the carried accumulator first does not carry, and
   * says which line stops it */
  stages = "4";
  wavec_kernel *pk;
  wavec_status st;
  wavec_ctx *ctx = build("tests/kernels/regress.wave", "decayed_gemm_wgmma",
                         NULL, 128, 256, 64, 64, NULL, &pk, &st);
  CHECKF(st == WAVEC_OK, "%s", wavec_errmsg(ctx));
  if (st == WAVEC_OK) {
    CHECK(!carries(pk));
    CHECK(has_remark(pk, "regress.wave:43:11: remark: iterate over 'K': the "
                         "last wgmmas of an iteration are waited for at its "
                         "end: line 44 touches their registers"));
    CHECK(simulate(pk) == WAVEC_OK);
  }
  wavec_ctx_free(ctx);
  stages = NULL;
}

/* A value whose type lacks a dim its layout's elements range over (the
 * forward's row maximum, its correction exp2(m_prev - m_new)) holds each
 * value several times in a lane; each distinct one is computed once. The
 * warpgroup forward with its 64-row warpgroups and 64-key tiles: a lane
 * holds 32 scores of 2 rows, so an iteration takes 32 exp2 for p and 2 for
 * the correction (it took 64 when every copy was computed), and it
 * simulates clean. */
static void repeated_elements_computed_once(void) {
  wavec_kernel *pk;
  wavec_status st;
  wavec_ctx *ctx = build("examples/attention_fwd_wgmma.wave",
                         "attention_fwd_wgmma", NULL, 64, 64, 128, 256, NULL,
                         &pk, &st);
  CHECKF(st == WAVEC_OK, "%s", wavec_errmsg(ctx));
  if (st == WAVEC_OK) {
    const tir_prog *p = wv_kernel_tir(K(pk));
    int in_loop = 0, exp2s = 0;
    for (uint32_t i = 0; i < p->code.n; i++) {
      tir_op op = p->code.v[i].op;
      in_loop += op == T_LOOP;
      in_loop -= op == T_ENDLOOP;
      exp2s += in_loop && op == T_EXP2;
    }
    CHECKF(exp2s == 34, "exp2 per iteration: %d, want 32 + 2", exp2s);
    CHECK(simulate(pk) == WAVEC_OK);
  }
  wavec_ctx_free(ctx);
}

/* A causal mask splits its loop: the tiles it leaves whole (all keys of
 * the tile at or below every query of the workgroup) are walked without
 * it, first for the forward and dq (K2 <= M), last for dk/dv (M >= K2).
 * Two loops, the whole part without a select; with the split planted
 * away, one loop. Both simulate clean (their numbers are checked in
 * test_numerics and test_attention_bwd). */
static void causal_mask_splits_loop(void) {
  static const struct {
    const char *file, *kernel;
    bool whole_first;
  } ks[] = {{"examples/attention_fwd.wave", "attention_fwd_causal", true},
            {"examples/attention_bwd.wave", "attention_bwd_dkdv_causal", false},
            {"examples/attention_bwd_wgmma.wave",
             "attention_bwd_dq_wgmma_causal", true}};
  for (size_t i = 0; i < sizeof ks / sizeof *ks; i++)
    for (int h = 0; h < 2; h++) {
      wavec_kernel *pk;
      wavec_status st;
      wavec_ctx *ctx = build(ks[i].file, ks[i].kernel, NULL, 64, 64, 256, 256,
                             h ? "no-mask-split" : NULL, &pk, &st);
      CHECKF(st == WAVEC_OK, "%s: %s", ks[i].kernel, wavec_errmsg(ctx));
      if (st == WAVEC_OK) {
        const tir_prog *p = wv_kernel_tir(K(pk));
        int loops = 0, selp[2] = {0, 0};
        for (uint32_t j = 0; j < p->code.n; j++) {
          loops += p->code.v[j].op == T_LOOP;
          if (loops && loops <= 2 && p->code.v[j].op == T_SELP)
            selp[loops - 1]++;
        }
        CHECKF(loops == (h ? 1 : 2), "%s%s: %d loops", ks[i].kernel,
               h ? " unsplit" : "", loops);
        if (!h)
          CHECKF(!selp[ks[i].whole_first ? 0 : 1] &&
                     selp[ks[i].whole_first ? 1 : 0],
                 "%s: selects %d, %d", ks[i].kernel, selp[0], selp[1]);
        CHECK(has_remark(pk, "the tiles it leaves whole are walked") == !h);
        CHECKF(simulate(pk) == WAVEC_OK, "%s: %s", ks[i].kernel,
               wavec_errmsg(ctx));
      }
      wavec_ctx_free(ctx);
    }
}

/* A bounded iterate walks exactly the tiles its relation leaves: at
 * M = K2 = 128, the causal forward's workgroups of 64 queries walk 2 and 4
 * of the 4 key tiles of 32; the backward's dk/dv workgroups of 32 keys walk
 * 4, 3, 2 and 1 of the query tiles, dq's 1 to 4 key tiles. The unbounded
 * forward walks all of them (no remark). */
static bool has_remark(wavec_kernel *k, const char *text) {
  for (size_t i = 0; i < wavec_remark_count(k); i++)
    if (strstr(wavec_remark(k, i), text))
      return true;
  return false;
}

static void bounded_walks(void) {
  static const struct {
    const char *file, *kernel, *text;
  } cases[] = {
      {"examples/attention_fwd.wave", "attention_fwd_causal",
       "iterate over 'K2' <= 'M': a workgroup walks 2 to 4 of the 4 tiles, "
       "3.0 on average (75% of the unbounded walk)"},
      {"examples/attention_bwd.wave", "attention_bwd_dkdv_causal",
       "iterate over 'M' >= 'K2': a workgroup walks 1 to 4 of the 4 tiles, "
       "2.5 on average"},
      {"examples/attention_bwd.wave", "attention_bwd_dq_causal",
       "iterate over 'K2' <= 'M': a workgroup walks 1 to 4 of the 4 tiles, "
       "2.5 on average"},
      {"examples/attention_fwd.wave", "attention_fwd", NULL},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    wavec_kernel *pk;
    wavec_status st;
    wavec_ctx *ctx = build(cases[i].file, cases[i].kernel, nvidia, 32, 32,
                           128, 128, NULL, &pk, &st);
    CHECKF(st == WAVEC_OK, "%s: %s", cases[i].kernel, wavec_errmsg(ctx));
    if (st == WAVEC_OK) {
      if (cases[i].text)
        CHECKF(has_remark(pk, cases[i].text), "%s: no remark '%s'",
               cases[i].kernel, cases[i].text);
      else
        CHECKF(!has_remark(pk, "a workgroup walks"), "%s: bounded",
               cases[i].kernel);
      CHECK(simulate(pk) == WAVEC_OK);
    }
    wavec_ctx_free(ctx);
  }
}

/* A read that two mmas want in two layouts (the warpgroup dk/dv kernel's
 * q_i: the K-major rhs of kᵀ qᵀ and the M-major rhs of dsᵀ q) is read
 * twice, not converted: two reads of q and of do, no CONVERT of a read,
 * a remark at each second use; and it simulates. */
static void reread_not_converted(void) {
  wavec_kernel *pk;
  wavec_status st;
  wavec_ctx *ctx = build("examples/attention_bwd_wgmma.wave",
                         "attention_bwd_dkdv_wgmma", NULL, 64, 64, 128, 128,
                         NULL, &pk, &st);
  CHECKF(st == WAVEC_OK, "%s", wavec_errmsg(ctx));
  if (st == WAVEC_OK) {
    wv_graph *g = K(pk)->g;
    int reads_q = 0, reads_do = 0, converted_reads = 0;
    for (uint32_t id = 1; id < g->nodes.n; id++) {
      wv_node *n = wv_get(g, id);
      if (n->op == WAVEC_OP_READ && n->name) {
        reads_q += !strcmp(n->name, "q_i");
        reads_do += !strcmp(n->name, "do_i");
      }
      if (n->op == WV_OP_CONVERT)
        converted_reads += wv_get(g, n->ops[0])->op == WAVEC_OP_READ;
    }
    /* after expansion: one node per vector tile, so count at least 2 */
    CHECKF(reads_q >= 2 && reads_do >= 2 && converted_reads == 0,
           "reads of q %d, of do %d, converted reads %d", reads_q, reads_do,
           converted_reads);
    CHECK(has_remark(pk, ":43:18: remark: 'q_i' [B, M, K1] f16 is read again "
                         "from 'q' in the layout this use wants"));
    CHECK(has_remark(pk, ":40:16: remark: 'do_i' [B, M, N] f16 is read again "
                         "from 'do'"));
    CHECK(simulate(pk) == WAVEC_OK);
  }
  wavec_ctx_free(ctx);
}

/* The warpgroup kernels' rings are filled by tensor copies into mbarrier
 * rings (thread 0 issues; every wave waits for its tile's phase; no
 * workgroup barrier in the loop) at every depth, the remark says so, and
 * each simulates clean; with hardware(copies = 1) they stay cp.async
 * rings, and the remark says why. The GEMM, the forwards (v read
 * N-contiguous, the causal walk split in two loops) and the backward's
 * dk/dv (a walk from a workgroup-dependent first tile) and dq. */
static const struct {
  const char *file, *kernel;
  int n, k1, m, k2;
} tma_ks[] = {
    {"examples/gemm_wgmma.wave", "gemm_wgmma", 256, 512, 128, 128},
    {"examples/attention_fwd_wgmma.wave", "attention_fwd_wgmma", 64, 64, 128,
     512},
    {"examples/attention_fwd_wgmma.wave", "attention_fwd_wgmma_causal", 64, 64,
     256, 512},
    {"examples/attention_bwd_wgmma.wave", "attention_bwd_dkdv_wgmma_causal", 64,
     64, 512, 256},
    {"examples/attention_bwd_wgmma.wave", "attention_bwd_dq_wgmma", 64, 64, 128,
     256},
};

static void tma_rings(void) {
  static const char *const depths[] = {"2", "3", "4"};
  for (size_t i = 0; i < sizeof tma_ks / sizeof *tma_ks; i++)
    for (int d = 0; d < 3; d++)
      for (int c = 0; c < 2; c++) {
        stages = depths[d];
        copies = c ? "1" : NULL;
        wavec_kernel *pk;
        wavec_status st;
        wavec_ctx *ctx = build(tma_ks[i].file, tma_ks[i].kernel, NULL,
                               tma_ks[i].n, tma_ks[i].k1, tma_ks[i].m,
                               tma_ks[i].k2, NULL, &pk, &st);
        CHECKF(st == WAVEC_OK, "%s: %s", tma_ks[i].kernel, wavec_errmsg(ctx));
        if (st == WAVEC_OK) {
          const char *what = tma_ks[i].kernel;
          CHECKF(tir_has(pk, "tma.load") == !c && tir_has(pk, "mbar.wait") == !c,
                 "%s stages %s copies %d", what, stages, c);
          CHECKF(has_remark(pk, "(tensor copies issued by thread 0, or a "
                                "producer warpgroup where the schedule "
                                "specializes, into an mbarrier ring, ") == !c &&
                     has_remark(pk, "not tensor copies: hardware(copies = "
                                    "1))") == c,
                 "%s stages %s copies %d: remark", what, stages, c);
          /* no workgroup barrier inside the loop of an mbarrier ring (the
           * loop over persistent tiles, where the compiler chose it, has
           * the epilogue's) */
          const tir_prog *p = wv_kernel_tir(K(pk));
          int depth = 0, bars = 0;
          int tile_loop = has_remark(pk, "persistent tiles: ") &&
                          !has_remark(pk, "persistent tiles: not chosen");
          for (uint32_t j = 0; j < p->code.n; j++) {
            depth += p->code.v[j].op == T_LOOP;
            depth -= p->code.v[j].op == T_ENDLOOP;
            bars += depth > tile_loop && p->code.v[j].op == T_BAR;
          }
          CHECKF((bars == 0) == !c, "%s stages %s: %d barriers in loops", what,
                 stages, bars);
          wavec_status sim = simulate(pk);
          CHECKF(sim == WAVEC_OK, "%s stages %s copies %d: %s", what, stages,
                 c, wavec_errmsg(ctx));
        }
        wavec_ctx_free(ctx);
      }
  stages = copies = NULL;
}

/* Each way to break an mbarrier ring, planted, is caught by the simulator
 * at the line of the read the ring stages (an early read at the line of
 * the wgmma that reads): a wait for the wrong phase
 * reads a tile before it lands; a slot released before its wgmmas read it
 * is refilled under them; an empty barrier that expects an arrival that
 * never comes deadlocks; an expect_tx that announces fewer bytes than the
 * copies bring. At ring depths 2 and 4 (a carried wgmma group). */
static void tma_bugs_are_caught(void) {
  static const struct {
    const char *hook, *code, *text;
  } bugs[] = {
      {"tma-early-read", "error[E0603]", "while the tensor copy to it is in flight"},
      {"tma-early-release", "error[E0603]", "tensor copy refills shared byte"},
      {"tma-deadlock", "error[E0609]", "this wait can never complete"},
      {"tma-tx-short", "error[E0610]", "transaction bytes"},
  };
  static const char *const depths[] = {"2", "4"};
  /* the read's line; an early read is caught at the wgmma that reads (in
   * the forward, s = mma(q_i, k_j, s_acc) on line 29) */
  static const char *const lines[][2] = {
      {"gemm_wgmma.wave:19:", "gemm_wgmma.wave:19:"},
      {"attention_fwd_wgmma.wave:27:", "attention_fwd_wgmma.wave:29:"}};
  for (size_t i = 0; i < 2; i++)
    for (size_t b = 0; b < sizeof bugs / sizeof *bugs; b++)
      for (int d = 0; d < 2; d++) {
        stages = depths[d];
        wavec_kernel *pk;
        wavec_status st;
        wavec_ctx *ctx = build(tma_ks[i].file, tma_ks[i].kernel, NULL,
                               tma_ks[i].n, tma_ks[i].k1, tma_ks[i].m,
                               tma_ks[i].k2, bugs[b].hook, &pk, &st);
        CHECKF(st == WAVEC_OK, "%s: %s", tma_ks[i].kernel, wavec_errmsg(ctx));
        if (st == WAVEC_OK) {
          wavec_status sim = simulate(pk);
          const char *msg = wavec_errmsg(ctx);
          CHECKF(sim == WAVEC_ERR_RUNTIME && strstr(msg, bugs[b].code) &&
                     strstr(msg, bugs[b].text) && strstr(msg, lines[i][b == 0]),
                 "%s stages %s, %s: got: %s", tma_ks[i].kernel, stages,
                 bugs[b].hook, msg);
        }
        wavec_ctx_free(ctx);
      }
  stages = NULL;
}

int main(void) {
  RUN(wgmma_waits_verified);
  RUN(cast_of_mma_has_own_dims);
  RUN(users_see_last_link);
  RUN(broken_lookup_is_caught);
  RUN(dropped_barrier_is_a_race);
  RUN(shifted_lane_is_caught);
  RUN(ring_bugs_are_caught);
  RUN(bounded_walks);
  RUN(wgmma_waits_are_checked);
  RUN(wgmma_carried_group);
  RUN(reread_not_converted);
  RUN(repeated_elements_computed_once);
  RUN(causal_mask_splits_loop);
  RUN(tma_rings);
  RUN(tma_bugs_are_caught);
  CHECK_EXIT();
}
