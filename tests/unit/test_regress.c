/* Regressions: kernels that once gave wrong numbers without any error.
 *  - rowsum: a sum carried through a loop took the carried value's layout
 *    instead of its input's, and dropped rows;
 *  - ints: integer constants (literals, i32 Register fills) became 0;
 * and a reduction whose dimension the waves split (partials meet in shared
 * memory); a warpgroup loop that touches its carried accumulator before
 * any wait (its wgmmas must not run on into the next iteration); sums
 * whose lanes hold copies of the summed elements (sum_of_copies); a
 * wgmma's lhs stored transposed, plain and permuted, with rows a copy
 * cannot move (transposed_lhs). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../ref/kcase.c"
#include "../ref/ref.c"
#include "check.h"

static void carried_sum_keeps_rows(void) {
  static const char *const ops[] = {"rowsum", "rowsum_waves"};
  for (int m = 4, o = 0; m <= 16; m *= 2, o ^= 1) {
    char dm[16];
    snprintf(dm, sizeof dm, "M=%d", m);
    const char *defs[] = {dm, o ? "N=128" : "N=48", NULL};
    int n = o ? 128 : 48;
    kcase c;
    bool ok = kc_open(&c, "tests/kernels/regress.wave", ops[o], NULL, defs);
    CHECKF(ok, "%s", c.err);
    uint64_t rng = 3;
    if (ok) {
      double *x = kc_input(&c, "x", &rng);
      double ref[16];
      for (int i = 0; i < m; i++) {
        ref[i] = 0;
        for (int j = 0; j < n; j++)
          ref[i] += x[i * n + j];
      }
      ok = kc_simulate(&c);
      CHECKF(ok, "%s", c.err);
      if (ok)
        CHECKF(kc_rel_err(&c, "r", ref) < 1e-6, "%s M=%d: rel err %g", ops[o],
               m, kc_rel_err(&c, "r", ref));
      free(x);
    }
    kc_close(&c);
  }
}

static void integer_constants(void) {
  const char *defs[] = {"N=16", NULL};
  kcase c;
  bool ok = kc_open(&c, "tests/kernels/regress.wave", "ints", NULL, defs);
  CHECKF(ok, "%s", c.err);
  if (ok && kc_simulate(&c)) {
    double ref[16];
    for (int i = 0; i < 16; i++)
      ref[i] = i + 1 + 7;
    CHECK(kc_rel_err(&c, "y", ref) == 0);
  } else {
    CHECKF(0, "%s", c.err);
  }
  kc_close(&c);
}

/* decayed_gemm_wgmma: acc = 0.5 acc + a_t b_tᵀ per K tile t, so c = sum
 * over the T tiles of 0.5^(T-1-t) a_t b_tᵀ, with rings of 1 to 4 slots; at 3 and 4 slots the loop could
 * carry its wgmmas into the next iteration, but it touches the carried
 * accumulator first, so it must not. */
static void decayed_accumulator(void) {
  static const char *const depths[] = {"stages=1", "stages=2", "stages=3",
                                       "stages=4"};
  enum { M = 64, N = 128, K = 256, T = K / 64 };
  for (int d = 0; d < 4; d++) {
    const char *defs[] = {"M=64", "N=128", "K=256", depths[d], NULL};
    kcase c;
    bool ok = kc_open(&c, "tests/kernels/regress.wave", "decayed_gemm_wgmma",
                      NULL, defs);
    CHECKF(ok, "%s", c.err);
    uint64_t rng = 9;
    if (ok) {
      double *a = kc_input(&c, "a", &rng), *b = kc_input(&c, "b", &rng);
      double *ref = calloc((size_t)M * N, sizeof *ref);
      for (int t = 0; t < T; t++) {
        double w = ldexp(1.0, -(T - 1 - t));
        for (int i = 0; i < M; i++)
          for (int j = 0; j < N; j++) {
            double x = 0;
            for (int k = 64 * t; k < 64 * (t + 1); k++)
              x += a[i * K + k] * b[j * K + k];
            ref[i * N + j] = ref[i * N + j] + w * x;
          }
      }
      ok = kc_simulate(&c);
      CHECKF(ok, "%s: %s", depths[d], c.err);
      if (ok)
        CHECKF(kc_rel_err(&c, "c", ref) < 1e-5, "%s: rel err %g", depths[d],
               kc_rel_err(&c, "c", ref));
      free(a), free(b), free(ref);
    }
    kc_close(&c);
  }
}

