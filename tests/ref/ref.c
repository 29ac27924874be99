/* Float64 references for the numerical tests (see ref.h). */
#include "ref.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "support/half.h"

static const double LOG2E = 1.4426950408889634074;

static double *scratch(size_t n) {
  double *p = calloc(n ? n : 1, sizeof *p);
  if (!p)
    abort();
  return p;
}

static double dot(size_t n, const double *a, const double *b) {
  double s = 0;
  for (size_t i = 0; i < n; i++)
    s += a[i] * b[i];
  return s;
}

void ref_gemm(size_t M, size_t N, size_t K, const double *a, const double *b,
              double *c) {
  for (size_t i = 0; i < M; i++)
    for (size_t j = 0; j < N; j++)
      c[i * N + j] = dot(K, a + i * K, b + j * K);
}

/* One query row of batch b: the keys it sees (n_keys) and, in p, the
 * softmax weights exp(x_j - lse). Returns the natural-log lse. */
static double softmax_row(size_t K2, size_t K1, double scale, int flags,
                          size_t i, const double *qi, const double *kb,
                          double *p, size_t *n_keys) {
  size_t nk = (flags & REF_CAUSAL) ? (i + 1 < K2 ? i + 1 : K2) : K2;
  double mx = -INFINITY;
  for (size_t j = 0; j < nk; j++) {
    p[j] = scale * dot(K1, qi, kb + j * K1);
    if (p[j] > mx)
      mx = p[j];
  }
  double sum = 0;
  for (size_t j = 0; j < nk; j++)
    sum += exp(p[j] - mx);
  double lse = mx + log(sum);
  for (size_t j = 0; j < nk; j++)
    p[j] = exp(p[j] - lse);
  for (size_t j = nk; j < K2; j++)
    p[j] = 0;
  *n_keys = nk;
  return lse;
}

void ref_attn_fwd(size_t B, size_t M, size_t K2, size_t K1, size_t N,
                  double scale, int flags, const double *q, const double *k,
                  const double *v, double *o, double *lse) {
  double *p = scratch(K2);
  for (size_t b = 0; b < B; b++)
    for (size_t i = 0; i < M; i++) {
      size_t row = b * M + i, nk;
      double l = softmax_row(K2, K1, scale, flags, i, q + row * K1,
                             k + b * K2 * K1, p, &nk);
      if (lse)
        lse[row] = (flags & REF_LSE_BASE2) ? l * LOG2E : l;
      double *oi = o + row * N;
      for (size_t n = 0; n < N; n++) {
        double acc = 0;
        for (size_t j = 0; j < nk; j++)
          acc += p[j] * v[(b * K2 + j) * N + n];
        oi[n] = acc;
      }
    }
  free(p);
}

void ref_attn_D(size_t B, size_t M, size_t N, const double *do_,
                const double *o, double *D) {
  for (size_t r = 0; r < B * M; r++)
    D[r] = dot(N, do_ + r * N, o + r * N);
}

void ref_attn_bwd(size_t B, size_t M, size_t K2, size_t K1, size_t N,
                  double scale, int flags, const double *q, const double *k,
                  const double *v, const double *do_, double *dq, double *dk,
                  double *dv, double *D) {
  double *p = scratch(K2), *ds = scratch(K2), *o = scratch(N);
  memset(dk, 0, B * K2 * K1 * sizeof *dk);
  memset(dv, 0, B * K2 * N * sizeof *dv);
  for (size_t b = 0; b < B; b++)
    for (size_t i = 0; i < M; i++) {
      size_t row = b * M + i, nk;
      const double *qi = q + row * K1, *doi = do_ + row * N;
      const double *kb = k + b * K2 * K1, *vb = v + b * K2 * N;
      softmax_row(K2, K1, scale, flags, i, qi, kb, p, &nk);
      for (size_t n = 0; n < N; n++) {
        double acc = 0;
        for (size_t j = 0; j < nk; j++)
          acc += p[j] * vb[j * N + n];
        o[n] = acc;
      }
      double Di = dot(N, doi, o);
      if (D)
        D[row] = Di;
      for (size_t j = 0; j < nk; j++)
        ds[j] = p[j] * (dot(N, doi, vb + j * N) - Di);
      for (size_t c = 0; c < K1; c++) {
        double acc = 0;
        for (size_t j = 0; j < nk; j++)
          acc += ds[j] * kb[j * K1 + c];
        dq[row * K1 + c] = scale * acc;
      }
      for (size_t j = 0; j < nk; j++) {
        double *dkj = dk + (b * K2 + j) * K1, *dvj = dv + (b * K2 + j) * N;
        for (size_t c = 0; c < K1; c++)
          dkj[c] += scale * ds[j] * qi[c];
        for (size_t n = 0; n < N; n++)
          dvj[n] += p[j] * doi[n];
      }
    }
  free(p);
  free(ds);
  free(o);
}

