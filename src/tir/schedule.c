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
 * Each says what it chose in one remark. Neither is on unless asked for:
 * their speed has not been measured against the plain schedule yet. */
#include "tir/lower.h"

enum { PRODUCER_REGS = 40, CONSUMER_REGS_MAX = 240, POOL = 65536 };

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

/* Warp specialization, or an error saying why it cannot apply. */
static void specialize(lw *w, sched_plan *s) {
  wavec_ctx *ctx = w->ctx;
  const wv_dist *d = w->d;
  wavec_loc at = where(w, WAVEC_HW_SPECIALIZE);
  uint32_t tma = 0;
  for (uint32_t i = 0; i < w->rings.n; i++)
    tma += ring_is_tma(w, i);
  if (!tma || tma != w->rings.n) {
    const char *why = !w->wgmma ? "its mma is not a warpgroup one (wgmma)"
                      : w->stages < 2 ? "it has no ring (stages = 1)"
                      : !w->rings.n   ? "no loop streams staged tiles"
                                      : w->rings.v[0].why_not;
    for (uint32_t i = 0; i < w->rings.n && tma; i++)
      if (!ring_is_tma(w, i))
        why = w->rings.v[i].why_not;
    wv_fail(ctx, D_SCHEDULE, at,
            "hardware(specialize = 1): warp specialization needs every loop "
            "that streams tiles to fill its ring by tensor copies, and %s "
            "(not tensor copies: %s)",
            tma ? "one does not" : "none does", why ? why : "?");
  }
  int64_t threads = d->block[0] * d->block[1] * d->block[2];
  if (d->lanes != 128 || d->block[1] != 1 || d->block[2] != 1)
    wv_fail(ctx, D_SCHEDULE, at,
            "hardware(specialize = 1): the kernel's waves must be warpgroups "
            "(threads_per_wave = 128) along one axis; they are %d-lane waves "
            "in a block of [%lld, %lld, %lld]",
            d->lanes, (long long)d->block[0], (long long)d->block[1],
            (long long)d->block[2]);
  if (threads + 128 > 1024)
    wv_fail(ctx, D_SCHEDULE, at,
            "hardware(specialize = 1): %lld threads and a producer "
            "warpgroup are more than the 1024 a workgroup may have",
            (long long)threads);
  int64_t wps = d->hw[WAVEC_HW_WORKGROUPS_PER_SM] ? d->hw[WAVEC_HW_WORKGROUPS_PER_SM]
                                                  : 1;
  int64_t all = threads + 128;
  int64_t entry = floor8(POOL / (wps * all));
  entry = entry > 248 ? 248 : entry;
  int64_t cons = floor8((entry * all - 128 * PRODUCER_REGS) / threads);
  cons = cons > CONSUMER_REGS_MAX ? CONSUMER_REGS_MAX : cons;
  cons = cons < entry ? entry : cons; /* (then they keep what they have) */
  /* ptxas fits every instruction in the count at entry (C7602): a
   * wgmma's accumulators and some 26 more registers */
  int64_t acc = 0;
  for (uint32_t id = 1; id < w->g->nodes.n; id++) {
    const wv_node *n = wv_get(w->g, id);
    if (n->op == WAVEC_OP_MMA && w->ix->info[n->ops[2]].layout &&
        w->ix->info[n->ops[2]].layout->nelem > acc)
      acc = w->ix->info[n->ops[2]].layout->nelem;
  }
  if (entry < PRODUCER_REGS || entry < acc + 32)
    wv_fail(ctx, D_SCHEDULE, at,
            "hardware(specialize = 1): %lld threads at %lld workgroup%s per "
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
  wv_remark_end(w->k, &b);
}

/* Persistent tiles, or an error saying why they cannot apply. */
static void persistent(lw *w, sched_plan *s) {
  wavec_ctx *ctx = w->ctx;
  const wv_dist *d = w->d;
  uint32_t tma = 0;
  for (uint32_t i = 0; i < w->rings.n; i++)
    tma += ring_is_tma(w, i);
  if (tma > 1)
    wv_fail(ctx, D_SCHEDULE, where(w, WAVEC_HW_PERSISTENT),
            "hardware(persistent = 1): %u loops fill rings by tensor copies; "
            "persistent tiles carry the phases of one", tma);
  int64_t sms = d->hw[WAVEC_HW_SMS] ? d->hw[WAVEC_HW_SMS] : 132;
  int64_t wps = d->hw[WAVEC_HW_WORKGROUPS_PER_SM] ? d->hw[WAVEC_HW_WORKGROUPS_PER_SM]
                                                  : 1;
  s->persistent = true;
  s->ctas = sms * wps;
  s->group_m = d->hw[WAVEC_HW_GROUP_M] ? d->hw[WAVEC_HW_GROUP_M] : 8;
  /* the tiles known now (a dynamic axis' at launch: tir_instance) */
  bool dynamic = false;
  int64_t tiles[3], grid[3];
  for (int a = 0; a < 3; a++) {
    dynamic |= d->grid[a] < 0;
    tiles[a] = d->grid[a] < 0 ? 1 : d->grid[a];
  }
  const char *why = tir_launch_grid(ctx, tiles, s->ctas, grid);
  if (why)
    wv_fail(ctx, D_SCHEDULE, where(w, WAVEC_HW_PERSISTENT),
            "hardware(persistent = 1): %s", why);
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
  wv_remark_end(w->k, &b);
}

wavec_status wv_pass_schedule(wv_kernel *k) {
  lw *w = k->lw;
  if (w->d->hw[WAVEC_HW_SPECIALIZE])
    specialize(w, &w->sched);
  if (w->d->hw[WAVEC_HW_PERSISTENT])
    persistent(w, &w->sched);
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
  if (bad)
    wv_fail(k->ctx, D_INTERNAL, k->loc, "schedule: breaks its contract");
  return WAVEC_OK;
}
