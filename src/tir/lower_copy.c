/* The lowering: the asynchronous copies of staged tiles into shared
 * memory, where they stand or through a loop's ring. */
#include "tir/lower.h"

/* Issues the asynchronous copies of st's workgroup tile, st->vb bytes each
 * (an element of 2 or 1 bytes goes through a register, loaded and stored:
 * the wait that lands the copies finds it landed),
 * all threads together, into the slot at byte offset `at` (0: slot 0); the
 * loop counter (if any) replaced by `shift` (0: as is), each copy also
 * predicated by `extra` (0: none). Along a ragged dimension the vectors
 * past the edge are zeros (nothing is read): a vector is st->vb bytes of
 * the last dimension, whose size promote makes a multiple of it, so a
 * vector lies wholly inside or wholly past the edge. */
void lw_stage_issue(lw *w, stage *st, ex_t shift, ex_t at, uint32_t extra) {
  wavec_ctx *ctx = w->ctx;
  wv_node *mem = wv_get(w->g, st->mem);
  tir_ty ty = tir_ty_of(mem->type.dt);
  uint32_t nd = mem->type.n;
  int64_t total = 1;
  for (uint32_t i = 0; i < nd; i++)
    total *= st->ext[i];
  int64_t vec = lw_stage_vec(st), nvec = total / vec;
  int64_t threads = lw_block_threads(w);
  int64_t iters = (nvec + threads - 1) / threads;
  ex_t tid = lw_linear_tid(w);
  uint32_t guards = 0; /* bit i: memory dim i has a zero-fill guard */
  /* bit i: memory dim i is not a dim of the value read (its coordinate
   * comes through a mapping: h // G of grouped-query attention's key
   * heads), so it is checked against the edge too, not only where ragged */
  uint32_t mapped = 0;
  for (uint32_t id = 1; id < w->g->nodes.n && !mapped; id++) {
    wv_node *r = wv_get(w->g, id);
    if (r->op == WAVEC_OP_READ && w->stage_of[w->ix->info[id].origin] == st)
      for (uint32_t i = 0; i < nd; i++)
        mapped |= (uint32_t)!wv_type_has(&r->type, mem->type.dims[i]) << i;
  }
  for (int64_t it = 0; it < iters; it++) {
    ex_t v = ex_add(ctx, tid, ex_const(ctx, it * threads));
    uint32_t mask = 0;
    if (nvec % threads)
      lw_bound_check(w, lw_concrete(w, v, 0), ex_const(ctx, nvec), &mask);
    /* local coordinates of the vector's first element, row-major */
    ex_t rest = ex_mul(ctx, v, ex_const(ctx, vec));
    ex_t goff = ex_const(ctx, 0), local[WV_MAX_DIMS];
    ex_t gstride = ex_const(ctx, 1);
    uint32_t inside = 0;
    for (int i = (int)nd - 1; i >= 0; i--) {
      ex_t c = i > 0 ? ex_mod(ctx, rest, ex_const(ctx, st->ext[i])) : rest;
      rest = ex_floordiv(ctx, rest, ex_const(ctx, st->ext[i]));
      ex_t g = ex_add(ctx, st->start[i], c);
      if (shift && st->loopvar)
        g = ex_subst(ctx, g, 1, &st->loopvar, &shift);
      goff = ex_add(ctx, goff, ex_mul(ctx, g, gstride));
      local[i] = c;
      wavec_sym d = mem->type.dims[i];
      ex_t size = lw_dim_size(w, d);
      if ((w->d->dim[d].ragged || (mapped >> i & 1)) &&
          lw_bound_check(w, lw_concrete(w, g, 0), size, &inside))
        guards |= 1u << i;
      gstride = ex_mul(ctx, gstride, size);
    }
    ex_t soff = lw_stage_elem_off(ctx, st, nd, local);
    soff = ex_add(ctx, ex_const(ctx, st->base),
                  ex_mul(ctx, soff, ex_const(ctx, st->es)));
    uint32_t m = lw_pred_and(w, mask, extra);
    uint32_t sa = lw_smem_addr(w, lw_concrete(w, soff, 0), at);
    if (st->swz)
      sa = lw_swz(w, sa, st->swz);
    uint32_t ga = lw_expr_wide(w, lw_concrete(w, goff, 0));
    for (uint32_t id = 1; id < w->g->nodes.n; id++) /* at a read of it */
      if (wv_get(w->g, id)->op == WAVEC_OP_READ &&
          w->stage_of[w->ix->info[id].origin] == st) {
        lw_remark_wide(w, id, mem, ga);
        break;
      }
    if (st->vb < STAGE_VEC_MIN) {
      /* an element at a time through a register (no asynchronous copy
       * moves fewer than 4 bytes): a load, 0 past the edge, and a store */
      uint32_t on = lw_pred_and(w, m, inside);
      uint32_t r = lw_reg(w, ty);
      lw_emit(w, T_LDG, ty, r, ga, on, 0, mem->index);
      lw_emit(w, T_STS, ty, 0, sa, r, m, 0);
      continue;
    }
    tir_instr *in = lw_emit(w, T_CPA, ty, 0, sa, ga, m, mem->index);
    in->imm2 = st->vb;
    if (inside) {
      in->list = wv_dup(ctx, &inside, sizeof inside);
      in->nlist = 1;
    }
  }
  /* one remark per staged tile, at a read of it */
  for (uint32_t id = 1; id < w->g->nodes.n && guards; id++) {
    wv_node *r = wv_get(w->g, id);
    if (r->op == WAVEC_OP_READ && w->stage_of[w->ix->info[id].origin] == st) {
      wavec_sym dims[WV_MAX_DIMS];
      uint32_t n = 0;
      for (uint32_t i = 0; i < nd; i++)
        if (guards >> i & 1)
          dims[n++] = mem->type.dims[i];
      wv_buf what;
      wv_buf_init(&what, ctx);
      wv_buf_printf(&what, "the copies of '%s' into shared memory fill the "
                    "tile past the edge of", mem->name);
      lw_remark_guards(w, id, wv_buf_str(&what), dims, n,
                       ", with zeros");
      break;
    }
  }
}

