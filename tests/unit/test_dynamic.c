/* Run-time sizes (docs/LANGUAGE-additions.md, "Dynamic sizes"): each kernel
 * of tests/kernels/dynamic.wave is compiled once — one context, one
 * wavec_compile, its PTX taken before the first run and compared after the
 * last — and then run in the simulator at every size of the ragged tests,
 * the sizes given by the shapes of its arguments (wavec_arg_shape), against
 * float64 references:
 *  - gemm_dyn (mma.sync) and gemm_dyn_wgmma at (M, N, K) in {(1, 64, 64),
 *    (17, 33, 104), (200, 72, 96), (129, 250, 40), (64, 64, 32)} (K a
 *    multiple of 8, of 64 for the warpgroup one, as they state);
 *  - attention_fwd_dyn, plain and causal, at M = K2 in {1, 77, 100, 128};
 *  - gemm_batched_dyn (B, M, N and K at run time, three in each tensor)
 *    at (B, M, N, K) in {(3, 77, 50, 40), (1, 64, 64, 64), (2, 33, 130,
 *    24)}, and the largest size it takes (no tensor past 2^62 elements);
 *  - gemm_add_dyn (c += a bᵀ, reduce = add, M at run time) at M = 50, 77, 1;
 *  - row_mean_dyn (1 / N of the run-time N as a value) at four shapes;
 *  - attention_decode_dyn (16 static causal queries, K2 = 40, 100, 200 at
 *    run time: a walk that folds to one tile);
 *  - scale_rows8_dyn and scale_rows2_dyn (vector accesses of runs of 8 and
 *    of pairs, as the stated multiple of N allows) at ragged shapes.
 * Also: a size not given, one that breaks a stated multiple, and a static
 * dim given another size are errors at run time, not crashes; sizes whose
 * grid no launch can take (more than 65535 workgroups along y, more than
 * 2^31-1 persistent tiles, whose index is 32-bit) are E0701 at the launch,
 * before the simulator touches an argument, and sizes just inside the
 * limits are not. */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "../ref/kcase.c"
#include "../ref/ref.c"
#include "check.h"
#include "wavec.h"

static const char *const FILE_ = "tests/kernels/dynamic.wave";

/* One compiled kernel (defines: only what is not dynamic). */
static wavec_kernel *compile(wavec_ctx *ctx, const char *kernel,
                             const char *ptx_target, char **ptx) {
  size_t len;
  char *src = slurp(FILE_, &len);
  wavec_status st = src ? wavec_parse(ctx, FILE_, src, len) : WAVEC_ERR_INVALID;
  free(src);
  wavec_kernel *k = st == WAVEC_OK ? wavec_kernel_find(ctx, kernel) : NULL;
  st = k ? wavec_compile(k, NULL) : WAVEC_ERR_INVALID;
  CHECKF(st == WAVEC_OK, "%s: %s", kernel, wavec_errmsg(ctx));
  if (st != WAVEC_OK)
    return NULL;
  const char *p = NULL;
  CHECKF(wavec_emit_ptx(k, ptx_target, &p, &len) == WAVEC_OK, "%s: %s", kernel,
         wavec_errmsg(ctx));
  *ptx = p ? strdup(p) : NULL;
  return k;
}

/* The PTX after the runs is the one before them: nothing recompiled. */
static void same_ptx(wavec_kernel *k, const char *target, const char *before) {
  const char *p = NULL;
  CHECK(wavec_emit_ptx(k, target, &p, NULL) == WAVEC_OK);
  CHECKF(before && p && !strcmp(before, p),
         "%s: the PTX changed between runs", wavec_kernel_name(k));
  CHECKF(p && strstr(p, ".param .u32 "), "%s: no size parameter",
         wavec_kernel_name(k));
}

/* Buffers for the argument shapes given (args in order, shapes[i] with
 * the dims of each); every buffer poisoned. */
