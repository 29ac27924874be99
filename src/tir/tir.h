/* The thread program (TIR): what one thread of one wave executes, as a flat
 * list of instructions over numbered scalar registers, with structured
 * loops. The simulator (sim.c) and the PTX printer (ptx.c) consume exactly
 * this program.
 *
 * Invariants:
 *  - Every register has one type; an instruction's operands and result have
 *    the types its op requires (checked by tir_verify).
 *  - Control flow is uniform across a wave: loops run between bounds that
 *    are constants or registers computed from workgroup ids alone (at most
 *    a compile-time number of trips), and no instruction branches on a
 *    lane-dependent value, so a wave executes in lockstep and masks
 *    (predicates) are the only divergence.
 *  - Integer division and modulus (T_DIV, T_MOD) are floor semantics, as
 *    in the index algebra; every index in the program is computed by
 *    these ops. A kernel's own integer `/` and `%` truncate (T_TDIV,
 *    T_TREM), as in C and in PTX's div.s32 / rem.s32.
 *  - Integer registers wrap as two's complement integers of their width,
 *    as the GPU's do: an i32 result is the low 32 bits of the exact one.
 *    Index arithmetic never wraps: every i32 index value (and every
 *    partial sum or product of the instruction chain that computes it) is
 *    proved within 32 bits by the interval bounds of the index algebra
 *    (lower_expr.c); what is not is computed in i64 (TY_I64), which only
 *    index arithmetic uses: global element offsets of large tensors and
 *    the bounds guards on their coordinates.
 *  - Float values are stored rounded to their register type: an f16 add
 *    computes exactly and rounds once to f16 (round to nearest even).
 *  - Shared memory is addressed in bytes; an access of type T is aligned to
 *    the size of T, a vector access (T_LDSV, T_STSV, T_LDGV, T_STGV) of n
 *    elements to n times that. Global offsets count elements of the argument.
 *  - An asynchronous copy (T_CPA) writes shared memory only when a T_CPWAIT
 *    of its thread retires its group; until then nothing may touch its
 *    bytes, and other threads see them only after a barrier that follows
 *    the wait.
 *  - A wgmma (T_WGMMA) reads shared memory and its accumulator registers
 *    while it runs: the wgmmas since the last T_WGWAIT or T_WGCOMMIT form a
 *    group, which the next of them closes; until a wait retires the group,
 *    only other wgmmas touch its registers (accumulating in order into the
 *    same registers with the same shape) and no thread writes the shared
 *    bytes it reads. It reads them through the async proxy: bytes a
 *    thread wrote (a store, or a T_CPA, which lands through the generic
 *    proxy) only after that thread ran a T_FENCEPX once they landed, and a
 *    barrier followed it (bytes a tensor copy landed need no fence).
 *    Its shared tiles hold rows of W = 128, 64 or 32 bytes swizzled as
 *    tir_swz says, from addresses that are multiples of 8 W.
 *  - An mbarrier (T_MBINIT) is 8 bytes of shared memory that nothing else
 *    touches. A phase completes when its arrivals (T_MBARRIVE) have all
 *    come and the transaction bytes they announced have all landed; a
 *    T_MBWAIT names the phase it waits for by its parity, so a waiter must
 *    observe every phase of a barrier it waits on (two phases apart are
 *    indistinguishable). A tensor copy (T_TMA) writes its box to shared
 *    memory at some point before the phase of its barrier completes; its
 *    bytes may be read only by a thread that waited for that phase (or
 *    after a workgroup barrier that follows such a wait), and it may
 *    overwrite bytes only after every earlier reader's arrival on some
 *    mbarrier has been waited for by the issuing thread (or a workgroup
 *    barrier lies between). Other threads use a barrier only after the
 *    initialising thread's T_FENCE and a workgroup barrier.
 *  - A tensor store (T_TMAST) reads its shared bytes at some point before
 *    a T_BULKWAITR (or T_BULKWAIT) of its thread retires its group: until
 *    then, and for other threads until a barrier that follows that wait,
 *    nothing writes them; it reads only bytes whose writers ran T_FENCEPX
 *    after writing them, with a barrier between the fence and the store
 *    (bytes a tensor copy landed need no fence). Its global writes are done
 *    once a T_BULKWAIT retires its group; a thread ends with none in
 *    flight.
 *  - Clusters (tir_prog.cluster): a workgroup's mbarriers are used by
 *    another workgroup of its cluster (a T_MBARRIVE of TIR_ARRIVE_CLUSTER,
 *    a T_TMA of TIR_TMA_MULTICAST completing its bytes on them) only after
 *    a T_CLUSTERBAR that follows their initialising thread's T_FENCE. A
 *    multicast copy's bytes, in every workgroup it lands in, follow the
 *    tensor-copy rules above: it overwrites bytes only after every earlier
 *    reader's arrival, in every workgroup, has been waited for by the
 *    issuing thread. No workgroup ends while another of its cluster may
 *    still arrive at its mbarriers or copy into its shared memory (its
 *    producer waits for the last releases first).
 *  - Roles: a T_IF on a predicate uniform across each wave (a warpgroup's
 *    role, from its thread ids) runs a region only some waves run; regions
 *    and loops nest. A T_BAR with a thread count (a named barrier) is
 *    reached by exactly the waves of that many threads; one without is
 *    reached by every wave. T_REGINC / T_REGDEC (setmaxnreg) take a count
 *    of 24 to 256 in steps of 8, run by every warp of a warpgroup alike,
 *    and only in a program whose registers at entry are fixed (maxnreg):
 *    the warpgroups share what the launch gave the workgroup.
 *  - Turns (T_TURNWAIT, T_TURNPASS): a barrier that only orders when
 *    waves go on, never memory (the race checks take nothing from it).
 *    Each barrier's waiting and passing waves alternate: its passes never
 *    make up its thread count alone (a wave passing twice before the
 *    waiter took the first), and every pass is waited for by the end. */
