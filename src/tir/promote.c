/* Staging (DESIGN.md's `promote`): which mma operand reads are staged in
 * shared memory, which loops stream them through a ring, the ring depth,
 * and where every tile lies in shared memory. */
#include "tir/lower.h"

/* The element offset in st's tile of the element at local coordinates
 * `local` (one per memory dim). */
ex_t lw_stage_elem_off(wavec_ctx *ctx, const stage *st, uint32_t nd,
                       const ex_t *local) {
  if (st->swz) {
    int64_t row = lw_swz_row(st);
    ex_t c = local[nd - 1], r = local[nd - 2], w64 = ex_const(ctx, row);
    ex_t panel = ex_mul(ctx, ex_floordiv(ctx, c, w64),
                        ex_const(ctx, st->ext[nd - 2] * row));
    return ex_add(ctx, panel, ex_add(ctx, ex_mul(ctx, r, w64),
                                     ex_mod(ctx, c, w64)));
  }
  ex_t off = ex_const(ctx, 0);
  for (uint32_t i = 0; i < nd; i++)
    off = ex_add(ctx, off, ex_mul(ctx, local[i], ex_const(ctx, st->sstride[i])));
  return off;
}

/* With stages unset: the deepest ring of up to 3 slots whose staged tiles
 * fit in this many bytes (two workgroups per 228 KiB multiprocessor). A
 * warpgroup kernel that has a multiprocessor to itself whatever its ring
 * (lw_alone) and whose rings only feed its mmas (a GEMM's) takes the
 * deepest of up to 4 that leaves AUTO_EPILOGUE_BYTES for the output's
 * store buffer: measured on the H100, 128x256 tiles at 4 stages 0.98-1.02
 * of cuBLAS, at 3 0.92-0.97, at 2 (bench/NOTES.md v0.11.0). */
enum {
  AUTO_STAGES = 3,
  AUTO_STAGE_BYTES = 112 * 1024,
  AUTO_STAGES_ALONE = 4,
  AUTO_EPILOGUE_BYTES = 32 * 1024
};

/* The first coordinate of the workgroup's tile along dim d: the workgroup
 * offset for split dims, the loop's for tiled ones, else 0. */
static ex_t wg_start(lw *w, wavec_sym d, int64_t *ext) {
  wavec_ctx *ctx = w->ctx;
  wv_diminfo *di = &w->d->dim[d];
  if (di->wg_axis >= 0) {
    *ext = di->wg_tile;
    return ex_mul(ctx, ex_sym(ctx, w->d->WG[di->wg_axis]),
                  ex_const(ctx, di->wg_tile));
  }
  if (di->tile) {
    *ext = di->tile;
    return ex_mul(ctx, ex_sym(ctx, di->loopvar), ex_const(ctx, di->tile));
  }
  *ext = di->span; /* (the size, or padded up: constraints.c) */
  return ex_const(ctx, 0);
}

/* Where the workgroup's tile of read n lies along each memory dim i: from
 * start[i], ext[i] coordinates, following register dim src[i] (0: none)
 * whose walk the tile moves with. Without a mapping, each memory dim's own
 * tile. With one, an input that is an iterator follows the register dim
 * the iterator names (a permutation: the tile along the memory dim is that
 * dim's tile; for a wgmma operand it must be the same dim, as a wgmma reads
 * a tile as it lies in memory); an input it computes (grouped-query
 * attention's key head h // G) must depend only on iterators of register
 * dims the workgroup holds one coordinate of (split over workgroups in
 * tiles of 1, walked by no loop): one coordinate per workgroup, the input
 * at those dims' starts, extent 1. NULL, or why the tile cannot be
 * staged. */
