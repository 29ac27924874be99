/* The lowering's private interface: the state one run of the lowering
 * shares across its files, and the functions they call in each other.
 *
 * The files, by job:
 *   lower.c             the driver: the pass, the node dispatch, emit()
 *   lower_expr.c        index expressions -> integer code (hash-consed CSE)
 *   lower_layout.c      what a layout puts in which lane (memoized tables)
 *   lower_mem.c         global reads and writes, fragment loads from shared
 *   lower_ldmatrix.c    choosing ldmatrix for fragment loads
 *   lower_elementwise.c elementwise ops and their tables
 *   lower_mma.c         mma.sync and wgmma
 *   lower_reduce.c      reductions: in a thread, across lanes and waves
 *   lower_convert.c     layout conversions: in registers or through shared
 *   lower_copy.c        copies of staged tiles: where they stand, rings
 *   lower_loop.c        loops: walks, the causal mask split, wgmma carries
 *   lower_tma.c         the pipeline decision (cp.async ring or tensor
 *                       copies into an mbarrier ring) and the latter's code
 *   lower_guard.c       guards at the edges of ragged dimensions
 *   lower_sched.c       the schedule's code: the producer's and consumers'
 *                       regions, the loop over persistent tiles
 *   lower_store.c       an output's epilogue through shared memory by
 *                       tensor stores (TMA)
 *   promote.c           which reads are staged in shared memory, ring depth
 * The wgmma waits are the next pass's (waits.c), not the lowering's.
 */
#ifndef WV_LOWER_H
#define WV_LOWER_H

#include "passes/dist.h"
#include "tir/tir.h"

typedef struct memo_ent {
  ex_t e;
  uint32_t reg;
  uint32_t scope;
} memo_ent;

/* The interval bounds of an index expression under the lowering's ranges
 * (which stay the same through it). */
typedef struct bound_ent {
  ex_t e;
  int64_t lo, hi;
} bound_ent;

/* A global load in scope: what it loaded (argument, offset and mask
 * registers, type) into which register. */
typedef struct load_ent {
  int64_t arg;
  uint32_t off, mask;
  tir_ty ty;
  double fill; /* what a masked-off element reads */
  uint32_t reg, scope;
} load_ent;

/* A bounds predicate in scope: 0 <= c < size (either side only where it
 * is not proved) in register reg. */
typedef struct guard_ent {
  ex_t c, size;
  uint32_t reg, scope;
} guard_ent;

/* An ldmatrix decision: for these fragment addresses, the address each
 * lane supplies (0: no ldmatrix) and whether it is the transposed one. */
typedef struct ldsm_memo {
  uint32_t ne;
  ex_t addr[8];
  ex_t e;
  bool tr;
} ldsm_memo;

/* What the lowering works out once per layout (see facts_of). */
typedef struct layout_facts {
  const wv_layout *l;
  const int64_t *frag; /* frag_table, or NULL until asked for */
  const uint32_t *rep; /* elem_reps, or NULL until asked for */
} layout_facts;

/* ---- staging mma operands through shared memory
 * ------------------------------ A read whose every use is an mma operand,
 * inside a loop, is staged: the whole workgroup tile of its memory is copied to
 * shared memory by all threads with 16-byte asynchronous copies (coalesced),
 * then each lane loads its fragment elements from there. Rows are padded by 16
 * bytes against bank conflicts.
 *
 * A tile that moves with the loop around it streams through a ring of S
 * slots (hardware `stages`): before the loop tiles 0..S-2 are issued; at
 * the top of iteration i the thread waits for tile i's copies, a barrier
 * makes them visible (and ends every reader of iteration i-1), tile i+S-1
 * is issued into the slot iteration i-1 used, and the body computes on
 * slot i mod S. One barrier per iteration; S-1 tiles in flight. With S = 1
 * (and for tiles that do not move with their loop) the copy stands where
 * the tile is used: barrier, copy, wait, barrier. */
