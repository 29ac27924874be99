/* The lowering: reductions, within a thread, then across lanes with xor
 * shuffles, then across waves through shared memory, then along the
 * chain. */
#include <math.h>

#include "tir/lower.h"

/* Element e of the reduced operand x of reduction n: past the edge of a
 * ragged reduced dimension, the reduction's identity (unless x is a read
 * filled with it). */
static uint32_t elem_x(lw *w, uint32_t x, uint32_t e, tir_ty ty,
                       const wv_node *n, bool *guarded) {
  double identity = n->op == WAVEC_OP_MAX ? -INFINITY : 0.0;
  if (lw_fills_with(w, x, identity))
    return lw_elem(w, x, e, ty);
  return lw_elem_unpadded(w, x, e, ty, n->sym, identity, guarded);
}

/* How a reduction along dim `di` of layout l goes; the same for every
 * reduction of that layout and dim, so worked out once (shape_of). */
typedef struct reduce_shape {
  const wv_layout *l;
  int di;
  /* by element: the first element of its row (the same coordinates but
   * along D, in every lane), which computes the row's result for all */
  uint32_t *rep;
  /* the other elements a representative e folds in within the thread,
   * terms[at[e] .. at[e + 1]): each distinct D coordinate once */
  uint32_t *terms, *at;
  /* the lane bits that change only D: shuffled across, in order */
  int bits[8];
  int nbits;
  /* by element, for a sum: the lanes that count it (bit l % 32 of word
   * l / 32: lane l), where not every lane does; NULL where every lane
   * does. Lanes of a shuffle's orbit may hold the same coordinate (a tile
   * of 7 over 32 lanes holds element i in lanes i, i + 7, ...): only the
   * first counts it, or the shuffles would add it once per copy. */
  uint32_t **own;
} reduce_shape;

/* Coordinates of element e in lane l (along dim i of the layout). */
#define CO(l, e) (co + ((size_t)(l)*ne + (e)) * nd)

/* Each element's row representative (see reduce_shape). */
static uint32_t *row_reps(lw *w, const wv_node *n, const int64_t *co,
                          uint32_t ne, uint32_t nd, int di) {
  int lanes = w->d->lanes;
  uint32_t *rep = wv_alloc(w->ctx, (ne ? ne : 1) * sizeof *rep);
  for (uint32_t e = 0; e < ne; e++) {
    rep[e] = e;
    for (uint32_t f = 0; f < e; f++) {
      bool row_all = true, row_any = false;
      for (int l = 0; l < lanes; l++) {
        bool row = true;
        for (uint32_t i = 0; i < nd; i++)
          if ((int)i != di && CO(l, e)[i] != CO(l, f)[i])
            row = false;
        row_all &= row;
        row_any |= row;
      }
      if (row_any != row_all)
        wv_fail(w->ctx, D_INTERNAL, n->loc,
                "reduction: the element rows differ between lanes");
      if (row_all && rep[e] == e)
        rep[e] = rep[f];
    }
  }
  return rep;
}

/* The elements each representative folds in within the thread: those of
 * its row whose D coordinate no earlier one of the row has (in every
 * lane). */
static void thread_terms(lw *w, reduce_shape *sh, const int64_t *co,
                         uint32_t ne, uint32_t nd) {
  int lanes = w->d->lanes, di = sh->di;
  const uint32_t *rep = sh->rep;
  sh->at = wv_alloc(w->ctx, (ne + 1) * sizeof *sh->at);
  sh->terms = wv_alloc(w->ctx, (ne ? ne : 1) * sizeof *sh->terms);
  uint32_t t = 0;
  for (uint32_t e = 0; e < ne; e++) {
    sh->at[e] = t;
    if (rep[e] != e)
      continue;
    for (uint32_t f = 0; f < ne; f++) {
      if (f == e || rep[f] != e)
        continue;
      bool newd_any = false;
      for (int l = 0; l < lanes; l++) {
        bool dup = CO(l, f)[di] == CO(l, e)[di];
        for (uint32_t g = 0; g < f && !dup; g++)
          dup = g != e && rep[g] == e && CO(l, g)[di] == CO(l, f)[di];
        newd_any |= !dup;
      }
      if (newd_any) /* (lanes where it repeats: owners, below) */
        sh->terms[t++] = f;
    }
  }
  sh->at[ne] = t;
}

