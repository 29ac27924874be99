/* Pass `masksplit`. require: walks. A loop whose walk is bounded by a
 * relation D REL E and whose body masks with a select on a comparison of
 * the two dims' self indices (the causal mask) splits its walk: the tiles
 * the comparison leaves whole are walked in a loop of their own, in which
 * the masks (marked here) take their value; only the tiles the diagonal
 * crosses pay for the select. This pass decides where the walk splits;
 * the lowering lowers the loop in two parts. One remark per split loop
 * (given where the lowering meets the loop, in the program's order). */
#include "tir/lower.h"

/* The node `id` shows, through broadcasts and layout conversions. */
static const wv_node *through_views(lw *w, uint32_t id) {
  const wv_node *x = wv_get(w->g, id);
  while (x->op == WAVEC_OP_BROADCAST || x->op == WV_OP_CONVERT)
    x = wv_get(w->g, x->ops[0]);
  return x;
}

/* The dim of the self index `id` stands for, or 0. */
static wavec_sym index_dim(lw *w, uint32_t id) {
  const wv_node *x = through_views(w, id);
  return x->op == WAVEC_OP_SELF_INDEX ? x->sym : 0;
}

/* The value of the scalar computation `id` (literals and sizes, +, -, *,
 * casts; through broadcasts) where every size in it is known: *v; false
 * otherwise. */
static bool scalar_value(lw *w, uint32_t id, double *v) {
  const wv_node *x = through_views(w, id);
  const wv_binding *b = &w->k->bind;
  double l, r;
  switch (x->op) {
  case WAVEC_OP_SCALAR:
    if (!x->sym) {
      *v = x->fval;
      return true;
    }
    if (!b->known[x->sym] || b->dynamic[x->sym])
      return false;
    *v = b->is_float[x->sym] ? b->fval[x->sym] : (double)b->ival[x->sym];
    return true;
  case WAVEC_OP_CAST:
    return x->type.n == 0 && scalar_value(w, x->ops[0], v) &&
           (*v = (double)(int64_t)*v, true);
  case WAVEC_OP_ADD:
  case WAVEC_OP_SUB:
  case WAVEC_OP_MUL:
    if (x->type.n || !scalar_value(w, x->ops[0], &l) ||
        !scalar_value(w, x->ops[1], &r))
      return false;
    *v = x->op == WAVEC_OP_ADD ? l + r : x->op == WAVEC_OP_SUB ? l - r : l * r;
    return true;
  default:
    return false;
  }
}

/* The bound's offset of loop n as a known integer (0 without one); false
 * where it depends on a run-time size. */
static bool bound_offset(lw *w, const wv_node *n, int64_t *off) {
  *off = 0;
  return !n->rel_off ||
         ex_is_const(w->ctx, lw_concrete(w, n->rel_off, 0), off);
}

/* The dim of the self index in `id`, moved by *shift: the self index
 * itself (shift 0), or, any number of times, plus or minus a scalar
 * computation of known value (row + (K2 - M), row + K2 - M, col - 5). */
static wavec_sym shifted_index(lw *w, uint32_t id, int64_t *shift) {
  const wv_node *x = through_views(w, id);
  *shift = 0;
  if (x->op != WAVEC_OP_ADD && x->op != WAVEC_OP_SUB)
    return index_dim(w, id);
  double v;
  int64_t s;
  /* (index + scalar, scalar + index, index - scalar) */
  for (int i = 0; i < (x->op == WAVEC_OP_ADD ? 2 : 1); i++) {
    wavec_sym d = shifted_index(w, x->ops[i], &s);
    if (d && scalar_value(w, x->ops[1 - i], &v) && v == (double)(int64_t)v) {
      *shift = x->op == WAVEC_OP_ADD ? s + (int64_t)v : s - (int64_t)v;
      return d;
    }
  }
  return 0;
}

/* A causal mask of loop n: a select whose condition compares the self
 * indices of the loop's dim D and of its bound's dim E, E's moved by the
 * bound's offset where it has one (iterate(D REL E + OFF) and
 * select(REL(e + OFF, d))). Returns the comparison as D REL E, or
 * WAVEC_REL_NONE. */
