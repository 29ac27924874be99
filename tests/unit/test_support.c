/* Support modules: f16/bf16 conversions (exhaustive over the 16-bit
 * patterns, every rounding tie, single rounding from double), .npy files
 * (round trips, corrupt input, atomic writes), and the float64 references of
 * tests/ref (hand-computed cases, finite differences). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "support/base.h"
#include "support/half.h"
#include "support/npy.h"

/* The references are test code, not library code: compiled in here. */
#include "../ref/ref.c"

#define WV_ARRAY_LEN_(a) (sizeof(a) / sizeof((a)[0]))

/* ---- half ---------------------------------------------------------------- */

static uint32_t f32_bits(float f) {
  uint32_t x;
  memcpy(&x, &f, sizeof x);
  return x;
}
static float bits_f32(uint32_t x) {
  float f;
  memcpy(&f, &x, sizeof f);
  return f;
}
static double bits_f64(uint64_t x) {
  double d;
  memcpy(&d, &x, sizeof d);
  return d;
}

/* Independent oracle: round x to p significant bits with minimum normal
 * exponent emin and largest finite value maxf, ties to even, using the FPU
 * (rint in the default rounding mode) rather than bit tricks. */
static double oracle_round(double x, int p, int emin, double maxf) {
  if (isnan(x) || x == 0 || isinf(x))
    return x;
  int e;
  frexp(x, &e); /* |x| = f * 2^e, f in [0.5, 1): leading bit at e - 1 */
  int lead = e - 1 < emin ? emin : e - 1;
  int q = lead - (p - 1); /* exponent of one ulp */
  double r = ldexp(rint(ldexp(x, -q)), q);
  if (fabs(r) > maxf)
    return copysign(INFINITY, x);
  return r;
}
static double oracle_f16(double x) {
  return oracle_round(x, 11, -14, 65504.0);
}
static double oracle_bf16(double x) {
  return oracle_round(x, 8, -126, 0x1.fep127);
}

/* Same value, and the same sign for zeros. */
static int same(double a, double b) {
  return a == b && signbit(a) == signbit(b);
}

static void half_f16_exhaustive(void) {
  for (uint32_t h = 0; h < 0x10000; h++) {
    float f = wv_f16_to_f32((uint16_t)h);
    uint32_t e = (h >> 10) & 0x1f, m = h & 0x3ff;
    double want = e == 0    ? ldexp(m, -24)
                  : e == 31 ? (m ? NAN : INFINITY)
                            : ldexp(1024 + m, (int)e - 25);
    if (h & 0x8000)
      want = -want;
    if (e == 31 && m) {
      CHECKF(isnan(f) && (f32_bits(f) >> 31) == (h >> 15), "h=%04x", h);
      /* the payload moves unchanged; narrowing makes it quiet */
      CHECKF((f32_bits(f) & 0x7fffffu) == m << 13, "h=%04x", h);
      CHECKF(wv_f32_to_f16(f) == (h | 0x200), "h=%04x", h);
      CHECKF(wv_f64_to_f16(f) == (h | 0x200), "h=%04x", h);
      continue;
    }
    CHECKF(same(f, want), "h=%04x: %a, want %a", h, f, want);
    CHECKF(wv_f32_to_f16(f) == h, "h=%04x -> %04x", h, wv_f32_to_f16(f));
    CHECKF(wv_f64_to_f16(f) == h, "h=%04x", h);
  }
}

static void half_bf16_exhaustive(void) {
  for (uint32_t h = 0; h < 0x10000; h++) {
    float f = wv_bf16_to_f32((uint16_t)h);
    CHECKF(f32_bits(f) == h << 16, "h=%04x", h);
    if ((h & 0x7f80) == 0x7f80 && (h & 0x7f)) {
      CHECKF(isnan(f), "h=%04x", h);
      CHECKF(wv_f32_to_bf16(f) == (h | 0x40), "h=%04x", h);
      CHECKF(wv_f64_to_bf16(f) == (h | 0x40), "h=%04x", h);
      continue;
    }
    CHECKF(wv_f32_to_bf16(f) == h, "h=%04x -> %04x", h, wv_f32_to_bf16(f));
    CHECKF(wv_f64_to_bf16(f) == h, "h=%04x", h);
  }
}

/* Every tie between two adjacent finite values of a 16-bit format (and the
 * tie above the largest, at the overflow threshold): the exact midpoint goes
 * to the even pattern, one f32 ulp either side to the nearer one, and from
 * double a tiny offset (which a float cannot hold, so a double-rounding
 * conversion would see a tie) decides. */
static void check_ties(int bf, float (*widen)(uint16_t),
                       uint16_t (*narrow32)(float),
                       uint16_t (*narrow64)(double)) {
  uint32_t top = bf ? 0x7f80 : 0x7c00; /* +inf */
  for (uint32_t h = 0; h < top; h++) {
    double a = widen((uint16_t)h);
    double b =
        h + 1 == top ? (bf ? 0x1p128 : 65536.0) : widen((uint16_t)(h + 1));
    double mid = (a + b) / 2; /* exact in double and in float */
    uint32_t even = (h & 1) ? h + 1 : h;
    float fm = (float)mid;
    CHECKF((double)fm == mid, "mid of %04x not exact", h);
    CHECKF(narrow32(fm) == even, "tie %04x: %04x", h, narrow32(fm));
    CHECKF(narrow32(nextafterf(fm, 0)) == h, "below tie %04x", h);
    CHECKF(narrow32(nextafterf(fm, INFINITY)) == h + 1, "above tie %04x", h);
    CHECKF(narrow32(-fm) == (even | 0x8000), "-tie %04x", h);
    CHECKF(narrow64(mid) == even, "f64 tie %04x", h);
    double tiny = ldexp(mid, -40);
    CHECKF(narrow64(mid - tiny) == h, "f64 below tie %04x", h);
    CHECKF(narrow64(mid + tiny) == h + 1, "f64 above tie %04x", h);
    CHECKF(narrow64(-(mid + tiny)) == ((h + 1) | 0x8000), "f64 -tie %04x", h);
  }
}