static void **shaped(wavec_kernel *k, size_t n, const int64_t (*shapes)[4]) {
  void **bufs = calloc(n, sizeof *bufs);
  for (size_t i = 0; i < n; i++) {
    wavec_arg_info a;
    wavec_arg_info_get(k, i, &a);
    CHECK(wavec_arg_shape(k, i, a.ndims, shapes[i]) == WAVEC_OK);
  }
  for (size_t i = 0; i < n; i++) {
    wavec_arg_info a;
    wavec_arg_info_get(k, i, &a);
    for (size_t d = 0; d < a.ndims; d++)
      CHECKF(a.shape[d] == shapes[i][d], "arg %zu dim %zu: %lld", i, d,
             (long long)a.shape[d]);
    bufs[i] = malloc(a.bytes ? a.bytes : 1);
    memset(bufs[i], 0xff, a.bytes);
  }
  return bufs;
}

static void free_bufs(void **bufs, size_t n) {
  for (size_t i = 0; i < n; i++)
    free(bufs[i]);
  free(bufs);
}

static double *rand_in(void *buf, size_t n, uint64_t *rng) {
  double *x = malloc(n * sizeof *x);
  ref_rand_fill(rng, n, -1, 1, REF_F16, x);
  ref_pack(n, x, REF_F16, buf);
  return x;
}

static double rel_err_f32(const void *buf, size_t n, const double *ref) {
  return ref_rel_err_f32(n, buf, ref);
}

static void gemm(const char *kernel, const char *target, int kmul) {
  static const int sizes[][3] = {
      {1, 64, 64}, {17, 33, 104}, {200, 72, 96}, {129, 250, 40}, {64, 64, 32}};
  wavec_ctx *ctx = wavec_ctx_new(NULL, NULL);
  char *ptx = NULL;
  wavec_kernel *k = compile(ctx, kernel, target, &ptx);
  uint64_t rng = 71;
  for (size_t s = 0; k && s < 5; s++) {
    int M = sizes[s][0], N = sizes[s][1], K = sizes[s][2];
    if (K % kmul)
      K += kmul - K % kmul;
    const int64_t shapes[3][4] = {{M, K}, {N, K}, {M, N}};
    void **bufs = shaped(k, 3, shapes);
    double *a = rand_in(bufs[0], (size_t)M * K, &rng),
           *b = rand_in(bufs[1], (size_t)N * K, &rng);
    double *ref = malloc((size_t)M * N * sizeof *ref);
    ref_gemm((size_t)M, (size_t)N, (size_t)K, a, b, ref);
    uint32_t grid[3], block[3];
    CHECK(wavec_launch_dims(k, grid, block, NULL) == WAVEC_OK);
    bool ok = wavec_simulate(k, bufs) == WAVEC_OK;
    CHECKF(ok, "%s %dx%dx%d: %s", kernel, M, N, K, wavec_errmsg(ctx));
    if (ok)
      CHECKF(rel_err_f32(bufs[2], (size_t)M * N, ref) < 1e-5,
             "%s %dx%dx%d: rel err %g", kernel, M, N, K,
             rel_err_f32(bufs[2], (size_t)M * N, ref));
    int tile = strcmp(kernel, "gemm_dyn") ? 128 : 64; /* the M tile */
    CHECKF(grid[0] == (uint32_t)((M + tile - 1) / tile) &&
               grid[1] == (uint32_t)((N + tile - 1) / tile),
           "%s: grid %u x %u for M = %d, N = %d", kernel, grid[0], grid[1], M,
           N);
    free(a), free(b), free(ref);
    free_bufs(bufs, 3);
  }
  if (k)
    same_ptx(k, target, ptx);
  free(ptx);
  wavec_ctx_free(ctx);
}

/* c += a bᵀ with M at run time (64-bit offsets, pair adds) at M = 50, 77,
 * 1 from c0 = 0.5. */
