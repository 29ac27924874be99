/* The lowering: loops (their walk from walks.c, split as masksplit.c
 * decided, a ring's wait and refill per iteration as pipeline.c decided,
 * a wgmma group carried into the next iteration). */
#include "tir/lower.h"

/* Whether loop n carries its last group of wgmmas into the next
 * iteration, and if not, the line that stops it. */
static void remark_carry(lw *w, const wv_node *n, const tir_instr *blocker) {
  wv_buf b;
  wv_remark_start(w->k, n->loc, &b);
  wv_buf_printf(&b, "iterate over '%s': ", wavec_symbol_name(w->ctx, n->sym));
  if (!blocker)
    wv_buf_printf(&b, "the last wgmmas of an iteration run on into the next "
                      "one (waited for where their registers are next "
                      "touched)");
  else
    wv_buf_printf(&b, "the last wgmmas of an iteration are waited for at its "
                      "end: line %u touches their registers before the next "
                      "iteration waits for its own",
                  blocker->loc.line);
  wv_remark_end(w->k, &b);
}

/* Does block b hold a loop (an iterate, at any depth)? */
static bool has_loop(lw *w, uint32_t b) {
  const wv_block *blk = &w->g->blocks.v[b];
  for (uint32_t i = 0; i < blk->nodes.n; i++) {
    const wv_node *m = wv_get(w->g, blk->nodes.v[i]);
    if (m->op == WAVEC_OP_ITERATE)
      return true;
  }
  return false;
}

/* One loop over tiles [rfirst, rlast) of the walk (registers; 0: 0 and
 * all trips; efirst and elast the same as expressions) with the ring
 * already primed: each iteration waits for its tile, refills the ring,
 * runs the body. `unmasked`: the tiles a causal mask leaves whole, whose
 * masks (see mask_split) take their value. A ring of tensor copies
 * (lower_tma.c) has thread 0 refill first, then every wave wait for its
 * tile, and each wave release a slot where the wgmmas reading it have
 * retired: at the end of the iteration, or with a carried group, the
 * previous tile's slot there and the part's last tile's after the loop.
 * With warp specialization the producer's region refills the ring
 * (lower_sched.c): the loop only waits and releases. */
