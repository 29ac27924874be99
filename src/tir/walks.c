/* Pass `walks`. require: promote (the lowering's context). The tiles each
 * iterate walks, [first, last) as expressions in the workgroup ids: all of
 * its dim's tiles, or for a bounded `iterate(D REL E)` only those that hold
 * a coordinate in relation to the workgroup's tile of E. One remark per
 * bounded iterate says what the bound saves (given where the lowering
 * meets the loop, so that remarks keep the program's order). */
#include "tir/lower.h"

void lw_rel_tile(lw *w, const wv_node *n, ex_t *e0, ex_t *e1) {
  wavec_ctx *ctx = w->ctx;
  wv_diminfo *ei = &w->d->dim[n->rel_dim];
  wv_assert(ctx, ei->wg_axis >= 0);
  *e0 = ex_mul(ctx, ex_sym(ctx, w->d->WG[ei->wg_axis]),
               ex_const(ctx, ei->wg_tile));
  if (n->rel_off) /* iterate(D REL E + OFF): the tile of E, moved */
    *e0 = ex_add(ctx, *e0, n->rel_off);
  *e1 = ex_add(ctx, *e0, ex_const(ctx, ei->wg_tile - 1));
}

/* The tiles iterate n walks, [*first, *last): all of them, or for
 * `iterate(D REL E)` those holding a coordinate d with d REL e for some e
 * of the workgroup's tile of E, [e0, e1]: d <= e1 (<: d <= e1 - 1) ends
 * the walk at the tile holding e1, d >= e0 (>: d >= e0 + 1) starts it at
 * the tile holding e0. Clamped to [0, trips] (trips: ceil(size / tile),
 * for a dynamic dim an expression in its size). */
static void loop_range(lw *w, const wv_node *n, ex_t *first, ex_t *last,
                       const char **remark) {
  wavec_ctx *ctx = w->ctx;
  wv_diminfo *di = &w->d->dim[n->sym];
  int64_t trips = di->tiles;
  ex_t all = di->dynamic ? ex_ceildiv(ctx, lw_dim_size(w, n->sym),
                                      ex_const(ctx, di->tile))
                         : ex_const(ctx, trips);
  *first = ex_const(ctx, 0);
  *last = all;
  if (!n->rel)
    return;
  wv_diminfo *ei = &w->d->dim[n->rel_dim];
  ex_t e0, e1;
  lw_rel_tile(w, n, &e0, &e1);
  ex_t T = ex_const(ctx, di->tile), zero = ex_const(ctx, 0),
       one = ex_const(ctx, 1);
  switch (n->rel) {
  case WAVEC_REL_LE:
  case WAVEC_REL_LT: {
    ex_t top = n->rel == WAVEC_REL_LT ? ex_sub(ctx, e1, one) : e1;
    *last = ex_add(ctx, ex_floordiv(ctx, top, T), one);
    break;
  }
  default: {
    ex_t bot = n->rel == WAVEC_REL_GT ? ex_add(ctx, e0, one) : e0;
    *first = ex_floordiv(ctx, bot, T);
    break;
  }
  }
  *first = lw_concrete(w, ex_max(ctx, zero, ex_min(ctx, *first, all)), 0);
  *last = lw_concrete(w, ex_max(ctx, zero, ex_min(ctx, *last, all)), 0);
  if (di->dynamic || ei->dynamic) { /* (the counts below need the sizes) */
    wv_buf b;
    wv_remark_start(w->k, n->loc, &b);
    wv_buf_printf(&b, "iterate over '%s' %s '%s'%s: the tiles a workgroup "
                      "walks are bounded at run time, from the sizes",
                  wavec_symbol_name(ctx, n->sym), wv_rel_names[n->rel],
                  wavec_symbol_name(ctx, n->rel_dim),
                  n->rel_off ? " with an offset" : "");
    *remark = wv_buf_str(&b);
    return;
  }
  /* what the bound saves, as a remark: the tiles each workgroup walks */
  uint32_t ns = ctx->sym_names.n;
  int64_t *vals = wv_alloc(ctx, ns * sizeof *vals);
  bool *known = wv_alloc(ctx, ns * sizeof *known);
  wavec_sym wg = w->d->WG[ei->wg_axis];
  known[wg] = true;
  /* (over lw_wg_count of them: an estimate of the average past that) */
  int64_t lo = trips, hi = 0, sum = 0;
  int64_t grid = w->d->grid[ei->wg_axis], nwg = lw_wg_count(grid);
  for (int64_t i = 0; i < nwg; i++) {
    int64_t f, l;
    vals[wg] = lw_wg_at(grid, i);
    if (!ex_eval(ctx, *first, vals, known, ns, &f) ||
        !ex_eval(ctx, *last, vals, known, ns, &l))
      wv_fail(ctx, D_INTERNAL, n->loc, "iterate bound depends on more than "
              "the workgroup id");
    int64_t t = l > f ? l - f : 0;
    lo = t < lo ? t : lo;
    hi = t > hi ? t : hi;
    sum += t;
  }
  wv_buf b;
  wv_remark_start(w->k, n->loc, &b);
  wv_buf_printf(&b, "iterate over '%s' %s '%s'", wavec_symbol_name(ctx, n->sym),
                wv_rel_names[n->rel], wavec_symbol_name(ctx, n->rel_dim));
  int64_t off;
  if (n->rel_off && ex_is_const(ctx, lw_concrete(w, n->rel_off, 0), &off))
    wv_buf_printf(&b, " %c %lld", off < 0 ? '-' : '+',
                  (long long)(off < 0 ? -off : off));
  wv_buf_printf(&b, ": a workgroup "
                    "walks %lld to %lld of the %lld tiles, %.1f on average "
                    "(%.0f%% of the unbounded walk)",
                (long long)lo, (long long)hi, (long long)trips,
                (double)sum / (double)nwg,
                100.0 * (double)sum / ((double)nwg * (double)trips));
  *remark = wv_buf_str(&b);
}

