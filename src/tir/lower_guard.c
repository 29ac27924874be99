/* The lowering: guards at the edges of ragged dimensions (dist.h). A
 * coordinate past the edge of a dimension is padding: accesses to memory
 * there are masked (lower_mem.c, lower_copy.c), and the reductions over a
 * ragged dimension take its padding as their identity (here). Whatever the
 * index algebra proves in bounds gets no guard; every guard that stays is
 * listed by --remarks at the line of the op that needs it. */
#include <math.h>

#include "tir/lower.h"

/* A predicate that 0 <= c < size, ANDed into *mask; nothing when the
 * bounds prove it (each side is checked only where it is not proved).
 * Returns whether it added a guard. */
bool lw_bound_check(lw *w, ex_t c, ex_t size, uint32_t *mask) {
  int64_t lo = INT64_MIN, hi = INT64_MAX, n = INT64_MIN;
  ex_bounds(w->ctx, c, w->ranges, w->nranges, &lo, &hi);
  /* a symbolic size (a dynamic dim) proves nothing of the upper side */
  bool low = lo < 0, high = !ex_is_const(w->ctx, size, &n) || hi >= n;
  if (!low && !high)
    return false;
  uint32_t p = 0;
  for (uint32_t i = w->guards.n; i-- > 0 && !p;) {
    guard_ent *g = &w->guards.v[i];
    if (g->c == c && g->size == size && w->scope_open[g->scope])
      p = g->reg;
  }
  if (!p) {
    /* a coordinate or a size past 32 bits is compared in 64 */
    uint32_t r = lw_expr_wide(w, c);
    bool wide = w->p->regs.v[r] == TY_I64;
    if (low) {
      p = lw_reg(w, TY_PRED);
      lw_emit(w, T_SETP, wide ? TY_I64 : TY_I32, p, r,
              (wide ? lw_expr64 : lw_expr)(w, ex_const(w->ctx, 0)), 0,
              TIR_CMP_GE);
    }
    if (high) {
      uint32_t q = lw_reg(w, TY_PRED);
      uint32_t s = lw_expr_wide(w, size);
      if (wide || w->p->regs.v[s] == TY_I64) {
        r = lw_expr64(w, c);
        s = lw_expr64(w, size);
        wide = true;
      }
      lw_emit(w, T_SETP, wide ? TY_I64 : TY_I32, q, r, s, 0, TIR_CMP_LT);
      p = lw_pred_and(w, p, q);
    }
    guard_ent g = {c, size, p, w->scopes.v[w->scopes.n - 1]};
    vec_push(w->ctx, &w->guards, g);
  }
  *mask = lw_pred_and(w, *mask, p);
  return true;
}

/* Why accesses along dim d need a guard, for remarks. */
static void why(lw *w, wv_buf *b, wavec_sym d) {
  wv_diminfo *di = &w->d->dim[d];
  const char *nm = wavec_symbol_name(w->ctx, d);
  int64_t tile = di->wg_axis >= 0 ? di->wg_tile : di->tile;
  const char *kind = di->wg_axis >= 0 ? "workgroup" : "loop";
  if (di->ragged && di->dynamic)
    wv_buf_printf(b, "'%s' (dynamic, not stated a multiple of its %s tile "
                     "%lld)", nm, kind, (long long)tile);
  else if (di->ragged && !tile) /* (constraints.c: held whole, padded) */
    wv_buf_printf(b, "'%s' (%lld, held whole by a wave, is padded to %lld, "
                     "%s)",
                  nm, (long long)di->size, (long long)di->span,
                  di->pad ? di->pad : "?");
  else if (di->ragged)
    wv_buf_printf(b, "'%s' (%lld is not a multiple of its %s tile %lld)", nm,
                  (long long)di->size, kind, (long long)tile);
  else if (di->dynamic)
    wv_buf_printf(b, "'%s' (dynamic: the index analysis cannot prove the "
                     "coordinate below its size)", nm);
  else
    wv_buf_printf(b, "'%s' (the index analysis cannot prove the coordinate "
                     "in [0, %lld))",
                  nm, (long long)di->size);
}

/* One remark per op (by origin) that keeps guards: `before`, the dims
 * with the reason of each, `after`. */
void lw_remark_guards(lw *w, uint32_t id, const char *before,
                      const wavec_sym *dims, uint32_t n, const char *after) {
  uint32_t o = w->ix->info[id].origin;
  if (!n || w->guarded[o])
    return;
  w->guarded[o] = true;
  wv_buf b;
  wv_remark_start(w->k, wv_get(w->g, id)->loc, &b);
  wv_buf_printf(&b, "%s ", before);
  for (uint32_t i = 0; i < n; i++) {
    wv_buf_puts(&b, i == 0 ? "" : i + 1 == n ? " and " : ", ");
    why(w, &b, dims[i]);
  }
  wv_buf_puts(&b, after);
  wv_remark_end(w->k, &b);
}

/* Element e of operand `op`, as type ty, with the padding of ragged dim d
 * (a coordinate at or past its size) replaced by `identity`; the element
 * itself when d is not ragged or its coordinate is proved inside.
 * *guarded is set when a guard is emitted. */
uint32_t lw_elem_unpadded(lw *w, uint32_t op, uint32_t e, tir_ty ty,
                          wavec_sym d, double identity, bool *guarded) {
  return lw_elem_unpadded_moved(w, op, e, ty, d, identity, 0, guarded);
}

uint32_t lw_elem_unpadded_moved(lw *w, uint32_t op, uint32_t e, tir_ty ty,
                                wavec_sym d, double identity, ex_t move,
                                bool *guarded) {
  uint32_t v = lw_elem(w, op, e, ty);
  wv_diminfo *di = &w->d->dim[d];
  if (!di->ragged || wv_get(w->g, op)->op == WAVEC_OP_SCALAR)
    return v;
  uint32_t mask = 0;
  ex_t c = lw_index_of(w, op, d);
  if (move)
    c = ex_add(w->ctx, c, move);
  c = lw_concrete(w, c, e);
  if (!lw_bound_check(w, c, lw_dim_size(w, d), &mask))
    return v;
  *guarded = true;
  uint32_t r = lw_reg(w, ty);
  uint32_t id = lw_reg(w, ty);
  lw_const_into(w, ty, id, identity);
  lw_emit(w, T_SELP, ty, r, mask, v, id, 0);
  return r;
}

/* Does `op` already hold `identity` past the edges: is it a read with that
 * fill whose coordinates are the memory's (no mapping, or one that only
 * permutes dimensions)? */
bool lw_fills_with(lw *w, uint32_t op, double identity) {
  const wv_node *n = wv_get(w->g, op);
  if (n->op != WAVEC_OP_READ || lw_read_fill(w, n) != identity)
    return false;
  if (n->mapping) {
    const wv_mapping *m = &w->k->mappings.v[n->mapping - 1];
    for (uint32_t j = 0; j < m->inputs.n; j++)
      if (!ex_sym_of(w->ctx, m->inputs.v[j].e))
        return false;
  }
  return true;
}
