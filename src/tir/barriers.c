/* Pass `barriers` (tir.h): a barrier that only waits for a scratch
 * region's last readers before the region is written again is dropped
 * where another barrier already lies between every earlier access of the
 * region and it, on every path through the loops and role regions.
 *
 * The lowering writes such a barrier at the start of each use of a region
 * (a conversion's round trip, a reduction across waves, the waves' parts),
 * not knowing what came before; in a loop the use before is usually the
 * previous one of the iteration, or the previous iteration's, with other
 * barriers between (the one-pass backward: two of its five barriers an
 * iteration). Decided by a forward dataflow: the state at an instruction
 * is, per region, whether some path reaches it from an access of the
 * region with no barrier since. A tagged barrier whose region is clean on
 * entry orders nothing of its region.
 *
 * The tensor stores' buffer (TIR_REGION_STORE) is read last by the copy
 * engine, whose reads its issuing thread retires (T_BULKWAITR) right
 * before the barrier: that barrier goes only where the wait can move up
 * to before an earlier barrier of the same straight-line code that every
 * thread of this one reaches (the same named barrier, or the
 * workgroup's), with nothing between that touches the buffer or issues or
 * waits for tensor stores (the one-pass backward: the ds conversion's
 * barrier covers the buffer of dq's reduces, one barrier an iteration
 * fewer). A dropped
 * barrier no longer ends the other regions' spans either, so the buffer's
 * barriers are decided first and the others on the program without them,
 * by a second dataflow. */
#include "tir/lower.h"

/* The region an instruction reads (or writes) in shared memory: its tag
 * on a shared-memory access, else 0. */
static uint32_t region_of(const tir_instr *in) {
  return tir_shared_access(in->op) && in->tag < TIR_REGION_COUNT ? in->tag
                                                                  : 0;
}

static bool is_write(const tir_instr *in) {
  return in->op == T_STS || in->op == T_STSV;
}

/* dirty[i * R + r]: on entry to instruction i, some path comes from an
 * access of region r (only reads with `reads_only`) with no barrier
 * since. */
static uint8_t *dataflow(wavec_ctx *ctx, const tir_prog *p, bool reads_only) {
  uint32_t n = p->code.n, R = TIR_REGION_COUNT;
  uint8_t *in = wv_alloc(ctx, ((size_t)n + 1) * R);
  uint8_t out[TIR_REGION_COUNT];
  for (bool changed = true; changed;) {
    changed = false;
    for (uint32_t i = 0; i < n; i++) {
      const tir_instr *x = &p->code.v[i];
      memcpy(out, in + (size_t)i * R, R);
      if (x->op == T_BAR)
        memset(out, 0, R);
      uint32_t r = region_of(x);
      if (r && (!reads_only || !is_write(x)))
        out[r] = 1;
      uint32_t succ[2] = {i + 1, UINT32_MAX};
      if (x->op == T_EXIT)
        succ[0] = UINT32_MAX;
      if (x->op == T_LOOP)
        succ[1] = x->match + 1; /* no trips */
      if (x->op == T_ENDLOOP)
        succ[1] = x->match + 1; /* the next iteration */
      if (x->op == T_IF)
        succ[1] = x->match; /* the region skipped */
      for (int s = 0; s < 2; s++) {
        if (succ[s] == UINT32_MAX || succ[s] > n)
          continue;
        uint8_t *to = in + (size_t)succ[s] * R;
        for (uint32_t k = 1; k < R; k++)
          if (out[k] && !to[k])
            to[k] = 1, changed = true;
      }
    }
  }
  return in;
}

/* For the tensor stores' buffer, whose last readers are the copy engine's
 * (retired by its issuing thread's T_BULKWAITR right before the barrier):
 * the barrier before it, when the wait can move up to before that one —
 * nothing between them touches the buffer, issues or waits for tensor
 * stores, or bounds a loop or region — or UINT32_MAX. */