#ifndef WV_TIR_H
#define WV_TIR_H

#include "ir/ir.h"

/* Register types. The 8-bit ones hold what 8-bit elements load as and are
 * stored from: TY_E4M3 and TY_E5M2 values of those formats, TY_I8 an
 * integer in [-128, 127]; only moves, conversions, loads, stores and mmas
 * touch them. TY_I64 is index arithmetic's only (see the invariants):
 * constants, moves, add, sub, mul, floor div and mod, min, max, selp and
 * setp on i64 operands, cvt from and to i32 (sign-extending, truncating
 * a value that fits), and the offset of a global access. */
typedef enum tir_ty {
  TY_PRED, TY_I32, TY_F16, TY_BF16, TY_F32, TY_E4M3, TY_E5M2, TY_I8, TY_I64,
  TY_COUNT
} tir_ty;
extern const char *const tir_ty_names[TY_COUNT];

/* Every op, declared once: enum, name, number of register operands (a, b,
 * c), and how the PTX printer (ptx.c) writes it, as format strings (0: by
 * code of its own in ptx.c):
 *  - ptx: the instruction on its registers as they are; for an arithmetic
 *    op (one with a float form, or floor division and modulus) its form on
 *    i32 registers;
 *  - fptx: an arithmetic op on float registers (f16, bf16, f32), computed
 *    in f32: the operands widened to f32 (exact), the result rounded once
 *    to the register's type (compute exactly, round once).
 * In a format "; " separates instructions; %= is dst, %0 %1 %2 are a, b, c
 * (in fptx their f32 values), %i is imm, %m the swizzle mask of imm
 * (T_SWZ), %t one temporary (.b32; in fptx .f32), %s the special register
 * imm names, %T the move type of ty (pred, b32, b16, f32), %% a '%'. */
