/* Thread-block clusters in the simulator (tir.h, Clusters; src/tir/sim.c's
 * run_cluster, sim_async.c), on thread programs built by hand: clusters of
 * two workgroups of two waves (and of four), two clusters along x.
 *  - a correct one: each workgroup's thread 0 initialises a full barrier
 *    (one arrival) and an empty one (every wave of the cluster), fences,
 *    and after a cluster barrier announces a whole tile's bytes on its own
 *    full barrier and multicasts its part of the tile (rows 4 rank .. for
 *    a half) into every workgroup of the cluster; every wave waits for the
 *    tile, stores it to the output and gives the stage back with an
 *    arrival at the empty barrier of every workgroup; the next tile
 *    refills the stage after the producer waited for that, and the
 *    producer waits for the last releases before it ends. For one and two
 *    tiles, clusters of two and four, and with plain copies (each
 *    workgroup its whole tile, released across the cluster), the output is
 *    the input in every workgroup;
 *  - planted bugs, each reported with its diagnostic at the instruction
 *    (source line) it belongs to, naming the thread that runs it: a
 *    workgroup barrier instead of the cluster barrier (the peer's multicast
 *    and, with plain copies, the peer's arrival use a barrier too early);
 *    bytes announced too few and too many for the two halves; an arrival at
 *    a workgroup that has ended, one it ends without waiting for (also
 *    after a cluster barrier, which orders only what comes before it; one
 *    after the arrival orders it before the end: no error); a multicast
 *    into a workgroup that has ended, and one it never waits for; a wait
 *    that never completes because the releases stay in their own
 *    workgroup; a refill that waited only for its own workgroup's release
 *    (a race with the peer's readers); a wave that ends instead of
 *    reaching the cluster barrier; a grid that is not a multiple of the
 *    cluster. */
#include <stdbool.h>
#include <string.h>

#include "check.h"
#include "ir/ir.h"
#include "tir/tir.h"
#include "wavec.h"

enum { LANES = 32, BLOCK = 64, CL = 2, TILE_ROWS = 8, COLS = 32 };
enum { TILE_BYTES = TILE_ROWS * COLS * 4, HALF = TILE_BYTES / CL };
enum { FULL = TILE_BYTES, EMPTY = TILE_BYTES + 8, SMEM = TILE_BYTES + 16 };

/* What a program gets wrong (all false: the correct one). */
typedef struct opts {
  int cl;             /* workgroups a cluster (0: CL) */
  int tiles;          /* tiles a workgroup copies, one after the other */
  int grid;           /* workgroups along x (0: two clusters) */
  int64_t expect;     /* bytes announced on the full barrier (0: a tile's) */
  int64_t empty;      /* arrivals of an empty phase (0: every wave's) */
  bool no_cbar;       /* a workgroup barrier instead of the cluster one */
  bool plain;         /* each workgroup copies its whole tile alone */
  bool local_release; /* the releases arrive at their own workgroup only */
  bool no_last_wait;  /* the producer does not wait for the last releases */
  bool bar_after;     /* a workgroup barrier after each release */
  bool cbar_before;   /* a cluster barrier before each release */
  bool cbar_after;    /* a cluster barrier after the last release */
  bool exit_wave;     /* wave 1 of rank 1 ends at once */
  /* rank 0 ends after the cluster barrier: 1 at once, 2 after a
   * workgroup barrier (the peer's copy comes first) */
  int exit_rank0;
} opts;

typedef struct pb {
  wavec_ctx *ctx;
  tir_prog *p;
} pb;

/* The lines of the instructions reports point at. */
typedef struct lines {
  uint32_t cbar, announce, tma[4], release, last_wait;
} lines;

static uint32_t reg(pb *b, tir_ty ty) {
  vec_push(b->ctx, &b->p->regs, ty);
  return b->p->regs.n - 1;
}

