/* The lowering: global memory accesses (offsets, bounds masks, reuse of
 * loads) and the fragment loads of staged reads from shared memory. */
#include "tir/lower.h"

/* The memory coordinate along each memory dim (out[i] for mem dim i) of
 * element e of clone `id` (a READ, or the value a WRITE stores), through the
 * mapping if any, as concrete expressions. */
void lw_mem_coords(lw *w, uint32_t id, uint32_t mapping, const wv_node *mem,
                   uint32_t e, ex_t *out) {
  wavec_ctx *ctx = w->ctx;
  wv_kernel *k = w->k;
  wv_mapping *m = mapping ? &k->mappings.v[mapping - 1] : NULL;
  ex_t iterval[WV_MAX_DIMS];
  if (m) {
    /* outputs bind each iterator to a register coordinate */
    for (uint32_t j = 0; j < m->iters.n; j++)
      iterval[j] = 0;
    for (uint32_t o = 0; o < m->outputs.n; o++) {
      ex_t oe = m->outputs.v[o].e;
      wavec_sym it = ex_sym_of(ctx, oe);
      uint32_t j = 0;
      while (j < m->iters.n && m->iters.v[j] != it)
        j++;
      if (!it || j == m->iters.n)
        wv_fail(ctx, D_MAPPING, m->outputs.v[o].loc,
                "mapping '%s': an output must be one of its iterators",
                m->name);
      iterval[j] = lw_index_of(w, id, m->outputs.v[o].dim);
    }
  }
  for (uint32_t i = 0; i < mem->type.n; i++) {
    wavec_sym dim = mem->type.dims[i];
    ex_t coord = 0;
    if (m) {
      for (uint32_t j = 0; j < m->inputs.n; j++)
        if (m->inputs.v[j].dim == dim)
          coord = ex_subst(ctx, m->inputs.v[j].e, m->iters.n, m->iters.v,
                           iterval);
    } else {
      coord = lw_index_of(w, id, dim);
    }
    out[i] = lw_concrete(w, coord, e);
  }
}

/* Does `mapping` (0: none) compute memory dim d's coordinate from other
 * than the iterator of the same register dim? */
static bool mapped_dim(lw *w, uint32_t mapping, wavec_sym d) {
  if (!mapping)
    return false;
  wv_mapping *m = &w->k->mappings.v[mapping - 1];
  for (uint32_t j = 0; j < m->inputs.n; j++) {
    if (m->inputs.v[j].dim != d)
      continue;
    wavec_sym it = ex_sym_of(w->ctx, m->inputs.v[j].e);
    for (uint32_t o = 0; o < m->outputs.n; o++)
      if (m->outputs.v[o].dim == d && ex_sym_of(w->ctx, m->outputs.v[o].e) == it)
        return !it;
    return true;
  }
  return true;
}

/* Offset (in elements) of element e of clone `id` in memory `mem`; *mask
 * gets a predicate register, or 0 when the access is provably in bounds.
 * Bit i of *guards is set when memory dim i needed a guard. */
static uint32_t mem_offset(lw *w, uint32_t id, uint32_t mapping,
                           const wv_node *mem, uint32_t e, uint32_t *mask,
                           uint32_t *guards) {
  ex_t coord[WV_MAX_DIMS];
  lw_mem_coords(w, id, mapping, mem, e, coord);
  return lw_mem_offset_at(w, id, mapping, mem, coord, mask, guards);
}

uint32_t lw_mem_offset_at(lw *w, uint32_t id, uint32_t mapping,
                          const wv_node *mem, const ex_t *coord,
                          uint32_t *mask, uint32_t *guards) {
  wavec_ctx *ctx = w->ctx;
  ex_t off = ex_const(ctx, 0), stride = ex_const(ctx, 1);
  *mask = 0;
  for (int i = (int)mem->type.n - 1; i >= 0; i--) {
    wavec_sym d = mem->type.dims[i];
    ex_t size = lw_dim_size(w, d);
    /* a dynamic dim's coordinate, as its layout gives it, lies in its
     * tiles: below its size unless they run past it */
    bool inside = w->d->dim[d].dynamic && !w->d->dim[d].ragged &&
                  !mapped_dim(w, mapping, d);
    if (!inside && lw_bound_check(w, coord[i], size, mask))
      *guards |= 1u << i;
    off = ex_add(ctx, off, ex_mul(ctx, coord[i], stride));
    stride = ex_mul(ctx, stride, size);
  }
  uint32_t r = lw_expr_wide(w, ex_simplify(ctx, off, w->ranges, w->nranges));
  lw_remark_wide(w, id, mem, r);
  return r;
}

/* The remark, once per argument, that offset register `off` of an access
 * (clone `id`) of memory `mem` is 64-bit, and why. */
void lw_remark_wide(lw *w, uint32_t id, const wv_node *mem, uint32_t off) {
  if (w->p->regs.v[off] != TY_I64 || w->wide_said[mem->index])
    return;
  w->wide_said[mem->index] = true;
  const tir_arg *a = &w->p->args.v[mem->index];
  wv_buf b;
  wv_remark_start(w->k, wv_get(w->g, id)->loc, &b);
  wv_buf_printf(&b, "offsets into '%s' are 64-bit: ", mem->name);
  bool dyn = false;
  for (uint32_t i = 0; i < a->ndims; i++)
    dyn |= a->dyn[i] != 0;
  if (a->elems > INT32_MAX) {
    wv_buf_printf(&b, "it has %lld elements, 2^31 or more",
                  (long long)a->elems);
  } else if (dyn) {
    wv_buf_puts(&b, "its run-time size");
    for (uint32_t i = 0; i < a->ndims; i++)
      wv_buf_printf(&b, "%s%s", i ? " x " : " ",
                    wavec_symbol_name(w->ctx, mem->type.dims[i]));
    wv_buf_puts(&b, " can reach 2^31 elements (each run-time size goes up "
                    "to 2^31-1)");
  } else {
    wv_buf_puts(&b, "the index analysis does not prove them within 32 bits "
                    "(a mapping, or tiles past its edge)");
  }
  wv_remark_end(w->k, &b);
}

/* The remark for the guards of access `id` (a READ or WRITE) of memory
 * `mem`: bit i of `guards` for memory dim i. */
