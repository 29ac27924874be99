/* The lowering: mma.sync and the warpgroup mma (wgmma). */
#include "tir/lower.h"

/* Element e of operand r (lhs 0, rhs 1) of mma n as type ty: past the edge
 * of a ragged reduction dimension, 0 (unless the operand is a read that
 * fills with 0, as staged reads do), so that padding never enters the
 * sum, whatever was computed there. */
static uint32_t operand(lw *w, const wv_node *n, int r, uint32_t e, tir_ty ty,
                        bool *guarded) {
  uint32_t op = n->ops[r];
  if (lw_fills_with(w, op, 0.0))
    return lw_elem(w, op, e, ty);
  return lw_elem_unpadded(w, op, e, ty, n->sym, 0.0, guarded);
}

static void remark_operands(lw *w, uint32_t id, bool guarded) {
  if (!guarded)
    return;
  wv_node *n = wv_get(w->g, id);
  lw_remark_guards(w, id, "mma takes its computed operands past the edge of",
                   &n->sym, 1, " as 0");
}

/* The staged, swizzled tile of mma operand r of node n for a wgmma, and
 * whether it is stored N-contiguous (the rhs of p · v: memory [K, N]); an
 * error at the mma's line when the operand cannot be read by a wgmma. */
static stage *wgmma_tile(lw *w, wv_node *n, int r, bool *mn) {
  wavec_ctx *ctx = w->ctx;
  uint32_t op = n->ops[r];
  wv_node *o = wv_get(w->g, op);
  stage *st = o->op == WAVEC_OP_READ ? w->stage_of[w->ix->info[op].origin]
                                     : NULL;
  wavec_sym last = 0;
  if (st) {
    const wv_type *mt = &wv_get(w->g, st->mem)->type;
    last = mt->dims[mt->n - 1];
  }
  *mn = st && last != n->sym;
  const wv_mma_info *mi = wv_mma_info_get((wavec_mma_kind)w->d->mma);
  int64_t es = tir_ty_bytes(tir_ty_of(mi->in));
  if (st && st->swz && *mn && es == 1)
    wv_fail(ctx, D_UNSUPPORTED, n->loc,
            "wgmma reads 8-bit operands K-major only (the PTX ISA's "
            "transpose is for 16-bit types): the last dimension of '%s' "
            "must be '%s', not '%s'; store it transposed",
            wv_get(w->g, st->mem)->name, wavec_symbol_name(ctx, n->sym),
            wavec_symbol_name(ctx, last));
  const char *why = st ? NULL : w->unstaged[w->ix->info[op].origin];
  if (!st || !st->swz)
    wv_fail(ctx, D_UNSUPPORTED, n->loc,
            "wgmma reads its %s from shared memory, where this one cannot "
            "be staged: %s",
            r ? "rhs" : "lhs", why ? why : "it is not a read of memory");
  /* M-contiguous lhs, N-contiguous rhs: the result's dim of the operand */
  wavec_sym own = n->type.dims[n->type.n - (r ? 1 : 2)];
  if (*mn && last != own)
    wv_fail(ctx, D_UNSUPPORTED, n->loc,
            "wgmma reads its %s with '%s' or '%s' last: the last dimension "
            "of '%s' is '%s'",
            r ? "rhs" : "lhs", wavec_symbol_name(ctx, n->sym),
            wavec_symbol_name(ctx, own), wv_get(w->g, st->mem)->name,
            wavec_symbol_name(ctx, last));
  return st;
}

void lw_wgmma_staged(lw *w) {
  for (uint32_t id = 1; id < w->g->nodes.n; id++) {
    wv_node *n = wv_get(w->g, id);
    for (int r = 0; r < 2 && n->op == WAVEC_OP_MMA && w->wgmma; r++) {
      bool mn;
      if (r == 1 || !lw_nelem(w, n->ops[0])) /* (an lhs in registers) */
        wgmma_tile(w, n, r, &mn);
    }
  }
}