/* Does lane l hold, in an element of row `e` before element f of that
 * row (e first, then its terms), the D coordinate v? */
static bool holds_before(const reduce_shape *sh, const int64_t *co,
                         uint32_t ne, uint32_t nd, int l, uint32_t e,
                         uint32_t f, int64_t v) {
  int di = sh->di;
  if (f == e)
    return false;
  if (CO(l, e)[di] == v)
    return true;
  for (uint32_t t = sh->at[e]; t < sh->at[e + 1] && sh->terms[t] != f; t++)
    if (CO(l, sh->terms[t])[di] == v)
      return true;
  return false;
}

/* The lanes that count each element of a sum (reduce_shape.own): those
 * where no element of its row before it holds its D coordinate, and no
 * lane of its shuffle orbit below it (l ^ m for m a sum of the shuffled
 * bits) holds it in the row at all. */
static void lane_owners(lw *w, reduce_shape *sh, const int64_t *co,
                        uint32_t ne, uint32_t nd) {
  int lanes = w->d->lanes, di = sh->di;
  int span = 1 << sh->nbits;
  /* the orbit's offsets: every sum of shuffled bits */
  int *orbit = wv_alloc(w->ctx, (size_t)span * sizeof *orbit);
  for (int k = 0; k < span; k++)
    for (int b = 0; b < sh->nbits; b++)
      orbit[k] |= k >> b & 1 ? sh->bits[b] : 0;
  sh->own = wv_alloc(w->ctx, (ne ? ne : 1) * sizeof *sh->own);
  for (uint32_t e = 0; e < ne; e++) {
    if (sh->rep[e] != e)
      continue;
    for (uint32_t t = sh->at[e]; t <= sh->at[e + 1]; t++) {
      uint32_t f = t == sh->at[e + 1] ? e : sh->terms[t];
      uint32_t *own = wv_alloc(w->ctx, ((size_t)lanes + 31) / 32 * 4);
      bool every = true;
      for (int l = 0; l < lanes; l++) {
        int64_t v = CO(l, f)[di];
        bool counts = !holds_before(sh, co, ne, nd, l, e, f, v);
        for (int k = 1; k < span && counts; k++) {
          int o = l ^ orbit[k];
          counts = o > l || CO(o, e)[di] != v;
          for (uint32_t u = sh->at[e]; u < sh->at[e + 1] && counts; u++)
            counts = o > l || CO(o, sh->terms[u])[di] != v;
        }
        own[l / 32] |= (uint32_t)counts << l % 32;
        every &= counts;
      }
      sh->own[f] = every ? NULL : own;
    }
  }
}

/* The lane bits across which the reduction shuffles: those that change
 * only the D coordinate of every element. */