static wavec_rel mask_rel(lw *w, const wv_node *n, uint32_t sel) {
  static const wavec_rel rel_of[WV_OP_COUNT] = {
      [WAVEC_OP_LT] = WAVEC_REL_LT, [WAVEC_OP_LE] = WAVEC_REL_LE,
      [WAVEC_OP_GT] = WAVEC_REL_GT, [WAVEC_OP_GE] = WAVEC_REL_GE};
  static const wavec_rel flip[] = {
      [WAVEC_REL_NONE] = WAVEC_REL_NONE, [WAVEC_REL_LT] = WAVEC_REL_GT,
      [WAVEC_REL_LE] = WAVEC_REL_GE, [WAVEC_REL_GT] = WAVEC_REL_LT,
      [WAVEC_REL_GE] = WAVEC_REL_LE};
  wv_node *s = wv_get(w->g, sel);
  if (s->op != WAVEC_OP_SELECT)
    return WAVEC_REL_NONE;
  const wv_node *c = through_views(w, s->ops[0]);
  wavec_rel r = rel_of[c->op];
  if (!r)
    return WAVEC_REL_NONE;
  int64_t sa, sb, off;
  wavec_sym a = shifted_index(w, c->ops[0], &sa),
            b = shifted_index(w, c->ops[1], &sb);
  if (!bound_offset(w, n, &off))
    return WAVEC_REL_NONE;
  /* (d + sa) REL (e + sb) is d REL e + (sb - sa) */
  if (a == n->sym && b == n->rel_dim && sb - sa == off)
    return r;
  if (a == n->rel_dim && b == n->sym && sa - sb == off)
    return flip[r];
  return WAVEC_REL_NONE;
}

/* Loop n (a bounded walk [first, last) over the tiles of D, T wide, for the
 * workgroup's tile [e0, e1] of E) whose body masks with one relation
 * D REL E: the tiles where the mask holds for every d and e, which are a
 * prefix of the walk for < and <= (tiles below floor((e0+1)/T) for <=,
 * floor(e0/T) for <) and a suffix for > and >= (from ceil((e1+1)/T),
 * ceil(e1/T)). Sets *mid to where the whole tiles end (or begin), clamped
 * to the walk, marks the masks (unmask_cand) and returns the relation;
 * WAVEC_REL_NONE (nothing to split) otherwise. */
static wavec_rel mask_split(lw *w, const wv_node *n, ex_t first, ex_t last,
                            ex_t *mid, const char **remark) {
  wavec_ctx *ctx = w->ctx;
  if (!n->rel || (ctx->test_hooks & WV_HOOK_NO_MASK_SPLIT))
    return WAVEC_REL_NONE;
  wv_block *body = &w->g->blocks.v[n->body];
  wavec_rel rel = WAVEC_REL_NONE;
  for (uint32_t i = 0; i < body->nodes.n; i++) {
    wavec_rel r = mask_rel(w, n, body->nodes.v[i]);
    if (r && rel && r != rel)
      return WAVEC_REL_NONE; /* (the marks stay unread: no split) */
    w->unmask_cand[body->nodes.v[i]] = r != WAVEC_REL_NONE;
    rel = r ? r : rel;
  }
  if (!rel)
    return WAVEC_REL_NONE;
  wv_diminfo *di = &w->d->dim[n->sym];
  ex_t T = ex_const(ctx, di->tile);
  ex_t e0, e1;
  lw_rel_tile(w, n, &e0, &e1);
  int64_t add[] = {[WAVEC_REL_LT] = 0, [WAVEC_REL_LE] = 1,
                   [WAVEC_REL_GT] = di->tile, [WAVEC_REL_GE] = di->tile - 1};
  ex_t base = rel == WAVEC_REL_LT || rel == WAVEC_REL_LE ? e0 : e1;
  ex_t m = ex_floordiv(ctx, ex_add(ctx, base, ex_const(ctx, add[rel])), T);
  *mid = lw_concrete(w, ex_max(ctx, first, ex_min(ctx, m, last)), 0);
  wv_buf b;
  wv_remark_start(w->k, n->loc, &b);
  wv_buf_printf(&b, "iterate over '%s': the mask compares '%s' with '%s'; "
                    "the tiles it leaves whole are walked %s, without it",
                wavec_symbol_name(ctx, n->sym), wavec_symbol_name(ctx, n->sym),
                wavec_symbol_name(ctx, n->rel_dim),
                rel == WAVEC_REL_LT || rel == WAVEC_REL_LE ? "first" : "last");
  *remark = wv_buf_str(&b);
  return rel;
}