/* f16 values of x (rounded in place). */
static void round_f16(size_t n, double *x) {
  uint16_t *h = malloc(n * sizeof *h);
  ref_pack(n, x, REF_F16, h);
  ref_unpack(n, h, REF_F16, x);
  free(h);
}

/* Loop results as mma operands after the loop (once E0999 in expand): the
 * result of a loop that only carries a tile, as lhs and as rhs; the K-tiled
 * GEMM chain (a · bᵀ) · dᵀ; a carried row sum cast to f16. */
static void loop_results_as_mma_operands(void) {
  static const struct {
    const char *kernel;
    const char *defs[6]; /* NULL-terminated */
  } cs[] = {
      {"loop_result_lhs", {NULL}},
      {"loop_result_lhs", {"M=64", "K=32", "P=32", "T=16"}},
      {"loop_result_rhs", {NULL}},
      {"loop_result_rhs", {"M=64", "K=64", "P=48", "T=48"}},
      {"gemm_chain", {"M=64", "N=32", "K=96", "P=16"}},
      {"gemm_chain", {"M=128", "N=64", "K=64", "P=32", "WAVES=1"}},
      {"loop_sum_lhs", {NULL}},
      {"loop_sum_lhs", {"M=32", "K=16", "P=32", "T=10"}},
  };
  for (size_t i = 0; i < sizeof cs / sizeof *cs; i++) {
    for (int h = 0; h < 2; h++) {
      /* the chain also on the 64-lane MFMA layouts */
      if (h && strcmp(cs[i].kernel, "gemm_chain"))
        continue;
      kcase c;
      bool ok = kc_open(&c, "tests/kernels/regress.wave", cs[i].kernel,
                        h ? &kc_mfma : NULL, cs[i].defs);
      CHECKF(ok, "%s", c.err);
      if (!ok) {
        kc_close(&c);
        continue;
      }
      const wavec_arg_info *e = &c.info[kc_arg(&c, "e")];
      size_t rows = e->shape[0], cols = e->shape[1];
      uint64_t rng = 21 + i;
      double *ref = malloc(rows * cols * sizeof *ref), *x = NULL, *y = NULL;
      double tol = 1e-5;
      if (!strcmp(cs[i].kernel, "loop_sum_lhs")) {
        const wavec_arg_info *z = &c.info[kc_arg(&c, "z")];
        size_t T = z->shape[0], M = z->shape[1], K = z->shape[2];
        y = kc_input(&c, "z", &rng);
        x = calloc(M * K, sizeof *x);
        for (size_t t = 0; t < T; t++)
          for (size_t j = 0; j < M * K; j++)
            x[j] += y[t * M * K + j];
        round_f16(M * K, x);
        free(y);
        y = kc_input(&c, "d", &rng);
        ref_gemm(M, cols, K, x, y, ref);
        tol = 1e-3; /* the f32 sum and the f64 one may round apart */
      } else if (!strcmp(cs[i].kernel, "gemm_chain")) {
        const wavec_arg_info *b = &c.info[kc_arg(&c, "b")];
        size_t M = rows, N = b->shape[0], K = b->shape[1];
        double *a = kc_input(&c, "a", &rng), *d;
        y = kc_input(&c, "b", &rng);
        d = kc_input(&c, "d", &rng);
        x = malloc(M * N * sizeof *x);
        ref_gemm(M, N, K, a, y, x);
        round_f16(M * N, x);
        ref_gemm(M, cols, N, x, d, ref);
        free(a), free(d);
        tol = 1e-3;
      } else {
        size_t K = c.info[kc_arg(&c, "a")].shape[1];
        x = kc_input(&c, "a", &rng);
        y = kc_input(&c, "d", &rng);
        if (!strcmp(cs[i].kernel, "loop_result_lhs"))
          ref_gemm(rows, cols, K, x, y, ref);
        else
          ref_gemm(rows, cols, K, y, x, ref);
      }
      ok = kc_simulate(&c);
      CHECKF(ok, "%s: %s", cs[i].kernel, c.err);
      if (ok) {
        double err = kc_rel_err(&c, "e", ref);
        CHECKF(err < tol, "%s %s (%zu x %zu): rel err %g", cs[i].kernel,
               h ? "mfma" : "nvidia", rows, cols, err);
      }
      free(x), free(y), free(ref);
      kc_close(&c);
    }
  }
}

