/* Targets and mma fragment layouts, as tables.
 *
 * A fragment layout says which lane holds which element of an mma operand.
 * Every layout wavec knows is a sum of "bit-field" terms of the lane number
 * and of the element number i (the position within the lane's fragment, in
 * register order, low half of a .f16x2 register first):
 *
 *     coordinate = sum of  coef * ((x // div) mod modulus),   x = lane or i
 *
 * so each role of each mma is a few rows of small integers below, not code,
 * and wv_mma_layout() turns them into index-algebra expressions. The facts
 * and their sources:
 *
 *  [PTX-16816]  PTX ISA, section "Matrix Fragments for mma.m16n8k16 with
 *               floating point type" (9.7.15.5.8 in PTX ISA 8.x), with
 *               groupID g = %laneid >> 2, threadID_in_group t = %laneid % 4:
 *     A (.f16/.bf16, a0..a7 in four .f16x2 registers):
 *       row = g for i in {0,1,4,5}, g + 8 otherwise   = g + 8*((i >> 1) & 1)
 *       col = 2t + (i & 1) for i < 4, + 8 for i >= 4   = 2t + (i & 1) + 8*(i >>
 * 2) B (b0..b3 in two .f16x2 registers), B is K x N: row (k) = 2t + (i & 1) for
 * i < 2, + 8 for i >= 2 = 2t + (i & 1) + 8*(i >> 1) col (n) = g C/D (.f32,
 * c0..c3): row = g for i < 2, g + 8 otherwise = g + 8*(i >> 1);  col = 2t + (i
 * & 1) [PTX-WGMMA]  PTX ISA, "Register Fragments and Shared Memory Matrix
 *               Layouts" / "Matrix Fragments for wgmma.mma_async.m64nNk16"
 *               (9.7.15.5.1.1.1): A in registers is four .f16x2 registers
 *               (a0..a7), D (.f32) is N/2 registers, N = 8*j for j = 1..32;
 *               B "must be in the shared memory". The per-thread positions
 *               are given only as figures (wgmma-64N16-A, wgmma-64N16-D):
 *               warp w = tid / 32 of the warpgroup owns rows 16w..16w+15,
 *               and within them the pattern is the m16n8k16 one — A is the
 *               16 x 16 A fragment above, D repeats the C/D fragment every 8
 *               columns: row = 16w + g + 8*((i >> 1) & 1),
 *               col = 8*(i >> 2) + 2t + (i & 1). (Read off the figures, as
 *               also written out by CUTLASS-based epilogues and by JAX
 *               Mosaic GPU's WGMMA tiling (64,8)(16,8)(8,8)(1,2).)
 *  [PTX-16832]  PTX ISA, "Matrix Fragments for mma.m16n8k32" (8-bit
 *               types: .s8/.u8 on sm_80, .e4m3/.e5m2 on sm_89 from PTX ISA
 *               8.4), g and t as above. A is four .b32 registers of four
 *               elements each (a0..a15, low byte first), B two (b0..b7):
 *     A: row = g for i in {0..3, 8..11}, g + 8 otherwise = g + 8*((i>>2)&1)
 *        col = 4t + (i & 3) for i < 8, + 16 for i >= 8 = 4t + (i&3) + 16*(i>>3)
 *     B (K x N): row (k) = 4t + (i & 3) for i < 4, + 16 for i >= 4
 *        = 4t + (i & 3) + 16*(i >> 2);  col (n) = g
 *     C/D (.f32 or .s32, c0..c3): as for m16n8k16.
 *               Cross-checked against CUTLASS's CuTe traits of
 *               SM80_16x8x32_S32S8S8S32_TN (A: (4,8),(4,2,2) with strides
 *               (64,1),(16,8,256) over (m + 16k); B: (4,8),(4,2) with
 *               (32,1),(8,128) over (n + 8k)).
 *  [PTX-WGMMA8] PTX ISA, "Matrix Fragments for wgmma.mma_async.m64nNk32"
 *               (.e4m3/.e5m2 -> .f32 and .s8/.u8 -> .s32): A in registers
 *               is four .b32 registers of four elements (a0..a15); D as for
 *               k16. Per warp the m16n8k32 A pattern again, rows offset by
 *               16w: row = 16w + g + 8*((i>>2)&1), col = 4t + (i&3) +
 *               16*(i>>3) (CuTe's GMMA ALayout_64x32: (4,8,4),(4,2,2) with
 *               strides (256,1,16),(64,8,1024) over (m + 64k)). Operands in
 *               shared memory must be K-major for 8-bit types (the
 *               transpose flags exist for .f16/.bf16 only): a row of the
 *               128-byte swizzled tile is 128 elements, and one wgmma's K of
 *               32 elements is 32 bytes of it, as K = 16 is for 16-bit
 *               types; the matrix descriptor is the same. The fp8 forms take
 *               imm-scale-a and imm-scale-b (1: no negation) but no
 *               transpose immediates; the integer ones neither.
 *  [MFMA]       AMD CDNA3 ISA, matrix instructions, and AMD's matrix
 *               instruction calculator; cross-checked against the MMA index
 *               expressions of Wave (iree-org/wave, constraints.py,
 *               HardwareConstraint.mma_index_offset / apply_mma_mapping),
 *               which run on the hardware. Lane l of a 64-lane wave:
 *     v_mfma_f32_16x16x16f16: A[l mod 16][4*floor(l/16) + i],
 *       B[k = 4*floor(l/16) + i][n = l mod 16], C[4*floor(l/16) + i][l mod 16],
 *       i = 0..3 (Wave: M = 4*floor(lane/16) : 4 : 16 for the accumulator).
 *     v_mfma_f32_32x32x8f16: A[l mod 32][4*floor(l/32) + i], i = 0..3,
 *       B[k = 4*floor(l/32) + i][n = l mod 32],
 *       C[8*floor(i/4) + 4*floor(l/32) + (i mod 4)][l mod 32], i = 0..15
 *       (Wave's (8*floor(GPR_NUM/4) % 32) + 4*floor(lane/32) + GPR_NUM % 4;
 *       the "% 32" never bites for GPR_NUM < 16).
 *
 * Coordinates follow target.h: lhs (m, k), rhs (n, k), acc (m, n). The rhs
 * rows above are the B fragment with its two coordinates swapped into the
 * language's (n, k) order. */
