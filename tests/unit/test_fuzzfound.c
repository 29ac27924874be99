/* What the fuzz harnesses (tests/fuzz) found, each with what it must do
 * now. Their inputs are in tests/fuzz/regress/HARNESS/, which the fuzz
 * group replays under the sanitizers; here the behaviour is checked.
 *  - i32_wraps: an i32 product past 2^31 stored to an i32 tensor was
 *    undefined behaviour in the simulator (a double out of int's range
 *    converted to int); i32 arithmetic now wraps at 32 bits as PTX's
 *    mul.lo.s32, add.s32, neg.s32 ... do.
 *  - scalars_as_integers (fuzz_ptx): a scalar used as an integer (inf
 *    compared with an i32 value, an i32 Register of 1e30, a read's fill of
 *    -inf) was converted from double to int64 out of range in the
 *    lowering (undefined behaviour; the PTX printer then refused "an
 *    integer constant beyond 32 bits"); it converts as cast() does:
 *    nearest even, saturated, NaN 0.
 *  - mapping_iterators (fuzz_sim): a mapping whose outputs named one
 *    iterator twice (so another was never bound), or whose input used an
 *    iterator no output gives, reached the lowering with that iterator
 *    unbound: an internal error without a location. The mapping is now
 *    refused where it is declared (E0309, at the output or input).
 *  - npy_count_fits_int64 (fuzz_npy): a header whose shape has more than
 *    2^63-1 elements of one byte, but fewer than 2^64 bytes, was accepted,
 *    and its element count overflowed int64_t (wv_npy_count); a shape
 *    past 2^63-1 bytes is refused. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "support/npy.h"
#include "wavec.h"

/* Compiles kernel 0 of src with N defined (and Q, a NaN) and simulates it
 * on bufs. */
static wavec_status simulate(const char *src, int64_t n, void **bufs,
                             char *msg, size_t len) {
  wavec_ctx *ctx = wavec_ctx_new(NULL, NULL);
  wavec_define_int(ctx, "N", n);
  wavec_define_float(ctx, "Q", NAN);
  wavec_status st = wavec_parse(ctx, "found.wave", src, strlen(src));
  if (st == WAVEC_OK)
    st = wavec_compile(wavec_kernel_get(ctx, 0), NULL);
  if (st == WAVEC_OK)
    st = wavec_simulate(wavec_kernel_get(ctx, 0), bufs);
  snprintf(msg, len, "%s", wavec_errmsg(ctx));
  wavec_ctx_free(ctx);
  return st;
}

static void i32_wraps(void) {
  static const char src[] =
      "kernel wrap(a: Memory[N, i32], b: Memory[N, i32], p: Memory[N, i32],\n"
      "            s: Memory[N, i32], d: Memory[N, i32]) {\n"
      "  constraints { workgroup(N, 32, 0)\n"
      "                hardware(threads_per_wave = 32) }\n"
      "  x = read(a)\n"
      "  y = read(b)\n"
      "  write(x * y * 2.0, p)\n"
      "  write(x + y, s)\n"
      "  write(x / y, d)\n"
      "}\n";
  enum { N = 32 };
  int32_t a[N], b[N], p[N], s[N], d[N];
  for (int i = 0; i < N; i++) {
    a[i] = i % 2 ? INT32_MAX - i : INT32_MIN + i;
    b[i] = i % 3 ? 100000 + i : -1;
  }
  void *bufs[] = {a, b, p, s, d};
  char msg[1024];
  wavec_status st = simulate(src, N, bufs, msg, sizeof msg);
  CHECKF(st == WAVEC_OK, "%s", msg);
  for (int i = 0; st == WAVEC_OK && i < N; i++) {
    int32_t wp = (int32_t)((uint32_t)a[i] * (uint32_t)b[i] * 2u);
    int32_t ws = (int32_t)((uint32_t)a[i] + (uint32_t)b[i]);
    int32_t wd = (int32_t)(uint32_t)((int64_t)a[i] / b[i]); /* INT_MIN / -1 */
    CHECKF(p[i] == wp && s[i] == ws && d[i] == wd,
           "element %d: %d * %d * 2 = %d (want %d), sum %d (want %d), "
           "quotient %d (want %d)",
           i, a[i], b[i], p[i], wp, s[i], ws, d[i], wd);
  }
}