typedef struct stage {
  uint32_t mem;                 /* the ARG node */
  wavec_sym loopvar;            /* the loop counter its tile moves with */
  uint32_t loop;                /* ITERATE whose ring streams it, or 0 */
  int64_t base;                 /* byte offset in shared memory (slot 0) */
  int64_t bytes;                /* one tile, padded, a multiple of 16 */
  int64_t slot;                 /* bytes between the slots of its ring */
  ex_t at;                      /* byte offset of the slot in use, or 0 */
  int64_t ext[WV_MAX_DIMS];     /* tile extent per memory dim */
  int64_t sstride[WV_MAX_DIMS]; /* shared stride (elements) per memory dim */
  ex_t start[WV_MAX_DIMS];      /* the workgroup tile's first coordinate */
  uint32_t done_scope;          /* scope whose iteration copied it, +1 */
  int64_t swz;                  /* a wgmma operand: the bytes of its swizzled
                                   rows (128, 64 or 32); 0: unswizzled */
  int64_t es;                   /* bytes of an element: 2 or 1 */
  int64_t vb;                   /* bytes a copy moves: 16; 8 or 4 for a
                                   wgmma tile whose rows are not a multiple
                                   of 16 bytes (no tensor copies then) */
  wavec_loc loc;                /* the (first) read it stages */
  /* a ring filled by tensor copies (lower_tma.c): its tensor map + 1 (0:
   * cp.async), its slots' own full and empty barriers, the bytes of its
   * tile in a slot, its TIR_TAG_STAGE bit */
  int64_t tmap, fbar, ebar, tx;
  uint32_t tag;
  /* clusters (schedule.c): the tile is the same for every workgroup of the
   * cluster, each copies 1/C of its rows to all (multicast); its barrier
   * set's empty barriers take the releases of every workgroup's waves */
  bool mcast, cset;
  /* the tile whose full barrier the loop waits on before the first read
   * of the slot (lw_stage_slot), and the walk's first tile; 0: none due */
  ex_t due, due_first;
} stage;

/* Copies move vectors of 16 bytes; unswizzled rows are padded by 16. A
 * wgmma operand whose rows in memory are not a multiple of 16 bytes (K = 66
 * of f16) is copied 8 or 4 bytes at a time (STAGE_VEC_MIN, the narrowest
 * asynchronous copy), and rows of an odd number of elements (K = 101) an
 * element at a time by loads and stores: slower, but the alternative is no
 * wgmma at all. */
enum { STAGE_VEC_BYTES = 16, STAGE_VEC_MIN = 4, STAGE_PAD_BYTES = 16 };
/* A wgmma operand tile [rows, cols] (the last two memory dims; any dims
 * before them of extent 1): column panels of W = st->swz bytes (W / e
 * elements of e bytes), each panel rows x W bytes, one after the other,
 * its 16-byte chunks swizzled (tir_swz) as the matrix descriptor's W-byte
 * mode expects. W is the widest of 128, 64 and 32 that divides the tile's
 * rows (promote.c): 128 where it can be (one wgmma's K is 32 bytes: a
 * 128-byte row holds 4, with the fewest descriptors and the fewest bank
 * conflicts), 64 and 32 for the head dims 96, 80, 48 and the like. Every
 * tile starts and ends on a multiple of 1024 bytes (SWZ_ALIGN): the
 * pattern repeats every 8 W bytes. The epilogue's tensor stores
 * (lower_store.c) choose their panels the same way. */
enum { SWZ_ROW_BYTES = 128, SWZ_ALIGN = 1024 };
/* Shared memory of a multiprocessor, what the driver keeps of it per
 * workgroup, and the most one workgroup may opt in to (sm_90). */
enum { SM_SMEM = 228 * 1024, CTA_RESERVED = 1024, SMEM_OPTIN = 227 * 1024 };
/* Elements of st in a copy's vector, and in a swizzled row. */
static inline int64_t lw_stage_vec(const struct stage *st) {
  return st->vb / st->es;
}
static inline int64_t lw_swz_row(const struct stage *st) {
  return st->swz / st->es;
}
/* The widest swizzle, 128, 64 or 32 bytes, that divides rows of `bytes`;
 * 0 where none does. Staged tiles (promote.c) and the epilogue's buffer
 * (lower_store.c) take their panels' width from it. */
static inline int64_t lw_swz_width(int64_t bytes) {
  for (int64_t w = SWZ_ROW_BYTES; w >= 32; w /= 2)
    if (bytes % w == 0)
      return w;
  return 0;
}

/* The rows of one tensor-copy box of a tile of `rows` rows of W swizzled
 * bytes: the most, up to 256, dividing them in groups of 1024 bytes (8
 * rows of 128 bytes, 16 of 64, 32 of 32), so that every box lands on
 * 1024 bytes; 0 where none does. */
static inline int64_t lw_box_rows(int64_t W, int64_t rows) {
  int64_t g = SWZ_ALIGN / W;
  for (int64_t r = (rows < 256 ? rows : 256) / g * g; r >= g; r -= g)
    if (rows % r == 0)
      return r;
  return 0;
}