#include "target/target.h"

#include <string.h>

/* ---- the mma table ------------------------------------------------------- */

/* Indexed by wavec_mma_kind; tests/unit/test_target.c checks that every
 * WAVEC_MMAS entry has a row whose name matches. */
static const wv_mma_info mma_table[WAVEC_MMA_COUNT] = {
    [WAVEC_MMA_F32_16x8x16_F16] = {"F32_16x8x16_F16", 32, 16, 8, 16, WAVEC_F16,
                                   WAVEC_F32, "nvidia",
                                   "mma.sync.aligned.m16n8k16.row.col.f32.f16."
                                   "f16.f32",
                                   80, 70},
    [WAVEC_MMA_F32_16x8x16_BF16] = {"F32_16x8x16_BF16", 32, 16, 8, 16,
                                    WAVEC_BF16, WAVEC_F32, "nvidia",
                                    "mma.sync.aligned.m16n8k16.row.col.f32."
                                    "bf16.bf16.f32",
                                    80, 70},
    [WAVEC_MMA_F32_16x16x16_F16] = {"F32_16x16x16_F16", 64, 16, 16, 16,
                                    WAVEC_F16, WAVEC_F32, "amd",
                                    "v_mfma_f32_16x16x16f16", 0, 0},
    [WAVEC_MMA_F32_32x32x8_F16] = {"F32_32x32x8_F16", 64, 32, 32, 8, WAVEC_F16,
                                   WAVEC_F32, "amd", "v_mfma_f32_32x32x8f16",
                                   0, 0},
    /* 128 lanes: a warpgroup of four warps issues one wgmma [PTX-WGMMA]. */
    [WAVEC_MMA_F32_64xNx16_F16] = {"F32_64xNx16_F16", 128, 64, 0, 16, WAVEC_F16,
                                   WAVEC_F32, "nvidia",
                                   "wgmma.mma_async.sync.aligned.m64nNk16.f32."
                                   "f16.f16",
                                   90, 80},
    [WAVEC_MMA_F32_64xNx16_BF16] = {"F32_64xNx16_BF16", 128, 64, 0, 16,
                                    WAVEC_BF16, WAVEC_F32, "nvidia",
                                    "wgmma.mma_async.sync.aligned.m64nNk16."
                                    "f32.bf16.bf16",
                                    90, 80},
    /* 8-bit operands [PTX-WGMMA8], [PTX-16832]. Mixed e4m3 x e5m2 (which
     * the PTX ISA allows) has no kind: an mma's operands share a type. */
    [WAVEC_MMA_F32_64xNx32_F8E4M3] = {"F32_64xNx32_F8E4M3", 128, 64, 0, 32,
                                      WAVEC_F8E4M3, WAVEC_F32, "nvidia",
                                      "wgmma.mma_async.sync.aligned.m64nNk32."
                                      "f32.e4m3.e4m3",
                                      90, 80},
    [WAVEC_MMA_F32_64xNx32_F8E5M2] = {"F32_64xNx32_F8E5M2", 128, 64, 0, 32,
                                      WAVEC_F8E5M2, WAVEC_F32, "nvidia",
                                      "wgmma.mma_async.sync.aligned.m64nNk32."
                                      "f32.e5m2.e5m2",
                                      90, 80},
    [WAVEC_MMA_S32_64xNx32_S8] = {"S32_64xNx32_S8", 128, 64, 0, 32, WAVEC_I8,
                                  WAVEC_I32, "nvidia",
                                  "wgmma.mma_async.sync.aligned.m64nNk32.s32."
                                  "s8.s8",
                                  90, 80},
    [WAVEC_MMA_F32_16x8x32_F8E4M3] = {"F32_16x8x32_F8E4M3", 32, 16, 8, 32,
                                      WAVEC_F8E4M3, WAVEC_F32, "nvidia",
                                      "mma.sync.aligned.m16n8k32.row.col.f32."
                                      "e4m3.e4m3.f32",
                                      89, 84},
    [WAVEC_MMA_F32_16x8x32_F8E5M2] = {"F32_16x8x32_F8E5M2", 32, 16, 8, 32,
                                      WAVEC_F8E5M2, WAVEC_F32, "nvidia",
                                      "mma.sync.aligned.m16n8k32.row.col.f32."
                                      "e5m2.e5m2.f32",
                                      89, 84},
    [WAVEC_MMA_S32_16x8x32_S8] = {"S32_16x8x32_S8", 32, 16, 8, 32, WAVEC_I8,
                                  WAVEC_I32, "nvidia",
                                  "mma.sync.aligned.m16n8k32.row.col.s32.s8."
                                  "s8.s32",
                                  80, 70},
};

