/* Ragged sizes on the GPU against float64 references (tests/ref): the
 * shipped examples, unchanged, at sizes their tiles do not divide
 * (docs/LANGUAGE-additions.md), up to the sizes too large for the
 * simulator in `make test`:
 *  - GEMM, mma.sync (gemm.wave) and warpgroup (gemm_wgmma.wave), at
 *    (M, N, K) in {(1, 64, 64), (17, 33, 100), (200, 72, 96),
 *    (129, 250, 40), (4097, 4095, 1000)} (the warpgroup GEMM at K = 104
 *    for the second: it stages 16-byte rows);
 *  - attention forward and backward (dk/dv and dq), mma.sync and
 *    warpgroup, plain and causal, at sequence lengths M = K2 in
 *    {1, 77, 100, 1000, 4095}, head dimension 64; the backward on float64
 *    lse and D rounded to f32, as tests/unit/test_attention_bwd.c runs it
 *    alone.
 *  - run-time sizes: tests/kernels/dynamic.wave's gemm_dyn, gemm_dyn_wgmma
 *    and attention_fwd_dyn(_causal), each compiled once and run at every
 *    size above (K rounded up to the multiple each states).
 * Thresholds (relative L2): GEMM 1e-5, o 1e-2, lse 1e-3, dq/dk/dv 2e-3 (as
 * the unit tests, which say why). Outputs start poisoned.
 *
 * Usage: ragged [--max N]: only cases whose sizes are all at most N (for
 * compute-sanitizer). Exit status 0 when every case matches, 1 when one
 * does not, 2 when there is no GPU (the message says why).
 * Built and run by tests/gpu/run.sh. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../ref/kcase.c"
#include "../ref/ref.c"

static int failed, passed;
static long max_size = 1L << 30;

/* Runs on the GPU; false on failure (exit 2 at once without a GPU). */
static bool gpu(kcase *c, const char *what) {
  double ms = 0;
  if (wavec_gpu_run(c->k, c->buf, &ms) == WAVEC_OK)
    return true;
  const char *msg = wavec_errmsg(c->ctx);
  if (strstr(msg, "no CUDA driver") || strstr(msg, "no CUDA device") ||
      strstr(msg, "cuInit")) {
    printf("SKIP: %s\n", msg);
    exit(2);
  }
  printf("FAIL %s: %s\n", what, msg);
  failed++;
  return false;
}

static void expect(kcase *c, const char *name, const double *ref, double tol,
                   const char *what) {
  double err = kc_rel_err(c, name, ref);
  bool ok = err < tol;
  printf("%s %s: %s rel err %.2e\n", ok ? "ok  " : "FAIL", what, name, err);
  ok ? passed++ : failed++;
}

static bool open_case(kcase *c, const char *file, const char *kernel,
                      const char *const *defs, const char *what) {
  if (kc_open(c, file, kernel, NULL, defs))
    return true;
  printf("FAIL %s: %s\n", what, c->err);
  failed++;
  return false;
}

static void gemm(const char *file, const char *kernel, int M, int N, int K,
                 uint64_t *rng) {
  char d[3][32], what[160];
  snprintf(d[0], 32, "M=%d", M);
  snprintf(d[1], 32, "N=%d", N);
  snprintf(d[2], 32, "K=%d", K);
  snprintf(what, sizeof what, "%s %dx%dx%d", kernel, M, N, K);
  const char *defs[] = {d[0], d[1], d[2], NULL};
  kcase c;
  if (open_case(&c, file, kernel, defs, what)) {
    double *a = kc_input(&c, "a", rng), *b = kc_input(&c, "b", rng);
    double *ref = malloc(sizeof *ref * (size_t)M * (size_t)N);
    ref_gemm((size_t)M, (size_t)N, (size_t)K, a, b, ref);
    if (gpu(&c, what))
      expect(&c, "c", ref, 1e-5, what);
    free(a), free(b), free(ref);
  }
  kc_close(&c);
}

/* Forward and backward at sequence length S (head 64), both kernel
 * families, plain or causal. */
