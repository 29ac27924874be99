/* The simulator's mbarriers and tensor copies (tir.h): what T_MBINIT,
 * T_MBARRIVE, T_MBWAIT, T_TMA and T_FENCE do, and the checks that make
 * them safe to print for a GPU, each reported at the instruction's .wave
 * line:
 *  - a wait that can never complete (every wave waits: deadlock), and a
 *    phase whose transaction bytes do not match the copies that complete
 *    on it (announced more: it never completes; fewer: it completes with
 *    a copy still in flight);
 *  - a read of bytes a tensor copy writes before the phase it completes on
 *    was waited for, and a wait that skips a phase (a parity cannot tell
 *    phases two apart: the stage was refilled before this wave read it);
 *  - a tensor copy that refills bytes a consumer still reads: a wgmma in
 *    flight, or a read whose reader's next arrival the issuing thread has
 *    not waited for (happens-before through mbarriers, by vector clocks:
 *    a wave's clock ticks at each arrival; a phase carries the join of its
 *    arrivals' clocks to whoever waits for it; a workgroup barrier joins
 *    everyone's);
 *  - mbarriers used before their initialisation is fenced and published by
 *    a workgroup barrier, arriving more often than a phase expects, and
 *    ordinary accesses to their bytes.
 * Copies land lazily: when a wave waits for their phase and every arrival
 * is in, so that an early read finds them still in flight.
 *
 * Clusters (tir.h; sim.h's struct scluster): a workgroup's mbarriers and
 * copies are its own, but another workgroup of its cluster arrives at them
 * (TIR_ARRIVE_CLUSTER) and multicasts into its shared memory
 * (TIR_TMA_MULTICAST: the copy is claimed, checked and lands in each
 * workgroup as its own copy would). The clocks cover every wave of the
 * cluster, so that a copy refilling a peer's bytes must have waited for
 * its readers' releases; a cluster barrier joins them all. Checked
 * besides: a use by another workgroup before a cluster barrier that
 * follows the barrier's initialisation and fence; an arrival or a copy
 * into a workgroup that has ended, or one its waves never wait for (it
 * may come after the end: its shared memory is gone). With clusters,
 * copies land only when no wave of the cluster could move otherwise (the
 * latest a GPU may land them), so that a phase completing early on the
 * bytes of one workgroup's copy, before the other workgroup's, is seen.
 *
 * Tensor stores (T_TMAST) read their box of shared memory and write global
 * memory when issued (elements outside the tensor dropped), but hold the
 * shared bytes as read until a T_BULKWAITR or T_BULKWAIT of their thread
 * retires their group (T_BULKCOMMIT closes one): a write to them before
 * that, or by another thread before a barrier after it, is a race. They
 * read only bytes whose writer's wave ran a proxy fence (T_FENCEPX or
 * T_FENCE) after the write, with a barrier between the fence and the
 * store (or the storing thread's own fence); a thread that ends with
 * stores in flight (no T_BULKWAIT) is reported. */
#include "support/half.h"
#include "tir/sim.h"

typedef struct smbar {
  int64_t addr;                 /* shared byte, 8-aligned */
  int64_t count;                /* arrivals a phase */
  int64_t pending;              /* arrivals still missing in this phase */
  int64_t tx;                   /* transaction bytes still to land */
  int64_t announced;            /* bytes announced in this phase */
  uint32_t phase;               /* phases completed */
  uint32_t init_epoch;          /* epoch + 1 of the init */
  uint32_t fence_epoch;         /* epoch + 1 of its initialiser's fence */
  int32_t initer;               /* the thread that initialised it */
  const tir_instr *announce_in; /* the last arrive.expect_tx, and */
  uint32_t announce_w;          /* its thread */
  int announce_l;
  uint32_t *clock;              /* join of this phase's arrivals */
  uint32_t *done_clock;         /* join of the last completed phase's */
} smbar;

/* A tensor copy in flight; global memory is only read (tir.h: the kernel
 * does not write what it copies), so its box is read when it lands. */
typedef struct stma {
  const tir_instr *in;
  sim *by; /* the workgroup whose thread (wave, lane) issued it */
  uint32_t wave, bar;
  int lane;
  int64_t dst;
  int64_t coord[WV_MAX_DIMS];
} stma;

/* A tensor store in flight: its group, and whether it still reads its
 * shared bytes. */
typedef struct sbulk {
  const tir_instr *in;
  uint32_t wave, group;
  int lane;
  int64_t src;
  bool reading;
} sbulk;

struct sim_async {
  VEC(smbar) bars;
  VEC(stma) copies;  /* in flight, in issue order */
  VEC(sbulk) stores; /* in flight, in issue order */
  uint32_t *bgroups; /* per wave: groups of tensor stores closed so far */
  uint32_t *vc;      /* [wave][wave] vector clocks */
  uint32_t *seen;    /* [wave][bar]: phases of the barrier it observed */
  uint32_t nseen;    /* barriers seen has room for */
  uint32_t *rdclock; /* [granule][wave]: reader's clock at its last read */
  /* clusters: per wave of the cluster (numbered as the clocks), its latest
   * arrival here from another workgroup (in NULL: none) */
  struct sremote {
    const tir_instr *in;
    sim *by;
    uint32_t wave, clock; /* its thread's wave, and clock at the arrival */
    int lane;
    int64_t addr;
  } *remote;
};