/* A loop's ring, as the pass pipeline decided it. */
typedef struct ring_plan {
  uint32_t loop;       /* the ITERATE */
  int64_t slot;        /* bytes of one slot (a tile of each read it streams) */
  int64_t ahead;       /* tiles in flight ahead of the one computed on */
  bool carry;          /* may carry its last wgmma group into the next */
  const char *why_not; /* why not tensor copies (NULL: tensor copies) */
} ring_plan;

/* The schedule (schedule.c): warp specialization and persistent tiles. */
typedef struct sched_plan {
  /* a producer warpgroup after the kernel's waves issues the copies */
  bool specialize;
  int64_t consumers;     /* the kernel's waves (warpgroups) */
  int64_t entry_regs;    /* registers per thread at entry (.maxnreg) */
  int64_t producer_regs; /* after the producer's setmaxnreg.dec */
  int64_t consumer_regs; /* after the consumers' setmaxnreg.inc */
  /* every workgroup loops over tiles */
  bool persistent;
  int64_t ctas;    /* the most workgroups: sms x workgroups_per_sm */
  int64_t group_m; /* rows of tiles in a group of the raster */
  wavec_sym ring;  /* $RING: a tensor-copy ring's fills before the tile, or
                      0 (none) */
  /* by grid axis: its workgroups take its tiles in reverse (longest walks
   * first): workgroup id i is tile n - 1 - i */
  bool reverse[3];
  /* workgroups consecutive along grid axis 0 in a cluster (0: none) */
  int64_t cluster;
} sched_plan;

/* The output written through shared memory by tensor stores
 * (lower_store.c): its tile's geometry and buffer, and per element of the
 * written value (the same in every thread) its column panel, whether it
 * is the next column of the element before it, and the power of 2 (up to
 * 8) its column is a multiple of. */
typedef struct store_plan {
  uint32_t write;           /* the WRITE, or 0 (direct stores everywhere);
                               of several clones of one write (a wave
                               holding two wgmmas' rows), the last */
  uint32_t *clones, nclones; /* every clone of the write, in order (the
                                elements below are theirs, one after the
                                other); the last stores them all */
  uint32_t tmap;            /* its tensor map */
  int64_t base;             /* the buffer's shared byte offset */
  int64_t rows, cols;       /* the workgroup tile */
  int64_t swz;              /* the bytes of a panel's rows, swizzled:
                               128, 64 or 32 (lower.h's tiles) */
  int64_t panel_cols;       /* columns of a panel: swz / element bytes */
  int64_t panels, per_round; /* panels of the tile; those the buffer holds */
  int64_t box_rows;         /* rows of one tensor store */
  bool by_threads;          /* the threads copy the buffer out, consecutive
                               threads on consecutive columns (no tensor
                               map fits the output); else tensor stores */
  int64_t *panel_of;
  bool *follows;
  uint8_t *calign;
  const char **why_not; /* by WRITE of a warpgroup kernel: why it keeps
                           direct stores (NULL: it has tensor stores) */
} store_plan;

/* A loop over persistent tiles being lowered (lower_sched.c). */
typedef struct tile_loop {
  uint32_t start;   /* its T_LOOP */
  uint32_t counter; /* its counter */
} tile_loop;

/* The lowering's state, by who fills it. The passes before lower keep it
 * on the kernel (k->lw); each reads what the passes before it filled. */