static void attention(int S, bool causal, uint64_t *rng) {
  const size_t s = (size_t)S, D = 64;
  char d[5][32];
  snprintf(d[0], 32, "B=1");
  snprintf(d[1], 32, "M=%d", S);
  snprintf(d[2], 32, "K2=%d", S);
  snprintf(d[3], 32, "N=%zu", D);
  snprintf(d[4], 32, "K1=%zu", D);
  const char *defs[] = {d[0], d[1], d[2], d[3], d[4], NULL};
  double *q = malloc(s * D * sizeof *q), *k = malloc(s * D * sizeof *k),
         *v = malloc(s * D * sizeof *v), *dO = malloc(s * D * sizeof *dO);
  ref_rand_fill(rng, s * D, -1, 1, REF_F16, q);
  ref_rand_fill(rng, s * D, -1, 1, REF_F16, k);
  ref_rand_fill(rng, s * D, -1, 1, REF_F16, v);
  ref_rand_fill(rng, s * D, -1, 1, REF_F16, dO);
  double *o = malloc(s * D * sizeof *o), *lse = malloc(s * sizeof *lse),
         *dq = malloc(s * D * sizeof *dq), *dk = malloc(s * D * sizeof *dk),
         *dv = malloc(s * D * sizeof *dv), *Dv = malloc(s * sizeof *Dv);
  int flags = causal ? REF_CAUSAL : 0;
  ref_attn_fwd(1, s, s, D, D, 0.125, flags, q, k, v, o, lse);
  ref_attn_bwd(1, s, s, D, D, 0.125, flags, q, k, v, dO, dq, dk, dv, Dv);
  double *lse32 = malloc(s * sizeof *lse32), *D32 = malloc(s * sizeof *D32);
  for (size_t i = 0; i < s; i++)
    lse32[i] = (float)lse[i], D32[i] = (float)Dv[i];
  static const char *const files[2][2] = {
      {"examples/attention_fwd.wave", "examples/attention_bwd.wave"},
      {"examples/attention_fwd_wgmma.wave", "examples/attention_bwd_wgmma.wave"}};
  for (int wg = 0; wg < 2; wg++) {
    const char *sfx = causal ? "_causal" : "", *w = wg ? "_wgmma" : "";
    char kn[96], what[160];
    kcase c;
    snprintf(kn, sizeof kn, "attention_fwd%s%s", w, sfx);
    snprintf(what, sizeof what, "%s S=%d", kn, S);
    if (open_case(&c, files[wg][0], kn, defs, what)) {
      kc_set(&c, "q", q), kc_set(&c, "k", k), kc_set(&c, "v", v);
      if (gpu(&c, what)) {
        expect(&c, "o", o, 1e-2, what);
        expect(&c, "lse", lse, 1e-3, what);
      }
    }
    kc_close(&c);
    for (int which = 0; which < 2; which++) {
      snprintf(kn, sizeof kn, "attention_bwd_%s%s%s", which ? "dq" : "dkdv", w,
               sfx);
      snprintf(what, sizeof what, "%s S=%d", kn, S);
      if (open_case(&c, files[wg][1], kn, defs, what)) {
        kc_set(&c, "q", q), kc_set(&c, "k", k), kc_set(&c, "v", v);
        kc_set(&c, "do", dO), kc_set(&c, "lse", lse32), kc_set(&c, "D", D32);
        if (gpu(&c, what)) {
          if (which) {
            expect(&c, "dq", dq, 2e-3, what);
          } else {
            expect(&c, "dk", dk, 2e-3, what);
            expect(&c, "dv", dv, 2e-3, what);
          }
        }
      }
      kc_close(&c);
    }
  }
  free(q), free(k), free(v), free(dO), free(o), free(lse), free(dq);
  free(dk), free(dv), free(Dv), free(lse32), free(D32);
}

/* ---- run-time sizes: one compile, every size ------------------------------- */
static wavec_kernel *compile_once(wavec_ctx *ctx, const char *kernel) {
  size_t len;
  char *src = kc_slurp("tests/kernels/dynamic.wave", &len);
  wavec_status st = src ? wavec_parse(ctx, "tests/kernels/dynamic.wave", src,
                                      len)
                        : WAVEC_ERR_INVALID;
  free(src);
  wavec_kernel *k = st == WAVEC_OK ? wavec_kernel_find(ctx, kernel) : NULL;
  if (!k || wavec_compile(k, NULL) != WAVEC_OK) {
    printf("FAIL %s: %s\n", kernel, wavec_errmsg(ctx));
    failed++;
    return NULL;
  }
  return k;
}

/* Buffers (poisoned) for the shapes given, after wavec_arg_shape. */
static void **shaped(wavec_kernel *k, size_t n, const int64_t (*shapes)[4]) {
  void **bufs = calloc(n, sizeof *bufs);
  for (size_t i = 0; i < n; i++) {
    wavec_arg_info a;
    wavec_arg_info_get(k, i, &a);
    wavec_arg_shape(k, i, a.ndims, shapes[i]);
  }
  for (size_t i = 0; i < n; i++) {
    wavec_arg_info a;
    wavec_arg_info_get(k, i, &a);
    bufs[i] = malloc(a.bytes ? a.bytes : 1);
    memset(bufs[i], 0xff, a.bytes);
  }
  return bufs;
}

static bool gpu_dyn(wavec_kernel *k, void **bufs, const char *what) {
  if (wavec_gpu_run(k, bufs, NULL) == WAVEC_OK)
    return true;
  const char *msg = wavec_errmsg(wavec_kernel_ctx(k));
  if (strstr(msg, "no CUDA driver") || strstr(msg, "no CUDA device")) {
    printf("SKIP: %s\n", msg);
    exit(2);
  }
  printf("FAIL %s: %s\n", what, msg);
  failed++;
  return false;
}

static void check(const void *out, size_t n, const double *ref, double tol,
                  const char *what, const char *name) {
  double err = ref_rel_err_f32(n, out, ref);
  bool ok = err < tol;
  printf("%s %s: %s rel err %.2e\n", ok ? "ok  " : "FAIL", what, name, err);
  ok ? passed++ : failed++;
}