static void adds(void) {
  wavec_ctx *ctx = wavec_ctx_new(NULL, NULL);
  char *ptx = NULL;
  wavec_kernel *k = compile(ctx, "gemm_add_dyn", "sm_90", &ptx);
  uint64_t rng = 73;
  static const int ms[] = {50, 77, 1};
  for (size_t s = 0; k && s < 3; s++) {
    int M = ms[s], N = 64, K = 32;
    const int64_t shapes[3][4] = {{M, K}, {N, K}, {M, N}};
    void **bufs = shaped(k, 3, shapes);
    double *a = rand_in(bufs[0], (size_t)M * K, &rng),
           *b = rand_in(bufs[1], (size_t)N * K, &rng);
    double *ref = malloc((size_t)M * N * sizeof *ref);
    ref_gemm((size_t)M, (size_t)N, (size_t)K, a, b, ref);
    float *c = bufs[2];
    for (int i = 0; i < M * N; i++)
      c[i] = 0.5f, ref[i] += 0.5;
    bool ok = wavec_simulate(k, bufs) == WAVEC_OK;
    CHECKF(ok, "gemm_add_dyn M = %d: %s", M, wavec_errmsg(ctx));
    if (ok)
      CHECKF(rel_err_f32(bufs[2], (size_t)M * N, ref) < 1e-5,
             "gemm_add_dyn M = %d: rel err %g", M,
             rel_err_f32(bufs[2], (size_t)M * N, ref));
    free(a), free(b), free(ref);
    free_bufs(bufs, 3);
  }
  if (k)
    same_ptx(k, "sm_90", ptx);
  free(ptx);
  wavec_ctx_free(ctx);
}

/* y = the mean of each row of x, 1 / N from the run-time N, at (M, N) =
 * (4, 100), (8, 33), (5, 1), (12, 64): one compile. */
static void size_as_value(void) {
  wavec_ctx *ctx = wavec_ctx_new(NULL, NULL);
  char *ptx = NULL;
  wavec_kernel *k = compile(ctx, "row_mean_dyn", "sm_90", &ptx);
  uint64_t rng = 74;
  static const int mn[][2] = {{4, 100}, {8, 33}, {5, 1}, {12, 64}};
  for (size_t s = 0; k && s < 4; s++) {
    int M = mn[s][0], N = mn[s][1];
    const int64_t shapes[2][4] = {{M, N}, {M}};
    void **bufs = shaped(k, 2, shapes);
    double *x = malloc((size_t)M * N * sizeof *x), ref[16];
    ref_rand_fill(&rng, (size_t)M * N, -1, 1, REF_F32, x);
    ref_pack((size_t)M * N, x, REF_F32, bufs[0]);
    for (int i = 0; i < M; i++) {
      ref[i] = 0;
      for (int j = 0; j < N; j++)
        ref[i] += x[i * N + j] / N;
    }
    bool ok = wavec_simulate(k, bufs) == WAVEC_OK;
    CHECKF(ok, "row_mean_dyn %dx%d: %s", M, N, wavec_errmsg(ctx));
    if (ok)
      CHECKF(rel_err_f32(bufs[1], (size_t)M, ref) < 1e-6,
             "row_mean_dyn %dx%d: rel err %g", M, N,
             rel_err_f32(bufs[1], (size_t)M, ref));
    free(x);
    free_bufs(bufs, 2);
  }
  if (k)
    same_ptx(k, "sm_90", ptx);
  free(ptx);
  wavec_ctx_free(ctx);
}

/* Vector accesses at run-time sizes: scale_rows8_dyn (N a multiple of 8)
 * loads and stores each 8 f16 of a row a lane holds as one 16-byte access,
 * and scale_rows2_dyn (a multiple of 2) in pairs; both right at ragged
 * (M, N) = (3, 8), (45, 200), (33, 72) (and (7, 34) for the pairs: a run
 * of 8 would not be aligned there), against float64. */
