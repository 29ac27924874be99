/* The lowering: Hopper's tensor copies (TMA) into mbarrier rings.
 *
 * A ring whose loop feeds warpgroup mmas (every tile it streams is a
 * swizzled wgmma operand of memory the kernel never writes, the loop not
 * inside another) is filled by tensor copies instead of cp.async. Each
 * tile the ring streams (each stage) has barriers of its own in every
 * slot: one thread (thread 0) issues, for each slot and stage in program
 * order, the stage's copies (one per 64-column panel and run of up to 256
 * rows, the box of the stage's tensor map) after announcing their bytes on
 * the stage's full barrier (arrive.expect_tx; it expects that one
 * arrival). Every wave waits on a stage's full barrier for the phase of
 * the tile it computes on right before it first reads the stage's slot
 * (lw_stage_slot; so attention's q kᵀ starts once k has landed, while v
 * still lands); once the wgmmas that read it have retired, lane 0 of each
 * wave arrives at the stage's empty barrier (it expects one arrival per
 * wave; the pass `release` moves the arrival up to the first wait that
 * retires them), and thread 0's wave waits for that phase before it
 * refills the stage's slot. No workgroup barrier runs in the loop.
 *
 * Phases, as the compiler tracks them: the ring is primed from tile
 * `first` of the walk, so tile t is the n(t) = (t - first) div S-th fill of
 * slot t mod S; the full barrier's wait for tile t has parity n(t) mod 2,
 * and the wait before filling tile t waits for the release of tile t - S,
 * parity (n(t) + 1) mod 2 (for the first S fills that is parity 1 of a
 * fresh barrier, which passes at once). */
#include "tir/lower.h"

/* Thread 0 (the producer) and lane 0 of each wave, as predicates. */
static void leaders(lw *w) {
  wavec_ctx *ctx = w->ctx;
  if (w->tma_leader)
    return;
  /* (operands computed one statement each: the emitted order must not
   * depend on the C compiler's order of argument evaluation) */
  uint32_t zero = lw_iconst(w, 0);
  uint32_t tid = lw_expr(w, lw_linear_tid(w));
  w->tma_leader = lw_reg(w, TY_PRED);
  lw_emit(w, T_SETP, TY_I32, w->tma_leader, tid, zero, 0, TIR_CMP_EQ);
  ex_t lane = ex_mod(ctx, lw_linear_tid(w), ex_const(ctx, w->d->lanes));
  uint32_t rlane = lw_expr(w, lane);
  w->tma_wleader = lw_reg(w, TY_PRED);
  lw_emit(w, T_SETP, TY_I32, w->tma_wleader, rlane, zero, 0, TIR_CMP_EQ);
  uint32_t wave = lw_expr(w, lw_wave_id(w));
  w->tma_wave0 = lw_reg(w, TY_PRED);
  lw_emit(w, T_SETP, TY_I32, w->tma_wave0, wave, zero, 0, TIR_CMP_EQ);
  if (w->sched.cluster > 1) { /* the workgroup's rank in its cluster */
    uint32_t id = lw_reg(w, TY_I32);
    lw_emit(w, T_SREG, TY_I32, id, 0, 0, 0, TIR_SREG_CTAID_X);
    uint32_t c = lw_iconst(w, w->sched.cluster);
    w->cl_rank = lw_op2(w, T_MOD, TY_I32, id, c);
  }
}

/* At the start of the program: thread 0 initialises every ring's
 * barriers, fences them for the copy engine, and a barrier publishes them
 * to every thread; in a cluster, a cluster barrier, to every workgroup's
 * (their copies complete on them, their waves release to them). */