/* [wave][wave of the cluster] vector clocks; wave w of workgroup s is
 * s->wbase + w in them */
#define VC(s, w) ((s)->as->vc + (size_t)(w) * (s)->nclk)
#define SEEN(a, w, b) ((a)->seen[(size_t)(w) * (a)->nseen + (b)])

void sim_async_new(sim *s) {
  const tir_prog *p = s->p;
  bool any = false, tma = false;
  for (uint32_t i = 0; i < p->code.n; i++) {
    tir_op op = p->code.v[i].op;
    any |= op == T_MBINIT || op == T_MBARRIVE || op == T_MBWAIT ||
           op == T_TMA || op == T_FENCE || op == T_TMAST ||
           op == T_BULKCOMMIT || op == T_BULKWAIT || op == T_BULKWAITR ||
           op == T_FENCEPX;
    tma |= op == T_TMA;
  }
  if (!any)
    return;
  struct sim_async *a = wv_alloc(s->ctx, sizeof *a);
  a->vc = wv_alloc(s->ctx, (size_t)s->nwaves * s->nclk * sizeof *a->vc);
  a->bgroups = wv_alloc(s->ctx, s->nwaves * sizeof *a->bgroups);
  if (tma)
    a->rdclock = wv_alloc(s->ctx, (size_t)(s->ngran ? s->ngran : 1) *
                                      s->nwaves * sizeof *a->rdclock);
  if (s->cl)
    a->remote = wv_alloc(s->ctx, s->nclk * sizeof *a->remote);
  s->as = a;
}

void sim_async_reset(sim *s) {
  struct sim_async *a = s->as;
  a->bars.n = 0;
  a->copies.n = 0;
  a->stores.n = 0;
  memset(a->bgroups, 0, s->nwaves * sizeof *a->bgroups);
  memset(a->vc, 0, (size_t)s->nwaves * s->nclk * sizeof *a->vc);
  for (uint32_t w = 0; w < s->nwaves; w++)
    VC(s, w)[s->wbase + w] = 1; /* a read before any arrival is after 0 */
  if (a->seen)
    memset(a->seen, 0, (size_t)s->nwaves * a->nseen * sizeof *a->seen);
  if (a->rdclock)
    memset(a->rdclock, 0, (size_t)s->ngran * s->nwaves * sizeof *a->rdclock);
  if (a->remote)
    memset(a->remote, 0, s->nclk * sizeof *a->remote);
}

static void join(const sim *s, uint32_t *into, const uint32_t *from) {
  for (uint32_t w = 0; w < s->nclk; w++)
    if (from[w] > into[w])
      into[w] = from[w];
}

/* Register r, the same in every lane of wave w. */
static int64_t uniform_reg(sim *s, const tir_instr *in, uint32_t w,
                           uint32_t r) {
  int64_t v = sim_rd(s, in, w, r, 0).i;
  for (int l = 1; l < s->lanes; l++)
    if (sim_rd(s, in, w, r, l).i != v)
      sim_report(s, in, w, l, D_INTERNAL, "an mbarrier wait's operand "
                 "differs between the lanes of a wave");
  return v;
}

static bool lane_on(sim *s, const tir_instr *in, uint32_t w, int l,
                    uint32_t pred) {
  return !pred || sim_rd(s, in, w, pred, l).i;
}

/* The barrier at shared byte addr, used by thread (w, l): it must have
 * been initialised, and by another thread only after that thread fenced
 * and a workgroup barrier followed (so must the async proxy: a copy
 * always needs the fence). */
static uint32_t bar_at(sim *s, const tir_instr *in, uint32_t w, int l,
                       int64_t addr, bool async) {
  struct sim_async *a = s->as;
  for (uint32_t b = 0; b < a->bars.n; b++) {
    smbar *m = &a->bars.v[b];
    if (m->addr != addr)
      continue;
    int32_t me = (int32_t)((int64_t)w * s->lanes + l);
    bool other = me != m->initer;
    if ((other || async) && !m->fence_epoch)
      sim_report(s, in, w, l, D_SIM_MBARRIER,
                 "mbarrier at shared byte %lld used %s before the thread "
                 "that initialised it fenced (fence.proxy.async)",
                 (long long)addr, async ? "by a tensor copy" : "by another thread");
    if (other && m->fence_epoch >= s->epoch + 1)
      sim_report(s, in, w, l, D_SIM_MBARRIER,
                 "mbarrier at shared byte %lld used by another thread with "
                 "no workgroup barrier after its initialisation",
                 (long long)addr);
    return b;
  }
  sim_report(s, in, w, l, D_SIM_MBARRIER,
             "no mbarrier was initialised at shared byte %lld",
             (long long)addr);
}

/* Workgroup t (in reports: " of workgroup (x, y, z)") where a thread of
 * workgroup s touches it; "" when it is s. */
static const char *of_wg(sim *s, const sim *t) {
  if (t == s)
    return "";
  wv_buf b;
  wv_buf_init(&b, s->ctx);
  wv_buf_printf(&b, " of workgroup (%lld, %lld, %lld)", (long long)t->wg[0],
                (long long)t->wg[1], (long long)t->wg[2]);
  return wv_buf_str(&b);
}