static void vector_runs(void) {
  static const struct { const char *kernel, *load, *store; int nsz; } ks[] = {
      {"scale_rows8_dyn", "ld.global.nc.v4.b32", "st.global.v4.b32", 3},
      {"scale_rows2_dyn", "ld.global.nc.b32", "st.global.b32", 4}};
  static const int mn[][2] = {{3, 8}, {45, 200}, {33, 72}, {7, 34}};
  for (int i = 0; i < 2; i++) {
    wavec_ctx *ctx = wavec_ctx_new(NULL, NULL);
    char *ptx = NULL;
    wavec_kernel *k = compile(ctx, ks[i].kernel, "sm_90", &ptx);
    if (ptx) {
      /* (every load and store of the kernel: a lane's 16 elements, two
       * runs of 8 or eight pairs) */
      size_t nl = 0, ns = 0;
      for (const char *p = ptx; (p = strstr(p, "ld.global.")); p++) {
        nl++;
        CHECKF(!strncmp(p, ks[i].load, strlen(ks[i].load)), "%s: %.40s",
               ks[i].kernel, p);
      }
      for (const char *p = ptx; (p = strstr(p, "st.global.")); p++) {
        ns++;
        CHECKF(!strncmp(p, ks[i].store, strlen(ks[i].store)), "%s: %.40s",
               ks[i].kernel, p);
      }
      CHECKF(nl == (i ? 8u : 2u) && ns == nl, "%s: %zu loads, %zu stores",
             ks[i].kernel, nl, ns);
    }
    uint64_t rng = 75;
    for (int s = 0; k && s < ks[i].nsz; s++) {
      int M = mn[s][0], N = mn[s][1];
      const int64_t shapes[2][4] = {{M, N}, {M, N}};
      void **bufs = shaped(k, 2, shapes);
      size_t n = (size_t)M * N;
      double *x = rand_in(bufs[0], n, &rng), *ref = malloc(n * sizeof *ref);
      for (size_t e = 0; e < n; e++)
        ref[e] = x[e] * 2.0 + 1.0;
      bool ok = wavec_simulate(k, bufs) == WAVEC_OK;
      CHECKF(ok, "%s %dx%d: %s", ks[i].kernel, M, N, wavec_errmsg(ctx));
      if (ok) {
        double *y = malloc(n * sizeof *y);
        ref_unpack(n, bufs[1], REF_F16, y);
        CHECKF(ref_rel_err(n, y, ref) < 1e-3, "%s %dx%d: rel err %g",
               ks[i].kernel, M, N, ref_rel_err(n, y, ref));
        free(y);
      }
      free(x), free(ref);
      free_bufs(bufs, 2);
    }
    if (k)
      same_ptx(k, "sm_90", ptx);
    free(ptx);
    wavec_ctx_free(ctx);
  }
}

static void gemm_mma_sync(void) { gemm("gemm_dyn", "sm_90", 8); }
static void gemm_wgmma(void) { gemm("gemm_dyn_wgmma", "sm_90a", 64); }