static void half_ties(void) {
  check_ties(0, wv_f16_to_f32, wv_f32_to_f16, wv_f64_to_f16);
  check_ties(1, wv_bf16_to_f32, wv_f32_to_bf16, wv_f64_to_bf16);
  /* a few by name */
  CHECK(wv_f32_to_f16(1.0f + 0x1p-11f) == 0x3c00);     /* tie to even */
  CHECK(wv_f32_to_f16(1.0f + 3 * 0x1p-11f) == 0x3c02); /* tie to even */
  CHECK(wv_f32_to_f16(2049.0f) == 0x6800);             /* 2048 */
  CHECK(wv_f32_to_f16(2051.0f) == 0x6802);             /* 2052 */
  CHECK(wv_f32_to_f16(65504.0f) == 0x7bff);
  CHECK(wv_f32_to_f16(65519.99f) == 0x7bff);
  CHECK(wv_f32_to_f16(65520.0f) == 0x7c00); /* overflow */
  CHECK(wv_f32_to_f16(-1e30f) == 0xfc00);
  CHECK(wv_f32_to_f16(0x1p-24f) == 0x0001); /* min subnormal */
  CHECK(wv_f32_to_f16(0x1p-25f) == 0x0000); /* tie to zero */
  CHECK(wv_f32_to_f16(0x1.000002p-25f) == 0x0001);
  CHECK(wv_f32_to_f16(3 * 0x1p-25f) == 0x0002); /* 1.5: tie to 2 */
  CHECK(wv_f32_to_f16(0x1.ff8p-15f) == 0x03ff); /* max subnormal */
  CHECK(wv_f32_to_f16(0x1.ffcp-15f) == 0x0400); /* tie: to normal */
  CHECK(wv_f32_to_f16(0x1.ffbffep-15f) == 0x03ff);
  CHECK(wv_f32_to_f16(-0.0f) == 0x8000);
  CHECK(wv_f32_to_f16(0x1p-149f) == 0x0000); /* f32 subnormal */
  CHECK(wv_f32_to_bf16(1.0f + 0x1p-8f) == 0x3f80);
  CHECK(wv_f32_to_bf16(1.0f + 3 * 0x1p-8f) == 0x3f82);
  CHECK(wv_f32_to_bf16(0x1.fffffep127f) == 0x7f80); /* overflow */
  CHECK(wv_f32_to_bf16(0x1.fcp127f) == 0x7f7e);
  CHECK(wv_f32_to_bf16(0x1p-133f) == 0x0001);   /* bf16 subnormal */
  CHECK(wv_f32_to_bf16(0x1p-134f) == 0x0000);   /* tie to zero */
  CHECK(wv_f32_to_bf16(0x1.8p-133f) == 0x0002); /* tie to even */
}

static void half_nan_inf(void) {
  CHECK(wv_f32_to_f16(INFINITY) == 0x7c00);
  CHECK(wv_f32_to_f16(-INFINITY) == 0xfc00);
  CHECK(wv_f32_to_bf16(INFINITY) == 0x7f80);
  CHECK(wv_f64_to_f16(-INFINITY) == 0xfc00);
  CHECK(wv_f64_to_bf16(INFINITY) == 0x7f80);
  /* signalling NaNs come out quiet, sign and top payload bits kept */
  CHECK(wv_f32_to_f16(bits_f32(0x7f800001u)) == 0x7e00);
  CHECK(wv_f32_to_f16(bits_f32(0xffc00000u)) == 0xfe00);
  CHECK(wv_f32_to_f16(bits_f32(0x7fa02000u)) == 0x7f01);
  CHECK(wv_f32_to_bf16(bits_f32(0x7f800001u)) == 0x7fc0);
  CHECK(wv_f32_to_bf16(bits_f32(0xff810000u)) == 0xffc1);
  CHECK(wv_f64_to_f16(bits_f64(0x7ff0000000000001ull)) == 0x7e00);
  CHECK(wv_f64_to_f16(bits_f64(0xfff8000000000000ull)) == 0xfe00);
  CHECK(wv_f64_to_bf16(bits_f64(0x7ff4000000000000ull)) == 0x7fe0);
  CHECK(isnan(wv_f16_to_f32(0x7e00)) && isnan(wv_bf16_to_f32(0xffc0)));
  CHECK(isinf(wv_f16_to_f32(0xfc00)) && wv_f16_to_f32(0xfc00) < 0);
}

/* Rounding once from double: cases where float-first gives another answer. */
static void half_f64_single_rounding(void) {
  double x = 1 + 0x1p-11 + 0x1p-40; /* just above an f16 tie */
  CHECK(wv_f64_to_f16(x) == 0x3c01);
  CHECK(wv_f32_to_f16((float)x) == 0x3c00); /* the double-rounding answer */
  double y = 1 + 0x1p-8 + 0x1p-40;          /* just above a bf16 tie */
  CHECK(wv_f64_to_bf16(y) == 0x3f81);
  CHECK(wv_f32_to_bf16((float)y) == 0x3f80);
  CHECK(wv_f64_to_f16(65520.0 - 0x1p-30) == 0x7bff);
  CHECK(wv_f64_to_f16(65520.0) == 0x7c00);
  CHECK(wv_f64_to_f16(0x1p-25) == 0x0000);
  CHECK(wv_f64_to_f16(0x1p-25 + 0x1p-60) == 0x0001);
  CHECK(wv_f64_to_f16(-0x1p-25 - 0x1p-60) == 0x8001);
  CHECK(wv_f64_to_f16(0x1p-1074) == 0x0000); /* f64 subnormal */
  CHECK(wv_f64_to_f16(-0x1p-1074) == 0x8000);
  CHECK(wv_f64_to_f16(1.7976931348623157e308) == 0x7c00);
  CHECK(wv_f64_to_bf16(1.7976931348623157e308) == 0x7f80);
  CHECK(wv_f64_to_bf16(0x1p-134 + 0x1p-160) == 0x0001);
  CHECK(wv_f64_to_bf16(0x1.fep127) == 0x7f7f);
  CHECK(wv_f64_to_bf16(0x1.ffp127) == 0x7f80); /* the overflow tie */
  CHECK(wv_f64_to_bf16(0x1.ffp127 - 0x1p80) == 0x7f7f);
  CHECK(wv_round_f16(0.1) == 0x1.998p-4);
  CHECK(wv_round_bf16(0.1) == 0x1.9ap-4);
}

