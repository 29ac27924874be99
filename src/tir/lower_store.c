/* The lowering: an output's epilogue through shared memory by tensor
 * stores (TMA), where the output allows it.
 *
 * Which write (lw_store_plan, before the program is lowered): in a kernel
 * whose rings are filled by tensor copies (warpgroup mmas, sm_90a), the
 * first write (one an output) of a row-major output of 2 to 5 dims,
 * outside every loop, of its own dtype (16 or 32 bits) without a mapping,
 * that the kernel does not read, whose workgroup tile (each dim split
 * among workgroups or whole in each, those before the last two in tiles
 * of 1; rows a multiple of 8, columns of whole panels of W = 128, 64 or
 * 32 bytes, the widest that divides a row, each on whole 1024-byte
 * groups of rows) its
 * threads cover exactly once (checked element by element for every
 * thread), and for which shared memory has room. hardware(stores = 1)
 * turns it off. Where the output's rows are not a multiple of 16 bytes (a
 * tensor map's stride) the buffer is the same, and the threads copy it out
 * (copy_out) instead of tensor stores.
 * One remark at the write says which epilogue it got and why.
 *
 * The buffer: dedicated, after the rings and their barriers, 1024-aligned,
 * holding P of the tile's column panels (rows x W bytes each, the
 * layout a swizzled tensor copy lands), P the most that divides the
 * panels and fits in the shared memory the workgroup may use (as many
 * workgroups a multiprocessor as the kernel had without it:
 * workgroups_per_sm, else two when the staged tiles fit two).
 *
 * The code (lw_store_write), for each round of P panels:
 *   thread 0 waits until its earlier tensor stores have read the buffer
 *   (cp.async.bulk.wait_group.read 0); a barrier among the storing threads
 *   (the consumers' named one when specialized); every thread writes its
 *   elements of the round's panels, pairs as one 32- or 64-bit access, at
 *   the W-byte swizzle's addresses (tir_swz; for 128, 16-byte chunk c of
 *   row r at c ^ (r mod 8): the 8 rows of a warp's 4-byte stores fall in
 *   distinct banks);
 *   fence.proxy.async.shared::cta; a barrier; thread 0 issues one tensor
 *   store per panel and run of up to 256 rows and commits the group.
 * Before the program ends, thread 0 waits for all of them
 * (cp.async.bulk.wait_group 0, lw_store_finish). With persistent tiles the
 * first wait of a tile's epilogue is the one that lets the buffer be
 * reused, so one tile's stores overlap the next tile's main loop. The
 * copy engine drops the elements of a tile that hangs over the tensor's
 * edge, so ragged sizes need no guard. The buffer's accesses and barriers
 * carry the region tag TIR_REGION_STORE: no wgmma reads the buffer, so
 * wgmmas in flight run on across them (pass waits) — the one-pass
 * backward's dk += ds q runs under the staging of its dq sums. */
#include "tir/lower.h"

/* Does write n lie in the loop that walks dim d? */
static bool in_walk_of(lw *w, const wv_node *n, wavec_sym d) {
  for (uint32_t b = n->block; b;) {
    const wv_node *it = wv_get(w->g, w->g->blocks.v[b].owner);
    if (it->sym == d)
      return true;
    b = it->block;
  }
  return false;
}

/* The first coordinate of write n's tile of the output along dim d, and
 * in *ext its extent: the workgroup offset of a dim split among
 * workgroups, the loop's tile of a dim a loop around the write walks,
 * else 0 and the whole dim (0: a dim a loop tiles elsewhere or of a
 * run-time size, which the tile cannot take). */
static ex_t tile_start(lw *w, const wv_node *n, wavec_sym d, int64_t *ext) {
  wavec_ctx *ctx = w->ctx;
  const wv_diminfo *di = &w->d->dim[d];
  if (di->wg_axis >= 0) {
    *ext = di->wg_tile;
    return ex_mul(ctx, ex_sym(ctx, w->d->WG[di->wg_axis]),
                  ex_const(ctx, di->wg_tile));
  }
  if (di->tile && in_walk_of(w, n, d)) {
    *ext = di->tile;
    return di->base;
  }
  *ext = di->tile || di->dynamic ? 0 : di->size;
  return ex_const(ctx, 0);
}

/* Element e's local coordinate along each dim of the output (its place in
 * the workgroup tile) for every thread of the block: out[i][t] for dim i
 * and thread t; false where they depend on more than the thread ids. */