static void remark_access(lw *w, uint32_t id, const wv_node *mem,
                          uint32_t guards) {
  wavec_sym dims[WV_MAX_DIMS];
  uint32_t n = 0;
  for (uint32_t i = 0; i < mem->type.n; i++)
    if (guards >> i & 1)
      dims[n++] = mem->type.dims[i];
  wv_buf what;
  wv_buf_init(&what, w->ctx);
  wv_buf_printf(&what, "%s of '%s' keeps a bounds guard on",
                wv_get(w->g, id)->op == WAVEC_OP_READ ? "read" : "write",
                mem->name);
  lw_remark_guards(w, id, wv_buf_str(&what), dims, n, "");
}

/* The register an earlier load in an open scope put the same element in,
 * or 0. */
static uint32_t loaded(lw *w, int64_t arg, uint32_t off, uint32_t mask,
                       tir_ty ty, double fill) {
  for (uint32_t i = w->loads.n; i-- > 0;) {
    load_ent *l = &w->loads.v[i];
    if (l->arg == arg && l->off == off && l->mask == mask && l->ty == ty &&
        (!mask || l->fill == fill) && w->scope_open[l->scope])
      return l->reg;
  }
  return 0;
}

/* The shared byte address (before any swizzle, without the ring slot's
 * offset) of element e of clone `id` in its staged tile st. */
ex_t lw_staged_addr(lw *w, uint32_t id, const stage *st, uint32_t e) {
  return lw_staged_addr_moved(w, id, st, e, 0, NULL, NULL);
}

ex_t lw_staged_addr_moved(lw *w, uint32_t id, const stage *st, uint32_t e,
                          uint32_t nmove, const wavec_sym *dims,
                          const ex_t *by) {
  wavec_ctx *ctx = w->ctx;
  wv_node *n = wv_get(w->g, id);
  wv_node *mem = wv_get(w->g, n->mem);
  ex_t coord[WV_MAX_DIMS];
  lw_mem_coords(w, id, n->mapping, mem, e, coord);
  for (uint32_t i = 0; i < mem->type.n; i++) {
    coord[i] = ex_sub(ctx, coord[i], lw_concrete(w, st->start[i], 0));
    for (uint32_t j = 0; j < nmove; j++)
      if (mem->type.dims[i] == dims[j])
        coord[i] = ex_add(ctx, coord[i], by[j]);
  }
  ex_t off = lw_stage_elem_off(ctx, st, mem->type.n, coord);
  off = ex_add(ctx, ex_const(ctx, st->base),
               ex_mul(ctx, off, ex_const(ctx, st->es)));
  return ex_simplify(ctx, off, w->ranges, w->nranges);
}

/* Shared-memory accesses of ne elements of type ty (op T_LDS: into
 * regs[e]; T_STS: from regs[e], under guard masks[e], 0 for none): element
 * e at byte address addr[e] past `at` (lw_smem_addr). Runs of 4 or 2
 * elements at consecutive addresses, aligned to the run's size, under one
 * guard and of at least 4 bytes go as one vector access (tir.h). */
void lw_smem_access(lw *w, tir_op op, tir_ty ty, const ex_t *addr,
                    const uint32_t *regs, const uint32_t *masks, uint32_t ne,
                    ex_t at) {
  wavec_ctx *ctx = w->ctx;
  int64_t esize = tir_ty_bytes(ty);
  bool load = op == T_LDS;
  for (uint32_t e = 0; e < ne;) {
    uint32_t mask = masks ? masks[e] : 0, run = 1;
    for (uint32_t len = 4; len >= 2 && run == 1; len /= 2) {
      if (e % len || e + len > ne || len * esize < 4)
        continue;
      bool ok = true;
      for (uint32_t j = 1; j < len && ok; j++) {
        int64_t d;
        ok = ex_is_const(ctx, ex_sub(ctx, addr[e + j], addr[e]), &d) &&
             d == (int64_t)j * esize && (masks ? masks[e + j] : 0) == mask;
      }
      int64_t m;
      ok = ok && ex_is_const(ctx,
                             ex_simplify(ctx, ex_mod(ctx, addr[e],
                                                     ex_const(ctx, len * esize)),
                                         w->ranges, w->nranges),
                             &m) &&
           m == 0;
      if (ok)
        run = len;
    }
    uint32_t a = lw_smem_addr(w, addr[e], at);
    if (run == 1 && load) {
      lw_emit(w, T_LDS, ty, regs[e], a, 0, 0, 0);
    } else if (run == 1) {
      lw_emit(w, T_STS, ty, 0, a, regs[e], mask, 0);
    } else {
      uint32_t *l = wv_alloc(ctx, run * sizeof *l);
      memcpy(l, regs + e, run * sizeof *l);
      tir_instr *in = lw_emit(w, load ? T_LDSV : T_STSV, ty, 0, a,
                              load ? 0 : mask, 0, 0);
      in->list = l;
      in->nlist = run;
    }
    e += run;
  }
}

/* Loads clone `id`'s elements from its staged tile: as ldmatrix where the
 * layout allows, else in vector runs (a fragment's pairs along k, or quads
 * of 8-bit elements). */
void lw_staged_read(lw *w, uint32_t id, stage *st) {
  wavec_ctx *ctx = w->ctx;
  wv_node *n = wv_get(w->g, id);
  wv_node *mem = wv_get(w->g, n->mem);
  tir_ty ty = tir_ty_of(mem->type.dt);
  uint32_t ne = lw_nelem(w, id);
  wv_assert(ctx, !st->swz); /* wgmma operands are read by the wgmma */
  w->vals[id] = lw_new_regs(w, ty, ne);
  ex_t *addr = wv_alloc(ctx, ne * sizeof *addr);
  for (uint32_t e = 0; e < ne; e++)
    addr[e] = lw_staged_addr(w, id, st, e);
  if (lw_try_ldmatrix(w, id, addr, ne, ty, lw_stage_slot(w, st)))
    return;
  uint32_t *regs = wv_alloc(ctx, ne * sizeof *regs);
  for (uint32_t e = 0; e < ne; e++)
    regs[e] = w->vals[id] + e;
  lw_smem_access(w, T_LDS, ty, addr, regs, NULL, ne, lw_stage_slot(w, st));
}

