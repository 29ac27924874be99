/* Pass `index`. require: constraints. Gives every value node a layout
 * (dist.h) over exactly its own dimensions — invariant 1 of DESIGN.md: no
 * layout ever carries a dimension its node does not have.
 *
 * Anchors are mma operands and results (the target's fragment layouts).
 * Layouts flow forward through elementwise ops, casts, permutes, reductions
 * (projected) and loop-carried values; nodes whose layout is free (reads,
 * constants, self_index, explicit broadcasts) take the demand of their users,
 * mma users first. What is still free afterwards gets the default layout from
 * the vector shapes. Mismatches are not errors: pass `broadcast` inserts the
 * broadcasts and layout conversions that reconcile them. */
#include "passes/dist.h"

wv_index *wv_kernel_index(wv_kernel *k) { return k->index; }

wv_index *wv_index_new(wv_kernel *k, uint32_t nnodes) {
  wv_index *ix = wv_alloc(k->ctx, sizeof *ix);
  ix->n = nnodes;
  ix->info = wv_alloc_big(k->ctx, nnodes * sizeof *ix->info);
  return ix;
}

const wv_ldim *wv_layout_dim(const wv_layout *l, wavec_sym d) {
  for (uint32_t i = 0; i < l->n; i++)
    if (l->d[i].dim == d)
      return &l->d[i];
  return NULL;
}

bool wv_layout_eq(const wv_layout *a, const wv_layout *b) {
  if (a == b)
    return true;
  if (!a || !b || a->nelem != b->nelem || a->n != b->n)
    return false;
  for (uint32_t i = 0; i < a->n; i++) {
    bool found = false;
    for (uint32_t j = 0; j < b->n && !found; j++)
      found = a->d[i].dim == b->d[j].dim && a->d[i].v == b->d[j].v &&
              a->d[i].frag == b->d[j].frag;
    if (!found)
      return false;
  }
  return true;
}

wv_layout *wv_layout_project(wavec_ctx *ctx, const wv_layout *l,
                             const wv_type *t) {
  wv_layout *p = wv_alloc(ctx, sizeof *p);
  p->nelem = l->nelem;
  for (uint32_t i = 0; i < t->n; i++) {
    bool found = false;
    for (uint32_t j = 0; j < l->n && !found; j++) {
      if (l->d[j].dim == t->dims[i]) {
        p->d[p->n++] = l->d[j];
        found = true;
      }
    }
    wv_assert(ctx, found);
  }
  return p;
}

ex_t wv_index_expr(wv_kernel *k, wavec_sym dim, const wv_layout *l,
                   int64_t coord) {
  wavec_ctx *ctx = k->ctx;
  wv_dist *d = k->dist;
  for (uint32_t i = 0; i < l->n; i++) {
    if (l->d[i].dim != dim)
      continue;
    ex_t e = ex_add(ctx, d->dim[dim].base,
                    ex_const(ctx, coord * l->d[i].v));
    return ex_add(ctx, e, l->d[i].frag);
  }
  wv_assert(ctx, 0);
  return 0;
}

/* "start : size : stride" when e = start + stride*$E, else e itself. */
void wv_index_print(wv_kernel *k, wv_buf *b, ex_t e, uint32_t nelem) {
  wavec_ctx *ctx = k->ctx;
  wavec_sym E = k->dist->E;
  ex_t zero = ex_const(ctx, 0), one = ex_const(ctx, 1);
  ex_t start = ex_subst(ctx, e, 1, &E, &zero);
  ex_t next = ex_subst(ctx, e, 1, &E, &one);
  ex_t stride = ex_sub(ctx, next, start);
  int64_t sv;
  /* Affine in $E exactly when e == start + stride*$E as canonical forms. */
  if (ex_is_const(ctx, stride, &sv) &&
      ex_add(ctx, start, ex_mul(ctx, stride, ex_sym(ctx, E))) == e) {
    ex_print(ctx, b, start);
    wv_buf_printf(b, " : %u : %lld", ex_uses(ctx, e, E) ? nelem : 1,
                  ex_uses(ctx, e, E) ? (long long)sv : 1LL);
    return;
  }
  ex_print(ctx, b, e);
}

