/* The lowering: loops (the tiles a bounded iterate walks, the causal mask
 * split of a walk, a ring's wait and refill per iteration, a wgmma group
 * carried into the next iteration). */
#include "tir/lower.h"

/* The tiles iterate n walks, [*first, *last): all of them, or for
 * `iterate(D REL E)` those holding a coordinate d with d REL e for some e
 * of the workgroup's tile of E, [e0, e1]: d <= e1 (<: d <= e1 - 1) ends
 * the walk at the tile holding e1, d >= e0 (>: d >= e0 + 1) starts it at
 * the tile holding e0. Clamped to [0, trips] (trips: ceil(size / tile),
 * for a dynamic dim an expression in its size). */
static void loop_range(lw *w, wv_node *n, ex_t *first, ex_t *last) {
  wavec_ctx *ctx = w->ctx;
  wv_diminfo *di = &w->d->dim[n->sym];
  int64_t trips = di->tiles;
  ex_t all = di->dynamic ? ex_ceildiv(ctx, lw_dim_size(w, n->sym),
                                      ex_const(ctx, di->tile))
                         : ex_const(ctx, trips);
  *first = ex_const(ctx, 0);
  *last = all;
  if (!n->rel)
    return;
  wv_diminfo *ei = &w->d->dim[n->rel_dim];
  wv_assert(ctx, ei->wg_axis >= 0);
  ex_t e0 = ex_mul(ctx, ex_sym(ctx, w->d->WG[ei->wg_axis]),
                   ex_const(ctx, ei->wg_tile));
  ex_t e1 = ex_add(ctx, e0, ex_const(ctx, ei->wg_tile - 1));
  ex_t T = ex_const(ctx, di->tile), zero = ex_const(ctx, 0),
       one = ex_const(ctx, 1);
  switch (n->rel) {
  case WAVEC_REL_LE:
  case WAVEC_REL_LT: {
    ex_t top = n->rel == WAVEC_REL_LT ? ex_sub(ctx, e1, one) : e1;
    *last = ex_add(ctx, ex_floordiv(ctx, top, T), one);
    break;
  }
  default: {
    ex_t bot = n->rel == WAVEC_REL_GT ? ex_add(ctx, e0, one) : e0;
    *first = ex_floordiv(ctx, bot, T);
    break;
  }
  }
  *first = lw_concrete(w, ex_max(ctx, zero, ex_min(ctx, *first, all)), 0);
  *last = lw_concrete(w, ex_max(ctx, zero, ex_min(ctx, *last, all)), 0);
  if (di->dynamic || ei->dynamic)
    return; /* the remark below needs the sizes */
  /* what the bound saves, as a remark: the tiles each workgroup walks */
  uint32_t ns = ctx->sym_names.n;
  int64_t *vals = wv_alloc(ctx, ns * sizeof *vals);
  bool *known = wv_alloc(ctx, ns * sizeof *known);
  wavec_sym wg = w->d->WG[ei->wg_axis];
  known[wg] = true;
  int64_t lo = trips, hi = 0, sum = 0, nwg = w->d->grid[ei->wg_axis];
  for (int64_t g = 0; g < nwg; g++) {
    int64_t f, l;
    vals[wg] = g;
    if (!ex_eval(ctx, *first, vals, known, ns, &f) ||
        !ex_eval(ctx, *last, vals, known, ns, &l))
      wv_fail(ctx, D_INTERNAL, n->loc, "iterate bound depends on more than "
              "the workgroup id");
    int64_t t = l > f ? l - f : 0;
    lo = t < lo ? t : lo;
    hi = t > hi ? t : hi;
    sum += t;
  }
  wv_buf b;
  wv_remark_start(w->k, n->loc, &b);
  wv_buf_printf(&b, "iterate over '%s' %s '%s': a workgroup "
                    "walks %lld to %lld of the %lld tiles, %.1f on average "
                    "(%.0f%% of the unbounded walk)",
                wavec_symbol_name(ctx, n->sym),
                wv_rel_names[n->rel], wavec_symbol_name(ctx, n->rel_dim),
                (long long)lo, (long long)hi, (long long)trips,
                (double)sum / (double)nwg,
                100.0 * (double)sum / (double)(nwg * trips));
  wv_remark_end(w->k, &b);
}

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

