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
  const char *instr;  /* "mma.sync.aligned.m16n8k16", "v_mfma_f32_16x16x16f16" */
} wv_mma_info;

const wv_mma_info *wv_mma_info_get(wavec_mma_kind kind);
/* Elements each lane holds of role r (n: the N of a wgmma, else ignored). */
int wv_mma_elems(wavec_mma_kind kind, wv_role r, int n);
/* The two coordinates of element `elem` of lane `lane` for role r. */
void wv_mma_layout(wavec_ctx *ctx, wavec_mma_kind kind, wv_role r, int n,
                   ex_t lane, ex_t elem, ex_t out[2]);

typedef struct wv_target {
  const char *name;      /* "sim", "sm_80", "sm_90", "sm_90a" */
  int lanes;             /* default threads_per_wave */
  int smem_bytes;        /* shared memory per block */
  int max_threads;       /* per block */
  wavec_mma_kind mma;    /* default mma type */
  bool has_wgmma, has_tma, has_cp_async, has_ldmatrix;
} wv_target;

const wv_target *wv_target_get(const char *name); /* NULL if unknown */

#endif