static bool local_coords(lw *w, const wv_node *n, uint32_t v,
                         const wv_node *mem, uint32_t e, int64_t **out) {
  wavec_ctx *ctx = w->ctx;
  ex_t coord[WV_MAX_DIMS];
  lw_mem_coords(w, v, 0, mem, e, coord);
  for (uint32_t i = 0; i < mem->type.n; i++) {
    int64_t ext;
    ex_t start = tile_start(w, n, mem->type.dims[i], &ext);
    ex_t local = ex_simplify(ctx, ex_sub(ctx, coord[i], start), w->ranges,
                             w->nranges);
    if (!lw_eval_threads(w, local, out[i]))
      return false;
  }
  return true;
}

/* The elements of the clones plan sp stores together, one clone after
 * the other (a write not split by expansion: itself alone). */
static uint32_t plan_elems(lw *w, const store_plan *sp) {
  uint32_t ne = 0;
  for (uint32_t g = 0; g < sp->nclones; g++)
    ne += lw_nelem(w, wv_get(w->g, sp->clones[g])->ops[0]);
  return ne;
}

/* Why write `id` keeps direct stores, or NULL (then *sp is its plan but
 * for the buffer). */
static const char *refusal(lw *w, uint32_t id, store_plan *sp) {
  wavec_ctx *ctx = w->ctx;
  wv_node *n = wv_get(w->g, id);
  wv_node *mem = wv_get(w->g, n->mem);
  wv_node *val = wv_get(w->g, n->ops[0]);
  if (w->d->hw[WAVEC_HW_STORES] == 1)
    return "hardware(stores = 1)";
  if (!w->tmaps.n)
    return "the kernel's rings are not tensor copies";
  if (ctx->test_hooks & WV_HOOK_NO_TMA)
    return "test hook no-tma";
  bool add = n->flags & WV_WRITE_ADD;
  if (add && w->d->hw[WAVEC_HW_ADDS] == 1)
    return "hardware(adds = 1)";
  /* (an adding write may lie in a loop: each iteration's reduces read the
   * buffer before the next one's writes, as the rounds of a tile do) */
  if (!add && n->block != 0)
    return "the write lies inside a loop";
  if (n->mapping)
    return "the write goes through a mapping";
  uint32_t nd = mem->type.n;
  if (nd < 2 || nd > 5)
    return "the output has 1 dim, or more than 5 (a tensor map's most)";
  for (uint32_t i = 0; i < nd; i++)
    if (val->type.n != nd || val->type.dims[i] != mem->type.dims[i])
      return "the written value's dims are not the output's, in its order";
  if (val->type.dt != mem->type.dt)
    return "the written value's dtype is not the output's";
  int64_t es = tir_ty_bytes(tir_ty_of(mem->type.dt));
  if (es != 2 && es != 4)
    return "its elements are not of 16 or 32 bits";
  /* a plain write's clones (a wave holding two wgmmas' rows of the tile)
   * are stored together, by the last: every other access of the output
   * refuses */
  /* (an adding write's clones, where each wave adds its columns of an
   * exchanged mma's result: lw_exchange_plan exchanges all or none) */
  bool xchg = add && w->xchg[n->ops[0]];
  uint32_t origin = w->ix->info[id].origin, ng = 0;
  uint32_t *grp = wv_alloc(ctx, w->g->nodes.n * sizeof *grp);
  for (uint32_t o = 1; o < w->g->nodes.n; o++) {
    wv_node *x = wv_get(w->g, o);
    bool clone = x->op == WAVEC_OP_WRITE &&
                 w->ix->info[o].origin == origin && x->block == n->block;
    if (o == id || (clone && (!add || xchg))) {
      grp[ng++] = o;
      continue;
    }
    if (x->mem == n->mem &&
        (x->op == WAVEC_OP_WRITE || x->op == WAVEC_OP_READ))
      return x->op == WAVEC_OP_READ ? "the kernel reads the output too"
             : clone ? "expansion splits the adding write into pieces (its "
                       "value's layout is not one tile a thread)"
                     : "the output is written more than once";
  }
  int64_t ext[WV_MAX_DIMS];
  for (uint32_t i = 0; i < nd; i++) {
    const wv_diminfo *di = &w->d->dim[mem->type.dims[i]];
    tile_start(w, n, mem->type.dims[i], &ext[i]);
    if (!ext[i])
      return "a dim of the output is neither split among workgroups nor "
             "whole in each (a fixed size)";
    if (i + 2 < nd && ext[i] != 1)
      return "a dim before the last two has a workgroup tile other than 1";
    if (!di->dynamic && di->size > INT32_MAX)
      return "the output has a dim of 2^31 or more (tensor stores take "
             "32-bit coordinates)";
  }
  int64_t rows = ext[nd - 2], cols = ext[nd - 1];
  const wv_diminfo *last = &w->d->dim[mem->type.dims[nd - 1]];
  /* rows that are not a multiple of 16 bytes (a tensor map's stride):
   * the threads copy the buffer out */
  sp->by_threads = (last->dynamic ? last->multiple : last->size) * es % 16;
  if (add && sp->by_threads)
    return "its rows are not a multiple of 16 bytes (a tensor map's stride)";
  /* column panels of pw bytes, the widest swizzle that divides a row; a
   * tensor store's box of rows as the buffer's 128-byte rows would have
   * it (groups of 8) */
  int64_t pw = lw_swz_width(cols * es), box = lw_box_rows(SWZ_ROW_BYTES, rows);
  if (!pw)
    return "the workgroup tile's rows are not a multiple of 32 bytes (the "
           "narrowest swizzled column panel)";
  int64_t pc = pw / es;
  wv_buf wb;
  wv_buf_init(&wb, ctx);
  if (!box) {
    wv_buf_printf(&wb, "the workgroup tile is not rows of 8 by %lld-byte "
                       "column panels", (long long)pw);
    return wv_buf_str(&wb);
  }
  /* each panel, and each tensor store's box of rows, on 1024 bytes */
  if (rows * pw % SWZ_ALIGN || box * pw % SWZ_ALIGN) {
    wv_buf_printf(&wb, "the workgroup tile's %lld rows of %lld-byte column "
                       "panels are not whole 1024-byte groups",
                  (long long)rows, (long long)pw);
    return wv_buf_str(&wb);
  }
  if (rows * cols * es > SMEM_OPTIN)
    return "the workgroup tile is larger than shared memory";
  /* every element of the tile, once; an adding write's partial sum once
   * per wave that holds a part (they sum them first: sum_parts) */
  sp->clones = grp;
  sp->nclones = ng;
  uint32_t ne = plan_elems(w, sp);
  int64_t copies = 1;
  if (wv_partial(w->d, val) & WV_PARTS_WAVES) {
    int64_t W = w->d->waves[w->d->dim[val->sym].wg_axis];
    if (w->d->hw[WAVEC_HW_SUM_PARTS] == 0 && w->k->hw.ints[WAVEC_HW_SUM_PARTS])
      return "its waves hold parts and add them each (hardware(sum_parts = "
             "0))";
    if (!xchg && (ng > 1 || ne % (2 * W)))
      return "its waves hold parts whose elements do not split in pairs "
             "among them";
    copies = W;
  }
  int64_t threads = lw_block_threads(w);
  int64_t *at[WV_MAX_DIMS];
  for (uint32_t i = 0; i < nd; i++)
    at[i] = wv_alloc(ctx, (size_t)threads * sizeof *at[i]);
  const int64_t *r = at[nd - 2], *c = at[nd - 1];
  int64_t *prev = wv_alloc(ctx, (size_t)threads * sizeof *prev);
  uint8_t *hit = wv_alloc(ctx, (size_t)(rows * cols));
  sp->panel_of = wv_alloc(ctx, ne * sizeof *sp->panel_of);
  sp->follows = wv_alloc(ctx, ne * sizeof *sp->follows);
  sp->calign = wv_alloc(ctx, ne * sizeof *sp->calign);
  for (uint32_t e = 0, g = 0, e0 = 0; e < ne; e++) {
    const wv_node *cn = wv_get(w->g, grp[g]);
    if (!local_coords(w, cn, cn->ops[0], mem, e - e0, at))
      return "its elements' places in the tile depend on more than the "
             "thread";
    if (e + 1 - e0 == lw_nelem(w, cn->ops[0]))
      e0 = e + 1, g++;
    int64_t align = 8;
    for (int64_t t = 0; t < threads; t++) {
      bool lead = true; /* the dims before the last two: tiles of 1 */
      for (uint32_t i = 0; i + 2 < nd; i++)
        lead &= at[i][t] == 0;
      if (!lead || r[t] < 0 || r[t] >= rows || c[t] < 0 || c[t] >= cols ||
          hit[r[t] * cols + c[t]]++ >= copies)
        return "the threads do not write each element of the tile once";
      if (c[t] / pc != c[0] / pc)
        return "an element's column panel differs between threads";
      while (c[t] % align)
        align /= 2;
    }
    sp->panel_of[e] = c[0] / pc;
    sp->calign[e] = (uint8_t)align;
    /* the next column of the same row as element e - 1, in every thread */
    bool next = e > 0;
    for (int64_t t = 0; t < threads && next; t++)
      next = r[t] * cols + c[t] == prev[t] + 1;
    sp->follows[e] = next;
    for (int64_t t = 0; t < threads; t++)
      prev[t] = r[t] * cols + c[t];
  }
  for (int64_t i = 0; i < rows * cols; i++)
    if (hit[i] != copies)
      return "the threads do not write each element of the tile once";
  sp->write = grp[ng - 1];
  sp->rows = rows;
  sp->cols = cols;
  sp->swz = pw;
  sp->panel_cols = pc;
  sp->panels = cols / pc;
  sp->box_rows = box;
  return NULL;
}