static const char *tile_of(lw *w, const wv_node *n, const wv_node *mem,
                           ex_t *start, int64_t *ext, wavec_sym *src) {
  wavec_ctx *ctx = w->ctx;
  for (uint32_t i = 0; i < mem->type.n; i++) {
    src[i] = mem->type.dims[i];
    start[i] = wg_start(w, src[i], &ext[i]);
  }
  if (!n->mapping)
    return NULL;
  wv_mapping *m = &w->k->mappings.v[n->mapping - 1];
  ex_t at[WV_MAX_DIMS];      /* by iterator: its register dim's start */
  wavec_sym of[WV_MAX_DIMS]; /* by iterator: its register dim */
  bool one[WV_MAX_DIMS];     /* by iterator: one coordinate a workgroup */
  for (uint32_t j = 0; j < m->iters.n; j++)
    at[j] = ex_const(ctx, 0), of[j] = 0, one[j] = false;
  for (uint32_t o = 0; o < m->outputs.n; o++) {
    wavec_sym it = ex_sym_of(ctx, m->outputs.v[o].e), d = m->outputs.v[o].dim;
    for (uint32_t j = 0; j < m->iters.n; j++) {
      if (m->iters.v[j] != it)
        continue;
      wv_diminfo *di = &w->d->dim[d];
      of[j] = d;
      one[j] = di->wg_axis >= 0 && di->wg_tile == 1 && !di->tile;
      at[j] = one[j] ? ex_sym(ctx, w->d->WG[di->wg_axis]) : at[j];
    }
  }
  for (uint32_t j = 0; j < m->inputs.n; j++) {
    ex_t e = m->inputs.v[j].e;
    wavec_sym it = ex_sym_of(ctx, e);
    uint32_t i = 0;
    while (i < mem->type.n && mem->type.dims[i] != m->inputs.v[j].dim)
      i++;
    if (i == mem->type.n)
      continue;
    uint32_t t = 0;
    while (it && t < m->iters.n && m->iters.v[t] != it)
      t++;
    if (it && t < m->iters.n) { /* an iterator: its register dim's tile */
      if (!of[t]) /* (an iterator no output binds) */
        return "the read's mapping gives a memory coordinate from an "
               "iterator no register dim has";
      if (w->wgmma && of[t] != mem->type.dims[i])
        return "the read's mapping permutes dims (a wgmma reads a tile as "
               "it lies in memory: state the layout in the tensor's Memory "
               "type instead)";
      src[i] = of[t];
      start[i] = wg_start(w, of[t], &ext[i]);
      continue;
    }
    for (uint32_t u = 0; u < m->iters.n; u++)
      if (ex_uses(ctx, e, m->iters.v[u]) && !one[u]) {
        wv_buf b;
        wv_buf_init(&b, ctx);
        wv_buf_printf(&b, "the read's mapping computes the coordinate of "
                          "'%s' from '%s', which a workgroup holds more than "
                          "one coordinate of (staged tiles are copied as "
                          "they lie in memory; a coordinate computed from "
                          "dims split over workgroups in tiles of 1 is "
                          "staged)",
                      wavec_symbol_name(ctx, mem->type.dims[i]),
                      of[u] ? wavec_symbol_name(ctx, of[u]) : "?");
        return wv_buf_str(&b);
      }
    src[i] = 0;
    start[i] = ex_subst(ctx, e, m->iters.n, m->iters.v, at);
    ext[i] = 1;
  }
  return NULL;
}

/* Why read clone `id` cannot be staged (a message in the context's arena),
 * or NULL, with *st filled (without base), when it can. */