/* ---- layouts of mma roles and the default layout -------------------------- */
typedef struct solver {
  wv_kernel *k;
  wv_dist *d;
  const wv_layout **lay; /* by node id */
  VEC(wv_ids) users;
} solver;

const char *wv_rows_uncopyable(wv_kernel *k, const wv_node *rd, wavec_sym K) {
  const wv_node *mem = wv_get(k->g, rd->mem);
  wavec_sym last = mem->type.dims[mem->type.n - 1];
  const wv_diminfo *di = &k->dist->dim[last];
  int64_t size = di->dynamic ? di->multiple : di->size;
  /* 8-bit operands are read K-major only (no transpose for them): no row
   * size lifts that, so it is said first */
  if (wv_dtypes[mem->type.dt].bits == 8 && last != K)
    return "a wgmma reads 8-bit operands K-major only, and this one is "
           "stored otherwise";
  if (size * wv_dtypes[mem->type.dt].bits / 8 % 4)
    return "its rows are not a multiple of 4 bytes";
  return NULL;
}

const wv_layout *wv_mma_role_layout(wv_kernel *k, uint32_t mma_id,
                                   wv_role r) {
  wavec_ctx *ctx = k->ctx;
  wv_node *n = wv_get(k->g, mma_id);
  wv_dist *d = k->dist;
  wavec_mma_kind kind = (wavec_mma_kind)d->mma;
  const wv_mma_info *mi = wv_mma_info_get(kind);
  wavec_sym M = n->type.dims[n->type.n - 2], N = n->type.dims[n->type.n - 1],
            K = n->sym;
  /* role dims: lhs (M, K), rhs (N, K), acc (M, N) */
  wavec_sym rd[2] = {r == WV_RHS ? N : M, r == WV_ACC ? N : K};
  int nn = wv_mma_pick_n(kind, d->dim[N].span);
  int64_t rv[2] = {r == WV_RHS ? nn : mi->m, r == WV_ACC ? nn : mi->k};
  ex_t frag[2] = {ex_const(ctx, 0), ex_const(ctx, 0)};
  /* an operand read from shared memory (through a matrix descriptor) has
   * no elements in registers: only its tile extents */
  const wv_node *o = r != WV_ACC ? wv_get(k->g, n->ops[r]) : NULL;
  /* (a permute of a read is the read: the pass broadcast drops it) */
  if (o && o->op == WAVEC_OP_PERMUTE &&
      wv_get(k->g, o->ops[0])->op == WAVEC_OP_READ)
    o = wv_get(k->g, o->ops[0]);
  bool shared =
      o && wv_mma_issued_from_shared(
               kind, r, o->op == WAVEC_OP_READ && !wv_rows_uncopyable(k, o, K));
  if (!shared)
    wv_mma_layout(ctx, kind, r, nn, d->lane, ex_sym(ctx, d->E), frag);
  const wv_type *t = r == WV_ACC ? &n->type : &wv_get(k->g, n->ops[r])->type;
  wv_layout *l = wv_alloc(ctx, sizeof *l);
  l->nelem = shared ? 0 : (uint32_t)wv_mma_elems(kind, r, nn);
  for (uint32_t i = 0; i < t->n; i++) {
    wavec_sym dim = t->dims[i];
    l->d[i].dim = dim;
    l->d[i].v = 1;
    l->d[i].frag = ex_const(ctx, 0);
    for (int j = 0; j < 2; j++) {
      if (dim == rd[j]) {
        l->d[i].v = rv[j];
        l->d[i].frag = frag[j];
      }
    }
  }
  l->n = t->n;
  return l;
}

static const wv_layout *role_layout(solver *s, uint32_t mma_id, wv_role r) {
  return wv_mma_role_layout(s->k, mma_id, r);
}

/* Without an anchor: vector tile v[D] from hardware vector_shapes (0: a
 * batch dim, 1 coordinate), else the whole span for the last dim and 1 for
 * the others; lanes run over the tile row-major, each holding `nelem`
 * consecutive elements along the last dim when the tile is larger than the
 * wave; a tile smaller than the wave leaves lanes holding copies. */