/* Is node id a Register[...] of the constant 0? */
static bool zero_register(lw *w, uint32_t id) {
  const wv_node *n = wv_get(w->g, id);
  if (n->op != WAVEC_OP_REGISTER)
    return false;
  const wv_node *v = wv_get(w->g, n->ops[0]);
  return v->op == WAVEC_OP_SCALAR && v->fval == 0.0;
}

/* The first part's predicate (lw_first_part) where mma n leaves parts and
 * starts from an accumulator that is not zero (the head of its k-chain:
 * the links after it accumulate the part itself), else 0. */
static uint32_t starts_from(lw *w, const wv_node *n) {
  uint32_t acc = n->ops[2];
  const wv_node *a = wv_get(w->g, acc);
  if (!wv_partial(w->d, n) || zero_register(w, acc) ||
      (a->op == WAVEC_OP_MMA && a->sym == n->sym))
    return 0;
  return lw_first_part(w, n);
}

/* The shared tiles of a wgmma of mma n whose result has N columns:
 * addr[r] of each operand read by descriptor (0 for an lhs in registers),
 * its flags (the mma kind's too), *lbo and the rings' tags it reads; the
 * tiles' coordinates along n's reduction dim moved by kmove and the rhs's
 * along the result's last dim by nmove (0: not moved; an exchanging
 * wave's wgmmas, lw_exchange_plan). */
static int64_t wgmma_tiles(lw *w, wv_node *n, int64_t N, ex_t kmove,
                           ex_t nmove, uint32_t addr[2], int64_t *lbo,
                           uint32_t *tag) {
  wavec_ctx *ctx = w->ctx;
  int64_t flags = w->d->mma;
  wavec_sym dims[2] = {n->sym, n->type.dims[n->type.n - 1]};
  ex_t by[2] = {kmove, nmove};
  addr[0] = addr[1] = 0;
  *lbo = 0;
  *tag = 0;
  for (int r = 0; r < 2; r++) {
    if (r == 0 && lw_nelem(w, n->ops[0])) {
      flags |= TIR_WG_A_REGS;
      continue;
    }
    bool mn;
    stage *st = wgmma_tile(w, n, r, &mn);
    flags |= tir_wg_swz_flag(st->swz, r);
    if (mn && r == 0) {
      /* M-contiguous: a wave's 64 rows are one 128-byte panel (16-bit
       * elements: wgmma_tile refuses 8-bit ones) */
      if (st->swz != 128)
        wv_fail(ctx, D_UNSUPPORTED, n->loc,
                "wgmma reads an M-contiguous lhs in 128-byte panels, a "
                "wave's 64 rows each: the workgroup's tile of '%s' along "
                "its last dim must be a multiple of 64 elements",
                wv_get(w->g, st->mem)->name);
      flags |= TIR_WG_A_MN;
    } else if (mn) {
      uint32_t nd = wv_get(w->g, st->mem)->type.n;
      int64_t row = lw_swz_row(st);
      if (N > row ? N % row : row % N)
        wv_fail(ctx, D_UNSUPPORTED, n->loc,
                "wgmma reads an N-contiguous rhs in %lld-column panels: its "
                "N tile (%lld) must divide %lld or be a multiple of it",
                (long long)row, (long long)N, (long long)row);
      flags |= TIR_WG_B_MN;
      *lbo = st->ext[nd - 2] * st->swz;
    }
    ex_t e = kmove ? lw_staged_addr_moved(w, n->ops[r], st, 0, r ? 2 : 1,
                                          dims, by)
                   : lw_staged_addr(w, n->ops[r], st, 0);
    addr[r] = lw_smem_addr(w, e, lw_stage_slot(w, st));
    if (st->at)
      *tag |= st->tag;
  }
  return flags;
}

/* The wgmmas of link `id` of an mma whose waves exchange its lhs
 * (lw_exchange_plan): wave c computes columns [c N/W, (c + 1) N/W) of the
 * result (elements [c ne/W, (c + 1) ne/W) of its layout, which that check
 * made the layout of an N/W-column wgmma), one wgmma per wave k along
 * the split axis over k's tile of the reduction dim: the lhs fragments
 * the conversion loaded from k's region (or k's rows of a staged lhs),
 * the rhs's rows of k's tile and its columns of c's. Its registers hold
 * those elements alone. */