/* Random f32 and f64 inputs against the FPU oracle. */
/* fp8 against a brute-force oracle: the nearest of the 256 codes (ties to
 * the even code, the one whose mantissa ends in 0), saturated to the
 * largest finite, NaN to 0x7F; exhaustive round trips; the PTX ISA's
 * special cases. */
static uint8_t fp8_oracle(double x, double (*widen)(uint8_t), uint8_t maxc) {
  if (isnan(x))
    return 0x7f;
  double mx = widen(maxc);
  if (x >= mx)
    return maxc;
  if (x <= -mx)
    return (uint8_t)(0x80 | maxc);
  int best = -1;
  double bd = INFINITY;
  for (int c = 0; c < 256; c++) {
    double v = widen((uint8_t)c);
    if (isnan(v) || isinf(v) || (v == 0 && signbit(v) != signbit(x)))
      continue;
    double d = fabs(v - x);
    if (d < bd || (d == bd && (c & 1) == 0 && (best & 1))) {
      bd = d;
      best = c;
    }
  }
  return (uint8_t)best;
}

static void fp8_formats(void) {
  static const struct {
    const char *name;
    uint8_t (*narrow)(double);
    double (*widen)(uint8_t);
    uint8_t maxc;
    double max;
  } fs[] = {{"e4m3", wv_f64_to_e4m3, wv_e4m3_to_f64, 0x7e, 448.0},
            {"e5m2", wv_f64_to_e5m2, wv_e5m2_to_f64, 0x7b, 57344.0}};
  for (int f = 0; f < 2; f++) {
    CHECK(fs[f].widen(fs[f].maxc) == fs[f].max);
    CHECK(fs[f].narrow(NAN) == 0x7f && isnan(fs[f].widen(0x7f)));
    CHECK(fs[f].narrow(INFINITY) == fs[f].maxc);       /* satfinite */
    CHECK(fs[f].narrow(-INFINITY) == (0x80 | fs[f].maxc));
    CHECK(fs[f].narrow(1e30) == fs[f].maxc);
    CHECK(fs[f].narrow(-0.0) == 0x80 && fs[f].narrow(0.0) == 0);
    /* every finite code comes back */
    for (int c = 0; c < 256; c++) {
      double v = fs[f].widen((uint8_t)c);
      if (!isnan(v) && !isinf(v))
        CHECKF(fs[f].narrow(v) == c, "%s: code %02x", fs[f].name, c);
    }
    /* midpoints between neighbours: ties to even; just above and below */
    for (int c = 0; c < 0x7f; c++) {
      double lo = fs[f].widen((uint8_t)c), hi = fs[f].widen((uint8_t)(c + 1));
      if (isnan(hi) || isinf(hi))
        break;
      double mid = (lo + hi) / 2;
      uint8_t even = (uint8_t)(c & 1 ? c + 1 : c);
      CHECKF(fs[f].narrow(mid) == even, "%s: tie %g", fs[f].name, mid);
      CHECKF(fs[f].narrow(-mid) == (0x80 | even), "%s: tie %g", fs[f].name,
             -mid);
      CHECK(fs[f].narrow(nextafter(mid, 0)) == c);
      CHECK(fs[f].narrow(nextafter(mid, INFINITY)) == c + 1);
    }
    /* random magnitudes over the whole range, against the oracle */
    uint64_t s = 12345;
    for (int i = 0; i < 20000; i++) {
      double x = ldexp(ref_rand_uniform(&s, -1, 1), (int)(ref_rand_u64(&s) % 40) - 24);
      CHECKF(fs[f].narrow(x) == fp8_oracle(x, fs[f].widen, fs[f].maxc),
             "%s: %.17g gives %02x, want %02x", fs[f].name, x,
             fs[f].narrow(x), fp8_oracle(x, fs[f].widen, fs[f].maxc));
    }
  }
  /* the formats' facts: smallest subnormals, e5m2 is f16's high byte */
  CHECK(wv_e4m3_to_f64(0x01) == ldexp(1, -9) && wv_e5m2_to_f64(0x01) == ldexp(1, -16));
  CHECK(wv_e4m3_to_f64(0x08) == ldexp(1, -6) && wv_e4m3_to_f64(0x38) == 1.0);
  CHECK(isinf(wv_e5m2_to_f64(0x7c)) && isnan(wv_e5m2_to_f64(0x7d)));
  for (int c = 0; c < 256; c++) {
    double v = wv_e5m2_to_f64((uint8_t)c);
    CHECKF(isnan(v) ? isnan(wv_f16_to_f32((uint16_t)(c << 8)))
                    : v == wv_f16_to_f32((uint16_t)(c << 8)),
           "e5m2 %02x is not the f16 %04x", c, c << 8);
  }
  CHECK(wv_f64_to_e4m3(464.0) == 0x7e);  /* a tie above the largest */
  CHECK(wv_f64_to_e4m3(ldexp(1, -10)) == 0x00); /* half the least: even */
  CHECK(wv_f64_to_e4m3(ldexp(3, -11)) == 0x01);
}

static void half_random_vs_oracle(void) {
  uint64_t st = 12345;
  for (int i = 0; i < 200000; i++) {
    uint64_t r = ref_rand_u64(&st);
    uint32_t x = (uint32_t)r;
    if (i & 1) /* half of them near the 16-bit formats' ranges */
      x = (x & 0x807fffffu) | (uint32_t)(95 + (r >> 40) % 60) << 23;
    float f = bits_f32(x);
    if (isnan(f))
      continue;
    double o16 = oracle_f16(f), ob = oracle_bf16(f);
    CHECKF(same(wv_f16_to_f32(wv_f32_to_f16(f)), o16), "f32 %08x", x);
    CHECKF(same(wv_bf16_to_f32(wv_f32_to_bf16(f)), ob), "f32 %08x", x);
    uint64_t y = r ^ (ref_rand_u64(&st) << 1);
    if (i & 1)
      y = (y & 0x800fffffffffffffull) | (uint64_t)(880 + (r >> 40) % 280) << 52;
    double d = bits_f64(y);
    if (isnan(d))
      continue;
    CHECKF(same(wv_round_f16(d), oracle_f16(d)), "f64 %016llx",
           (unsigned long long)y);
    CHECKF(same(wv_round_bf16(d), oracle_bf16(d)), "f64 %016llx",
           (unsigned long long)y);
  }
}