static double *rand_in(void *buf, size_t n, uint64_t *rng) {
  double *x = malloc(n * sizeof *x);
  ref_rand_fill(rng, n, -1, 1, REF_F16, x);
  ref_pack(n, x, REF_F16, buf);
  return x;
}

static void dyn_gemm(const char *kernel, int kmul, const int (*sizes)[3],
                     size_t ns, uint64_t *rng) {
  wavec_ctx *ctx = wavec_ctx_new(NULL, NULL);
  wavec_kernel *k = compile_once(ctx, kernel);
  for (size_t s = 0; k && s < ns; s++) {
    int64_t M = sizes[s][0], N = sizes[s][1], K = sizes[s][2];
    if (M > max_size || N > max_size || K > max_size)
      continue;
    K += (kmul - K % kmul) % kmul;
    const int64_t shapes[3][4] = {{M, K}, {N, K}, {M, N}};
    void **bufs = shaped(k, 3, shapes);
    double *a = rand_in(bufs[0], (size_t)(M * K), rng),
           *b = rand_in(bufs[1], (size_t)(N * K), rng);
    double *ref = malloc((size_t)(M * N) * sizeof *ref);
    ref_gemm((size_t)M, (size_t)N, (size_t)K, a, b, ref);
    char what[128];
    snprintf(what, sizeof what, "%s (one compile) %lldx%lldx%lld", kernel,
             (long long)M, (long long)N, (long long)K);
    if (gpu_dyn(k, bufs, what))
      check(bufs[2], (size_t)(M * N), ref, 1e-5, what, "c");
    free(a), free(b), free(ref);
    for (int i = 0; i < 3; i++)
      free(bufs[i]);
    free(bufs);
  }
  wavec_ctx_free(ctx);
}

static void dyn_attention(bool causal, const int *seqs, size_t ns,
                          uint64_t *rng) {
  const char *kn = causal ? "attention_fwd_dyn_causal" : "attention_fwd_dyn";
  wavec_ctx *ctx = wavec_ctx_new(NULL, NULL);
  wavec_define_int(ctx, "B", 1);
  wavec_define_int(ctx, "N", 64);
  wavec_define_int(ctx, "K1", 64);
  wavec_kernel *k = compile_once(ctx, kn);
  for (size_t i = 0; k && i < ns; i++) {
    int64_t S = seqs[i];
    if (S > max_size)
      continue;
    const int64_t shapes[5][4] = {
        {1, S, 64}, {1, S, 64}, {1, S, 64}, {1, S, 64}, {1, S}};
    void **bufs = shaped(k, 5, shapes);
    size_t n = (size_t)S * 64;
    double *q = rand_in(bufs[0], n, rng), *kk = rand_in(bufs[1], n, rng),
           *v = rand_in(bufs[2], n, rng);
    double *o = malloc(n * sizeof *o), *lse = malloc((size_t)S * sizeof *lse);
    ref_attn_fwd(1, (size_t)S, (size_t)S, 64, 64, 0.125,
                 causal ? REF_CAUSAL : 0, q, kk, v, o, lse);
    char what[128];
    snprintf(what, sizeof what, "%s (one compile) S=%lld", kn, (long long)S);
    if (gpu_dyn(k, bufs, what)) {
      check(bufs[3], n, o, 1e-2, what, "o");
      check(bufs[4], (size_t)S, lse, 1e-3, what, "lse");
    }
    free(q), free(kk), free(v), free(o), free(lse);
    for (int j = 0; j < 5; j++)
      free(bufs[j]);
    free(bufs);
  }
  wavec_ctx_free(ctx);
}

int main(int argc, char **argv) {
  if (argc > 2 && !strcmp(argv[1], "--max"))
    max_size = atol(argv[2]);
  static const int sizes[][3] = {{1, 64, 64},     {17, 33, 100},
                                 {200, 72, 96},   {129, 250, 40},
                                 {4097, 4095, 1000}};
  uint64_t rng = 2027;
  for (size_t i = 0; i < 5; i++) {
    const int *z = sizes[i];
    if (z[0] > max_size || z[1] > max_size || z[2] > max_size)
      continue;
    gemm("examples/gemm.wave", "gemm", z[0], z[1], z[2], &rng);
    gemm("examples/gemm_wgmma.wave", "gemm_wgmma", z[0], z[1],
         z[2] % 8 ? z[2] + 8 - z[2] % 8 : z[2], &rng);
  }
  static const int seqs[] = {1, 77, 100, 1000, 4095};
  for (size_t i = 0; i < 5; i++)
    for (int causal = 0; causal < 2; causal++)
      if (seqs[i] <= max_size)
        attention(seqs[i], causal, &rng);
  dyn_gemm("gemm_dyn", 8, sizes, 5, &rng);
  dyn_gemm("gemm_dyn_wgmma", 64, sizes, 5, &rng);
  for (int causal = 0; causal < 2; causal++)
    dyn_attention(causal, seqs, 5, &rng);
  printf("ragged: %d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
