/* Pass `schedule`. require: pipeline. Who does what, and which tiles:
 *
 * Warp specialization (hardware(specialize = 1)). One more warpgroup, the
 * producer, follows the kernel's waves (the consumers): warpgroup C of a
 * block of (C + 1) x 128 threads, so that the consumers' thread ids, and
 * every index derived from them, stay what they are without it. The
 * producer's one elected thread (its first) issues the tensor copies of
 * every ring, each after waiting on the slot's empty barrier; its other
 * threads wait with it and do nothing else. The consumers wait on full
 * barriers, issue the wgmmas, release the slots (arrive on empty) and run
 * everything else; a barrier among them is a named one of their threads
 * (the producer never reaches it). It applies where the kernel streams
 * tiles by tensor copies (every ring it has), its waves are warpgroups
 * laid along x and one more warpgroup fits; elsewhere it is an error
 * (E0408) at the entry. Registers: the launch fixes the count per thread
 * at entry, floor8(min(255, 65536 / (workgroups_per_sm x threads))), and
 * the warpgroups then trade them through the workgroup's pool of that
 * count times its threads (setmaxnreg): the producer keeps 40, the
 * consumers take floor8(min(240, (pool - 128 x 40) / consumer threads))
 * where that is more than they have, so that they never ask the pool for
 * more than the producer gave back.
 *
 * Persistent tiles (hardware(persistent = 1)). A grid of min(tiles,
 * sms x workgroups_per_sm) workgroups along x (sms: 132 unless set); each
 * loops over the workgroup tiles t = its id + i x the grid, mapped to
 * workgroup ids in a grouped order: the tiles of grid axis 0 in groups of
 * group_m (8 unless set), each group swept along axis 1 a column of group_m
 * tiles at a time, axis 2 outermost, so that neighbouring workgroups share
 * rows of one operand and columns of the other in L2. The index algebra's
 * workgroup ids ($WG0..2) are the tile's: the lowering materialises them
 * at the top of each tile (lower_sched.c, lower_expr.c), nothing else
 * changes. A tensor-copy ring's barriers are initialised once; the ring's
 * fills are counted across tiles ($RING, the fills before the tile), so
 * slots and phases run on from tile to tile. At most one loop may have a
 * tensor-copy ring.
 *
 * The compiler's choice (neither knob given). Both pay where a workgroup's
 * rings leave no room for a second workgroup on the multiprocessor
 * (workgroups_per_sm unset, the rings past half its shared memory), or its
 * registers do not (the accumulators of every mma chain and 32 more a
 * thread past floor8(65536 / (2 x threads)); up to the consumers' 240: the
 * one-pass backward at D = 64, 144 accumulators, 180 registers plain,
 * measured 0.73 / 0.76 of cuDNN specialized against 0.72 / 0.67, run 13):
 * the producer warpgroup then costs no occupancy, and a grid of one
 * workgroup a multiprocessor is the machine full. Warp specialization is chosen
 * there wherever it applies. (The one-pass backward at D = 128 holds 256
 * accumulator registers a thread, more than the consumers' 240, and ptxas
 * serializes its wgmmas, C7512; measured, it is still the faster schedule
 * with its dq added by tensor reduces: bench/NOTES.md v0.6.2.) Persistent tiles are chosen there where one
 * loop streams by tensor copies and every grid axis of more than one tile
 * has an input that does not vary along it (neighbouring tiles along the
 * axis read the same operand, which the grouped order keeps in L2: both
 * axes of a GEMM; not the batch-head axis of attention, where grouping
 * spreads the tiles over more heads' keys and values than L2 holds).
 * Measured on the H100 (bench/NOTES.md, run v): GEMM 128x256 +1-22% over
 * the plain schedule; attention at 2 workgroups a multiprocessor keeps the
 * plain one. `hardware(specialize = 0)` / `(persistent = 0)` turn either
 * off; given as 1 and impossible, it is an error (E0408).
 *
 * Each says what it chose, or why not, in one remark. */
#include "tir/lower.h"

enum { PRODUCER_REGS = 24, CONSUMER_REGS_MAX = 240, POOL = 65536 };

/* Where an error about knob `hw` points: the entry, else the first loop
 * with a ring, else the kernel. */
static wavec_loc where(const lw *w, int hw) {
  if (w->k->hw.ints_loc[hw].line)
    return w->k->hw.ints_loc[hw];
  if (w->rings.n)
    return wv_get(w->g, w->rings.v[0].loop)->loc;
  return w->k->loc;
}