typedef struct lw {
  /* ---- context (plan.c, before promote) */
  wv_kernel *k;
  wavec_ctx *ctx;
  wv_dist *d;
  wv_index *ix;
  wv_graph *g;
  VEC(wavec_sym) bsyms; /* bound user symbols and their values */
  VEC(ex_t) bvals;
  ex_range *ranges;
  uint32_t nranges;
  uint32_t norigin; /* tables by origin (pre-expansion node) have this many */
  bool *mma_only;   /* by node: every use is an mma lhs or rhs */
  bool *written;    /* by ARG node: some write stores to it */
  bool *order_before; /* by READ/WRITE: a barrier orders it after an
                         earlier access of the tensor (plan.c) */
  uint32_t *nuses;  /* by node: operands that name it */
  bool *red_more;   /* by reduction link: a later link follows it */
  bool wgmma;       /* the kernel's mma is a warpgroup one */
  /* ---- promote (promote.c) */
  struct stage **stage_of; /* by origin: its staging */
  const char **unstaged;   /* by origin: why a read is not staged, or NULL */
  VEC(struct stage *) stages_all; /* every staged tile, once */
  uint32_t ntagged; /* tensor-copy ring stages tagged so far (pipeline.c) */
  int64_t stages;      /* slots of each loop's ring of staged tiles */
  int64_t stage_bytes; /* shared memory of staged tiles (and, after the
                          pipeline, the rings' barriers), before the rest */
  /* ---- pipeline (pipeline.c) */
  VEC(ring_plan) rings;      /* one per loop that streams tiles */
  VEC(tir_tmap) tmaps;  /* the tensor maps of tensor-copy rings */
  /* ---- schedule (schedule.c) */
  sched_plan sched;
  /* ---- lower_store_plan, at the start of lower: the tensor stores of an
   * output, the tensor reduces of an adding write */
  store_plan store, add;
  void *add_tile; /* (lower_store.c: the adding write's tile, computed once) */
  /* ---- walks (walks.c): by ITERATE, the tiles it walks [first, last) */
  ex_t *walk_first, *walk_last;
  const char **walk_remark; /* (NULL: none; lower gives it, see lw_iterate) */
  /* ---- masksplit (masksplit.c): by ITERATE, the relation of the causal
   * mask that splits its walk (WAVEC_REL_NONE: none) and where the tiles it
   * leaves whole end (or begin) */
  wavec_rel *split_rel;
  ex_t *split_mid;
  const char **split_remark; /* (given by lower, as walk_remark) */
  bool *unmask_cand; /* by node: a causal mask of its loop */
  /* ---- lower (lower.c and the lower_*.c files) */
  tir_prog *p;
  uint32_t *vals; /* node id -> first register of its elements */
  memo_ent *memo; /* open addressing by ex_t */
  uint32_t memo_cap, memo_used;
  bound_ent *bounds; /* open addressing by ex_t: lower_expr.c's widths */
  uint32_t bounds_cap, bounds_used;
  VEC(uint32_t) scopes; /* open scopes, innermost last */
  uint8_t *scope_open;  /* by scope id */
  uint32_t nscopes;
  uint32_t *loopreg; /* by symbol: the counter register of $ARGD */
  wavec_loc loc;
  int64_t convert_bytes; /* shared memory of the widest conversion */
  int64_t parts_base, parts_bytes; /* the waves' parts' slots (their own
                                      region, before the conversions', or
                                      the scratch one: parts_region) */
  uint32_t parts_region;
  /* by node, lw_exchange_plan's: 1 + the grid axis whose waves split the
   * reduction dim of an mma link that exchanges its operand instead of
   * leaving parts (and of the conversion clone that is its lhs: it loads
   * every wave's fragments), else 0 */
  uint8_t *xchg;
  bool *hoisted;         /* by node: lowered before its loop */
  /* by READ: the first of the registers that hold its elements for the
   * next iteration (lower_loop.c's prefetch), 0 if none; and the loop
   * being lowered's counter symbol and end (the whole walk's: a register,
   * or 0 for its trips) that the next iteration's loads are checked
   * against */
  uint32_t *pref;
  uint32_t **pref_src; /* by prefetched READ, by element: the first element
                          of the read with the same coordinates (loaded
                          once) */
  wavec_sym pref_lv;
  uint32_t pref_end;
  int64_t pref_trips;
  /* by staged read: the fragments of a staged read are loaded at each use
   * instead of at the read, once per scope; 1 + the scope whose registers
   * hold them, 0 if none. That keeps a large operand that a loop reuses
   * (attention's q, the backward's k and v) in shared memory instead of
   * registers, and puts fragment loads next to the mma that takes them. */
  uint32_t *lazy_scope;
  /* global loads of arguments the kernel does not write, for reuse: the
   * elements a lane holds of a broadcast operand often repeat (attention's
   * lse and D per row, read for every column) */
  VEC(load_ent) loads;
  bool *remarked;        /* by origin: conversion remark given */
  uint32_t *grouped;     /* by node: lowered with the first of its clones
                          * in a group, in the scope the tag names (bits
                          * 2..: scope + 1, lw_group_tag; bits 0-1: the
                          * group's way, LW_GROUP_*); a loop body lowered
                          * twice (masksplit) has another scope */
  bool *guarded;         /* by origin: guard remark given */
  bool *wide_said;       /* by argument: its 64-bit offsets remarked */
  uint32_t *size_index;  /* by dim: 1 + its run-time size's index in
                            p->sizes (a dynamic dim), or 0 */
  VEC(guard_ent) guards; /* bounds predicates, for reuse */
  uint32_t *red_init;    /* by deferred link: the chain's initial value */
  const int64_t **tid_cols; /* eval_threads': each thread's ids, by symbol */
  uint32_t tid_ncols;
  VEC(layout_facts) facts;   /* frag_table and elem_reps, by layout */
  VEC(ldsm_memo) ldsm_memos; /* try_ldmatrix's decisions */
  VEC(struct reduce_shape) reduce_shapes; /* lower_reduce.c's, by layout */
  bool unmasking; /* lowering the tiles the masks leave whole */
  /* predicates: thread 0, lane 0 of each wave, wave 0 (lower_tma.c); in
   * the producer's region the producer's first thread, and 0 (everyone) */
  uint32_t tma_leader, tma_wleader, tma_wave0;
  uint32_t cl_rank; /* the workgroup's rank in its cluster (clusters) */
  /* the barrier of the role being lowered: 0 of every thread, or a named
   * one of the consumers' (lower_sched.c) */
  int64_t bar_id, bar_threads;
  /* persistent tiles (lower_sched.c): by grid axis, the register of the
   * tile's workgroup id (0: %ctaid) */
  uint32_t wgreg[3];
  uint32_t ring_next; /* register: the ring's fills after this tile */
  /* between lw_sched_begin and lw_sched_end: the T_IF of the consumers'
   * region, the loop over tiles the kernel's program runs in */
  uint32_t sched_region;
  tile_loop sched_tiles;
  uint32_t nloopreg;  /* symbols loopreg has room for */
} lw;