static void lane_bits(lw *w, const wv_node *n, reduce_shape *sh,
                      const int64_t *co, uint32_t ne, uint32_t nd) {
  int lanes = w->d->lanes, di = sh->di;
  for (int bit = 1; bit < lanes; bit <<= 1) {
    int kind = -1; /* 0: other rows, 1: reduce, 2: copies */
    for (int l = 0; l < lanes; l++) {
      for (uint32_t e = 0; e < ne; e++) {
        bool row = true;
        for (uint32_t i = 0; i < nd; i++)
          if ((int)i != di && CO(l, e)[i] != CO(l ^ bit, e)[i])
            row = false;
        int kk = !row ? 0 : CO(l, e)[di] != CO(l ^ bit, e)[di] ? 1 : 2;
        if (kind >= 0 && kind != kk && (kind == 0 || kk == 0))
          wv_fail(w->ctx, D_UNSUPPORTED, n->loc,
                  "%s over '%s': the lanes hold its rows and its '%s' "
                  "coordinates interleaved (lanes %d and %d differ in the "
                  "row for some elements and only in '%s' for others), so "
                  "no shuffle pattern reduces a row alone; give the dims "
                  "vector shapes whose counts are powers of 2, or leave "
                  "them to the compiler",
                  wv_ops[n->op].name, wavec_symbol_name(w->ctx, n->sym),
                  wavec_symbol_name(w->ctx, n->sym), l, l ^ bit,
                  wavec_symbol_name(w->ctx, n->sym));
        if (kind >= 0 && kind != kk)
          wv_fail(w->ctx, D_INTERNAL, n->loc,
                  "reduction: lane bit %d mixes reduced coordinates and "
                  "copies", bit);
        kind = kk;
      }
    }
    if (kind == 1)
      sh->bits[sh->nbits++] = bit;
  }
}
#undef CO

/* The shape of reduction n over layout l along its dim di. Memoized. */
static const reduce_shape *shape_of(lw *w, const wv_node *n,
                                    const wv_layout *l, int di) {
  for (uint32_t i = 0; i < w->reduce_shapes.n; i++) {
    reduce_shape *sh = &w->reduce_shapes.v[i];
    if (sh->di == di && (sh->l == l || wv_layout_eq(sh->l, l)))
      return sh;
  }
  reduce_shape sh = {.l = l, .di = di};
  const int64_t *co = lw_frag_table(w, l);
  sh.rep = row_reps(w, n, co, l->nelem, l->n, di);
  thread_terms(w, &sh, co, l->nelem, l->n);
  lane_bits(w, n, &sh, co, l->nelem, l->n);
  lane_owners(w, &sh, co, l->nelem, l->n);
  vec_push(w->ctx, &w->reduce_shapes, sh);
  return &w->reduce_shapes.v[w->reduce_shapes.n - 1];
}

/* Element f of x where the lanes in sh->own[f] count it (a sum's copies,
 * reduce_shape.own), else the sum's identity, 0. */
static uint32_t owned_x(lw *w, const wv_node *n, const reduce_shape *sh,
                        uint32_t f, tir_ty ty, bool *guarded) {
  uint32_t v = elem_x(w, n->ops[0], f, ty, n, guarded);
  const uint32_t *own = n->op == WAVEC_OP_SUM ? sh->own[f] : NULL;
  if (!own) /* (every lane counts it; a max takes copies alike) */
    return v;
  /* the lane's word of the mask (by lane / 32), then its bit: (word >>
   * lane % 32) mod 2 */
  wavec_ctx *ctx = w->ctx;
  int words = (w->d->lanes + 31) / 32;
  uint32_t word = lw_iconst(w, (int32_t)own[words - 1]);
  if (words > 1) {
    uint32_t q = lw_expr(w, ex_floordiv(ctx, w->d->lane, ex_const(ctx, 32)));
    for (int k = words - 2; k >= 0; k--) {
      uint32_t is = lw_reg(w, TY_PRED), sel = lw_reg(w, TY_I32);
      lw_emit(w, T_SETP, TY_PRED, is, q, lw_iconst(w, k), 0, TIR_CMP_EQ);
      lw_emit(w, T_SELP, TY_I32, sel, is, lw_iconst(w, (int32_t)own[k]),
              word, 0);
      word = sel;
    }
  }
  uint32_t at = lw_expr(w, ex_mod(ctx, w->d->lane, ex_const(ctx, 32)));
  uint32_t bit = lw_op2(w, T_MOD, TY_I32, lw_op2(w, T_SHR, TY_I32, word, at),
                        lw_iconst(w, 2));
  uint32_t p = lw_reg(w, TY_PRED);
  lw_emit(w, T_SETP, TY_PRED, p, bit, lw_iconst(w, 1), 0, TIR_CMP_EQ);
  uint32_t zero = lw_reg(w, ty);
  lw_emit(w, T_CONST, ty, zero, 0, 0, 0, 0);
  uint32_t r = lw_reg(w, ty);
  lw_emit(w, T_SELP, ty, r, p, v, zero, 0);
  return r;
}