static const wv_layout *default_layout(solver *s, const wv_type *t,
                                       wavec_loc loc) {
  wavec_ctx *ctx = s->k->ctx;
  wv_dist *d = s->d;
  wv_layout *l = wv_alloc(ctx, sizeof *l);
  l->n = t->n;
  int64_t total = 1;
  for (uint32_t i = 0; i < t->n; i++) {
    wv_diminfo *di = &d->dim[t->dims[i]];
    int64_t v = di->vshape >= 0 ? (di->vshape ? di->vshape : 1)
                : i + 1 == t->n ? di->span
                                : 1;
    if (v > di->span || di->span % v != 0)
      wv_fail(ctx, D_TILE_DIVIDE, loc,
              "vector shape %lld of '%s' does not divide the %lld coordinates "
              "a wave holds",
              (long long)v, wavec_symbol_name(ctx, t->dims[i]),
              (long long)di->span);
    l->d[i].dim = t->dims[i];
    l->d[i].v = v;
    total *= v;
  }
  int64_t nelem = total > d->lanes ? total / d->lanes : 1;
  if (total > d->lanes && total % d->lanes != 0) {
    /* the dims the value holds more than one coordinate of, for the hint */
    wv_buf held, hint;
    wv_buf_init(&held, ctx);
    wv_buf_init(&hint, ctx);
    int nheld = 0;
    for (uint32_t i = 0; i < t->n; i++)
      if (l->d[i].v > 1) {
        wv_buf_printf(&held, "%s'%s' (%lld)", held.n ? ", " : "",
                      wavec_symbol_name(ctx, t->dims[i]),
                      (long long)l->d[i].v);
        /* one dim, whole in the wave: a tile past its size is masked */
        int64_t up = (l->d[i].v + d->lanes - 1) / d->lanes * d->lanes;
        const char *nm = wavec_symbol_name(ctx, t->dims[i]);
        wv_buf_printf(&hint,
                      "; or a tile of %lld, masked past the size: "
                      "workgroup(%s, %lld, <axis>) and wave(%s, %lld)",
                      (long long)up, nm, (long long)up, nm, (long long)up);
        nheld++;
      }
    wv_fail(ctx, D_TILE_DIVIDE, loc,
            "a wave holds %lld elements of this value, %s, which do not "
            "spread evenly over its %d lanes: make the count a multiple of "
            "%d, or below it (tile the dim with tiling(D, T) or wave(D, T), "
            "or set hardware(vector_shapes = {D: ...})%s)",
            (long long)total, wv_buf_str(&held), d->lanes, d->lanes,
            nheld == 1 ? wv_buf_str(&hint)
                                                          : "");
  }
  l->nelem = (uint32_t)nelem;
  /* p = position of element E of this lane in the row-major tile */
  ex_t p = ex_add(ctx, ex_mul(ctx, d->lane, ex_const(ctx, nelem)),
                  ex_sym(ctx, d->E));
  if (total < d->lanes)
    p = ex_mod(ctx, p, ex_const(ctx, total));
  int64_t inner = 1;
  for (int i = (int)t->n - 1; i >= 0; i--) {
    ex_t c = ex_floordiv(ctx, p, ex_const(ctx, inner));
    if (i > 0)
      c = ex_mod(ctx, c, ex_const(ctx, l->d[i].v));
    l->d[i].frag = l->d[i].v == 1 ? ex_const(ctx, 0) : c;
    inner *= l->d[i].v;
  }
  return l;
}

static bool is_free(wavec_op op) {
  return op == WAVEC_OP_READ || op == WAVEC_OP_REGISTER ||
         op == WAVEC_OP_SELF_INDEX || op == WAVEC_OP_BROADCAST;
}

static bool has_value(const wv_node *n) {
  return n->op != WAVEC_OP_ARG && n->op != WAVEC_OP_SCALAR &&
         n->op != WAVEC_OP_WRITE && n->op != WAVEC_OP_YIELD &&
         n->op != WAVEC_OP_ITERATE;
}

static const wv_layout *carried_of(solver *s, const wv_node *it, uint32_t i) {
  return s->lay[s->k->g->blocks.v[it->body].nodes.v[i]];
}

