/* Pass `pipeline`. require: promote. What is in flight: for each loop
 * that streams staged tiles through a ring, how many tiles run ahead of
 * the one computed on, whether a warpgroup loop may carry its last group
 * of wgmmas into the next iteration, and how the slots are filled —
 * cp.async by every thread, or Hopper's tensor copies (TMA) into an
 * mbarrier ring (lower_tma.c has the code); tensor-copy rings get their
 * tensor maps and 16 bytes of barriers per slot after the staged tiles.
 * One remark per ring says what it chose. */
#include "tir/lower.h"


/* Is a producer warpgroup asked for (hardware(specialize = 1))? Its
 * refills wait for each slot's release, not for a count of tiles ahead. */
static bool producer_asked(const lw *w) {
  return w->d->hw[WAVEC_HW_SPECIALIZE] == 1;
}

/* Does a loop streaming through a ring of S slots carry its last wgmma
 * group into the next iteration when it can (see tir_carry_blocker)? With
 * 3 or more slots; with 2 where a producer warpgroup refills them: the
 * carried group's slot goes back once it retires, early in the next
 * iteration, and the producer refills it then, a tile ahead (the
 * consumers that issue the group never wait for a refill of their own). */
static bool ring_carries(const lw *w, int64_t S) {
  return w->wgmma && (S >= 3 || (S == 2 && producer_asked(w))) &&
         !(w->ctx->test_hooks & WV_HOOK_WGMMA_NO_CARRY);
}

/* How many tiles a ring of S slots keeps in flight ahead of the one being
 * computed on: S-1, or S-2 when the loop carries a wgmma group (which may
 * still read the previous tile's slot); 1 with 2 slots and a producer,
 * which refills the carried group's slot once it retires. */
static int64_t ring_ahead(const lw *w, int64_t S) {
  return !ring_carries(w, S) ? S - 1 : S > 2 ? S - 2 : 1;
}

/* Why the ring of loop `loop` cannot be filled by tensor copies, or NULL
 * if it can. */
static const char *tma_refusal(lw *w, uint32_t loop) {
  wavec_ctx *ctx = w->ctx;
  if (!w->wgmma)
    return "tensor copies feed warpgroup mmas only";
  if (w->d->hw[WAVEC_HW_COPIES] == 1)
    return "hardware(copies = 1)";
  if (ctx->test_hooks & WV_HOOK_NO_TMA)
    return "test hook no-tma";
  if (w->stages < 2)
    return "no ring (stages = 1)";
  if (wv_get(w->g, loop)->block != 0)
    return "the loop lies inside another";
  for (uint32_t i = 0; i < w->stages_all.n; i++) {
    stage *st = w->stages_all.v[i];
    if (st->loop != loop)
      continue;
    uint32_t nd = wv_get(w->g, st->mem)->type.n;
    if (!st->swz || nd > 5 || !lw_box_rows(st->swz, st->ext[nd - 2]))
      return "a tile is not a swizzled wgmma operand of at most 5 dims";
    if (st->vb < STAGE_VEC_BYTES)
      return "a streamed tensor's rows are not a multiple of 16 bytes (a "
             "tensor map's row stride)";
    if (w->written[st->mem])
      return "the kernel writes a streamed tensor";
    for (uint32_t d = 0; d < nd; d++) /* (a run-time size is below) */
      if (w->d->dim[wv_get(w->g, st->mem)->type.dims[d]].size > INT32_MAX)
        return "a streamed tensor has a dim of 2^31 or more (tensor copies "
               "take 32-bit coordinates)";
  }
  return NULL;
}

/* One remark per ring: which loop, how many slots, what streams, and how
 * the copies go. */
static void remark_ring(lw *w, uint32_t loop, int64_t S, int64_t slot,
                        const char *why_not) {
  wv_node *n = wv_get(w->g, loop);
  wv_buf b;
  wv_remark_start(w->k, n->loc, &b);
  wv_buf_printf(&b, "iterate over '%s' streams",
                wavec_symbol_name(w->ctx, n->sym));
  const char *sep = " ";
  for (uint32_t i = 0; i < w->stages_all.n; i++) {
    stage *st = w->stages_all.v[i];
    if (st->loop == loop) {
      wv_buf_printf(&b, "%s'%s'", sep, wv_get(w->g, st->mem)->name);
      sep = ", ";
    }
  }
  int64_t ahead = ring_ahead(w, S);
  if (S > 1 && !why_not)
    wv_buf_printf(&b, " through shared memory in %lld stages of %lld bytes "
                      "(tensor copies issued by %s into an mbarrier ring, "
                      "%lld tile%s ahead)",
                  (long long)S, (long long)slot,
                  w->d->hw[WAVEC_HW_SPECIALIZE]
                      ? "a producer warpgroup (hardware(specialize = 1))"
                  : w->k->hw.ints[WAVEC_HW_SPECIALIZE]
                      ? "thread 0"
                      /* (pass schedule decides after this one) */
                      : "thread 0, or a producer warpgroup where the "
                        "schedule specializes,",
                  (long long)ahead, ahead == 1 ? "" : "s");
  else if (S > 1)
    wv_buf_printf(&b, " through shared memory in %lld stages of %lld bytes "
                      "(asynchronous copies, %lld tile%s ahead%s%s)",
                  (long long)S, (long long)slot, (long long)ahead,
                  ahead == 1 ? "" : "s", w->wgmma ? "; not tensor copies: " : "",
                  w->wgmma ? why_not : "");
  else
    wv_buf_printf(&b, " through shared memory, one tile of %lld bytes "
                      "copied at the top of each iteration (stages = 1)",
                  (long long)slot);
  wv_remark_end(w->k, &b);
}