static void attention(void) {
  static const int seqs[] = {1, 77, 100, 128};
  for (int causal = 0; causal < 2; causal++) {
    const char *kn = causal ? "attention_fwd_dyn_causal" : "attention_fwd_dyn";
    wavec_ctx *ctx = wavec_ctx_new(NULL, NULL);
    wavec_define_int(ctx, "B", 1);
    wavec_define_int(ctx, "N", 64);
    wavec_define_int(ctx, "K1", 64);
    char *ptx = NULL;
    wavec_kernel *k = compile(ctx, kn, "sm_90", &ptx);
    uint64_t rng = 72;
    for (size_t i = 0; k && i < 4; i++) {
      int S = seqs[i];
      const int64_t shapes[5][4] = {
          {1, S, 64}, {1, S, 64}, {1, S, 64}, {1, S, 64}, {1, S}};
      void **bufs = shaped(k, 5, shapes);
      size_t n = (size_t)S * 64;
      double *q = rand_in(bufs[0], n, &rng), *kk = rand_in(bufs[1], n, &rng),
             *v = rand_in(bufs[2], n, &rng);
      double *o = malloc(n * sizeof *o), *lse = malloc((size_t)S * sizeof *lse);
      ref_attn_fwd(1, (size_t)S, (size_t)S, 64, 64, 0.125,
                   causal ? REF_CAUSAL : 0, q, kk, v, o, lse);
      bool ok = wavec_simulate(k, bufs) == WAVEC_OK;
      CHECKF(ok, "%s S=%d: %s", kn, S, wavec_errmsg(ctx));
      if (ok) {
        CHECKF(rel_err_f32(bufs[3], n, o) < 1e-2, "%s S=%d: o rel err %g", kn,
               S, rel_err_f32(bufs[3], n, o));
        CHECKF(rel_err_f32(bufs[4], (size_t)S, lse) < 1e-3,
               "%s S=%d: lse rel err %g", kn, S,
               rel_err_f32(bufs[4], (size_t)S, lse));
      }
      free(q), free(kk), free(v), free(o), free(lse);
      free_bufs(bufs, 5);
    }
    if (k)
      same_ptx(k, "sm_90", ptx);
    free(ptx);
    wavec_ctx_free(ctx);
  }
}

/* attention_decode_dyn: M = 16 static queries against K2 keys at run
 * time (one 64-key tile holds every query's causal walk), K2 = 40, 100,
 * 200, against float64. */
static void decode(void) {
  static const int seqs[] = {40, 100, 200};
  enum { M = 16 };
  wavec_ctx *ctx = wavec_ctx_new(NULL, NULL);
  wavec_define_int(ctx, "B", 1);
  wavec_define_int(ctx, "M", M);
  wavec_define_int(ctx, "N", 64);
  wavec_define_int(ctx, "K1", 64);
  wavec_define_int(ctx, "BLOCK_M", 16);
  wavec_define_int(ctx, "WAVES", 1);
  char *ptx = NULL;
  wavec_kernel *k = compile(ctx, "attention_decode_dyn", "sm_90", &ptx);
  uint64_t rng = 75;
  for (size_t i = 0; k && i < 3; i++) {
    int S = seqs[i];
    const int64_t shapes[5][4] = {
        {1, M, 64}, {1, S, 64}, {1, S, 64}, {1, M, 64}, {1, M}};
    void **bufs = shaped(k, 5, shapes);
    double *q = rand_in(bufs[0], (size_t)M * 64, &rng),
           *kk = rand_in(bufs[1], (size_t)S * 64, &rng),
           *v = rand_in(bufs[2], (size_t)S * 64, &rng);
    double *o = malloc((size_t)M * 64 * sizeof *o), lse[M];
    ref_attn_fwd(1, M, (size_t)S, 64, 64, 0.125, REF_CAUSAL, q, kk, v, o, lse);
    bool ok = wavec_simulate(k, bufs) == WAVEC_OK;
    CHECKF(ok, "attention_decode_dyn K2=%d: %s", S, wavec_errmsg(ctx));
    if (ok)
      CHECKF(rel_err_f32(bufs[3], (size_t)M * 64, o) < 1e-2 &&
                 rel_err_f32(bufs[4], M, lse) < 1e-3,
             "attention_decode_dyn K2=%d: o %g lse %g", S,
             rel_err_f32(bufs[3], (size_t)M * 64, o),
             rel_err_f32(bufs[4], M, lse));
    free(q), free(kk), free(v), free(o);
    free_bufs(bufs, 5);
  }
  if (k)
    same_ptx(k, "sm_90", ptx);
  free(ptx);
  wavec_ctx_free(ctx);
}

/* gemm_batched_dyn: every size at run time, three in each tensor; one
 * compile run at three shapes, each batch against float64; a size past
 * what the kernel is compiled for is refused, with the bound in the
 * message, and the largest size taken. */
