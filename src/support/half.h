/* 16-bit floating point: IEEE binary16 (f16) and bfloat16 (bf16), held as
 * their raw bit patterns in uint16_t.
 *
 * Narrowing (f32/f64 -> f16/bf16) rounds to nearest, ties to even, exactly as
 * the hardware `cvt.rn` does, whatever the current FP rounding mode is (only
 * integer arithmetic is used):
 *  - values below half the smallest subnormal become a signed zero, the
 *    others round to subnormals as needed;
 *  - values at or above the overflow threshold (max finite + half an ulp:
 *    65520 for f16) become a signed infinity;
 *  - a NaN stays a NaN of the same sign, made quiet, keeping the high bits of
 *    its payload.
 * The f64 conversions round once, directly from double: going through float
 * first would round twice and can be off by one ulp on ties (e.g.
 * 1 + 2^-11 + 2^-40 must give f16 1 + 2^-10, through float it gives 1).
 *
 * Widening (f16/bf16 -> f32) is exact, NaN payloads included (bits are moved,
 * not quieted), so f16 -> f32 -> f16 is the identity on every pattern except
 * signalling NaNs, which come back quiet.
 *
 * Not for code built with -ffast-math: it flushes subnormals to zero and
 * assumes no NaNs. */
#ifndef WV_HALF_H
#define WV_HALF_H

#include <stdint.h>
#include <string.h>

/* The one rounding routine behind all four narrowings. `a` is the magnitude
 * bits (sign cleared) of a binary float with `se` exponent and `sm` mantissa
 * bits; the result is the magnitude bits of the nearest float (ties to even)
 * with `de` exponent and `dm` mantissa bits. With constant formats the
 * compiler folds the parameters away. Requires sm > dm, se >= de, and
 * sm <= 62 (so the rounding adds below cannot overflow). */
static inline uint32_t wv_fp_narrow_(uint64_t a, int se, int sm, int de,
                                     int dm) {
  const int64_t src_max = (1 << se) - 1, dst_max = (1 << de) - 1;
  const int64_t src_bias = src_max >> 1, dst_bias = dst_max >> 1;
  int64_t e = (int64_t)(a >> sm);
  uint64_t frac = a & ((UINT64_C(1) << sm) - 1);
  if (e == src_max) /* inf, or NaN made quiet keeping the payload's top */
    return (uint32_t)(dst_max << dm) |
           (frac ? (uint32_t)(frac >> (sm - dm)) | (1u << (dm - 1)) : 0u);
  /* value = mant * 2^(exp - sm), with exp unbiased */
  uint64_t mant = e ? frac | (UINT64_C(1) << sm) : frac;
  int64_t exp = (e ? e : 1) - src_bias;
  if (exp + dst_bias >= dst_max)
    return (uint32_t)(dst_max << dm); /* overflow even before rounding */
  /* The result's exponent: exp itself, or the subnormal exponent. The
   * encoding is ((res_exp + bias - 1) << dm) + round(mant >> shift): the
   * rounded mantissa keeps its implicit bit, which adds the last 1 to the
   * exponent field, and a carry out of the mantissa bumps the exponent (up
   * to exactly the infinity pattern at the top). */
  int64_t res_exp = exp < 1 - dst_bias ? 1 - dst_bias : exp;
  int64_t shift = res_exp - exp + sm - dm; /* >= 1 */
  if (shift > sm + 1)
    return 0; /* below half the smallest subnormal: rounds to zero */
  uint64_t half = UINT64_C(1) << (shift - 1);
  uint64_t r = (mant + half - 1 + ((mant >> shift) & 1)) >> shift;
  return (uint32_t)(((res_exp + dst_bias - 1) << dm) + (int64_t)r);
}

static inline uint16_t wv_f32_to_f16(float f) {
  uint32_t x;
  memcpy(&x, &f, sizeof x);
  return (uint16_t)(((x >> 16) & 0x8000u) |
                    wv_fp_narrow_(x & 0x7fffffffu, 8, 23, 5, 10));
}

static inline uint16_t wv_f32_to_bf16(float f) {
  uint32_t x;
  memcpy(&x, &f, sizeof x);
  return (uint16_t)(((x >> 16) & 0x8000u) |
                    wv_fp_narrow_(x & 0x7fffffffu, 8, 23, 8, 7));
}

static inline float wv_f16_to_f32(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
  uint32_t e = (h >> 10) & 0x1fu, m = h & 0x3ffu, x;
  if (e == 0x1f) {
    x = sign | 0x7f800000u | (m << 13);
  } else if (e == 0) {
    float f = (float)m * 0x1p-24f; /* exact: m < 2^10 */
    return sign ? -f : f;
  } else {
    x = sign | ((e + 127 - 15) << 23) | (m << 13);
  }
  float f;
  memcpy(&f, &x, sizeof f);
  return f;
}

static inline float wv_bf16_to_f32(uint16_t h) {
  uint32_t x = (uint32_t)h << 16;
  float f;
  memcpy(&f, &x, sizeof f);
  return f;
}

/* 8-bit floating point, as the PTX ISA's cvt.rn.satfinite.{e4m3x2,e5m2x2}
 * defines it (held as the raw byte):
 *  - e4m3 (OCP FP8 E4M3): sign, 4 exponent bits (bias 7), 3 mantissa bits;
 *    no infinities, S.1111.111 is NaN, the largest finite is 448
 *    (S.1111.110), subnormals m * 2^-9;
 *  - e5m2: sign, 5 exponent bits (bias 15), 2 mantissa bits (the high byte
 *    of an f16): S.11111.00 is infinity, S.11111.xx others NaN, the
 *    largest finite is 57344, subnormals m * 2^-16.
 * Narrowing rounds to nearest, ties to even, exactly once from the double;
 * `satfinite`: a result beyond the largest finite (infinity included)
 * becomes the largest finite of the same sign, and NaN becomes the
 * canonical NaN 0x7F. Widening is exact. */
uint8_t wv_f64_to_e4m3(double d);
uint8_t wv_f64_to_e5m2(double d);
double wv_e4m3_to_f64(uint8_t b);
double wv_e5m2_to_f64(uint8_t b);

/* Rounded once, directly from double (see above). */
uint16_t wv_f64_to_f16(double d);
uint16_t wv_f64_to_bf16(double d);

/* The double nearest-even-rounded to f16 / bf16 and back: what a value
 * becomes when a kernel stores it in that type. */
double wv_round_f16(double d);
double wv_round_bf16(double d);

/* Element i of a buffer of elements of wavec_dtype `dt` (an int: this
 * header stands without wavec.h), widened exactly to double; i1 and
 * unknown types read one byte. The simulator's loads and the CLI's
 * comparisons read elements through it. */
double wv_elem_load(int dt, const void *base, int64_t i);

#endif