static const char *unstageable(lw *w, uint32_t id, stage *st) {
  wavec_ctx *ctx = w->ctx;
  wv_node *n = wv_get(w->g, id);
  if (n->op == WAVEC_OP_BROADCAST &&
      wv_get(w->g, n->ops[0])->op == WAVEC_OP_READ)
    return "it is a broadcast of a read, computed in registers (read it "
           "through a mapping whose outputs add the broadcast's dims: "
           "docs/LANGUAGE-additions.md, 'Staged reads through mappings')";
  if (n->op != WAVEC_OP_READ)
    return "it is computed, not read from memory";
  wv_node *mem = wv_get(w->g, n->mem);
  wv_buf b;
  wv_buf_init(&b, ctx);
  if (!w->mma_only[id])
    return "the read is also used other than as an mma operand";
  /* (index.c put it in registers: wv_rows_uncopyable says why, for the
   * K of the mma it feeds, directly or through a permute) */
  if (w->wgmma && lw_nelem(w, id)) {
    const char *why = NULL;
    for (uint32_t u = 1; u < w->g->nodes.n && !why; u++) {
      const wv_node *m = wv_get(w->g, u);
      for (int r = 0; r < 2 && m->op == WAVEC_OP_MMA && !why; r++) {
        const wv_node *o = wv_get(w->g, m->ops[r]);
        if (m->ops[r] == id || (o->op == WAVEC_OP_PERMUTE && o->ops[0] == id))
          why = wv_rows_uncopyable(w->k, n, m->sym);
      }
    }
    wv_buf_printf(&b, "%s: the wgmma takes it from registers",
                  why ? why : "it is an mma's operand in registers");
    return wv_buf_str(&b);
  }
  /* (the copies zero-fill past an edge, whatever the read's fill: an mma
   * operand's padding is never observed, the reduction dim's taken as 0
   * and the others' results dropped or masked) */
  if (w->ctx->test_hooks & WV_HOOK_NO_STAGING)
    return "test hook no-staging";
  st->es = tir_ty_bytes(tir_ty_of(mem->type.dt));
  if (st->es != 2 && st->es != 1) {
    wv_buf_printf(&b, "'%s' is %s: staged operands are 16 or 8 bits",
                  mem->name, wv_dtypes[mem->type.dt].name);
    return wv_buf_str(&b);
  }
  wavec_sym src[WV_MAX_DIMS];
  const char *why = tile_of(w, n, mem, st->start, st->ext, src);
  if (why)
    return why;
  uint32_t nd = mem->type.n;
  st->mem = n->mem;
  for (uint32_t i = 0; i < nd; i++) {
    wv_diminfo *di = src[i] ? &w->d->dim[src[i]] : NULL;
    if (di && di->tile && di->wg_axis < 0)
      st->loopvar = di->loopvar;
  }
  /* every size of a dynamic last dim is a multiple of this */
  wavec_sym ls = mem->type.dims[nd - 1];
  wv_diminfo *ld = &w->d->dim[ls];
  int64_t last = ld->dynamic ? ld->multiple : ld->size;
  /* the widest copy that divides the rows in memory and in the tile; a
   * wgmma, which has no other way to its operands, takes narrower ones,
   * down to an element */
  int64_t narrowest = w->wgmma ? st->es : STAGE_VEC_BYTES;
  st->vb = STAGE_VEC_BYTES;
  while (st->vb > narrowest &&
         ((st->ext[nd - 1] * st->es) % st->vb || (last * st->es) % st->vb))
    st->vb /= 2;
  if (st->vb < STAGE_VEC_MIN) /* loads and stores: an element each */
    st->vb = st->es;
  int64_t vec = lw_stage_vec(st);
  if (st->ext[nd - 1] % vec || last % vec) {
    wv_buf_printf(&b, "rows of '%s' along '%s' are not a multiple of 16 "
                      "bytes (copies move 16 at a time)",
                  mem->name, wavec_symbol_name(ctx, ls));
    return wv_buf_str(&b);
  }
  if (w->wgmma) {
    /* [.., rows, cols] in panels of W-byte swizzled rows, W the widest
     * swizzle that divides a row (lower.h) */
    if (nd < 2)
      return "a wgmma tile has two dims at least";
    st->swz = lw_swz_width(st->ext[nd - 1] * st->es);
    if (!st->swz) {
      wv_buf_printf(&b, "the workgroup's tile of '%s' along '%s' is %lld "
                        "elements, not a multiple of %lld (the 32-byte rows "
                        "of the narrowest swizzled wgmma tile)",
                    mem->name, wavec_symbol_name(ctx, ls),
                    (long long)st->ext[nd - 1], (long long)(32 / st->es));
      return wv_buf_str(&b);
    }
    /* a panel is rows x W bytes, on 1024 bytes */
    int64_t rows = SWZ_ALIGN / st->swz;
    if (st->ext[nd - 2] % rows) {
      wv_buf_printf(&b, "the workgroup's tile of '%s' has %lld rows along "
                        "'%s', not a multiple of %lld (%lld-byte swizzled "
                        "rows in 1024-byte groups)",
                    mem->name, (long long)st->ext[nd - 2],
                    wavec_symbol_name(ctx, mem->type.dims[nd - 2]),
                    (long long)rows, (long long)st->swz);
      st->swz = 0;
      return wv_buf_str(&b);
    }
    for (uint32_t i = 0; i + 2 < nd; i++)
      if (st->ext[i] != 1) {
        wv_buf_printf(&b, "the workgroup's tile of '%s' is %lld along '%s'; "
                          "a wgmma tile is one along every dim but the last "
                          "two",
                      mem->name, (long long)st->ext[i],
                      wavec_symbol_name(ctx, mem->type.dims[i]));
        return wv_buf_str(&b);
      }
    st->bytes = st->ext[nd - 2] * st->ext[nd - 1] * st->es; /* 1024 | bytes */
  }
  int64_t raw = st->bytes; /* before the rounding to 16 bytes */
  if (!st->swz) {
    int64_t s = 1;
    for (int i = (int)nd - 1; i >= 0; i--) {
      st->sstride[i] = s;
      s *= st->ext[i] + (i == (int)nd - 1 ? STAGE_PAD_BYTES / st->es : 0);
    }
    raw = s * st->es;
    st->bytes = (raw + 15) / 16 * 16;
  }
  if (raw > 96 * 1024) {
    wv_buf_printf(&b, "the workgroup's tile of '%s' is %lld bytes, more "
                      "than the 96 KB a staged tile may have",
                  mem->name, (long long)st->bytes);
    return wv_buf_str(&b);
  }
  return NULL;
}