/* ---- diagnostics --------------------------------------------------------- */

/* Every diagnostic number is given once: a code means one thing. */
static void diag_numbers_unique(void) {
  static const int nums[] = {
#define X(e, num, st, summary) num,
      WV_DIAGS(X)
#undef X
  };
  for (size_t i = 0; i < sizeof nums / sizeof nums[0]; i++)
    for (size_t j = 0; j < i; j++)
      CHECKF(nums[i] != nums[j], "E%04d is given twice", nums[i]);
}

/* ---- npy ----------------------------------------------------------------- */

static char tmpdir[64];

/* TMP(var, "name"): a local char array holding a path in the test's
 * directory. */
#define TMP(var, name)                                                         \
  char var[128];                                                               \
  snprintf(var, sizeof var, "%s/%s", tmpdir, name)

static long file_size(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return -1;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fclose(f);
  return n;
}

static int put_file(const char *path, const void *p, size_t n) {
  FILE *f = fopen(path, "wb");
  if (!f)
    return -1;
  size_t w = fwrite(p, 1, n, f);
  fclose(f);
  return w == n ? 0 : -1;
}

static unsigned char *get_file(const char *path, size_t *n) {
  long len = file_size(path);
  FILE *f = fopen(path, "rb");
  if (!f || len < 0) {
    if (f)
      fclose(f);
    return NULL;
  }
  unsigned char *p = malloc((size_t)len + 1);
  *n = fread(p, 1, (size_t)len, f);
  p[*n] = 0; /* so that strstr stops */
  fclose(f);
  return p;
}

static void npy_round_trip(void) {
  /* (|u1: fp8's raw bytes, |i1: i8; every byte value round-trips) */
  static const char *descrs[] = {"<f2", "<f4", "<u2", "<i4",
                                 "|b1", "|u1", "|i1"};
  static const struct {
    int ndim;
    int64_t shape[8];
  } shapes[] = {{0, {0}},
                {1, {5}},
                {2, {3, 4}},
                {3, {2, 3, 4}},
                {2, {0, 3}},
                {1, {1000}},
                {8, {1, 2, 1, 2, 1, 2, 1, 3}}};
  uint64_t st = 7;
  TMP(path, "rt.npy");
  TMP(tmp, "rt.npy.tmp");
  for (size_t d = 0; d < WV_ARRAY_LEN_(descrs); d++)
    for (size_t s = 0; s < WV_ARRAY_LEN_(shapes); s++) {
      size_t item = wv_npy_itemsize(descrs[d]), n = item;
      for (int i = 0; i < shapes[s].ndim; i++)
        n *= (size_t)shapes[s].shape[i];
      unsigned char *data = malloc(n + 1);
      for (size_t i = 0; i < n; i++)
        data[i] = strcmp(descrs[d], "|b1") == 0
                      ? ref_rand_u64(&st) & 1
                      : (unsigned char)ref_rand_u64(&st);
      char err[256] = "";
      int rc = wv_npy_write(path, descrs[d], shapes[s].ndim, shapes[s].shape,
                            data, err, sizeof err);
      CHECKF(rc == 0, "%s", err);
      CHECK(file_size(tmp) < 0);
      long fs = file_size(path); /* the data starts at a multiple of 64 */
      CHECKF(fs >= 64 + (long)n && ((size_t)fs - n) % 64 == 0, "size %ld", fs);
      wv_npy a;
      rc = wv_npy_read(path, &a, err, sizeof err);
      CHECKF(rc == 0, "%s", err);
      if (rc == 0) {
        CHECK(strcmp(a.descr, descrs[d]) == 0);
        CHECK(a.ndim == shapes[s].ndim);
        CHECK(memcmp(a.shape, shapes[s].shape,
                     (size_t)a.ndim * sizeof(int64_t)) == 0);
        CHECK(a.nbytes == n && a.data != NULL);
        CHECK(wv_npy_count(&a) * (int64_t)item == (int64_t)n);
        CHECK(n == 0 || memcmp(a.data, data, n) == 0);
      }
      wv_npy_free(&a);
      free(data);
    }
  /* The exact header NumPy writes for a (3, 4) float32 array. */
  float z[12] = {0};
  int64_t sh[2] = {3, 4};
  CHECK(wv_npy_write(path, "<f4", 2, sh, z, NULL, 0) == 0);
  size_t len;
  unsigned char *p = get_file(path, &len);
  static const char want[] =
      "\x93NUMPY\x01\x00\x76\x00{'descr': '<f4', 'fortran_order': False, "
      "'shape': (3, 4), }";
  CHECK(p && len == 128 + 48 && memcmp(p, want, sizeof want - 1) == 0 &&
        p[127] == '\n' && p[126] == ' ');
  free(p);
  /* And for rank 1 and 0: (5,) and (). */
  CHECK(wv_npy_write(path, "<f4", 1, (int64_t[]){5}, z, NULL, 0) == 0);
  p = get_file(path, &len);
  CHECK(p && strstr((char *)p + 10, "'shape': (5,), }") != NULL);
  free(p);
  CHECK(wv_npy_write(path, "<i4", 0, NULL, z, NULL, 0) == 0);
  p = get_file(path, &len);
  CHECK(p && strstr((char *)p + 10, "'shape': (), }") != NULL && len == 132);
  free(p);
  remove(path);
}

/* A header as other writers spell it: version 2.0, double quotes, keys in
 * another order, Python 2 longs, no trailing comma. */
static size_t make_file(unsigned char *buf, int major, const char *dict,
                        size_t data_bytes) {
  size_t pre = major == 1 ? 10 : 12, n = strlen(dict);
  size_t total = (pre + n + 1 + 63) / 64 * 64;
  memcpy(buf, "\x93NUMPY", 6);
  buf[6] = (unsigned char)major;
  buf[7] = 0;
  size_t hlen = total - pre;
  buf[8] = (unsigned char)hlen;
  buf[9] = (unsigned char)(hlen >> 8);
  if (pre == 12)
    buf[10] = buf[11] = 0;
  memcpy(buf + pre, dict, n);
  memset(buf + pre + n, ' ', total - pre - n);
  buf[total - 1] = '\n';
  memset(buf + total, 0x3c, data_bytes);
  return total + data_bytes;
}