/* The barrier at shared byte addr of workgroup t, another of the cluster
 * of workgroup s, used by thread (w, l) of s: only after a cluster barrier
 * that follows its initialising thread's fence. */
static uint32_t bar_of(sim *t, sim *s, const tir_instr *in, uint32_t w, int l,
                       int64_t addr) {
  struct sim_async *a = t->as;
  uint32_t b = 0;
  while (b < a->bars.n && a->bars.v[b].addr != addr)
    b++;
  uint32_t fenced = b < a->bars.n ? a->bars.v[b].fence_epoch : 0;
  if (!fenced || t->cbar_ep < fenced)
    sim_report(s, in, w, l, D_SIM_MBARRIER,
               "the mbarrier at shared byte %lld%s is used by another "
               "workgroup of its cluster before a cluster barrier that "
               "follows its initialisation (%s)",
               (long long)addr, of_wg(s, t),
               b < a->bars.n ? "its initialising thread's fence, then "
                               "barrier.cluster"
                             : "none is initialised there yet");
  return b;
}

/* Where a mismatch of the transaction bytes of barrier m of workgroup s,
 * found at copy c, is reported: at the arrival that announced the bytes
 * (by its thread; by the copy's when the copy is s's own, as before
 * clusters), else at the copy. */
typedef struct sat {
  sim *s;
  const tir_instr *in;
  uint32_t w;
  int l;
} sat;

static sat tx_at(sim *s, const smbar *m, const stma *c) {
  if (!m->announce_in)
    return (sat){c->by, c->in, c->wave, c->lane};
  if (c->by == s)
    return (sat){s, m->announce_in, c->wave, c->lane};
  return (sat){s, m->announce_in, m->announce_w, m->announce_l};
}

static void complete_phase(sim *s, smbar *m, uint32_t bi) {
  struct sim_async *a = s->as;
  for (uint32_t i = 0; i < a->copies.n; i++)
    if (a->copies.v[i].bar == bi) {
      sat at = tx_at(s, m, &a->copies.v[i]);
      sim_report(at.s, at.in, at.w, at.l, D_SIM_MBARRIER,
                 "transaction bytes: a phase of the mbarrier at shared byte "
                 "%lld%s completed with a tensor copy still in flight (its "
                 "arrivals announced %lld bytes, fewer than its copies bring)",
                 (long long)m->addr, of_wg(at.s, s), (long long)m->announced);
    }
  m->phase++;
  m->pending = m->count;
  m->tx = 0;
  m->announced = 0;
  memcpy(m->done_clock, m->clock, s->nclk * sizeof *m->clock);
  memset(m->clock, 0, s->nclk * sizeof *m->clock);
}

static void init_bar(sim *s, const tir_instr *in, uint32_t w, int l,
                     int64_t addr) {
  struct sim_async *a = s->as;
  if (addr < 0 || addr + 8 > s->ngran || addr % 8)
    sim_report(s, in, w, l, D_SIM_OOB, "mbarrier at shared byte %lld: out "
               "of bounds or not 8-byte aligned", (long long)addr);
  for (uint32_t b = 0; b < a->bars.n; b++)
    if (a->bars.v[b].addr == addr)
      sim_report(s, in, w, l, D_SIM_MBARRIER, "mbarrier at shared byte "
                 "%lld initialised twice", (long long)addr);
  for (int64_t g = addr; g < addr + 8; g++) {
    sshared *m = &s->smem[g];
    if (m->rdepoch == s->epoch + 1 || m->wepoch == s->epoch + 1 ||
        m->inflight || m->tinflight || m->wgread)
      sim_report(s, in, w, l, D_SIM_MBARRIER, "mbarrier initialised at "
                 "shared byte %lld, which other accesses touch",
                 (long long)addr);
    m->tbar = -1;
    m->init = true;
  }
  smbar m = {.addr = addr, .count = in->imm, .pending = in->imm,
             .init_epoch = s->epoch + 1,
             .initer = (int32_t)((int64_t)w * s->lanes + l)};
  m.clock = wv_alloc(s->ctx, s->nclk * sizeof *m.clock);
  m.done_clock = wv_alloc(s->ctx, s->nclk * sizeof *m.done_clock);
  vec_push(s->ctx, &a->bars, m);
  if (a->bars.n > a->nseen) { /* room for the phases each wave saw */
    uint32_t n = a->nseen ? 2 * a->nseen : 8;
    uint32_t *seen = wv_alloc(s->ctx, (size_t)s->nwaves * n * sizeof *seen);
    for (uint32_t v = 0; v < s->nwaves; v++)
      for (uint32_t b = 0; b < a->nseen; b++)
        seen[(size_t)v * n + b] = SEEN(a, v, b);
    a->seen = seen;
    a->nseen = n;
  }
}

/* Thread (w, l) of workgroup s arrives at barrier bi of workgroup t (s
 * itself, or another of its cluster). */