/* Does read r give the same values in every iteration of loop `it` (the
 * loop's dim is not its, and nothing the kernel writes is read)? Such a
 * read is hoisted out of the loop. */
bool lw_loop_invariant(lw *w, const wv_node *r, const wv_node *it) {
  return !wv_type_has(&r->type, it->sym) && !w->written[r->mem];
}

/* The loop that streams staged read `id` through a ring: the iterate whose
 * body holds it, when the tile moves with that loop's counter and the read
 * is not hoisted out of it; else 0. */
static uint32_t ring_loop(lw *w, uint32_t id, const stage *st) {
  wv_node *n = wv_get(w->g, id);
  uint32_t owner = w->g->blocks.v[n->block].owner;
  if (!owner || !st->loopvar || (w->ctx->test_hooks & WV_HOOK_NO_PIPELINE))
    return 0;
  wv_node *it = wv_get(w->g, owner);
  if (w->d->dim[it->sym].loopvar != st->loopvar || lw_loop_invariant(w, n, it))
    return 0;
  return owner;
}

/* A remark at the read of a tile copied in vectors narrower than 16
 * bytes: why, and what it costs. */
static void remark_narrow(lw *w, const stage *st) {
  const wv_node *mem = wv_get(w->g, st->mem);
  wavec_sym d = mem->type.dims[mem->type.n - 1];
  const wv_diminfo *di = &w->d->dim[d];
  wv_buf b;
  wv_remark_start(w->k, st->loc, &b);
  wv_buf_printf(&b, "the copies of '%s' into shared memory ", mem->name);
  if (st->vb < STAGE_VEC_MIN)
    wv_buf_puts(&b, "go an element at a time through registers (a load and "
                    "a store: no asynchronous copy moves less than 4 bytes)");
  else
    wv_buf_printf(&b, "move %lld bytes at a time, not 16", (long long)st->vb);
  if (di->dynamic && di->multiple > 1)
    wv_buf_printf(&b, ": its rows along '%s' are known to be a multiple of "
                      "%lld elements only (dynamic(%s, multiple_of = %lld) "
                      "takes 16-byte copies and tensor copies)",
                  wavec_symbol_name(w->ctx, d), (long long)di->multiple,
                  wavec_symbol_name(w->ctx, d),
                  (long long)(STAGE_VEC_BYTES / st->es));
  else if (di->dynamic)
    wv_buf_printf(&b, ": nothing is stated of its rows along '%s' "
                      "(dynamic(%s, multiple_of = %lld) takes 16-byte copies "
                      "and tensor copies)",
                  wavec_symbol_name(w->ctx, d), wavec_symbol_name(w->ctx, d),
                  (long long)(STAGE_VEC_BYTES / st->es));
  else
    wv_buf_printf(&b, ", and no tensor copies: its rows (%s = %lld, %lld "
                      "bytes) are not a multiple of 16 bytes",
                  wavec_symbol_name(w->ctx, d), (long long)di->size,
                  (long long)(di->size * st->es));
  wv_remark_end(w->k, &b);
}