static void lw_loop_part(lw *w, const loop_part *lp, uint32_t rfirst,
                         uint32_t rlast, ex_t efirst, ex_t elast,
                         bool unmasked) {
  wavec_ctx *ctx = w->ctx;
  wv_node *n = wv_get(w->g, lp->id);
  wv_diminfo *di = &w->d->dim[n->sym];
  ex_t lv = ex_sym(ctx, di->loopvar);
  stage **piped_v = lp->piped;
  uint32_t piped_n = lp->npiped;
  int64_t S = lp->S, ahead_n = lp->ahead_n, trips = lp->trips;
  bool carry = lp->carry;
  uint32_t counter = lw_reg(w, TY_I32);
  w->loopreg[di->loopvar] = counter;
  bool was_unmasking = w->unmasking;
  w->unmasking = unmasked;
  tir_instr *li = lw_emit(w, T_LOOP, TY_I32, counter, rfirst, rlast, 0, trips);
  uint32_t start = (uint32_t)(li - w->p->code.v);
  lw_open_scope(w);
  bool tma = piped_n && S > 1 && piped_v[0]->tmap;
  bool early_release = tma && (ctx->test_hooks & WV_HOOK_TMA_EARLY_RELEASE);
  if (tma) {
    if (trips > ahead_n && !w->sched.specialize) {
      ex_t ahead = ex_add(ctx, lv, ex_const(ctx, ahead_n));
      uint32_t rahead = lw_expr(w, ahead);
      uint32_t end = lp->last ? lp->last : lw_iconst(w, trips);
      uint32_t more = lw_reg(w, TY_PRED);
      lw_emit(w, T_SETP, TY_I32, more, rahead, end, 0, TIR_CMP_LT);
      lw_tma_fill(w, piped_v, piped_n, S, lp->first, ahead, more, true);
    }
    /* each stage's wait where the body first reads its slot
     * (lw_stage_slot); at the top where the body has a loop of its own
     * (not to wait in it), where the pass `overlap` is asked for (its first
     * iteration issues the last group before the body reads its tiles), or
     * for the planted bug */
    wavec_loc at;
    bool defer = !early_release && !has_loop(w, n->body) &&
                 lw_knob(w->k, WAVEC_HW_OVERLAP, &at) <= 0;
    for (uint32_t i = 0; i < piped_n; i++) {
      if (defer) {
        piped_v[i]->due = lv;
        piped_v[i]->due_first = lp->first;
      } else if (lw_set_first(w, piped_v[i])) {
        lw_tma_acquire(w, piped_v[i], S, lp->first, lv);
      }
    }
    /* planted bug for the tests: release the slot before reading it */
    for (uint32_t i = 0; early_release && i < piped_n; i++)
      if (lw_set_first(w, piped_v[i]))
        lw_tma_release(w, piped_v[i], S, lp->first, lv, 0, -1);
  } else if (piped_n && S > 1) {
    /* tile i has landed; everyone is done with the slot that receives
     * tile i+ahead_n (of tile i-1, or i-2 when a group is carried) */
    /* planted bugs for the tests: a wait that leaves tile i in flight,
     * a missing barrier */
    bool early = ctx->test_hooks & WV_HOOK_RING_EARLY_READ;
    lw_emit(w, T_CPWAIT, TY_PRED, 0, 0, 0, 0, ahead_n - 1 + early);
    lw_copies_fence(w);
    if (!(ctx->test_hooks & WV_HOOK_RING_NO_BARRIER))
      lw_barrier(w);
    if (trips > ahead_n) {
      ex_t ahead = ex_add(ctx, lv, ex_const(ctx, ahead_n));
      uint32_t more = lw_reg(w, TY_PRED);
      /* one statement each: the order of the code they emit must not be
       * left to the C compiler's order of evaluating arguments */
      uint32_t end = lp->last ? lp->last : lw_iconst(w, trips);
      uint32_t at = lw_expr(w, ahead);
      lw_emit(w, T_SETP, TY_I32, more, at, end, 0, TIR_CMP_LT);
      for (uint32_t i = 0; i < piped_n; i++)
        lw_stage_issue(w, piped_v[i], ahead,
                       lw_slot_at(w, piped_v[i], S, ahead), more);
    }
    lw_emit(w, T_CPCOMMIT, TY_PRED, 0, 0, 0, 0, 0);
  } else if (piped_n) {
    lw_stage_copy(w, piped_v, piped_n);
  }
  for (uint32_t i = 0; i < piped_n && S > 1; i++)
    piped_v[i]->at =
        lw_slot_at(w, piped_v[i], S, tma ? lw_ring_pos(w, lp->first, lv) : lv);
  uint32_t body_from = w->p->code.n;
  lw_block(w, n->body);
  w->loc = n->loc;
  for (uint32_t i = 0; i < piped_n; i++) {
    lw_stage_slot(w, piped_v[i]); /* (a wait still due: before its release) */
    piped_v[i]->at = 0;
  }
  /* The last group stays in flight, if the next iteration waits for all
   * wgmmas before it touches what that group uses (see tir_carry_blocker):
   * wait for all but it. */
  bool carried = false;
  uint32_t carried_tags = 0;
  if (carry) {
    bool pending;
    const tir_instr *blocker =
        tir_carry_blocker(ctx, w->p, body_from,
                          ctx->test_hooks & WV_HOOK_WGMMA_NO_WAIT, &pending,
                          &carried_tags);
    if (pending) {
      remark_carry(w, n, blocker);
      carried = !blocker;
    }
  }
  if (carried)
    lw_emit(w, T_WGWAIT, TY_PRED, 0, 0, 0, 0, 1)->imm2 = TIR_WAIT_CARRY;
  /* each stage's release: of the previous tile where the carried group
   * reads the stage (the next iteration's first full wait retires it),
   * else of this one (the wait before retired its wgmmas: a full one, or
   * the carry wait, which retires all but the carried group). The pass
   * `release` moves each up to the first wait that retires its readers. */
  if (tma && !early_release) {
    uint32_t later = 0;
    for (uint32_t i = 0; i < piped_n; i++) {
      stage *st = piped_v[i];
      if (!lw_set_first(w, st))
        continue; /* (its set's release) */
      if (carried && !carried_tags)
        carried_tags = ~0u; /* (an untagged group: it may read any) */
      if (carried && (st->tag & carried_tags)) {
        if (!later) {
          uint32_t from = rfirst ? rfirst : lw_iconst(w, 0);
          later = lw_reg(w, TY_PRED);
          lw_emit(w, T_SETP, TY_I32, later, counter, from, 0, TIR_CMP_GT);
        }
        lw_tma_release(w, st, S, lp->first, ex_sub(ctx, lv, ex_const(ctx, 1)),
                       later, 1);
      } else {
        lw_tma_release(w, st, S, lp->first, lv, 0, 0);
      }
    }
  }
  lw_close_scope(w); /* (the release's registers belong to the body) */
  tir_instr *ei =
      lw_emit(w, T_ENDLOOP, TY_I32, counter, rfirst, rlast, 0, trips);
  uint32_t end = (uint32_t)(ei - w->p->code.v);
  if (tma && carried && !early_release) {
    /* the part's last tile, read by the group carried out of the loop */
    uint32_t any = 0;
    if (rfirst || rlast) {
      uint32_t hi = rlast ? rlast : lw_iconst(w, trips);
      uint32_t lo = rfirst ? rfirst : lw_iconst(w, 0);
      any = lw_reg(w, TY_PRED);
      lw_emit(w, T_SETP, TY_I32, any, hi, lo, 0, TIR_CMP_GT);
    }
    for (uint32_t i = 0; i < piped_n; i++)
      if ((piped_v[i]->tag & carried_tags) && lw_set_first(w, piped_v[i]))
        lw_tma_release(w, piped_v[i], S, lp->first,
                       ex_sub(ctx, elast, ex_const(ctx, 1)), any, -1);
  }
  w->p->code.v[start].match = end;
  w->p->code.v[end].match = start;
  w->loopreg[di->loopvar] = 0;
  w->unmasking = was_unmasking;
}