wavec_status wv_pass_masksplit(wv_kernel *k) {
  lw *w = k->lw;
  uint32_t nn = w->g->nodes.n;
  w->split_rel = wv_alloc(k->ctx, nn * sizeof *w->split_rel);
  w->split_mid = wv_alloc(k->ctx, nn * sizeof *w->split_mid);
  w->split_remark = wv_alloc(k->ctx, nn * sizeof *w->split_remark);
  w->unmask_cand = wv_alloc(k->ctx, nn * sizeof *w->unmask_cand);
  for (uint32_t id = 1; id < nn; id++)
    if (wv_get(w->g, id)->op == WAVEC_OP_ITERATE)
      w->split_rel[id] =
          mask_split(w, wv_get(w->g, id), w->walk_first[id], w->walk_last[id],
                     &w->split_mid[id], &w->split_remark[id]);
  return WAVEC_OK;
}

void wv_print_masksplit(wv_kernel *k, wv_buf *b) {
  lw *w = k->lw;
  wv_buf_puts(b, "masksplit: the walks a causal mask splits\n");
  for (uint32_t id = 1; id < w->g->nodes.n; id++) {
    wavec_rel rel = w->split_rel[id];
    if (!rel)
      continue;
    wv_node *n = wv_get(w->g, id);
    bool whole_first = rel == WAVEC_REL_LT || rel == WAVEC_REL_LE;
    wv_buf_printf(b, "  %%%u iterate over '%s' (%u:%u): mask '%s' %s '%s'; "
                     "the whole tiles %s, split at ",
                  id, wavec_symbol_name(k->ctx, n->sym), n->loc.line,
                  n->loc.col, wavec_symbol_name(k->ctx, n->sym),
                  wv_rel_names[rel], wavec_symbol_name(k->ctx, n->rel_dim),
                  whole_first ? "first" : "last");
    ex_print(k->ctx, b, w->split_mid[id]);
    wv_buf_puts(b, "; masks");
    wv_block *body = &w->g->blocks.v[n->body];
    for (uint32_t i = 0; i < body->nodes.n; i++)
      if (w->unmask_cand[body->nodes.v[i]])
        wv_buf_printf(b, " %%%u", body->nodes.v[i]);
    wv_buf_puts(b, "\n");
  }
}

/* What masksplit promises: a split loop is a bounded one whose body holds
 * a marked select, and it splits within its walk: first <= mid <= last in
 * every workgroup (lw_wg_at). */
wavec_status wv_verify_masksplit(wv_kernel *k) {
  lw *w = k->lw;
  wavec_ctx *ctx = k->ctx;
  uint32_t ns = ctx->sym_names.n;
  int64_t *vals = wv_alloc(ctx, ns * sizeof *vals);
  bool *known = wv_alloc(ctx, ns * sizeof *known);
  for (int a = 0; a < 3; a++)
    known[w->d->WG[a]] = true;
  for (uint32_t id = 1; id < w->g->nodes.n; id++) {
    wv_node *n = wv_get(w->g, id);
    if (!w->split_rel[id] || w->d->dim[n->sym].dynamic ||
        w->d->dim[n->rel_dim].dynamic)
      continue; /* (dynamic sizes: the simulator checks, at its sizes) */
    wv_block *body = &w->g->blocks.v[n->body];
    bool marked = false;
    for (uint32_t i = 0; i < body->nodes.n; i++)
      marked |= w->unmask_cand[body->nodes.v[i]] &&
                wv_get(w->g, body->nodes.v[i])->op == WAVEC_OP_SELECT;
    bool bad = !n->rel || !marked;
    int axis = w->d->dim[n->rel_dim].wg_axis;
    int64_t grid = w->d->grid[axis];
    for (int64_t i = 0; !bad && i < lw_wg_count(grid); i++) {
      vals[w->d->WG[axis]] = lw_wg_at(grid, i);
      int64_t f, m, l;
      bad = !ex_eval(ctx, w->walk_first[id], vals, known, ns, &f) ||
            !ex_eval(ctx, w->split_mid[id], vals, known, ns, &m) ||
            !ex_eval(ctx, w->walk_last[id], vals, known, ns, &l) || m < f ||
            m > l;
    }
    if (bad)
      wv_fail(ctx, D_INTERNAL, n->loc, "masksplit: the iterate over '%s' "
              "splits outside its walk or without a mask",
              wavec_symbol_name(ctx, n->sym));
  }
  return WAVEC_OK;
}