/* Appends an instruction at source line (its index + 1). */
static tir_instr *emit(pb *b, tir_op op, tir_ty ty, uint32_t dst, uint32_t a,
                       uint32_t bb, uint32_t c, int64_t imm) {
  tir_instr in = {.op = op, .ty = ty, .dst = dst, .a = a, .b = bb, .c = c,
                  .imm = imm, .loc = {"cluster", b->p->code.n + 1, 1}};
  vec_push(b->ctx, &b->p->code, in);
  return &b->p->code.v[b->p->code.n - 1];
}

static uint32_t line(pb *b) { return b->p->code.n; }

static uint32_t op2(pb *b, tir_op o, uint32_t x, uint32_t y) {
  uint32_t d = reg(b, TY_I32);
  emit(b, o, TY_I32, d, x, y, 0, 0);
  return d;
}

static uint32_t cst(pb *b, int64_t v) {
  uint32_t d = reg(b, TY_I32);
  emit(b, T_CONST, TY_I32, d, 0, 0, 0, v);
  return d;
}

static uint32_t setp(pb *b, int cmp, uint32_t x, uint32_t y) {
  uint32_t d = reg(b, TY_PRED);
  emit(b, T_SETP, TY_I32, d, x, y, 0, cmp);
  return d;
}

static uint32_t sreg(pb *b, int which) {
  uint32_t d = reg(b, TY_I32);
  emit(b, T_SREG, TY_I32, d, 0, 0, 0, which);
  return d;
}

/* The program: x [clusters * tiles * 8, 32] f32 in, y [workgroups * tiles *
 * 256] out; tile i of cluster c is rows 8 (c tiles + i) of x, and
 * workgroup g stores it to y from 256 (g tiles + i). */