wavec_status wv_pass_walks(wv_kernel *k) {
  lw *w = k->lw;
  uint32_t nn = w->g->nodes.n;
  w->walk_first = wv_alloc(k->ctx, nn * sizeof *w->walk_first);
  w->walk_last = wv_alloc(k->ctx, nn * sizeof *w->walk_last);
  w->walk_remark = wv_alloc(k->ctx, nn * sizeof *w->walk_remark);
  for (uint32_t id = 1; id < nn; id++)
    if (wv_get(w->g, id)->op == WAVEC_OP_ITERATE)
      loop_range(w, wv_get(w->g, id), &w->walk_first[id], &w->walk_last[id],
                 &w->walk_remark[id]);
  return WAVEC_OK;
}

void wv_print_walks(wv_kernel *k, wv_buf *b) {
  lw *w = k->lw;
  wv_buf_puts(b, "walks: the tiles each iterate walks, [first, last)\n");
  for (uint32_t id = 1; id < w->g->nodes.n; id++) {
    wv_node *n = wv_get(w->g, id);
    if (n->op != WAVEC_OP_ITERATE)
      continue;
    wv_buf_printf(b, "  %%%u iterate over '%s' (%u:%u): [",
                  id, wavec_symbol_name(k->ctx, n->sym), n->loc.line,
                  n->loc.col);
    ex_print(k->ctx, b, w->walk_first[id]);
    wv_buf_puts(b, ", ");
    ex_print(k->ctx, b, w->walk_last[id]);
    wv_buf_printf(b, ") of %lld tiles\n",
                  (long long)w->d->dim[n->sym].tiles);
  }
}

/* What walks promises: for every workgroup (lw_wg_at), 0 <= first <=
 * last <= tiles (an empty walk is first == last), the bounds in the
 * workgroup ids alone (walks over dynamic dims are the simulator's to
 * check, at the sizes it runs). */
wavec_status wv_verify_walks(wv_kernel *k) {
  lw *w = k->lw;
  wavec_ctx *ctx = k->ctx;
  uint32_t ns = ctx->sym_names.n;
  int64_t *vals = wv_alloc(ctx, ns * sizeof *vals);
  bool *known = wv_alloc(ctx, ns * sizeof *known);
  for (int a = 0; a < 3; a++)
    known[w->d->WG[a]] = true;
  for (uint32_t id = 1; id < w->g->nodes.n; id++) {
    wv_node *n = wv_get(w->g, id);
    /* (a walk over or bounded by a dynamic dim is checked by the
     * simulator, at the sizes it runs) */
    if (n->op != WAVEC_OP_ITERATE || w->d->dim[n->sym].dynamic ||
        (n->rel && w->d->dim[n->rel_dim].dynamic))
      continue;
    int64_t tiles = w->d->dim[n->sym].tiles;
    /* the bound's axis (the others cannot appear) */
    int axis = n->rel ? w->d->dim[n->rel_dim].wg_axis : 0;
    int64_t grid = n->rel ? w->d->grid[axis] : 1;
    for (int64_t i = 0; i < lw_wg_count(grid); i++) {
      int64_t g = lw_wg_at(grid, i);
      vals[w->d->WG[axis]] = g;
      int64_t f, l;
      if (!ex_eval(ctx, w->walk_first[id], vals, known, ns, &f) ||
          !ex_eval(ctx, w->walk_last[id], vals, known, ns, &l) || f < 0 ||
          f > l || l > tiles)
        wv_fail(ctx, D_INTERNAL, n->loc, "walks: the iterate over '%s' "
                "walks no valid range of its %lld tiles in workgroup %lld",
                wavec_symbol_name(ctx, n->sym), (long long)tiles,
                (long long)g);
    }
  }
  return WAVEC_OK;
}