/* The node `id` shows, through broadcasts and layout conversions. */
static const wv_node *through_views(lw *w, uint32_t id) {
  const wv_node *x = wv_get(w->g, id);
  while (x->op == WAVEC_OP_BROADCAST || x->op == WV_OP_CONVERT)
    x = wv_get(w->g, x->ops[0]);
  return x;
}

/* The dim of the self index `id` stands for, or 0. */
static wavec_sym index_dim(lw *w, uint32_t id) {
  const wv_node *x = through_views(w, id);
  return x->op == WAVEC_OP_SELF_INDEX ? x->sym : 0;
}

/* A causal mask of loop n: a select whose condition compares the self
 * indices of the loop's dim D and of its bound's dim E. Returns the
 * comparison as D REL E, or WAVEC_REL_NONE. */
static wavec_rel mask_rel(lw *w, const wv_node *n, uint32_t sel) {
  static const wavec_rel rel_of[WV_OP_COUNT] = {
      [WAVEC_OP_LT] = WAVEC_REL_LT, [WAVEC_OP_LE] = WAVEC_REL_LE,
      [WAVEC_OP_GT] = WAVEC_REL_GT, [WAVEC_OP_GE] = WAVEC_REL_GE};
  static const wavec_rel flip[] = {
      [WAVEC_REL_NONE] = WAVEC_REL_NONE, [WAVEC_REL_LT] = WAVEC_REL_GT,
      [WAVEC_REL_LE] = WAVEC_REL_GE, [WAVEC_REL_GT] = WAVEC_REL_LT,
      [WAVEC_REL_GE] = WAVEC_REL_LE};
  wv_node *s = wv_get(w->g, sel);
  if (s->op != WAVEC_OP_SELECT)
    return WAVEC_REL_NONE;
  const wv_node *c = through_views(w, s->ops[0]);
  wavec_rel r = rel_of[c->op];
  if (!r)
    return WAVEC_REL_NONE;
  wavec_sym a = index_dim(w, c->ops[0]), b = index_dim(w, c->ops[1]);
  if (a == n->sym && b == n->rel_dim)
    return r;
  if (a == n->rel_dim && b == n->sym)
    return flip[r];
  return WAVEC_REL_NONE;
}

/* Loop n (a bounded walk [first, last) over the tiles of D, T wide, for the
 * workgroup's tile [e0, e1] of E) whose body masks with one relation
 * D REL E: the tiles where the mask holds for every d and e, which are a
 * prefix of the walk for < and <= (tiles below floor((e0+1)/T) for <=,
 * floor(e0/T) for <) and a suffix for > and >= (from ceil((e1+1)/T),
 * ceil(e1/T)). Sets *mid to where the whole tiles end (or begin), clamped
 * to the walk, marks the masks (unmask_cand) and returns the relation;
 * WAVEC_REL_NONE (nothing to split) otherwise. */
static wavec_rel mask_split(lw *w, const wv_node *n, ex_t first, ex_t last,
                            ex_t *mid) {
  wavec_ctx *ctx = w->ctx;
  if (!n->rel || (ctx->test_hooks & WV_HOOK_NO_MASK_SPLIT))
    return WAVEC_REL_NONE;
  wv_block *body = &w->g->blocks.v[n->body];
  wavec_rel rel = WAVEC_REL_NONE;
  for (uint32_t i = 0; i < body->nodes.n; i++) {
    wavec_rel r = mask_rel(w, n, body->nodes.v[i]);
    if (r && rel && r != rel)
      return WAVEC_REL_NONE; /* (the marks stay unread: no split) */
    w->unmask_cand[body->nodes.v[i]] = r != WAVEC_REL_NONE;
    rel = r ? r : rel;
  }
  if (!rel)
    return WAVEC_REL_NONE;
  wv_diminfo *di = &w->d->dim[n->sym], *ei = &w->d->dim[n->rel_dim];
  ex_t T = ex_const(ctx, di->tile);
  ex_t e0 = ex_mul(ctx, ex_sym(ctx, w->d->WG[ei->wg_axis]),
                   ex_const(ctx, ei->wg_tile));
  ex_t e1 = ex_add(ctx, e0, ex_const(ctx, ei->wg_tile - 1));
  int64_t add[] = {[WAVEC_REL_LT] = 0, [WAVEC_REL_LE] = 1,
                   [WAVEC_REL_GT] = di->tile, [WAVEC_REL_GE] = di->tile - 1};
  ex_t base = rel == WAVEC_REL_LT || rel == WAVEC_REL_LE ? e0 : e1;
  ex_t m = ex_floordiv(ctx, ex_add(ctx, base, ex_const(ctx, add[rel])), T);
  *mid = lw_concrete(w, ex_max(ctx, first, ex_min(ctx, m, last)), 0);
  wv_buf b;
  wv_remark_start(w->k, n->loc, &b);
  wv_buf_printf(&b, "iterate over '%s': the mask compares '%s' with '%s'; "
                    "the tiles it leaves whole are walked %s, without it",
                wavec_symbol_name(ctx, n->sym), wavec_symbol_name(ctx, n->sym),
                wavec_symbol_name(ctx, n->rel_dim),
                rel == WAVEC_REL_LT || rel == WAVEC_REL_LE ? "first" : "last");
  wv_remark_end(w->k, &b);
  return rel;
}

