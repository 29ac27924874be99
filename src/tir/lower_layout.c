/* The lowering: what a layout puts in which lane, evaluated once per
 * layout (frag_table, elem_reps). */
#include "tir/lower.h"

/* The memo entry of layout l (one per distinct layout). */
static layout_facts *facts_of(lw *w, const wv_layout *l) {
  for (uint32_t i = 0; i < w->facts.n; i++)
    if (w->facts.v[i].l == l || wv_layout_eq(w->facts.v[i].l, l))
      return &w->facts.v[i];
  layout_facts f = {l, NULL, NULL};
  vec_push(w->ctx, &w->facts, f);
  return &w->facts.v[w->facts.n - 1];
}

/* The coordinates of every element of layout l in every lane, by
 * [lane][element][dim of l]: coordinates relative to the vector tile,
 * evaluated at every (lane, element) at once. Memoized. */
const int64_t *lw_frag_table(lw *w, const wv_layout *l) {
  layout_facts *f = facts_of(w, l);
  if (f->frag)
    return f->frag;
  wavec_ctx *ctx = w->ctx;
  int lanes = w->d->lanes;
  size_t np = (size_t)lanes * l->nelem;
  int64_t *t = wv_alloc(ctx, (np * l->n + 1) * sizeof *t);
  /* every (lane, element) at once: point ln * nelem + e */
  const int64_t **cols = wv_alloc(ctx, ctx->sym_names.n * sizeof *cols);
  int64_t *lane = wv_alloc_big(ctx, (np + 1) * sizeof *lane),
          *elem = wv_alloc_big(ctx, (np + 1) * sizeof *elem),
          *co = wv_alloc_big(ctx, (np + 1) * sizeof *co);
  for (size_t p = 0; p < np; p++) {
    lane[p] = (int64_t)(p / (l->nelem ? l->nelem : 1));
    elem[p] = (int64_t)(p % (l->nelem ? l->nelem : 1));
  }
  cols[w->d->T[0]] = lane;
  cols[w->d->E] = elem;
  for (uint32_t i = 0; i < l->n; i++) {
    if (!ex_eval_batch(ctx, l->d[i].frag, cols, NULL, NULL,
                       ctx->sym_names.n, np, co))
      wv_fail(ctx, D_INTERNAL, w->loc, "a layout depends on more than the "
              "lane and the element number");
    for (size_t p = 0; p < np; p++)
      t[p * l->n + i] = co[p];
  }
  wv_release(ctx, lane);
  wv_release(ctx, elem);
  wv_release(ctx, co);
  return f->frag = t;
}

/* For each element e of layout l, the first element with the same
 * coordinates in every lane (e itself when none comes before it): a value
 * whose type lacks a dim the layout's elements range over (a row maximum
 * in the accumulator's layout) holds each of its values several times.
 * Coordinates are compared as simplified expressions in the lane, so a
 * sharing the simplifier cannot prove is missed, never invented.
 * Memoized. */
const uint32_t *lw_elem_reps(lw *w, const wv_layout *l) {
  wavec_ctx *ctx = w->ctx;
  layout_facts *f = facts_of(w, l);
  if (f->rep)
    return f->rep;
  uint32_t ne = l->nelem, nd = l->n;
  uint32_t *rep = wv_alloc(ctx, (ne ? ne : 1) * sizeof *rep);
  /* the coordinates of each element, in the lane only (hash-consed: equal
   * expressions are the same handle) */
  ex_t *co = wv_alloc(ctx, ((size_t)ne * nd + 1) * sizeof *co);
  for (uint32_t e = 0; e < ne; e++)
    for (uint32_t d = 0; d < nd; d++)
      co[(size_t)e * nd + d] = lw_concrete(w, l->d[d].frag, e);
  for (uint32_t e = 0; e < ne; e++) {
    rep[e] = e;
    for (uint32_t g = 0; g < e && rep[e] == e; g++)
      if (!memcmp(co + (size_t)g * nd, co + (size_t)e * nd, nd * sizeof *co))
        rep[e] = g;
  }
  return f->rep = rep;
}
