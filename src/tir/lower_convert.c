/* The lowering: layout conversions, in registers where each lane already
 * holds its elements, else through shared memory between barriers. */
#include "tir/lower.h"

/* A conversion in which every lane already holds each element it needs in
 * some register of some operand clone (FlashAttention's reuse of two n8
 * accumulator tiles as one k16 operand is one): register moves only. Fills
 * src[e] with the register of element e; false if some element must come
 * from another lane. Decided by evaluating every lane and element. */
static bool in_register(lw *w, uint32_t id, uint32_t *src) {
  wv_node *n = wv_get(w->g, id);
  wv_nodeinfo *in = &w->ix->info[id];
  const wv_layout *lr = in->layout;
  int lanes = w->d->lanes;
  const int64_t *tw = lw_frag_table(w, lr);
  size_t pw = (size_t)lr->nelem * lr->n;
  for (uint32_t e = 0; e < lr->nelem; e++) {
    src[e] = 0;
    for (uint32_t j = 0; j < n->nops && !src[e]; j++) {
      uint32_t o = n->ops[j];
      wv_nodeinfo *oi = &w->ix->info[o];
      wv_node *on = wv_get(w->g, o);
      const int64_t *th = lw_frag_table(w, oi->layout);
      size_t ph = (size_t)oi->layout->nelem * oi->layout->n;
      for (uint32_t f = 0; f < oi->layout->nelem && !src[e]; f++) {
        bool all = true;
        for (int l = 0; l < lanes && all; l++) {
          const int64_t *want = tw + l * pw + (size_t)e * lr->n;
          const int64_t *have = th + l * ph + (size_t)f * oi->layout->n;
          for (uint32_t i = 0; i < n->type.n && all; i++) {
            wavec_sym dim = n->type.dims[i];
            const wv_ldim *rd = &lr->d[i];
            int64_t mine = in->coord[i] * rd->v + want[i];
            for (uint32_t t = 0; t < on->type.n; t++)
              if (on->type.dims[t] == dim) {
                const wv_ldim *od = wv_layout_dim(oi->layout, dim);
                uint32_t k = (uint32_t)(od - oi->layout->d);
                all = oi->coord[t] * od->v + have[k] == mine;
              }
          }
        }
        if (all)
          src[e] = w->vals[o] + f;
      }
    }
    if (!src[e])
      return false;
  }
  return true;
}

/* One remark per converted value: where, what, and how it moves. */
static void remark_convert(lw *w, uint32_t id, const char *how) {
  wv_nodeinfo *in = &w->ix->info[id];
  if (w->remarked[in->origin])
    return;
  w->remarked[in->origin] = true;
  wv_node *n = wv_get(w->g, id);
  wv_buf b;
  wv_remark_start(w->k, n->loc, &b);
  wv_buf_printf(&b, "layout conversion of '%s' ",
                n->name ? n->name : wv_ops[wv_get(w->g, n->ops[0])->op].name);
  wv_type_print(w->ctx, &b, &n->type);
  wv_buf_printf(&b, " %s", how);
  wv_remark_end(w->k, &b);
}

/* Clones c of a conversion (ids[0..n), one layout) through shared memory
 * in one round trip: one barrier (the region's last readers are done),
 * each operand clone's elements stored once into the wave's region, which
 * holds the box the clones span (the clones' coordinates at its origin;
 * an element outside it is not stored), one barrier, every clone's
 * elements loaded in its layout. Accesses go in vector runs where the
 * elements lie side by side. */
/* The box clones ids[0..n) of a conversion (one layout) span in a wave's
 * region: per dim, from the least clone coordinate (lo) over ext, with
 * strides; rows of a multiple of 128 bytes get 16 more (the 8 rows a
 * warp's pairs, or an ldmatrix's rows, span then fall in different
 * banks). Its elements, padding included. */