/* The barriers of the tensor-copy ring of `loop`: one full and one empty
 * barrier a slot for all the ring's tiles (its barrier set; lower_tma.c
 * can give each tile a set of its own, and a wgmma would then wait for its
 * own tiles only). One set: measured on the H100 (bench/NOTES.md, v0.5.11),
 * attention's k and v in sets of their own made the forward 10-36% slower,
 * as the driver's compiler then serializes every wgmma of the kernel. The
 * set's TIR_TAG_STAGE bit marks the wgmmas that read the ring's slots and
 * its releases (the pass release). */
static void barrier_sets(lw *w, uint32_t loop, int64_t S) {
  int64_t fbar = w->stage_bytes, tx = 0;
  uint32_t tag = TIR_TAG_STAGE(w->ntagged++);
  w->stage_bytes += 16 * S; /* full, then empty barriers */
  for (uint32_t i = 0; i < w->stages_all.n; i++)
    if (w->stages_all.v[i]->loop == loop)
      tx += w->stages_all.v[i]->bytes;
  for (uint32_t i = 0; i < w->stages_all.n; i++) {
    stage *st = w->stages_all.v[i];
    if (st->loop != loop)
      continue;
    st->fbar = fbar;
    st->ebar = fbar + 8 * S;
    st->tag = tag;
    st->tx = tx;
  }
}

wavec_status wv_pass_pipeline(wv_kernel *k) {
  lw *w = k->lw;
  wavec_ctx *ctx = w->ctx;
  stage *const *all = w->stages_all.v;
  uint32_t n = w->stages_all.n;
  int64_t S = w->stages;
  for (uint32_t i = 0; i < n; i++) {
    uint32_t loop = all[i]->loop;
    bool first = true;
    for (uint32_t j = 0; j < i; j++)
      first &= all[j]->loop != loop;
    if (!loop || !first)
      continue;
    const char *why_not = tma_refusal(w, loop);
    remark_ring(w, loop, S, all[i]->slot, why_not);
    /* A wgmma loop with a ring of 3 or more slots may carry the last group
     * of wgmmas of an iteration, in flight, into the next one (see
     * tir_carry_blocker); the group of iteration i-1 may then still read
     * the slot of tile i-1 when iteration i refills a slot, so the ring
     * runs one tile less ahead: tile i+S-2 goes into the slot of tile i-2. */
    ring_plan r = {loop, all[i]->slot, ring_ahead(w, S), ring_carries(w, S),
              why_not};
    if (ctx->test_hooks & WV_HOOK_WGMMA_CARRY_NEAR)
      r.ahead = S - 1; /* planted bug for the tests: refill a read slot */
    vec_push(ctx, &w->rings, r);
    if (why_not || S < 2)
      continue;
    for (uint32_t j = i; j < n; j++) {
      stage *st = all[j];
      if (st->loop != loop)
        continue;
      wv_node *mem = wv_get(w->g, st->mem);
      uint32_t nd = mem->type.n;
      tir_tmap m = {.arg = mem->index, .rank = nd, .swz = st->swz};
      for (uint32_t d = 0; d < nd; d++)
        m.box[d] = 1;
      m.box[nd - 1] = lw_swz_row(st);
      m.box[nd - 2] = lw_box_rows(st->swz, st->ext[nd - 2]);
      vec_push(ctx, &w->tmaps, m);
      st->tmap = w->tmaps.n; /* + 1 */
    }
    barrier_sets(w, loop, S);
  }
  return WAVEC_OK;
}