const wv_mma_info *wv_mma_info_get(wavec_mma_kind kind) {
  if ((unsigned)kind >= WAVEC_MMA_COUNT || !mma_table[kind].name)
    return NULL;
  return &mma_table[kind];
}

/* ---- fragment layouts ------------------------------------------------------
 */

enum { SRC_LANE, SRC_ELEM };

typedef struct lterm {
  uint8_t src; /* SRC_LANE or SRC_ELEM */
  uint8_t div; /* >= 1 */
  uint8_t mod; /* 0: no modulus */
  uint8_t coef;
} lterm;

typedef struct lcoord {
  uint8_t n;
  lterm t[3];
} lcoord;

/* elems: per-lane element count; ELEMS_HALF_N: N/2 (the wgmma accumulator);
 * ELEMS_SHARED: the operand is read from shared memory, no fragment. */
enum { ELEMS_SHARED = 0, ELEMS_HALF_N = -1 };

typedef struct lrole {
  int8_t elems;
  lcoord c[2];
} lrole;

typedef struct lfamily {
  lrole r[WV_ROLE_COUNT];
  bool ss; /* issued with lhs and rhs both from shared memory */
  bool warpgroup; /* a warpgroup mma: 128 lanes, asynchronous */
} lfamily;

#define L(div, mod, coef)                                                      \
  { SRC_LANE, div, mod, coef }