/* The shared memory one workgroup may use: as many a multiprocessor as
 * the kernel had without the buffer. */
static int64_t smem_limit(const lw *w) {
  int64_t n = w->d->hw[WAVEC_HW_WORKGROUPS_PER_SM];
  if (!n) /* (a specialized kernel's registers allow one) */
    n = w->sched.specialize || lw_alone(w, w->stage_bytes) ? 1 : 2;
  int64_t lim = SM_SMEM / n - CTA_RESERVED;
  return lim < SMEM_OPTIN ? lim : SMEM_OPTIN;
}

/* The one remark per write of a warpgroup kernel: its epilogue (given
 * where the write is lowered, so that remarks keep program order). */
static void remark_store(lw *w, uint32_t id, const char *why_not) {
  wv_node *n = wv_get(w->g, id);
  bool add = n->flags & WV_WRITE_ADD;
  const store_plan *sp = add ? &w->add : &w->store;
  wv_buf b;
  wv_remark_start(w->k, n->loc, &b);
  wv_buf_printf(&b, "write of '%s': ", wv_get(w->g, n->mem)->name);
  if (why_not) {
    wv_buf_printf(&b, "each thread %s its elements (not tensor %s: %s)",
                  add ? "adds" : "stores", add ? "reduces" : "stores",
                  why_not);
  } else {
    int64_t rounds = sp->panels / sp->per_round;
    wv_buf_printf(&b, "%s a dedicated %lld-byte shared buffer holding %lld "
                      "of the tile's %lld column panels of %lld bytes (%lld "
                      "round%s a tile), written with the %lld-byte swizzle",
                  sp->by_threads ? "through"
                  : add          ? "tensor reduces (TMA, adding) from"
                                 : "tensor stores (TMA) from",
                  (long long)(sp->per_round * sp->rows * sp->swz),
                  (long long)sp->per_round, (long long)sp->panels,
                  (long long)sp->swz, (long long)rounds,
                  rounds == 1 ? "" : "s", (long long)sp->swz);
    wv_buf_puts(&b, sp->by_threads
                        ? " and read back by the threads, consecutive "
                          "threads storing consecutive elements of a row "
                          "(its rows are not a multiple of 16 bytes, which a "
                          "tensor map's stride must be), guarded at the edges"
                        : "; thread 0 issues them, and elements past the "
                          "edge are dropped");
  }
  wv_remark_end(w->k, &b);
}