static uint32_t run_len(lw *w, const wv_node *mem, ex_t (*co)[WV_MAX_DIMS],
                        uint32_t most, int64_t es);
static uint32_t run_most(uint32_t left, int64_t es);
static uint32_t run_at(lw *w, uint32_t v, uint32_t mapping, const wv_node *mem,
                       uint32_t e, uint32_t left);
static uint32_t load_run(lw *w, uint32_t dst, uint32_t len, uint32_t off,
                         uint32_t mask, tir_ty ty, double fill, int64_t arg);

void lw_read_ahead(lw *w, uint32_t id, ex_t at, uint32_t more, bool say) {
  wavec_ctx *ctx = w->ctx;
  wv_node *n = wv_get(w->g, id);
  wv_node *mem = wv_get(w->g, n->mem);
  tir_ty ty = lw_node_ty(n);
  double fill = lw_read_fill(w, n);
  uint32_t ne = lw_nelem(w, id);
  ex_t co[16][WV_MAX_DIMS];
  uint32_t kept = 0; /* the dims any element keeps a guard on */
  for (uint32_t e = 0; e < ne; e++) {
    if (w->pref_src[id][e] != e)
      continue; /* (another element's: loaded once) */
    /* the next iteration's coordinates of e and of the elements after it
     * that are loaded here too (a run's candidates) */
    uint32_t most = run_most(ne - e, tir_ty_bytes(ty)), k = 0;
    for (; k < most && (k == 0 || w->pref_src[id][e + k] == e + k); k++) {
      lw_mem_coords(w, id, n->mapping, mem, e + k, co[k]);
      for (uint32_t i = 0; i < mem->type.n; i++)
        co[k][i] = ex_simplify(ctx, ex_subst(ctx, co[k][i], 1, &w->pref_lv,
                                             &at),
                               w->ranges, w->nranges);
    }
    uint32_t len = run_len(w, mem, co, k, tir_ty_bytes(ty));
    uint32_t mask, guards = 0;
    uint32_t off = lw_mem_offset_at(w, id, n->mapping, mem, co[0], &mask,
                                    &guards);
    kept |= guards;
    if (more && mask) {
      uint32_t both = lw_reg(w, TY_PRED);
      lw_emit(w, T_AND, TY_PRED, both, mask, more, 0, 0);
      mask = both;
    } else if (more) {
      mask = more;
    }
    /* (the loop's e++ steps past the run's last) */
    uint32_t got =
        load_run(w, w->pref[id] + e, len, off, mask, ty, fill, mem->index);
    e += got - 1;
  }
  if (say) /* (the loop's load, at any iteration: the guards lw_read's) */
    remark_access(w, id, mem, kept);
}

void lw_read(lw *w, uint32_t id) {
  wavec_ctx *ctx = w->ctx;
  wv_node *n = wv_get(w->g, id);
  tir_ty ty = lw_node_ty(n);
  stage *st = w->stage_of[w->ix->info[id].origin];
  if (w->pref[id]) {
    /* loaded the iteration before (or before the loop): taken from the
     * prefetch registers, which then load the next iteration's */
    uint32_t ne = lw_nelem(w, id);
    w->vals[id] = lw_new_regs(w, ty, ne);
    for (uint32_t e = 0; e < ne; e++)
      lw_emit(w, T_MOV, ty, w->vals[id] + e,
              w->pref[id] + w->pref_src[id][e], 0, 0, 0);
    ex_t next = ex_add(ctx, ex_sym(ctx, w->pref_lv), ex_const(ctx, 1));
    uint32_t end = w->pref_end ? w->pref_end : lw_iconst(w, w->pref_trips);
    uint32_t more = lw_reg(w, TY_PRED);
    lw_emit(w, T_SETP, TY_I32, more, lw_expr(w, next), end, 0, TIR_CMP_LT);
    lw_read_ahead(w, id, next, more, true);
    return;
  }
  if (st) {
    /* streamed by its loop's ring, or copied here; either way its
     * fragments are loaded where they are used */
    uint32_t scope = w->scopes.v[w->scopes.n - 1] + 1;
    if (!st->loop && st->done_scope != scope) {
      lw_stage_copy(w, &st, 1);
      st->done_scope = scope;
    }
    return;
  }
  uint32_t ne = lw_nelem(w, id);
  w->vals[id] = lw_new_regs(w, ty, ne);
  wv_node *mem = wv_get(w->g, n->mem);
  double fill = lw_read_fill(w, n);
  uint32_t guards = 0;
  bool cache = !w->written[n->mem];
  for (uint32_t e = 0; e < ne;) {
    uint32_t mask;
    uint32_t off = mem_offset(w, id, n->mapping, mem, e, &mask, &guards);
    uint32_t seen = cache ? loaded(w, mem->index, off, mask, ty, fill) : 0;
    if (seen) {
      lw_emit(w, T_MOV, ty, w->vals[id] + e, seen, 0, 0, 0);
      e++;
      continue;
    }
    /* e and the elements after it where they are an aligned run (one
     * vector load), each then known loaded in this scope */
    uint32_t len = load_run(w, w->vals[id] + e,
                            run_at(w, id, n->mapping, mem, e, ne - e), off,
                            mask, ty, fill, mem->index);
    for (uint32_t k = 0; k < len; k++) {
      uint32_t mk = mask, ok = off;
      if (k)
        ok = mem_offset(w, id, n->mapping, mem, e + k, &mk, &guards);
      load_ent le = {mem->index, ok, mk, ty, fill, w->vals[id] + e + k,
                     w->scopes.v[w->scopes.n - 1]};
      vec_push(ctx, &w->loads, le);
    }
    e += len;
  }
  remark_access(w, id, mem, guards);
}

/* The most elements of es bytes from one with `left` after it (itself
 * included) that one vector access may move: 16 bytes. */
static uint32_t run_most(uint32_t left, int64_t es) {
  uint32_t most = (uint32_t)(16 / es);
  return left < most ? left : most;
}

/* How many elements from the first of co[0 .. most) (their coordinates
 * in `mem`, es bytes each) go as one aligned vector access: the largest
 * power of 2 len (2 at least, 4 for 8-bit elements: whole 4-byte words)
 * such that they agree but for the last dim, where each is the one
 * before plus 1, the first is a multiple of len, and the last dim's size
 * is a multiple of len (a static size, or a run-time one stated a
 * multiple of it). Every row then starts at a multiple of len, so the run
 * is aligned to its size, and the first's guard covers the run (c < N,
 * both multiples of len: c + len - 1 < N). 1 where none is. */