#define E(div, mod, coef)                                                      \
  { SRC_ELEM, div, mod, coef }

enum {
  FAM_M16N8K16, FAM_MFMA16, FAM_MFMA32, FAM_WGMMA, FAM_M16N8K32, FAM_WGMMA8,
  FAM_COUNT
};

static const lfamily families[FAM_COUNT] = {
    /* [PTX-16816], g = lane // 4 (lane < 32), t = lane mod 4. */
    [FAM_M16N8K16] = {.r = {
        /* lhs (m, k): m = g + 8*((i//2) mod 2), k = 2t + i mod 2 + 8*(i//4) */
        [WV_LHS] = {8,
                    {{2, {L(4, 0, 1), E(2, 2, 8)}},
                     {3, {L(1, 4, 2), E(1, 2, 1), E(4, 0, 8)}}}},
        /* rhs (n, k): n = g, k = 2t + i mod 2 + 8*(i//2) */
        [WV_RHS] = {4,
                    {{1, {L(4, 0, 1)}},
                     {3, {L(1, 4, 2), E(1, 2, 1), E(2, 0, 8)}}}},
        /* acc (m, n): m = g + 8*(i//2), n = 2t + i mod 2 */
        [WV_ACC] = {4,
                    {{2, {L(4, 0, 1), E(2, 0, 8)}},
                     {2, {L(1, 4, 2), E(1, 2, 1)}}}},
    }},
    /* [MFMA] v_mfma_f32_16x16x16f16, 64 lanes. */
    [FAM_MFMA16] = {.r = {
        /* lhs (m, k): m = l mod 16, k = 4*(l//16) + i */
        [WV_LHS] = {4, {{1, {L(1, 16, 1)}}, {2, {L(16, 0, 4), E(1, 0, 1)}}}},
        /* rhs (n, k): n = l mod 16, k = 4*(l//16) + i */
        [WV_RHS] = {4, {{1, {L(1, 16, 1)}}, {2, {L(16, 0, 4), E(1, 0, 1)}}}},
        /* acc (m, n): m = 4*(l//16) + i, n = l mod 16 */
        [WV_ACC] = {4, {{2, {L(16, 0, 4), E(1, 0, 1)}}, {1, {L(1, 16, 1)}}}},
    }},
    /* [MFMA] v_mfma_f32_32x32x8f16, 64 lanes. */
    [FAM_MFMA32] = {.r = {
        /* lhs (m, k): m = l mod 32, k = 4*(l//32) + i */
        [WV_LHS] = {4, {{1, {L(1, 32, 1)}}, {2, {L(32, 0, 4), E(1, 0, 1)}}}},
        /* rhs (n, k): n = l mod 32, k = 4*(l//32) + i */
        [WV_RHS] = {4, {{1, {L(1, 32, 1)}}, {2, {L(32, 0, 4), E(1, 0, 1)}}}},
        /* acc (m, n): m = 8*(i//4) + 4*(l//32) + i mod 4, n = l mod 32 */
        [WV_ACC] = {16,
                    {{3, {E(4, 0, 8), L(32, 0, 4), E(1, 4, 1)}},
                     {1, {L(1, 32, 1)}}}},
    }},
    /* [PTX-WGMMA], 128 lanes; warp w = lane//32, g = (lane//4) mod 8. */
    [FAM_WGMMA] = {.r = {
        /* lhs (m, k): the m16n8k16 A fragment, rows offset by 16w */
        [WV_LHS] = {8,
                    {{3, {L(32, 0, 16), L(4, 8, 1), E(2, 2, 8)}},
                     {3, {L(1, 4, 2), E(1, 2, 1), E(4, 0, 8)}}}},
        /* rhs: shared memory through a matrix descriptor, no fragment */
        [WV_RHS] = {ELEMS_SHARED, {{0, {{0}}}, {0, {{0}}}}},
        /* acc (m, n): the m16n8k16 C fragment, rows offset by 16w, repeated
         * every 8 columns: m = 16w + g + 8*((i//2) mod 2),
         * n = 8*(i//4) + 2t + i mod 2 */
        [WV_ACC] = {ELEMS_HALF_N,
                    {{3, {L(32, 0, 16), L(4, 8, 1), E(2, 2, 8)}},
                     {3, {E(4, 0, 8), L(1, 4, 2), E(1, 2, 1)}}}},
    }, .ss = true, .warpgroup = true},
    /* [PTX-16832], 8-bit operands, four to a register. */
    [FAM_M16N8K32] = {.r = {
        /* lhs (m, k): m = g + 8*((i//4) mod 2), k = 4t + i mod 4 + 16*(i//8) */
        [WV_LHS] = {16,
                    {{2, {L(4, 0, 1), E(4, 2, 8)}},
                     {3, {L(1, 4, 4), E(1, 4, 1), E(8, 0, 16)}}}},
        /* rhs (n, k): n = g, k = 4t + i mod 4 + 16*(i//4) */
        [WV_RHS] = {8,
                    {{1, {L(4, 0, 1)}},
                     {3, {L(1, 4, 4), E(1, 4, 1), E(4, 0, 16)}}}},
        /* acc (m, n): as m16n8k16's */
        [WV_ACC] = {4,
                    {{2, {L(4, 0, 1), E(2, 0, 8)}},
                     {2, {L(1, 4, 2), E(1, 2, 1)}}}},
    }},
    /* [PTX-WGMMA8], 128 lanes: the m16n8k32 A fragment per warp. */
    [FAM_WGMMA8] = {.r = {
        /* lhs (m, k): m = 16w + g + 8*((i//4) mod 2),
         * k = 4t + i mod 4 + 16*(i//8) */
        [WV_LHS] = {16,
                    {{3, {L(32, 0, 16), L(4, 8, 1), E(4, 2, 8)}},
                     {3, {L(1, 4, 4), E(1, 4, 1), E(8, 0, 16)}}}},
        [WV_RHS] = {ELEMS_SHARED, {{0, {{0}}}, {0, {{0}}}}},
        /* acc (m, n): as the k16 wgmma's */
        [WV_ACC] = {ELEMS_HALF_N,
                    {{3, {L(32, 0, 16), L(4, 8, 1), E(2, 2, 8)}},
                     {3, {E(4, 0, 8), L(1, 4, 2), E(1, 2, 1)}}}},
    }, .ss = true, .warpgroup = true},
};