void lw_store_plan(lw *w) {
  if (!w->wgmma)
    return;
  w->store.why_not = wv_alloc(w->ctx, w->g->nodes.n * sizeof *w->store.why_not);
  for (uint32_t id = 1; id < w->g->nodes.n; id++) {
    if (wv_get(w->g, id)->op != WAVEC_OP_WRITE || lw_store_clone(w, id) ||
        (w->store.nclones > 1 && id == w->store.write) ||
        lw_add_clone(w, id) >= 0)
      continue;
    store_plan sp = {0};
    const char *why = refusal(w, id, &sp);
    bool add = wv_get(w->g, id)->flags & WV_WRITE_ADD;
    store_plan *to = add ? &w->add : &w->store;
    if (!why && to->write)
      why = "another output of the kernel has them";
    if (!why) {
      int64_t base = (w->stage_bytes + SWZ_ALIGN - 1) / SWZ_ALIGN * SWZ_ALIGN;
      int64_t panel = sp.rows * sp.swz, lim = smem_limit(w);
      for (sp.per_round = sp.panels; sp.per_round > 0; sp.per_round--)
        if (sp.panels % sp.per_round == 0 &&
            base + sp.per_round * panel <= lim)
          break;
      int64_t threads = lw_block_threads(w);
      /* an adding write: the whole tile in one round (its parts summed
       * first need their shared memory too) */
      const wv_node *val = wv_get(w->g, wv_get(w->g, id)->ops[0]);
      int64_t parts = 0;
      if (add && (wv_partial(w->d, val) & WV_PARTS_WAVES) &&
          !w->xchg[wv_get(w->g, id)->ops[0]])
        parts = lw_parts_slot_bytes(w, w->d->waves[w->d->dim[val->sym].wg_axis],
                                    lw_nelem(w, wv_get(w->g, id)->ops[0]));
      if (!sp.per_round) {
        why = "no room in shared memory for a column panel of the tile";
      } else if (add && (sp.per_round != sp.panels ||
                         base + sp.panels * panel + parts > SMEM_OPTIN)) {
        why = "no room in shared memory for the whole tile (and the parts' "
              "sum)";
      } else if (sp.by_threads &&
                 sp.rows * sp.per_round * sp.panel_cols % threads) {
        why = "its rows are not a multiple of 16 bytes (a tensor map's "
              "stride), and the threads do not divide a round of the tile";
      } else {
        sp.base = base;
        w->stage_bytes = base + sp.per_round * panel;
        if (!sp.by_threads) {
          const wv_node *mem = wv_get(w->g, wv_get(w->g, id)->mem);
          tir_tmap m = {.arg = mem->index, .rank = mem->type.n,
                        .swz = sp.swz};
          for (uint32_t d = 0; d + 2 < m.rank; d++)
            m.box[d] = 1;
          m.box[m.rank - 2] = sp.box_rows;
          m.box[m.rank - 1] = sp.panel_cols;
          vec_push(w->ctx, &w->tmaps, m);
          sp.tmap = w->tmaps.n - 1;
        }
        sp.why_not = w->store.why_not;
        *to = sp;
      }
    }
    w->store.why_not[id] = why;
  }
}