void lw_tma_prologue(lw *w) {
  int64_t S = w->stages;
  uint32_t waves = (uint32_t)(w->d->block[0] * w->d->block[1] *
                              w->d->block[2] / w->d->lanes);
  bool any = false;
  for (uint32_t i = 0; i < w->stages_all.n; i++) {
    stage *st = w->stages_all.v[i];
    bool first = st->tmap;
    for (uint32_t j = 0; j < i && first; j++)
      first = w->stages_all.v[j]->fbar != st->fbar;
    if (!first)
      continue;
    leaders(w);
    any = true;
    /* planted bug for the tests: an empty barrier expects an arrival
     * that never comes */
    int64_t extra = (w->ctx->test_hooks & WV_HOOK_TMA_DEADLOCK) ? 1 : 0;
    for (int64_t s = 0; s < S; s++) {
      uint32_t full = lw_iconst(w, st->fbar + 8 * s);
      lw_emit(w, T_MBINIT, TY_PRED, 0, full, w->tma_leader, 0, 1);
      uint32_t empty = lw_iconst(w, st->ebar + 8 * s);
      int64_t from = st->cset ? w->sched.cluster : 1; /* workgroups */
      lw_emit(w, T_MBINIT, TY_PRED, 0, empty, w->tma_leader, 0,
              waves * from + extra);
    }
  }
  if (!any)
    return;
  lw_emit(w, T_FENCE, TY_PRED, 0, 0, 0, 0, 0);
  /* planted bug for the tests: no cluster barrier (a peer's copy or
   * release may reach a barrier before it is initialised) */
  if (w->sched.cluster > 1 && !(w->ctx->test_hooks & WV_HOOK_NO_CLUSTER_BAR))
    lw_emit(w, T_CLUSTERBAR, TY_PRED, 0, 0, 0, 0, 0);
  else
    lw_barrier(w);
}

/* The barrier at `base` (8 bytes a slot) of the slot of tile `tile` of a
 * walk from `first` (slot pos mod S, pos as lw_ring_pos says). */
static uint32_t bar_of(lw *w, int64_t base, int64_t S, ex_t first,
                       ex_t tile) {
  wavec_ctx *ctx = w->ctx;
  ex_t pos = lw_ring_pos(w, first, tile);
  ex_t e = ex_add(ctx, ex_const(ctx, base),
                  ex_mul(ctx, ex_mod(ctx, pos, ex_const(ctx, S)),
                         ex_const(ctx, 8)));
  return lw_expr(w, lw_concrete(w, e, 0));
}

/* The parity of the phase for tile `tile` of a walk from `first`: (n(t) +
 * add) mod 2, n(t) = seq div S the fill of its slot, seq the ring's fills
 * before it: tile - first, and with persistent tiles those of the tiles
 * before ($RING). */
static uint32_t parity_of(lw *w, int64_t S, ex_t first, ex_t tile,
                          int64_t add) {
  wavec_ctx *ctx = w->ctx;
  ex_t seq = ex_sub(ctx, tile, first);
  if (w->sched.ring)
    seq = ex_add(ctx, seq, ex_sym(ctx, w->sched.ring));
  ex_t n = ex_floordiv(ctx, seq, ex_const(ctx, S));
  ex_t e = ex_mod(ctx, ex_add(ctx, n, ex_const(ctx, add)), ex_const(ctx, 2));
  return lw_expr(w, lw_concrete(w, e, 0));
}

/* Thread 0 fills tile `tile` (an expression in the loop counter) of the
 * ring of `piped` into its slot, stage by stage: when `refill`, its wave
 * first waits for the release of the stage's previous tile in the slot;
 * then the stage's bytes are announced and its copies issued. `on` (0:
 * always): whether the tile exists (uniform). In a specialized kernel's
 * producer region the producer's first thread issues and its whole
 * warpgroup waits (tma_leader and tma_wave0 say so, lower_sched.c). */