static void npy_other_spellings(void) {
  static const struct {
    int major;
    const char *dict;
    int ndim;
    int64_t d0, d1;
  } ok[] = {
      {2, "{'descr': '<f2', 'fortran_order': False, 'shape': (2, 3), }", 2, 2,
       3},
      {3, "{\"shape\": (2L, 3L), \"descr\": \"<f2\", \"fortran_order\": False}",
       2, 2, 3},
      {1, "{ 'fortran_order' : False , 'shape' : ( 6 , ) , 'descr' : '<f2' }",
       1, 6, 0},
      {1, "{'descr': '<f2', 'fortran_order': False, 'shape': (6)}", 1, 6, 0},
      /* Fortran order is the same bytes when one extent exceeds 1 */
      {1, "{'descr': '<f2', 'fortran_order': True, 'shape': (1, 6), }", 2, 1,
       6},
  };
  unsigned char buf[512];
  TMP(path, "sp.npy");
  for (size_t i = 0; i < WV_ARRAY_LEN_(ok); i++) {
    size_t n = make_file(buf, ok[i].major, ok[i].dict, 12);
    CHECK(put_file(path, buf, n) == 0);
    wv_npy a;
    char err[256] = "";
    int rc = wv_npy_read(path, &a, err, sizeof err);
    CHECKF(rc == 0, "case %zu: %s", i, err);
    CHECK(a.ndim == ok[i].ndim && a.shape[0] == ok[i].d0 &&
          (ok[i].ndim < 2 || a.shape[1] == ok[i].d1));
    CHECK(a.nbytes == 12 && strcmp(a.descr, "<f2") == 0);
    CHECK(a.data && ((unsigned char *)a.data)[11] == 0x3c);
    wv_npy_free(&a);
  }
  /* bools read back as 0 or 1 */
  size_t n = make_file(
      buf, 1, "{'descr': '|b1', 'fortran_order': False, 'shape': (4,), }", 4);
  buf[n - 1] = 7;
  buf[n - 2] = 0;
  CHECK(put_file(path, buf, n) == 0);
  wv_npy a;
  CHECK(wv_npy_read(path, &a, NULL, 0) == 0);
  CHECK(a.data && ((unsigned char *)a.data)[3] == 1 &&
        ((unsigned char *)a.data)[2] == 0 && ((unsigned char *)a.data)[0] == 1);
  wv_npy_free(&a);
  remove(path);
}

/* Reading bytes[n] as a file must fail with a message containing want. */
static int rejects(const void *bytes, size_t n, const char *want) {
  TMP(path, "bad.npy");
  if (put_file(path, bytes, n))
    return 0;
  wv_npy a;
  memset(&a, 0x55, sizeof a);
  char err[256] = "";
  int rc = wv_npy_read(path, &a, err, sizeof err);
  remove(path);
  int ok = rc == -1 && strstr(err, want) != NULL && a.data == NULL &&
           strstr(err, path) == err;
  if (!ok)
    printf("  rejects(%s): rc=%d err=\"%s\"\n", want, rc, err);
  return ok;
}

static void npy_corrupt(void) {
  unsigned char buf[1024];
  const char *good =
      "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
  size_t n = make_file(buf, 1, good, 24);
  wv_npy a;
  TMP(goodp, "good.npy");
  CHECK(put_file(goodp, buf, n) == 0);
  CHECK(wv_npy_read(goodp, &a, NULL, 0) == 0); /* sanity */
  wv_npy_free(&a);
  remove(goodp);
  /* truncated: everywhere in the preamble and the header, and in the data */
  for (size_t cut = 0; cut < n - 24; cut++)
    CHECKF(rejects(buf, cut, cut < 8 ? "bad magic" : "truncated"), "cut %zu",
           cut);
  CHECK(rejects(buf, n - 1, "truncated data"));
  CHECK(rejects(buf, n - 24, "truncated data: the header needs 24 bytes"));
  unsigned char big[1100];
  memset(big, 0, sizeof big);
  memcpy(big, buf, n);
  CHECK(rejects(big, n + 3, "the file has 27"));
  /* magic and version */
  memcpy(big, buf, n);
  big[0] = 'X';
  CHECK(rejects(big, n, "bad magic"));
  CHECK(rejects("", 0, "bad magic"));
  memcpy(big, buf, n);
  big[6] = 4;
  CHECK(rejects(big, n, "version 4.0"));
  big[6] = 1;
  big[7] = 1;
  CHECK(rejects(big, n, "version 1.1"));
  /* header length over the limit (version 2: four bytes) */
  n = make_file(big, 2, good, 24);
  big[10] = 0x10; /* 1 MiB */
  CHECK(rejects(big, n, "exceeds the limit"));
  /* a header length that runs past the end */
  n = make_file(big, 1, good, 0);
  big[9] = 0x7f;
  CHECK(rejects(big, n, "truncated header"));

  static const struct {
    const char *dict, *want;
  } bad[] = {
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, "
       "4294967296, 4294967296), }",
       "overflows"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (1000000000, "
       "1000000), }",
       "truncated data"}, /* 4 TB claimed: no allocation */
      {"{'descr': '<f4', 'fortran_order': False, 'shape': "
       "(99999999999999999999,), }",
       "dimension too large"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,1,1,1,1,1,1,1,1), "
       "}",
       "more than 8"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (-2, 3), }",
       "dimension"},
      {"{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }",
       "fortran_order is True"},
      {"{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }",
       "unsupported dtype '<f8'"},
      {"{'descr': '>f4', 'fortran_order': False, 'shape': (2, 3), }",
       "big-endian"},
      {"{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,), }",
       "structured"},
      {"{'descr': '<f4', 'shape': (2, 3), }", "missing key 'fortran_order'"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), 'x': 1}",
       "unknown key 'x'"},
      {"{'descr': '<f4', 'descr': '<f4', 'shape': (2, 3), }", "repeated"},
      {"{'descr': '<f4', 'fortran_order': Fals, 'shape': (2, 3), }",
       "True or False"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), } x",
       "after the closing"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2 3), }",
       "',' or ')'"},
      {"{'descr': '<f4' 'fortran_order': False, 'shape': (2, 3), }",
       "',' or '}'"},
      {"{'descr: '<f4', 'fortran_order': False, 'shape': (2, 3), }",
       "expected ':'"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), ",
       "found end of header"},
      {"('descr', '<f4')", "expected '{'"},
  };
  for (size_t i = 0; i < WV_ARRAY_LEN_(bad); i++) {
    n = make_file(big, 1, bad[i].dict, 24);
    CHECKF(rejects(big, n, bad[i].want), "case %zu", i);
  }
  /* a control byte in the header */
  n = make_file(big, 1, good, 24);
  big[21] = 0x01; /* inside the quoted '<f4' */
  CHECK(rejects(big, n, "unsupported character"));
  CHECK(rejects(big, 0, "bad magic"));
  /* a missing file */
  char err[256] = "";
  TMP(nope, "nope.npy");
  CHECK(wv_npy_read(nope, &a, err, sizeof err) == -1 &&
        strstr(err, "cannot open") && a.data == NULL);
}