bool lw_store_clone(const lw *w, uint32_t id) {
  for (uint32_t i = 0; i + 1 < w->store.nclones; i++)
    if (w->store.clones[i] == id)
      return true;
  return false;
}

int64_t lw_add_clone(const lw *w, uint32_t id) {
  for (uint32_t i = 0; i < w->add.nclones; i++)
    if (w->add.clones[i] == id)
      return i;
  return -1;
}

void lw_store_remark(lw *w, uint32_t id) {
  /* (one remark a write: at its last clone) */
  if (!w->store.why_not)
    return;
  uint32_t *later = wv_alloc(
      w->ctx, w->g->blocks.v[wv_get(w->g, id)->block].nodes.n * sizeof *later);
  if (lw_clones_from(w, id, later) == 1)
    remark_store(w, id, w->store.why_not[id]);
}

/* Registers of swz(B) by the register of B (lw_store_write). */
typedef struct swz_memo {
  uint32_t *b, *s, n;
} swz_memo;

/* The shared address of byte offset A + B of the buffer, swizzled in W
 * bytes: A a multiple of 8 W (the panel and the group of 8 rows), B the
 * row in the group and the byte in the row, so that the address is A +
 * swz(B) (the pattern repeats every 8 W bytes), with one swz per distinct
 * B. */
static uint32_t swz_addr(lw *w, ex_t a, ex_t b, int64_t W, swz_memo *m) {
  uint32_t rb = lw_expr(w, b), s = 0;
  for (uint32_t i = 0; i < m->n && !s; i++)
    if (m->b[i] == rb)
      s = m->s[i];
  if (!s) {
    s = lw_swz(w, rb, W);
    m->b[m->n] = rb;
    m->s[m->n++] = s;
  }
  return lw_op2(w, T_ADD, TY_I32, lw_smem_addr(w, a, 0), s);
}

/* The elements from e stored as one access: 4 or 2 that follow each
 * other in a row, aligned to their bytes (at most 16), else 1. */
static uint32_t run_at(const store_plan *sp, uint32_t e, uint32_t ne,
                       int64_t es) {
  for (uint32_t len = 4; len >= 2; len /= 2) {
    bool ok = e + len <= ne && len * es <= 16 && sp->calign[e] % len == 0;
    for (uint32_t j = 1; j < len && ok; j++)
      ok = sp->follows[e + j];
    if (ok)
      return len;
  }
  return 1;
}

/* The threads copy the round of panels from p0 out of the buffer: element
 * i x T + t of the round (T the storing threads, t the thread), in row-
 * major order over its rows and columns, is thread t's i-th: a warp reads
 * 32 consecutive elements of a row (distinct banks: one 128-byte row of
 * the swizzle) and stores them to consecutive addresses, each element
 * guarded where its dim is ragged. */