/* The tiles loop `id` walks, [first, last) (walks.c), as registers (0, 0
 * for all its tiles) and the most tiles. */
void lw_walk_bounds(lw *w, uint32_t id, uint32_t *rfirst, uint32_t *rlast,
                    int64_t *trips) {
  wavec_ctx *ctx = w->ctx;
  wv_diminfo *di = &w->d->dim[wv_get(w->g, id)->sym];
  /* the most trips (a dynamic dim: as many as 32-bit indices reach) */
  *trips = di->dynamic ? INT32_MAX / di->tile : di->tiles;
  ex_t first = w->walk_first[id], last = w->walk_last[id];
  /* all of the tiles, and no registers, only where the walk is [0, tiles)
   * of a static dim (a bound may fold to constants that are not: [0, 1)
   * for queries that all fit the first key tile; it ran every tile, and
   * over a run-time size 2^31 / tile of them) */
  int64_t f, l;
  bool bounded = di->dynamic || !ex_is_const(ctx, first, &f) ||
                 !ex_is_const(ctx, last, &l) || f != 0 || l != di->tiles;
  *rfirst = bounded ? lw_expr(w, first) : 0;
  *rlast = bounded ? lw_expr(w, last) : 0;
}

/* Reads an iteration ahead. In a loop that streams its tiles through a
 * ring of a warpgroup-mma kernel, a read of global memory the body makes
 * each iteration, not staged, of a tensor the kernel does not write (the
 * one-pass backward's lse and D rows) waits for its loads where its
 * value is first used: the profile (bench/NOTES.md v0.6.7 measured) has
 * the consumers stalled on them after each iteration's first wgmmas.
 * Each such read gets registers of its own, loaded with the first
 * iteration's elements before the loop; the read copies them out and
 * loads the next iteration's into them at once, masked past the walk's
 * end, so a whole iteration hides their latency. At most 32 registers a
 * thread in all, and no more than the accumulators (body_regs) leave of
 * the specialized consumers' 240 and 32 more (at D = 128 the backward
 * holds 192 beside dq's: lse's 16 distinct elements, loaded in pairs,
 * +5 % / +2 % causal in run ww; prefetching both of its reads spills 212
 * bytes); reads are taken in program order while they fit; an element
 * the thread holds more than once is loaded once; reads of a single
 * element a thread stay. hardware(read_ahead = 0) keeps the loads in
 * their iteration; read_ahead = 1 takes up to 32 registers regardless,
 * N up to N. */
enum { PREFETCH_REGS = 32 };

