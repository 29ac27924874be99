/* Float64 reference implementations for the numerical tests.
 *
 * All tensors are dense, row-major (C order), float64, with the shapes given
 * in brackets; the kernels' dimension names are used (LANGUAGE.md):
 *   q [B, M, K1]   k [B, K2, K1]   v [B, K2, N]   o, do [B, M, N]
 *   lse, D [B, M]  s, p, dp, dp_sub [B, M, K2]
 * M counts queries, K2 keys, K1 the q/k head dimension, N the v head
 * dimension. Every sum is taken in float64 in a fixed order, so results are
 * deterministic. Outputs must not alias inputs.
 *
 * Not part of the library: tests compile ref.c into themselves. It uses
 * support/half.h and the two f64 conversions of support/half.c (in the
 * build's wavec-internal.a). Scratch memory comes from malloc; failure
 * aborts. */
#ifndef WV_TESTS_REF_H
#define WV_TESTS_REF_H

#include <stddef.h>
#include <stdint.h>

/* Flags of the attention references. */
enum {
  /* Causal mask, aligned at the top left: query i sees keys j <= i. (With
   * M <= K2 no row is empty; FlashAttention's bottom-right alignment for
   * M != K2 is not what this computes.) */
  REF_CAUSAL = 1,
  /* ref_attn_fwd: write lse in base 2, lse2 = lse * log2(e) =
   * log2(sum_j 2^(log2(e) * scale * s_ij)), as kernels that fold log2(e)
   * into the scale and use exp2 keep it. */
  REF_LSE_BASE2 = 2,
  /* ref_dkdv_example: round where the kernel rounds (see there). */
  REF_MIMIC_F16 = 4,
};

/* c[M, N] = a[M, K] · b[N, K]ᵀ (the GEMM example's convention). */
void ref_gemm(size_t M, size_t N, size_t K, const double *a, const double *b,
              double *c);

/* Attention forward, per batch-head b and query i:
 *   x_ij   = scale * (q_i · k_j)          (j masked out under REF_CAUSAL)
 *   lse_i  = log(sum_j exp(x_ij))         natural log, of the *scaled* scores
 *   p_ij   = exp(x_ij - lse_i)            (softmax)
 *   o_i    = sum_j p_ij v_j
 * lse may be NULL. flags: REF_CAUSAL, REF_LSE_BASE2. */
void ref_attn_fwd(size_t B, size_t M, size_t K2, size_t K1, size_t N,
                  double scale, int flags, const double *q, const double *k,
                  const double *v, double *o, double *lse);

/* D_i = rowsum(do ∘ o) = sum_n do_in o_in: the backward preprocessing. */
void ref_attn_D(size_t B, size_t M, size_t N, const double *do_,
                const double *o, double *D);

/* Attention backward of ref_attn_fwd for the loss gradient do = dL/do,
 * recomputing everything from q, k, v in float64:
 *   D_i   = rowsum(do_i ∘ o_i)
 *   dp_ij = do_i · v_j,  ds_ij = p_ij (dp_ij - D_i)
 *   dq_i  = scale * sum_j ds_ij k_j
 *   dk_j  = scale * sum_i ds_ij q_i,  dv_j = sum_i p_ij do_i
 * D may be NULL. flags: REF_CAUSAL. */
void ref_attn_bwd(size_t B, size_t M, size_t K2, size_t K1, size_t N,
                  double scale, int flags, const double *q, const double *k,
                  const double *v, const double *do_, double *dq, double *dk,
                  double *dv, double *D);

/* The outputs of LANGUAGE.md's `attention_bwd_dkdv` example, computed as
 * that kernel defines them from its inputs q, k, v, do, lse, D (any softmax
 * scale folded into q; lse is the natural-log lse of the unscaled s = q kᵀ,
 * e.g. from ref_attn_fwd with scale 1, and D from ref_attn_D):
 *   s      = q kᵀ                               [B, M, K2]
 *   p      = exp2(log2(e) * (s - lse)) = exp(s - lse)
 *   dp     = do vᵀ
 *   dp_sub = dp - D
 *   ds     = p ∘ dp_sub                         (not an output)
 *   dv     = pᵀ do                              [B, K2, N]
 *   dk     = dsᵀ q                              [B, K2, K1]
 * Any of s, p, dp, dp_sub may be NULL. With flags 0 this is pure float64.
 * With REF_MIMIC_F16 it rounds where the kernel's types say it does, to help
 * a test pick tight thresholds: s and dp to f32 (they are f32 mma results),
 * then cast(s, f16), the f16 constant log2e (1.4423828125), and each f16
 * op's result (the subtraction, the product, exp2: that is p; cast(dp, f16),
 * dp_sub; ds) to f16, so that dv and dk are float64 sums of the f16 p and ds.
 * The kernel's own exp2 and accumulation order still differ in the last
 * bits. */
void ref_dkdv_example(size_t B, size_t M, size_t K2, size_t K1, size_t N,
                      int flags, const double *q, const double *k,
                      const double *v, const double *do_, const double *lse,
                      const double *D, double *s, double *p, double *dp,
                      double *dp_sub, double *dv, double *dk);

/* ‖out − ref‖₂ / ‖ref‖₂; when ref is all zeros, ‖out‖₂ (absolute). NaN
 * anywhere gives NaN, so `err < tol` fails. */
double ref_rel_err(size_t n, const double *out, const double *ref);
double ref_rel_err_f32(size_t n, const float *out, const double *ref);
double ref_max_abs_err(size_t n, const double *out, const double *ref);

/* Seeded xorshift64* generator; *state must start non-zero (0 is replaced by
 * a fixed seed). Same seed, same sequence, on every platform. */
uint64_t ref_rand_u64(uint64_t *state);
double ref_rand_uniform(uint64_t *state, double lo, double hi); /* [lo, hi) */

/* Element types for packing reference data into kernel arguments (the
 * integers round to nearest even and saturate). */
typedef enum ref_dtype {
  REF_F64, REF_F32, REF_F16, REF_BF16, REF_E4M3, REF_E5M2, REF_I8, REF_I32
} ref_dtype;

/* n uniform values in [lo, hi), each rounded (nearest even) to dt, so that
 * the float64 reference sees exactly what a kernel gets from ref_pack. */
void ref_rand_fill(uint64_t *state, size_t n, double lo, double hi,
                   ref_dtype dt, double *out);
/* Rounds (nearest even) to dt. out: double, float, uint16_t or uint8_t
 * bits, int8_t or int32_t. */
void ref_pack(size_t n, const double *x, ref_dtype dt, void *out);
/* Exact widening back to double. */
void ref_unpack(size_t n, const void *in, ref_dtype dt, double *out);

#endif