static void copy_out(lw *w, uint32_t id, int64_t p0, const ex_t *start,
                     swz_memo *memo) {
  wavec_ctx *ctx = w->ctx;
  const store_plan *sp = &w->store;
  wv_node *n = wv_get(w->g, id);
  wv_node *mem = wv_get(w->g, n->mem);
  tir_ty ty = tir_ty_of(mem->type.dt);
  int64_t es = tir_ty_bytes(ty), pc = sp->panel_cols;
  int64_t cols = sp->per_round * pc, panel = sp->rows * sp->swz;
  int64_t threads = lw_block_threads(w);
  uint32_t nd = mem->type.n, guards = 0;
  ex_t tid = lw_linear_tid(w);
  for (int64_t i = 0; i < sp->rows * cols / threads; i++) {
    ex_t at = ex_add(ctx, ex_const(ctx, i * threads), tid);
    ex_t row = ex_simplify(ctx, ex_floordiv(ctx, at, ex_const(ctx, cols)),
                           w->ranges, w->nranges);
    ex_t col = ex_simplify(ctx, ex_mod(ctx, at, ex_const(ctx, cols)),
                           w->ranges, w->nranges);
    ex_t pl = ex_floordiv(ctx, col, ex_const(ctx, pc));
    ex_t a = ex_add(
        ctx,
        ex_add(ctx, ex_const(ctx, sp->base),
               ex_mul(ctx, pl, ex_const(ctx, panel))),
        ex_mul(ctx, ex_floordiv(ctx, row, ex_const(ctx, 8)),
               ex_const(ctx, 8 * sp->swz)));
    ex_t b = ex_add(
        ctx,
        ex_mul(ctx, ex_mod(ctx, row, ex_const(ctx, 8)),
               ex_const(ctx, sp->swz)),
        ex_mul(ctx, ex_mod(ctx, col, ex_const(ctx, pc)), ex_const(ctx, es)));
    a = ex_simplify(ctx, a, w->ranges, w->nranges);
    b = ex_simplify(ctx, b, w->ranges, w->nranges);
    uint32_t val = lw_reg(w, ty);
    lw_emit(w, T_LDS, ty, val, swz_addr(w, a, b, sp->swz, memo), 0, 0,
            0)->tag = TIR_REGION_STORE;
    ex_t coord[WV_MAX_DIMS];
    for (uint32_t d = 0; d < nd; d++)
      coord[d] = start[d];
    coord[nd - 2] = ex_add(ctx, start[nd - 2], row);
    coord[nd - 1] =
        ex_add(ctx, start[nd - 1], ex_add(ctx, ex_const(ctx, p0 * pc), col));
    for (uint32_t d = 0; d < nd; d++)
      coord[d] = ex_simplify(ctx, coord[d], w->ranges, w->nranges);
    uint32_t mask;
    uint32_t off = lw_mem_offset_at(w, id, 0, mem, coord, &mask, &guards);
    lw_emit(w, T_STG, ty, 0, off, val, mask, mem->index);
  }
}

/* A write's tile start along each dim of its output, and each element's
 * row and column in the tile. */
typedef struct tile_at {
  ex_t start[WV_MAX_DIMS];
  ex_t *lr, *lc;
} tile_at;

/* The tile of plan sp's write and each of its elements' places in it. */
static tile_at tile_of(lw *w, const store_plan *sp) {
  wavec_ctx *ctx = w->ctx;
  wv_node *n = wv_get(w->g, sp->write);
  wv_node *mem = wv_get(w->g, n->mem);
  uint32_t ne = plan_elems(w, sp), nd = mem->type.n;
  tile_at t;
  for (uint32_t i = 0; i < nd; i++) {
    int64_t ext;
    t.start[i] = tile_start(w, n, mem->type.dims[i], &ext);
  }
  t.lr = wv_alloc(ctx, ne * sizeof *t.lr);
  t.lc = wv_alloc(ctx, ne * sizeof *t.lc);
  for (uint32_t g = 0, e = 0; g < sp->nclones; g++) {
    uint32_t v = wv_get(w->g, sp->clones[g])->ops[0];
    for (uint32_t k = 0; k < lw_nelem(w, v); k++, e++) {
      ex_t coord[WV_MAX_DIMS];
      lw_mem_coords(w, v, 0, mem, k, coord);
      t.lr[e] = ex_simplify(ctx, ex_sub(ctx, coord[nd - 2], t.start[nd - 2]),
                            w->ranges, w->nranges);
      t.lc[e] = ex_simplify(ctx, ex_sub(ctx, coord[nd - 1], t.start[nd - 1]),
                            w->ranges, w->nranges);
    }
  }
  return t;
}

/* Elements e .. e + len - 1 (a run: run_at) of the round from panel p0
 * into the buffer, from registers regs, at the 128-byte swizzle's
 * addresses. */