/* True where every loop that streams a staged tile only reads, permutes
 * and multiplies (a GEMM's: no softmax or scratch between its mmas). */
static bool rings_feed_mmas(const lw *w) {
  static const bool ok[WAVEC_OP_COUNT] = {
      [WAVEC_OP_READ] = true, [WAVEC_OP_MMA] = true,
      [WAVEC_OP_PERMUTE] = true, [WAVEC_OP_CARRIED] = true,
      [WAVEC_OP_YIELD] = true};
  for (uint32_t i = 0; i < w->stages_all.n; i++) {
    uint32_t loop = w->stages_all.v[i]->loop;
    for (uint32_t b = 1; loop && b < w->g->blocks.n; b++) {
      const wv_block *bl = &w->g->blocks.v[b];
      for (uint32_t j = 0; bl->owner == loop && j < bl->nodes.n; j++)
        if (!ok[wv_get(w->g, bl->nodes.v[j])->op])
          return false;
    }
  }
  return true;
}

/* Decides which reads are staged and which loops stream them through a
 * ring, picks the number of slots, and places every tile in shared memory:
 * tiles copied where they stand first, then each loop's ring, slot by
 * slot (a slot holds one tile of each read the loop streams). */
static void place_stages(lw *w) {
  wavec_ctx *ctx = w->ctx;
  uint32_t nn = w->g->nodes.n;
  for (uint32_t id = 1; id < nn; id++) {
    uint32_t o = w->ix->info[id].origin;
    stage st = {0};
    if (w->stage_of[o])
      continue;
    const char *why = unstageable(w, id, &st);
    if (why) {
      w->unstaged[o] = why;
      continue;
    }
    st.loop = ring_loop(w, id, &st);
    st.loc = wv_get(w->g, id)->loc;
    /* reads of the same tile of one memory share its copy, whatever
     * their mappings: a mapping only changes which elements a lane takes
     * from the tile (attention's backward reads q and do both ways) */
    for (uint32_t i = 0; i < w->stages_all.n && !w->stage_of[o]; i++) {
      stage *s = w->stages_all.v[i];
      bool same = s->mem == st.mem && s->loop == st.loop &&
                  s->loopvar == st.loopvar;
      uint32_t nd = wv_get(w->g, st.mem)->type.n;
      for (uint32_t d = 0; d < nd && same; d++)
        same = s->ext[d] == st.ext[d] && s->start[d] == st.start[d];
      if (same)
        w->stage_of[o] = s;
    }
    if (w->stage_of[o])
      continue;
    w->stage_of[o] = wv_dup(ctx, &st, sizeof st);
    vec_push(ctx, &w->stages_all, w->stage_of[o]);
    if (st.vb < STAGE_VEC_BYTES)
      remark_narrow(w, &st);
  }
  stage *const *all = w->stages_all.v;
  uint32_t n = w->stages_all.n;
  int64_t fixed = 0, ring = 0;
  for (uint32_t i = 0; i < n; i++) {
    if (all[i]->loop)
      ring += all[i]->bytes;
    else
      all[i]->base = fixed, fixed += all[i]->bytes;
  }
  int64_t S = w->d->hw[WAVEC_HW_STAGES];
  /* (alone: with its shallowest ring, a multiprocessor to itself) */
  if (!S && ring && w->wgmma && lw_alone(w, fixed + 2 * ring) &&
      rings_feed_mmas(w))
    for (S = AUTO_STAGES_ALONE;
         S > 2 && fixed + S * ring + AUTO_EPILOGUE_BYTES > SMEM_OPTIN; S--)
      ;
  else if (!S)
    for (S = AUTO_STAGES; S > 2 && fixed + S * ring > AUTO_STAGE_BYTES; S--)
      ;
  if (w->k->stages_cap && S > w->k->stages_cap) /* (no hardware(stages)) */
    S = w->k->stages_cap;
  w->stages = S;
  w->stage_bytes = fixed;
  for (uint32_t i = 0; i < n; i++) /* swizzled rows need 1024-byte groups */
    wv_assert(ctx, !all[i]->swz || (all[i]->base % SWZ_ALIGN == 0 &&
                                     all[i]->bytes % SWZ_ALIGN == 0));
  /* rings, in the order of their loops */
  for (uint32_t i = 0; i < n; i++) {
    uint32_t loop = all[i]->loop;
    if (!loop || all[i]->slot)
      continue;
    int64_t slot = 0;
    for (uint32_t j = i; j < n; j++)
      if (all[j]->loop == loop)
        all[j]->base = w->stage_bytes + slot, slot += all[j]->bytes;
    for (uint32_t j = i; j < n; j++)
      if (all[j]->loop == loop)
        all[j]->slot = slot;
    w->stage_bytes += S * slot;
  }
}