/* src[e]: the first element of read `id` with element e's coordinates
 * (a value broadcast over a dim the thread holds several of repeats
 * them); *n the elements that are first. */
static void distinct_elements(lw *w, uint32_t id, uint32_t *src, uint32_t *n) {
  const wv_node *r = wv_get(w->g, id);
  const wv_node *mem = wv_get(w->g, r->mem);
  uint32_t ne = lw_nelem(w, id), nd = mem->type.n;
  ex_t *all = wv_alloc(w->ctx, (ne ? ne : 1) * WV_MAX_DIMS * sizeof *all);
  *n = 0;
  for (uint32_t e = 0; e < ne; e++) {
    lw_mem_coords(w, id, r->mapping, mem, e, all + (size_t)e * WV_MAX_DIMS);
    src[e] = e;
    for (uint32_t f = 0; f < e && src[e] == e; f++) {
      bool same = true;
      for (uint32_t d = 0; d < nd && same; d++)
        same = all[(size_t)e * WV_MAX_DIMS + d] == all[(size_t)f * WV_MAX_DIMS + d];
      if (same)
        src[e] = f;
    }
    *n += src[e] == e;
  }
}

/* The accumulator registers loop `it`'s body holds beside the reads
 * ahead: every mma chain's (lw_chains_regs, an exchanged chain's share)
 * but a chain whose result is only added to memory (the backward's dq:
 * started from zero in the iteration, it lives from its mma to its write,
 * after the chains it reads are spent), and where the loop overlaps
 * (hardware(overlap = 1)) its first chain's again (the next iteration's
 * runs beside this one's last). */
static int64_t body_regs(lw *w, const wv_node *it) {
  int64_t regs = lw_chains_regs(w);
  for (uint32_t id = 1; id < w->g->nodes.n; id++) {
    const wv_node *n = wv_get(w->g, id);
    uint32_t v = n->op == WAVEC_OP_WRITE && (n->flags & WV_WRITE_ADD)
                     ? n->ops[0]
                     : 0;
    if (!v || wv_get(w->g, v)->op != WAVEC_OP_MMA || w->nuses[v] != 1)
      continue;
    while (wv_get(w->g, wv_get(w->g, v)->ops[2])->op == WAVEC_OP_MMA)
      v = wv_get(w->g, v)->ops[2];
    regs -= lw_chain_regs(w, v);
  }
  wavec_loc at;
  if (lw_knob(w->k, WAVEC_HW_OVERLAP, &at) != 1)
    return regs;
  const wv_block *body = &w->g->blocks.v[it->body];
  for (uint32_t i = 0; i < body->nodes.n; i++) {
    uint32_t id = body->nodes.v[i];
    const wv_node *n = wv_get(w->g, id);
    if (n->op == WAVEC_OP_MMA &&
        wv_get(w->g, n->ops[2])->op != WAVEC_OP_MMA)
      return regs + w->ix->info[id].layout->nelem;
  }
  return regs;
}

static void prefetch(lw *w, const wv_node *it, uint32_t npiped, ex_t first,
                     uint32_t rfirst, uint32_t rlast, int64_t trips) {
  wavec_loc at;
  int64_t knob = lw_knob(w->k, WAVEC_HW_READ_AHEAD, &at);
  if (!w->wgmma || !npiped || trips < 2 || knob == 0)
    return;
  const wv_block *body = &w->g->blocks.v[it->body];
  /* (what the accumulators leave of a consumer's 240 and 32 more: the
   * backward at D = 128 holds 192 beside dq's, which leaves lse's 16
   * distinct elements (both its reads, 32, spill); at D = 64, 112: both) */
  int64_t left = 240 - 32 - body_regs(w, it);
  /* (knob 1: 32 registers whatever the accumulators hold; N >= 2: N) */
  uint32_t room = knob == 1 ? PREFETCH_REGS
                  : knob >= 2 ? (uint32_t)knob
                  : left < 0  ? 0
                  : left < PREFETCH_REGS ? (uint32_t)left
                                         : PREFETCH_REGS;
  uint32_t more = 0;
  for (uint32_t i = 0; i < body->nodes.n; i++) {
    uint32_t rid = body->nodes.v[i];
    const wv_node *r = wv_get(w->g, rid);
    if (r->op != WAVEC_OP_READ || w->hoisted[rid] ||
        lw_loop_invariant(w, r, it) || w->stage_of[w->ix->info[rid].origin] ||
        w->written[r->mem])
      continue;
    uint32_t ne = lw_nelem(w, rid), distinct = 0;
    uint32_t *src = wv_alloc(w->ctx, (ne ? ne : 1) * sizeof *src);
    distinct_elements(w, rid, src, &distinct);
    if (distinct < 2 || distinct > room)
      continue;
    room -= distinct;
    w->pref_src[rid] = src;
    if (!more && (rfirst || rlast)) { /* (a walk of no tiles loads none) */
      more = lw_reg(w, TY_PRED);
      lw_emit(w, T_SETP, TY_I32, more, rfirst ? rfirst : lw_iconst(w, 0),
              rlast ? rlast : lw_iconst(w, trips), 0, TIR_CMP_LT);
    }
    w->pref[rid] = lw_new_regs(w, lw_node_ty(r), lw_nelem(w, rid));
    w->loc = r->loc;
    lw_read_ahead(w, rid, first, more, false);
    wv_buf b;
    wv_remark_start(w->k, r->loc, &b);
    wv_buf_printf(&b, "read of '%s' loaded an iteration ahead (%u registers "
                      "a thread; the first iteration's before the loop)",
                  wv_get(w->g, r->mem)->name, distinct);
    wv_remark_end(w->k, &b);
  }
  w->loc = it->loc;
}