static void scalars_as_integers(void) {
  static const char src[] =
      "kernel sat(a: Memory[N, i32], x: Memory[N, i1], r: Memory[N, i32],\n"
      "           f: Memory[N, i32], m: Memory[N, i32]) {\n"
      "  constraints { workgroup(N, 32, 0)\n"
      "                hardware(threads_per_wave = 32) }\n"
      "  mapping next(i) {\n"
      "    inputs  { N: i + 1 }\n"
      "    outputs { N: i }\n"
      "  }\n"
      "  i = self_index(N, i32)\n"
      "  write(ge(i, inf), x)\n"
      "  write(Register[N, i32](1e30) + 0 * i, r)\n"
      "  write(read(a, mapping = next, fill = -inf), f)\n"
      "  write(maximum(i, -1e300) + minimum(i, Q), m)\n"
      "}\n";
  enum { N = 32 };
  int32_t a[N], r[N], f[N], m[N];
  uint8_t x[N];
  for (int i = 0; i < N; i++)
    a[i] = 10 * i;
  void *bufs[] = {a, x, r, f, m};
  char msg[1024];
  wavec_status st = simulate(src, N, bufs, msg, sizeof msg);
  CHECKF(st == WAVEC_OK, "%s", msg);
  for (int i = 0; st == WAVEC_OK && i < N; i++) {
    int32_t wf = i + 1 < N ? a[i + 1] : INT32_MIN;
    CHECKF(x[i] == 0 && r[i] == INT32_MAX && f[i] == wf && m[i] == i + 0,
           "element %d: i >= inf %d, Register(1e30) %d, fill(-inf) %d "
           "(want %d), max(i, -1e300) + min(i, NaN) %d",
           i, x[i], r[i], f[i], wf, m[i]);
  }
  /* and the PTX holds them as 32-bit immediates */
  wavec_ctx *ctx = wavec_ctx_new(NULL, NULL);
  wavec_define_int(ctx, "N", N);
  wavec_define_float(ctx, "Q", NAN);
  const char *ptx = NULL;
  st = wavec_parse(ctx, "found.wave", src, strlen(src));
  if (st == WAVEC_OK)
    st = wavec_compile(wavec_kernel_get(ctx, 0), NULL);
  if (st == WAVEC_OK)
    st = wavec_emit_ptx(wavec_kernel_get(ctx, 0), "sm_90", &ptx, NULL);
  CHECKF(st == WAVEC_OK && strstr(ptx, "2147483647"), "%s", wavec_errmsg(ctx));
  wavec_ctx_free(ctx);
}

/* Parses src; it must fail with E0309 at found.wave:LINE:COL, saying what. */
static void refused(const char *src, const char *at, const char *what) {
  wavec_ctx *ctx = wavec_ctx_new(NULL, NULL);
  wavec_status st = wavec_parse(ctx, "found.wave", src, strlen(src));
  if (st == WAVEC_OK)
    st = wavec_compile(wavec_kernel_get(ctx, 0), NULL);
  const char *msg = wavec_errmsg(ctx);
  CHECKF(st != WAVEC_OK && strstr(msg, at) && strstr(msg, "E0309") &&
             strstr(msg, what),
         "want %s E0309 '%s', got: %s", at, what, msg);
  wavec_ctx_free(ctx);
}

static void mapping_iterators(void) {
  /* the reduced fuzz_sim input: K2 and B both given iterator i */
  refused("kernel t(k: Memory[B, K2, K1, f16], o: Memory[B, K1, K2, f16]) {\n"
          "  constraints { workgroup(K1, 16, 0)\n"
          "                hardware(threads_per_wave = 32) }\n"
          "  mapping tk(i, j, l) {\n"
          "    inputs  { B: i, K2: l, K1: j }\n"
          "    outputs { B: i, K1: j, K2: i }\n"
          "  }\n"
          "  write(read(k, mapping = tk), o)\n"
          "}\n",
          "found.wave:6:28:", "outputs 'B' and 'K2' are both iterator 'i'");
  /* input K2 uses l, which no output binds */
  refused("kernel t(k: Memory[B, K2, K1, f16], o: Memory[B, K1, f16]) {\n"
          "  constraints { workgroup(K1, 16, 0)\n"
          "                hardware(threads_per_wave = 32) }\n"
          "  mapping tk(i, j, l) {\n"
          "    inputs  { B: i, K2: 2 * l + 1, K1: j }\n"
          "    outputs { B: i, K1: j }\n"
          "  }\n"
          "  write(read(k, mapping = tk), o)\n"
          "}\n",
          "found.wave:5:21:", "input 'K2' uses iterator 'l', which no output");
}

static void npy_count_fits_int64(void) {
  static const char *const shapes[] = {"(4611686018427387903, 3,)",
                                       "(3074457345618258603, 3)",
                                       "(4611686018427387904, 2)"};
  for (int i = 0; i < 3; i++) {
    char hdr[128], file[256];
    int n = snprintf(hdr, sizeof hdr,
                     "{'descr': '|b1', 'fortran_order': False, 'shape': %s}",
                     shapes[i]);
    int pad = 64 - (10 + n + 1) % 64;
    int len = snprintf(file, sizeof file, "\x93NUMPY\x01%c%c%c%s%*s\n", 0,
                       (int)(n + pad + 1), 0, hdr, pad, "");
    (void)len;
    wv_npy a;
    size_t off = 0;
    char err[256] = "";
    int r = wv_npy_parse_header((const unsigned char *)file, 10 + (size_t)n +
                                    (size_t)pad + 1, &a, &off, err, sizeof err);
    CHECKF(r != 0 && err[0], "%s: accepted (%s)", shapes[i], err);
  }
  /* 2^62 one-byte elements still read as a header */
  const char *ok = "{'descr': '|b1', 'fortran_order': False, 'shape': "
                   "(4611686018427387904,)}";
  char file[256];
  int n = (int)strlen(ok), pad = 64 - (10 + n + 1) % 64;
  snprintf(file, sizeof file, "\x93NUMPY\x01%c%c%c%s%*s\n", 0, n + pad + 1, 0,
           ok, pad, "");
  wv_npy a;
  size_t off = 0;
  char err[256] = "";
  CHECKF(wv_npy_parse_header((const unsigned char *)file,
                             10 + (size_t)n + (size_t)pad + 1, &a, &off, err,
                             sizeof err) == 0 &&
             wv_npy_count(&a) == INT64_C(4611686018427387904),
         "%s", err);
}

int main(void) {
  RUN(i32_wraps);
  RUN(scalars_as_integers);
  RUN(mapping_iterators);
  RUN(npy_count_fits_int64);
  CHECK_EXIT();
}