#undef L
#undef E

static const uint8_t mma_family[WAVEC_MMA_COUNT] = {
    [WAVEC_MMA_F32_16x8x16_F16] = FAM_M16N8K16,
    [WAVEC_MMA_F32_16x8x16_BF16] = FAM_M16N8K16,
    [WAVEC_MMA_F32_16x16x16_F16] = FAM_MFMA16,
    [WAVEC_MMA_F32_32x32x8_F16] = FAM_MFMA32,
    [WAVEC_MMA_F32_64xNx16_F16] = FAM_WGMMA,
    [WAVEC_MMA_F32_64xNx16_BF16] = FAM_WGMMA,
    [WAVEC_MMA_F32_64xNx32_F8E4M3] = FAM_WGMMA8,
    [WAVEC_MMA_F32_64xNx32_F8E5M2] = FAM_WGMMA8,
    [WAVEC_MMA_S32_64xNx32_S8] = FAM_WGMMA8,
    [WAVEC_MMA_F32_16x8x32_F8E4M3] = FAM_M16N8K32,
    [WAVEC_MMA_F32_16x8x32_F8E5M2] = FAM_M16N8K32,
    [WAVEC_MMA_S32_16x8x32_S8] = FAM_M16N8K32,
};

const char *const wv_role_names[WV_ROLE_COUNT] = {
    [WV_LHS] = "lhs", [WV_RHS] = "rhs", [WV_ACC] = "acc"};