/* Is the ring of rings.v[i] filled by tensor copies? */
static bool ring_is_tma(const lw *w, uint32_t i) {
  uint32_t loop = w->rings.v[i].loop;
  for (uint32_t j = 0; j < w->stages_all.n; j++)
    if (w->stages_all.v[j]->loop == loop)
      return w->stages_all.v[j]->tmap != 0 && w->stages > 1;
  return false;
}

static int64_t floor8(int64_t v) { return v / 8 * 8; }

/* The workgroups a multiprocessor holds (workgroups_per_sm, else 1). */
static int64_t wgs_per_sm(const wv_dist *d) {
  return d->hw[WAVEC_HW_WORKGROUPS_PER_SM] ? d->hw[WAVEC_HW_WORKGROUPS_PER_SM]
                                           : 1;
}

/* The registers a thread gets at launch with `threads` a workgroup and
 * wps workgroups a multiprocessor: floor8 of the pool's share, at most
 * `most`. */
static int64_t regs_at_launch(int64_t wps, int64_t threads, int64_t most) {
  int64_t r = floor8(POOL / (wps * threads));
  return r > most ? most : r;
}

/* Was knob `hw` given (in the source or on the command line)? */
static bool asked(const lw *w, int hw) { return w->k->hw.ints[hw] != 0; }

const char *lw_knob_text(wv_kernel *k, int hw, long long v) {
  wv_buf b;
  wv_buf_init(&b, k->ctx);
  if (k->hw.ints_loc[hw].line)
    wv_buf_printf(&b, "hardware(%s = %lld)", wv_hwints[hw].name, v);
  else
    wv_buf_printf(&b, "--hardware %s=%lld", wv_hwints[hw].name, v);
  return wv_buf_str(&b);
}

/* A schedule that cannot apply: an error (E0408) at `at` where knob `hw`
 * asked for it; else false, and the reason in *why for the remark. */
__attribute__((format(printf, 5, 6))) static bool
refuse(lw *w, int hw, wavec_loc at, wv_buf *why, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  wv_buf_vprintf(why, fmt, ap);
  va_end(ap);
  if (asked(w, hw))
    wv_fail(w->ctx, D_SCHEDULE, at, "%s: %s", lw_knob_text(w->k, hw, 1),
            wv_buf_str(why));
  return false;
}

/* The accumulator registers a thread of the plain schedule holds at the
 * least: every mma chain's (a chain's head starts from something other
 * than an mma's result), as a loop body holds them all at its end; once
 * lower has planned the exchanges (lw_exchange_plan), a chain whose W
 * waves exchange its lhs holds 1/W of its elements. */
int64_t lw_chain_regs(const lw *w, uint32_t id) {
  int64_t ne = w->ix->info[id].layout->nelem;
  int a = w->xchg ? w->xchg[id] - 1 : -1;
  return a >= 0 ? ne / w->d->waves[a] : ne;
}

int64_t lw_chains_regs(const lw *w) {
  int64_t regs = 0;
  for (uint32_t id = 1; id < w->g->nodes.n; id++) {
    const wv_node *n = wv_get(w->g, id);
    if (n->op == WAVEC_OP_MMA && w->ix->info[id].layout &&
        wv_get(w->g, n->ops[2])->op != WAVEC_OP_MMA)
      regs += lw_chain_regs(w, id);
  }
  return regs;
}

bool lw_regs_fit_two(const lw *w) {
  return lw_chains_regs(w) + 32 <= regs_at_launch(2, lw_block_threads(w), 255);
}

bool lw_alone(const lw *w, int64_t bytes) {
  int64_t wps = w->d->hw[WAVEC_HW_WORKGROUPS_PER_SM];
  return wps == 1 || (!wps && (bytes > SM_SMEM / 2 - CTA_RESERVED ||
                               !lw_regs_fit_two(w)));
}

/* NULL where one workgroup a multiprocessor is all that fits: the rings
 * take more than half its shared memory, or two workgroups' threads
 * could not hold the accumulators of every mma chain and 32 registers
 * more each (the one-pass backward at D = 64: 144 accumulators, 180
 * registers, 256 threads), workgroups_per_sm not set; else why the
 * compiler keeps the plain schedule. */
