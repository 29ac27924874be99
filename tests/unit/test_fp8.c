/* 8-bit types in the simulator (docs/LANGUAGE-additions.md, "8-bit
 * types"): conversions bit-exact against the library's formats (which
 * test_support checks against a brute-force oracle, and the GPU test
 * tests/gpu/ops.c against the hardware's cvt), loads and stores of 8-bit
 * tensors, the values the type rules refuse. */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "../ref/kcase.c"
#include "../ref/ref.c"
#include "check.h"
#include "support/half.h"
#include "wavec.h"

static const char *const KERNELS = "tests/kernels/fp8.wave";

/* Inputs with every awkward value: both formats' ties and saturation
 * edges, subnormals, NaN, infinities, zeros of both signs, i8's range. */
static void quantize(void) {
  enum { N = 200 };
  const char *defs[] = {"N=200", NULL};
  kcase c;
  bool ok = kc_open(&c, KERNELS, "quantize", NULL, defs);
  CHECKF(ok, "%s", c.err);
  if (!ok) {
    kc_close(&c);
    return;
  }
  float *x = c.buf[kc_arg(&c, "x")];
  static const float special[] = {
      0.0f, -0.0f, NAN, INFINITY, -INFINITY, 448.0f, 464.0f, 465.0f,
      -480.0f, 57344.0f, 61440.0f, 1e9f, 0x1p-9f, 0x1p-10f, 0x3p-11f,
      0x1p-16f, 0x1p-17f, 0x1.8p-17f, 1.0625f, 1.1875f, 127.4f, 127.5f,
      128.0f, -128.5f, -129.0f, 2.5f, -2.5f, 0.5f, 1.5f, -1e-30f};
  uint64_t rng = 5;
  for (int i = 0; i < N; i++) {
    size_t ns = sizeof special / sizeof *special;
    x[i] = i < (int)ns ? special[i]
                       : (float)ldexp(ref_rand_uniform(&rng, -1, 1),
                                      (int)(ref_rand_u64(&rng) % 24) - 12);
  }
  ok = kc_simulate(&c);
  CHECKF(ok, "%s", c.err);
  if (ok) {
    const uint8_t *q4 = c.buf[kc_arg(&c, "q4")], *q5 = c.buf[kc_arg(&c, "q5")];
    const int8_t *qi = c.buf[kc_arg(&c, "qi")];
    const int32_t *w = c.buf[kc_arg(&c, "w")];
    const float *y = c.buf[kc_arg(&c, "y")];
    for (int i = 0; i < N; i++) {
      uint8_t e4 = wv_f64_to_e4m3(x[i]);
      uint8_t e5 = wv_f64_to_e5m2(wv_round_f16(x[i]));
      double r = nearbyint(x[i]);
      int8_t i8 = isnan(x[i]) ? 0 : r <= -128 ? -128 : r >= 127 ? 127
                                                        : (int8_t)r;
      double back = 2 * wv_e4m3_to_f64(e4);
      CHECKF(q4[i] == e4, "x = %a: e4m3 %02x, want %02x", x[i], q4[i], e4);
      CHECKF(q5[i] == e5, "x = %a: e5m2 %02x, want %02x", x[i], q5[i], e5);
      CHECKF(qi[i] == i8 && w[i] == 2 * i8, "x = %a: i8 %d (%d), want %d",
             x[i], qi[i], w[i], i8);
      CHECKF(isnan(back) ? isnan(y[i]) : y[i] == back, "x = %a: back %a",
             x[i], y[i]);
    }
  }
  kc_close(&c);
}

/* Arithmetic on 8-bit values is refused with a message naming the cast
 * to make. */
static void computing_is_refused(void) {
  static const char *const srcs[] = {
      "kernel k(x: Memory[N, f8e4m3], y: Memory[N, f8e4m3]) {\n"
      "  constraints { workgroup(N, 32, 0), hardware(threads_per_wave = 32) }\n"
      "  write(read(x) + read(x), y)\n}\n",
      "kernel k(x: Memory[N, i8], y: Memory[N, i8]) {\n"
      "  constraints { workgroup(N, 32, 0), hardware(threads_per_wave = 32) }\n"
      "  write(abs(read(x)), y)\n}\n"};
  static const char *const want[] = {"cast() to f16 or f32 first",
                                     "cast() to i32 first"};
  for (int i = 0; i < 2; i++) {
    wavec_ctx *ctx = wavec_ctx_new(NULL, NULL);
    wavec_status st = wavec_parse(ctx, "k.wave", srcs[i], strlen(srcs[i]));
    CHECK(st == WAVEC_ERR_TYPE);
    CHECKF(strstr(wavec_errmsg(ctx), want[i]) &&
               strstr(wavec_errmsg(ctx), "k.wave:3:"),
           "%s", wavec_errmsg(ctx));
    wavec_ctx_free(ctx);
  }
}

int main(void) {
  RUN(quantize);
  RUN(computing_is_refused);
  CHECK_EXIT();
}