void lw_iterate(lw *w, uint32_t id) {
  wavec_ctx *ctx = w->ctx;
  wv_node *n = wv_get(w->g, id);
  wv_block *body = &w->g->blocks.v[n->body];
  /* Reads that do not change from one iteration to the next happen
   * once, before the loop (a staged one: its copy; see lazy_scope). */
  for (uint32_t i = 0; i < body->nodes.n; i++) {
    uint32_t rid = body->nodes.v[i];
    wv_node *r = wv_get(w->g, rid);
    if (r->op != WAVEC_OP_READ || !lw_loop_invariant(w, r, n))
      continue;
    lw_node(w, rid);
    w->hoisted[rid] = true;
  }
  w->loc = n->loc;
  /* carried registers, initialised from the inits */
  for (uint32_t i = 0; i < n->nops; i++) {
    uint32_t cid = body->nodes.v[i];
    uint32_t ne = lw_nelem(w, cid);
    tir_ty ct = tir_ty_of(wv_get(w->g, cid)->type.dt);
    w->vals[cid] = lw_new_regs(w, ct, ne);
    for (uint32_t e = 0; e < ne; e++)
      lw_emit(w, T_MOV, ct, w->vals[cid] + e, lw_elem(w, n->ops[i], e, ct), 0,
              0, 0);
  }
  /* the staged tiles this loop streams through its ring (see stage) */
  VEC(stage *) piped = {0};
  for (uint32_t i = 0; i < w->stages_all.n; i++)
    if (w->stages_all.v[i]->loop == id)
      vec_push(ctx, &piped, w->stages_all.v[i]);
  /* the tiles walked: [first, last) (expressions in the workgroup ids
   * for a bounded iterate, else 0 and trips; see walks.c) */
  ex_t first = w->walk_first[id], last = w->walk_last[id];
  /* the analyses' remarks about the loop, where the program meets it */
  if (w->walk_remark[id])
    vec_push(ctx, &w->k->remarks, w->walk_remark[id]);
  uint32_t rfirst, rlast;
  int64_t trips;
  lw_walk_bounds(w, id, &rfirst, &rlast, &trips);
  bool bounded = rfirst || rlast;
  int64_t S = w->stages;
  /* its ring, as the pass pipeline decided it */
  const ring_plan *rg = NULL;
  for (uint32_t i = 0; i < w->rings.n && !rg; i++)
    if (w->rings.v[i].loop == id)
      rg = &w->rings.v[i];
  bool carry = rg && rg->carry;
  int64_t ahead_n = rg ? rg->ahead : 0;
  bool tma = piped.n && S > 1 && piped.v[0]->tmap;
  if (piped.n && S > 1 && !(tma && w->sched.specialize)) {
    /* tiles first .. first+ahead_n-1 in flight before the first
     * iteration (with persistent tiles, into slots the tile before may
     * still hold: after their release) */
    lw_barrier(w);
    for (int64_t t = 0; t < ahead_n; t++) {
      ex_t tile = ex_add(ctx, first, ex_const(ctx, t));
      uint32_t in_range = 0;
      if (bounded) {
        in_range = lw_reg(w, TY_PRED);
        lw_emit(w, T_SETP, TY_I32, in_range, lw_expr(w, tile), rlast, 0,
                TIR_CMP_LT);
      }
      if (tma) {
        if (t < trips)
          lw_tma_fill(w, piped.v, piped.n, S, first, tile, in_range,
                      w->sched.ring != 0);
        continue;
      }
      for (uint32_t i = 0; i < piped.n && t < trips; i++)
        lw_stage_issue(w, piped.v[i], tile, lw_slot_at(w, piped.v[i], S, tile),
                       in_range);
      lw_emit(w, T_CPCOMMIT, TY_PRED, 0, 0, 0, 0, 0);
    }
  }
  /* the reads the body loads from global memory each iteration, loaded
   * an iteration ahead (see prefetch) */
  wavec_sym pl = w->pref_lv;
  uint32_t pe = w->pref_end;
  int64_t pt = w->pref_trips;
  w->pref_lv = w->d->dim[n->sym].loopvar;
  w->pref_end = rlast;
  w->pref_trips = trips;
  prefetch(w, n, piped.n, first, rfirst, rlast, trips);
  loop_part lp = {id, piped.v, piped.n, S, ahead_n, carry, trips,
                  rlast, first};
  /* a causal mask splits the walk: the tiles it leaves whole first (or
   * last), without it */
  ex_t mid = w->split_mid[id];
  int mrel = w->split_rel[id];
  if (w->split_remark[id])
    vec_push(ctx, &w->k->remarks, w->split_remark[id]);
  if (!mrel) {
    lw_loop_part(w, &lp, rfirst, rlast, first, last, false);
  } else {
    uint32_t rmid = lw_expr(w, mid);
    uint32_t ra = bounded ? rfirst : lw_iconst(w, 0);
    if (!bounded)
      lp.last = lw_iconst(w, trips);
    bool whole_first = mrel == WAVEC_REL_LE || mrel == WAVEC_REL_LT;
    lw_loop_part(w, &lp, ra, rmid, first, mid, whole_first);
    lw_loop_part(w, &lp, rmid, lp.last, mid, last, !whole_first);
  }
  if (tma)
    lw_ring_advance(w, first, last);
  w->pref_lv = pl;
  w->pref_end = pe;
  w->pref_trips = pt;
}