static uint32_t earlier_barrier(const tir_prog *p, uint32_t i) {
  if (i == 0 || p->code.v[i - 1].op != T_BULKWAITR)
    return UINT32_MAX;
  const tir_instr *b = &p->code.v[i];
  for (uint32_t j = i - 1; j-- > 0;) {
    const tir_instr *x = &p->code.v[j];
    /* (one that every thread of this one reaches: the same named
     * barrier, or the workgroup's) */
    if (x->op == T_BAR)
      return x->imm == 0 || (x->imm == b->imm && x->imm2 == b->imm2)
                 ? j
                 : UINT32_MAX;
    if (x->op == T_LOOP || x->op == T_ENDLOOP || x->op == T_IF ||
        x->op == T_ENDIF || x->op == T_EXIT || x->op == T_TMAST ||
        x->op == T_BULKCOMMIT || x->op == T_BULKWAIT ||
        x->op == T_BULKWAITR ||
        (tir_shared_access(x->op) && x->tag == TIR_REGION_STORE))
      return UINT32_MAX;
  }
  return UINT32_MAX;
}

/* One round: drops the reuse barriers of region `only` (0: of every
 * region but the store buffer's) that are clean on entry; true if any. */
static bool drop_round(wv_kernel *k, uint32_t only) {
  wavec_ctx *ctx = k->ctx;
  tir_prog *p = k->tir;
  uint32_t n = p->code.n, R = TIR_REGION_COUNT;
  uint8_t *dirty = dataflow(ctx, p, false);
  /* moved[j]: a tensor-store buffer's wait goes before instruction j */
  bool *moved = wv_alloc(ctx, (size_t)n + 1);
  bool *drop = wv_alloc(ctx, (size_t)n + 1);
  bool any = false;
  for (uint32_t i = 0; i < n; i++) {
    const tir_instr *x = &p->code.v[i];
    uint32_t r = x->tag & TIR_REGION_MASK;
    if (x->op != T_BAR || !(x->tag & TIR_BAR_REUSE) || !r || r >= R ||
        (only ? r != only : r == TIR_REGION_STORE))
      continue;
    /* planted bug for the tests: drop every tagged barrier */
    if (ctx->test_hooks & WV_HOOK_DROP_REUSE_BARRIERS) {
      drop[i] = any = true;
      continue;
    }
    if (dirty[(size_t)i * R + r])
      continue;
    if (r == TIR_REGION_STORE) {
      uint32_t j = earlier_barrier(p, i);
      if (j == UINT32_MAX)
        continue;
      moved[j] = true, drop[i - 1] = true; /* (the wait, moved) */
    }
    drop[i] = any = true;
  }
  if (!any)
    return false;
  VEC(tir_instr) code = {0};
  for (uint32_t i = 0; i < n; i++) {
    if (moved[i]) {
      tir_instr wait = {.op = T_BULKWAITR, .ty = TY_PRED,
                        .loc = p->code.v[i].loc};
      vec_push(ctx, &code, wait);
    }
    if (!drop[i])
      vec_push(ctx, &code, p->code.v[i]);
  }
  tir_install_code(ctx, p, code);
  return true;
}

/* The store buffer's reuse barriers first (a dropped barrier no longer
 * cleans the other regions, so theirs are decided after, on the program
 * without them). */
wavec_status wv_pass_barriers(wv_kernel *k) {
  drop_round(k, TIR_REGION_STORE);
  drop_round(k, 0);
  return WAVEC_OK;
}

wavec_status tir_verify_barriers(wavec_ctx *ctx, const tir_prog *p) {
  if (ctx->test_hooks &
      (WV_HOOK_DROP_REUSE_BARRIERS | WV_HOOK_TMA_STORE_NO_WAIT))
    return WAVEC_OK; /* (the simulator finds the planted races) */
  /* no write of a region while a read of it may lack its barrier */
  uint8_t *dirty = dataflow(ctx, p, true);
  for (uint32_t i = 0; i < p->code.n; i++) {
    const tir_instr *x = &p->code.v[i];
    uint32_t r = region_of(x);
    if (r && is_write(x) && dirty[(size_t)i * TIR_REGION_COUNT + r])
      wv_fail(ctx, D_INTERNAL, x->loc, "thread program: instruction %u writes "
              "shared region %u, which a read may still use (no barrier "
              "since)", i, r);
  }
  return WAVEC_OK;
}