#define TIR_OPS(X)                                                             \
  /* dst = imm (ival or fval) */                                               \
  X(T_CONST, "const", 0, 0, 0)                                                 \
  /* dst = special register imm (TIR_SREG_*) */                                \
  X(T_SREG, "sreg", 0, "mov.u32 %=, %s", 0)                                    \
  X(T_MOV, "mov", 1, "mov.%T %=, %0", 0)                                       \
  X(T_ADD, "add", 2, "add.s32 %=, %0, %1", "add.rn.f32 %=, %0, %1")            \
  X(T_SUB, "sub", 2, "sub.s32 %=, %0, %1", "sub.rn.f32 %=, %0, %1")            \
  X(T_MUL, "mul", 2, "mul.lo.s32 %=, %0, %1", "mul.rn.f32 %=, %0, %1")         \
  /* f32 only: a * b + c rounded once (pass `contract`) */                   \
  X(T_FMA, "fma", 3, 0, "fma.rn.f32 %=, %0, %1, %2")                           \
  /* ints: floor division */                                                   \
  X(T_DIV, "div", 2, 0, "div.rn.f32 %=, %0, %1")                               \
  /* ints: floor modulus */                                                    \
  X(T_MOD, "mod", 2, 0, 0)                                                     \
  /* ints: quotient truncated toward zero (C), and its remainder           \
   * a - b * tdiv(a, b): the kernel's own / and % */                         \
  X(T_TDIV, "tdiv", 2, "div.s32 %=, %0, %1", 0)                                \
  X(T_TREM, "trem", 2, "rem.s32 %=, %0, %1", 0)                                \
  /* i32: a's 32 bits shifted right by b in [0, 31], zeros shifted in */      \
  X(T_SHR, "shr", 2, "shr.b32 %=, %0, %1", 0)                                  \
  /* NaN if either is */                                                       \
  X(T_MIN, "min", 2, "min.s32 %=, %0, %1", "min.NaN.f32 %=, %0, %1")           \
  X(T_MAX, "max", 2, "max.s32 %=, %0, %1", "max.NaN.f32 %=, %0, %1")           \
  X(T_NEG, "neg", 1, "neg.s32 %=, %0", "neg.f32 %=, %0")                       \
  X(T_ABS, "abs", 1, "abs.s32 %=, %0", "abs.f32 %=, %0")                       \
  /* results below 2^-126 are 0 (flushed) */                                   \
  X(T_EXP2, "exp2", 1, 0, "ex2.approx.ftz.f32 %=, %0")                         \
  X(T_EXP, "exp", 1, 0, 0)                                                     \
  X(T_LOG2, "log2", 1, 0, 0)                                                   \
  X(T_RCP, "rcp", 1, 0, "rcp.rn.f32 %=, %0")                                   \
  X(T_SQRT, "sqrt", 1, 0, "sqrt.rn.f32 %=, %0")                                \
  X(T_RSQRT, "rsqrt", 1, 0, "sqrt.rn.f32 %t, %0; rcp.rn.f32 %=, %t")           \
  X(T_TANH, "tanh", 1, 0, 0)                                                   \
  /* dst(pred) = a CMP b, CMP = imm (TIR_CMP_*) */                             \
  X(T_SETP, "setp", 2, 0, 0)                                                   \
  /* preds */                                                                  \
  X(T_AND, "and", 2, "and.pred %=, %0, %1", 0)                                 \
  /* dst = a ? b : c */                                                        \
  X(T_SELP, "selp", 3, 0, 0)                                                   \
  /* dst(ty) = a converted (RNE; i32 <-> i64 exact, tir_ty) */                 \
  X(T_CVT, "cvt", 1, 0, 0)                                                     \
  /* dst = arg[imm][a] if b (b may be 0: true), else fimm (a read's fill;  \
   * 0 by default); a (the element offset) i32 or i64, as in T_STG, T_LDGV \
   * and T_CPA */                                                            \
  X(T_LDG, "ldg", 2, 0, 0)                                                     \
  /* arg[imm][a] = b if c */                                                   \
  X(T_STG, "stg", 3, 0, 0)                                                     \
  /* arg[imm][a] += b if c: f32, atomic (the adds of one element come in    \
   * some order), subnormal operands and results flushed to zero (PTX's     \
   * red.global.add.f32); write(..., reduce = add). With a list (nlist 2    \
   * or 4; b unused): arg[imm][a + j] += list[j], aligned to its size       \
   * (one vector red on sm_90, one red each before) */                     \
  X(T_REDG, "redg", 3, 0, 0)                                                   \
  /* dst = shared[byte a] */                                                   \
  X(T_LDS, "lds", 1, 0, 0)                                                     \
  /* shared[byte a] = b if c */                                                \
  X(T_STS, "sts", 3, 0, 0)                                                     \
  /* list = arg[imm][a .. a+n) if b; aligned */                                \
  X(T_LDGV, "ldg.v", 2, 0, 0)                                                  \
  /* list = shared[byte a ..]; aligned */                                      \
  X(T_LDSV, "lds.v", 1, 0, 0)                                                  \
  /* shared[byte a ..] = list if b; aligned */                                 \
  X(T_STSV, "sts.v", 2, 0, 0)                                                  \
  /* arg[imm][a .. a+n) = list if b (of the argument's type); aligned */       \
  X(T_STGV, "stg.v", 2, 0, 0)                                                  \
  /* imm 8x8 16-bit matrices: lane 8j+r gives the row r address a of matrix    \
   * j; lane l gets list[2j..2j+1] = its row l/4, cols 2(l%4), +1 (PTX         \
   * ldmatrix .x1/.x2/.x4) */                                                  \
  X(T_LDSM, "ldsm", 1, 0, 0)                                                   \
  /* the same, transposed: lane l gets rows 2(l%4), +1 of column l/4           \
   * (.trans) */                                                               \
  X(T_LDSMT, "ldsm.t", 1, 0, 0)                                                \
  /* shared[byte a .. +imm2) = arg[imm][b ..] if c, arriving at a later        \
   * T_CPWAIT; imm2 16, 8 or 4 bytes, aligned to it; with a predicate          \
   * list[0] (nlist 1), zeros where it is false (past an edge: nothing is      \
   * read) */                                                                  \
  X(T_CPA, "cp.async", 3, 0, 0)                                                \
  /* closes the thread's group of copies */                                    \
  X(T_CPCOMMIT, "cp.commit", 0, "cp.async.commit_group", 0)                    \
  /* waits until at most imm of the thread's closed groups are in flight */    \
  X(T_CPWAIT, "cp.wait", 0, "cp.async.wait_group %i", 0)                       \
  /* dst = a ^ ((a >> 3) & mask): the imm-byte swizzle (128, 64 or 32;     \
   * tir_swz) of shared byte address a; %m is its mask */                      \
  X(T_SWZ, "swz", 1,                                                           \
    "shr.u32 %t, %0, 3; and.b32 %t, %t, %m; xor.b32 %=, %0, %t", 0)            \
  /* acc (in place) += lhs . rhs^T: see below */                               \
  X(T_WGMMA, "wgmma", 2, 0, 0)                                                 \
  /* closes the group of wgmmas issued since the last close, if any; all   \
   * but the imm newest groups have retired. imm2 TIR_WAIT_CARRY: the wait  \
   * that ends an iteration whose last group runs on into the next one */   \
  X(T_WGWAIT, "wgmma.wait", 0, 0, 0)                                          \
  /* closes the group of wgmmas issued since the last close (one or more) */ \
  X(T_WGCOMMIT, "wgmma.commit", 0, 0, 0)                                      \
  /* barrier imm (0: the workgroup's) of imm2 threads (0: every thread of    \
   * the workgroup; else a multiple of 32, the waves that reach it) */        \
  X(T_BAR, "bar", 0, 0, 0)                                                     \
  /* turns (ping-pong): waits at barrier a (an i32 register, 2 to 15,       \
   * uniform) of imm2 threads, which the waves that pass it make up (a       \
   * bar.sync that orders the waves' issue, no memory); the wave passes      \
   * barrier a if b (0: true), without waiting (bar.arrive); in PTX a pass   \
   * commits the open group of wgmmas first (the simulator's groups stay a   \
   * wait's: it takes them as in flight longer, never shorter) */             \
  X(T_TURNWAIT, "turn.wait", 1, 0, 0)                                          \
  X(T_TURNPASS, "turn.pass", 2, 0, 0)                                          \
  /* if a (a predicate, uniform across the wave): the instructions up to     \
   * the T_ENDIF it matches, else none of them */                            \
  X(T_IF, "if", 1, 0, 0)                                                       \
  X(T_ENDIF, "endif", 0, 0, 0)                                                 \
  /* the thread ends here (a role that has nothing more to do) */             \
  X(T_EXIT, "exit", 0, "exit", 0)                                              \
  /* the wave's (a warpgroup's) registers per thread become imm: more, or    \
   * fewer (setmaxnreg; see tir_prog.maxnreg) */                              \
  X(T_REGINC, "setmaxnreg.inc", 0, "setmaxnreg.inc.sync.aligned.u32 %i", 0)    \
  X(T_REGDEC, "setmaxnreg.dec", 0, "setmaxnreg.dec.sync.aligned.u32 %i", 0)    \
  /* the mbarrier at shared byte a starts: imm arrivals a phase; if b (0:    \
   * true) */                                                                 \
  X(T_MBINIT, "mbar.init", 2, 0, 0)                                            \
  /* arrives at mbarrier a if b; imm > 0 first expects imm more transaction   \
   * bytes (arrive.expect_tx); imm2 TIR_ARRIVE_CLUSTER (imm 0): arrives at    \
   * the mbarrier at a of every workgroup of the cluster, its own included,   \
   * once each (mapa + a remote arrive.release.cluster) */                   \
  X(T_MBARRIVE, "mbar.arrive", 2, 0, 0)                                        \
  /* if c (uniform; 0: true): waits until the phase of mbarrier a of parity   \
   * b (i32, 0 or 1) has completed */                                          \
  X(T_MBWAIT, "mbar.wait", 3, 0, 0)                                            \
  /* tensor map imm's box at coordinates list (elements, the argument's dim   \
   * order) to shared a, completing its bytes on mbarrier b; if c (0: true); \
   * imm2 TIR_TMA_MULTICAST: the box lands at a in every workgroup of the    \
   * cluster and completes its bytes on the mbarrier at b of each */          \
  X(T_TMA, "tma.load", 3, 0, 0)                                                \
  /* every thread of every workgroup of the cluster arrives, then waits for  \
   * all of them (barrier.cluster arrive.release / wait.acquire): a          \
   * workgroup barrier that also orders the cluster's workgroups */          \
  X(T_CLUSTERBAR, "cluster.bar", 0, 0, 0)                                      \
  /* the thread's earlier shared writes and mbarrier inits are seen by the    \
   * async proxy (copies, wgmma) after a barrier */                            \
  X(T_FENCE, "fence.async", 0,                                                 \
    "fence.mbarrier_init.release.cluster; fence.proxy.async.shared::cta", 0)   \
  /* tensor store: the box of tensor map imm at coordinates list (elements,  \
   * the argument's dim order) from shared a (laid out as T_TMA lands it) to \
   * global memory, elements outside the tensor dropped; if c (0: true);     \
   * imm2 = TIR_TMAST_ADD: added into global memory instead (f32, as a     \
   * T_REDG adds: atomically per element, subnormals flushed) */             \
  X(T_TMAST, "tma.store", 3, 0, 0)                                             \
  /* closes the thread's group of tensor stores */                             \
  X(T_BULKCOMMIT, "bulk.commit", 0, "cp.async.bulk.commit_group", 0)           \
  /* waits until at most imm of the thread's closed groups of tensor stores  \
   * still read shared memory (.read), or are in flight at all */              \
  X(T_BULKWAITR, "bulk.wait.read", 0, "cp.async.bulk.wait_group.read %i", 0)   \
  X(T_BULKWAIT, "bulk.wait", 0, "cp.async.bulk.wait_group %i", 0)              \
  /* the thread's earlier shared writes are seen by the async proxy (tensor  \
   * stores) after a barrier */                                                \
  X(T_FENCEPX, "fence.proxy", 0, "fence.proxy.async.shared::cta", 0)           \
  /* dst = a of lane (lane ^ imm) */                                           \
  X(T_SHFL, "shfl", 1, 0, 0)                                                   \
  /* list: dst..., a..., b..., c...; imm kind */                               \
  X(T_MMA, "mma", 0, 0, 0)                                                     \
  /* dst = the run-time size imm (of tir_prog sizes: a dynamic dim) */        \
  X(T_PARAM, "param", 0, "mov.b32 %=, %%sz%i", 0)                             \
  /* dst = counter from a (0: 0) while below b (0: imm), imm the most          \
   * trips; the body to ENDLOOP, which has the same a, b */                    \
  X(T_LOOP, "loop", 2, 0, 0)                                                   \
  X(T_ENDLOOP, "endloop", 2, 0, 0)