/* The whole copy of n tiles, where it stands: barrier, copy, wait,
 * barrier. */
void lw_stage_copy(lw *w, stage *const *sts, uint32_t n) {
  lw_barrier(w);
  for (uint32_t i = 0; i < n; i++)
    lw_stage_issue(w, sts[i], 0, 0, 0);
  lw_emit(w, T_CPCOMMIT, TY_PRED, 0, 0, 0, 0, 0);
  lw_emit(w, T_CPWAIT, TY_PRED, 0, 0, 0, 0, 0);
  lw_copies_fence(w);
  lw_barrier(w);
}

/* After a wait that landed a thread's copies, before the barrier that
 * shows them to the others: where a wgmma reads them, a proxy fence. The
 * copies (cp.async, not the bulk tensor copies) write through the generic
 * proxy and a wgmma reads through the async proxy; the PTX ISA asks for
 * fence.proxy.async between the two (the simulator reports a wgmma read
 * of bytes written without one). */
void lw_copies_fence(lw *w) {
  if (w->wgmma && !(w->ctx->test_hooks & WV_HOOK_NO_COPY_FENCE))
    lw_emit(w, T_FENCEPX, TY_PRED, 0, 0, 0, 0, 0);
}

/* The byte offset of the ring slot that holds tile `tile` of st (of S). */
ex_t lw_slot_at(lw *w, const stage *st, int64_t S, ex_t tile) {
  wavec_ctx *ctx = w->ctx;
  return lw_concrete(
      w,
      ex_mul(ctx, ex_mod(ctx, tile, ex_const(ctx, S)), ex_const(ctx, st->slot)),
      0);
}
