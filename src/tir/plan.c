/* The lowering's context: what the passes promote, pipeline, walks,
 * masksplit and lower share (lower.h's lw, kept on the kernel as k->lw
 * from promote on). Built once, before promote: the bound symbols as
 * constants, the ranges of the thread, workgroup and loop ids, and the
 * facts about the expanded graph every later step reads, each a named
 * function computed once. */
#include "tir/lower.h"

/* By node: every use of it is an mma's lhs or rhs (a read that may be
 * staged in shared memory). */
static bool *mma_operands_only(const lw *w) {
  uint32_t nn = w->g->nodes.n;
  bool *only = wv_alloc(w->ctx, nn * sizeof *only);
  for (uint32_t id = 1; id < nn; id++)
    only[id] = true;
  for (uint32_t id = 1; id < nn; id++) {
    wv_node *n = wv_get(w->g, id);
    for (uint32_t i = 0; i < n->nops; i++)
      if (!(n->op == WAVEC_OP_MMA && i < 2))
        only[n->ops[i]] = false;
  }
  return only;
}

/* By ARG node: some write stores to it. */
static bool *written_args(const lw *w) {
  uint32_t nn = w->g->nodes.n;
  bool *written = wv_alloc(w->ctx, nn * sizeof *written);
  for (uint32_t id = 1; id < nn; id++) {
    wv_node *n = wv_get(w->g, id);
    if (n->op == WAVEC_OP_WRITE)
      written[n->mem] = true;
  }
  return written;
}

/* Program order over global memory. A kernel that reads (or writes
 * again) a tensor it wrote sees its own writes, as the program says:
 * within a workgroup, where the elements a thread touches may be another
 * thread's, a barrier of the workgroup orders the two accesses (bar.sync
 * orders global memory among the threads it joins). By node: a READ or
 * WRITE that must wait for such a barrier first (ordered_accesses).
 *
 * A forward walk in program order with, per written tensor, which
 * origins (nodes before expansion) stored to, added to and read it since
 * the last barrier: an access conflicts with one of another origin where
 * either stores, or one adds and the other reads (adds of different
 * threads commute; clones of one origin touch disjoint elements). A
 * conflict places a barrier before the access, which orders everything
 * before it. A loop's body is walked twice, the second time from its
 * entry joined with the first walk's end (the previous iteration), only
 * the second walk placing barriers; after the loop, the entry joined with
 * the body's end (no trips). Workgroups are ordered by nothing: a
 * workgroup reading what another wrote is a race no barrier mends, which
 * the simulator reports (E0616). */
enum { ORD_STORE, ORD_ADD, ORD_READ, ORD_KINDS };

typedef struct ord_walk {
  const lw *w;
  bool *need;      /* by node: a barrier before it */
  uint32_t nn;
} ord_walk;

/* An origin set: 0 empty, the origin + 1, or UINT32_MAX (several). */
static uint32_t ord_join(uint32_t a, uint32_t b) {
  return !a ? b : !b ? a : a == b ? a : UINT32_MAX;
}

/* Does set `a` hold an origin other than o + 1? */
static bool ord_other(uint32_t a, uint32_t o) { return a && a != o + 1; }

static void ord_block(ord_walk *ow, uint32_t block, uint32_t *st,
                      bool place) {
  const lw *w = ow->w;
  const wv_block *b = &w->g->blocks.v[block];
  size_t bytes = (size_t)ow->nn * ORD_KINDS * sizeof *st;
  for (uint32_t i = 0; i < b->nodes.n; i++) {
    uint32_t id = b->nodes.v[i];
    const wv_node *n = wv_get(w->g, id);
    if (n->op == WAVEC_OP_ITERATE) {
      uint32_t *entry = wv_alloc(w->ctx, bytes), *end = wv_alloc(w->ctx, bytes);
      memcpy(entry, st, bytes);
      memcpy(end, st, bytes);
      ord_block(ow, n->body, end, false);
      for (size_t k = 0; k < (size_t)ow->nn * ORD_KINDS; k++)
        st[k] = ord_join(entry[k], end[k]);
      ord_block(ow, n->body, st, place);
      for (size_t k = 0; k < (size_t)ow->nn * ORD_KINDS; k++)
        st[k] = ord_join(entry[k], st[k]);
      continue;
    }
    if ((n->op != WAVEC_OP_READ && n->op != WAVEC_OP_WRITE) ||
        !w->written[n->mem])
      continue;
    uint32_t o = w->ix->info[id].origin, *m = st + (size_t)n->mem * ORD_KINDS;
    int kind = n->op == WAVEC_OP_READ       ? ORD_READ
               : n->flags & WV_WRITE_ADD ? ORD_ADD
                                         : ORD_STORE;
    bool clash = ord_other(m[ORD_STORE], o) ||
                 (kind != ORD_ADD && ord_other(m[ORD_ADD], o)) ||
                 (kind != ORD_READ && ord_other(m[ORD_READ], o));
    if (clash) {
      memset(st, 0, bytes);
      if (place)
        ow->need[id] = true;
    }
    m[kind] = ord_join(m[kind], o + 1);
  }
}

static bool *ordered_accesses(const lw *w) {
  uint32_t nn = w->g->nodes.n;
  ord_walk ow = {w, wv_alloc(w->ctx, nn * sizeof *ow.need), nn};
  uint32_t *st = wv_alloc(w->ctx, (size_t)nn * ORD_KINDS * sizeof *st);
  ord_block(&ow, 0, st, true);
  return ow.need;
}