void lw_tma_fill(lw *w, stage *const *piped, uint32_t n, int64_t S,
                 ex_t first, ex_t tile, uint32_t on, bool refill) {
  wavec_ctx *ctx = w->ctx;
  wavec_loc loc = w->loc;
  uint32_t me = lw_pred_and(w, on, w->tma_leader);
  uint32_t wave0 = lw_pred_and(w, on, w->tma_wave0);
  /* a set's tiles follow each other in `piped` (pipeline.c's barrier_sets):
   * its barriers are waited on and announced once, before its first */
  uint32_t full = 0;
  int64_t set = -1;
  for (uint32_t i = 0; i < n; i++) {
    stage *st = piped[i];
    w->loc = st->loc; /* reported at the read it stages */
    if (st->fbar != set) {
      set = st->fbar;
      /* planted bug for the tests: refill without waiting for the
       * release */
      if (refill && !(ctx->test_hooks & WV_HOOK_TMA_NO_EMPTY_WAIT)) {
        uint32_t empty = bar_of(w, st->ebar, S, first, tile);
        uint32_t parity = parity_of(w, S, first, tile, 1);
        lw_emit(w, T_MBWAIT, TY_PRED, 0, empty, parity, wave0, 0);
      }
      full = bar_of(w, st->fbar, S, first, tile);
      /* planted bug for the tests: announce 16 bytes too few (the first
       * set) */
      int64_t tx = st->tx - ((ctx->test_hooks & WV_HOOK_TMA_TX_SHORT) && !i
                                 ? 16 : 0);
      lw_emit(w, T_MBARRIVE, TY_PRED, 0, full, me, 0, tx);
    }
    wv_node *mem = wv_get(w->g, st->mem);
    const tir_tmap *m = &w->tmaps.v[st->tmap - 1];
    uint32_t nd = mem->type.n;
    int64_t rows = st->ext[nd - 2], brows = m->box[nd - 2];
    int64_t row = lw_swz_row(st);
    ex_t at = lw_slot_at(w, st, S, lw_ring_pos(w, first, tile));
    /* a multicast tile: this workgroup's part, rows [rank p, rank p + p)
     * of each panel, p = rows / C, to every workgroup of the cluster */
    uint32_t part_row = 0, part_byte = 0;
    if (st->mcast) {
      rows /= w->sched.cluster;
      part_row = lw_op2(w, T_MUL, TY_I32, w->cl_rank, lw_iconst(w, rows));
      part_byte = lw_op2(w, T_MUL, TY_I32, part_row, lw_iconst(w, st->swz));
    }
    for (int64_t c = 0; c < st->ext[nd - 1]; c += row)
      for (int64_t r = 0; r < rows; r += brows) {
        uint32_t *co = wv_alloc(ctx, nd * sizeof *co);
        for (uint32_t d = 0; d < nd; d++) {
          ex_t x = st->start[d];
          if (st->loopvar)
            x = ex_subst(ctx, x, 1, &st->loopvar, &tile);
          if (d == nd - 1)
            x = ex_add(ctx, x, ex_const(ctx, c));
          if (d == nd - 2)
            x = ex_add(ctx, x, ex_const(ctx, r));
          x = lw_concrete(w, x, 0);
          /* a tile past the end of a walk over a run-time size (its copy
           * not issued: `on`) may start at 2^31 or beyond; every dim is
           * below 2^31 (pipeline.c), so 2^31-1 lies past its edge too */
          int64_t lo, hi;
          ex_bounds(ctx, x, w->ranges, w->nranges, &lo, &hi);
          if (hi > INT32_MAX)
            x = ex_min(ctx, x, ex_const(ctx, INT32_MAX));
          co[d] = lw_expr(w, x);
          if (part_row && d == nd - 2)
            co[d] = lw_op2(w, T_ADD, TY_I32, co[d], part_row);
        }
        int64_t off = st->base + (c / row) * st->ext[nd - 2] * st->swz +
                      r * st->swz;
        uint32_t dst = lw_smem_addr(w, ex_const(ctx, off), at);
        if (part_byte)
          dst = lw_op2(w, T_ADD, TY_I32, dst, part_byte);
        tir_instr *in = lw_emit(w, T_TMA, tir_ty_of(mem->type.dt), 0, dst,
                                full, me, st->tmap - 1);
        in->list = co;
        in->nlist = nd;
        in->imm2 = st->mcast ? TIR_TMA_MULTICAST : 0;
      }
  }
  w->loc = loc;
}

/* Every wave waits until stage st's tile `tile` has landed in its slot. */
void lw_tma_acquire(lw *w, const stage *st, int64_t S, ex_t first,
                    ex_t tile) {
  /* planted bug for the tests: wait for the phase before (it has long
   * completed, or passes as the fresh barrier's) */
  int64_t add = (w->ctx->test_hooks & WV_HOOK_TMA_EARLY_READ) ? 1 : 0;
  wavec_loc loc = w->loc;
  w->loc = st->loc;
  uint32_t full = bar_of(w, st->fbar, S, first, tile);
  uint32_t parity = parity_of(w, S, first, tile, add);
  lw_emit(w, T_MBWAIT, TY_PRED, 0, full, parity, 0, 0);
  w->loc = loc;
}