/* Within the thread: each representative folds in the elements of its row
 * as a balanced tree (adjacent pairs, level by level: the levels' ops are
 * independent of each other, so the dependent chain is log2 of the row's
 * elements deep, not their count), then, after an earlier link of the
 * chain, that link's partial, into registers first.. . The order of the
 * sums is this one, the same in the simulator as on the GPU (the thread
 * program fixes it). */
static void reduce_in_thread(lw *w, const wv_node *n, const reduce_shape *sh,
                             uint32_t prev, uint32_t first, bool *guarded) {
  uint32_t ne = sh->l->nelem;
  tir_ty ty = tir_ty_of(n->type.dt);
  tir_op op = lw_unary_ops[n->op];
  uint32_t *v = wv_alloc(w->ctx, (ne ? ne : 1) * sizeof *v);
  for (uint32_t e = 0; e < ne; e++) {
    if (sh->rep[e] != e)
      continue;
    uint32_t k = 0;
    v[k++] = owned_x(w, n, sh, e, ty, guarded);
    for (uint32_t t = sh->at[e]; t < sh->at[e + 1]; t++)
      v[k++] = owned_x(w, n, sh, sh->terms[t], ty, guarded);
    while (k > 1) {
      uint32_t m = 0;
      for (uint32_t i = 0; i + 1 < k; i += 2)
        v[m++] = lw_op2(w, op, ty, v[i], v[i + 1]);
      if (k % 2)
        v[m++] = v[k - 1];
      k = m;
    }
    uint32_t acc = v[0];
    if (prev)
      acc = lw_op2(w, op, ty, w->vals[prev] + e, acc);
    lw_emit(w, T_MOV, ty, first + e, acc, 0, 0, 0);
  }
}

/* One remark for the padding a ragged reduced dim brings in. */
static void remark_padding(lw *w, uint32_t id, const wv_node *n) {
  wv_buf what;
  wv_buf_init(&what, w->ctx);
  wv_buf_printf(&what, "%s takes the padding past the edge of",
                wv_ops[n->op].name);
  lw_remark_guards(w, id, wv_buf_str(&what), &n->sym, 1,
                   n->op == WAVEC_OP_MAX ? " as -inf" : " as 0");
}

/* Across lanes: an xor shuffle per lane bit that changes only D. */
static void reduce_across_lanes(lw *w, const wv_node *n,
                                const reduce_shape *sh, uint32_t first) {
  tir_ty ty = tir_ty_of(n->type.dt);
  tir_op op = lw_unary_ops[n->op];
  for (int b = 0; b < sh->nbits; b++)
    for (uint32_t e = 0; e < sh->l->nelem; e++) {
      if (sh->rep[e] != e)
        continue;
      uint32_t s = lw_reg(w, ty);
      lw_emit(w, T_SHFL, ty, s, first + e, 0, 0, sh->bits[b]);
      lw_emit(w, op, ty, first + e, first + e, s, 0, 0);
    }
}

/* The shared byte address of element e of clone c's partials of wave
 * `wave` (clone c's slots from `at`, ne elements a lane): (clone, wave,
 * element, lane) after the staged tiles. */
static uint32_t slot_addr(lw *w, int64_t at, ex_t wave, uint32_t ne,
                          uint32_t e, int64_t esize) {
  wavec_ctx *ctx = w->ctx;
  int lanes = w->d->lanes;
  ex_t slot = ex_add(
      ctx, ex_const(ctx, at),
      ex_add(ctx, ex_mul(ctx, wave, ex_const(ctx, lanes * ne)),
             ex_add(ctx, ex_const(ctx, e * lanes), w->d->lane)));
  ex_t addr = ex_add(ctx, ex_const(ctx, w->stage_bytes),
                     ex_mul(ctx, slot, ex_const(ctx, esize)));
  return lw_expr(w, lw_concrete(w, addr, e));
}