static tir_prog *build(pb *b, const opts *o, lines *ln) {
  wavec_ctx *ctx = b->ctx;
  tir_prog *p = b->p = wv_alloc(ctx, sizeof *p);
  memset(p, 0, sizeof *p);
  vec_push(ctx, &p->regs, TY_PRED); /* register 0: none */
  int cl = o->cl ? o->cl : CL;
  int grid = o->grid ? o->grid : 2 * cl, T = o->tiles;
  p->grid[0] = grid;
  p->grid[1] = p->grid[2] = 1;
  p->block[0] = BLOCK;
  p->block[1] = p->block[2] = 1;
  p->lanes = LANES;
  p->mma = -1;
  p->cluster = cl;
  p->smem_bytes = SMEM;
  int64_t rows = (int64_t)(grid / cl) * T * TILE_ROWS;
  tir_arg x = {.name = "x", .dt = WAVEC_F32, .ndims = 2,
               .shape = {rows, COLS}, .elems = rows * COLS};
  tir_arg y = {.name = "y", .dt = WAVEC_F32, .ndims = 1,
               .elems = (int64_t)grid * T * TILE_ROWS * COLS, .written = true};
  y.shape[0] = y.elems;
  vec_push(ctx, &p->args, x);
  vec_push(ctx, &p->args, y);
  tir_tmap part = {.arg = 0, .rank = 2, .box = {TILE_ROWS / cl, COLS}};
  tir_tmap whole = {.arg = 0, .rank = 2, .box = {TILE_ROWS, COLS}};
  vec_push(ctx, &p->tmaps, part);
  vec_push(ctx, &p->tmaps, whole);

  uint32_t t = sreg(b, TIR_SREG_TID_X), cx = sreg(b, TIR_SREG_CTAID_X);
  uint32_t rank = op2(b, T_MOD, cx, cst(b, cl));
  uint32_t c = op2(b, T_DIV, cx, cst(b, cl));
  uint32_t zero = cst(b, 0);
  uint32_t is0 = setp(b, TIR_CMP_EQ, t, zero);
  uint32_t lane0 = setp(b, TIR_CMP_EQ, op2(b, T_MOD, t, cst(b, LANES)), zero);
  uint32_t wave0 = setp(b, TIR_CMP_LT, t, cst(b, LANES));
  uint32_t full = cst(b, FULL), empty = cst(b, EMPTY);
  if (o->exit_wave) {
    uint32_t pr = reg(b, TY_PRED);
    emit(b, T_AND, TY_PRED, pr, setp(b, TIR_CMP_EQ, rank, cst(b, 1)),
         setp(b, TIR_CMP_GE, t, cst(b, LANES)), 0, 0);
    emit(b, T_IF, TY_PRED, 0, pr, 0, 0, 0);
    emit(b, T_EXIT, TY_PRED, 0, 0, 0, 0, 0);
    emit(b, T_ENDIF, TY_PRED, 0, 0, 0, 0, 0);
  }
  emit(b, T_MBINIT, TY_I32, 0, full, is0, 0, 1);
  emit(b, T_MBINIT, TY_I32, 0, empty, is0, 0,
       o->empty ? o->empty : (int64_t)cl * BLOCK / LANES);
  emit(b, T_FENCE, TY_I32, 0, 0, 0, 0, 0);
  emit(b, o->no_cbar ? T_BAR : T_CLUSTERBAR, TY_I32, 0, 0, 0, 0, 0);
  ln->cbar = line(b);
  if (o->exit_rank0) {
    emit(b, T_IF, TY_PRED, 0, setp(b, TIR_CMP_EQ, rank, zero), 0, 0, 0);
    if (o->exit_rank0 == 2)
      emit(b, T_BAR, TY_I32, 0, 0, 0, 0, 0);
    emit(b, T_EXIT, TY_PRED, 0, 0, 0, 0, 0);
    emit(b, T_ENDIF, TY_PRED, 0, 0, 0, 0, 0);
  }
  uint32_t dst =
      o->plain ? zero : op2(b, T_MUL, rank, cst(b, TILE_BYTES / cl));
  for (int i = 0; i < T; i++) {
    if (i > 0)
      emit(b, T_MBWAIT, TY_I32, 0, empty, cst(b, (i - 1) & 1), wave0, 0);
    emit(b, T_MBARRIVE, TY_I32, 0, full, is0, 0,
         o->expect ? o->expect : TILE_BYTES);
    ln->announce = line(b);
    /* the first row: 8 (c T + i), + 4 rank for a half */
    uint32_t row = op2(b, T_MUL, op2(b, T_ADD, op2(b, T_MUL, c, cst(b, T)),
                                     cst(b, i)),
                       cst(b, TILE_ROWS));
    if (!o->plain)
      row = op2(b, T_ADD, row, op2(b, T_MUL, rank, cst(b, TILE_ROWS / cl)));
    tir_instr *in = emit(b, T_TMA, TY_F32, 0, dst, full, is0, o->plain);
    in->imm2 = o->plain ? 0 : TIR_TMA_MULTICAST;
    in->nlist = 2;
    in->list = wv_alloc(ctx, 2 * sizeof *in->list);
    in->list[0] = row;
    in->list[1] = zero;
    ln->tma[i] = line(b);
    emit(b, T_MBWAIT, TY_I32, 0, full, cst(b, i & 1), 0, 0);
    /* thread t: tile elements t + 64 j, to y from 256 (cx T + i) */
    uint32_t out = op2(b, T_MUL, op2(b, T_ADD, op2(b, T_MUL, cx, cst(b, T)),
                                     cst(b, i)),
                       cst(b, TILE_ROWS * COLS));
    for (int j = 0; j < TILE_ROWS * COLS / BLOCK; j++) {
      uint32_t e = op2(b, T_ADD, t, cst(b, (int64_t)BLOCK * j));
      uint32_t v = reg(b, TY_F32);
      emit(b, T_LDS, TY_F32, v, op2(b, T_MUL, e, cst(b, 4)), 0, 0, 0);
      emit(b, T_STG, TY_F32, 0, op2(b, T_ADD, out, e), v, 0, 1);
    }
    if (o->cbar_before)
      emit(b, T_CLUSTERBAR, TY_I32, 0, 0, 0, 0, 0);
    emit(b, T_MBARRIVE, TY_I32, 0, empty, lane0, 0, 0)->imm2 =
        o->local_release ? 0 : TIR_ARRIVE_CLUSTER;
    ln->release = line(b);
    if (o->bar_after)
      emit(b, T_BAR, TY_I32, 0, 0, 0, 0, 0);
  }
  if (o->cbar_after)
    emit(b, T_CLUSTERBAR, TY_I32, 0, 0, 0, 0, 0);
  if (!o->no_last_wait)
    emit(b, T_MBWAIT, TY_I32, 0, empty, cst(b, (T - 1) & 1), wave0, 0);
  ln->last_wait = line(b);
  tir_match_loops(ctx, p);
  return p;
}