static const char *crowded(const lw *w) {
  if (w->d->hw[WAVEC_HW_WORKGROUPS_PER_SM])
    return "workgroups_per_sm is set";
  if (w->stage_bytes > SM_SMEM / 2 - CTA_RESERVED)
    return NULL;
  int64_t need = lw_chains_regs(w) + 32;
  if (lw_regs_fit_two(w))
    return "two workgroups a multiprocessor fit its rings and registers, "
           "and the schedule would leave room for one";
  /* (the one-pass backward at D = 128 with 64-key tiles: 256
   * accumulators; specialized, ptxas serializes its wgmmas and spills) */
  if (need > CONSUMER_REGS_MAX)
    return "its accumulators need more registers than specialized "
           "consumers get";
  return NULL;
}

/* The one remark of a choice the compiler declined. */
static void remark_declined(lw *w, int hw, const char *what, const char *why) {
  wv_buf b;
  wv_remark_start(w->k, where(w, hw), &b);
  wv_buf_printf(&b, "%s: not chosen: %s", what, why);
  wv_remark_end(w->k, &b);
}

/* The most accumulator registers a thread of one mma holds (*at: that
 * mma, where not NULL). */
static int64_t widest_acc(lw *w, const wv_node **at) {
  int64_t acc = 0;
  for (uint32_t id = 1; id < w->g->nodes.n; id++) {
    const wv_node *n = wv_get(w->g, id);
    if (n->op == WAVEC_OP_MMA && w->ix->info[n->ops[2]].layout &&
        w->ix->info[n->ops[2]].layout->nelem > acc) {
      acc = w->ix->info[n->ops[2]].layout->nelem;
      if (at)
        *at = n;
    }
  }
  return acc;
}

/* Without warp specialization the launch's thread count (and
 * workgroups_per_sm) caps each thread's registers at floor8(min(255,
 * 65536 / (workgroups_per_sm x threads))), which ptxas must fit every
 * instruction in (C7602 otherwise): a warpgroup mma's accumulators and
 * some 26 more; and a multiprocessor runs 2048 threads at most. Either
 * refused here, at the mma, with what to change. */
static void fits_multiprocessor(lw *w) {
  const wv_dist *d = w->d;
  int64_t threads = lw_block_threads(w);
  int64_t wps = wgs_per_sm(d);
  if (wps * threads > 2048)
    wv_fail(w->ctx, D_SCHEDULE, where(w, WAVEC_HW_WORKGROUPS_PER_SM),
            "workgroups_per_sm = %lld with %lld threads each is %lld threads, "
            "more than the 2048 a multiprocessor runs",
            (long long)wps, (long long)threads, (long long)(wps * threads));
  if (!w->wgmma || w->sched.specialize)
    return;
  const wv_node *mma = NULL;
  int64_t acc = widest_acc(w, &mma);
  int64_t cap = regs_at_launch(wps, threads, 255);
  if (mma && cap < acc + 32)
    wv_fail(w->ctx, D_REGISTERS, mma->loc,
            "%lld threads at %lld workgroup%s per multiprocessor leave %lld "
            "registers per thread, fewer than this wgmma's %lld accumulators "
            "and 32 more need (ptxas could not allocate it): fewer waves, "
            "narrower tiles along the wgmma's N, or fewer workgroups per "
            "multiprocessor",
            (long long)threads, (long long)wps, wps == 1 ? "" : "s",
            (long long)cap, (long long)acc);
}

/* Warp specialization: true where it applies (then in *s); where it does
 * not, an error if it was asked for, else false and the reason in *why. */