static void batched(void) {
  static const int sizes[][4] = {{3, 77, 50, 40}, {1, 64, 64, 64},
                                 {2, 33, 130, 24}};
  wavec_ctx *ctx = wavec_ctx_new(NULL, NULL);
  char *ptx = NULL;
  wavec_kernel *k = compile(ctx, "gemm_batched_dyn", "sm_90", &ptx);
  uint64_t rng = 73;
  for (size_t s = 0; k && s < 3; s++) {
    int B = sizes[s][0], M = sizes[s][1], N = sizes[s][2], K = sizes[s][3];
    const int64_t shapes[3][4] = {{B, M, K}, {B, N, K}, {B, M, N}};
    void **bufs = shaped(k, 3, shapes);
    size_t na = (size_t)M * K, nb = (size_t)N * K, nc = (size_t)M * N;
    double *a = rand_in(bufs[0], B * na, &rng),
           *b = rand_in(bufs[1], B * nb, &rng);
    double *ref = malloc(B * nc * sizeof *ref);
    for (int i = 0; i < B; i++)
      ref_gemm((size_t)M, (size_t)N, (size_t)K, a + i * na, b + i * nb,
               ref + i * nc);
    bool ok = wavec_simulate(k, bufs) == WAVEC_OK;
    CHECKF(ok, "%dx%dx%dx%d: %s", B, M, N, K, wavec_errmsg(ctx));
    if (ok)
      CHECKF(rel_err_f32(bufs[2], B * nc, ref) < 1e-5,
             "%dx%dx%dx%d: rel err %g", B, M, N, K,
             rel_err_f32(bufs[2], B * nc, ref));
    free(a), free(b), free(ref);
    free_bufs(bufs, 3);
  }
  if (k) {
    same_ptx(k, "sm_90", ptx);
    /* 1664510^3 <= 2^62 < 1664511^3 elements */
    CHECK(wavec_arg_shape(k, 0, 3, (const int64_t[]){1, 1664510, 8}) ==
          WAVEC_OK);
    CHECK(wavec_arg_shape(k, 0, 3, (const int64_t[]){1, 1664511, 8}) ==
          WAVEC_ERR_INVALID);
    CHECKF(strstr(wavec_errmsg(ctx), "('M') is out of range: more than the "
                                     "1664510 the kernel is compiled for"),
           "%s", wavec_errmsg(ctx));
  }
  free(ptx);
  wavec_ctx_free(ctx);
}

