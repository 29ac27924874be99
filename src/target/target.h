/* Targets and mma fragment layouts, as tables.
 *
 * Coordinates: an mma computes acc[M, N] += lhs[M, K] · rhs[N, K]ᵀ (the
 * language's convention: rhs is indexed [N, K]). For role r the layout maps
 * (lane, element number i) to the operand's two coordinates:
 *   lhs → (m, k), rhs → (n, k), acc → (m, n),
 * as index-algebra expressions in the two given symbols. Within one role the
 * map is a bijection from lanes × elements onto the operand tile. */
#ifndef WV_TARGET_H
#define WV_TARGET_H

#include "expr/expr.h"

typedef enum wv_role { WV_LHS, WV_RHS, WV_ACC, WV_ROLE_COUNT } wv_role;
extern const char *const wv_role_names[WV_ROLE_COUNT]; /* "lhs", "rhs", "acc" */

typedef struct wv_mma_info {
  const char *name;   /* "F32_16x8x16_F16" */
  int lanes;          /* 32 (NVIDIA warp), 64 (AMD wave), 128 (warpgroup) */
  int m, n, k;        /* tile shape; n == 0: chosen per use (wgmma) */
  wavec_dtype in, acc;
  const char *vendor; /* "nvidia" / "amd" */
  const char *instr;  /* the full mnemonic: "mma.sync.aligned.m16n8k16.row.
                       * col.f32.f16.f16.f32", "v_mfma_f32_16x16x16f16",
                       * "wgmma.mma_async.sync.aligned.m64nNk16.f32.f16.f16"
                       * (N written as in the PTX ISA) */
  int sm;             /* NVIDIA: the least compute capability x10 */
  int ptx_isa;        /* NVIDIA: the least PTX ISA version x10 */
} wv_mma_info;

const wv_mma_info *wv_mma_info_get(wavec_mma_kind kind); /* NULL if bad */
/* Is n a valid N for the mma? For wgmma (info n == 0) the PTX ISA allows
 * N = 8, 16, ..., 256; for the others only 0 ("the fixed N") or that N. */
bool wv_mma_n_valid(wavec_mma_kind kind, int n);
/* The N the tile has for a given n: n itself for wgmma, else info->n. */
int wv_mma_n(wavec_mma_kind kind, int n);
/* Does role r come from shared memory rather than registers (the rhs of a
 * wgmma, read through a matrix descriptor)? Such a role has no per-lane
 * fragment: wv_mma_elems gives 0 and wv_mma_layout must not be called. */
bool wv_mma_role_in_shared(wavec_mma_kind kind, wv_role r);
/* Does wavec issue role r from shared memory? The roles above always; the
 * lhs of a wgmma when the operand is a read of memory (both operands then
 * go through matrix descriptors; otherwise the lhs is the register
 * fragment of the table). */
bool wv_mma_issued_from_shared(wavec_mma_kind kind, wv_role r,
                               bool operand_is_read);
/* Is the mma a warpgroup one (wgmma: 128 lanes, asynchronous)? False for
 * no mma (-1) and any other kind the table lacks. */
bool wv_mma_is_warpgroup(wavec_mma_kind kind);
/* The N a wgmma uses for a wave tile of `span` along N: span itself up to
 * 256, else the largest valid N dividing it; 0 if none. For other mmas,
 * info->n. */
int wv_mma_pick_n(wavec_mma_kind kind, int64_t span);
/* The role's tile: shape[0] x shape[1] in its coordinate order (lhs M x K,
 * rhs N x K, acc M x N). */
void wv_mma_role_shape(wavec_mma_kind kind, wv_role r, int n, int shape[2]);
/* Elements each lane holds of role r (n: the N of a wgmma, else ignored);
 * 0 for a role in shared memory, -1 for an invalid wgmma N. */
int wv_mma_elems(wavec_mma_kind kind, wv_role r, int n);
/* The two coordinates of element `elem` of lane `lane` for role r. `lane` is
 * the lane within the mma's lanes (0..31 for a warp, 0..127 for the
 * warpgroup of a wgmma). An internal error (unwinds) for a role in shared
 * memory or an invalid N. */
void wv_mma_layout(wavec_ctx *ctx, wavec_mma_kind kind, wv_role r, int n,
                   ex_t lane, ex_t elem, ex_t out[2]);
/* Checks a role's layout by evaluation: every (lane, elem) in
 * lanes x elems, with the symbols lane_sym and elem_sym bound, must land
 * inside the rows x cols tile and no two on one cell, and every cell must be
 * covered. Fills owner[r*cols + c] = lane*elems + elem. On failure records a
 * D_INTERNAL diagnostic naming `what` and the clash, and returns false. */
bool wv_layout_fill(wavec_ctx *ctx, const char *what, int lanes, int elems,
                    int rows, int cols, wavec_sym lane_sym,
                    wavec_sym elem_sym, const ex_t coord[2], int32_t *owner);

typedef struct wv_target {
  const char *name;      /* "sim", "sm_80", "sm_89", "sm_90", "sm_90a" */
  int lanes;             /* default threads_per_wave */
  int smem_bytes;        /* shared memory per block without opt-in */
  int max_threads;       /* per block */
  wavec_mma_kind mma;    /* default mma type */
  bool has_wgmma, has_tma, has_cp_async, has_ldmatrix;
  int smem_optin_bytes;  /* per block with the dynamic-size opt-in */
  int sm;                /* compute capability x10 (80, 89, 90); 0: sim */
  const char *ptx_target; /* ".target" of the PTX; NULL for sim */
} wv_target;

const wv_target *wv_target_get(const char *name); /* NULL if unknown */
/* Number of targets, and the i-th (for listings and tests). */
int wv_target_count(void);
const wv_target *wv_target_at(int i);
/* May a kernel for target t use the mma type? */
bool wv_target_has_mma(const wv_target *t, wavec_mma_kind kind);

#endif