static double f32(double x) {
  return (double)(float)x;
}

void ref_dkdv_example(size_t B, size_t M, size_t K2, size_t K1, size_t N,
                      int flags, const double *q, const double *k,
                      const double *v, const double *do_, const double *lse,
                      const double *D, double *s, double *p, double *dp,
                      double *dp_sub, double *dv, double *dk) {
  const int mimic = flags & REF_MIMIC_F16;
  const double log2e16 = wv_round_f16(1.44269504089);
  double *pr = scratch(K2), *ds = scratch(K2);
  memset(dk, 0, B * K2 * K1 * sizeof *dk);
  memset(dv, 0, B * K2 * N * sizeof *dv);
  for (size_t b = 0; b < B; b++)
    for (size_t i = 0; i < M; i++) {
      size_t row = b * M + i;
      const double *qi = q + row * K1, *doi = do_ + row * N;
      /* The kernel reads lse and D as f16. */
      double lse_i = mimic ? wv_round_f16(lse[row]) : lse[row];
      double D_i = mimic ? wv_round_f16(D[row]) : D[row];
      for (size_t j = 0; j < K2; j++) {
        size_t at = row * K2 + j, kv = b * K2 + j;
        double sij = dot(K1, qi, k + kv * K1);
        double dpij = dot(N, doi, v + kv * N);
        double pij, sub;
        if (mimic) {
          sij = f32(sij);
          dpij = f32(dpij);
          double t = wv_round_f16(wv_round_f16(sij) - lse_i);
          pij = wv_round_f16(exp2(wv_round_f16(log2e16 * t)));
          sub = wv_round_f16(wv_round_f16(dpij) - D_i);
          ds[j] = wv_round_f16(pij * sub);
        } else {
          pij = exp(sij - lse_i);
          sub = dpij - D_i;
          ds[j] = pij * sub;
        }
        pr[j] = pij;
        if (s)
          s[at] = sij;
        if (p)
          p[at] = pij;
        if (dp)
          dp[at] = dpij;
        if (dp_sub)
          dp_sub[at] = sub;
      }
      for (size_t j = 0; j < K2; j++) {
        double *dkj = dk + (b * K2 + j) * K1, *dvj = dv + (b * K2 + j) * N;
        for (size_t c = 0; c < K1; c++)
          dkj[c] += ds[j] * qi[c];
        for (size_t n = 0; n < N; n++)
          dvj[n] += pr[j] * doi[n];
      }
    }
  free(pr);
  free(ds);
}

double ref_rel_err(size_t n, const double *out, const double *ref) {
  double num = 0, den = 0;
  for (size_t i = 0; i < n; i++) {
    double d = out[i] - ref[i];
    num += d * d;
    den += ref[i] * ref[i];
  }
  return den > 0 ? sqrt(num / den) : sqrt(num);
}

double ref_rel_err_f32(size_t n, const float *out, const double *ref) {
  double num = 0, den = 0;
  for (size_t i = 0; i < n; i++) {
    double d = (double)out[i] - ref[i];
    num += d * d;
    den += ref[i] * ref[i];
  }
  return den > 0 ? sqrt(num / den) : sqrt(num);
}