/* Sizes at run time that cannot be: errors with a message, no crash. */
static void bad_sizes(void) {
  /* a size that is not positive names its dynamic dim */
  wavec_ctx *ctx = wavec_ctx_new(NULL, NULL);
  char *ptx = NULL;
  wavec_kernel *k = compile(ctx, "gemm_dyn", "sm_90", &ptx);
  free(ptx);
  if (k) {
    CHECK(wavec_arg_shape(k, 0, 2, (const int64_t[]){-3, 64}) ==
          WAVEC_ERR_INVALID);
    CHECKF(strstr(wavec_errmsg(ctx), "size -3 of dimension 0 ('M') is out of "
                                     "range (a size is positive)"),
           "%s", wavec_errmsg(ctx));
  }
  wavec_ctx_free(ctx);
  /* not given */
  ctx = wavec_ctx_new(NULL, NULL);
  ptx = NULL;
  k = compile(ctx, "gemm_dyn", "sm_90", &ptx);
  free(ptx);
  if (k) {
    void *bufs[3] = {malloc(16), malloc(16), malloc(16)};
    CHECK(wavec_simulate(k, bufs) == WAVEC_ERR_INVALID);
    CHECKF(strstr(wavec_errmsg(ctx), "'M' is not given"), "%s",
           wavec_errmsg(ctx));
    free(bufs[0]), free(bufs[1]), free(bufs[2]);
  }
  wavec_ctx_free(ctx);
  /* not the stated multiple */
  ctx = wavec_ctx_new(NULL, NULL);
  k = compile(ctx, "gemm_dyn", "sm_90", &ptx);
  free(ptx);
  if (k) {
    const int64_t shapes[3][4] = {{64, 100}, {64, 100}, {64, 64}};
    void **bufs = shaped(k, 3, shapes);
    CHECK(wavec_simulate(k, bufs) == WAVEC_ERR_INVALID);
    CHECKF(strstr(wavec_errmsg(ctx), "'K' = 100 is not a multiple of 8"),
           "%s", wavec_errmsg(ctx));
    /* at the entry that states the multiple */
    CHECKF(strstr(wavec_errmsg(ctx), "dynamic.wave:10:9:"), "%s",
           wavec_errmsg(ctx));
    free_bufs(bufs, 3);
  }
  wavec_ctx_free(ctx);
  /* a static dim given another size */
  ctx = wavec_ctx_new(NULL, NULL);
  wavec_define_int(ctx, "B", 1);
  wavec_define_int(ctx, "N", 64);
  wavec_define_int(ctx, "K1", 64);
  k = compile(ctx, "attention_fwd_dyn", "sm_90", &ptx);
  free(ptx);
  if (k) {
    const int64_t q[3] = {1, 77, 32};
    CHECK(wavec_arg_shape(k, 0, 3, q) == WAVEC_ERR_INVALID);
    CHECKF(strstr(wavec_errmsg(ctx), "compiled in"), "%s", wavec_errmsg(ctx));
    /* at the argument's declaration, not the kernel's name */
    CHECKF(strstr(wavec_errmsg(ctx), "dynamic.wave:31:26:"), "%s",
           wavec_errmsg(ctx));
    CHECK(wavec_arg_dim_is_dynamic(k, 0, 1) && !wavec_arg_dim_is_dynamic(k, 0, 2));
    CHECK(wavec_arg_dim_name(k, 0, 1) && !strcmp(wavec_arg_dim_name(k, 0, 1), "M") &&
          !wavec_arg_dim_name(k, 0, 2) && !wavec_arg_dim_name(k, 9, 0));
  }
  wavec_ctx_free(ctx);
  /* the shapes given for one run disagree on a dynamic dim (a: M = 64,
   * c: M = 65); after a run, the next run's shapes may differ */
  ctx = wavec_ctx_new(NULL, NULL);
  k = compile(ctx, "gemm_dyn", "sm_90", &ptx);
  free(ptx);
  if (k) {
    const int64_t shapes[3][4] = {{64, 32}, {64, 32}, {64, 64}};
    void **bufs = shaped(k, 3, shapes);
    CHECKF(wavec_simulate(k, bufs) == WAVEC_OK, "%s", wavec_errmsg(ctx));
    /* a new run: a alone may move M to 32 (b and c follow it, or say it) */
    CHECK(wavec_arg_shape(k, 0, 2, (const int64_t[]){32, 32}) == WAVEC_OK);
    CHECK(wavec_arg_shape(k, 2, 2, (const int64_t[]){33, 64}) ==
          WAVEC_ERR_INVALID);
    CHECKF(strstr(wavec_errmsg(ctx), "argument 'c': dimension 0 ('M') is 33, "
                                     "the shape of 'a' gave 32"),
           "%s", wavec_errmsg(ctx));
    free_bufs(bufs, 3);
  }
  wavec_ctx_free(ctx);
}

/* Kernel `kernel` of dynamic.wave with hardware entries hw (NULL-ended,
 * "KEY=VALUE") at (M, N, K) = m, n, 64: the grid, or (refused) a run that
 * must fail with E0701 saying `why` before reading its tiny buffers. */