/* What the parts of one loop's walk share (see lower_loop_part). */
typedef struct loop_part {
  uint32_t id;   /* the ITERATE */
  stage **piped; /* the tiles its ring streams */
  uint32_t npiped;
  int64_t S, ahead_n; /* ring slots, tiles issued ahead */
  bool carry;         /* may carry its last wgmma group into the next */
  int64_t trips;      /* the most tiles */
  uint32_t last;      /* register: the end of the whole walk (0: trips) */
  ex_t first;         /* the first tile of the whole walk */
} loop_part;

/* schedule.c: the accumulator registers a thread holds at the least
 * (every mma chain's). */
int64_t lw_chains_regs(const lw *w);
/* The accumulator registers a thread holds of mma `id` (a chain's link):
 * its layout's elements, 1/W of them where W waves exchange its lhs. */
int64_t lw_chain_regs(const lw *w, uint32_t id);
/* Could two workgroups' threads of the plain schedule hold those and 32
 * registers more each? */
bool lw_regs_fit_two(const lw *w);
/* One workgroup a multiprocessor whatever else: workgroups_per_sm = 1, or
 * unset and `bytes` of shared memory take more than half of it, or two
 * workgroups' threads could not hold the mma chains' accumulators
 * (schedule.c). */
bool lw_alone(const lw *w, int64_t bytes);

/* plan.c */
lw *lw_plan(wv_kernel *k);

/* lower.c */
uint32_t lw_reg(lw *w, tir_ty ty);
tir_instr *lw_barrier(lw *w);
/* A barrier that waits for region r's last readers (pass barriers); one
 * that orders only region r's accesses (its writes before its reads); and
 * the region's tag on the shared-memory accesses emitted since code index
 * `from`. */
void lw_reuse_barrier(lw *w, uint32_t r);
void lw_region_barrier(lw *w, uint32_t r);
void lw_tag_region(lw *w, uint32_t from, uint32_t r);
/* For a reduction (mma, sum) n that leaves parts (wv_partial): the
 * predicate of the first part's holders (workgroup 0 and wave 0 along the
 * split axis), who alone start from its accumulator or initial value; 0
 * when n leaves none. lw_from_first_part: v there, 0 elsewhere (v itself
 * when first is 0). */
uint32_t lw_first_part(lw *w, const wv_node *n);
uint32_t lw_from_first_part(lw *w, uint32_t first, uint32_t v, tir_ty ty);
/* A region that only the waves with predicate `on` run (T_IF ... T_ENDIF,
 * `on` uniform across each wave); begin returns the T_IF's index. */
uint32_t lw_region_begin(lw *w, uint32_t on);
void lw_region_end(lw *w, uint32_t start);
/* Clones lowered as a group (conversions through shared memory, adding
 * writes of partial sums): the first one lowers them all and marks them
 * grouped[id] = lw_group_tag(w) | way; the others then find their mark. */
enum { LW_GROUP_DONE = 1, LW_GROUP_ALONE = 2 };
uint32_t lw_group_tag(lw *w);
/* The nodes of id's block from id on with id's op and origin (its later
 * clones, id first) into out (room for the block's nodes); their count. */
uint32_t lw_clones_from(lw *w, uint32_t id, uint32_t *out);
/* All of id's clones in its block, the first one first (as
 * lw_clones_from of the first). */