/* One loop over tiles [rfirst, rlast) of the walk (registers; 0: 0 and
 * all trips; efirst and elast the same as expressions) with the ring
 * already primed: each iteration waits for its tile, refills the ring,
 * runs the body. `unmasked`: the tiles a causal mask leaves whole, whose
 * masks (see mask_split) take their value. A ring of tensor copies
 * (lower_tma.c) has thread 0 refill first, then every wave wait for its
 * tile, and each wave release a slot where the wgmmas reading it have
 * retired: at the end of the iteration, or with a carried group, the
 * previous tile's slot there and the part's last tile's after the loop. */
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
    if (trips > ahead_n) {
      ex_t ahead = ex_add(ctx, lv, ex_const(ctx, ahead_n));
      uint32_t rahead = lw_expr(w, ahead);
      uint32_t end = lp->last ? lp->last : lw_iconst(w, trips);
      uint32_t more = lw_reg(w, TY_PRED);
      lw_emit(w, T_SETP, TY_I32, more, rahead, end, 0, TIR_CMP_LT);
      lw_tma_fill(w, piped_v, piped_n, S, lp->first, ahead, more, true);
    }
    lw_tma_acquire(w, piped_v[0], S, lp->first, lv);
    /* planted bug for the tests: release the slot before reading it */
    if (early_release)
      lw_tma_release(w, piped_v[0], S, lv, 0);
  } else if (piped_n && S > 1) {
    /* tile i has landed; everyone is done with the slot that receives
     * tile i+ahead_n (of tile i-1, or i-2 when a group is carried) */
    /* planted bugs for the tests: a wait that leaves tile i in flight,
     * a missing barrier */
    bool early = ctx->test_hooks & WV_HOOK_RING_EARLY_READ;
    lw_emit(w, T_CPWAIT, TY_PRED, 0, 0, 0, 0, ahead_n - 1 + early);
    if (!(ctx->test_hooks & WV_HOOK_RING_NO_BARRIER))
      lw_emit(w, T_BAR, TY_PRED, 0, 0, 0, 0, 0);
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
    piped_v[i]->at = lw_slot_at(w, piped_v[i], S, lv);
  uint32_t body_from = w->p->code.n;
  lw_block(w, n->body);
  w->loc = n->loc;
  for (uint32_t i = 0; i < piped_n; i++)
    piped_v[i]->at = 0;
  /* The last group stays in flight, if the next iteration waits for all
   * wgmmas before it touches what that group uses (see tir_carry_blocker):
   * wait for all but it. */
  bool carried = false;
  if (carry) {
    bool pending;
    const tir_instr *blocker =
        tir_carry_blocker(ctx, w->p, body_from,
                          ctx->test_hooks & WV_HOOK_WGMMA_NO_WAIT, &pending);
    if (pending) {
      remark_carry(w, n, blocker);
      carried = !blocker;
    }
  }
  if (carried)
    lw_emit(w, T_WGWAIT, TY_PRED, 0, 0, 0, 0, 1);
  if (tma && !early_release) {
    if (carried) {
      uint32_t from = rfirst ? rfirst : lw_iconst(w, 0);
      uint32_t later = lw_reg(w, TY_PRED);
      lw_emit(w, T_SETP, TY_I32, later, counter, from, 0, TIR_CMP_GT);
      lw_tma_release(w, piped_v[0], S, ex_sub(ctx, lv, ex_const(ctx, 1)),
                     later);
    } else {
      lw_tma_release(w, piped_v[0], S, lv, 0); /* after a full wait */
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
    lw_tma_release(w, piped_v[0], S, ex_sub(ctx, elast, ex_const(ctx, 1)),
                   any);
  }
  w->p->code.v[start].match = end;
  w->p->code.v[end].match = start;
  w->loopreg[di->loopvar] = 0;
  w->unmasking = was_unmasking;
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
  wv_diminfo *di = &w->d->dim[n->sym];
  /* the most trips (a dynamic dim: as many as 32-bit indices reach) */
  int64_t trips = di->dynamic ? INT32_MAX / di->tile : di->tiles;
  /* the staged tiles this loop streams through its ring (see stage) */
  VEC(stage *) piped = {0};
  for (uint32_t i = 0; i < w->stages_all.n; i++)
    if (w->stages_all.v[i]->loop == id)
      vec_push(ctx, &piped, w->stages_all.v[i]);
  /* the tiles walked: [first, last) (expressions in the workgroup ids
   * for a bounded iterate, else 0 and trips) */
  ex_t first, last;
  loop_range(w, n, &first, &last);
  bool bounded = !ex_is_const(ctx, first, NULL) ||
                 !ex_is_const(ctx, last, NULL);
  uint32_t rfirst = bounded ? lw_expr(w, first) : 0;
  uint32_t rlast = bounded ? lw_expr(w, last) : 0;
  int64_t S = w->stages;
  /* A wgmma loop with a ring of 3 or more slots may carry the last group
   * of wgmmas of an iteration, in flight, into the next one (see
   * tir_carry_blocker); the group of iteration i-1 may then still read the slot
   * of tile i-1 when iteration i refills a slot, so the ring runs one
   * tile less ahead: tile i+S-2 goes into the slot of tile i-2. */
  bool carry = piped.n && lw_ring_carries(w, S);
  int64_t ahead_n = lw_ring_ahead(w, S);
  if (ctx->test_hooks & WV_HOOK_WGMMA_CARRY_NEAR)
    ahead_n = S - 1; /* planted bug for the tests: refill a read slot */
  if (piped.n && S > 1) {
    /* tiles first .. first+ahead_n-1 in flight before the first
     * iteration */
    lw_emit(w, T_BAR, TY_PRED, 0, 0, 0, 0, 0);
    for (int64_t t = 0; t < ahead_n; t++) {
      ex_t tile = ex_add(ctx, first, ex_const(ctx, t));
      uint32_t in_range = 0;
      if (bounded) {
        in_range = lw_reg(w, TY_PRED);
        lw_emit(w, T_SETP, TY_I32, in_range, lw_expr(w, tile), rlast, 0,
                TIR_CMP_LT);
      }
      if (piped.v[0]->tmap) {
        if (t < trips)
          lw_tma_fill(w, piped.v, piped.n, S, first, tile, in_range, false);
        continue;
      }
      for (uint32_t i = 0; i < piped.n && t < trips; i++)
        lw_stage_issue(w, piped.v[i], tile, lw_slot_at(w, piped.v[i], S, tile),
                       in_range);
      lw_emit(w, T_CPCOMMIT, TY_PRED, 0, 0, 0, 0, 0);
    }
  }
  loop_part lp = {id, piped.v, piped.n, S, ahead_n, carry, trips,
                  rlast, first};
  /* a causal mask splits the walk: the tiles it leaves whole first (or
   * last), without it */
  ex_t mid;
  int mrel = mask_split(w, n, first, last, &mid);
  if (!mrel) {
    lw_loop_part(w, &lp, rfirst, rlast, first, last, false);
    return;
  }
  uint32_t rmid = lw_expr(w, mid);
  uint32_t ra = bounded ? rfirst : lw_iconst(w, 0);
  if (!bounded)
    lp.last = lw_iconst(w, trips);
  bool whole_first = mrel == WAVEC_REL_LE || mrel == WAVEC_REL_LT;
  lw_loop_part(w, &lp, ra, rmid, first, mid, whole_first);
  lw_loop_part(w, &lp, rmid, lp.last, mid, last, !whole_first);
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