static void wgmma_exchange(lw *w, uint32_t id) {
  wavec_ctx *ctx = w->ctx;
  wv_dist *d = w->d;
  wv_node *n = wv_get(w->g, id);
  const wv_mma_info *mi = wv_mma_info_get((wavec_mma_kind)d->mma);
  tir_ty aty = tir_ty_of(mi->acc), ity = tir_ty_of(mi->in);
  int a = w->xchg[id] - 1;
  int64_t W = d->waves[a];
  uint32_t ne = lw_nelem(w, id), chunk = ne / (uint32_t)W;
  const wv_layout *lr = w->ix->info[id].layout;
  int64_t Nw = wv_layout_dim(lr, n->type.dims[n->type.n - 1])->v / W;
  uint32_t acc = n->ops[2], lhs = n->ops[0], na = lw_nelem(w, lhs);
  uint32_t first;
  if (w->xchg[acc] && w->nuses[acc] == 1) {
    first = w->vals[acc]; /* the previous link's, in place */
  } else {
    first = lw_new_regs(w, aty, chunk);
    for (uint32_t e = 0; e < chunk; e++) {
      if (w->xchg[acc])
        lw_emit(w, T_MOV, aty, first + e, w->vals[acc] + e, 0, 0, 0);
      else
        lw_const_into(w, aty, first + e, 0.0); /* (the plan: a zero) */
    }
  }
  ex_t cw = wv_wave_coord(ctx, d, a);
  int64_t tile = d->dim[n->sym].wave_tile;
  bool guarded = false;
  for (int64_t k = 0; k < W; k++) {
    ex_t kmove = ex_mul(ctx, ex_sub(ctx, ex_const(ctx, k), cw),
                        ex_const(ctx, tile));
    ex_t nmove = ex_mul(ctx, cw, ex_const(ctx, Nw));
    uint32_t addr[2], tag;
    int64_t lbo;
    int64_t flags = wgmma_tiles(w, n, 2 * (int64_t)chunk, kmove, nmove, addr,
                                &lbo, &tag);
    uint32_t *list = wv_alloc(ctx, (chunk + na) * sizeof *list);
    for (uint32_t e = 0; e < chunk; e++)
      list[e] = first + e;
    uint32_t base = w->vals[lhs];
    w->vals[lhs] = base + (uint32_t)k * na; /* wave k's fragments */
    for (uint32_t e = 0; e < na; e++)
      list[chunk + e] = lw_fills_with(w, lhs, 0.0)
                            ? lw_elem(w, lhs, e, ity)
                            : lw_elem_unpadded_moved(w, lhs, e, ity, n->sym,
                                                     0.0, kmove, &guarded);
    w->vals[lhs] = base;
    tir_instr *in = lw_emit(w, T_WGMMA, aty, 0, addr[0], addr[1], 0, flags);
    in->imm2 = lbo;
    in->tag = tag;
    in->list = list;
    in->nlist = chunk + na;
  }
  remark_operands(w, id, guarded);
  w->vals[id] = first;
}

/* A warpgroup mma (T_WGMMA): the rhs, and the lhs when it is a read, are
 * read by the wgmma itself from their staged, swizzled tiles (their first
 * element's address is all it needs); an lhs computed in registers (p in
 * p · v) is passed as its fragment. It accumulates in place: into the
 * accumulator operand's registers when nothing else reads them, else into
 * a copy. It runs asynchronously; the pass waits (waits.c) waits for it
 * where its registers are next touched. */