static bool specialize(lw *w, sched_plan *s, wv_buf *why) {
  const wv_dist *d = w->d;
  wavec_loc at = where(w, WAVEC_HW_SPECIALIZE);
  uint32_t tma = 0;
  for (uint32_t i = 0; i < w->rings.n; i++)
    tma += ring_is_tma(w, i);
  if (!tma || tma != w->rings.n) {
    /* a tile a wgmma cannot have staged is often why no ring is filled by
     * tensor copies: asked for, that error (lowering's) comes first */
    if (asked(w, WAVEC_HW_SPECIALIZE))
      lw_wgmma_staged(w);
    const char *no = !w->wgmma ? "its mma is not a warpgroup one (wgmma)"
                     : w->stages < 2 ? "it has no ring (stages = 1)"
                     : !w->rings.n   ? "no loop streams staged tiles"
                                     : w->rings.v[0].why_not;
    for (uint32_t i = 0; i < w->rings.n && tma; i++)
      if (!ring_is_tma(w, i))
        no = w->rings.v[i].why_not;
    return refuse(w, WAVEC_HW_SPECIALIZE, at, why,
                  "warp specialization needs every loop that streams tiles "
                  "to fill its ring by tensor copies, and %s (not tensor "
                  "copies: %s)",
                  tma ? "one does not" : "none does", no ? no : "?");
  }
  int64_t threads = lw_block_threads(w);
  if (d->lanes != 128 || d->block[1] != 1 || d->block[2] != 1)
    return refuse(w, WAVEC_HW_SPECIALIZE, at, why,
            "the kernel's waves must be warpgroups "
            "(threads_per_wave = 128) along one axis; they are %d-lane waves "
            "in a block of [%lld, %lld, %lld]",
            d->lanes, (long long)d->block[0], (long long)d->block[1],
            (long long)d->block[2]);
  if (threads + 128 > 1024)
    return refuse(w, WAVEC_HW_SPECIALIZE, at, why,
            "%lld threads and a producer "
            "warpgroup are more than the 1024 a workgroup may have",
            (long long)threads);
  int64_t wps = wgs_per_sm(d);
  int64_t all = threads + 128;
  int64_t entry = regs_at_launch(wps, all, 248);
  int64_t cons = floor8((entry * all - 128 * PRODUCER_REGS) / threads);
  cons = cons > CONSUMER_REGS_MAX ? CONSUMER_REGS_MAX : cons;
  cons = cons < entry ? entry : cons; /* (then they keep what they have) */
  /* ptxas fits every instruction in the count at entry (C7602): a
   * wgmma's accumulators and some 26 more registers */
  int64_t acc = widest_acc(w, NULL);
  if (entry < PRODUCER_REGS || entry < acc + 32)
    return refuse(w, WAVEC_HW_SPECIALIZE, at, why,
            "%lld threads at %lld workgroup%s per "
            "multiprocessor leave %lld registers per thread at entry, fewer "
            "than a wgmma's %lld accumulators and 32 more need (fewer "
            "workgroups per multiprocessor, or narrower wgmmas)",
            (long long)all, (long long)wps, wps == 1 ? "" : "s",
            (long long)entry, (long long)acc);
  s->specialize = true;
  s->consumers = threads / 128;
  s->entry_regs = entry;
  s->producer_regs = PRODUCER_REGS;
  s->consumer_regs = cons;
  wv_buf b;
  wv_remark_start(w->k, at, &b);
  wv_buf_printf(&b, "warp specialization: warpgroup %lld (threads %lld to "
                    "%lld) only issues the tensor copies, from its first "
                    "thread, each after the slot's release; warpgroup%s 0",
                (long long)s->consumers, (long long)threads,
                (long long)all - 1, s->consumers > 1 ? "s" : "");
  if (s->consumers > 1)
    wv_buf_printf(&b, " to %lld", (long long)s->consumers - 1);
  wv_buf_printf(&b, " wait for full stages, issue the wgmmas, release the "
                    "stages and write the results; registers per thread: "
                    "%lld at entry (%lld workgroup%s a multiprocessor), the "
                    "producer gives back down to %lld, the consumers %s "
                    "%lld (setmaxnreg)",
                (long long)entry, (long long)wps, wps == 1 ? "" : "s",
                (long long)PRODUCER_REGS, cons > entry ? "take" : "keep",
                (long long)cons);
  if (!asked(w, WAVEC_HW_SPECIALIZE))
    wv_buf_puts(&b, "; the compiler's choice: its rings leave room for one "
                    "workgroup a multiprocessor, so the producer costs no "
                    "occupancy (hardware(specialize = 0) turns it off)");
  wv_remark_end(w->k, &b);
  return true;
}

/* Do neighbouring tiles share an input along every grid axis of more than
 * one tile? (What the grouped order of persistent tiles keeps in L2.) */