uint32_t lw_clones_of(lw *w, uint32_t id, uint32_t *out);
tir_instr *lw_emit(lw *w, tir_op op, tir_ty ty, uint32_t dst, uint32_t a,
                   uint32_t b, uint32_t c, int64_t imm);
uint32_t lw_op2(lw *w, tir_op op, tir_ty ty, uint32_t a, uint32_t b);
/* Predicates a and b both (0: true): the other where one is 0, else a new
 * register of a AND b. */
uint32_t lw_pred_and(lw *w, uint32_t a, uint32_t b);
/* The `bytes`-byte swizzle (tir_swz) of shared address register a. */
uint32_t lw_swz(lw *w, uint32_t a, int64_t bytes);
uint32_t lw_iconst(lw *w, int64_t v);
void lw_const_into(lw *w, tir_ty ty, uint32_t d, double v);
uint32_t lw_nelem(lw *w, uint32_t id);
uint32_t lw_elem(lw *w, uint32_t op, uint32_t e, tir_ty ty);
double lw_scalar_value(lw *w, const wv_node *s);
double lw_read_fill(lw *w, const wv_node *read);
uint32_t lw_new_regs(lw *w, tir_ty ty, uint32_t n);
void lw_open_scope(lw *w);
void lw_close_scope(lw *w);
tir_ty lw_node_ty(const wv_node *n);
void lw_node(lw *w, uint32_t id);
void lw_block(lw *w, uint32_t block);

/* The workgroups along a grid axis of n that per-workgroup checks and
 * statistics (walks, masksplit) look at: all of them up to LW_WG_LOOK,
 * else LW_WG_LOOK spread evenly from the first to the last, so that
 * compile time does not grow with the grid (2^30 rows in 64-row tiles
 * took walks and masksplit 1.7 s, 2^40 would take hours). lw_wg_at(n, i)
 * for i < lw_wg_count(n). */
#define LW_WG_LOOK 65536
static inline int64_t lw_wg_count(int64_t n) {
  return n < LW_WG_LOOK ? n : LW_WG_LOOK;
}
static inline int64_t lw_wg_at(int64_t n, int64_t i) {
  if (n <= LW_WG_LOOK || i == LW_WG_LOOK - 1)
    return n <= LW_WG_LOOK ? i : n - 1;
  return (int64_t)((double)i * (double)(n - 1) / (LW_WG_LOOK - 1));
}

/* lower_expr.c: an index expression's register. lw_expr: i32, and an
 * error where the index analysis does not prove e (and the computation of
 * it) within 32 bits; lw_expr_wide: i32 where it does, else i64;
 * lw_expr64: i64 */
uint32_t lw_expr(lw *w, ex_t e);
uint32_t lw_expr_wide(lw *w, ex_t e);
uint32_t lw_expr64(lw *w, ex_t e);
ex_t lw_concrete(lw *w, ex_t e, uint32_t elem);
ex_t lw_index_of(lw *w, uint32_t id, wavec_sym dim);
ex_t lw_linear_tid(lw *w);
/* Threads of the kernel's waves in a workgroup (the producer warpgroup of
 * a specialized kernel not counted). */
static inline int64_t lw_block_threads(const lw *w) {
  return w->d->block[0] * w->d->block[1] * w->d->block[2];
}
/* The element offset of coordinates `coord` (one per dim of `mem`) in it,
 * as a register (64-bit where it may pass 2^31), the guards of ragged
 * dims ANDed into *mask (0: none) and their dims' bits into *guards; `id`
 * the access's node and `mapping` its mapping (for remarks, and whether a
 * dynamic dim's coordinate is known inside). */
uint32_t lw_mem_offset_at(lw *w, uint32_t id, uint32_t mapping,
                          const wv_node *mem, const ex_t *coord,
                          uint32_t *mask, uint32_t *guards);
ex_t lw_wave_id(lw *w);
int64_t lw_wave_stride(const lw *w, int a);
uint32_t *lw_wave_preds(lw *w, int a, int64_t W);
uint32_t lw_smem_addr(lw *w, ex_t e, ex_t at);
bool lw_eval_threads(lw *w, ex_t e, int64_t *out);
ex_t lw_split_const(lw *w, ex_t e, int64_t *c);

/* lower_layout.c */
const int64_t *lw_frag_table(lw *w, const wv_layout *l);
const uint32_t *lw_elem_reps(lw *w, const wv_layout *l);