static uint32_t run_len(lw *w, const wv_node *mem, ex_t (*co)[WV_MAX_DIMS],
                        uint32_t most, int64_t es) {
  wavec_ctx *ctx = w->ctx;
  uint32_t n = mem->type.n;
  wavec_sym d = mem->type.dims[n - 1];
  int64_t size;
  if (!ex_is_const(ctx, lw_dim_size(w, d), &size))
    size = w->d->dim[d].dynamic ? w->d->dim[d].multiple : 1;
  uint32_t follow = 1; /* co[0 .. follow) run along the last dim */
  for (; follow < most; follow++) {
    bool next = true;
    for (uint32_t i = 0; i < n && next; i++) {
      int64_t c;
      ex_t diff = ex_simplify(ctx, ex_sub(ctx, co[follow][i], co[follow - 1][i]),
                              w->ranges, w->nranges);
      next = ex_is_const(ctx, diff, &c) && c == (i + 1 == n);
    }
    if (!next)
      break;
  }
  uint32_t len = 1;
  while (len * 2 <= follow)
    len *= 2;
  for (; len >= (es == 1 ? 4u : 2u); len /= 2)
    if (size % len == 0 && ex_multiple_of(ctx, co[0][n - 1], len))
      return len;
  return 1;
}

/* run_len of elements e .. e + left of value v (mapping, `mem`). */
static uint32_t run_at(lw *w, uint32_t v, uint32_t mapping, const wv_node *mem,
                       uint32_t e, uint32_t left) {
  ex_t co[16][WV_MAX_DIMS];
  int64_t es = tir_ty_bytes(tir_ty_of(mem->type.dt));
  uint32_t most = run_most(left, es);
  for (uint32_t k = 0; k < most; k++)
    lw_mem_coords(w, v, mapping, mem, e + k, co[k]);
  return run_len(w, mem, co, most, es);
}

/* Do elements e and e+1 of value v, written to `mem`, go out as one aligned
 * pair (run_len)? */
static bool pair_at(lw *w, uint32_t v, uint32_t mapping, const wv_node *mem,
                    uint32_t e) {
  ex_t co[2][WV_MAX_DIMS];
  lw_mem_coords(w, v, mapping, mem, e, co[0]);
  lw_mem_coords(w, v, mapping, mem, e + 1, co[1]);
  return run_len(w, mem, co, 2, 4) == 2;
}

/* Elements e .. e + len - 1 of a read (a run: run_len) loaded into dst
 * ..: as one vector (T_LDGV) where len > 1, they are of the argument's own
 * type and a masked-off run may read as zeros (the read's fill is 0);
 * else element e alone (T_LDG, its fill where masked off). The elements
 * loaded. */
static uint32_t load_run(lw *w, uint32_t dst, uint32_t len, uint32_t off,
                         uint32_t mask, tir_ty ty, double fill, int64_t arg) {
  wavec_dtype dt = w->p->args.v[arg].dt;
  if (len < 2 || (mask && fill != 0.0) || dt == WAVEC_I1 ||
      tir_ty_of(dt) != ty || (w->ctx->test_hooks & WV_HOOK_SHIFT_LANE)) {
    lw_emit(w, T_LDG, ty, dst, off, mask, 0, arg)->fimm = fill;
    return 1;
  }
  uint32_t *regs = wv_alloc(w->ctx, len * sizeof *regs);
  for (uint32_t k = 0; k < len; k++)
    regs[k] = dst + k;
  tir_instr *in = lw_emit(w, T_LDGV, ty, 0, off, mask, 0, arg);
  in->list = regs;
  in->nlist = len;
  return len;
}

/* Which lane of a wave adds each element of value v (write `id`, reduce
 * = add): the lane bits that do not change what a lane holds (flip one
 * and the lane holds the same elements, as after a reduction across lanes
 * or in a broadcast) are replicas, and the lane with those bits 0 adds.
 * An element a lane holds twice (a row sum of an mma's accumulator: the
 * row's two column pairs) is added once: dup[e] marks the repeats (the
 * same elements in every lane). Returns the sum of the replica bits of
 * the lane (0 for the adding lane); fails where lanes hold the same
 * elements otherwise. */
static ex_t lane_owner(lw *w, uint32_t id, uint32_t v, bool *dup) {
  wavec_ctx *ctx = w->ctx;
  const wv_layout *l = w->ix->info[v].layout;
  size_t lanes = (size_t)w->d->lanes, ne = l->nelem, n = lanes * ne;
  uint32_t nsyms = ctx->sym_names.n;
  const int64_t **cols = wv_alloc(ctx, nsyms * sizeof *cols);
  int64_t *t = wv_alloc(ctx, n * sizeof *t), *e = wv_alloc(ctx, n * sizeof *e);
  int64_t *key = wv_alloc(ctx, n * sizeof *key), *c = wv_alloc(ctx, n * sizeof *c);
  for (size_t i = 0; i < n; i++) {
    t[i] = (int64_t)(i / ne);
    e[i] = (int64_t)(i % ne);
  }
  cols[w->d->T[0]] = t;
  cols[w->d->E] = e;
  int64_t cells = 1;
  bool ok = true;
  for (uint32_t i = 0; i < l->n && ok; i++) {
    ok = ex_eval_batch(ctx, l->d[i].frag, cols, NULL, NULL, nsyms, n, c);
    for (size_t j = 0; j < n && ok; j++) {
      ok = c[j] >= 0 && c[j] < l->d[i].v;
      key[j] = key[j] * l->d[i].v + c[j];
    }
    cells *= l->d[i].v;
  }
  size_t same = 0; /* the replica bits */
  for (size_t b = 1; b < lanes && ok; b <<= 1) {
    bool rep = true;
    for (size_t j = 0; j < n && rep; j++)
      rep = key[j] == key[((j / ne) ^ b) * ne + j % ne];
    same |= rep ? b : 0;
  }
  /* repeats within a lane (lane 0's), the same in every lane */
  for (size_t j = 0; j < n && ok; j++) {
    size_t el = j % ne, l0 = j - el;
    bool rep = false;
    for (size_t f = 0; f < el && !rep; f++)
      rep = key[j] == key[l0 + f];
    if (j < ne)
      dup[el] = rep;
    else
      ok = rep == dup[el];
  }
  uint8_t *seen = ok ? wv_alloc(ctx, (size_t)cells) : NULL;
  for (size_t j = 0; j < n && ok; j++)
    ok = (j / ne) & same || dup[j % ne] || !seen[key[j]]++;
  if (!ok)
    wv_fail(ctx, D_UNSUPPORTED, wv_get(w->g, id)->loc,
            "write(..., reduce = add) of %s: lanes of a wave hold the same "
            "elements of it in its layout, and not as copies along whole "
            "lane bits, so no one lane can add each; write a value whose "
            "layout gives each element one lane (e.g. an mma's result)",
            wv_node_what(ctx, wv_get(w->g, v)));
  ex_t at = ex_const(ctx, 0);
  for (size_t b = 1; b < lanes; b <<= 1)
    if (same & b)
      at = ex_add(ctx, at,
                  ex_mod(ctx, ex_floordiv(ctx, w->d->lane,
                                          ex_const(ctx, (int64_t)b)),
                         ex_const(ctx, 2)));
  return at;
}

