/* The lowering: the schedule's code (schedule.c has the decisions).
 *
 * Warp specialization. After the barriers' prologue, which every thread
 * runs, the program splits by role on the thread id (uniform across each
 * warpgroup): the producer's region, where setmaxnreg.dec gives registers
 * back and, for each ring in program order, a loop over the tiles of the
 * ring's walk fills each tile's slot once the slot is released (its first
 * thread issues, its warpgroup waits); then the consumers' region, where
 * setmaxnreg.inc takes registers and the kernel's own program runs, its
 * loops waiting for full slots and releasing them (lower_loop.c), its
 * barriers the consumers' named one (lw_barrier).
 *
 * Persistent tiles. The kernel's program (the consumers', with warp
 * specialization; the producer's loops too) runs inside a loop over the
 * workgroup's tiles t = %ctaid.x + i x G (G = min(tiles, ctas), the grid),
 * whose top maps t to the tile's workgroup ids in the grouped order
 * (schedule.c); the index algebra reads them for $WG0..2 (lower_expr.c).
 * A tensor-copy ring's position runs on across tiles: $RING holds its
 * fills before the tile (a register set at the tile's top from the count
 * the tile before left, lw_ring_advance). */
#include "tir/lower.h"

/* The workgroup ids of tile t (a register) in the grouped order: axis 2
 * outermost; within it groups of group_m tiles of axis 0, each swept
 * along axis 1 a column of the group at a time (the last group may be
 * narrower). Sets w->wgreg. Every value is at most the tiles, below 2^31
 * (tir_launch_grid): a group's width is min(group_m, n0) x n1. */
static void raster(lw *w, uint32_t t, uint32_t n0, uint32_t n1) {
  uint32_t gm = lw_iconst(w, w->sched.group_m);
  uint32_t per = lw_op2(w, T_MUL, TY_I32, n0, n1);
  w->wgreg[2] = lw_op2(w, T_DIV, TY_I32, t, per);
  uint32_t r = lw_op2(w, T_MOD, TY_I32, t, per);
  uint32_t width =
      lw_op2(w, T_MUL, TY_I32, lw_op2(w, T_MIN, TY_I32, gm, n0), n1);
  uint32_t group = lw_op2(w, T_DIV, TY_I32, r, width);
  uint32_t first_m = lw_op2(w, T_MUL, TY_I32, group, gm);
  uint32_t left = lw_op2(w, T_SUB, TY_I32, n0, first_m);
  uint32_t size = lw_op2(w, T_MIN, TY_I32, left, gm);
  uint32_t in = lw_op2(w, T_MOD, TY_I32, r, width);
  uint32_t row = lw_op2(w, T_MOD, TY_I32, in, size);
  w->wgreg[0] = lw_op2(w, T_ADD, TY_I32, first_m, row);
  w->wgreg[1] = lw_op2(w, T_DIV, TY_I32, in, size);
  uint32_t n[3] = {n0, n1, 0};
  for (int a = 0; a < 3; a++)
    w->wgreg[a] = lw_tile_order(w, a, w->wgreg[a], n[a]);
}

/* Opens the loop over the workgroup's tiles and the scope of its body;
 * the tile's workgroup ids and ring position are set. */
static void tile_loop_begin(lw *w, tile_loop *tl) {
  const sched_plan *s = &w->sched;
  if (s->ring) {
    w->ring_next = lw_reg(w, TY_I32); /* reassigned after each tile */
    lw_emit(w, T_CONST, TY_I32, w->ring_next, 0, 0, 0, 0);
  }
  uint32_t n0 = lw_tiles_along(w, 0), n1 = lw_tiles_along(w, 1);
  uint32_t n2 = lw_tiles_along(w, 2);
  uint32_t tiles = lw_op2(w, T_MUL, TY_I32, lw_op2(w, T_MUL, TY_I32, n0, n1),
                          n2);
  uint32_t most = lw_iconst(w, s->ctas);
  uint32_t grid = lw_op2(w, T_MIN, TY_I32, tiles, most);
  uint32_t id = lw_reg(w, TY_I32);
  lw_emit(w, T_SREG, TY_I32, id, 0, 0, 0, TIR_SREG_CTAID_X);
  /* trips: ceil((tiles - id) / grid) = (tiles - 1 - id) / grid + 1, as
   * id < grid <= tiles (no sum past the tiles, below 2^31) */
  uint32_t one = lw_iconst(w, 1);
  uint32_t left = lw_op2(w, T_SUB, TY_I32,
                         lw_op2(w, T_SUB, TY_I32, tiles, one), id);
  uint32_t trips =
      lw_op2(w, T_ADD, TY_I32, lw_op2(w, T_DIV, TY_I32, left, grid), one);
  /* the most trips: every tile in one workgroup */
  int64_t all = 1;
  for (int a = 0; a < 3; a++)
    all = w->d->grid[a] < 0 || all > INT32_MAX ? INT32_MAX
                                                : all * w->d->grid[a];
  tl->counter = lw_reg(w, TY_I32);
  tir_instr *li = lw_emit(w, T_LOOP, TY_I32, tl->counter, 0, trips, 0,
                          all > INT32_MAX ? INT32_MAX : all);
  tl->start = (uint32_t)(li - w->p->code.v);
  lw_open_scope(w);
  uint32_t t = lw_op2(w, T_ADD, TY_I32, id,
                      lw_op2(w, T_MUL, TY_I32, tl->counter, grid));
  raster(w, t, n0, n1);
  if (s->ring) {
    uint32_t base = lw_reg(w, TY_I32);
    lw_emit(w, T_MOV, TY_I32, base, w->ring_next, 0, 0, 0);
    w->loopreg[s->ring] = base;
  }
}