/* Integer / and % truncate toward zero: signs of both operands. */
static void integer_division(void) {
  const char *defs[] = {"N=64", NULL};
  kcase c;
  bool ok = kc_open(&c, "tests/kernels/regress.wave", "int_div", NULL, defs);
  CHECKF(ok, "%s", c.err);
  if (ok) {
    int32_t *a = c.buf[kc_arg(&c, "a")], *b = c.buf[kc_arg(&c, "b")];
    for (int i = 0; i < 64; i++) {
      a[i] = (i % 2 ? -1 : 1) * (i * 7 + 1);
      b[i] = (i % 3 ? 1 : -1) * (i % 5 + 1);
    }
    a[0] = -15, b[0] = 7;  /* C: -2, remainder -1 (floor: -3, 6) */
    a[1] = 15, b[1] = -7;  /* -2, 1 */
    a[2] = -15, b[2] = -7; /* 2, -1 */
    ok = kc_simulate(&c);
    CHECKF(ok, "%s", c.err);
    if (ok) {
      const int32_t *q = c.buf[kc_arg(&c, "q")], *r = c.buf[kc_arg(&c, "r")];
      CHECK(q[0] == -2 && r[0] == -1);
      CHECK(q[1] == -2 && r[1] == 1);
      CHECK(q[2] == 2 && r[2] == -1);
      for (int i = 0; i < 64; i++)
        CHECKF(q[i] == a[i] / b[i] && r[i] == a[i] % b[i],
               "%d / %d: %d rem %d", a[i], b[i], q[i], r[i]);
    }
  }
  kc_close(&c);
}

/* int_hyper: a hyperparameter expression cast to i32 (y = x + 7) and
 * taking an i32 operand's type (u = 4 x - 6, w = x >= -20), and
 * nan_copies: copies of a row's NaN stored by several lanes (no race). */
static void scalar_values(void) {
  const char *defs[] = {"N=64", NULL};
  kcase c;
  bool ok = kc_open(&c, "tests/kernels/regress.wave", "int_hyper", NULL, defs);
  CHECKF(ok, "%s", c.err);
  if (ok) {
    int32_t *x = c.buf[kc_arg(&c, "x")];
    for (int i = 0; i < 64; i++)
      x[i] = i * 3 - 50;
    ok = kc_simulate(&c);
    CHECKF(ok, "%s", c.err);
    const int32_t *y = c.buf[kc_arg(&c, "y")], *u = c.buf[kc_arg(&c, "u")];
    const bool *wv = c.buf[kc_arg(&c, "w")];
    for (int i = 0; ok && i < 64; i++) {
      CHECKF(y[i] == x[i] + 7, "y[%d] = %d for x = %d", i, y[i], x[i]);
      CHECKF(u[i] == x[i] * 4 - 6, "u[%d] = %d for x = %d", i, u[i], x[i]);
      CHECKF(wv[i] == (x[i] >= -20), "w[%d] = %d for x = %d", i, wv[i], x[i]);
    }
  }
  kc_close(&c);
  const char *defs2[] = {"M=8", "N=32", NULL};
  ok = kc_open(&c, "tests/kernels/regress.wave", "nan_copies", NULL, defs2);
  CHECKF(ok, "%s", c.err);
  if (ok) {
    float *x = c.buf[kc_arg(&c, "x")];
    for (int i = 0; i < 8 * 32; i++)
      x[i] = i < 4 * 32 ? -INFINITY : (float)i; /* rows 0-3: NaN */
    ok = kc_simulate(&c);
    CHECKF(ok, "%s", c.err);
    const float *y = c.buf[kc_arg(&c, "y")];
    for (int i = 0; ok && i < 8; i++)
      CHECKF(i < 4 ? isnan(y[i]) : y[i] == 0, "y[%d] = %g", i, y[i]);
  }
  kc_close(&c);
}

/* Sums whose lanes hold copies of the summed elements (a tile that is
 * not a power of 2, over fewer lanes than the wave's): against float64 at
 * tiles of 3 to 24, the whole row, a loop's tiles and waves' parts. */