/* The predicate under which a thread adds its elements of value v (write
 * `id`, reduce = add), or 0 (every thread): a value without the dim split
 * along a grid axis is held alike by every workgroup and wave along that
 * axis, and only the first adds it (and within a wave, lane_owner's
 * lane). A partial sum is held in parts, and every part adds: an mma whose
 * reduction dim is split over waves or workgroups, a sum over a dim split
 * over workgroups (a sum is reduced across the waves of a workgroup, so
 * its waves hold copies). */
static uint32_t add_owner(lw *w, uint32_t id, uint32_t v, bool *dup) {
  wavec_ctx *ctx = w->ctx;
  wv_dist *d = w->d;
  const wv_node *val = wv_get(w->g, v);
  unsigned parts = wv_partial(d, val);
  /* (a sum of coordinates, 0 for the first) */
  ex_t at = lane_owner(w, id, v, dup);
  for (int a = 0; a < 3; a++) {
    wavec_sym dim = d->grid_dim[a];
    if (!dim || wv_type_has(&val->type, dim))
      continue;
    /* along the reduced dim: parts (every one adds) or copies */
    unsigned held = dim == val->sym ? parts : 0;
    if (d->grid[a] != 1 && !(held & WV_PARTS_GROUPS))
      at = ex_add(ctx, at, ex_sym(ctx, d->WG[a]));
    if (d->waves[a] > 1 && !(held & WV_PARTS_WAVES))
      at = ex_add(ctx, at, wv_wave_coord(ctx, d, a));
  }
  at = ex_simplify(ctx, at, w->ranges, w->nranges);
  int64_t zero;
  if (ex_is_const(ctx, at, &zero) || (ctx->test_hooks & WV_HOOK_ADD_EVERY_COPY))
    return 0; /* planted bug: every copy adds */
  uint32_t first = lw_reg(w, TY_PRED);
  lw_emit(w, T_SETP, TY_PRED, first, lw_expr(w, at), lw_iconst(w, 0), 0,
          TIR_CMP_EQ);
  return first;
}

/* The grid axis whose waves hold parts of value v (an mma whose reduction
 * dim they split), or -1. */
static int part_axis(lw *w, uint32_t v) {
  const wv_node *val = wv_get(w->g, v);
  return wv_partial(w->d, val) & WV_PARTS_WAVES ? w->d->dim[val->sym].wg_axis
                                                 : -1;
}

/* The clones of an adding write: the writes `ids` (nw of them), their
 * values' registers end to end (element g of the whole: clone `at[g]`,
 * its element `el[g]`). */
typedef struct add_set {
  uint32_t *ids, nw;
  uint32_t ne, *at, *el;
  const wv_node *mem;
  uint32_t owner, guards;
} add_set;

/* A partial sum's parts (the values of the writes in `as`, held by the W
 * waves along axis a) summed in shared memory before they are added to
 * memory: wave c of them owns elements [c ne/W, (c + 1) ne/W) of each of
 * its lanes (the clones' elements end to end). Each wave writes the
 * elements it does not own; after a barrier each reads what the others
 * wrote of its own elements and sums them with its part, in wave order;
 * then it adds its elements (and only those): 1/W of the adds, each of the
 * whole sum. Slots are laid out pair-major across the lanes (lane l's pair
 * p of writer rank r at ((r ne/2 + p) lanes + l) 8 bytes: conflict free).
 * False, emitting nothing, where the slots would not fit in shared memory
 * or the elements do not split in pairs. */
static void add_pair(lw *w, add_set *as, uint32_t g, uint32_t regs);

int64_t lw_parts_slot_bytes(const lw *w, int64_t W, int64_t ne) {
  return (W - 1) * ne * w->d->lanes * 4;
}