static const lrole *role_of(wavec_mma_kind kind, wv_role r) {
  if (!wv_mma_info_get(kind) || (unsigned)r >= WV_ROLE_COUNT)
    return NULL;
  return &families[mma_family[kind]].r[r];
}

bool wv_mma_issued_from_shared(wavec_mma_kind kind, wv_role r,
                               bool operand_is_read) {
  if (!wv_mma_info_get(kind))
    return false;
  return wv_mma_role_in_shared(kind, r) ||
         (families[mma_family[kind]].ss && r == WV_LHS && operand_is_read);
}

bool wv_mma_is_warpgroup(wavec_mma_kind kind) {
  return wv_mma_info_get(kind) && families[mma_family[kind]].warpgroup;
}

int wv_mma_pick_n(wavec_mma_kind kind, int64_t span) {
  const wv_mma_info *mi = wv_mma_info_get(kind);
  if (!mi)
    return 0;
  if (mi->n)
    return mi->n;
  for (int64_t n = span < 256 ? span : 256; n >= 8; n--)
    if (span % n == 0 && wv_mma_n_valid(kind, (int)n))
      return (int)n;
  return 0;
}

bool wv_mma_n_valid(wavec_mma_kind kind, int n) {
  const wv_mma_info *mi = wv_mma_info_get(kind);
  if (!mi)
    return false;
  if (mi->n == 0) /* wgmma: N = 8*j, j = 1..32 [PTX-WGMMA] */
    return n >= 8 && n <= 256 && n % 8 == 0;
  return n == 0 || n == mi->n;
}

int wv_mma_n(wavec_mma_kind kind, int n) {
  const wv_mma_info *mi = wv_mma_info_get(kind);
  return !mi ? 0 : mi->n ? mi->n : n;
}

bool wv_mma_role_in_shared(wavec_mma_kind kind, wv_role r) {
  const lrole *lr = role_of(kind, r);
  return lr && lr->elems == ELEMS_SHARED;
}

void wv_mma_role_shape(wavec_mma_kind kind, wv_role r, int n, int shape[2]) {
  const wv_mma_info *mi = wv_mma_info_get(kind);
  shape[0] = shape[1] = 0;
  if (!mi || (unsigned)r >= WV_ROLE_COUNT)
    return;
  int nn = wv_mma_n(kind, n);
  int dims[WV_ROLE_COUNT][2] = {[WV_LHS] = {mi->m, mi->k},
                                [WV_RHS] = {nn, mi->k},
                                [WV_ACC] = {mi->m, nn}};
  shape[0] = dims[r][0];
  shape[1] = dims[r][1];
}

int wv_mma_elems(wavec_mma_kind kind, wv_role r, int n) {
  const lrole *lr = role_of(kind, r);
  if (!lr)
    return -1;
  if (lr->elems == ELEMS_HALF_N)
    return wv_mma_n_valid(kind, n) ? n / 2 : -1;
  return lr->elems;
}

static ex_t term_expr(wavec_ctx *ctx, const lterm *t, ex_t lane, ex_t elem) {
  ex_t x = t->src == SRC_LANE ? lane : elem;
  if (t->div > 1)
    x = ex_floordiv(ctx, x, ex_const(ctx, t->div));
  if (t->mod)
    x = ex_mod(ctx, x, ex_const(ctx, t->mod));
  if (t->coef != 1)
    x = ex_mul(ctx, ex_const(ctx, t->coef), x);
  return x;
}