void lw_wgmma(lw *w, uint32_t id) {
  wavec_ctx *ctx = w->ctx;
  wv_node *n = wv_get(w->g, id);
  if (w->xchg[id]) {
    wgmma_exchange(w, id);
    return;
  }
  const wv_mma_info *mi = wv_mma_info_get((wavec_mma_kind)w->d->mma);
  uint32_t addr[2], tag;
  int64_t lbo;
  int64_t flags = wgmma_tiles(w, n, 2 * (int64_t)lw_nelem(w, n->ops[2]), 0,
                              0, addr, &lbo, &tag);
  uint32_t na = lw_nelem(w, n->ops[0]);
  uint32_t acc = n->ops[2], nc = lw_nelem(w, acc);
  tir_ty aty = tir_ty_of(mi->acc);
  uint32_t *list = wv_alloc(ctx, (nc + na) * sizeof *list);
  /* (an mma that leaves parts starts from its accumulator in the first
   * part only: a copy, zero elsewhere) */
  uint32_t part = starts_from(w, n);
  bool own = w->nuses[acc] == 1 && wv_get(w->g, acc)->op != WAVEC_OP_SCALAR &&
             !part;
  uint32_t first = own ? 0 : lw_new_regs(w, aty, nc);
  for (uint32_t e = 0; e < nc; e++) {
    uint32_t r = lw_elem(w, acc, e, aty);
    if (part) {
      uint32_t z = lw_reg(w, aty);
      lw_const_into(w, aty, z, 0.0);
      lw_emit(w, T_SELP, aty, first + e, part, r, z, 0);
    } else if (!own) {
      lw_emit(w, T_MOV, aty, first + e, r, 0, 0, 0);
    }
    list[e] = own ? r : first + e;
  }
  bool guarded = false;
  for (uint32_t e = 0; e < na; e++)
    list[nc + e] = operand(w, n, 0, e, tir_ty_of(mi->in), &guarded);
  remark_operands(w, id, guarded);
  tir_instr *in = lw_emit(w, T_WGMMA, aty, 0, addr[0], addr[1], 0, flags);
  in->imm2 = lbo;
  in->tag = tag;
  in->list = list;
  in->nlist = nc + na;
  w->vals[id] = list[0];
  for (uint32_t e = 1; e < nc; e++)
    wv_assert(ctx, list[e] == list[0] + e);
}

void lw_mma(lw *w, uint32_t id) {
  wavec_ctx *ctx = w->ctx;
  wv_node *n = wv_get(w->g, id);
  if (w->wgmma) {
    lw_wgmma(w, id);
    return;
  }
  const wv_mma_info *mi = wv_mma_info_get((wavec_mma_kind)w->d->mma);
  uint32_t na = lw_nelem(w, n->ops[0]), nb = lw_nelem(w, n->ops[1]),
           nc = lw_nelem(w, n->ops[2]);
  tir_ty aty = tir_ty_of(mi->acc);
  w->vals[id] = lw_new_regs(w, aty, nc);
  uint32_t *list = wv_alloc(ctx, (nc * 2 + na + nb) * sizeof *list);
  uint32_t t = 0;
  for (uint32_t e = 0; e < nc; e++)
    list[t++] = w->vals[id] + e;
  bool guarded = false;
  for (uint32_t e = 0; e < na; e++)
    list[t++] = operand(w, n, 0, e, tir_ty_of(mi->in), &guarded);
  for (uint32_t e = 0; e < nb; e++)
    list[t++] = operand(w, n, 1, e, tir_ty_of(mi->in), &guarded);
  remark_operands(w, id, guarded);
  uint32_t part = starts_from(w, n);
  for (uint32_t e = 0; e < nc; e++)
    list[t++] =
        lw_from_first_part(w, part, lw_elem(w, n->ops[2], e, aty), aty);
  tir_instr *in = lw_emit(w, T_MMA, aty, 0, 0, 0, 0, w->d->mma);
  in->list = list;
  in->nlist = t;
}

/* Why the mma chain whose last link `v` is the value of one of the
 * `nclones` clones of an adding write leaves parts rather than exchanging
 * its lhs, or NULL (see lw_exchange_plan); *axis the grid axis its waves
 * split. Clones must be a wave's wgmmas of 64 rows each, one under the
 * other (a wave holding 128 rows: two), each exchanged alike. */