/* The layout node `id` gets from its operands, or NULL. */
static const wv_layout *forward(solver *s, uint32_t id) {
  wv_graph *g = s->k->g;
  wv_node *n = wv_get(g, id);
  switch (n->op) {
  case WAVEC_OP_MMA:
    return role_layout(s, id, WV_ACC);
  case WAVEC_OP_CAST:
  case WAVEC_OP_PERMUTE:
  case WV_OP_CONVERT:
    return s->lay[n->ops[0]];
  case WAVEC_OP_CARRIED: {
    wv_node *it = wv_get(g, n->loop);
    if (s->lay[it->ops[n->index]])
      return s->lay[it->ops[n->index]];
    wv_block *body = &g->blocks.v[it->body];
    wv_node *y = wv_get(g, body->nodes.v[body->nodes.n - 1]);
    return s->lay[y->ops[n->index]];
  }
  case WAVEC_OP_RESULT: {
    wv_node *it = wv_get(g, n->loop);
    return carried_of(s, it, n->index);
  }
  default:
    break;
  }
  char cls = wv_ops[n->op].cls;
  if (cls == 'R')
    return s->lay[n->ops[0]]
               ? wv_layout_project(s->k->ctx, s->lay[n->ops[0]], &n->type)
               : NULL;
  if (cls == 'U')
    return s->lay[n->ops[0]];
  if (cls == 'B' || cls == 'C' || n->op == WAVEC_OP_SELECT) {
    for (uint32_t i = 0; i < n->nops; i++) {
      wv_node *o = wv_get(g, n->ops[i]);
      if (s->lay[n->ops[i]] && o->type.n == n->type.n)
        return s->lay[n->ops[i]];
    }
  }
  return NULL;
}

/* What user `uid` wants operand `id` to be, or NULL for no demand. */
static const wv_layout *demand(solver *s, uint32_t uid, uint32_t id) {
  wv_graph *g = s->k->g;
  wv_node *u = wv_get(g, uid), *n = wv_get(g, id);
  const wv_layout *lu = s->lay[uid];
  switch (u->op) {
  case WAVEC_OP_MMA:
    for (uint32_t r = 0; r < 3; r++)
      if (u->ops[r] == id)
        return role_layout(s, uid, (wv_role)r);
    return NULL;
  case WAVEC_OP_ITERATE:
    for (uint32_t i = 0; i < u->nops; i++)
      if (u->ops[i] == id)
        return carried_of(s, u, i);
    return NULL;
  case WAVEC_OP_YIELD: {
    wv_node *it = wv_get(g, u->loop);
    for (uint32_t i = 0; i < u->nops; i++)
      if (u->ops[i] == id)
        return carried_of(s, it, i);
    return NULL;
  }
  case WAVEC_OP_WRITE:
    return NULL;
  default:
    break;
  }
  if (!lu)
    return NULL;
  if (wv_ops[u->op].cls == 'R')
    return u->nops > 1 && u->ops[1] == id ? lu : NULL;
  return n->type.n == u->type.n ? lu
                                : wv_layout_project(s->k->ctx, lu, &n->type);
}

/* The first demand of pass `pass` (0: mma users, 1: the others) on node
 * `of` from its users. */
static const wv_layout *first_demand(solver *s, uint32_t of, int pass) {
  wv_ids *us = &s->users.v[of];
  for (uint32_t i = 0; i < us->n; i++) {
    bool is_mma = wv_get(s->k->g, us->v[i])->op == WAVEC_OP_MMA;
    if (is_mma != (pass == 0))
      continue;
    const wv_layout *l = demand(s, us->v[i], of);
    if (l)
      return l;
  }
  return NULL;
}

/* Does the loop body only pass carried value `id` on to its yield? */
static bool only_yielded(solver *s, uint32_t id) {
  wv_ids *us = &s->users.v[id];
  for (uint32_t i = 0; i < us->n; i++)
    if (wv_get(s->k->g, us->v[i])->op != WAVEC_OP_YIELD)
      return false;
  return true;
}

/* A loop result never takes a demand: it is its carried value, whose
 * layout the loop keeps from start to end (a user wanting another one gets
 * a conversion after the loop). A carried value that the body only passes
 * on takes the demands on its result: an mma after the loop then reads the
 * loop's registers as they are. (One the body computes with takes the
 * body's demands, so that conversions, if any, stay out of the loop.) */