static void sum_of_copies(void) {
  static const struct {
    const char *kernel;
    int m, n;
    const char *tile;
  } rows[] = {{"sum_copies", 4, 7, NULL},         {"sum_copies", 8, 17, NULL},
              {"sum_copies", 4, 5, NULL},         {"sum_copies_tiled", 4, 24, "T=12"},
              {"sum_copies_tiled", 4, 21, "T=7"}, {"sum_copies_tiled", 4, 100, "T=20"},
              {"sum_copies_tiled", 4, 33, "T=3"}, {"softmax_copies", 2, 30, "WN=10"},
              {"softmax_copies", 4, 48, "WN=24"}, {"softmax_copies", 2, 42, "WN=14"},
              {"sum_copies_wg", 4, 100, NULL},    {"sum_copies_wg", 4, 7, NULL}};
  for (size_t r = 0; r < sizeof rows / sizeof *rows; r++) {
    char dm[16], dn[16];
    snprintf(dm, sizeof dm, "M=%d", rows[r].m);
    snprintf(dn, sizeof dn, "N=%d", rows[r].n);
    const char *defs[] = {dm, dn, rows[r].tile, NULL};
    kcase c;
    bool ok = kc_open(&c, "tests/kernels/regress.wave", rows[r].kernel, NULL,
                      defs);
    CHECKF(ok, "%s: %s", rows[r].kernel, c.err);
    uint64_t rng = 11 + r;
    if (ok) {
      int m = rows[r].m, n = rows[r].n;
      double *x = kc_input(&c, "x", &rng);
      bool softmax = rows[r].kernel[1] == 'o';
      double *ref = malloc((size_t)m * n * sizeof *ref);
      for (int i = 0; i < m; i++) {
        double s = 0, mx = -INFINITY;
        for (int j = 0; j < n; j++)
          mx = fmax(mx, x[i * n + j]);
        for (int j = 0; j < n; j++)
          s += softmax ? exp(x[i * n + j] - mx) : x[i * n + j];
        if (!softmax)
          ref[i] = s;
        for (int j = 0; softmax && j < n; j++)
          ref[i * n + j] = exp(x[i * n + j] - mx) / s;
      }
      ok = kc_simulate(&c);
      CHECKF(ok, "%s: %s", rows[r].kernel, c.err);
      double err = ok ? kc_rel_err(&c, softmax ? "y" : "s", ref) : 0;
      CHECKF(err < 1e-5, "%s M=%d N=%d %s: rel err %g", rows[r].kernel, m, n,
             rows[r].tile ? rows[r].tile : "", err);
      free(x), free(ref);
    }
    kc_close(&c);
  }
}

/* c = atᵀ b with the lhs stored [K, M], as written and through a permute:
 * the same numbers and the same PTX but for the kernel's name. Where the
 * rows of at are a multiple of 16 bytes, both operands come by tensor
 * copies (the permute once kept the lhs in registers, loaded from global
 * memory); where they are a multiple of 4 only (M = 100 f16), the lhs is
 * copied 8 bytes at a time (a remark says so); where they are not even
 * that (M = 99), the lhs is in registers (once an error). */
static char *ptx_of(kcase *c) {
  const char *ptx;
  size_t len;
  if (wavec_emit_ptx(c->k, "sm_90a", &ptx, &len) != WAVEC_OK)
    return NULL;
  /* without the source lines (.loc), which differ */
  char *s = malloc(len + 1), *o = s;
  for (const char *l = ptx, *e; l < ptx + len; l = e + 1) {
    e = memchr(l, '\n', (size_t)(ptx + len - l));
    if (!e)
      e = ptx + len;
    const char *t = l;
    while (t < e && (*t == ' ' || *t == '\t'))
      t++;
    if (!(e - t > 5 && !strncmp(t, ".loc", 4))) {
      memcpy(o, l, (size_t)(e - l));
      o += e - l;
      *o++ = '\n';
    }
  }
  *o = 0;
  /* the kernel's name out: "gemm_at_permuted_wgmma" -> "gemm_at_wgmma" */
  for (char *p; (p = strstr(s, "permuted_"));)
    memmove(p, p + 9, strlen(p + 9) + 1);
  return s;
}