/* Stage st's slot (its byte offset), after the wait for its tile where
 * one is due (lw_loop_part defers it to the first read). */
ex_t lw_stage_slot(lw *w, stage *st) {
  if (st->due) {
    ex_t tile = st->due;
    for (uint32_t i = 0; i < w->stages_all.n; i++) /* (its set: one wait) */
      if (w->stages_all.v[i]->tmap && w->stages_all.v[i]->fbar == st->fbar)
        w->stages_all.v[i]->due = 0;
    lw_tma_acquire(w, st, w->stages, st->due_first, tile);
  }
  return st->at;
}

bool lw_set_first(const lw *w, const stage *st) {
  for (uint32_t i = 0; i < w->stages_all.n; i++) {
    const stage *o = w->stages_all.v[i];
    if (o->tmap && o->loop == st->loop && o->fbar == st->fbar)
      return o == st;
  }
  return true;
}

/* Lane 0 of each wave releases stage st's tile `tile` (its wgmmas that
 * read it have retired), if `on` (0: always). Its tag: `lag` 0, the tile
 * is the iteration's own; 1, the previous iteration's; -1, untagged (the
 * release stays where it is). */
void lw_tma_release(lw *w, const stage *st, int64_t S, ex_t first, ex_t tile,
                    uint32_t on, int lag) {
  wavec_loc loc = w->loc;
  w->loc = st->loc;
  uint32_t me = lw_pred_and(w, on, w->tma_wleader);
  uint32_t empty = bar_of(w, st->ebar, S, first, tile);
  tir_instr *in = lw_emit(w, T_MBARRIVE, TY_PRED, 0, empty, me, 0, 0);
  in->tag = lag < 0 ? 0 : st->tag | (lag ? TIR_TAG_PREV : 0);
  /* (a set with multicast tiles: every workgroup's producer refills it) */
  /* planted bug for the tests: releases to the own workgroup only */
  in->imm2 = st->cset && !(w->ctx->test_hooks & WV_HOOK_LOCAL_RELEASE)
                 ? TIR_ARRIVE_CLUSTER : 0;
  w->loc = loc;
}

/* In a cluster, before a workgroup's producer ends: it waits for the last
 * release of each slot of ring `r`'s sets that take every workgroup's
 * releases (the waits its next S refills would make), so that no
 * workgroup of the cluster arrives at its barriers after it ended. The
 * walk's end: with persistent tiles the ring's fills so far (ring_next,
 * after the loop over tiles), else the walk's last tile. */
void lw_tma_tail(lw *w, const ring_plan *r) {
  wavec_ctx *ctx = w->ctx;
  if (w->sched.cluster < 2 || (ctx->test_hooks & WV_HOOK_NO_CLUSTER_TAIL))
    return;
  wavec_loc loc = w->loc;
  int64_t S = w->stages;
  uint32_t saved = w->sched.ring ? w->loopreg[w->sched.ring] : 0;
  ex_t first = w->walk_first[r->loop], end = w->walk_last[r->loop];
  if (w->sched.ring) { /* positions ring_next + j: tiles j of a walk from 0 */
    w->loopreg[w->sched.ring] = w->ring_next;
    first = end = ex_const(ctx, 0);
  }
  for (uint32_t i = 0; i < w->stages_all.n; i++) {
    stage *st = w->stages_all.v[i];
    if (st->loop != r->loop || !st->cset || !lw_set_first(w, st))
      continue;
    w->loc = st->loc;
    for (int64_t j = 0; j < S; j++) {
      ex_t tile = ex_add(ctx, end, ex_const(ctx, j));
      uint32_t empty = bar_of(w, st->ebar, S, first, tile);
      uint32_t parity = parity_of(w, S, first, tile, 1);
      lw_emit(w, T_MBWAIT, TY_PRED, 0, empty, parity, w->tma_wave0, 0);
    }
  }
  if (w->sched.ring)
    w->loopreg[w->sched.ring] = saved;
  w->loc = loc;
}