static void arrive(sim *t, sim *s, const tir_instr *in, uint32_t w, int l,
                   uint32_t bi) {
  smbar *m = &t->as->bars.v[bi];
  if (m->pending == 0 && in->imm && m->tx > 0)
    sim_report(s, in, w, l, D_SIM_RACE,
               "tensor copies announced again on the mbarrier at shared "
               "byte %lld while the copies of its last fill are in flight: "
               "this refills a stage a consumer still reads (this thread did "
               "not wait for the stage's release)",
               (long long)m->addr);
  if (in->imm) {
    m->tx += in->imm;
    m->announced += in->imm;
    m->announce_in = in;
    m->announce_w = w;
    m->announce_l = l;
  }
  if (--m->pending < 0)
    sim_report(s, in, w, l, D_SIM_MBARRIER,
               "more arrivals at the mbarrier at shared byte %lld%s than a "
               "phase expects (%lld)",
               (long long)m->addr, of_wg(s, t), (long long)m->count);
  join(s, m->clock, VC(s, w));
  if (t != s) { /* (clocks only grow: the latest is the largest) */
    uint32_t x = s->wbase + w;
    t->as->remote[x] = (struct sremote){.in = in, .by = s, .wave = w,
                                        .clock = VC(s, w)[x], .lane = l,
                                        .addr = m->addr};
  }
  if (!m->pending && !m->tx)
    complete_phase(t, m, bi);
}

/* Thread (w, l) of workgroup s arrives at the barrier at shared byte addr
 * of every workgroup of its cluster (TIR_ARRIVE_CLUSTER), its own by its
 * own rules. */
static void arrive_cluster(sim *s, const tir_instr *in, uint32_t w, int l,
                           int64_t addr) {
  for (uint32_t r = 0; r < s->cl->n; r++) {
    sim *t = &s->cl->wg[r];
    if (t == s) {
      arrive(s, s, in, w, l, bar_at(s, in, w, l, addr, false));
      continue;
    }
    if (t->ended)
      sim_report(s, in, w, l, D_SIM_MBARRIER,
                 "arrives at the mbarrier at shared byte %lld%s, which has "
                 "ended: its shared memory is gone (no workgroup of a "
                 "cluster ends while another may still arrive at its "
                 "mbarriers)",
                 (long long)addr, of_wg(s, t));
    arrive(t, s, in, w, l, bar_of(t, s, in, w, l, addr));
  }
}

/* The shared byte element `e` (row-major in the box) of copy c lands at. */
static int64_t land_addr(const tir_tmap *t, int64_t dst, int64_t byte) {
  return t->swz ? tir_swz(dst + byte, t->swz) : dst + byte;
}

/* Copy c, issued by thread (c->wave, c->lane) of workgroup s, lands in
 * workgroup t (s itself, or with a multicast each of its cluster): the
 * checks of the bytes it writes there, which it claims until it lands. */
static void tma_claim(sim *t, sim *s, const stma *c, int64_t bytes) {
  const tir_instr *in = c->in;
  const tir_tmap *tm = &s->p->tmaps.v[in->imm];
  uint32_t w = c->wave;
  int l = c->lane;
  uint32_t *mine = VC(s, w) + t->wbase; /* its clocks of t's waves */
  for (int64_t b = 0; b < bytes; b++) {
    int64_t g = land_addr(tm, c->dst, b);
    sshared *m = &t->smem[g];
    long long at = (long long)g;
    if (m->tbar < 0)
      sim_report(s, in, w, l, D_SIM_MBARRIER, "tensor copy overwrites the "
                 "mbarrier at shared byte %lld%s", at, of_wg(s, t));
    if (m->wgread)
      sim_report(s, in, w, l, D_SIM_ASYNC,
                 "tensor copy refills shared byte %lld%s while a wgmma that "
                 "reads it is in flight (no wait retired it)", at,
                 of_wg(s, t));
    if (m->tinflight)
      sim_report(s, in, w, l, D_SIM_RACE,
                 "tensor copy refills shared byte %lld%s, a stage a consumer "
                 "still reads: the tile copied there before has not even "
                 "landed (this thread did not wait for the stage's release)",
                 at, of_wg(s, t));
    if (m->inflight)
      sim_report(s, in, w, l, D_SIM_RACE,
                 "tensor copy to shared byte %lld%s while an asynchronous "
                 "copy to it is in flight", at, of_wg(s, t));
    if (m->bsread)
      sim_report(s, in, w, l, D_SIM_RACE,
                 "tensor copy to shared byte %lld%s while a tensor store "
                 "still reads it (no cp.async.bulk.wait_group.read retired "
                 "it)", at, of_wg(s, t));
    uint32_t *rc = t->as->rdclock + (size_t)g * t->nwaves;
    for (uint32_t r = 0; r < t->nwaves; r++)
      if (rc[r] > mine[r])
        sim_report(s, in, w, l, D_SIM_RACE,
                   "tensor copy refills shared byte %lld%s, which wave %u "
                   "still reads: this thread has not waited for an mbarrier "
                   "phase that wave %u arrived at after its read",
                   at, of_wg(s, t), r, r);
    /* (another workgroup's writer is never this thread) */
    if (m->wepoch == t->epoch + 1 &&
        (t != s || m->writer != (int32_t)(w * s->lanes + l)))
      sim_report(s, in, w, l, D_SIM_RACE,
                 "tensor copy to shared byte %lld%s, which thread %d wrote "
                 "with no barrier between", at, of_wg(s, t), m->writer);
    memset(rc, 0, t->nwaves * sizeof *rc);
    m->tinflight++;
  }
  vec_push(s->ctx, &t->as->copies, *c);
}