/* Random mutations of a good header: parse_header either accepts a
 * consistent result or fails with a message, never touching memory it
 * should not (ASan) and never reading past len. */
static void npy_fuzz_header(void) {
  static const char alphabet[] = "{}()[]'\",:  0123456789LTrueFalse<|>fiub";
  unsigned char base[256], m[256];
  size_t n = make_file(base, 1,
                       "{'descr': '<u2', 'fortran_order': False, 'shape': (2, "
                       "3), }",
                       0);
  uint64_t st = 99;
  int accepted = 0;
  for (int it = 0; it < 20000; it++) {
    memcpy(m, base, n);
    int edits = 1 + (int)(ref_rand_u64(&st) % 4);
    for (int e = 0; e < edits; e++) {
      size_t at = ref_rand_u64(&st) % n;
      uint64_t r = ref_rand_u64(&st);
      m[at] = (r & 3) == 0
                  ? (unsigned char)(r >> 8)
                  : (unsigned char)alphabet[(r >> 8) % (sizeof alphabet - 1)];
    }
    size_t len = ref_rand_u64(&st) % 8 == 0 ? ref_rand_u64(&st) % (n + 1) : n;
    /* copy to an exact-size heap block so ASan sees any overread */
    unsigned char *h = malloc(len ? len : 1);
    memcpy(h, m, len);
    wv_npy a;
    size_t off = 0;
    char err[128];
    err[0] = 0;
    if (wv_npy_parse_header(h, len, &a, &off, err, sizeof err) == 0) {
      accepted++;
      size_t item = wv_npy_itemsize(a.descr);
      CHECK(item > 0 && a.ndim >= 0 && a.ndim <= 8 && off <= len);
      CHECK(a.data == NULL);
      int64_t c = wv_npy_count(&a);
      CHECK(c >= 0 && (size_t)c * item == a.nbytes);
    } else {
      CHECKF(err[0] != 0 && strlen(err) < sizeof err, "it %d", it);
    }
    free(h);
  }
  CHECK(accepted > 0);
}

static void npy_write_errors(void) {
  TMP(path, "w.npy");
  float z[6] = {1, 2, 3, 4, 5, 6};
  char err[256] = "";
  int64_t sh[2] = {2, 3};
  CHECK(wv_npy_write(path, "<f4", 2, sh, z, err, sizeof err) == 0);
  long before = file_size(path);
  /* a failed write leaves the old file and no .tmp */
  CHECK(wv_npy_write(path, "<f8", 2, sh, z, err, sizeof err) == -1 &&
        strstr(err, "unsupported dtype '<f8'"));
  CHECK(wv_npy_write(path, "<f4", 9, sh, z, err, sizeof err) == -1 &&
        strstr(err, "rank 9"));
  int64_t neg[2] = {2, -3};
  CHECK(wv_npy_write(path, "<f4", 2, neg, z, err, sizeof err) == -1 &&
        strstr(err, "negative"));
  int64_t huge[3] = {INT64_MAX, INT64_MAX, 2};
  CHECK(wv_npy_write(path, "<f4", 3, huge, z, err, sizeof err) == -1 &&
        strstr(err, "overflows"));
  CHECK(wv_npy_write(path, "<f4", 2, sh, NULL, err, sizeof err) == -1 &&
        strstr(err, "no data"));
  TMP(tmp, "w.npy.tmp");
  CHECK(file_size(path) == before && file_size(tmp) < 0);
  /* an unwritable place */
  TMP(nodir, "no/such/dir.npy");
  CHECK(wv_npy_write(nodir, "<f4", 2, sh, z, err, sizeof err) == -1 &&
        strstr(err, "cannot create"));
  /* replacing an existing file */
  int64_t sh1[1] = {6};
  CHECK(wv_npy_write(path, "<i4", 1, sh1, z, err, sizeof err) == 0);
  wv_npy a;
  CHECK(wv_npy_read(path, &a, err, sizeof err) == 0 && a.ndim == 1 &&
        strcmp(a.descr, "<i4") == 0 && memcmp(a.data, z, 24) == 0);
  wv_npy_free(&a);
  wv_npy_free(NULL);
  /* a tiny err buffer is still NUL-terminated */
  char small[8];
  CHECK(wv_npy_write(path, "<x", 1, sh1, z, small, sizeof small) == -1 &&
        strlen(small) == 7);
  remove(path);
}

/* ---- references ---------------------------------------------------------- */

static void ref_gemm_2x2(void) {
  double a[4] = {1, 2, 3, 4}, b[4] = {5, 6, 7, 8}, c[4];
  ref_gemm(2, 2, 2, a, b, c); /* c = a bᵀ */
  CHECK(c[0] == 17 && c[1] == 23 && c[2] == 39 && c[3] == 53);
  double a2[6] = {1, 0, 2, 0, 1, 0}, b2[3] = {1, 2, 3}, c2[2];
  ref_gemm(2, 1, 3, a2, b2, c2); /* 2x3 times (1x3)ᵀ */
  CHECK(c2[0] == 7 && c2[1] == 2);
}