/* The swizzles of shared tiles (T_SWZ, a tensor map's, a wgmma
 * descriptor's), by their span of W = 128, 64 or 32 bytes: address bits
 * 4 and up (the 16-byte chunk in a W-byte row) are XORed with the bits 3
 * places above them, log2(W / 16) bits of each. With rows of W bytes from
 * an address that is a multiple of 8 W, the chunk c of row r moves to
 * c ^ (r mod 8) for W = 128, c ^ ((r / 2) mod 4) for 64, c ^ ((r / 4) mod
 * 2) for 32: the pattern repeats every 8 W bytes (PTX ISA, "Tensor
 * swizzling modes"; CU_TENSOR_MAP_SWIZZLE_128B/64B/32B). */
static inline bool tir_swz_ok(int64_t w) {
  return w == 128 || w == 64 || w == 32;
}
static inline int64_t tir_swz_mask(int64_t w) { return (w / 16 - 1) << 4; }
/* log2(W / 16): 3, 2, 1 for 128, 64, 32 (0: none), which is the driver's
 * CUtensorMapSwizzle (CU_TENSOR_MAP_SWIZZLE_128B 3, 64B 2, 32B 1, NONE 0);
 * a wgmma descriptor's mode is 4 minus it (128B 1, 64B 2, 32B 3). */