void lw_yield(lw *w, uint32_t id) {
  wavec_ctx *ctx = w->ctx;
  wv_node *n = wv_get(w->g, id);
  wv_node *it = wv_get(w->g, n->loop);
  wv_block *body = &w->g->blocks.v[it->body];
  /* parallel copy: yielded values may be other carried registers; a
   * value already in its carried registers (an mma accumulated in
   * place) is not copied */
  VEC(uint32_t) tmp = {0};
  bool *same = wv_alloc(ctx, (n->nops ? n->nops : 1) * sizeof *same);
  for (uint32_t i = 0; i < n->nops; i++) {
    uint32_t cid = body->nodes.v[i];
    tir_ty ct = tir_ty_of(wv_get(w->g, cid)->type.dt);
    same[i] = wv_get(w->g, n->ops[i])->op != WAVEC_OP_SCALAR;
    for (uint32_t e = 0; e < lw_nelem(w, cid) && same[i]; e++)
      same[i] = lw_elem(w, n->ops[i], e, ct) == w->vals[cid] + e;
    for (uint32_t e = 0; e < lw_nelem(w, cid) && !same[i]; e++) {
      uint32_t t = lw_reg(w, ct);
      lw_emit(w, T_MOV, ct, t, lw_elem(w, n->ops[i], e, ct), 0, 0, 0);
      vec_push(ctx, &tmp, t);
    }
  }
  uint32_t t = 0;
  for (uint32_t i = 0; i < n->nops; i++) {
    uint32_t cid = body->nodes.v[i];
    tir_ty ct = tir_ty_of(wv_get(w->g, cid)->type.dt);
    for (uint32_t e = 0; e < lw_nelem(w, cid) && !same[i]; e++)
      lw_emit(w, T_MOV, ct, w->vals[cid] + e, tmp.v[t++], 0, 0, 0);
  }
}