static int64_t clone_box(lw *w, const uint32_t *ids, uint32_t n, int64_t *lo,
                         int64_t *ext, int64_t *stride) {
  const wv_node *n0 = wv_get(w->g, ids[0]);
  const wv_layout *lr = w->ix->info[ids[0]].layout;
  uint32_t nd = n0->type.n;
  for (uint32_t i = 0; i < nd; i++) {
    int64_t v = wv_layout_dim(lr, n0->type.dims[i])->v, hi = 0;
    lo[i] = INT64_MAX;
    for (uint32_t c = 0; c < n; c++) {
      int64_t at = w->ix->info[ids[c]].coord[i] * v;
      lo[i] = at < lo[i] ? at : lo[i];
      hi = at + v > hi ? at + v : hi;
    }
    ext[i] = hi - lo[i];
  }
  int64_t esize = tir_ty_bytes(tir_ty_of(n0->type.dt)), elems = 1;
  for (int i = (int)nd - 1; i >= 0; i--) {
    stride[i] = elems;
    elems *= ext[i];
    if (i == (int)nd - 1 && nd > 1 && elems * esize % 128 == 0)
      elems += 16 / esize;
  }
  return elems;
}

/* The shared memory of a region per wave holding `elems` elements of
 * `esize` bytes each. */
static int64_t region_bytes(const lw *w, int64_t elems, int64_t esize) {
  int64_t nwaves = w->d->waves[0] * w->d->waves[1] * w->d->waves[2];
  return (elems * nwaves * esize + 15) / 16 * 16;
}

/* The lhs of an mma whose waves exchange it (lw_exchange_plan): clone
 * id's elements from the region of every wave along the split axis
 * (addr: from this wave's, whose regions lie wave_bytes apart), wave k's
 * set at w->vals[id] + k ne. */
static void exchange_loads(lw *w, uint32_t id, const ex_t *addr,
                           int64_t wave_bytes) {
  wavec_ctx *ctx = w->ctx;
  wv_dist *d = w->d;
  const wv_node *n = wv_get(w->g, id);
  tir_ty ty = tir_ty_of(n->type.dt);
  uint32_t ne = w->ix->info[id].layout->nelem;
  int a = w->xchg[id] - 1;
  int64_t W = d->waves[a], astride = lw_wave_stride(w, a);
  uint32_t first = lw_new_regs(w, ty, (uint32_t)W * ne);
  ex_t *at = wv_alloc(ctx, ne * sizeof *at);
  uint32_t *regs = wv_alloc(ctx, ne * sizeof *regs);
  for (int64_t k = 0; k < W; k++) {
    ex_t move = ex_mul(ctx, ex_sub(ctx, ex_const(ctx, k),
                                   wv_wave_coord(ctx, d, a)),
                       ex_const(ctx, astride * wave_bytes));
    for (uint32_t e = 0; e < ne; e++) {
      at[e] = ex_simplify(ctx, ex_add(ctx, addr[e], move), w->ranges,
                          w->nranges);
      regs[e] = first + (uint32_t)k * ne + e;
    }
    w->vals[id] = first + (uint32_t)k * ne;
    if (!lw_try_ldmatrix(w, id, at, ne, ty, 0))
      lw_smem_access(w, T_LDS, ty, at, regs, NULL, ne, 0);
  }
  w->vals[id] = first;
}