static inline int tir_swz_code(int64_t w) {
  return w == 128 ? 3 : w == 64 ? 2 : w == 32 ? 1 : 0;
}
static inline int64_t tir_swz(int64_t a, int64_t w) {
  return a ^ ((a >> 3) & tir_swz_mask(w));
}

/* T_WGMMA, issued by a warpgroup (a 128-lane wave), asynchronous: until a
 * T_WGWAIT no other instruction touches its list registers. imm is the mma
 * kind plus the flags below; list is the N/2 accumulator registers (read
 * and written in place), then, with TIR_WG_A_REGS, the lhs's 8 fragment
 * registers. A shared operand is rows of W bytes swizzled as tir_swz says,
 * W its own (tir_wg_swz: 128, 64 or 32); e the bytes of an element, K the
 * mma's (16 of 16-bit elements, 32 of 8-bit):
 *  - lhs (without TIR_WG_A_REGS): 64 x K, row m at a + W m; with
 *    TIR_WG_A_MN stored M-contiguous instead: element (m, k) at a + W k
 *    + e m (one panel: a wave's 64 rows are W bytes);
 *  - rhs: N x K, row n at b + W n; with TIR_WG_B_MN the rhs is stored
 *    N-contiguous instead: element (n, k) at b + W k + e (n mod W/e) +
 *    imm2 (n div W/e), imm2 the stride of its W-byte column panels. */
enum {
  TIR_WG_KIND = 0xff,
  TIR_WG_A_REGS = 0x100,
  TIR_WG_B_MN = 0x200,
  TIR_WG_A_MN = 0x400,
  /* 2-bit fields: operand r's W is 128 >> field (0: 128 bytes) */
  TIR_WG_SWZ_A = 11,
  TIR_WG_SWZ_B = 13
};
static inline int64_t tir_wg_swz(int64_t imm, int r) {
  return 128 >> ((imm >> (r ? TIR_WG_SWZ_B : TIR_WG_SWZ_A)) & 3);
}
static inline int64_t tir_wg_swz_flag(int64_t w, int r) {
  return (int64_t)(3 - tir_swz_code(w)) << (r ? TIR_WG_SWZ_B : TIR_WG_SWZ_A);
}
enum { TIR_WAIT_CARRY = 1 }; /* T_WGWAIT imm2 */
/* T_LOOP and T_ENDLOOP imm2: the body issues the next iteration's first
 * groups of wgmmas after its last wgmma (pass `ahead`); the carry wait
 * before its release keeps them in flight into the next iteration */
enum { TIR_LOOP_AHEAD = 1 };

typedef enum tir_op {
#define X(e, name, n, ptx, fptx) e,
  TIR_OPS(X)
#undef X
      T__COUNT
} tir_op;

enum { TIR_SREG_TID_X, TIR_SREG_TID_Y, TIR_SREG_TID_Z, TIR_SREG_CTAID_X,
       TIR_SREG_CTAID_Y, TIR_SREG_CTAID_Z };
enum { TIR_CMP_GT, TIR_CMP_LT, TIR_CMP_GE, TIR_CMP_LE, TIR_CMP_EQ,
       TIR_CMP_NE };

struct tir_prog;
typedef struct tir_instr {
  tir_op op;
  tir_ty ty;          /* the type of dst (or of the stored value) */
  uint32_t dst, a, b, c;
  int64_t imm;
  double fimm;
  int64_t imm2;       /* T_WGMMA: the rhs panel stride (TIR_WG_B_MN) */
  uint32_t *list;     /* T_MMA, T_WGMMA, vector and ldmatrix registers, */
                      /* T_TMA coordinates */
  uint32_t nlist;
  wavec_loc loc;      /* the source line it comes from */
  uint32_t match;     /* T_LOOP: index of its T_ENDLOOP and back */
  uint32_t tag;       /* T_WGMMA, a slot release: TIR_TAG_* below */
} tir_instr;

/* Does op read or write shared memory as an ordinary access (not a copy,
 * a tensor copy or a wgmma)? */
static inline bool tir_shared_access(tir_op op) {
  return op == T_STS || op == T_STSV || op == T_LDS || op == T_LDSV ||
         op == T_LDSM || op == T_LDSMT;
}

/* T_TMAST's imm2: the box is added into global memory (a tensor reduce). */
enum { TIR_TMAST_ADD = 1 };
/* T_TMA's imm2: the box is multicast to every workgroup of the cluster.
 * T_MBARRIVE's imm2: the arrival is at every workgroup's barrier. */
enum { TIR_TMA_MULTICAST = 1 };
enum { TIR_ARRIVE_CLUSTER = 1 };

/* Shared scratch regions: the tag of the shared-memory accesses that use
 * them, and of a T_BAR that orders only their accesses (no wgmma reads
 * them, so wgmmas may stay in flight across it: pass waits); with
 * TIR_BAR_REUSE, a barrier that only waits for the region's last readers
 * before it is written again (pass `barriers` drops it where another one
 * already follows every earlier access of the region). Nothing else
 * touches their bytes. */