static bool sum_parts(lw *w, add_set *as, int a) {
  wavec_ctx *ctx = w->ctx;
  wv_dist *d = w->d;
  int64_t W = d->waves[a], ne = as->ne, lanes = d->lanes;
  int64_t bytes = lw_parts_slot_bytes(w, W, ne);
  /* (lw_parts_plan reserved the slots where they fit, in a region of
   * their own or the scratch one) */
  if (ne % (2 * W) || bytes > w->parts_bytes)
    return false;
  for (uint32_t i = 0; i < as->nw; i++)
    if (lw_nelem(w, wv_get(w->g, as->ids[i])->ops[0]) % 2)
      return false;
  if (w->parts_region == TIR_REGION_SCRATCH && bytes > w->convert_bytes)
    w->convert_bytes = bytes;
  uint32_t *is = lw_wave_preds(w, a, W);
  uint32_t lane = lw_expr(w, d->lane);
  uint32_t lane8 = lw_op2(w, T_MUL, TY_I32, lane, lw_iconst(w, 8));
  uint32_t at = lw_op2(w, T_ADD, TY_I32, lane8, lw_iconst(w, w->parts_base));
  int64_t chunk = ne / W;
#define SLOT(r, g) ((((r) * ne / 2 + (g) / 2) * lanes) * 8)
#define REG(g) (w->vals[wv_get(w->g, as->ids[as->at[g]])->ops[0]] + as->el[g])
  /* with tensor reduces (w->add): the sums go to their buffer, which the
   * last reduces must have read first */
  bool bulk = w->add.write == as->ids[0];
  wv_assert(ctx, !bulk || as->nw == 1);
  if (bulk)
    lw_store_add_wait(w);
  lw_reuse_barrier(w, w->parts_region); /* the slots' last readers are done */
  for (int64_t k = 0; k < W; k++) {
    uint32_t region = lw_region_begin(w, is[k]);
    lw_open_scope(w);
    for (int64_t g = 0; g < ne; g += 2) {
      int64_t owner = g / chunk;
      if (owner == k)
        continue;
      int64_t r = k < owner ? k : k - 1;
      uint32_t *regs = wv_alloc(ctx, 2 * sizeof *regs);
      regs[0] = REG(g);
      regs[1] = regs[0] + 1;
      uint32_t addr = lw_op2(w, T_ADD, TY_I32, at, lw_iconst(w, SLOT(r, g)));
      tir_instr *in = lw_emit(w, T_STSV, TY_F32, 0, addr, 0, 0, 0);
      in->list = regs;
      in->nlist = 2;
      in->tag = w->parts_region;
    }
    lw_close_scope(w);
    lw_region_end(w, region);
  }
  if (!(ctx->test_hooks & WV_HOOK_DROP_BARRIER)) /* planted: reads race */
    lw_region_barrier(w, w->parts_region); /* every part is written */
  for (int64_t k = 0; k < W; k++) {
    uint32_t region = lw_region_begin(w, is[k]);
    lw_open_scope(w);
    for (int64_t g = k * chunk; g < (k + 1) * chunk; g += 2) {
      uint32_t sum = lw_new_regs(w, TY_F32, 2);
      lw_emit(w, T_MOV, TY_F32, sum, REG(g), 0, 0, 0);
      lw_emit(w, T_MOV, TY_F32, sum + 1, REG(g) + 1, 0, 0, 0);
      for (int64_t o = 0; o < W; o++) {
        if (o == k)
          continue;
        int64_t r = o < k ? o : o - 1;
        uint32_t part = lw_new_regs(w, TY_F32, 2);
        uint32_t *regs = wv_alloc(ctx, 2 * sizeof *regs);
        regs[0] = part;
        regs[1] = part + 1;
        uint32_t addr = lw_op2(w, T_ADD, TY_I32, at, lw_iconst(w, SLOT(r, g)));
        tir_instr *in = lw_emit(w, T_LDSV, TY_F32, 0, addr, 0, 0, 0);
        in->list = regs;
        in->nlist = 2;
        in->tag = w->parts_region;
        for (int j = 0; j < 2; j++)
          lw_emit(w, T_ADD, TY_F32, sum + j, sum + j, part + j, 0, 0);
      }
      if (bulk) {
        uint32_t regs[2] = {sum, sum + 1};
        lw_store_add_put(w, as->ids[0], as->el[g], 2, regs);
      } else {
        add_pair(w, as, (uint32_t)g, sum);
      }
    }
    lw_close_scope(w);
    lw_region_end(w, region);
  }
  if (bulk)
    lw_store_add_issue(w, as->ids[0]);
#undef REG
#undef SLOT
  return true;
}

/* A write through a mapping stores element e of value v where the mapping
 * sends it, which may lie inside the tensor although the element itself
 * lies past the edge of its own dims (a ragged tile's padding: y[i - 1]
 * = x[i] + 1 at i = N): the element's own coordinates are guarded too,
 * into *mask. True where a guard was added. */
static bool own_guard(lw *w, uint32_t v, uint32_t mapping, uint32_t e,
                      uint32_t *mask) {
  if (!mapping)
    return false;
  const wv_type *t = &wv_get(w->g, v)->type;
  bool any = false;
  for (uint32_t i = 0; i < t->n; i++) {
    wavec_sym d = t->dims[i];
    /* (a dynamic dim's coordinate lies below its size unless its tiles
     * run past it, as lw_mem_offset_at takes it) */
    if (w->d->dim[d].dynamic && !w->d->dim[d].ragged)
      continue;
    ex_t c = lw_concrete(w, lw_index_of(w, v, d), e);
    any |= lw_bound_check(w, c, lw_dim_size(w, d), mask);
  }
  return any;
}

/* The adds of element e of value v (write n into mem) from register reg,
 * and where `two` of e + 1 from reg + 1 with it, as one vector red when
 * they lie side by side in memory; under `owner` (0: every thread). The
 * elements it added: 1 or 2. */
static uint32_t add_elems(lw *w, const wv_node *n, const wv_node *mem,
                          uint32_t v, uint32_t e, uint32_t reg, bool two,
                          uint32_t owner, uint32_t *guards) {
  uint32_t mask;
  uint32_t off = mem_offset(w, v, n->mapping, mem, e, &mask, guards);
  if (own_guard(w, v, n->mapping, e, &mask))
    two = false; /* (e + 1 may lie past the edge where e does not) */
  if (owner)
    mask = lw_pred_and(w, mask, owner);
  if (!two || !pair_at(w, v, n->mapping, mem, e)) {
    lw_emit(w, T_REDG, TY_F32, 0, off, reg, mask, mem->index);
    return 1;
  }
  uint32_t *l = wv_alloc(w->ctx, 2 * sizeof *l);
  l[0] = reg;
  l[1] = reg + 1;
  tir_instr *in = lw_emit(w, T_REDG, TY_F32, 0, off, 0, mask, mem->index);
  in->list = l;
  in->nlist = 2;
  return 2;
}

/* Adds elements g and g + 1 of the set (one clone's e and e + 1) from
 * registers regs, regs + 1. */
static void add_pair(lw *w, add_set *as, uint32_t g, uint32_t regs) {
  wv_node *n = wv_get(w->g, as->ids[as->at[g]]);
  uint32_t v = n->ops[0], e = as->el[g];
  if (add_elems(w, n, as->mem, v, e, regs, true, as->owner, &as->guards) == 1)
    add_elems(w, n, as->mem, v, e + 1, regs + 1, false, as->owner,
              &as->guards);
}