static const wv_layout *backward(solver *s, uint32_t id) {
  wv_graph *g = s->k->g;
  wv_node *n = wv_get(g, id);
  if (n->op == WAVEC_OP_RESULT)
    return NULL;
  uint32_t result = n->op == WAVEC_OP_CARRIED && only_yielded(s, id)
                        ? wv_get(g, n->loop)->index + n->index
                        : 0;
  /* mma demands first: they are the ones worth not converting */
  for (int pass = 0; pass < 2; pass++) {
    const wv_layout *l = first_demand(s, id, pass);
    if (!l && result)
      l = first_demand(s, result, pass);
    if (l)
      return l;
  }
  return NULL;
}

wavec_status wv_pass_index(wv_kernel *k) {
  wavec_ctx *ctx = k->ctx;
  wv_graph *g = k->g;
  uint32_t nn = g->nodes.n;
  solver s = {k, k->dist, NULL, {0}};
  s.lay = wv_alloc(ctx, nn * sizeof *s.lay);
  for (uint32_t id = 0; id < nn; id++) {
    wv_ids empty = {0};
    vec_push(ctx, &s.users, empty);
  }
  for (uint32_t id = 1; id < nn; id++) {
    wv_node *n = wv_get(g, id);
    ctx->at = n->loc;
    for (uint32_t i = 0; i < n->nops; i++) {
      wv_ids *us = &s.users.v[n->ops[i]];
      vec_push(ctx, us, id);
    }
  }
  for (;;) {
    bool changed = true;
    while (changed) {
      changed = false;
      for (uint32_t id = 1; id < nn; id++) {
        wv_node *n = wv_get(g, id);
        if (s.lay[id] || !has_value(n) || is_free(n->op))
          continue;
        if ((s.lay[id] = forward(&s, id)))
          changed = true;
      }
      for (uint32_t id = nn - 1; id > 0; id--) {
        wv_node *n = wv_get(g, id);
        /* a reduction's layout is its input's, projected: never a demand */
        if (s.lay[id] || !has_value(n) || wv_ops[n->op].cls == 'R')
          continue;
        if ((s.lay[id] = backward(&s, id)))
          changed = true;
      }
    }
    /* Still free: the first read gets the default layout (memory is what
     * a layout should serve), else the first such node. */
    uint32_t id = 1;
    while (id < nn && (s.lay[id] || wv_get(g, id)->op != WAVEC_OP_READ))
      id++;
    if (id == nn) {
      id = 1;
      while (id < nn && (s.lay[id] || !has_value(wv_get(g, id))))
        id++;
    }
    if (id == nn)
      break;
    s.lay[id] = default_layout(&s, &wv_get(g, id)->type, wv_get(g, id)->loc);
  }
  wv_index *ix = wv_index_new(k, nn);
  for (uint32_t id = 1; id < nn; id++) {
    ix->info[id].layout = s.lay[id];
    /* elements_per_thread, when given, must be what the layout holds */
    wv_node *n = wv_get(g, id);
    const wv_layout *l = n->op == WAVEC_OP_WRITE ? s.lay[n->ops[0]] : s.lay[id];
    int64_t ept;
    if (n->ept && l && ex_eval(ctx, n->ept, k->bind.ival, k->bind.known,
                               k->bind.n, &ept) && ept != (int64_t)l->nelem)
      wv_fail(ctx, D_EPT, n->loc,
              "elements_per_thread = %lld, but each lane holds %u elements "
              "of this %s here",
              (long long)ept, l->nelem, wv_ops[n->op].name);
  }
  k->index = ix;
  return WAVEC_OK;
}

/* The layout user `uid` requires of its operand i under index ix, or NULL
 * when any layout will do (memory, writes, a reduction's input, scalars).
 * For an elementwise user with a smaller operand this is the user's own
 * layout: the operand is to be broadcast to it. */