enum {
  TIR_REGION_SCRATCH = 1, /* conversions, reductions across waves */
  TIR_REGION_PARTS = 2,   /* the slots where waves sum their parts */
  TIR_REGION_STORE = 3,   /* the tensor stores' (and reduces') buffer */
  TIR_REGION_COUNT = 4,
  TIR_REGION_MASK = 0xff,
  TIR_BAR_REUSE = 0x100
};

/* The slots of tensor-copy rings (lower_tma.c) a T_WGMMA reads, and the
 * slot a release (a T_MBARRIVE of no bytes) gives back: a bit per ring
 * stage (TIR_TAG_STAGE, pipeline.c numbers them), and TIR_TAG_PREV where
 * the slot is the previous iteration's tile's rather than the current
 * one's. A wgmma of tag 0 reads no ring's slot; a release of tag 0 stays
 * where the lowering put it (the pass `release` moves tagged ones). */
enum { TIR_TAG_STAGES = 31 }; /* stage bits; bit 31: */
#define TIR_TAG_PREV (1u << 31)
#define TIR_TAG_STAGE(i) (1u << ((i) < TIR_TAG_STAGES ? (i) : TIR_TAG_STAGES - 1))

/* A tensor map (CUtensorMap), built at launch for argument `arg` (its
 * shape, row-major) and passed as a kernel parameter after the pointers:
 * a T_TMA of it copies the box of `box` elements per dim (the argument's
 * dim order) whose first element is at its coordinates; elements outside
 * the tensor read as 0. The box lands row-major (last dim contiguous) at
 * the shared address, swizzled (tir_swz) when swz is 128, 64 or 32 (then
 * the last dim is swz bytes and the address a multiple of 8 swz), else
 * 128-aligned. */
typedef struct tir_tmap {
  uint32_t arg;
  uint32_t rank;              /* the argument's dims, at most 5 */
  int64_t box[WV_MAX_DIMS];   /* each 1 to 256 */
  int64_t swz;                /* the swizzle's bytes, or 0: none */
} tir_tmap;

/* The bytes one copy of tensor map m brings. */
int64_t tir_tmap_bytes(const struct tir_prog *p, const tir_tmap *m);

typedef struct tir_arg {
  const char *name;
  wavec_dtype dt;
  uint32_t ndims;
  int64_t shape[WV_MAX_DIMS]; /* 0 for a dynamic dim until an instance */
  int64_t elems;              /* 0 with a dynamic dim until an instance */
  uint32_t dyn[WV_MAX_DIMS];  /* 1 + its size's index in sizes, or 0 */
  bool written;       /* some instruction stores to it */
} tir_arg;

/* A size known only at launch (a dynamic dimension), a kernel parameter
 * (`.param .u32` after the pointers and tensor maps). */
typedef struct tir_size {
  const char *name;
  wavec_sym dim;
  int64_t multiple; /* every value is a multiple of it */
  int64_t most;     /* the largest value (the index analysis assumes it) */
  wavec_loc loc;    /* its dynamic(...) entry (line 0: none known) */
} tir_size;

typedef struct tir_prog {
  VEC(tir_instr) code;
  VEC(tir_ty) regs;   /* type of each register; register 0 is "none" */
  VEC(tir_arg) args;
  VEC(tir_tmap) tmaps; /* parameters after the argument pointers */
  VEC(tir_size) sizes; /* parameters after the tensor maps */
  int64_t grid[3], block[3];
  /* along axis a with grid_size[a] != 0 the grid is ceil(size /
   * grid_tile[a]) of size grid_size[a] - 1 (grid[a] is 0 until then) */
  uint32_t grid_size[3];
  int64_t grid_tile[3];
  /* persistent tiles: the workgroup tiles along each axis are tiles[a]
   * (grid_size / grid_tile as above where they are dynamic), and the grid
   * is min(their product, persistent) workgroups along x, each looping
   * over tiles (0: not persistent; one tile a workgroup) */
  int64_t persistent;
  int64_t tiles[3];
  /* clusters (tir.h's invariants, Clusters): workgroups %ctaid.x = C c + r,
   * r < C, form cluster c (0 or 1: none); the grid along x (after the
   * persistent tiles) is a multiple of C */
  int64_t cluster;
  const int64_t *size_vals; /* an instance's sizes (tir_instance), or NULL */
  int lanes;
  int mma;            /* wavec_mma_kind used by T_MMA, or -1 */
  /* where hardware(threads_per_wave = ..., mma = ...) gave lanes and mma
   * (line 0: not in the source; the target's, or --hardware's) */
  wavec_loc lanes_loc, mma_loc;
  int64_t smem_bytes;
  int64_t wgs_per_sm; /* hardware(workgroups_per_sm = N), or 0 */
  /* registers per thread at entry (PTX .maxnreg), or 0 (ptxas picks): the
   * workgroup's pool is this many per thread, which T_REGINC / T_REGDEC
   * move between warpgroups */
  int64_t maxnreg;
} tir_prog;

/* x as an integer register of type ty holds it, as cast() and PTX's
 * cvt.rni.sat convert: to nearest (even), saturated to the type (i32, i8),
 * NaN 0; a predicate is x != 0. A scalar used as an integer (inf, 1e30, a
 * read's fill of -inf) takes this value. */
int64_t tir_int_of(tir_ty ty, double x);