void lw_parts_plan(lw *w) {
  wv_dist *d = w->d;
  int64_t most = 0;
  wavec_loc at;
  if (lw_knob(w->k, WAVEC_HW_SUM_PARTS, &at) == 0)
    return;
  for (uint32_t id = 1; id < w->g->nodes.n; id++) {
    const wv_node *n = wv_get(w->g, id);
    if (n->op != WAVEC_OP_WRITE || !(n->flags & WV_WRITE_ADD))
      continue;
    int a = part_axis(w, n->ops[0]);
    if (a < 0 || w->xchg[n->ops[0]])
      continue;
    /* the write's clones from it on (the first's: all of them, summed
     * together by add_parts): their elements end to end */
    const wv_block *b = &w->g->blocks.v[n->block];
    uint32_t *ids = wv_alloc(w->ctx, b->nodes.n * sizeof *ids);
    uint32_t nc = lw_clones_from(w, id, ids);
    int64_t ne = 0;
    bool even = true;
    for (uint32_t i = 0; i < nc; i++) {
      int64_t k = lw_nelem(w, wv_get(w->g, ids[i])->ops[0]);
      ne += k;
      even &= k % 2 == 0;
    }
    int64_t W = d->waves[a], bytes = lw_parts_slot_bytes(w, W, ne);
    if (even && ne % (2 * W) == 0 && bytes > most &&
        w->stage_bytes + bytes <= SMEM_OPTIN)
      most = bytes;
  }
  /* a region of their own where the conversions' and reductions' scratch
   * still fits after it (pass barriers then tells their barriers apart);
   * else they share the scratch region, as one */
  int64_t scratch = lw_convert_bound(w), red = lw_reduce_bound(w);
  scratch = red > scratch ? red : scratch;
  w->parts_base = w->stage_bytes;
  w->parts_bytes = most;
  w->parts_region = TIR_REGION_PARTS;
  if (w->stage_bytes + most + scratch <= SMEM_OPTIN)
    w->stage_bytes += most;
  else
    w->parts_region = TIR_REGION_SCRATCH;
}

/* Write `id` (reduce = add) of an mma whose waves exchanged its lhs
 * (lw_exchange_plan): wave c holds elements [c ne/W, (c + 1) ne/W) of the
 * whole sum and adds them (or puts them in the tensor reduces' buffer). */
static void add_exchanged(lw *w, uint32_t id, int a, uint32_t owner) {
  wavec_ctx *ctx = w->ctx;
  wv_dist *d = w->d;
  wv_node *n = wv_get(w->g, id);
  uint32_t v = n->ops[0], ne = lw_nelem(w, v);
  int64_t W = d->waves[a];
  uint32_t chunk = ne / (uint32_t)W;
  add_set as = {.ids = &id, .nw = 1, .ne = ne, .mem = wv_get(w->g, n->mem),
                .owner = owner};
  as.at = wv_alloc(ctx, ne * sizeof *as.at);
  as.el = wv_alloc(ctx, ne * sizeof *as.el);
  for (uint32_t e = 0; e < ne; e++)
    as.el[e] = e;
  /* (the tensor reduces' clones, one under the other: the first waits
   * for the buffer, each puts its elements, the last issues them) */
  int64_t clone = lw_add_clone(w, id);
  bool bulk = clone >= 0;
  uint32_t at = 0;
  for (int64_t g = 0; g < clone; g++)
    at += lw_nelem(w, wv_get(w->g, w->add.clones[g])->ops[0]);
  if (clone == 0) {
    lw_store_add_wait(w);
    /* the buffer's last reduces have read it (pass barriers moves the
     * wait up to an earlier barrier and drops this one where it can) */
    lw_reuse_barrier(w, TIR_REGION_STORE);
  }
  uint32_t *is = lw_wave_preds(w, a, W);
  for (int64_t k = 0; k < W; k++) {
    uint32_t region = lw_region_begin(w, is[k]);
    lw_open_scope(w);
    uint32_t from = (uint32_t)k * chunk;
    if (bulk) {
      uint32_t *regs = wv_alloc(ctx, chunk * sizeof *regs);
      for (uint32_t i = 0; i < chunk; i++)
        regs[i] = w->vals[v] + i;
      lw_store_add_put(w, id, at + from, chunk, regs);
    } else {
      for (uint32_t g = from; g < from + chunk; g += 2)
        add_pair(w, &as, g, w->vals[v] + (g - from));
    }
    lw_close_scope(w);
    lw_region_end(w, region);
  }
  if (bulk && id == w->add.write)
    lw_store_add_issue(w, id);
  remark_access(w, id, as.mem, as.guards);
}

/* Write `id` (reduce = add) of a partial sum the waves hold, with the
 * other clones of its write (the same block, the same origin, their
 * values already computed): true when their parts were summed in shared
 * memory and added (or were with an earlier clone). */
static bool add_parts(lw *w, uint32_t id, int a, uint32_t owner) {
  wavec_ctx *ctx = w->ctx;
  wv_node *n = wv_get(w->g, id);
  uint32_t origin = w->ix->info[id].origin;
  uint32_t tag = lw_group_tag(w);
  if ((w->grouped[id] & ~3u) == tag)
    return (w->grouped[id] & 3) == LW_GROUP_DONE;
  const wv_block *b = &w->g->blocks.v[n->block];
  add_set as = {.mem = wv_get(w->g, n->mem), .owner = owner};
  as.ids = wv_alloc(ctx, b->nodes.n * sizeof *as.ids);
  as.nw = lw_clones_from(w, id, as.ids);
  bool ready = true;
  for (uint32_t i = 0; i < as.nw; i++) {
    /* computed before the first clone; unless summed below: alone */
    ready &= w->vals[wv_get(w->g, as.ids[i])->ops[0]] != 0;
    w->grouped[as.ids[i]] = tag | LW_GROUP_ALONE;
  }
  if (!ready)
    return false;
  for (uint32_t i = 0; i < as.nw; i++)
    as.ne += lw_nelem(w, wv_get(w->g, as.ids[i])->ops[0]);
  as.at = wv_alloc(ctx, (as.ne ? as.ne : 1) * sizeof *as.at);
  as.el = wv_alloc(ctx, (as.ne ? as.ne : 1) * sizeof *as.el);
  for (uint32_t i = 0, g = 0; i < as.nw; i++)
    for (uint32_t e = 0; e < lw_nelem(w, wv_get(w->g, as.ids[i])->ops[0]); e++) {
      as.at[g] = i;
      as.el[g++] = e;
    }
  if (!sum_parts(w, &as, a))
    return false;
  for (uint32_t i = 0; i < as.nw; i++)
    w->grouped[as.ids[i]] = tag | LW_GROUP_DONE;
  remark_access(w, id, as.mem, as.guards);
  if (!w->remarked[origin]) {
    w->remarked[origin] = true;
    wv_buf rb;
    wv_remark_start(w->k, n->loc, &rb);
    wv_buf_printf(&rb,
                  "write of '%s' adds a partial sum held by %lld waves: they "
                  "sum their parts in %lld bytes of shared memory (two "
                  "barriers), then each %s 1/%lld of the elements",
                  as.mem->name, (long long)w->d->waves[a],
                  (long long)lw_parts_slot_bytes(w, w->d->waves[a], as.ne),
                  w->add.write == id ? "puts in the tensor reduces' buffer"
                                     : "adds",
                  (long long)w->d->waves[a]);
    wv_remark_end(w->k, &rb);
  }
  return true;
}