/* Builds and simulates the program of o in a fresh context: NULL when it
 * ran (*ok: the output is the input, in every workgroup), else the error
 * (E code and message) with *at its line. */
static const char *run(const opts *o, lines *ln, uint32_t *at, bool *ok) {
  static char err[1024];
  wavec_ctx *ctx = wavec_ctx_new(NULL, NULL);
  wavec_kernel *pk =
      wavec_kernel_begin(ctx, "cluster", (wavec_loc){"cluster", 1, 1});
  pb b = {ctx, NULL};
  tir_prog *p = build(&b, o, ln);
  pk->k.tir = p;
  *ok = false;
  *at = 0;
  const char *res = NULL;
  if (tir_verify(ctx, p) != WAVEC_OK) {
    snprintf(err, sizeof err, "verify: %s", wavec_errmsg(ctx));
    wavec_ctx_free(ctx);
    return err;
  }
  size_t nx = (size_t)p->args.v[0].elems, ny = (size_t)p->args.v[1].elems;
  float *x = malloc(nx * sizeof *x), *y = malloc(ny * sizeof *y);
  for (size_t i = 0; i < nx; i++)
    x[i] = 0.5f * (float)i + 1;
  memset(y, 0, ny * sizeof *y);
  void *args[2] = {x, y};
  if (wavec_simulate(pk, args) != WAVEC_OK) {
    wavec_diag_info d;
    wavec_diag(ctx, 0, &d);
    *at = d.loc.line;
    snprintf(err, sizeof err, "E%04d %s", d.code, d.message);
    res = err;
  } else {
    /* workgroup g of cluster g / 2, tile i: rows 8 (c T + i) of x */
    int T = o->tiles, grid = (int)p->grid[0], cl = (int)p->cluster;
    *ok = true;
    for (int g = 0; g < grid; g++)
      for (int i = 0; i < T; i++)
        for (int e = 0; e < TILE_ROWS * COLS; e++)
          *ok &= y[((size_t)g * T + i) * TILE_ROWS * COLS + e] ==
                 x[((size_t)(g / cl) * T + i) * TILE_ROWS * COLS + e];
  }
  free(x), free(y);
  wavec_ctx_free(ctx);
  return res;
}

static void correct(void) {
  for (int tiles = 1; tiles <= 2; tiles++) {
    opts o = {.tiles = tiles};
    lines ln;
    uint32_t at;
    bool ok;
    const char *e = run(&o, &ln, &at, &ok);
    CHECKF(!e, "%d tiles: line %u: %s", tiles, at, e);
    CHECKF(ok, "%d tiles: the output is not the input", tiles);
  }
  /* clusters of four, each workgroup multicasting a quarter */
  for (int tiles = 1; tiles <= 2; tiles++) {
    opts o = {.cl = 4, .tiles = tiles};
    lines ln;
    uint32_t at;
    bool ok;
    const char *e = run(&o, &ln, &at, &ok);
    CHECKF(!e && ok, "clusters of 4, %d tiles: line %u: %s", tiles, at,
           e ? e : "wrong output");
  }
  /* each workgroup copying its tile alone, releasing across the cluster */
  opts o = {.tiles = 2, .plain = true};
  lines ln;
  uint32_t at;
  bool ok;
  const char *e = run(&o, &ln, &at, &ok);
  CHECKF(!e && ok, "plain copies: line %u: %s", at, e ? e : "wrong output");
}