static void launch_case(const char *kernel, const char *const *hw, int64_t m,
                        int64_t n, const char *why, uint32_t gx,
                        uint32_t gy) {
  wavec_ctx *ctx = wavec_ctx_new(NULL, NULL);
  for (size_t i = 0; hw && hw[i]; i++) {
    char key[32];
    const char *eq = strchr(hw[i], '=');
    snprintf(key, sizeof key, "%.*s", (int)(eq - hw[i]), hw[i]);
    CHECK(wavec_hardware_override(ctx, key, eq + 1) == WAVEC_OK);
  }
  char *ptx = NULL;
  wavec_kernel *k = compile(ctx, kernel, "sm_90a", &ptx);
  free(ptx);
  if (!k) {
    wavec_ctx_free(ctx);
    return;
  }
  const int64_t shapes[3][2] = {{m, 64}, {n, 64}, {m, n}};
  for (size_t i = 0; i < 3; i++)
    CHECKF(wavec_arg_shape(k, i, 2, shapes[i]) == WAVEC_OK, "%s",
           wavec_errmsg(ctx));
  uint32_t grid[3];
  wavec_status st = wavec_launch_dims(k, grid, NULL, NULL);
  if (!why) {
    CHECKF(st == WAVEC_OK && grid[0] == gx && grid[1] == gy && grid[2] == 1,
           "%s %lldx%lld: grid %u %u %u: %s", kernel, (long long)m,
           (long long)n, grid[0], grid[1], grid[2], wavec_errmsg(ctx));
  } else {
    wavec_diag_info d = {0};
    CHECKF(st == WAVEC_ERR_UNSUPPORTED && strstr(wavec_errmsg(ctx), why),
           "%s %lldx%lld: launch dims %d: %s", kernel, (long long)m,
           (long long)n, st, wavec_errmsg(ctx));
    /* the run is refused before any argument is read or written */
    static char tiny[3][16];
    void *bufs[3] = {tiny[0], tiny[1], tiny[2]};
    st = wavec_simulate(k, bufs);
    CHECKF(st == WAVEC_ERR_UNSUPPORTED &&
               wavec_diag(ctx, 0, &d) == WAVEC_OK && d.code == 701 &&
               strstr(wavec_errmsg(ctx), why) &&
               strstr(wavec_errmsg(ctx), "dynamic.wave:"),
           "%s %lldx%lld: simulate %d: %s", kernel, (long long)m,
           (long long)n, st, wavec_errmsg(ctx));
  }
  wavec_ctx_free(ctx);
}

static void launch_limits(void) {
  /* gemm_dyn: 64 x 64 tiles, M along x, N along y */
  launch_case("gemm_dyn", NULL, 64, 65535 * 64, NULL, 1, 65535);
  launch_case("gemm_dyn", NULL, 64, 65535 * 64 + 1,
              "a grid of [1, 65536, 1] workgroups, more than a launch "
              "allows", 0, 0);
  launch_case("gemm_dyn", NULL, INT32_MAX, 64, NULL, 33554432, 1);
  /* gemm_dyn_wgmma, persistent: 128 x 128 tiles; 32768 x 65535 tiles are
   * below 2^31, 32768 x 65536 are 2^31, as is [2^24, 2^24] */
  static const char *const pers[] = {"persistent=1", "sms=3", NULL};
  launch_case("gemm_dyn_wgmma", pers, 32768 * 128, 65535 * 128, NULL, 3, 1);
  launch_case("gemm_dyn_wgmma", pers, 32768 * 128, 65536 * 128,
              "persistent tiles [32768, 65536, 1], more than 2^31-1 in all",
              0, 0);
  launch_case("gemm_dyn_wgmma", pers, INT32_MAX, INT32_MAX,
              "persistent tiles [16777216, 16777216, 1], more than 2^31-1",
              0, 0);
}

int main(void) {
  RUN(gemm_mma_sync);
  RUN(gemm_wgmma);
  RUN(adds);
  RUN(size_as_value);
  RUN(vector_runs);
  RUN(attention);
  RUN(decode);
  RUN(batched);
  RUN(bad_sizes);
  RUN(launch_limits);
  CHECK_EXIT();
}