static void through_smem(lw *w, const uint32_t *ids, uint32_t n) {
  wavec_ctx *ctx = w->ctx;
  wv_node *n0 = wv_get(w->g, ids[0]);
  const wv_layout *lr = w->ix->info[ids[0]].layout;
  tir_ty ty = tir_ty_of(n0->type.dt);
  uint32_t nd = n0->type.n;
  int64_t lo[WV_MAX_DIMS], ext[WV_MAX_DIMS], stride[WV_MAX_DIMS];
  int64_t elems = clone_box(w, ids, n, lo, ext, stride);
  int64_t esize = tir_ty_bytes(ty);
  remark_convert(w, ids[0], "through shared memory (a round trip with two "
                            "barriers)");
  /* a region per wave at the start of shared memory (conversions are
   * separated by barriers, so they share it); it follows the staged
   * operands */
  int64_t bytes = region_bytes(w, elems, esize);
  if (bytes > w->convert_bytes)
    w->convert_bytes = bytes;
  ex_t base = ex_mul(ctx,
                     ex_add(ctx, ex_const(ctx, w->stage_bytes / esize),
                            ex_mul(ctx, lw_wave_id(w), ex_const(ctx, elems))),
                     ex_const(ctx, esize));
  uint32_t from = w->p->code.n;
  lw_reuse_barrier(w, TIR_REGION_SCRATCH);
  /* each operand clone once, whichever conversion clones read it */
  uint32_t nops = 0, ndone = 0;
  for (uint32_t c = 0; c < n; c++)
    nops += wv_get(w->g, ids[c])->nops;
  uint32_t *done = wv_alloc(ctx, nops * sizeof *done);
  for (uint32_t c = 0; c < n; c++) {
    wv_node *nn = wv_get(w->g, ids[c]);
    for (uint32_t j = 0; j < nn->nops; j++) {
      uint32_t o = nn->ops[j];
      bool seen = false;
      for (uint32_t k = 0; k < ndone && !seen; k++)
        seen = done[k] == o;
      if (seen)
        continue;
      done[ndone++] = o;
      wv_node *on = wv_get(w->g, o);
      wv_nodeinfo *oi = &w->ix->info[o];
      uint32_t ne = oi->layout->nelem;
      ex_t *addr = wv_alloc(ctx, ne * sizeof *addr);
      uint32_t *regs = wv_alloc(ctx, ne * sizeof *regs);
      uint32_t *masks = wv_alloc(ctx, ne * sizeof *masks);
      for (uint32_t e = 0; e < ne; e++) {
        ex_t off = ex_const(ctx, 0);
        masks[e] = 0;
        for (uint32_t i = 0; i < on->type.n; i++) {
          wavec_sym dim = on->type.dims[i];
          const wv_ldim *od = wv_layout_dim(oi->layout, dim);
          uint32_t ri = 0;
          for (uint32_t t = 0; t < nd; t++)
            if (n0->type.dims[t] == dim)
              ri = t;
          ex_t local = ex_add(
              ctx, ex_const(ctx, oi->coord[i] * od->v - lo[ri]), od->frag);
          local = lw_concrete(w, local, e);
          lw_bound_check(w, local, ex_const(ctx, ext[ri]), &masks[e]);
          off = ex_add(ctx, off, ex_mul(ctx, local, ex_const(ctx, stride[ri])));
        }
        addr[e] = ex_simplify(
            ctx, lw_concrete(w, ex_add(ctx, base, ex_mul(ctx, off,
                                                         ex_const(ctx, esize))),
                             e),
            w->ranges, w->nranges);
        regs[e] = lw_elem(w, o, e, ty);
      }
      lw_smem_access(w, T_STS, ty, addr, regs, masks, ne, 0);
    }
  }
  /* planted bug for the tests: lanes read what others have not written */
  if (!(w->ctx->test_hooks & WV_HOOK_DROP_BARRIER))
    lw_region_barrier(w, TIR_REGION_SCRATCH);
  for (uint32_t c = 0; c < n; c++) {
    wv_node *nn = wv_get(w->g, ids[c]);
    wv_nodeinfo *in = &w->ix->info[ids[c]];
    uint32_t first = lw_new_regs(w, ty, lr->nelem);
    ex_t *addr = wv_alloc(ctx, lr->nelem * sizeof *addr);
    uint32_t *regs = wv_alloc(ctx, lr->nelem * sizeof *regs);
    for (uint32_t e = 0; e < lr->nelem; e++) {
      ex_t off = ex_const(ctx, 0);
      for (uint32_t i = 0; i < nd; i++) {
        const wv_ldim *rd = wv_layout_dim(lr, nn->type.dims[i]);
        off = ex_add(ctx, off,
                     ex_mul(ctx,
                            ex_add(ctx, ex_const(ctx, in->coord[i] * rd->v -
                                                          lo[i]),
                                   rd->frag),
                            ex_const(ctx, stride[i])));
      }
      addr[e] = ex_simplify(
          ctx, lw_concrete(w, ex_add(ctx, base, ex_mul(ctx, off,
                                                       ex_const(ctx, esize))),
                           e),
          w->ranges, w->nranges);
      regs[e] = first + e;
    }
    w->vals[ids[c]] = first;
    if (w->xchg[ids[c]]) {
      exchange_loads(w, ids[c], addr, elems * esize);
      continue;
    }
    if (!lw_try_ldmatrix(w, ids[c], addr, lr->nelem, ty, 0))
      lw_smem_access(w, T_LDS, ty, addr, regs, NULL, lr->nelem, 0);
  }
  lw_tag_region(w, from, TIR_REGION_SCRATCH);
}