static void tile_loop_end(lw *w, tile_loop *tl) {
  lw_close_scope(w);
  tir_instr *li = &w->p->code.v[tl->start];
  tir_instr *ei = lw_emit(w, T_ENDLOOP, TY_I32, tl->counter, li->a, li->b, 0,
                          li->imm);
  uint32_t end = (uint32_t)(ei - w->p->code.v);
  w->p->code.v[tl->start].match = end;
  w->p->code.v[end].match = tl->start;
  for (int a = 0; a < 3; a++)
    w->wgreg[a] = 0;
  if (w->sched.ring)
    w->loopreg[w->sched.ring] = 0;
}

/* The producer's loop for ring r: every tile of the walk of r's loop,
 * each into its slot once the slot is released. */
static void producer_loop(lw *w, const ring_plan *r) {
  wavec_ctx *ctx = w->ctx;
  wv_node *n = wv_get(w->g, r->loop);
  wv_diminfo *di = &w->d->dim[n->sym];
  VEC(stage *) piped = {0};
  for (uint32_t i = 0; i < w->stages_all.n; i++)
    if (w->stages_all.v[i]->loop == r->loop)
      vec_push(ctx, &piped, w->stages_all.v[i]);
  w->loc = n->loc;
  uint32_t rfirst, rlast;
  int64_t trips;
  lw_walk_bounds(w, r->loop, &rfirst, &rlast, &trips);
  ex_t first = w->walk_first[r->loop], last = w->walk_last[r->loop];
  uint32_t counter = lw_reg(w, TY_I32);
  w->loopreg[di->loopvar] = counter;
  tir_instr *li = lw_emit(w, T_LOOP, TY_I32, counter, rfirst, rlast, 0, trips);
  uint32_t start = (uint32_t)(li - w->p->code.v);
  lw_open_scope(w);
  lw_tma_fill(w, piped.v, piped.n, w->stages, first,
              ex_sym(ctx, di->loopvar), 0, true);
  lw_close_scope(w);
  w->loc = n->loc;
  tir_instr *ei =
      lw_emit(w, T_ENDLOOP, TY_I32, counter, rfirst, rlast, 0, trips);
  uint32_t end = (uint32_t)(ei - w->p->code.v);
  w->p->code.v[start].match = end;
  w->p->code.v[end].match = start;
  w->loopreg[di->loopvar] = 0;
  lw_ring_advance(w, first, last);
}

/* Opens a region that only the waves with predicate `on` (uniform across
 * each wave: a role, a wave coordinate) run; returns its T_IF. */
uint32_t lw_region_begin(lw *w, uint32_t on) {
  tir_instr *in = lw_emit(w, T_IF, TY_PRED, 0, on, 0, 0, 0);
  return (uint32_t)(in - w->p->code.v);
}

void lw_region_end(lw *w, uint32_t start) {
  tir_instr *in = lw_emit(w, T_ENDIF, TY_PRED, 0, 0, 0, 0, 0);
  uint32_t end = (uint32_t)(in - w->p->code.v);
  w->p->code.v[start].match = end;
  w->p->code.v[end].match = start;
}