/* A remark per read that feeds an mma but stays in global memory (an
 * mma.sync's operand, or a wgmma's lhs in registers, index.c's
 * rows_copyable; a wgmma's operand it reads from shared memory is an
 * error at the mma): why it is not staged. */
static void remark_unstaged(lw *w) {
  for (uint32_t id = 1; id < w->g->nodes.n; id++) {
    const wv_node *n = wv_get(w->g, id);
    uint32_t o = w->ix->info[id].origin;
    const char *why = w->unstaged[o];
    if (n->op != WAVEC_OP_READ || !w->mma_only[id] || !why ||
        (w->wgmma && !lw_nelem(w, id)) ||
        (w->ctx->test_hooks & WV_HOOK_NO_STAGING))
      continue;
    w->unstaged[o] = NULL; /* once an origin */
    wv_buf b;
    wv_remark_start(w->k, n->loc, &b);
    wv_buf_printf(&b, "read of '%s' feeds an mma but is not staged in "
                      "shared memory (each lane loads its elements from "
                      "global memory): %s",
                  wv_get(w->g, n->mem)->name, why);
    wv_remark_end(w->k, &b);
  }
}

wavec_status wv_pass_promote(wv_kernel *k) {
  lw *w = lw_plan(k);
  w->stage_of = wv_alloc(k->ctx, w->norigin * sizeof *w->stage_of);
  w->unstaged = wv_alloc(k->ctx, w->norigin * sizeof *w->unstaged);
  place_stages(w);
  remark_unstaged(w);
  return WAVEC_OK;
}

/* A staged tile as --print-after prints it: its memory, extent, bytes and
 * place, and the loop whose ring streams it. */