/* A conversion. Where every lane holds what it needs: register moves.
 * Else through shared memory, together with the conversion's other clones
 * in this block that go that way and whose operands are computed (one
 * round trip, not one a clone: an mma operand's k-tiles are clones); the
 * later clones then find their registers set in this scope. */
void lw_convert(lw *w, uint32_t id) {
  wavec_ctx *ctx = w->ctx;
  wv_node *n = wv_get(w->g, id);
  wv_nodeinfo *in = &w->ix->info[id];
  const wv_layout *lr = in->layout;
  tir_ty ty = tir_ty_of(n->type.dt);
  uint32_t tag = lw_group_tag(w);
  if ((w->grouped[id] & ~3u) == tag)
    return; /* lowered with the first clone of its group */
  uint32_t *src = wv_alloc(ctx, lr->nelem * sizeof *src);
  if (in_register(w, id, src)) {
    remark_convert(w, id, "in registers (each lane holds what it needs)");
    uint32_t first = lw_new_regs(w, ty, lr->nelem);
    for (uint32_t e = 0; e < lr->nelem; e++)
      lw_emit(w, T_MOV, ty, first + e, src[e], 0, 0, 0);
    w->vals[id] = first;
    return;
  }
  const wv_block *b = &w->g->blocks.v[n->block];
  uint32_t *ids = wv_alloc(ctx, b->nodes.n * sizeof *ids), nids = 0;
  uint32_t nc = lw_clones_from(w, id, ids);
  for (uint32_t i = 0; i < nc; i++) {
    uint32_t x = ids[i];
    wv_node *xn = wv_get(w->g, x);
    bool ready = wv_layout_eq(w->ix->info[x].layout, lr);
    for (uint32_t j = 0; j < xn->nops; j++)
      ready &= w->vals[xn->ops[j]] != 0;
    if (x == id || (ready && !in_register(w, x, src)))
      ids[nids++] = x;
  }
  for (uint32_t i = 0; i < nids; i++)
    w->grouped[ids[i]] = tag | LW_GROUP_DONE;
  through_smem(w, ids, nids);
}

bool lw_convert_via_smem(lw *w, uint32_t id) {
  const wv_layout *lr = w->ix->info[id].layout;
  uint32_t *src = wv_alloc(w->ctx, (lr->nelem ? lr->nelem : 1) * sizeof *src);
  return !in_register(w, id, src);
}

int64_t lw_convert_bound(lw *w) {
  int64_t most = 0;
  for (uint32_t id = 1; id < w->g->nodes.n; id++) {
    const wv_node *n = wv_get(w->g, id);
    if (n->op != WV_OP_CONVERT)
      continue;
    const wv_layout *lr = w->ix->info[id].layout;
    uint32_t *src = wv_alloc(w->ctx, (lr->nelem ? lr->nelem : 1) * sizeof *src);
    if (in_register(w, id, src))
      continue;
    /* the box of its clones from it on (the first clone's: all of them,
     * the most through_smem takes together) */
    const wv_block *b = &w->g->blocks.v[n->block];
    uint32_t *ids = wv_alloc(w->ctx, b->nodes.n * sizeof *ids);
    uint32_t nc = lw_clones_from(w, id, ids);
    int64_t lo[WV_MAX_DIMS], ext[WV_MAX_DIMS], stride[WV_MAX_DIMS];
    int64_t bytes =
        region_bytes(w, clone_box(w, ids, nc, lo, ext, stride),
                     tir_ty_bytes(tir_ty_of(n->type.dt)));
    most = bytes > most ? bytes : most;
  }
  return most;
}