/* Across waves: when the waves of the workgroup split D, each stores its
 * partials, and every wave combines all of them in wave order (so every
 * wave gets the same bits). The clones c of a reduction (sh[c], their
 * partials in first[c]..) share one round trip: one region, two barriers. */
static void reduce_across_waves(lw *w, const wv_node *n,
                                const reduce_shape *const *sh,
                                const uint32_t *first, uint32_t nc) {
  wavec_ctx *ctx = w->ctx;
  wv_dist *d = w->d;
  int axis = d->dim[n->sym].wg_axis;
  if (axis < 0 || d->waves[axis] <= 1)
    return;
  tir_ty ty = tir_ty_of(n->type.dt);
  tir_op op = lw_unary_ops[n->op];
  int lanes = d->lanes;
  int64_t nw = d->waves[0] * d->waves[1] * d->waves[2];
  int64_t esize = tir_ty_bytes(ty);
  /* clone c's slots after those of the clones before it */
  int64_t *at = wv_alloc(ctx, ((size_t)nc + 1) * sizeof *at);
  at[0] = 0;
  for (uint32_t c = 0; c < nc; c++)
    at[c + 1] = at[c] + nw * lanes * sh[c]->l->nelem;
  int64_t bytes = (at[nc] * esize + 15) / 16 * 16;
  if (bytes > w->convert_bytes)
    w->convert_bytes = bytes;
  int64_t stride = axis == 0   ? 1
                   : axis == 1 ? d->waves[0]
                               : d->waves[0] * d->waves[1];
  ex_t wid = lw_wave_id(w);
  ex_t coord = wv_wave_coord(ctx, d, axis);
  ex_t others = ex_sub(ctx, wid, ex_mul(ctx, coord, ex_const(ctx, stride)));
  uint32_t from = w->p->code.n;
  lw_reuse_barrier(w, TIR_REGION_SCRATCH);
  for (uint32_t c = 0; c < nc; c++) {
    uint32_t ne = sh[c]->l->nelem;
    for (uint32_t e = 0; e < ne; e++)
      if (sh[c]->rep[e] == e)
        lw_emit(w, T_STS, ty, 0, slot_addr(w, at[c], wid, ne, e, esize),
                first[c] + e, 0, 0);
  }
  lw_region_barrier(w, TIR_REGION_SCRATCH);
  for (uint32_t c = 0; c < nc; c++) {
    uint32_t ne = sh[c]->l->nelem;
    for (uint32_t e = 0; e < ne; e++) {
      if (sh[c]->rep[e] != e)
        continue;
      uint32_t acc = 0;
      for (int64_t j = 0; j < d->waves[axis]; j++) {
        ex_t wj = ex_add(ctx, others, ex_const(ctx, j * stride));
        uint32_t v = lw_reg(w, ty);
        uint32_t a = slot_addr(w, at[c], wj, ne, e, esize);
        lw_emit(w, T_LDS, ty, v, a, 0, 0, 0);
        acc = acc ? lw_op2(w, op, ty, acc, v) : v;
      }
      lw_emit(w, T_MOV, ty, first[c] + e, acc, 0, 0, 0);
    }
  }
  lw_tag_region(w, from, TIR_REGION_SCRATCH);
}

/* The chain's initial value folded into each row's result, then the
 * result copied to the row's other elements. */