static void put_run(lw *w, const store_plan *sp, tir_ty ty, const tile_at *t,
                    uint32_t e, uint32_t len, const uint32_t *regs,
                    int64_t p0, swz_memo *memo) {
  wavec_ctx *ctx = w->ctx;
  int64_t es = tir_ty_bytes(ty), pc = sp->panel_cols;
  int64_t panel = sp->rows * sp->swz, p = sp->panel_of[e];
  /* A: the panel in the buffer and the group of 8 rows; B: the row in the
   * group and the byte in the row */
  ex_t a = ex_add(ctx, ex_const(ctx, sp->base + (p - p0) * panel),
                  ex_mul(ctx, ex_floordiv(ctx, t->lr[e], ex_const(ctx, 8)),
                         ex_const(ctx, 8 * sp->swz)));
  ex_t b = ex_add(
      ctx,
      ex_mul(ctx, ex_mod(ctx, t->lr[e], ex_const(ctx, 8)),
             ex_const(ctx, sp->swz)),
      ex_mul(ctx, ex_sub(ctx, t->lc[e], ex_const(ctx, p * pc)),
             ex_const(ctx, es)));
  a = ex_simplify(ctx, a, w->ranges, w->nranges);
  b = ex_simplify(ctx, b, w->ranges, w->nranges);
  uint32_t addr = swz_addr(w, a, b, sp->swz, memo);
  if (len == 1) {
    lw_emit(w, T_STS, ty, 0, addr, regs[0], 0, 0)->tag = TIR_REGION_STORE;
    return;
  }
  uint32_t *l = wv_alloc(ctx, len * sizeof *l);
  memcpy(l, regs, len * sizeof *l);
  tir_instr *in = lw_emit(w, T_STSV, ty, 0, addr, 0, 0, 0);
  in->tag = TIR_REGION_STORE;
  in->list = l;
  in->nlist = len;
}

/* The round from panel p0 out of the buffer: the proxy fence, a barrier,
 * then thread 0's tensor stores (or reduces) of each panel and run of up
 * to 256 rows, and the group's commit. */
/* Thread 0's predicate: it issues the tensor stores. */
static uint32_t leader_of(lw *w) {
  uint32_t zero = lw_iconst(w, 0);
  uint32_t leader = lw_reg(w, TY_PRED);
  uint32_t tid = lw_expr(w, lw_linear_tid(w));
  lw_emit(w, T_SETP, TY_I32, leader, tid, zero, 0, TIR_CMP_EQ);
  return leader;
}

static void issue_round(lw *w, const store_plan *sp, uint32_t id,
                        const tile_at *t, int64_t p0, uint32_t leader) {
  wavec_ctx *ctx = w->ctx;
  wv_node *n = wv_get(w->g, id);
  wv_node *mem = wv_get(w->g, n->mem);
  tir_ty ty = tir_ty_of(mem->type.dt);
  int64_t pc = sp->panel_cols, panel = sp->rows * sp->swz;
  uint32_t nd = mem->type.n;
  /* planted bug for the tests: no proxy fence after the writes */
  if (!(ctx->test_hooks & WV_HOOK_TMA_STORE_NO_FENCE))
    lw_emit(w, T_FENCEPX, TY_PRED, 0, 0, 0, 0, 0);
  lw_region_barrier(w, TIR_REGION_STORE);
  for (int64_t p = p0; p < p0 + sp->per_round; p++)
    for (int64_t r = 0; r < sp->rows; r += sp->box_rows) {
      uint32_t *co = wv_alloc(ctx, nd * sizeof *co);
      ex_t at[WV_MAX_DIMS];
      for (uint32_t d = 0; d < nd; d++)
        at[d] = t->start[d];
      at[nd - 2] = ex_add(ctx, t->start[nd - 2], ex_const(ctx, r));
      at[nd - 1] = ex_add(ctx, t->start[nd - 1], ex_const(ctx, p * pc));
      for (uint32_t d = 0; d < nd; d++) {
        /* a box past the end of a run-time size may start at 2^31 or
         * beyond; 2^31-1 lies past the edge too (as in lw_tma_fill) */
        ex_t x = lw_concrete(w, at[d], 0);
        int64_t lo, hi;
        ex_bounds(ctx, x, w->ranges, w->nranges, &lo, &hi);
        if (hi > INT32_MAX)
          x = ex_min(ctx, x, ex_const(ctx, INT32_MAX));
        co[d] = lw_expr(w, x);
      }
      uint32_t src =
          lw_iconst(w, sp->base + (p - p0) * panel + r * sp->swz);
      tir_instr *in = lw_emit(w, T_TMAST, ty, 0, src, 0, leader, sp->tmap);
      in->list = co;
      in->nlist = nd;
      if (n->flags & WV_WRITE_ADD)
        in->imm2 = TIR_TMAST_ADD;
    }
  lw_emit(w, T_BULKCOMMIT, TY_PRED, 0, 0, 0, 0, 0);
}