void lw_write(lw *w, uint32_t id) {
  wavec_ctx *ctx = w->ctx;
  lw_store_remark(w, id);
  /* (a clone of the tensor stores' write: the last clone stores it) */
  if (lw_store_clone(w, id))
    return;
  /* (an adding write whose waves hold parts reaches its tensor reduces
   * through sum_parts) */
  uint32_t wv = wv_get(w->g, id)->ops[0];
  if (id == w->store.write ||
      (id == w->add.write && !w->xchg[wv] &&
       !(wv_partial(w->d, wv_get(w->g, wv)) & WV_PARTS_WAVES))) {
    lw_store_write(w, id);
    return;
  }
  wv_node *n = wv_get(w->g, id);
  uint32_t v = n->ops[0];
  wv_node *mem = wv_get(w->g, n->mem);
  tir_ty vt = tir_ty_of(wv_get(w->g, v)->type.dt);
  w->p->args.v[mem->index].written = true;
  /* runs of 16- and 32-bit elements of the memory's own type go out as
   * one vector store (T_STGV) where run_at shows them adjacent */
  bool pairs = mem->type.dt != WAVEC_I1 && vt == tir_ty_of(mem->type.dt) &&
               (tir_ty_bytes(vt) == 2 || tir_ty_bytes(vt) == 4) &&
               mem->type.n > 0 && !(ctx->test_hooks & WV_HOOK_SHIFT_LANE);
  bool add = n->flags & WV_WRITE_ADD;
  uint32_t ne = lw_nelem(w, v);
  bool *dup = wv_alloc(ctx, ne ? ne : 1), dups = false;
  uint32_t owner = add ? add_owner(w, id, v, dup) : 0;
  for (uint32_t e = 0; e < ne; e++)
    dups |= dup[e];
  int pa = add ? part_axis(w, v) : -1;
  /* (the parts' and the exchange's sums take every element once) */
  if (pa >= 0 && dups)
    wv_fail(ctx, D_UNSUPPORTED, n->loc,
            "write(..., reduce = add): its lanes hold elements of the "
            "partial sum twice; sum it over another layout first");
  if (pa >= 0 && w->xchg[v]) {
    add_exchanged(w, id, pa, owner);
    return;
  }
  wavec_loc at;
  if (pa >= 0 && !(ctx->test_hooks & WV_HOOK_ADD_EVERY_COPY) &&
      lw_knob(w->k, WAVEC_HW_SUM_PARTS, &at) != 0 &&
      add_parts(w, id, pa, owner))
    return;
  if (pa >= 0 && !w->remarked[w->ix->info[id].origin]) {
    w->remarked[w->ix->info[id].origin] = true;
    wv_buf rb;
    wv_remark_start(w->k, n->loc, &rb);
    wv_buf_printf(&rb, "write of '%s' adds a partial sum held by %lld waves: "
                  "each adds its own part (hardware(sum_parts = 0), or the "
                  "parts would not fit in shared memory)",
                  mem->name, (long long)w->d->waves[pa]);
    wv_remark_end(w->k, &rb);
  }
  uint32_t guards = 0;
  for (uint32_t e = 0; add && e < ne;)
    e += dup[e] ? 1
                : add_elems(w, n, mem, v, e, w->vals[v] + e,
                            pairs && e + 1 < ne && !dup[e + 1], owner,
                            &guards);
  for (uint32_t e = 0; !add && e < ne; e++) {
    uint32_t mask;
    uint32_t off = mem_offset(w, v, n->mapping, mem, e, &mask, &guards);
    bool own = own_guard(w, v, n->mapping, e, &mask);
    if ((ctx->test_hooks & WV_HOOK_SHIFT_LANE) && e == 0) {
      /* planted bug: lane 5 writes one element further */
      uint32_t lane = lw_expr(w, lw_concrete(w, w->d->lane, 0));
      uint32_t is5 = lw_reg(w, TY_PRED);
      lw_emit(w, T_SETP, TY_PRED, is5, lane, lw_iconst(w, 5), 0, TIR_CMP_EQ);
      uint32_t sh = lw_reg(w, TY_I32);
      uint32_t zero = lw_iconst(w, 0), one = lw_iconst(w, 1);
      lw_emit(w, T_SELP, TY_I32, sh, is5, one, zero, 0);
      off = lw_op2(w, T_ADD, TY_I32, off, sh);
    }
    /* (through a mapping: pairs at most, as each element's own guard
     * was checked for e alone) */
    uint32_t len = pairs && !own && e + 1 < ne
                       ? run_at(w, v, n->mapping, mem, e,
                                n->mapping ? 2 : ne - e)
                       : 1;
    if (len > 1) {
      uint32_t *regs = wv_alloc(ctx, len * sizeof *regs);
      for (uint32_t k = 0; k < len; k++)
        regs[k] = w->vals[v] + e + k;
      tir_instr *in = lw_emit(w, T_STGV, vt, 0, off, mask, 0, mem->index);
      in->list = regs;
      in->nlist = len;
      e += len - 1;
      continue;
    }
    lw_emit(w, T_STG, vt, 0, off, w->vals[v] + e, mask, mem->index);
  }
  remark_access(w, id, mem, guards);
}