/* lower_mem.c */
void lw_mem_coords(lw *w, uint32_t id, uint32_t mapping, const wv_node *mem,
                   uint32_t e, ex_t *out);
/* The loads of prefetched read `id` (lw->pref) for the iteration after
 * the loop variable's value `at` into its registers, masked past the
 * walk's end (`more`, a predicate, 0: none); `say`: the remark on the
 * guards it keeps (the loop's loads, of any iteration, not the first's). */
void lw_read_ahead(lw *w, uint32_t id, ex_t at, uint32_t more, bool say);
/* Knob `hw` = v as its user gave it, for messages: "hardware(K = V)" in
 * the source, or "--hardware K=V" on the command line (schedule.c). */
const char *lw_knob_text(wv_kernel *k, int hw, long long v);
/* A bounded iterate n's bound: the workgroup's tile of E, [*e0, *e1], moved
 * by the bound's offset where it has one (walks.c). */
void lw_rel_tile(lw *w, const wv_node *n, ex_t *e0, ex_t *e1);
void lw_read(lw *w, uint32_t id);
void lw_remark_wide(lw *w, uint32_t id, const wv_node *mem, uint32_t off);
void lw_write(lw *w, uint32_t id);
ex_t lw_staged_addr(lw *w, uint32_t id, const stage *st, uint32_t e);
/* The same with the coordinates along dims[0..n) moved by by[0..n). */
ex_t lw_staged_addr_moved(lw *w, uint32_t id, const stage *st, uint32_t e,
                          uint32_t n, const wavec_sym *dims, const ex_t *by);
void lw_staged_read(lw *w, uint32_t id, stage *st);
void lw_copies_fence(lw *w);
void lw_smem_access(lw *w, tir_op op, tir_ty ty, const ex_t *addr,
                    const uint32_t *regs, const uint32_t *masks, uint32_t ne,
                    ex_t at);

/* lower_ldmatrix.c */
bool lw_try_ldmatrix(lw *w, uint32_t id, const ex_t *addr, uint32_t ne,
                     tir_ty ty, ex_t at);

/* lower_elementwise.c */
void lw_register(lw *w, uint32_t id);
void lw_cast(lw *w, uint32_t id);
void lw_select(lw *w, uint32_t id);
void lw_self_index(lw *w, uint32_t id);
extern const tir_op lw_unary_ops[WV_OP_COUNT];
void lw_elementwise(lw *w, uint32_t id);

/* promote.c */
ex_t lw_stage_elem_off(wavec_ctx *ctx, const stage *st, uint32_t nd,
                       const ex_t *local);
bool lw_loop_invariant(lw *w, const wv_node *r, const wv_node *it);

/* lower_copy.c */
void lw_stage_issue(lw *w, stage *st, ex_t shift, ex_t at, uint32_t extra);
void lw_stage_copy(lw *w, stage *const *sts, uint32_t n);
ex_t lw_slot_at(lw *w, const stage *st, int64_t S, ex_t tile);

/* lower_mma.c. lw_exchange_plan (before the program, before
 * lw_parts_plan): the mmas whose waves exchange an operand instead of
 * leaving parts (w->xchg). An mma over a dim that W waves split leaves
 * each wave a part of the whole result; where the result is only added
 * to memory, each wave can instead compute 1/W of its columns over the
 * whole dim (wave c: columns [c N/W, (c + 1) N/W)), its lhs from every
 * wave's shared memory: no parts, no sum, 1/W of the accumulators. */
void lw_exchange_plan(lw *w);
void lw_mma(lw *w, uint32_t id);
/* Every tile a wgmma of the kernel reads from shared memory is staged
 * there, or the error lw_mma would give at its mma (why it cannot be);
 * from promote on. */
void lw_wgmma_staged(lw *w);

/* lower_reduce.c */
void lw_reduce(lw *w, uint32_t id);
/* The most shared memory a reduction across waves of the kernel takes
 * (before lowering). */
int64_t lw_reduce_bound(lw *w);

/* lower_convert.c; lw_convert_bound: the most shared memory a conversion
 * of the kernel takes (before lowering) */
void lw_convert(lw *w, uint32_t id);
int64_t lw_convert_bound(lw *w);
/* Does conversion `id` go through shared memory (not register moves)? */
bool lw_convert_via_smem(lw *w, uint32_t id);

/* lower_tma.c */
void lw_tma_prologue(lw *w);
void lw_tma_fill(lw *w, stage *const *piped, uint32_t n, int64_t S,
                 ex_t first, ex_t tile, uint32_t on, bool refill);
void lw_tma_acquire(lw *w, const stage *st, int64_t S, ex_t first,
                    ex_t tile);