static const char *exchange_refusal(lw *w, uint32_t v, uint32_t nclones,
                                    int *axis) {
  wv_dist *d = w->d;
  const wv_node *n = wv_get(w->g, v);
  int a = d->dim[n->sym].wg_axis;
  int64_t W = d->waves[a];
  *axis = a;
  /* wave c's elements [c ne/W, (c + 1) ne/W) must be those of an
   * N/W-column wgmma at column c N/W: in every lane, element c ne/W + i
   * where element i is, c N/W columns on */
  uint32_t ne = lw_nelem(w, v), chunk = ne / (uint32_t)W;
  if (ne % (4 * W))
    return "its columns do not split in 8s among the waves";
  const wv_layout *lr = w->ix->info[v].layout;
  uint32_t nd = n->type.n;
  int64_t Nw = wv_layout_dim(lr, n->type.dims[nd - 1])->v / W;
  /* (one wgmma a wave k and clone: the wave's rows of the result are
   * its clones' 64 each) */
  const wv_diminfo *md = &d->dim[n->type.dims[nd - 2]];
  int64_t rows = md->wave_tile ? md->wave_tile
                 : md->tile    ? md->tile
                 : md->wg_axis >= 0 ? md->wg_tile
                                    : md->size;
  if (rows != 64 * (int64_t)nclones ||
      wv_layout_dim(lr, n->type.dims[nd - 2])->v != 64)
    return nclones == 1 ? "a wave holds other than one wgmma's 64 rows of it"
                        : "its clones are not the wave's rows 64 at a time";
  const int64_t *ft = lw_frag_table(w, lr);
  size_t pw = (size_t)lr->nelem * lr->n;
  for (int l = 0; l < d->lanes; l++)
    for (int64_t c = 1; c < W; c++)
      for (uint32_t i = 0; i < chunk; i++)
        for (uint32_t t = 0; t < lr->n; t++) {
          const int64_t *f = ft + l * pw;
          int64_t shift = lr->d[t].dim == n->type.dims[nd - 1] ? c * Nw : 0;
          if (f[(c * chunk + i) * lr->n + t] != f[i * lr->n + t] + shift)
            return "its layout does not split its columns among the waves";
        }
  for (uint32_t x = v;;) {
    const wv_node *m = wv_get(w->g, x);
    if (w->nuses[x] != 1)
      return "a link of it has another use";
    uint32_t lhs = m->ops[0];
    const wv_node *lo = wv_get(w->g, lhs);
    stage *st = lo->op == WAVEC_OP_READ
                    ? w->stage_of[w->ix->info[lhs].origin] : NULL;
    if (!(st && st->swz) &&
        !(lo->op == WV_OP_CONVERT && w->nuses[lhs] == 1 &&
          lw_convert_via_smem(w, lhs)))
      return "its lhs is neither a staged read nor converted through shared "
             "memory";
    if (st) {
      const wv_type *lt = &wv_get(w->g, st->mem)->type;
      if (lt->dims[lt->n - 1] != m->sym)
        return "its lhs is M-contiguous";
    }
    const wv_node *ro = wv_get(w->g, m->ops[1]);
    st = ro->op == WAVEC_OP_READ
             ? w->stage_of[w->ix->info[m->ops[1]].origin] : NULL;
    if (!st || !st->swz)
      return "its rhs is not a staged read";
    /* an N-contiguous rhs: each wave's columns whole 128-byte panels, or
     * a part of one that divides it (the wgmma's descriptor starts inside
     * the panel, at a multiple of 16 bytes: the swizzle is of the address,
     * so the bytes it reads are where the tensor copy put them; the GPU
     * cases of the one-pass backward at D = 64 check it, H100 run 13) */
    const wv_type *mt = &wv_get(w->g, st->mem)->type;
    int64_t row = lw_swz_row(st);
    if (mt->dims[mt->n - 1] != m->sym && Nw % row &&
        (row % Nw || (Nw * st->es) % 16))
      return "its rhs is N-contiguous and a wave's columns are neither "
             "whole swizzled panels nor a part of one that divides it";
    uint32_t acc = m->ops[2];
    const wv_node *ao = wv_get(w->g, acc);
    if (ao->op == WAVEC_OP_MMA && ao->sym == m->sym) {
      x = acc;
      continue;
    }
    if (!zero_register(w, acc))
      return "it starts from an accumulator other than zero";
    break;
  }
  return NULL;
}