static void ref_attn_hand(void) {
  /* One key: the softmax is 1, so o = v and lse = scale * q·k. */
  double q[2 * 3 * 2], k[2 * 1 * 2], v[2 * 1 * 2], o[2 * 3 * 2], lse[6];
  uint64_t st = 3;
  ref_rand_fill(&st, 12, -1, 1, REF_F64, q);
  ref_rand_fill(&st, 4, -1, 1, REF_F64, k);
  ref_rand_fill(&st, 4, -1, 1, REF_F64, v);
  ref_attn_fwd(2, 3, 1, 2, 2, 0.5, 0, q, k, v, o, lse);
  for (int b = 0; b < 2; b++)
    for (int i = 0; i < 3; i++) {
      const double *qi = q + (b * 3 + i) * 2, *kb = k + b * 2;
      CHECK(fabs(lse[b * 3 + i] - 0.5 * (qi[0] * kb[0] + qi[1] * kb[1])) <
            1e-15);
      CHECK(o[(b * 3 + i) * 2] == v[b * 2] &&
            o[(b * 3 + i) * 2 + 1] == v[b * 2 + 1]);
    }
  /* Two keys with scores 0 and ln 3: weights 1/4, 3/4; lse = ln 4. */
  double q1[1] = {1}, k1[2] = {0, log(3.0)}, v1[2] = {1, 5}, o1[1], l1[1];
  ref_attn_fwd(1, 1, 2, 1, 1, 1.0, 0, q1, k1, v1, o1, l1);
  CHECK(fabs(o1[0] - 4) < 1e-14 && fabs(l1[0] - log(4.0)) < 1e-15);
  ref_attn_fwd(1, 1, 2, 1, 1, 1.0, REF_LSE_BASE2, q1, k1, v1, o1, l1);
  CHECK(fabs(l1[0] - 2) < 1e-15);
  /* Causal: query 0 sees key 0 only; query 1 sees both. */
  double q2[2] = {1, 1}, o2[2], l2[2];
  ref_attn_fwd(1, 2, 2, 1, 1, 1.0, REF_CAUSAL, q2, k1, v1, o2, l2);
  CHECK(o2[0] == 1 && l2[0] == 0);
  CHECK(fabs(o2[1] - 4) < 1e-14 && fabs(l2[1] - log(4.0)) < 1e-15);
}

enum { FB = 2, FM = 3, FK2 = 4, FK1 = 3, FN = 2 };

/* L = sum(o ∘ do): its gradients are what ref_attn_bwd returns. */
static double loss(double scale, int flags, const double *q, const double *k,
                   const double *v, const double *do_) {
  double o[FB * FM * FN];
  ref_attn_fwd(FB, FM, FK2, FK1, FN, scale, flags, q, k, v, o, NULL);
  return dot(FB * FM * FN, o, do_);
}

static double fd_max_err(double scale, int flags, double *x, size_t n,
                         const double *grad, double *q, double *k, double *v,
                         const double *do_) {
  double worst = 0;
  for (size_t i = 0; i < n; i++) {
    const double h = 1e-5, x0 = x[i];
    x[i] = x0 + h;
    double lp = loss(scale, flags, q, k, v, do_);
    x[i] = x0 - h;
    double lm = loss(scale, flags, q, k, v, do_);
    x[i] = x0;
    double e = fabs((lp - lm) / (2 * h) - grad[i]);
    if (e > worst)
      worst = e;
  }
  return worst;
}

static void ref_attn_bwd_fd(void) {
  double q[FB * FM * FK1], k[FB * FK2 * FK1], v[FB * FK2 * FN],
      do_[FB * FM * FN];
  double dq[FB * FM * FK1], dk[FB * FK2 * FK1], dv[FB * FK2 * FN], D[FB * FM];
  double o[FB * FM * FN], D2[FB * FM];
  uint64_t st = 2024;
  ref_rand_fill(&st, FB * FM * FK1, -1, 1, REF_F64, q);
  ref_rand_fill(&st, FB * FK2 * FK1, -1, 1, REF_F64, k);
  ref_rand_fill(&st, FB * FK2 * FN, -1, 1, REF_F64, v);
  ref_rand_fill(&st, FB * FM * FN, -1, 1, REF_F64, do_);
  for (int flags = 0; flags <= REF_CAUSAL; flags++) {
    double scale = 0.7;
    ref_attn_bwd(FB, FM, FK2, FK1, FN, scale, flags, q, k, v, do_, dq, dk, dv,
                 D);
    CHECKF(fd_max_err(scale, flags, q, FB * FM * FK1, dq, q, k, v, do_) < 1e-8,
           "dq, flags %d", flags);
    CHECKF(fd_max_err(scale, flags, k, FB * FK2 * FK1, dk, q, k, v, do_) < 1e-8,
           "dk, flags %d", flags);
    CHECKF(fd_max_err(scale, flags, v, FB * FK2 * FN, dv, q, k, v, do_) < 1e-8,
           "dv, flags %d", flags);
    ref_attn_fwd(FB, FM, FK2, FK1, FN, scale, flags, q, k, v, o, NULL);
    ref_attn_D(FB, FM, FN, do_, o, D2);
    CHECK(ref_max_abs_err(FB * FM, D, D2) < 1e-14);
  }
  /* Causal: the last key is seen only by queries >= 3, and M = 3, so it
   * gets no gradient. */
  CHECK(dk[(FK2 - 1) * FK1] == 0 && dv[(FK2 - 1) * FN] == 0);
}

/* The LANGUAGE.md example agrees with the full backward when the scale is
 * folded into q, and its intermediates are what they say. */