double ref_max_abs_err(size_t n, const double *out, const double *ref) {
  double m = 0;
  for (size_t i = 0; i < n; i++) {
    double d = fabs(out[i] - ref[i]);
    if (isnan(d))
      return d;
    if (d > m)
      m = d;
  }
  return m;
}

uint64_t ref_rand_u64(uint64_t *state) {
  uint64_t x = *state ? *state : 0x9e3779b97f4a7c15ull;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  *state = x;
  return x * 0x2545f4914f6cdd1dull;
}

double ref_rand_uniform(uint64_t *state, double lo, double hi) {
  double u = (double)(ref_rand_u64(state) >> 11) * 0x1p-53; /* [0, 1) */
  return lo + (hi - lo) * u;
}

/* Nearest even, saturated to [lo, hi]. */
static double round_int(double x, double lo, double hi) {
  x = nearbyint(x);
  return x < lo ? lo : x > hi ? hi : x;
}

static double round_to(double x, ref_dtype dt) {
  switch (dt) {
  case REF_F32:
    return f32(x);
  case REF_F16:
    return wv_round_f16(x);
  case REF_BF16:
    return wv_round_bf16(x);
  case REF_E4M3:
    return wv_e4m3_to_f64(wv_f64_to_e4m3(x));
  case REF_E5M2:
    return wv_e5m2_to_f64(wv_f64_to_e5m2(x));
  case REF_I8:
    return round_int(x, -128, 127);
  case REF_I32:
    return round_int(x, INT32_MIN, INT32_MAX);
  default:
    return x;
  }
}

void ref_rand_fill(uint64_t *state, size_t n, double lo, double hi,
                   ref_dtype dt, double *out) {
  for (size_t i = 0; i < n; i++)
    out[i] = round_to(ref_rand_uniform(state, lo, hi), dt);
}

void ref_pack(size_t n, const double *x, ref_dtype dt, void *out) {
  for (size_t i = 0; i < n; i++)
    switch (dt) {
    case REF_F64:
      ((double *)out)[i] = x[i];
      break;
    case REF_F32:
      ((float *)out)[i] = (float)x[i];
      break;
    case REF_F16:
      ((uint16_t *)out)[i] = wv_f64_to_f16(x[i]);
      break;
    case REF_BF16:
      ((uint16_t *)out)[i] = wv_f64_to_bf16(x[i]);
      break;
    case REF_E4M3:
      ((uint8_t *)out)[i] = wv_f64_to_e4m3(x[i]);
      break;
    case REF_E5M2:
      ((uint8_t *)out)[i] = wv_f64_to_e5m2(x[i]);
      break;
    case REF_I8:
      ((int8_t *)out)[i] = (int8_t)round_to(x[i], REF_I8);
      break;
    case REF_I32:
      ((int32_t *)out)[i] = (int32_t)round_to(x[i], REF_I32);
      break;
    }
}

void ref_unpack(size_t n, const void *in, ref_dtype dt, double *out) {
  for (size_t i = 0; i < n; i++)
    switch (dt) {
    case REF_F64:
      out[i] = ((const double *)in)[i];
      break;
    case REF_F32:
      out[i] = ((const float *)in)[i];
      break;
    case REF_F16:
      out[i] = wv_f16_to_f32(((const uint16_t *)in)[i]);
      break;
    case REF_BF16:
      out[i] = wv_bf16_to_f32(((const uint16_t *)in)[i]);
      break;
    case REF_E4M3:
      out[i] = wv_e4m3_to_f64(((const uint8_t *)in)[i]);
      break;
    case REF_E5M2:
      out[i] = wv_e5m2_to_f64(((const uint8_t *)in)[i]);
      break;
    case REF_I8:
      out[i] = ((const int8_t *)in)[i];
      break;
    case REF_I32:
      out[i] = ((const int32_t *)in)[i];
      break;
    }
}