/* Thread (w, l) of workgroup s issues tensor copy `in`: into its own
 * shared memory, or multicast into that of every workgroup of its cluster
 * (each lands and completes on that workgroup's barrier at b as its own
 * copy would). */
static void tma_issue(sim *s, const tir_instr *in, uint32_t w, int l) {
  const tir_tmap *t = &s->p->tmaps.v[in->imm];
  int64_t dst = sim_rd(s, in, w, in->a, l).i;
  int64_t bar = sim_rd(s, in, w, in->b, l).i;
  int64_t bytes = tir_tmap_bytes(s->p, t), align = t->swz ? 1024 : 128;
  bool multi = in->imm2 == TIR_TMA_MULTICAST;
  stma c = {.in = in, .by = s, .wave = w, .lane = l, .dst = dst};
  for (uint32_t r = 0; r < (multi ? s->cl->n : 1); r++) {
    sim *to = multi ? &s->cl->wg[r] : s;
    if (to->ended)
      sim_report(s, in, w, l, D_SIM_RACE,
                 "tensor copy multicast into workgroup (%lld, %lld, %lld) "
                 "of its cluster, which has ended: its shared memory is "
                 "gone (no workgroup of a cluster ends while another may "
                 "still copy into its shared memory)",
                 (long long)to->wg[0], (long long)to->wg[1],
                 (long long)to->wg[2]);
    c.bar = to == s ? bar_at(s, in, w, l, bar, true)
                    : bar_of(to, s, in, w, l, bar);
    if (r == 0) {
      if (dst < 0 || dst + bytes > s->ngran || dst % align)
        sim_report(s, in, w, l, D_SIM_OOB,
                   "tensor copy of %lld bytes to shared byte %lld: out of "
                   "bounds or not %lld-byte aligned",
                   (long long)bytes, (long long)dst, (long long)align);
      for (uint32_t d = 0; d < t->rank; d++)
        c.coord[d] = sim_rd(s, in, w, in->list[d], l).i;
    }
    tma_claim(to, s, &c, bytes);
  }
}

/* Copy i of workgroup s lands: its box, 0 outside the tensor, swizzled as
 * its map says; its bytes complete on its barrier. */
static void tma_land(sim *s, uint32_t i) {
  struct sim_async *a = s->as;
  stma c = a->copies.v[i];
  memmove(&a->copies.v[i], &a->copies.v[i + 1],
          (a->copies.n - i - 1) * sizeof c);
  a->copies.n--;
  const tir_tmap *t = &s->p->tmaps.v[c.in->imm];
  const tir_arg *ar = &s->p->args.v[t->arg];
  tir_ty ty = tir_ty_of(ar->dt);
  int64_t es = tir_ty_bytes(ty), n = tir_tmap_bytes(s->p, t) / es;
  smbar *m = &a->bars.v[c.bar];
  for (int64_t e = 0; e < n; e++) {
    int64_t rest = e, off = 0, stride = 1;
    bool in = true;
    for (int d = (int)t->rank - 1; d >= 0; d--) {
      int64_t x = c.coord[d] + rest % t->box[d];
      rest /= t->box[d];
      in &= x >= 0 && x < ar->shape[d];
      off += x * stride;
      stride *= ar->shape[d];
    }
    val v = {0};
    if (in) {
      if (s->ginit[t->arg] && !s->ginit[t->arg][off])
        sim_report(c.by, c.in, c.wave, c.lane, D_SIM_UNINIT,
                   "tensor copy reads '%s' element %lld, which nothing wrote",
                   ar->name, (long long)off);
      double x = wv_elem_load((int)ar->dt, s->args[t->arg], off);
      if (ty == TY_I32 || ty == TY_I8)
        v.i = (int64_t)x;
      else
        v.f = x;
    }
    uint8_t bits[4];
    sim_encode(ty, v, bits);
    for (int64_t h = 0; h < es; h++) {
      sshared *g = &s->smem[land_addr(t, c.dst, e * es + h)];
      g->tinflight--;
      g->bits = bits[h];
      g->init = true;
      g->wepoch = 0; /* written by the async proxy: ordered by the phase */
      g->writer = -1;
      g->tbar = (int16_t)(c.bar + 1);
      g->tphase = m->phase;
    }
  }
  m->tx -= n * es;
  if (m->tx < 0) { /* (every arrival of the phase is in: sim_async_wait) */
    sat at = tx_at(s, m, &c);
    sim_report(at.s, at.in, at.w, at.l, D_SIM_MBARRIER,
               "transaction bytes: the tensor copies completing on the "
               "mbarrier at shared byte %lld%s bring more bytes than its "
               "arrivals announced (%lld)",
               (long long)m->addr, of_wg(at.s, s), (long long)m->announced);
  }
  if (!m->pending && !m->tx)
    complete_phase(s, m, c.bar);
}

/* Shared byte g, which a tensor store of thread (w, l) reads: checked
 * (written, and by the generic proxy only with a proxy fence and a barrier
 * since), then held as read until a wait retires the store. */