static void finish(lw *w, const wv_node *n, const reduce_shape *sh,
                   uint32_t init, uint32_t first) {
  tir_ty ty = tir_ty_of(n->type.dt);
  tir_op op = lw_unary_ops[n->op];
  uint32_t ne = sh->l->nelem;
  /* (a sum that leaves parts adds its initial value in the first part) */
  uint32_t part = init ? lw_first_part(w, n) : 0;
  if (init)
    for (uint32_t e = 0; e < ne; e++)
      if (sh->rep[e] == e)
        lw_emit(w, op, ty, first + e, first + e,
                lw_from_first_part(w, part, lw_elem(w, init, e, ty), ty), 0,
                0);
  for (uint32_t e = 0; e < ne; e++)
    if (sh->rep[e] != e)
      lw_emit(w, T_MOV, ty, first + e, first + sh->rep[e], 0, 0, 0);
}

/* A reduction link. A link followed by another one only reduces within
 * the thread; the next link folds in its partials, and the last one goes
 * across lanes and waves and then folds in the chain's initial value. */
/* Reduction link id within the thread (its shape in *shp, its initial
 * value in *initp): its registers. */
static uint32_t link_in_thread(lw *w, uint32_t id, const reduce_shape **shp,
                               uint32_t *initp) {
  wv_node *n = wv_get(w->g, id);
  const wv_layout *lx = w->ix->info[n->ops[0]].layout;
  int di = -1;
  for (uint32_t i = 0; i < lx->n; i++)
    if (lx->d[i].dim == n->sym)
      di = (int)i;
  wv_assert(w->ctx, di >= 0);
  const reduce_shape *sh = shape_of(w, n, lx, di);
  uint32_t init = n->nops > 1 ? n->ops[1] : 0, prev = 0;
  if (init && w->red_more[init]) {
    prev = init;
    init = w->red_init[prev];
  }
  /* a sum over a dim split over workgroups leaves each its part, which
   * only write(..., reduce = add) takes (pass constraints; the first
   * workgroup adds its initial value, finish); a max of parts has no such
   * write */
  if ((wv_partial(w->d, n) & WV_PARTS_GROUPS) && n->op != WAVEC_OP_SUM)
    wv_fail(w->ctx, D_HARDWARE, n->loc,
            "a max over '%s', which is split over workgroups, is not "
            "supported (the workgroups' parts cannot be combined in memory); "
            "keep it in one workgroup's tile",
            wavec_symbol_name(w->ctx, n->sym));
  uint32_t first = lw_new_regs(w, tir_ty_of(n->type.dt), lx->nelem);
  bool guarded = false;
  reduce_in_thread(w, n, sh, prev, first, &guarded);
  if (guarded)
    remark_padding(w, id, n);
  w->vals[id] = first;
  *shp = sh;
  *initp = init;
  return first;
}

/* Has value v been lowered (or is it a scalar, made where used)? */
static bool ready(lw *w, uint32_t v) {
  return !v || w->vals[v] || wv_get(w->g, v)->op == WAVEC_OP_SCALAR;
}

/* Link x of a chain (not its last) lowered now, within the thread, if its
 * operands are (and the links before it, likewise); false if not. It is
 * then marked as lowered in this scope's group `tag`. */
static bool link_ready(lw *w, uint32_t x, uint32_t tag) {
  if (w->vals[x])
    return true;
  const wv_node *n = wv_get(w->g, x);
  if (!w->red_more[x] || !ready(w, n->ops[0]))
    return false;
  uint32_t init = n->nops > 1 ? n->ops[1] : 0;
  if (init && !ready(w, init) &&
      !(w->red_more[init] && link_ready(w, init, tag)))
    return false;
  const reduce_shape *sh;
  uint32_t i0;
  link_in_thread(w, x, &sh, &i0);
  w->red_init[x] = i0;
  w->grouped[x] = tag | LW_GROUP_DONE;
  return true;
}

/* A reduction link. A link followed by another one only reduces within
 * the thread; the next link folds in its partials, and the last one goes
 * across lanes and waves and then folds in the chain's initial value.
 * Where the waves split the reduced dim, the last links of the
 * reduction's later clones in this block whose operands are computed come
 * along with the first: one round trip through shared memory for all (a
 * row tile a clone), not one each; they then find their registers set. */