static void print_stage(lw *w, wv_buf *b, const stage *st) {
  wv_node *mem = wv_get(w->g, st->mem);
  wv_buf_printf(b, "'%s' [", mem->name);
  for (uint32_t d = 0; d < mem->type.n; d++)
    wv_buf_printf(b, "%s%lld", d ? ", " : "", (long long)st->ext[d]);
  wv_buf_printf(b, "] %lld bytes", (long long)st->bytes);
  if (st->swz)
    wv_buf_printf(b, " (%lld-byte rows, swizzled)", (long long)st->swz);
  if (st->vb < STAGE_VEC_BYTES)
    wv_buf_printf(b, ", copied %lld bytes at a time%s", (long long)st->vb,
                  st->vb < STAGE_VEC_MIN ? " by loads and stores" : "");
  wv_buf_printf(b, " at %lld", (long long)st->base);
  if (st->loop) {
    wv_node *it = wv_get(w->g, st->loop);
    wv_buf_printf(b, ", slots %lld bytes apart, streamed by the iterate over "
                     "'%s' (%u:%u)",
                  (long long)st->slot, wavec_symbol_name(w->ctx, it->sym),
                  it->loc.line, it->loc.col);
  } else {
    wv_buf_puts(b, ", copied where it is read");
  }
}

void wv_print_promote(wv_kernel *k, wv_buf *b) {
  lw *w = k->lw;
  wv_buf_printf(b, "promote: %u staged tiles, %lld bytes of shared memory, "
                   "rings of %lld slots\n",
                w->stages_all.n, (long long)w->stage_bytes,
                (long long)w->stages);
  for (uint32_t i = 0; i < w->stages_all.n; i++) {
    wv_buf_printf(b, "  stage %u ", i);
    print_stage(w, b, w->stages_all.v[i]);
    wv_buf_puts(b, "\n");
  }
  for (uint32_t id = 1; id < w->g->nodes.n; id++) {
    wv_node *n = wv_get(w->g, id);
    const stage *st = n->op == WAVEC_OP_READ
                          ? w->stage_of[w->ix->info[id].origin]
                          : NULL;
    for (uint32_t i = 0; st && i < w->stages_all.n; i++)
      if (w->stages_all.v[i] == st)
        wv_buf_printf(b, "  %%%u read (%u:%u) from stage %u\n", id,
                      n->loc.line, n->loc.col, i);
  }
}

/* What promote promises: every staged read is a read of its stage's
 * memory; the tiles lie within the staged bytes without overlapping (a
 * ring's S slots counted), swizzled ones on 1024-byte groups. */
wavec_status wv_verify_promote(wv_kernel *k) {
  lw *w = k->lw;
  wavec_ctx *ctx = k->ctx;
  for (uint32_t id = 1; id < w->g->nodes.n; id++) {
    wv_node *n = wv_get(w->g, id);
    const stage *st = w->stage_of[w->ix->info[id].origin];
    if (st && (n->op != WAVEC_OP_READ || n->mem != st->mem))
      wv_fail(ctx, D_INTERNAL, n->loc, "promote: node %%%u is staged but is "
              "not a read of its stage's memory", id);
  }
  uint32_t n = w->stages_all.n;
  for (uint32_t i = 0; i < n; i++) {
    const stage *a = w->stages_all.v[i];
    int64_t copies = a->loop ? w->stages : 1;
    int64_t a_end = a->base + (copies - 1) * a->slot + a->bytes;
    bool bad = a->base < 0 || a->bytes <= 0 || a_end > w->stage_bytes ||
               (a->swz && (a->base % SWZ_ALIGN || a->bytes % SWZ_ALIGN ||
                           a->slot % SWZ_ALIGN));
    /* the slots of a ring hold one tile of each of its reads */
    for (uint32_t j = 0; j < n && !bad; j++) {
      const stage *b = w->stages_all.v[j];
      if (j == i)
        continue;
      for (int64_t s = 0; s < copies && !bad; s++) {
        int64_t lo = a->base + s * a->slot, hi = lo + a->bytes;
        int64_t bcopies = b->loop ? w->stages : 1;
        for (int64_t t = 0; t < bcopies && !bad; t++) {
          int64_t blo = b->base + t * b->slot, bhi = blo + b->bytes;
          bad = lo < bhi && blo < hi;
        }
      }
    }
    if (bad)
      wv_fail(ctx, D_INTERNAL, a->loc, "promote: stage %u lies outside the "
              "staged bytes, overlaps another or is misaligned", i);
  }
  return WAVEC_OK;
}