void lw_sched_begin(lw *w) {
  const sched_plan *s = &w->sched;
  tir_prog *p = w->p;
  w->loc = w->k->loc;
  p->cluster = s->cluster > 1 ? s->cluster : 0;
  if (s->specialize) {
    int64_t edge = s->consumers * 128;
    p->block[0] = edge + 128;
    p->maxnreg = s->entry_regs;
    uint32_t tid = lw_reg(w, TY_I32);
    lw_emit(w, T_SREG, TY_I32, tid, 0, 0, 0, TIR_SREG_TID_X);
    uint32_t redge = lw_iconst(w, edge);
    uint32_t producer = lw_reg(w, TY_PRED);
    lw_emit(w, T_SETP, TY_I32, producer, tid, redge, 0, TIR_CMP_GE);
    uint32_t at = lw_region_begin(w, producer);
    lw_open_scope(w);
    lw_emit(w, T_REGDEC, TY_PRED, 0, 0, 0, 0, s->producer_regs);
    uint32_t leader = lw_reg(w, TY_PRED);
    lw_emit(w, T_SETP, TY_I32, leader, tid, redge, 0, TIR_CMP_EQ);
    uint32_t saved[2] = {w->tma_leader, w->tma_wave0};
    w->tma_leader = leader;
    w->tma_wave0 = 0; /* the warpgroup waits together */
    tile_loop tl;
    if (s->persistent)
      tile_loop_begin(w, &tl);
    for (uint32_t i = 0; i < w->rings.n; i++)
      producer_loop(w, &w->rings.v[i]);
    if (s->persistent)
      tile_loop_end(w, &tl);
    for (uint32_t i = 0; i < w->rings.n; i++)
      lw_tma_tail(w, &w->rings.v[i]);
    w->tma_leader = saved[0];
    w->tma_wave0 = saved[1];
    lw_close_scope(w);
    /* (so that nothing the consumers keep is live in the producer's 40
     * registers: ptxas would spill it) */
    lw_emit(w, T_EXIT, TY_PRED, 0, 0, 0, 0, 0);
    lw_region_end(w, at);
    w->loc = w->k->loc;
    uint32_t consumer = lw_reg(w, TY_PRED);
    lw_emit(w, T_SETP, TY_I32, consumer, tid, redge, 0, TIR_CMP_LT);
    w->sched_region = lw_region_begin(w, consumer);
    /* planted bug for the tests: consumers ask for more than the pool */
    int64_t regs = (w->ctx->test_hooks & WV_HOOK_SPEC_REGS_GREEDY)
                       ? 256
                       : s->consumer_regs;
    if (regs > s->entry_regs)
      lw_emit(w, T_REGINC, TY_PRED, 0, 0, 0, 0, regs);
    w->bar_id = 1;
    w->bar_threads = edge;
  }
  if (s->persistent) {
    /* the grid: min(tiles, ctas) along x (tir_grid) */
    int64_t tiles = 1;
    for (int a = 0; a < 3; a++) {
      p->tiles[a] = p->grid_size[a] ? 0 : p->grid[a];
      tiles *= p->grid_size[a] ? 1 : p->grid[a];
    }
    p->persistent = s->ctas;
    bool dynamic = p->grid_size[0] || p->grid_size[1] || p->grid_size[2];
    p->grid[0] = dynamic ? 0 : tiles < s->ctas ? tiles : s->ctas;
    p->grid[1] = p->grid[2] = 1;
    tile_loop_begin(w, &w->sched_tiles);
  }
}

void lw_sched_end(lw *w) {
  const sched_plan *s = &w->sched;
  w->loc = w->k->loc;
  if (s->persistent)
    tile_loop_end(w, &w->sched_tiles);
  for (uint32_t i = 0; i < w->rings.n && !s->specialize; i++)
    lw_tma_tail(w, &w->rings.v[i]); /* (thread 0's wave produced) */
  lw_store_finish(w);
  if (s->specialize) {
    lw_region_end(w, w->sched_region);
    w->bar_id = w->bar_threads = 0;
  }
}

/* After a tensor-copy ring's loop: with persistent tiles, the ring's
 * fills after this tile are those before it and the tiles it walked. */
void lw_ring_advance(lw *w, ex_t first, ex_t last) {
  wavec_ctx *ctx = w->ctx;
  if (!w->sched.ring)
    return;
  uint32_t base = w->loopreg[w->sched.ring];
  uint32_t walked = lw_expr(w, lw_concrete(w, ex_sub(ctx, last, first), 0));
  lw_emit(w, T_ADD, TY_I32, w->ring_next, base, walked, 0, 0);
}

/* Where tile `tile` of a walk from `first` goes in its ring: slot pos mod
 * S. The tile itself, as tiles follow each other in order; with
 * persistent tiles the ring's fills before it, $RING + tile - first. */
ex_t lw_ring_pos(lw *w, ex_t first, ex_t tile) {
  wavec_ctx *ctx = w->ctx;
  if (!w->sched.ring)
    return tile;
  return ex_add(ctx, ex_sub(ctx, tile, first), ex_sym(ctx, w->sched.ring));
}