void lw_exchange_plan(lw *w) {
  wavec_ctx *ctx = w->ctx;
  w->xchg = wv_alloc(ctx, w->g->nodes.n * sizeof *w->xchg);
  wavec_loc at;
  int64_t knob = lw_knob(w->k, WAVEC_HW_EXCHANGE, &at);
  if (!w->wgmma || knob == 0)
    return;
  bool *decided = wv_alloc(ctx, w->g->nodes.n * sizeof *decided);
  for (uint32_t id = 1; id < w->g->nodes.n; id++) {
    const wv_node *wr = wv_get(w->g, id);
    if (wr->op != WAVEC_OP_WRITE || !(wr->flags & WV_WRITE_ADD))
      continue;
    uint32_t v = wr->ops[0];
    const wv_node *n = wv_get(w->g, v);
    uint32_t o = w->ix->info[v].origin;
    if (n->op != WAVEC_OP_MMA || !(wv_partial(w->d, n) & WV_PARTS_WAVES) ||
        w->xchg[v] || decided[w->ix->info[id].origin])
      continue;
    decided[w->ix->info[id].origin] = true;
    /* every clone of the write (expansion's, one under the other) or none */
    uint32_t *ids = wv_alloc(ctx, w->g->blocks.v[wr->block].nodes.n *
                                      sizeof *ids);
    uint32_t nc = lw_clones_of(w, id, ids);
    int a = w->d->dim[n->sym].wg_axis;
    const char *why = NULL;
    for (uint32_t c = 0; c < nc && !why; c++) {
      uint32_t cv = wv_get(w->g, ids[c])->ops[0];
      why = wv_get(w->g, cv)->op != WAVEC_OP_MMA
                ? "a clone of its write adds other than an mma's result"
                : exchange_refusal(w, cv, nc, &a);
    }
    if (why) {
      if (knob == 1 && !w->remarked[o]) {
        w->remarked[o] = true;
        wv_buf rb;
        wv_remark_start(w->k, n->loc, &rb);
        wv_buf_printf(&rb, "mma leaves parts, not exchanging its lhs "
                           "(hardware(exchange = 1)): %s", why);
        wv_remark_end(w->k, &rb);
      }
      continue;
    }
    for (uint32_t c = 0; c < nc; c++)
      for (uint32_t x = wv_get(w->g, ids[c])->ops[0];;
           x = wv_get(w->g, x)->ops[2]) {
        const wv_node *m = wv_get(w->g, x);
        if (m->op != WAVEC_OP_MMA || m->sym != n->sym)
          break;
        w->xchg[x] = (uint8_t)(a + 1);
        if (wv_get(w->g, m->ops[0])->op == WV_OP_CONVERT)
          w->xchg[m->ops[0]] = (uint8_t)(a + 1);
      }
    if (!w->remarked[o]) {
      w->remarked[o] = true;
      int64_t W = w->d->waves[a];
      const wv_layout *lr = w->ix->info[v].layout;
      int64_t N = wv_layout_dim(lr, n->type.dims[n->type.n - 1])->v;
      wv_buf rb;
      wv_remark_start(w->k, n->loc, &rb);
      wv_buf_printf(&rb, "mma over '%s', which %lld waves split: each wave "
                         "computes %lld of its %lld columns over the whole "
                         "tile of '%s', its lhs from every wave's shared "
                         "memory (no parts to sum; hardware(exchange = 0) "
                         "leaves parts)",
                    wavec_symbol_name(ctx, n->sym), (long long)W,
                    (long long)(N / W), (long long)N,
                    wavec_symbol_name(ctx, n->sym));
      wv_remark_end(w->k, &rb);
    }
  }
}