void wv_mma_layout(wavec_ctx *ctx, wavec_mma_kind kind, wv_role r, int n,
                   ex_t lane, ex_t elem, ex_t out[2]) {
  const lrole *lr = role_of(kind, r);
  wv_assert(ctx, lr != NULL);
  /* Callers ask wv_mma_role_in_shared() first: a shared-memory operand has
   * no (lane, element) map to give. */
  wv_assert(ctx, lr->elems != ELEMS_SHARED);
  wv_assert(ctx, lr->elems != ELEMS_HALF_N || wv_mma_n_valid(kind, n));
  for (int c = 0; c < 2; c++) {
    const lcoord *lc = &lr->c[c];
    ex_t sum = term_expr(ctx, &lc->t[0], lane, elem);
    for (int i = 1; i < lc->n; i++)
      sum = ex_add(ctx, sum, term_expr(ctx, &lc->t[i], lane, elem));
    out[c] = sum;
  }
}

bool wv_layout_fill(wavec_ctx *ctx, const char *what, int lanes, int elems,
                    int rows, int cols, wavec_sym lane_sym, wavec_sym elem_sym,
                    const ex_t coord[2], int32_t *owner) {
  wavec_loc none = {0};
  uint32_t nv = ctx->sym_names.n;
  int64_t *vals = wv_alloc(ctx, nv * sizeof *vals);
  bool *known = wv_alloc(ctx, nv * sizeof *known);
  wv_assert(ctx, lane_sym < nv && elem_sym < nv);
  known[lane_sym] = known[elem_sym] = true;
  for (int i = 0; i < rows * cols; i++)
    owner[i] = -1;
  for (int l = 0; l < lanes; l++) {
    for (int e = 0; e < elems; e++) {
      int64_t rc[2];
      vals[lane_sym] = l;
      vals[elem_sym] = e;
      for (int c = 0; c < 2; c++) {
        if (!ex_eval(ctx, coord[c], vals, known, nv, &rc[c])) {
          wv_error(ctx, D_INTERNAL, none,
                   "layout of %s: coordinate %d of lane %d element %d does "
                   "not evaluate",
                   what, c, l, e);
          return false;
        }
      }
      if (rc[0] < 0 || rc[0] >= rows || rc[1] < 0 || rc[1] >= cols) {
        wv_error(ctx, D_INTERNAL, none,
                 "layout of %s: lane %d element %d maps to (%lld, %lld), "
                 "outside the %d x %d tile",
                 what, l, e, (long long)rc[0], (long long)rc[1], rows, cols);
        return false;
      }
      int32_t *cell = &owner[rc[0] * cols + rc[1]];
      if (*cell >= 0) {
        wv_error(ctx, D_INTERNAL, none,
                 "layout of %s: lane %d element %d and lane %d element %d "
                 "both map to (%lld, %lld)",
                 what, *cell / elems, *cell % elems, l, e, (long long)rc[0],
                 (long long)rc[1]);
        return false;
      }
      *cell = l * elems + e;
    }
  }
  for (int i = 0; i < rows * cols; i++) {
    if (owner[i] < 0) {
      wv_error(ctx, D_INTERNAL, none, "layout of %s: no lane holds (%d, %d)",
               what, i / cols, i % cols);
      return false;
    }
  }
  return true;
}

/* ---- targets ----------------------------------------------------------------
 */

/* Facts used, with their sources:
 *  - 32 lanes per warp on every NVIDIA target (PTX ISA, WARP_SZ).
 *  - 1024 threads per block at most (CUDA C++ Programming Guide, "Technical
 *    Specifications per Compute Capability").
 *  - Shared memory per block: 48 KiB for static allocations, the limit a
 *    kernel gets without asking; more needs dynamic shared memory and the
 *    cudaFuncAttributeMaxDynamicSharedMemorySize (driver:
 *    CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES) opt-in, up to 163 KB on
 *    compute capability 8.0 and 227 KB on 9.0 (CUDA C++ Programming Guide,
 *    "Compute Capability 8.x / 9.0: Shared Memory"; Ampere and Hopper tuning
 *    guides: 164 / 228 KB per SM, 1 KB of it reserved per block).
 *  - cp.async and the m16n8k16 mma.sync need sm_80; ldmatrix needs sm_75
 *    (PTX ISA, "Target ISA notes" of each instruction). The fp8 forms of
 *    mma.sync (and cvt to and from fp8) need sm_89, where shared memory per
 *    block goes up to 99 KB (CUDA C++ Programming Guide, "Compute
 *    Capability 8.x": 8.6 and 8.9 have 100 KB per SM); sm_89 has neither
 *    TMA nor wgmma.
 *  - cp.async.bulk.tensor (TMA) and mbarrier transaction counts need sm_90;
 *    wgmma.mma_async and setmaxnreg need the architecture-specific sm_90a
 *    (PTX ISA, target ISA notes).
 * The simulator mirrors sm_90a's limits so that a kernel that passes there
 * fits the H200, and it emulates every instruction the NVIDIA targets have,
 * plus AMD's MFMA (DESIGN.md: MFMA layouts exist for the simulator only). */