static void ref_dkdv_matches_bwd(void) {
  enum { B = 2, M = 5, K2 = 4, K1 = 3, N = 2 };
  double q[B * M * K1], qs[B * M * K1], k[B * K2 * K1], v[B * K2 * N],
      do_[B * M * N];
  double dq[B * M * K1], dk[B * K2 * K1], dv[B * K2 * N], D[B * M];
  double o[B * M * N], lse[B * M];
  double s[B * M * K2], p[B * M * K2], dp[B * M * K2], dps[B * M * K2];
  double dk2[B * K2 * K1], dv2[B * K2 * N];
  uint64_t st = 77;
  ref_rand_fill(&st, B * M * K1, -2, 2, REF_F16, q);
  ref_rand_fill(&st, B * K2 * K1, -2, 2, REF_F16, k);
  ref_rand_fill(&st, B * K2 * N, -2, 2, REF_F16, v);
  ref_rand_fill(&st, B * M * N, -2, 2, REF_F16, do_);
  const double scale = 0.5;
  for (size_t i = 0; i < B * M * K1; i++)
    qs[i] = scale * q[i];
  ref_attn_bwd(B, M, K2, K1, N, scale, 0, q, k, v, do_, dq, dk, dv, D);
  ref_attn_fwd(B, M, K2, K1, N, 1.0, 0, qs, k, v, o, lse);
  ref_dkdv_example(B, M, K2, K1, N, 0, qs, k, v, do_, lse, D, s, p, dp, dps,
                   dv2, dk2);
  CHECKF(ref_rel_err(B * K2 * K1, dk2, dk) < 1e-13, "%g",
         ref_rel_err(B * K2 * K1, dk2, dk));
  CHECKF(ref_rel_err(B * K2 * N, dv2, dv) < 1e-13, "%g",
         ref_rel_err(B * K2 * N, dv2, dv));
  for (size_t b = 0; b < B; b++) {
    double sb[M * K2], db[M * K2];
    ref_gemm(M, K2, K1, qs + b * M * K1, k + b * K2 * K1, sb);
    ref_gemm(M, K2, N, do_ + b * M * N, v + b * K2 * N, db);
    CHECK(ref_max_abs_err(M * K2, s + b * M * K2, sb) == 0);
    CHECK(ref_max_abs_err(M * K2, dp + b * M * K2, db) == 0);
    for (size_t i = 0; i < M; i++) {
      double sum = 0;
      for (size_t j = 0; j < K2; j++) {
        sum += p[(b * M + i) * K2 + j];
        CHECK(dps[(b * M + i) * K2 + j] ==
              dp[(b * M + i) * K2 + j] - D[b * M + i]);
      }
      CHECK(fabs(sum - 1) < 1e-14);
    }
  }
  /* NULL intermediates are allowed. */
  ref_dkdv_example(B, M, K2, K1, N, 0, qs, k, v, do_, lse, D, NULL, NULL, NULL,
                   NULL, dv2, dk2);
  CHECK(ref_rel_err(B * K2 * N, dv2, dv) < 1e-13);
  /* The f16-mimicking variant: its p and dp_sub are f16 values, and it stays
   * near the pure one. */
  double dk3[B * K2 * K1], dv3[B * K2 * N];
  ref_dkdv_example(B, M, K2, K1, N, REF_MIMIC_F16, qs, k, v, do_, lse, D, s, p,
                   dp, dps, dv3, dk3);
  int exact16 = 1;
  for (size_t i = 0; i < B * M * K2; i++)
    exact16 &= wv_round_f16(p[i]) == p[i] && wv_round_f16(dps[i]) == dps[i] &&
               (double)(float)s[i] == s[i];
  CHECK(exact16);
  CHECKF(ref_rel_err(B * K2 * N, dv3, dv) < 2e-2, "%g",
         ref_rel_err(B * K2 * N, dv3, dv));
  CHECKF(ref_rel_err(B * K2 * K1, dk3, dk) < 5e-2, "%g",
         ref_rel_err(B * K2 * K1, dk3, dk));
  CHECK(ref_rel_err(B * K2 * N, dv3, dv) > 0);
}

static void ref_errors_and_rng(void) {
  double a[2] = {3, 4}, z[2] = {0, 0}, b[2] = {1, 0}, c[2] = {0, 1};
  CHECK(ref_rel_err(2, a, a) == 0);
  CHECK(ref_rel_err(2, a, z) == 5); /* zero reference: absolute */
  CHECK(fabs(ref_rel_err(2, b, c) - sqrt(2.0)) < 1e-15);
  double nan2[2] = {NAN, 0};
  CHECK(isnan(ref_rel_err(2, nan2, a)));
  CHECK(isnan(ref_max_abs_err(2, nan2, a)));
  float af[2] = {3, 4};
  CHECK(ref_rel_err_f32(2, af, a) == 0);
  /* the generator: reproducible, in range, roughly uniform */
  uint64_t s1 = 42, s2 = 42, s0 = 0;
  double sum = 0;
  int in_range = 1;
  for (int i = 0; i < 10000; i++) {
    double x = ref_rand_uniform(&s1, -2, 3);
    in_range &= x >= -2 && x < 3 && x == ref_rand_uniform(&s2, -2, 3);
    sum += x;
  }
  CHECK(in_range);
  CHECK(fabs(sum / 10000 - 0.5) < 0.05);
  CHECK(ref_rand_u64(&s0) != 0 && s0 != 0);
  uint64_t s3 = 1;
  CHECK(ref_rand_u64(&s3) == 0x47e4ce4b896cdd1dull); /* pinned sequence */
  /* fill and pack */
  double x[64], y[64];
  uint16_t h[64];
  float f[64];
  ref_rand_fill(&s1, 64, -4, 4, REF_F16, x);
  ref_pack(64, x, REF_F16, h);
  ref_unpack(64, h, REF_F16, y);
  CHECK(memcmp(x, y, sizeof x) == 0);
  ref_rand_fill(&s1, 64, -4, 4, REF_BF16, x);
  ref_pack(64, x, REF_BF16, h);
  ref_unpack(64, h, REF_BF16, y);
  CHECK(memcmp(x, y, sizeof x) == 0);
  ref_rand_fill(&s1, 64, -4, 4, REF_F32, x);
  ref_pack(64, x, REF_F32, f);
  ref_unpack(64, f, REF_F32, y);
  CHECK(memcmp(x, y, sizeof x) == 0);
}

int main(void) {
  snprintf(tmpdir, sizeof tmpdir, "/tmp/wv_test_support_XXXXXX");
  if (!mkdtemp(tmpdir)) {
    printf("FAIL setup: mkdtemp\n");
    return 1;
  }
  RUN(diag_numbers_unique);
  RUN(half_f16_exhaustive);
  RUN(half_bf16_exhaustive);
  RUN(half_ties);
  RUN(half_nan_inf);
  RUN(half_f64_single_rounding);
  RUN(half_random_vs_oracle);
  RUN(fp8_formats);
  RUN(npy_round_trip);
  RUN(npy_other_spellings);
  RUN(npy_corrupt);
  RUN(npy_fuzz_header);
  RUN(npy_write_errors);
  RUN(ref_gemm_2x2);
  RUN(ref_attn_hand);
  RUN(ref_attn_bwd_fd);
  RUN(ref_dkdv_matches_bwd);
  RUN(ref_errors_and_rng);
  rmdir(tmpdir);
  CHECK_EXIT();
}