const wv_layout *wv_required_layout(wv_kernel *k, const wv_index *ix,
                                    uint32_t uid, uint32_t i) {
  wv_graph *g = k->g;
  wv_node *u = wv_get(g, uid);
  wv_node *o = wv_get(g, u->ops[i]);
  if (o->op == WAVEC_OP_SCALAR || o->op == WAVEC_OP_ARG)
    return NULL;
  switch (u->op) {
  case WAVEC_OP_MMA:
    return wv_mma_role_layout(k, uid, (wv_role)i);
  case WAVEC_OP_ITERATE:
    return ix->info[g->blocks.v[u->body].nodes.v[i]].layout;
  case WAVEC_OP_YIELD:
    return ix->info[g->blocks.v[wv_get(g, u->loop)->body].nodes.v[i]].layout;
  case WAVEC_OP_WRITE:
  case WAVEC_OP_READ:
  case WAVEC_OP_REGISTER:
  case WV_OP_CONVERT: /* takes any layout: that is its job */
    return NULL;
  case WAVEC_OP_BROADCAST:
    return wv_layout_project(k->ctx, ix->info[uid].layout, &o->type);
  default:
    break;
  }
  if (wv_ops[u->op].cls == 'R')
    return i == 1 ? ix->info[uid].layout : NULL;
  return ix->info[uid].layout;
}

/* Checks invariant 1 (every layout has exactly its node's dims) and, once
 * `broadcast` has run, that every operand has the layout its user requires. */
wavec_status wv_verify_index(wv_kernel *k, bool resolved) {
  wavec_ctx *ctx = k->ctx;
  wv_index *ix = k->index;
  wv_graph *g = k->g;
  for (uint32_t id = 1; id < g->nodes.n; id++) {
    wv_node *n = wv_get(g, id);
    const wv_layout *l = ix->info[id].layout;
    if (has_value(n) != (l != NULL))
      wv_fail(ctx, D_INTERNAL, n->loc,
              "verifier: node %%%u (%s) %s a layout", id, wv_ops[n->op].name,
              l ? "has" : "lacks");
    if (l && l->n != n->type.n)
      wv_fail(ctx, D_INTERNAL, n->loc,
              "verifier: the index of node %%%u (%s) has other dimensions "
              "than its type",
              id, wv_ops[n->op].name);
    if (l) {
      for (uint32_t i = 0; i < n->type.n; i++)
        if (!wv_layout_dim(l, n->type.dims[i]))
          wv_fail(ctx, D_INTERNAL, n->loc,
                  "verifier: the index of node %%%u (%s) lacks dimension %s",
                  id, wv_ops[n->op].name,
                  wavec_symbol_name(ctx, n->type.dims[i]));
    }
    if (l && wv_ops[n->op].cls == 'R' && !ix->expanded) {
      const wv_layout *in = ix->info[n->ops[0]].layout;
      if (!in || !wv_layout_eq(l, wv_layout_project(ctx, in, &n->type)))
        wv_fail(ctx, D_INTERNAL, n->loc,
                "verifier: the index of reduction %%%u is not its input's "
                "without the reduced dimension",
                id);
    }
    if (n->op == WAVEC_OP_RESULT && !ix->expanded) {
      wv_node *it = wv_get(g, n->loop);
      uint32_t carried = g->blocks.v[it->body].nodes.v[n->index];
      if (!wv_layout_eq(l, ix->info[carried].layout))
        wv_fail(ctx, D_INTERNAL, n->loc,
                "verifier: loop result %%%u has another index than its "
                "carried value %%%u",
                id, carried);
    }
    if (!resolved || ix->expanded)
      continue;
    for (uint32_t i = 0; i < n->nops; i++) {
      const wv_layout *req = wv_required_layout(k, ix, id, i);
      wv_node *o = wv_get(g, n->ops[i]);
      if (req && o->type.n < n->type.n && n->op != WAVEC_OP_BROADCAST &&
          n->op != WAVEC_OP_MMA && wv_ops[n->op].cls != 'R')
        wv_fail(ctx, D_INTERNAL, n->loc,
                "verifier: operand %u of node %%%u (%s) is not broadcast", i,
                id, wv_ops[n->op].name);
      if (req && !wv_layout_eq(req, ix->info[n->ops[i]].layout))
        wv_fail(ctx, D_INTERNAL, n->loc,
                "verifier: operand %u of node %%%u (%s) has a layout other "
                "than the one it requires",
                i, id, wv_ops[n->op].name);
    }
  }
  return WAVEC_OK;
}