ex_t lw_stage_slot(lw *w, stage *st);
/* Is st the first stage of its ring's barrier set (pipeline.c)? */
bool lw_set_first(const lw *w, const stage *st);
void lw_tma_tail(lw *w, const ring_plan *r);
void lw_tma_release(lw *w, const stage *st, int64_t S, ex_t first, ex_t tile,
                    uint32_t on, int lag);
/* lower_expr.c: the size of dim d, a constant or (dynamic) its symbol,
 * which lowers to T_PARAM */
ex_t lw_dim_size(lw *w, wavec_sym d);
/* lower_expr.c: a register with the tiles along grid axis a (a dynamic
 * dim's from its size) */
uint32_t lw_tiles_along(lw *w, int a);
/* lower_expr.c: the tile along grid axis a of block index i (a
 * register): i, or n - 1 - i where the schedule reverses the axis
 * (sched_plan.reverse; n: the tiles along a, 0 to compute them) */
uint32_t lw_tile_order(lw *w, int a, uint32_t i, uint32_t n);

/* lower_guard.c */
bool lw_bound_check(lw *w, ex_t c, ex_t size, uint32_t *mask);
void lw_remark_guards(lw *w, uint32_t id, const char *before,
                      const wavec_sym *dims, uint32_t n, const char *after);
uint32_t lw_elem_unpadded(lw *w, uint32_t op, uint32_t e, tir_ty ty,
                          wavec_sym d, double identity, bool *guarded);
/* The same for the element whose coordinate along d lies `move` further
 * (0: none): another wave's fragment of the same layout. */
uint32_t lw_elem_unpadded_moved(lw *w, uint32_t op, uint32_t e, tir_ty ty,
                                wavec_sym d, double identity, ex_t move,
                                bool *guarded);
bool lw_fills_with(lw *w, uint32_t op, double identity);

/* lower_loop.c */
void lw_iterate(lw *w, uint32_t id);
void lw_yield(lw *w, uint32_t id);
void lw_walk_bounds(lw *w, uint32_t id, uint32_t *rfirst, uint32_t *rlast,
                    int64_t *trips);

/* lower_store.c: the plan (before the program; it adds its buffer to the
 * staged bytes and its tensor map to the pipeline's), the epilogue at the
 * write, the wait for the stores before the program ends */
void lw_store_plan(lw *w);
/* Where write `id` is a clone of the adding write's tensor reduces: its
 * place among them (the last is w->add.write); else -1. */
int64_t lw_add_clone(const lw *w, uint32_t id);
/* Is WRITE id a clone of the tensor stores' write other than the last
 * (whose lowering stores every clone's elements)? */
bool lw_store_clone(const lw *w, uint32_t id);
void lw_store_remark(lw *w, uint32_t id);
void lw_store_write(lw *w, uint32_t id);
void lw_store_finish(lw *w);
/* An adding write with tensor reduces (w->add) whose waves hold parts
 * (lower_mem.c's sum_parts): the leader's wait for the buffer before the
 * parts' first barrier, each wave's summed elements put in the buffer, then
 * the reduces. */
void lw_store_add_wait(lw *w);
void lw_store_add_put(lw *w, uint32_t id, uint32_t e, uint32_t len,
                      const uint32_t *regs);
void lw_store_add_issue(lw *w, uint32_t id);
/* The slots where the waves of an adding write sum their parts
 * (sum_parts), the largest such write's, reserved after the staged tiles
 * and buffers (w->parts_base, parts_bytes). */
void lw_parts_plan(lw *w);
/* The slots' shared memory where W waves sum parts of ne f32 elements a
 * lane (sum_parts). */
int64_t lw_parts_slot_bytes(const lw *w, int64_t W, int64_t ne);

/* lower_sched.c */
void lw_sched_begin(lw *w);
void lw_sched_end(lw *w);
void lw_ring_advance(lw *w, ex_t first, ex_t last);
ex_t lw_ring_pos(lw *w, ex_t first, ex_t tile);

/* An opt-in pass's knob (turns: pingpong, overlap: overlap): -1 unset
 * (the pass only remarks where it would apply), else its value; *at is
 * where to point a diagnostic (the knob's line, else the kernel's). */
static inline int64_t lw_knob(const wv_kernel *k, int knob, wavec_loc *at) {
  bool given = k->hw.ints[knob] != 0;
  *at = given && k->hw.ints_loc[knob].line ? k->hw.ints_loc[knob] : k->loc;
  return given ? k->lw->d->hw[knob] : -1;
}

#endif