/* By node: how many operands name it. */
static uint32_t *use_counts(const lw *w) {
  uint32_t nn = w->g->nodes.n;
  uint32_t *uses = wv_alloc(w->ctx, nn * sizeof *uses);
  for (uint32_t id = 1; id < nn; id++) {
    wv_node *n = wv_get(w->g, id);
    for (uint32_t i = 0; i < n->nops; i++)
      uses[n->ops[i]]++;
  }
  return uses;
}

/* By reduction: a later link of its chain follows it (the next link's
 * accumulator is this one, along the same dim, from the same node before
 * expansion). */
static bool *reduction_links(const lw *w) {
  uint32_t nn = w->g->nodes.n;
  bool *more = wv_alloc(w->ctx, nn * sizeof *more);
  for (uint32_t id = 1; id < nn; id++) {
    wv_node *n = wv_get(w->g, id);
    if ((n->op == WAVEC_OP_MAX || n->op == WAVEC_OP_SUM) && n->nops > 1) {
      wv_node *a = wv_get(w->g, n->ops[1]);
      if (a->op == n->op && a->sym == n->sym &&
          w->ix->info[n->ops[1]].origin == w->ix->info[id].origin)
        more[n->ops[1]] = true;
    }
  }
  return more;
}

/* One more than the largest node before expansion (the index of tables by
 * origin). */
static uint32_t origins(const lw *w) {
  uint32_t norigin = 1;
  for (uint32_t id = 1; id < w->g->nodes.n; id++)
    if (w->ix->info[id].origin >= norigin)
      norigin = w->ix->info[id].origin + 1;
  return norigin;
}

/* The largest x with x^n <= v (n >= 1, v >= 0). */
static int64_t root_floor(int64_t v, int n) {
  int64_t lo = 0, hi = INT32_MAX;
  while (lo < hi) {
    int64_t x = lo + (hi - lo + 1) / 2, p = 1;
    bool over = false;
    for (int i = 0; i < n && !over; i++)
      over = __builtin_mul_overflow(p, x, &p) || p > v;
    if (over)
      hi = x - 1;
    else
      lo = x;
  }
  return lo;
}

/* The largest size each dynamic dim may take: 2^31-1, less where a
 * tensor's element count could otherwise pass 2^62 (the index analysis
 * bounds offsets within 64 bits from these ranges): with d run-time dims,
 * each at most the d-th root of 2^62 over its static dims' product (three
 * run-time dims and no static one: 1664510 each; two: 2^31-1, unchanged).
 * A launch checks each tensor's bytes besides (at most 2^62). */
static void dynamic_bounds(wv_kernel *k, wv_dist *d) {
  for (wavec_sym s = 1; s < d->nsyms; s++)
    d->dim[s].most = INT32_MAX;
  for (uint32_t i = 0; i < k->args.n; i++) {
    const wv_node *a = wv_get(k->g, k->args.v[i]);
    int64_t room = (int64_t)1 << 62;
    int n = 0;
    for (uint32_t j = 0; j < a->type.n; j++) {
      const wv_diminfo *di = &d->dim[a->type.dims[j]];
      if (di->dynamic)
        n++;
      else
        room /= di->size > 0 ? di->size : 1;
    }
    int64_t cap = n ? root_floor(room, n) : INT32_MAX;
    for (uint32_t j = 0; j < a->type.n; j++) {
      wv_diminfo *di = &d->dim[a->type.dims[j]];
      if (di->dynamic && cap < di->most)
        di->most = cap;
    }
  }
}

lw *lw_plan(wv_kernel *k) {
  wavec_ctx *ctx = k->ctx;
  lw *w = wv_alloc(ctx, sizeof *w);
  w->k = k;
  w->ctx = ctx;
  w->d = k->dist;
  w->ix = k->index;
  w->g = k->g;
  /* bound user symbols become constants; ids get their ranges */
  for (wavec_sym s = 1; s < k->bind.n; s++) {
    if (k->bind.known[s] && !k->bind.is_float[s]) {
      vec_push(ctx, &w->bsyms, s);
      vec_push(ctx, &w->bvals, ex_const(ctx, k->bind.ival[s]));
    }
  }
  w->nranges = ctx->sym_names.n;
  w->ranges = wv_alloc(ctx, w->nranges * sizeof *w->ranges);
  dynamic_bounds(k, w->d);
  /* (a dynamic dim's tiles: as many as its largest size has) */
  for (int a = 0; a < 3; a++) {
    wavec_sym g = w->d->grid_dim[a];
    bool dyn = g && w->d->dim[g].dynamic && w->d->dim[g].used;
    w->ranges[w->d->T[a]] = (ex_range){0, w->d->block[a] - 1, true};
    w->ranges[w->d->WG[a]] =
        (ex_range){0, dyn ? w->d->dim[g].most / w->d->dim[g].wg_tile
                          : w->d->grid[a] - 1,
                   true};
  }
  for (wavec_sym s = 1; s < w->d->nsyms; s++) {
    wv_diminfo *di = &w->d->dim[s];
    if (di->used && di->tile)
      w->ranges[di->loopvar] =
          (ex_range){0, di->dynamic ? di->most / di->tile : di->tiles - 1,
                     true};
    /* a run-time size: a positive multiple of its multiple_of, at most
     * its `most` (wavec_arg_shape refuses more) */
    if (di->used && di->dynamic && di->multiple <= di->most)
      w->ranges[s] =
          (ex_range){di->multiple, di->most - di->most % di->multiple, true};
  }
  w->norigin = origins(w);
  w->mma_only = mma_operands_only(w);
  w->written = written_args(w);
  w->order_before = ordered_accesses(w);
  w->nuses = use_counts(w);
  w->red_more = reduction_links(w);
  w->wgmma = wv_mma_is_warpgroup((wavec_mma_kind)w->d->mma);
  k->lw = w;
  return w;
}