static const wv_target targets[] = {
    {.name = "sim",
     .lanes = 32,
     .smem_bytes = 48 * 1024,
     .smem_optin_bytes = 227 * 1024,
     .max_threads = 1024,
     .mma = WAVEC_MMA_F32_16x8x16_F16,
     .has_wgmma = true,
     .has_tma = true,
     .has_cp_async = true,
     .has_ldmatrix = true,
     .sm = 0,
     .ptx_target = NULL},
    {.name = "sm_80",
     .lanes = 32,
     .smem_bytes = 48 * 1024,
     .smem_optin_bytes = 163 * 1024,
     .max_threads = 1024,
     .mma = WAVEC_MMA_F32_16x8x16_F16,
     .has_wgmma = false,
     .has_tma = false,
     .has_cp_async = true,
     .has_ldmatrix = true,
     .sm = 80,
     .ptx_target = "sm_80"},
    {.name = "sm_89",
     .lanes = 32,
     .smem_bytes = 48 * 1024,
     .smem_optin_bytes = 99 * 1024,
     .max_threads = 1024,
     .mma = WAVEC_MMA_F32_16x8x16_F16,
     .has_wgmma = false,
     .has_tma = false,
     .has_cp_async = true,
     .has_ldmatrix = true,
     .sm = 89,
     .ptx_target = "sm_89"},
    {.name = "sm_90",
     .lanes = 32,
     .smem_bytes = 48 * 1024,
     .smem_optin_bytes = 227 * 1024,
     .max_threads = 1024,
     .mma = WAVEC_MMA_F32_16x8x16_F16,
     .has_wgmma = false,
     .has_tma = true,
     .has_cp_async = true,
     .has_ldmatrix = true,
     .sm = 90,
     .ptx_target = "sm_90"},
    {.name = "sm_90a",
     .lanes = 32,
     .smem_bytes = 48 * 1024,
     .smem_optin_bytes = 227 * 1024,
     .max_threads = 1024,
     /* wgmma is asked for with hardware(mma = F32_64xNx16_F16): its N is
      * a per-kernel choice, so the default stays the warp-level mma. */
     .mma = WAVEC_MMA_F32_16x8x16_F16,
     .has_wgmma = true,
     .has_tma = true,
     .has_cp_async = true,
     .has_ldmatrix = true,
     .sm = 90,
     .ptx_target = "sm_90a"},
};

const wv_target *wv_target_get(const char *name) {
  for (size_t i = 0; name && i < WV_ARRAY_LEN(targets); i++)
    if (strcmp(targets[i].name, name) == 0)
      return &targets[i];
  return NULL;
}

int wv_target_count(void) {
  return (int)WV_ARRAY_LEN(targets);
}

const wv_target *wv_target_at(int i) {
  return i >= 0 && i < (int)WV_ARRAY_LEN(targets) ? &targets[i] : NULL;
}

bool wv_target_has_mma(const wv_target *t, wavec_mma_kind kind) {
  const wv_mma_info *mi = wv_mma_info_get(kind);
  if (!t || !mi)
    return false;
  if (!t->ptx_target)
    return true; /* the simulator runs every layout */
  if (strcmp(mi->vendor, "nvidia") != 0 || t->sm < mi->sm)
    return false;
  return mi->lanes != 128 || t->has_wgmma;
}
