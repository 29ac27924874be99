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
  if (!st && o->op == WAVEC_OP_READ) {
    /* copies move 16 bytes at a time: rows of a multiple of 16 bytes */
    const wv_node *mem = wv_get(w->g, o->mem);
    wavec_sym d = mem->type.dims[mem->type.n - 1];
    wv_diminfo *di = &w->d->dim[d];
    int64_t size = di->dynamic ? di->multiple : di->size;
    int64_t bytes = size * tir_ty_bytes(tir_ty_of(mem->type.dt));
    if (bytes % 16 && di->dynamic)
      wv_fail(ctx, D_UNSUPPORTED, n->loc,
              "wgmma reads its %s from shared memory, where it is copied 16 "
              "bytes at a time: the rows of '%s' must be a multiple of 16 "
              "bytes; state it: dynamic(%s, multiple_of = %lld)",
              r ? "rhs" : "lhs", mem->name, wavec_symbol_name(ctx, d),
              (long long)(16 / tir_ty_bytes(tir_ty_of(mem->type.dt))));
    if (bytes % 16)
      wv_fail(ctx, D_UNSUPPORTED, n->loc,
              "wgmma reads its %s from shared memory, where it is copied 16 "
              "bytes at a time: the rows of '%s' (%s = %lld, %lld bytes) "
              "must be a multiple of 16 bytes",
              r ? "rhs" : "lhs", mem->name, wavec_symbol_name(ctx, d),
              (long long)size, (long long)bytes);
  }
  const wv_mma_info *mi = wv_mma_info_get((wavec_mma_kind)w->d->mma);
  int64_t es = tir_ty_bytes(tir_ty_of(mi->in));
  if (st && st->swz && *mn && es == 1)
    wv_fail(ctx, D_UNSUPPORTED, n->loc,
            "wgmma reads 8-bit operands K-major only (the PTX ISA's "
            "transpose is for 16-bit types): the last dimension of '%s' "
            "must be '%s', not '%s'; store it transposed",
            wv_get(w->g, st->mem)->name, wavec_symbol_name(ctx, n->sym),
            wavec_symbol_name(ctx, last));
  if (!st || !st->swz || (*mn && (r == 0 || last != n->type.dims[n->type.n - 1])))
    wv_fail(ctx, D_UNSUPPORTED, n->loc,
            "wgmma reads its %s from shared memory: it must be a read of "
            "a %d-bit memory tensor whose last dimension is %s, in tiles of "
            "a multiple of %lld elements (128-byte rows) and of 8 rows, "
            "without a mapping",
            r ? "rhs" : "lhs", (int)(8 * es),
            r && es == 2 ? "K or N" : "K", (long long)(SWZ_ROW_BYTES / es));
  return st;
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
  const wv_mma_info *mi = wv_mma_info_get((wavec_mma_kind)w->d->mma);
  int64_t flags = w->d->mma, lbo = 0;
  uint32_t addr[2] = {0, 0}, tag = 0; /* (the rings' slots it reads) */
  uint32_t na = lw_nelem(w, n->ops[0]);
  for (int r = 0; r < 2; r++) {
    if (r == 0 && na) {
      flags |= TIR_WG_A_REGS;
      continue;
    }
    bool mn;
    stage *st = wgmma_tile(w, n, r, &mn);
    if (mn) { /* 16-bit elements (wgmma_tile refuses 8-bit ones) */
      uint32_t nd = wv_get(w->g, st->mem)->type.n;
      int64_t N = 2 * (int64_t)lw_nelem(w, n->ops[2]), row = lw_swz_row(st);
      if (N > row ? N % row : row % N)
        wv_fail(ctx, D_UNSUPPORTED, n->loc,
                "wgmma reads an N-contiguous rhs in %lld-column panels: its "
                "N tile (%lld) must divide %lld or be a multiple of it",
                (long long)row, (long long)N, (long long)row);
      flags |= TIR_WG_B_MN;
      lbo = st->ext[nd - 2] * SWZ_ROW_BYTES;
    }
    addr[r] = lw_smem_addr(w, lw_staged_addr(w, n->ops[r], st, 0),
                           lw_stage_slot(w, st));
    if (st->at)
      tag |= st->tag;
  }
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