static bool tiles_share(lw *w, wv_buf *why) {
  const wv_dist *d = w->d;
  for (int a = 0; a < 3; a++) {
    if (!d->grid_dim[a] || (d->grid[a] >= 0 && d->grid[a] <= 1))
      continue;
    bool shared = false;
    for (uint32_t id = 1; id < w->g->nodes.n && !shared; id++) {
      const wv_node *n = wv_get(w->g, id);
      if (n->op != WAVEC_OP_READ)
        continue;
      const wv_type *t = &wv_get(w->g, n->mem)->type;
      bool has = false;
      for (uint32_t i = 0; i < t->n; i++)
        has |= t->dims[i] == d->grid_dim[a];
      shared = !has;
    }
    if (!shared) {
      wv_buf_printf(why, "every input varies along grid axis %d (%s): "
                         "neighbouring tiles there share no operand for the "
                         "grouped order to keep in L2",
                    a, wavec_symbol_name(w->ctx, d->grid_dim[a]));
      return false;
    }
  }
  return true;
}

/* Persistent tiles: true where they apply (then in *s); where they do
 * not, an error if they were asked for, else false and the reason in
 * *why. */
static bool persistent(lw *w, sched_plan *s, wv_buf *why) {
  wavec_ctx *ctx = w->ctx;
  const wv_dist *d = w->d;
  wavec_loc at = where(w, WAVEC_HW_PERSISTENT);
  uint32_t tma = 0;
  for (uint32_t i = 0; i < w->rings.n; i++)
    tma += ring_is_tma(w, i);
  if (tma > 1)
    return refuse(w, WAVEC_HW_PERSISTENT, at, why,
                  "%u loops fill rings by tensor copies; persistent tiles "
                  "carry the phases of one", tma);
  int64_t sms = d->hw[WAVEC_HW_SMS] ? d->hw[WAVEC_HW_SMS] : 132;
  int64_t wps = wgs_per_sm(d);
  /* the tiles known now (a dynamic axis' at launch: tir_instance) */
  bool dynamic = false;
  int64_t tiles[3], grid[3];
  for (int a = 0; a < 3; a++) {
    dynamic |= d->grid[a] < 0;
    tiles[a] = d->grid[a] < 0 ? 1 : d->grid[a];
  }
  const char *bad = tir_launch_grid(ctx, tiles, sms * wps, grid);
  if (bad)
    return refuse(w, WAVEC_HW_PERSISTENT, at, why, "%s", bad);
  if (!asked(w, WAVEC_HW_PERSISTENT) && !tiles_share(w, why))
    return false;
  s->persistent = true;
  s->ctas = sms * wps;
  s->group_m = d->hw[WAVEC_HW_GROUP_M] ? d->hw[WAVEC_HW_GROUP_M] : 8;
  if (tma) {
    /* the ring's fills before the tile: a symbol like a loop counter */
    s->ring = wavec_symbol(ctx, "$RING");
    uint32_t n = ctx->sym_names.n;
    if (n > w->nranges) {
      ex_range *r = wv_alloc(ctx, n * sizeof *r);
      memcpy(r, w->ranges, w->nranges * sizeof *r);
      w->ranges = r;
      w->nranges = n;
    }
    w->ranges[s->ring] = (ex_range){0, INT32_MAX / 2, true};
  }
  wv_buf b;
  wv_remark_start(w->k, where(w, WAVEC_HW_PERSISTENT), &b);
  if (dynamic)
    wv_buf_printf(&b, "persistent tiles: a grid of min(tiles, %lld) "
                      "workgroups (the tiles known at launch)",
                  (long long)s->ctas);
  else
    wv_buf_printf(&b, "persistent tiles: %lld workgroup tiles [%lld, %lld, "
                      "%lld] on a grid of %lld workgroups",
                  (long long)(tiles[0] * tiles[1] * tiles[2]),
                  (long long)d->grid[0], (long long)d->grid[1],
                  (long long)d->grid[2], (long long)grid[0]);
  wv_buf_printf(&b, " (at most %lld: %lld multiprocessors x %lld workgroup%s "
                    "each), each looping over tiles its id + i x the grid, in "
                    "groups of %lld rows of tiles along grid axis 0 swept "
                    "column by column%s",
                (long long)s->ctas, (long long)sms, (long long)wps,
                wps == 1 ? "" : "s", (long long)s->group_m,
                tma ? "; the mbarrier ring's slots and phases run on from "
                      "tile to tile"
                    : "");
  if (!asked(w, WAVEC_HW_PERSISTENT))
    wv_buf_puts(&b, "; the compiler's choice: one workgroup a multiprocessor "
                    "fills the machine, and neighbouring tiles share inputs "
                    "(hardware(persistent = 0) turns it off)");
  wv_remark_end(w->k, &b);
  return true;
}