static uint8_t store_read(sim *s, const tir_instr *in, uint32_t w, int l,
                          int64_t g) {
  sshared *m = &s->smem[g];
  int32_t me = (int32_t)((int64_t)w * s->lanes + l);
  long long at = (long long)g;
  if (m->tbar < 0)
    sim_report(s, in, w, l, D_SIM_MBARRIER, "tensor store reads the "
               "mbarrier at shared byte %lld", at);
  if (m->tinflight || m->inflight)
    sim_report(s, in, w, l, D_SIM_RACE, "tensor store reads shared byte "
               "%lld while a%s copy to it is in flight", at,
               m->tinflight ? " tensor" : "n asynchronous");
  if (!m->init)
    sim_report(s, in, w, l, D_SIM_UNINIT, "tensor store reads shared byte "
               "%lld, which nothing wrote", at);
  if (m->wepoch) { /* written by the generic proxy (a thread) */
    if (m->wepoch == s->epoch + 1 && m->writer != me)
      sim_report(s, in, w, l, D_SIM_RACE, "tensor store reads shared byte "
                 "%lld, which thread %d wrote with no barrier between", at,
                 m->writer);
    if (!sim_proxy_fenced(s, m, me))
      sim_report(s, in, w, l, D_SIM_RACE, "tensor store reads shared byte "
                 "%lld, which thread %d wrote with no proxy fence "
                 "(fence.proxy.async) after the write and a barrier after "
                 "the fence: the copy engine may not see the write", at,
                 m->writer);
  }
  m->bsread++;
  return m->bits;
}

/* Thread (w, l) issues tensor store `in`: its box, read from shared
 * memory now, lands in global memory, elements outside the tensor dropped. */
static void store_issue(sim *s, const tir_instr *in, uint32_t w, int l) {
  struct sim_async *a = s->as;
  const tir_tmap *t = &s->p->tmaps.v[in->imm];
  const tir_arg *ar = &s->p->args.v[t->arg];
  tir_ty ty = tir_ty_of(ar->dt);
  int64_t src = sim_rd(s, in, w, in->a, l).i;
  int64_t bytes = tir_tmap_bytes(s->p, t), align = t->swz ? 1024 : 128;
  int64_t es = tir_ty_bytes(ty), n = bytes / es;
  if (src < 0 || src + bytes > s->ngran || src % align)
    sim_report(s, in, w, l, D_SIM_OOB,
               "tensor store of %lld bytes from shared byte %lld: out of "
               "bounds or not %lld-byte aligned",
               (long long)bytes, (long long)src, (long long)align);
  int64_t coord[WV_MAX_DIMS];
  for (uint32_t d = 0; d < t->rank; d++)
    coord[d] = sim_rd(s, in, w, in->list[d], l).i;
  for (int64_t e = 0; e < n; e++) {
    int64_t rest = e, off = 0, stride = 1;
    bool inside = true;
    for (int d = (int)t->rank - 1; d >= 0; d--) {
      int64_t x = coord[d] + rest % t->box[d];
      rest /= t->box[d];
      inside &= x >= 0 && x < ar->shape[d];
      off += x * stride;
      stride *= ar->shape[d];
    }
    uint8_t bits[4] = {0, 0, 0, 0};
    for (int64_t h = 0; h < es; h++)
      bits[h] = store_read(s, in, w, l, land_addr(t, src, e * es + h));
    if (!inside)
      continue;
    val v = sim_decode(ty, bits);
    if (in->imm2 == TIR_TMAST_ADD) {
      sim_add_elem(s, in, w, l, t->arg, off, v.f);
      continue;
    }
    sim_store_elem(s, in, w, l, t->arg, off,
                   ty == TY_F32 || ty == TY_F16 || ty == TY_BF16 ||
                           ty == TY_E4M3 || ty == TY_E5M2
                       ? v.f
                       : (double)v.i);
  }
  sbulk b = {.in = in, .wave = w, .lane = l, .group = a->bgroups[w],
             .src = src, .reading = true};
  vec_push(s->ctx, &a->stores, b);
}

/* Wave w's wait: its tensor stores in groups older than the `keep` most
 * recently closed ones stop reading shared memory (a read by the issuing
 * thread now, for the race checks of later writes), and with `all` are
 * done. */
static void store_wait(sim *s, uint32_t w, int64_t keep, bool all) {
  struct sim_async *a = s->as;
  uint32_t kept = 0;
  for (uint32_t i = 0; i < a->stores.n; i++) {
    sbulk *b = &a->stores.v[i];
    bool old = b->wave == w && (int64_t)b->group + keep < (int64_t)a->bgroups[w];
    if (old && b->reading) {
      const tir_tmap *t = &s->p->tmaps.v[b->in->imm];
      for (int64_t j = 0; j < tir_tmap_bytes(s->p, t); j++) {
        sshared *m = &s->smem[land_addr(t, b->src, j)];
        m->bsread--;
        m->rdepoch = s->epoch + 1;
        m->reader = (int32_t)((int64_t)b->wave * s->lanes + b->lane);
        m->multi = false;
      }
      b->reading = false;
    }
    if (!(old && all))
      a->stores.v[kept++] = *b;
  }
  a->stores.n = kept;
}

