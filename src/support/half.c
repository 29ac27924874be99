/* f64 -> f16/bf16, rounded once (see half.h). */
#include "support/half.h"

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