/* Longest walks first (hardware(longest_first), the compiler's choice
 * unless 0): where a bounded iterate's walk grows with the workgroup id
 * along grid axis a (`iterate(D <= E)`, E split along a: a causal
 * forward's keys), the workgroups of axis a take its tiles in reverse, so
 * that the longest walks are dispatched first and the short ones fill the
 * last wave instead of a long one running alone at the end. An axis
 * where another bounded walk shrinks with the id (D >= E) keeps its
 * order. Nothing but the map from the hardware's block id to the tile
 * changes ($WG reads tile n - 1 - id; lower_expr.c, lower_sched.c): a
 * workgroup's own outputs are the same bits, adds into a shared one come
 * in another order. */
static void longest_first(lw *w, sched_plan *s) {
  wavec_loc at;
  int64_t knob = lw_knob(w->k, WAVEC_HW_LONGEST_FIRST, &at);
  if (knob == 0)
    return;
  const wv_dist *d = w->d;
  int grows[3] = {0}, shrinks[3] = {0};
  uint32_t first[3] = {0};
  for (uint32_t id = 1; id < w->g->nodes.n; id++) {
    const wv_node *n = wv_get(w->g, id);
    if (n->op != WAVEC_OP_ITERATE || !n->rel)
      continue;
    int a = d->dim[n->rel_dim].wg_axis;
    if (a < 0 || (d->grid[a] >= 0 && d->grid[a] <= 1))
      continue;
    bool up = n->rel == WAVEC_REL_LE || n->rel == WAVEC_REL_LT;
    (up ? grows : shrinks)[a]++;
    if (up && !first[a])
      first[a] = id;
  }
  bool any = false;
  for (int a = 0; a < 3; a++) {
    if (!grows[a] || shrinks[a])
      continue;
    s->reverse[a] = any = true;
    const wv_node *n = wv_get(w->g, first[a]);
    wv_buf b;
    wv_remark_start(w->k, n->loc, &b);
    wv_buf_printf(&b, "longest walks first: the walk of the iterate over "
                      "'%s' grows with the workgroup's tile along grid axis "
                      "%d ('%s'), so its workgroups take those tiles in "
                      "reverse (block i runs tile n - 1 - i): the longest "
                      "walks start first and the short ones fill the last "
                      "wave",
                  wavec_symbol_name(w->ctx, n->sym), a,
                  wavec_symbol_name(w->ctx, d->grid_dim[a]));
    if (knob < 0)
      wv_buf_puts(&b, " (the compiler's choice; hardware(longest_first = 0) "
                      "turns it off)");
    wv_remark_end(w->k, &b);
  }
  if (!any && knob == 1)
    wv_fail(w->ctx, D_SCHEDULE, at,
            "%s: no bounded iterate's walk grows "
            "with the workgroup's tile along a grid axis of more than one "
            "tile (an iterate(D <= E) or (D < E) with E split over "
            "workgroups), unless another walk along that axis shrinks",
            lw_knob_text(w->k, WAVEC_HW_LONGEST_FIRST, 1));
}

/* Clusters (hardware(cluster = C)): C workgroups consecutive along grid
 * axis 0 form a cluster; every tile of a tensor-copy ring whose
 * coordinates do not depend on axis 0's workgroup id (and which is why
 * the cluster pays: a GEMM's b along M) is multicast, each workgroup
 * copying 1/C of its rows into every workgroup's slot, and the empty
 * barriers of its ring take the releases of all the cluster's waves
 * (lower_tma.c). It applies where axis 0 has a known multiple of C tiles
 * (a cluster's workgroups all exist), every ring's walk is the same for
 * the cluster's workgroups (they fill their slots in step), some tile
 * multicasts (1/C of its rows in groups of 8), and with persistent tiles
 * the grouped order keeps a cluster's tiles in one column (group_m a
 * multiple of C; the grid a multiple of C). Given and impossible: E0408. */