static void transposed_lhs(void) {
  static const int sz[][3] = {
      {128, 64, 128}, {100, 64, 64}, {72, 128, 64}, {99, 64, 64}};
  static const char *const kn[] = {"gemm_at_wgmma", "gemm_at_permuted_wgmma"};
  for (int t = 0; t < 4; t++) {
    int M = sz[t][0], N = sz[t][1], K = sz[t][2];
    char *ptx[2] = {NULL, NULL};
    for (int v = 0; v < 2; v++) {
      char dm[16], dn[16], dk[16];
      snprintf(dm, sizeof dm, "M=%d", M);
      snprintf(dn, sizeof dn, "N=%d", N);
      snprintf(dk, sizeof dk, "K=%d", K);
      const char *defs[] = {dm, dn, dk, NULL};
      kcase c;
      bool ok = kc_open(&c, "tests/kernels/regress.wave", kn[v], NULL, defs);
      CHECKF(ok, "%s", c.err);
      if (!ok)
        continue;
      uint64_t rng = 9;
      double *at = kc_input(&c, "at", &rng), *b = kc_input(&c, "b", &rng);
      double *ref = calloc((size_t)M * N, sizeof *ref);
      for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++)
          for (int k = 0; k < K; k++)
            ref[(size_t)i * N + j] += at[(size_t)k * M + i] * b[(size_t)j * K + k];
      ok = kc_simulate(&c);
      CHECKF(ok, "%s", c.err);
      if (ok) {
        double e = kc_rel_err(&c, "c", ref);
        printf("  %s %dx%dx%d: rel err %.2g\n", kn[v], M, N, K, e);
        CHECKF(e < 1e-5, "%s %dx%dx%d: rel err %g", kn[v], M, N, K, e);
      }
      bool copyable = M * 2 % 4 == 0, narrow = copyable && M * 2 % 16;
      CHECKF(copyable == !kc_has_remark(c.k, "read of 'at' feeds an mma but "
                                             "is not staged"),
             "%s M=%d: the remark on the lhs in registers", kn[v], M);
      CHECKF(narrow == kc_has_remark(c.k, "the copies of 'at' into shared "
                                          "memory move 8 bytes at a time"),
             "%s M=%d: the remark on 8-byte copies", kn[v], M);
      ptx[v] = ptx_of(&c);
      CHECKF(ptx[v] != NULL, "%s: no PTX", kn[v]);
      free(at);
      free(b);
      free(ref);
      kc_close(&c);
    }
    if (ptx[0] && ptx[1])
      CHECKF(!strcmp(ptx[0], ptx[1]),
             "M=%d: the permuted lhs gives other code than the plain one", M);
    free(ptx[0]);
    free(ptx[1]);
  }
}

/* Writes through a mapping at ragged sizes (N = 50, tiles of 32): the
 * padding elements of the last tile are not written where the mapping
 * sends them inside the tensor (they were: y[49] = 1 of x's past-the-edge
 * 0 + 1, scatter_perm's padding racing on real elements, scatter_add's
 * adding to 14 elements it must leave). */
static void mapped_writes_at_edges(void) {
  for (int N = 50; N <= 64; N += 14) {
    char dn[16], ds[16];
    snprintf(dn, sizeof dn, "N=%d", N), snprintf(ds, sizeof ds, "S=%d", N + 16);
    const char *defs[] = {dn, ds, NULL};
    kcase c;
    uint64_t rng = 5;
    /* shift_write: every y but the last, and that one unwritten */
    if (kc_open(&c, "tests/kernels/regress.wave", "shift_write", NULL, defs)) {
      free(kc_input(&c, "x", &rng));
      CHECK(!kc_simulate(&c));
      char want[96];
      snprintf(want, sizeof want, "1 of %d elements were never written (first: [%d])",
               N, N - 1);
      CHECKF(strstr(c.err, want) != NULL, "N=%d: %s", N, c.err);
    }
    kc_close(&c);
    if (kc_open(&c, "tests/kernels/regress.wave", "scatter_perm", NULL, defs)) {
      double *x = kc_input(&c, "x", &rng);
      bool ok = kc_simulate(&c);
      CHECKF(ok, "N=%d: %s", N, c.err);
      if (ok) {
        double *y = kc_output(&c, "y"), e = 0;
        for (int i = 0; i < N; i++)
          e = fmax(e, fabs(y[(7 * i + 3) % N] - x[i]));
        CHECKF(e == 0, "scatter_perm N=%d: max err %g", N, e);
        free(y);
      }
      free(x);
    }
    kc_close(&c);
    if (kc_open(&c, "tests/kernels/regress.wave", "scatter_add", NULL, defs)) {
      double *x = kc_input(&c, "x", &rng), *y0 = kc_input(&c, "y", &rng);
      bool ok = kc_simulate(&c);
      CHECKF(ok, "N=%d: %s", N, c.err);
      if (ok) {
        double *y = kc_output(&c, "y"), e = 0;
        for (int i = 0; i < N + 16; i++) {
          double want = y0[i] + (i >= 2 && i - 2 < N ? x[i - 2] + 1.0 : 0.0);
          e = fmax(e, fabs(y[i] - (double)(float)want));
        }
        CHECKF(e < 1e-6, "scatter_add N=%d: max err %g", N, e);
        free(y);
      }
      free(x), free(y0);
    }
    kc_close(&c);
  }
}

int main(void) {
  RUN(carried_sum_keeps_rows);
  RUN(integer_constants);
  RUN(decayed_accumulator);
  RUN(loop_results_as_mma_operands);
  RUN(integer_division);
  RUN(scalar_values);
  RUN(sum_of_copies);
  RUN(transposed_lhs);
  RUN(mapped_writes_at_edges);
  CHECK_EXIT();
}