void sim_async_exec(sim *s, const tir_instr *in, uint32_t w) {
  struct sim_async *a = s->as;
  switch (in->op) {
  case T_FENCE:
  case T_FENCEPX:
    s->pfences[w]++;
    break;
  case T_BULKCOMMIT: a->bgroups[w]++; return;
  case T_BULKWAIT:
  case T_BULKWAITR: store_wait(s, w, in->imm, in->op == T_BULKWAIT); return;
  case T_TMAST:
    for (int l = 0; l < s->lanes; l++)
      if (lane_on(s, in, w, l, in->c))
        store_issue(s, in, w, l);
    return;
  default: break;
  }
  if (in->op == T_FENCEPX)
    return;
  if (in->op == T_FENCE) {
    for (uint32_t b = 0; b < a->bars.n; b++)
      if (a->bars.v[b].initer / s->lanes == (int32_t)w &&
          !a->bars.v[b].fence_epoch)
        a->bars.v[b].fence_epoch = s->epoch + 1;
    return;
  }
  bool arrived = false;
  for (int l = 0; l < s->lanes; l++) {
    uint32_t pred = in->op == T_TMA ? in->c : in->b;
    if (!lane_on(s, in, w, l, pred))
      continue;
    int64_t addr = sim_rd(s, in, w, in->a, l).i;
    switch (in->op) {
    case T_MBINIT: init_bar(s, in, w, l, addr); break;
    case T_MBARRIVE:
      if (in->imm2 == TIR_ARRIVE_CLUSTER)
        arrive_cluster(s, in, w, l, addr);
      else
        arrive(s, s, in, w, l, bar_at(s, in, w, l, addr, false));
      arrived = true;
      break;
    default: tma_issue(s, in, w, l); break;
    }
  }
  if (arrived) /* reads after this arrival are not covered by it */
    VC(s, w)[s->wbase + w]++;
}

bool sim_async_wait(sim *s, const tir_instr *in, uint32_t w) {
  struct sim_async *a = s->as;
  if (in->c && !uniform_reg(s, in, w, in->c))
    return true;
  uint32_t bi = bar_at(s, in, w, 0, uniform_reg(s, in, w, in->a), false);
  int64_t parity = uniform_reg(s, in, w, in->b);
  if (parity != 0 && parity != 1)
    sim_report(s, in, w, 0, D_INTERNAL, "an mbarrier wait's parity is %lld",
               (long long)parity);
  smbar *m = &a->bars.v[bi];
  if ((int64_t)(m->phase & 1) == parity && !m->pending &&
      (!s->cl || s->cl->land)) {
    /* every arrival is in: the copies of the phase land now */
    for (uint32_t i = 0; i < a->copies.n && (m->phase & 1) == parity;)
      if (a->copies.v[i].bar == bi)
        tma_land(s, i);
      else
        i++;
  }
  if ((int64_t)(m->phase & 1) == parity)
    return false;
  /* the phase observed is the last one completed, m->phase - 1 */
  uint32_t *seen = &SEEN(a, w, bi);
  if (m->phase >= *seen + 2)
    sim_report(s, in, w, 0, D_SIM_RACE,
               "this wait observes phase %u of the mbarrier at shared byte "
               "%lld, but this wave never saw phase %u complete: its stage "
               "was refilled before this wave read it",
               m->phase - 1, (long long)m->addr, *seen);
  if (m->phase > *seen) {
    *seen = m->phase;
    join(s, VC(s, w), m->done_clock);
  }
  return true;
}

void sim_async_read(sim *s, const tir_instr *in, uint32_t w, int l,
                    int64_t g) {
  struct sim_async *a = s->as;
  sshared *m = &s->smem[g];
  if (m->tbar < 0)
    sim_report(s, in, w, l, D_SIM_MBARRIER, "ordinary read of shared byte "
               "%lld, which holds an mbarrier", (long long)g);
  if (m->tinflight)
    sim_report(s, in, w, l, D_SIM_RACE,
               "read of shared byte %lld while the tensor copy to it is in "
               "flight: the mbarrier phase it completes on was not waited for",
               (long long)g);
  if (m->tbar > 0 && SEEN(a, w, m->tbar - 1) <= m->tphase)
    sim_report(s, in, w, l, D_SIM_RACE,
               "read of shared byte %lld, which a tensor copy wrote, before "
               "this wave waited for phase %u of the mbarrier at shared byte "
               "%lld that it completes on",
               (long long)g, m->tphase,
               (long long)a->bars.v[m->tbar - 1].addr);
  if (a->rdclock)
    a->rdclock[(size_t)g * s->nwaves + w] = VC(s, w)[s->wbase + w];
}

void sim_async_retired(sim *s, uint32_t w, int64_t g) {
  struct sim_async *a = s->as;
  if (a->rdclock)
    a->rdclock[(size_t)g * s->nwaves + w] = VC(s, w)[s->wbase + w];
}

void sim_async_write(sim *s, const tir_instr *in, uint32_t w, int l,
                     int64_t g) {
  sshared *m = &s->smem[g];
  if (m->tbar < 0)
    sim_report(s, in, w, l, D_SIM_MBARRIER, "ordinary write to shared byte "
               "%lld, which holds an mbarrier", (long long)g);
  if (m->tinflight)
    sim_report(s, in, w, l, D_SIM_RACE,
               "shared-memory race: byte %lld written while a tensor copy to "
               "it is in flight", (long long)g);
  if (m->bsread)
    sim_report(s, in, w, l, D_SIM_RACE,
               "shared-memory race: byte %lld written while a tensor store "
               "still reads it (no cp.async.bulk.wait_group.read retired it)",
               (long long)g);
  m->tbar = 0;
}