static void clusters(lw *w, sched_plan *s) {
  wavec_ctx *ctx = w->ctx;
  const wv_dist *d = w->d;
  wavec_loc at;
  int64_t C = lw_knob(w->k, WAVEC_HW_CLUSTER, &at);
  if (C <= 1)
    return;
  wv_buf wb;
  wv_buf_init(&wb, ctx);
  const char *why = NULL;
  if (C & (C - 1))
    why = "a cluster is 2, 4 or 8 workgroups";
  else if (!w->tmaps.n)
    why = "no loop fills its ring by tensor copies (what a cluster "
          "multicasts)";
  else if (d->grid[0] < 0)
    why = "grid axis 0 has a run-time number of tiles; a cluster needs a "
          "known multiple of its size";
  else if (d->grid[0] % C) {
    wv_buf_printf(&wb, "grid axis 0 (%s%s%s) has %lld tiles, not a multiple "
                       "of the cluster",
                  d->grid_dim[0] ? "'" : "",
                  d->grid_dim[0] ? wavec_symbol_name(ctx, d->grid_dim[0])
                                 : "no dim",
                  d->grid_dim[0] ? "'" : "", (long long)d->grid[0]);
    why = wv_buf_str(&wb);
  }
  else if (s->persistent && d->hw[WAVEC_HW_GROUP_M] &&
           d->hw[WAVEC_HW_GROUP_M] % C)
    why = "group_m is not a multiple of the cluster: the grouped order would "
          "put a cluster's tiles in different columns";
  for (uint32_t i = 0; i < w->rings.n && !why; i++) {
    /* (a bounded walk, iterate(D REL E), moves with E's workgroup tile) */
    const wv_node *it = wv_get(w->g, w->rings.v[i].loop);
    if (it->rel && d->dim[it->rel_dim].wg_axis == 0) {
      wv_buf_printf(&wb, "the walk of the iterate over '%s' depends on grid "
                         "axis 0's tile: the cluster's workgroups would fill "
                         "their rings out of step",
                    wavec_symbol_name(ctx, it->sym));
      why = wv_buf_str(&wb);
    }
  }
  int64_t shared = 0, all = 0;
  for (uint32_t i = 0; i < w->stages_all.n && !why; i++) {
    stage *st = w->stages_all.v[i];
    if (!st->tmap)
      continue;
    uint32_t nd = wv_get(w->g, st->mem)->type.n;
    bool same = true;
    for (uint32_t j = 0; j < nd; j++)
      same &= !ex_uses(ctx, st->start[j], d->WG[0]);
    all += st->bytes;
    /* each workgroup's part of a panel starts on 1024 bytes */
    int64_t rows = st->ext[nd - 2];
    if (!same || rows % (SWZ_ALIGN / st->swz * C))
      continue;
    st->mcast = true;
    shared += st->bytes;
  }
  if (!why && !shared)
    why = "no tile a ring streams by tensor copies is the same for the "
          "cluster's workgroups (each depends on grid axis 0's tile, or has "
          "too few rows to split in 1024-byte groups among them)";
  if (why)
    wv_fail(ctx, D_SCHEDULE, at, "%s: %s",
            lw_knob_text(w->k, WAVEC_HW_CLUSTER, (long long)C), why);
  s->cluster = C;
  if (s->persistent) {
    s->ctas = s->ctas / C * C;
    if (!d->hw[WAVEC_HW_GROUP_M] && s->group_m % C)
      s->group_m = C;
  }
  /* each multicast tile's tensor map brings 1/C of its rows; its set's
   * empty barriers count every workgroup's releases */
  for (uint32_t i = 0; i < w->stages_all.n; i++) {
    stage *st = w->stages_all.v[i];
    if (!st->mcast)
      continue;
    tir_tmap *m = &w->tmaps.v[st->tmap - 1];
    m->box[m->rank - 2] = lw_box_rows(st->swz, st->ext[m->rank - 2] / C);
    for (uint32_t j = 0; j < w->stages_all.n; j++)
      if (w->stages_all.v[j]->tmap && w->stages_all.v[j]->fbar == st->fbar)
        w->stages_all.v[j]->cset = true;
  }
  wv_buf b;
  wv_remark_start(w->k, at, &b);
  wv_buf_printf(&b, "clusters of %lld workgroups along grid axis 0 ('%s'): ",
                (long long)C, wavec_symbol_name(ctx, d->grid_dim[0]));
  const char *sep = "";
  for (uint32_t i = 0; i < w->stages_all.n; i++)
    if (w->stages_all.v[i]->mcast) {
      wv_buf_printf(&b, "%s'%s'", sep,
                    wv_get(w->g, w->stages_all.v[i]->mem)->name);
      sep = ", ";
    }
  wv_buf_printf(&b, " multicast (each workgroup copies 1/%lld of the tile to "
                    "all), %lld of the %lld bytes a stage streams, so L2 "
                    "serves %lld%% of them once a cluster instead of once a "
                    "workgroup; the stages are released to every workgroup's "
                    "producer",
                (long long)C, (long long)shared, (long long)all,
                (long long)(100 * shared / all));
  wv_remark_end(w->k, &b);
}