/* Thread 0 waits until its earlier tensor stores have read the buffer
 * (unless planted not to); the barrier after it follows. */
static void wait_buffer(lw *w, const store_plan *sp) {
  if (!(w->ctx->test_hooks & WV_HOOK_TMA_STORE_NO_WAIT) && !sp->by_threads)
    lw_emit(w, T_BULKWAITR, TY_PRED, 0, 0, 0, 0, 0);
}

void lw_store_write(lw *w, uint32_t id) {
  wavec_ctx *ctx = w->ctx;
  wv_node *n = wv_get(w->g, id);
  const store_plan *sp = n->flags & WV_WRITE_ADD ? &w->add : &w->store;
  wv_node *mem = wv_get(w->g, n->mem);
  tir_ty ty = tir_ty_of(mem->type.dt);
  int64_t es = tir_ty_bytes(ty);
  w->p->args.v[mem->index].written = true;
  uint32_t ne = plan_elems(w, sp);
  tile_at t = tile_of(w, sp);
  uint32_t leader = leader_of(w);
  swz_memo memo = {wv_alloc(ctx, ne * sizeof *memo.b),
                   wv_alloc(ctx, ne * sizeof *memo.s), 0};
  uint32_t *regs = wv_alloc(ctx, ne * sizeof *regs);
  for (uint32_t g = 0, e = 0; g < sp->nclones; g++) {
    uint32_t v = wv_get(w->g, sp->clones[g])->ops[0];
    for (uint32_t k = 0; k < lw_nelem(w, v); k++)
      regs[e++] = w->vals[v] + k;
  }
  for (int64_t p0 = 0; p0 < sp->panels; p0 += sp->per_round) {
    /* planted bug for the tests: write the buffer while the stores issued
     * from it may still read it (copied out by the threads: while other
     * threads may still read it) */
    bool no_wait = ctx->test_hooks & WV_HOOK_TMA_STORE_NO_WAIT;
    wait_buffer(w, sp);
    if (!no_wait || !sp->by_threads)
      lw_region_barrier(w, TIR_REGION_STORE);
    for (uint32_t e = 0, len; e < ne; e += len) {
      int64_t p = sp->panel_of[e];
      len = run_at(sp, e, ne, es);
      if (p < p0 || p >= p0 + sp->per_round)
        continue;
      put_run(w, sp, ty, &t, e, len, regs + e, p0, &memo);
    }
    if (sp->by_threads) {
      lw_region_barrier(w, TIR_REGION_STORE);
      copy_out(w, id, p0, t.start, &memo);
      continue;
    }
    issue_round(w, sp, id, &t, p0, leader);
  }
}

void lw_store_add_wait(lw *w) { wait_buffer(w, &w->add); }

/* The adding write's tile (its elements' places), worked out once: the
 * parts' sum puts its elements a pair at a time. */
static const tile_at *add_tile(lw *w) {
  if (!w->add_tile) {
    tile_at *t = wv_alloc(w->ctx, sizeof *t);
    *t = tile_of(w, &w->add);
    w->add_tile = t;
  }
  return w->add_tile;
}

void lw_store_add_put(lw *w, uint32_t id, uint32_t e, uint32_t len,
                      const uint32_t *regs) {
  const store_plan *sp = &w->add;
  wv_node *n = wv_get(w->g, id);
  tir_ty ty = tir_ty_of(wv_get(w->g, n->mem)->type.dt);
  uint32_t ne = lw_nelem(w, n->ops[0]);
  const tile_at *t = add_tile(w);
  /* (a memo of this call's: its registers are defined in this region) */
  swz_memo memo = {wv_alloc(w->ctx, ne * sizeof *memo.b),
                   wv_alloc(w->ctx, ne * sizeof *memo.s), 0};
  for (uint32_t k = 0, run; k < len; k += run) {
    run = run_at(sp, e + k, e + len, tir_ty_bytes(ty));
    put_run(w, sp, ty, t, e + k, run, regs + k, 0, &memo);
  }
}

void lw_store_add_issue(lw *w, uint32_t id) {
  issue_round(w, &w->add, id, add_tile(w), 0, leader_of(w));
}

void lw_store_finish(lw *w) {
  /* planted bug for the tests: end with tensor stores in flight */
  if (((w->store.write && !w->store.by_threads) || w->add.write) &&
      !(w->ctx->test_hooks & WV_HOOK_TMA_STORE_NO_DRAIN))
    lw_emit(w, T_BULKWAIT, TY_PRED, 0, 0, 0, 0, 0);
}
