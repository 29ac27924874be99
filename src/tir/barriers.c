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
 * entry orders nothing, and dropping it changes no other state (clean in,
 * no access, clean out either way), so all of them go at once. */
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

wavec_status wv_pass_barriers(wv_kernel *k) {
  wavec_ctx *ctx = k->ctx;
  tir_prog *p = k->tir;
  uint32_t n = p->code.n, R = TIR_REGION_COUNT;
  uint8_t *dirty = dataflow(ctx, p, false);
  VEC(tir_instr) code = {0};
  for (uint32_t i = 0; i < n; i++) {
    const tir_instr *x = &p->code.v[i];
    /* planted bug for the tests: drop every tagged barrier */
    uint32_t r = x->tag & TIR_REGION_MASK;
    bool drop = x->op == T_BAR && (x->tag & TIR_BAR_REUSE) && r && r < R &&
                (!dirty[(size_t)i * R + r] ||
                 (ctx->test_hooks & WV_HOOK_DROP_REUSE_BARRIERS));
    if (!drop)
      vec_push(ctx, &code, *x);
  }
  if (code.n != n)
    tir_install_code(ctx, p, code);
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