void sim_async_barrier(sim *s, const bool *who) {
  struct sim_async *a = s->as;
  uint32_t *all = wv_alloc(s->ctx, s->nclk * sizeof *all);
  for (uint32_t w = 0; w < s->nwaves; w++)
    if (who[w])
      join(s, all, VC(s, w));
  for (uint32_t w = 0; w < s->nwaves; w++)
    if (who[w])
      memcpy(VC(s, w), all, s->nclk * sizeof *all);
  for (uint32_t b = 0; b < a->bars.n; b++) {
    uint32_t most = 0;
    for (uint32_t w = 0; w < s->nwaves; w++)
      if (who[w])
        most = SEEN(a, w, b) > most ? SEEN(a, w, b) : most;
    for (uint32_t w = 0; w < s->nwaves; w++)
      if (who[w])
        SEEN(a, w, b) = most;
  }
  /* what a wave does after the barrier (a read, an arrival) is not
   * covered by it: its clock ticks */
  for (uint32_t w = 0; w < s->nwaves; w++)
    if (who[w])
      VC(s, w)[s->wbase + w]++;
}

void sim_async_cluster_barrier(scluster *cl) {
  sim *s = &cl->wg[0];
  uint32_t *all = wv_alloc(s->ctx, s->nclk * sizeof *all);
  for (uint32_t r = 0; r < cl->n; r++)
    for (uint32_t w = 0; w < cl->wg[r].nwaves; w++)
      join(s, all, VC(&cl->wg[r], w));
  for (uint32_t r = 0; r < cl->n; r++)
    for (uint32_t w = 0; w < cl->wg[r].nwaves; w++) {
      memcpy(VC(&cl->wg[r], w), all, s->nclk * sizeof *all);
      VC(&cl->wg[r], w)[cl->wg[r].wbase + w]++; /* (as sim_async_barrier) */
    }
}

_Noreturn void sim_async_deadlock(sim *s) {
  struct sim_async *a = s->as;
  uint32_t w = 0;
  while (!s->waves[w].blocked)
    w++;
  const tir_instr *in = &s->p->code.v[s->waves[w].pc];
  uint32_t bi = bar_at(s, in, w, 0, sim_rd(s, in, w, in->a, 0).i, false);
  smbar *m = &a->bars.v[bi];
  bool copies = false;
  for (uint32_t i = 0; i < a->copies.n; i++)
    copies |= a->copies.v[i].bar == bi;
  if (!m->pending && !copies && m->tx > 0)
    sim_report(s, m->announce_in ? m->announce_in : in, w, 0, D_SIM_MBARRIER,
               "transaction bytes: a phase of the mbarrier at shared byte "
               "%lld waits for %lld bytes more than its tensor copies brought "
               "(announced %lld): it never completes",
               (long long)m->addr, (long long)m->tx, (long long)m->announced);
  sim_report(s, in, w, 0, D_SIM_DEADLOCK,
             "this wait can never complete: the mbarrier at shared byte %lld "
             "is in phase %u with %lld of %lld arrivals missing and %lld "
             "transaction bytes outstanding, and every wave is waiting",
             (long long)m->addr, m->phase, (long long)m->pending,
             (long long)m->count, (long long)m->tx);
}

void sim_async_end(sim *s) {
  struct sim_async *a = s->as;
  if (a->stores.n) {
    sbulk *b = &a->stores.v[0];
    sim_report(s, b->in, b->wave, b->lane, D_SIM_ASYNC,
               "tensor store from shared byte %lld is never waited for: its "
               "thread ends before a cp.async.bulk.wait_group retires it",
               (long long)b->src);
  }
  if (a->copies.n) {
    stma *c = &a->copies.v[0];
    sim_report(c->by, c->in, c->wave, c->lane, D_SIM_ASYNC,
               "tensor copy to shared byte %lld%s is never waited for%s",
               (long long)c->dst, of_wg(c->by, s), c->by != s ? " there" : "");
  }
  if (!a->remote)
    return;
  /* every arrival of another workgroup here came before the end: a wait
   * of this workgroup saw it (or a later one of its wave) */
  uint32_t *end = wv_alloc(s->ctx, s->nclk * sizeof *end);
  for (uint32_t w = 0; w < s->nwaves; w++)
    join(s, end, VC(s, w));
  for (uint32_t x = 0; x < s->nclk; x++) {
    struct sremote *r = &a->remote[x];
    if (r->in && r->clock > end[x])
      sim_report(r->by, r->in, r->wave, r->lane, D_SIM_MBARRIER,
                 "arrives at the mbarrier at shared byte %lld%s, which ends "
                 "without waiting for this arrival: it may come after the "
                 "end, when the shared memory is gone (no workgroup of a "
                 "cluster ends while another may still arrive at its "
                 "mbarriers)",
                 (long long)r->addr, of_wg(r->by, s));
  }
}
