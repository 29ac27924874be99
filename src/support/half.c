/* f64 -> f16/bf16, rounded once (see half.h). */
#include "support/half.h"

#include "wavec.h"

#include <math.h>
#include <stdbool.h>

static uint64_t f64_bits(double d) {
  uint64_t x;
  memcpy(&x, &d, sizeof x);
  return x;
}

uint16_t wv_f64_to_f16(double d) {
  uint64_t x = f64_bits(d);
  return (uint16_t)((x >> 48 & 0x8000u) |
                    wv_fp_narrow_(x & ~(UINT64_C(1) << 63), 11, 52, 5, 10));
}

uint16_t wv_f64_to_bf16(double d) {
  uint64_t x = f64_bits(d);
  return (uint16_t)((x >> 48 & 0x8000u) |
                    wv_fp_narrow_(x & ~(UINT64_C(1) << 63), 11, 52, 8, 7));
}

double wv_round_f16(double d) {
  return wv_f16_to_f32(wv_f64_to_f16(d));
}

double wv_round_bf16(double d) {
  return wv_bf16_to_f32(wv_f64_to_bf16(d));
}

/* The one narrowing behind both 8-bit formats: d rounded to nearest, ties
 * to even, onto a format of `mb` mantissa bits and exponent bias `bias`
 * (normal exponents from 1 - bias up), saturated to the magnitude code
 * `maxc`; NaN gives 0x7F. Integer arithmetic only, as wv_fp_narrow_. */
static uint8_t narrow8(double d, int mb, int bias, uint32_t maxc) {
  uint64_t x = f64_bits(d);
  uint8_t sign = (uint8_t)(x >> 56 & 0x80u);
  uint64_t a = x & ~(UINT64_C(1) << 63);
  int64_t e = (int64_t)(a >> 52);
  uint64_t frac = a & ((UINT64_C(1) << 52) - 1);
  if (e == 0x7ff)
    return frac ? 0x7f : (uint8_t)(sign | maxc); /* NaN; inf saturates */
  if (a == 0)
    return sign;
  /* value = mant * 2^(exp - 52) */
  uint64_t mant = e ? frac | (UINT64_C(1) << 52) : frac;
  int64_t exp = (e ? e : 1) - 1023;
  if (exp > 16) /* far beyond either format's largest finite */
    return (uint8_t)(sign | maxc);
  int64_t emin = 1 - bias;
  int64_t res_exp = exp < emin ? emin : exp;
  int64_t shift = res_exp - exp + 52 - mb; /* >= 52 - mb */
  if (shift > 62)
    return sign; /* below half the smallest subnormal */
  uint64_t half = UINT64_C(1) << (shift - 1);
  uint64_t r = (mant + half - 1 + ((mant >> shift) & 1)) >> shift;
  uint64_t code = (uint64_t)((res_exp + bias - 1) << mb) + r;
  return (uint8_t)(sign | (code > maxc ? maxc : code));
}

uint8_t wv_f64_to_e4m3(double d) { return narrow8(d, 3, 7, 0x7e); }
uint8_t wv_f64_to_e5m2(double d) { return narrow8(d, 2, 15, 0x7b); }

static double widen8(uint8_t b, int mb, int bias, bool has_inf) {
  int e = (b & 0x7f) >> mb, m = b & ((1 << mb) - 1), emax = 0x7f >> mb;
  double v;
  if (e == emax && (has_inf || m == (1 << mb) - 1))
    v = has_inf && m == 0 ? INFINITY : NAN;
  else if (e == 0)
    v = ldexp(m, 1 - bias - mb);
  else
    v = ldexp(m | (1 << mb), e - bias - mb);
  return b & 0x80 ? -v : v;
}

double wv_e4m3_to_f64(uint8_t b) { return widen8(b, 3, 7, false); }
double wv_e5m2_to_f64(uint8_t b) { return widen8(b, 2, 15, true); }

double wv_elem_load(int dt, const void *base, int64_t i) {
  switch ((wavec_dtype)dt) {
  case WAVEC_F16: return wv_f16_to_f32(((const uint16_t *)base)[i]);
  case WAVEC_BF16: return wv_bf16_to_f32(((const uint16_t *)base)[i]);
  case WAVEC_F32: return ((const float *)base)[i];
  case WAVEC_I32: return ((const int32_t *)base)[i];
  case WAVEC_F8E4M3: return wv_e4m3_to_f64(((const uint8_t *)base)[i]);
  case WAVEC_F8E5M2: return wv_e5m2_to_f64(((const uint8_t *)base)[i]);
  case WAVEC_I8: return ((const int8_t *)base)[i];
  default: return ((const uint8_t *)base)[i];
  }
}