/* The passes from the expanded graph to the thread program, in the order
 * they run; each file's top says its contract. The five before `lower`
 * are analyses: they keep their results in the lowering's state (k->lw,
 * tir/lower.h), which --print-after prints and a verifier checks. */
wavec_status wv_pass_promote(wv_kernel *k);   /* promote.c */
wavec_status wv_pass_pipeline(wv_kernel *k);  /* pipeline.c */
wavec_status wv_pass_walks(wv_kernel *k);     /* walks.c */
wavec_status wv_pass_masksplit(wv_kernel *k); /* masksplit.c */
wavec_status wv_pass_schedule(wv_kernel *k);  /* schedule.c */
void wv_print_promote(wv_kernel *k, wv_buf *b);
void wv_print_pipeline(wv_kernel *k, wv_buf *b);
void wv_print_walks(wv_kernel *k, wv_buf *b);
void wv_print_masksplit(wv_kernel *k, wv_buf *b);
void wv_print_schedule(wv_kernel *k, wv_buf *b);
wavec_status wv_verify_promote(wv_kernel *k);
wavec_status wv_verify_pipeline(wv_kernel *k);
wavec_status wv_verify_walks(wv_kernel *k);
wavec_status wv_verify_masksplit(wv_kernel *k);
wavec_status wv_verify_schedule(wv_kernel *k);
/* Pass `lower` (lower.c): the expanded graph of k becomes its thread
 * program. */
wavec_status wv_pass_lower(wv_kernel *k);
/* After lower: the ring depth promote should try instead where the one it
 * chose leaves the workgroup more shared memory than a GPU gives one (one
 * slot fewer), else 0; past that, a warpgroup kernel (sm_90a's alone) is
 * refused here, so that the simulator does not run what no GPU can. */
int64_t wv_lower_refit(wv_kernel *k);
tir_prog *wv_kernel_tir(wv_kernel *k);
void tir_print(wavec_ctx *ctx, const tir_prog *p, wv_buf *b);
wavec_status tir_verify(wavec_ctx *ctx, const tir_prog *p);
/* Pass `waits` (waits.c): the full wgmma waits; its verifier checks that
 * no instruction touches what a wgmma in flight uses and that a loop that
 * carries a group into its next iteration keeps to the rule of tir.h. */
wavec_status wv_pass_waits(wv_kernel *k);
wavec_status tir_verify_waits(wavec_ctx *ctx, const tir_prog *p);
/* Every T_LOOP and its T_ENDLOOP, every T_IF and its T_ENDIF name each
 * other (match) again, after a pass inserted instructions (waits.c). */
void tir_match_loops(wavec_ctx *ctx, tir_prog *p);
/* A pass that rewrote the program into a new vector `code` (of tir_instr)
 * installs it: p's code becomes it, its loops matched anew (their indexes
 * moved). */
#define tir_install_code(ctx, p, code)                                         \
  do {                                                                         \
    (p)->code.v = (code).v;                                                    \
    (p)->code.n = (code).n;                                                    \
    (p)->code.cap = (code).cap;                                                \
    tir_match_loops(ctx, p);                                                   \
  } while (0)
/* Does the op write its dst register? */
static inline bool writes_dst(const tir_instr *in) {
  return in->dst && in->op != T_STG && in->op != T_STS && in->op != T_BAR &&
         in->op != T_MMA && in->op != T_CPA;
}

/* Does the op write every register of its list (vector and matrix
 * loads)? */
static inline bool writes_list(const tir_instr *in) {
  return in->op == T_LDGV || in->op == T_LDSV || in->op == T_LDSM ||
         in->op == T_LDSMT;
}

/* A new register of type ty (a pass that adds instructions). */
static inline uint32_t tir_new_reg(wavec_ctx *ctx, tir_prog *p, tir_ty ty) {
  vec_push(ctx, &p->regs, ty);
  return p->regs.n - 1;
}

/* Does `in` read register r (an operand, or one of its list: conservative
 * for the ops that only write theirs)? Does it touch r at all? */
static inline bool reads_reg(const tir_instr *in, uint32_t r) {
  if (!r)
    return false;
  if (in->a == r || in->b == r || in->c == r)
    return true;
  for (uint32_t e = 0; e < in->nlist; e++)
    if (in->list[e] == r)
      return true;
  return false;
}

static inline bool touches_reg(const tir_instr *in, uint32_t r) {
  return r && (in->dst == r || reads_reg(in, r));
}

/* Integer or predicate arithmetic without side effects (an address's, a
 * counter's, a guard's): safe to compute again, earlier or on registers
 * of its own, from the same operands. */
bool tir_int_pure(const tir_prog *p, const tir_instr *in);

/* Does `in` write register r? (Its result, a load's list, a wgmma's or
 * an mma's accumulators.) */
static inline bool writes_reg(const tir_instr *in, uint32_t r) {
  if (!r)
    return false;
  if (in->dst == r && writes_dst(in))
    return true;
  bool list = writes_list(in) || in->op == T_WGMMA || in->op == T_MMA;
  for (uint32_t e = 0; list && e < in->nlist; e++)
    if (in->list[e] == r)
      return true;
  return false;
}