/* Each schedule where asked for; where not given, the compiler's choice
 * for kernels whose rings are tensor copies (see the top). */
wavec_status wv_pass_schedule(wv_kernel *k) {
  lw *w = k->lw;
  static const struct {
    int hw;
    const char *what;
    bool (*apply)(lw *, sched_plan *, wv_buf *);
  } rows[] = {{WAVEC_HW_SPECIALIZE, "warp specialization", specialize},
              {WAVEC_HW_PERSISTENT, "persistent tiles", persistent}};
  bool candidate = w->wgmma && w->tmaps.n;
  const char *full = crowded(w);
  for (size_t i = 0; i < WV_ARRAY_LEN(rows); i++) {
    int hw = rows[i].hw;
    if (asked(w, hw) ? !w->d->hw[hw] : !candidate)
      continue;
    wv_buf why;
    wv_buf_init(&why, w->ctx);
    if (!asked(w, hw) && full)
      remark_declined(w, hw, rows[i].what, full);
    else if (!rows[i].apply(w, &w->sched, &why))
      remark_declined(w, hw, rows[i].what, wv_buf_str(&why));
  }
  longest_first(w, &w->sched);
  clusters(w, &w->sched);
  fits_multiprocessor(w);
  return WAVEC_OK;
}

void wv_print_schedule(wv_kernel *k, wv_buf *b) {
  const sched_plan *s = &k->lw->sched;
  wv_buf_puts(b, "schedule:\n");
  if (s->specialize)
    wv_buf_printf(b, "  roles: warpgroups 0..%lld consume, warpgroup %lld "
                     "produces; registers per thread %lld at entry, "
                     "producer %lld, consumers %lld\n",
                  (long long)s->consumers - 1, (long long)s->consumers,
                  (long long)s->entry_regs, (long long)s->producer_regs,
                  (long long)s->consumer_regs);
  else
    wv_buf_puts(b, "  roles: every wave does everything\n");
  if (s->persistent)
    wv_buf_printf(b, "  tiles: persistent, at most %lld workgroups, groups of "
                     "%lld rows of tiles%s\n",
                  (long long)s->ctas, (long long)s->group_m,
                  s->ring ? ", ring phases carried across tiles" : "");
  else
    wv_buf_puts(b, "  tiles: one a workgroup\n");
  for (int a = 0; a < 3; a++)
    if (s->reverse[a])
      wv_buf_printf(b, "  order: grid axis %d in reverse (longest walks "
                       "first)\n", a);
  if (s->cluster > 1)
    wv_buf_printf(b, "  clusters: %lld workgroups along grid axis 0\n",
                  (long long)s->cluster);
}

/* What schedule promises: register counts the ISA takes (multiples of 8,
 * 24 to 256) that the pool covers, a producer warpgroup that fits; a
 * persistent grid of at least one workgroup and groups of at least one
 * row. */
wavec_status wv_verify_schedule(wv_kernel *k) {
  const sched_plan *s = &k->lw->sched;
  const wv_dist *d = k->lw->d;
  bool bad = false;
  if (s->specialize) {
    int64_t threads = s->consumers * 128;
    bad |= threads != d->block[0] * d->block[1] * d->block[2] ||
           threads + 128 > 1024;
    const int64_t regs[3] = {s->entry_regs, s->producer_regs,
                             s->consumer_regs};
    for (int i = 0; i < 3; i++)
      bad |= regs[i] % 8 || regs[i] < 24 || regs[i] > 256;
    bad |= 128 * s->producer_regs + threads * s->consumer_regs >
           s->entry_regs * (threads + 128);
    bad |= s->entry_regs * (threads + 128) > POOL;
  }
  if (s->persistent)
    bad |= s->ctas < 1 || s->group_m < 1;
  if (s->cluster > 1) /* (a cluster's tiles in one column, in step) */
    bad |= k->lw->d->grid[0] % s->cluster ||
           (s->persistent && (s->ctas % s->cluster || s->group_m % s->cluster));
  if (bad)
    wv_fail(k->ctx, D_INTERNAL, k->loc, "schedule: breaks its contract");
  return WAVEC_OK;
}