void wv_print_pipeline(wv_kernel *k, wv_buf *b) {
  lw *w = k->lw;
  wv_buf_printf(b, "pipeline: %u ring(s) of %lld slots, %lld bytes of shared "
                   "memory staged\n",
                w->rings.n, (long long)w->stages, (long long)w->stage_bytes);
  for (uint32_t i = 0; i < w->rings.n; i++) {
    const ring_plan *r = &w->rings.v[i];
    wv_node *it = wv_get(w->g, r->loop);
    wv_buf_printf(b, "  ring of the iterate over '%s' (%u:%u): slots of %lld "
                     "bytes, %lld tile%s ahead, %s; ",
                  wavec_symbol_name(k->ctx, it->sym), it->loc.line,
                  it->loc.col, (long long)r->slot, (long long)r->ahead,
                  r->ahead == 1 ? "" : "s",
                  r->carry ? "may carry its last wgmma group into the next "
                             "iteration"
                           : "carries nothing into the next iteration");
    const stage *s0 = NULL;
    for (uint32_t j = 0; j < w->stages_all.n && !s0; j++)
      if (w->stages_all.v[j]->loop == r->loop)
        s0 = w->stages_all.v[j];
    if (s0 && s0->tmap) {
      wv_buf_puts(b, "tensor copies");
      const char *sep = ",";
      for (uint32_t j = 0; j < w->stages_all.n; j++) {
        const stage *st = w->stages_all.v[j];
        if (st->loop != r->loop || !lw_set_first(w, st))
          continue;
        wv_buf_puts(b, sep);
        const char *and = " ";
        for (uint32_t o = j; o < w->stages_all.n; o++) {
          const stage *so = w->stages_all.v[o];
          if (so->loop == r->loop && so->fbar == st->fbar) {
            wv_buf_printf(b, "%s'%s'", and, wv_get(w->g, so->mem)->name);
            and = ", ";
          }
        }
        wv_buf_printf(b, ": full barriers at %lld, empty at %lld, %lld bytes",
                      (long long)st->fbar, (long long)st->ebar,
                      (long long)st->tx);
        sep = ";";
      }
      wv_buf_puts(b, "\n");
    } else if (w->stages > 1)
      wv_buf_printf(b, "cp.async%s%s%s\n",
                    r->why_not ? " (not tensor copies: " : "",
                    r->why_not ? r->why_not : "", r->why_not ? ")" : "");
    else
      wv_buf_puts(b, "copied at the top of each iteration\n");
  }
  for (uint32_t i = 0; i < w->tmaps.n; i++) {
    const tir_tmap *m = &w->tmaps.v[i];
    wv_buf_printf(b, "  tensor map %u: '%s' box [", i,
                  wv_get(w->g, k->args.v[m->arg])->name);
    for (uint32_t d = 0; d < m->rank; d++)
      wv_buf_printf(b, "%s%lld", d ? ", " : "", (long long)m->box[d]);
    wv_buf_puts(b, "]\n");
  }
}

/* What pipeline promises: each ring runs 1 to S-1 tiles ahead (none with
 * one slot); a carried group only in a warpgroup loop of 3 or more slots,
 * or of 2 refilled by a producer warpgroup;
 * tensor copies only for swizzled tiles of a ring of 2 or more slots, with
 * a tensor map each and their 8-byte barriers within the staged bytes. */
wavec_status wv_verify_pipeline(wv_kernel *k) {
  lw *w = k->lw;
  int64_t S = w->stages;
  for (uint32_t i = 0; i < w->rings.n; i++) {
    const ring_plan *r = &w->rings.v[i];
    bool bad = S > 1 ? r->ahead < 1 || r->ahead > S - 1 : false;
    bad |= r->carry && (!w->wgmma || S < 2 || (S == 2 && !producer_asked(w)));
    for (uint32_t j = 0; j < w->stages_all.n && !bad; j++) {
      const stage *st = w->stages_all.v[j];
      if (st->loop != r->loop || !st->tmap)
        continue;
      bad = !st->swz || S < 2 || st->tmap > w->tmaps.n || st->fbar % 8 ||
            st->ebar != st->fbar + 8 * S || st->ebar + 8 * S > w->stage_bytes ||
            !st->tag;
      /* a barrier set: one tag, and its bytes those of its tiles */
      int64_t tx = 0;
      for (uint32_t o = 0; o < w->stages_all.n && !bad; o++) {
        const stage *so = w->stages_all.v[o];
        if (!so->tmap || so->loop != r->loop)
          continue;
        bad = (so->fbar == st->fbar) != (so->tag == st->tag);
        tx += so->fbar == st->fbar ? so->bytes : 0;
      }
      bad |= tx != st->tx;
    }
    if (bad)
      wv_fail(k->ctx, D_INTERNAL, wv_get(w->g, r->loop)->loc,
              "pipeline: ring %u breaks its contract", i);
  }
  return WAVEC_OK;
}