/* Pass `contract` (contract.c): products into fused multiply-adds. */
wavec_status wv_pass_contract(wv_kernel *k);
/* Pass `barriers`. require: lower. Drops each barrier tagged with a
 * scratch region (its only job: the region's earlier readers are done
 * before it is written again) where, on every path to it, another barrier
 * follows the region's last access (a forward dataflow over the loops and
 * regions of the program). Contract: nothing else changes; every dropped
 * barrier had such a barrier before it (tir_verify_barriers: the same
 * dataflow finds no tagged barrier it would keep missing). */
wavec_status wv_pass_barriers(wv_kernel *k);
wavec_status tir_verify_barriers(wavec_ctx *ctx, const tir_prog *p);
/* Pass `overlap` (overlap.c): a carried group issued after the next
 * iteration's first. */
wavec_status wv_pass_overlap(wv_kernel *k);
/* Pass `ahead` (ahead.c): a loop's first wgmmas issued an iteration
 * ahead. */
wavec_status wv_pass_ahead(wv_kernel *k);
/* Pass `release` (release.c): ring slots given back at the wait that
 * retires their wgmmas. */
wavec_status wv_pass_release(wv_kernel *k);
wavec_status wv_verify_release(wv_kernel *k);
/* Pass `turns` (turns.c): ping-pong of a specialized kernel's consumers. */
wavec_status wv_pass_turns(wv_kernel *k);
wavec_status wv_verify_turns(wv_kernel *k);
/* For a loop body that starts at instruction `from` and runs to the end of
 * p's code (its ENDLOOP not yet there), with the waits `waits` will put
 * (none if `never`): *pending says whether wgmmas are in flight at its
 * end; the result is the first instruction of the body that would touch
 * them, or copy into shared memory, or start or end a loop, before the body
 * waits for all wgmmas (so they cannot stay in flight into the next
 * iteration), or NULL; *tags, the tags of the newest group's wgmmas in
 * flight at its end (the slots the carried group reads). */
const tir_instr *tir_carry_blocker(wavec_ctx *ctx, const tir_prog *p,
                                   uint32_t from, bool never, bool *pending,
                                   uint32_t *tags);

/* The launch grid of tiles[a] workgroup tiles along grid axis a: one
 * workgroup a tile, or with persistent tiles (persistent: the most
 * workgroups; 0 when not persistent) min(all the tiles, persistent) along
 * x. NULL, or why no launch can take it (an arena string): more
 * workgroups than a launch allows (2^31-1 along x, 65535 along y and z:
 * every NVIDIA GPU since sm_30, and so the simulator), or more than 2^31-1
 * persistent tiles (a tile's index is 32-bit: lower_sched.c). */
const char *tir_launch_grid(wavec_ctx *ctx, const int64_t tiles[3],
                            int64_t persistent, int64_t grid[3]);

/* tir_launch_grid for p at run-time sizes vals (one per p->sizes, or NULL:
 * dynamic axes 0). */
const char *tir_grid(wavec_ctx *ctx, const tir_prog *p, const int64_t *vals,
                     int64_t grid[3]);

/* The alignment in bytes the address of argument a must have: its element
 * size, or what its widest access moves at once (a vector access or a
 * vector of atomic adds its bytes, an asynchronous copy 16, a tensor map
 * 16). */
int64_t tir_arg_align(const tir_prog *p, uint32_t a);

/* The program for run-time sizes vals (one per p->sizes): a copy whose
 * grid and argument shapes have them (p itself when it has no sizes).
 * Unwinds with D_INVALID at the size's dynamic(...) entry (loc where it
 * has none) when a size is not positive or not a multiple of what its
 * dynamic(..., multiple_of) states, with
 * D_UNSUPPORTED when no launch can take its grid (tir_launch_grid); both
 * before anything is allocated for the run. */
const tir_prog *tir_instance(wavec_ctx *ctx, const tir_prog *p,
                             const int64_t *vals, wavec_loc loc);

tir_ty tir_ty_of(wavec_dtype dt);
int tir_ty_bytes(tir_ty ty); /* 2 for f16/bf16, 4 for f32/i32, 8 i64, 1 pred */
bool tir_ty_is_float(tir_ty ty); /* f16, bf16, f32 and the 8-bit floats */

/* The PTX printer (ptx.c): appends to `out` one PTX module holding the
 * program as the `.entry` `name` for target t (sm_80, sm_89, sm_90,
 * sm_90a).
 * Unwinds with D_UNSUPPORTED (WAVEC_ERR_UNSUPPORTED) for what the target
 * cannot run: waves other than 32-lane warps (or 128-lane warpgroups for
 * wgmma), AMD MFMA mma kinds, wgmma on a target other than sm_90a, a
 * shuffle across the warps of a warpgroup, arithmetic on predicates, an
 * i32 constant past 32 bits, too many workgroups, threads or shared
 * memory; `loc` (the kernel's) is where program-wide diagnostics point,
 * but those about the mma type or the lanes point at p's mma_loc or
 * lanes_loc where they are known. */
struct wv_target;
void tir_emit_ptx(wavec_ctx *ctx, const tir_prog *p, const char *name,
                  wavec_loc loc, const struct wv_target *t, wv_buf *out);
/* The `.entry` name tir_emit_ptx gives a kernel called `name` (a PTX
 * identifier: other characters become '_'), appended to out. */
void tir_ptx_entry_name(const char *name, wv_buf *out);
/* Shared memory up to this many bytes is a static `.shared` array; above,
 * it is `.extern` (dynamic): the launch passes smem_bytes and raises the
 * function's dynamic shared-memory limit. */
#define TIR_PTX_STATIC_SMEM_MAX (48 * 1024)

#endif