void lw_reduce(lw *w, uint32_t id) {
  wavec_ctx *ctx = w->ctx;
  wv_node *n = wv_get(w->g, id);
  uint32_t tag = lw_group_tag(w);
  if ((w->grouped[id] & ~3u) == tag)
    return; /* lowered with the first clone of its group */
  const reduce_shape *sh;
  uint32_t init;
  uint32_t first = link_in_thread(w, id, &sh, &init);
  if (w->red_more[id]) {
    w->red_init[id] = init;
    return;
  }
  int axis = w->d->dim[n->sym].wg_axis;
  bool waves = axis >= 0 && w->d->waves[axis] > 1;
  const wv_block *b = &w->g->blocks.v[n->block];
  uint32_t *ids = wv_alloc(ctx, b->nodes.n * sizeof *ids), nc = 1;
  uint32_t nl = waves ? lw_clones_from(w, id, ids) : 1;
  ids[0] = id;
  for (uint32_t i = 1; i < nl; i++) {
    uint32_t x = ids[i];
    const wv_node *xn = wv_get(w->g, x);
    uint32_t xi = xn->nops > 1 ? xn->ops[1] : 0;
    /* (a chain's earlier links come along: within the thread) */
    bool ok = !w->red_more[x] && ready(w, xn->ops[0]) &&
              (ready(w, xi) || (w->red_more[xi] && link_ready(w, xi, tag)));
    if (ok && xi && w->red_more[xi])
      ok = ready(w, w->red_init[xi]);
    if (ok)
      ids[nc++] = x;
  }
  const reduce_shape **shs = wv_alloc(ctx, nc * sizeof *shs);
  uint32_t *firsts = wv_alloc(ctx, nc * sizeof *firsts);
  uint32_t *inits = wv_alloc(ctx, nc * sizeof *inits);
  shs[0] = sh, firsts[0] = first, inits[0] = init;
  for (uint32_t c = 1; c < nc; c++)
    firsts[c] = link_in_thread(w, ids[c], &shs[c], &inits[c]);
  for (uint32_t c = 0; c < nc; c++) {
    w->grouped[ids[c]] = tag | LW_GROUP_DONE;
    reduce_across_lanes(w, wv_get(w->g, ids[c]), shs[c], firsts[c]);
  }
  reduce_across_waves(w, n, shs, firsts, nc);
  for (uint32_t c = 0; c < nc; c++)
    finish(w, wv_get(w->g, ids[c]), shs[c], inits[c], firsts[c]);
}

int64_t lw_reduce_bound(lw *w) {
  wv_dist *d = w->d;
  int64_t most = 0, nw = d->waves[0] * d->waves[1] * d->waves[2];
  for (uint32_t id = 1; id < w->g->nodes.n; id++) {
    const wv_node *n = wv_get(w->g, id);
    if (n->op != WAVEC_OP_SUM && n->op != WAVEC_OP_MAX)
      continue;
    int axis = d->dim[n->sym].wg_axis;
    if (axis < 0 || d->waves[axis] <= 1)
      continue;
    /* its clones from it on in one round trip (lw_reduce; the first's:
     * all of them) */
    const wv_block *b = &w->g->blocks.v[n->block];
    uint32_t *ids = wv_alloc(w->ctx, b->nodes.n * sizeof *ids);
    uint32_t nc = lw_clones_from(w, id, ids);
    int64_t ne = 0;
    for (uint32_t j = 0; j < nc; j++)
      ne += w->ix->info[wv_get(w->g, ids[j])->ops[0]].layout->nelem;
    int64_t bytes =
        (nw * d->lanes * ne * tir_ty_bytes(tir_ty_of(n->type.dt)) + 15) / 16 *
        16;
    most = bytes > most ? bytes : most;
  }
  return most;
}