/* Runs o expecting an error of `code` whose message holds `text`, at the
 * line of the program's instruction `field` (of struct lines). */
#define EXPECT(what, o, code, text, field)                                    \
  do {                                                                         \
    lines ln_ = {0};                                                           \
    uint32_t at_;                                                              \
    bool ok_;                                                                  \
    const char *e_ = run(&(o), &ln_, &at_, &ok_);                              \
    CHECKF(e_, "%s: no error", what);                                          \
    if (e_) {                                                                  \
      CHECKF(strncmp(e_, code, strlen(code)) == 0 && strstr(e_, text),         \
             "%s: line %u: %s", what, at_, e_);                                \
      CHECKF(at_ == ln_.field, "%s: at line %u, not %u (%s): %s", what, at_,  \
             ln_.field, #field, e_);                                           \
    }                                                                          \
  } while (0)

/* (b) the barriers used by the peer before a cluster barrier follows their
 * initialisation: a multicast completing on the peer's full barrier, and
 * (plain copies) a release arriving at the peer's empty barrier. */
static void no_cluster_barrier(void) {
  opts o = {.tiles = 1, .no_cbar = true};
  EXPECT("multicast", o, "E0610",
         "the mbarrier at shared byte 1024 of workgroup (1, 0, 0) is used by "
         "another workgroup of its cluster before a cluster barrier that "
         "follows its initialisation (its initialising thread's fence, then "
         "barrier.cluster) (thread 0 of workgroup (0, 0, 0))",
         tma[0]);
  opts q = {.tiles = 1, .no_cbar = true, .plain = true};
  EXPECT("arrival", q, "E0610",
         "the mbarrier at shared byte 1032 of workgroup (1, 0, 0) is used by "
         "another workgroup of its cluster before a cluster barrier",
         release);
}

/* (c) a tile's bytes announced too few (the first half completes the
 * phase with the peer's half still in flight) and too many (the phase
 * never completes): at the announcing arrival. */
static void tx_mismatch(void) {
  opts o = {.tiles = 1, .expect = HALF};
  EXPECT("too few", o, "E0610",
         "transaction bytes: a phase of the mbarrier at shared byte 1024 "
         "completed with a tensor copy still in flight (its arrivals "
         "announced 512 bytes, fewer than its copies bring) (thread 0 of "
         "workgroup (0, 0, 0))",
         announce);
  opts q = {.tiles = 1, .expect = TILE_BYTES + HALF};
  EXPECT("too many", q, "E0610",
         "transaction bytes: a phase of the mbarrier at shared byte 1024 "
         "waits for 512 bytes more than its tensor copies brought "
         "(announced 1536): it never completes",
         announce);
}

/* (d) the producer ends without waiting for the last releases: the peer
 * arrives after the end, or (a workgroup barrier after the release keeps
 * the first workgroup going a little longer) before an end that never
 * waited for it. */
static void arrival_after_end(void) {
  opts o = {.tiles = 1, .no_last_wait = true};
  EXPECT("after the end", o, "E0610",
         "arrives at the mbarrier at shared byte 1032 of workgroup (0, 0, "
         "0), which has ended: its shared memory is gone (no workgroup of a "
         "cluster ends while another may still arrive at its mbarriers) "
         "(thread 0 of workgroup (1, 0, 0))",
         release);
  opts q = {.tiles = 1, .no_last_wait = true, .bar_after = true};
  EXPECT("not waited for", q, "E0610",
         "arrives at the mbarrier at shared byte 1032 of workgroup (0, 0, "
         "0), which ends without waiting for this arrival: it may come "
         "after the end",
         release);
  /* a cluster barrier before the arrival orders nothing after it */
  opts r = {.tiles = 1, .no_last_wait = true, .bar_after = true,
            .cbar_before = true};
  EXPECT("after a cluster barrier", r, "E0610",
         "arrives at the mbarrier at shared byte 1032 of workgroup (0, 0, "
         "0), which ends without waiting for this arrival",
         release);
  /* ... and one after it, with no wait, orders the arrival before the end */
  opts u = {.tiles = 1, .no_last_wait = true, .cbar_after = true};
  lines ln;
  uint32_t at;
  bool ok;
  const char *e = run(&u, &ln, &at, &ok);
  CHECKF(!e && ok, "a cluster barrier after the release: line %u: %s", at,
         e ? e : "wrong output");
}

/* A workgroup that ends before its peer's multicast: the copy finds it
 * gone, or (the peer's copy comes first) it never waits for the copy. */
static void copy_after_end(void) {
  opts o = {.tiles = 1, .exit_rank0 = 1};
  EXPECT("after the end", o, "E0603",
         "tensor copy multicast into workgroup (0, 0, 0) of its cluster, "
         "which has ended: its shared memory is gone (no workgroup of a "
         "cluster ends while another may still copy into its shared memory) "
         "(thread 0 of workgroup (1, 0, 0))",
         tma[0]);
  opts q = {.tiles = 1, .exit_rank0 = 2};
  EXPECT("never waited for", q, "E0608",
         "tensor copy to shared byte 512 of workgroup (0, 0, 0) is never "
         "waited for there (thread 0 of workgroup (1, 0, 0))",
         tma[0]);
}

/* (e) the releases arrive at their own workgroup's empty barrier only,
 * which expects the whole cluster's: the producer's last wait. */
static void missing_remote_arrival(void) {
  opts o = {.tiles = 1, .local_release = true};
  EXPECT("deadlock", o, "E0609",
         "this wait can never complete: the mbarrier at shared byte 1032 is "
         "in phase 0 with 2 of 4 arrivals missing",
         last_wait);
}

/* (f) the empty barrier counts the workgroup's own releases only: the
 * second tile's multicast refills the peer's stage while its waves may
 * still read it. */
static void refill_race(void) {
  opts o = {.tiles = 2, .local_release = true, .empty = BLOCK / LANES};
  EXPECT("refill", o, "E0603",
         "tensor copy refills shared byte 0 of workgroup (1, 0, 0), which "
         "wave 0 still reads: this thread has not waited for an mbarrier "
         "phase that wave 0 arrived at after its read (thread 0 of "
         "workgroup (0, 0, 0))",
         tma[1]);
}

/* A wave that ends instead of reaching the cluster barrier; a grid of a
 * cluster and a half. */
static void cluster_barrier_and_grid(void) {
  opts o = {.tiles = 1, .exit_wave = true};
  EXPECT("cluster barrier", o, "E0604",
         "cluster barrier reached by wave 0 but not by all 4 waves of the 2 "
         "workgroups of its cluster (3 of them reached it; the others ended "
         "or wait elsewhere) (thread 0 of workgroup (0, 0, 0))",
         cbar);
  lines ln;
  uint32_t at;
  bool ok;
  opts q = {.tiles = 1, .grid = 3};
  const char *e = run(&q, &ln, &at, &ok);
  CHECKF(e && strstr(e, "E0999") && strstr(e, "not a multiple of its clusters of 2"),
         "grid of 3: %s", e ? e : "no error");
}

int main(void) {
  RUN(correct);
  RUN(no_cluster_barrier);
  RUN(tx_mismatch);
  RUN(arrival_after_end);
  RUN(copy_after_end);
  RUN(missing_remote_arrival);
  RUN(refill_race);
  RUN(cluster_barrier_and_grid);
  CHECK_EXIT();
}
