/* Tensors of more than 2^31 elements on the GPU, checked element by
 * element (tests/kernels/large.wave; docs/LANGUAGE-additions.md):
 *  - GEMM c[M, N] = a[M, K] b[N, K]^T at M = 32832, N = 65536, K = 32
 *    (c: 2^31 + 2^22 elements of f32, 8.6 GB), mma.sync (gemm.wave),
 *    warpgroup (gemm_wgmma.wave, tensor copies) and with run-time sizes
 *    (dynamic.wave's gemm_dyn); a and b hold a[i, 0] = i mod 1021,
 *    a[i, 1] = 1, b[j, 0] = 1, b[j, 1] = j mod 509 and zeros elsewhere, so
 *    that c[i, j] = i mod 1021 + j mod 509 exactly;
 *  - elementwise y = 2x + 1 over 2^31 + 4096 elements of f16 (large.wave's
 *    scale), x[i] = i mod 1000, so y is exact too.
 * Outputs start poisoned (all bits set: NaN), so an element the GPU leaves
 * unwritten fails, and one written at a wrapped offset fails under
 * compute-sanitizer memcheck (tests/gpu/run.sh runs it so). Needs about
 * 17 GB of GPU memory and as much of host memory.
 *
 * Usage: large. Exit status 0 when every case matches, 1 when one does
 * not, 2 when there is no GPU (the message says why). */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support/half.h"
#include "wavec.h"

static int failed, passed;

static char *slurp(const char *path, size_t *len) {
  *len = 0;
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  char *buf = malloc(1 << 20);
  *len = buf ? fread(buf, 1, 1 << 20, f) : 0;
  fclose(f);
  return buf;
}

/* The kernel compiled at sizes defs (NAME=VALUE), or NULL (reported). */
static wavec_kernel *open_kernel(wavec_ctx *ctx, const char *file,
                                 const char *kernel, const char *const *defs) {
  for (size_t i = 0; defs[i]; i++) {
    char name[32];
    const char *eq = strchr(defs[i], '=');
    snprintf(name, sizeof name, "%.*s", (int)(eq - defs[i]), defs[i]);
    wavec_define_int(ctx, name, atoll(eq + 1));
  }
  size_t len;
  char *src = slurp(file, &len);
  wavec_status st = src ? wavec_parse(ctx, file, src, len) : WAVEC_ERR_INVALID;
  free(src);
  wavec_kernel *k = st == WAVEC_OK ? wavec_kernel_find(ctx, kernel) : NULL;
  if (!k || wavec_compile(k, NULL) != WAVEC_OK) {
    printf("FAIL %s %s: %s\n", file, kernel, wavec_errmsg(ctx));
    failed++;
    return NULL;
  }
  return k;
}

/* Runs on the GPU; false on failure (exit 2 at once without a GPU). */
static bool gpu(wavec_kernel *k, wavec_ctx *ctx, void *const *bufs,
                const char *what) {
  double ms = 0;
  if (wavec_gpu_run(k, bufs, &ms) == WAVEC_OK) {
    printf("     %s: %.2f ms\n", what, ms);
    return true;
  }
  const char *msg = wavec_errmsg(ctx);
  if (strstr(msg, "no CUDA driver") || strstr(msg, "no CUDA device") ||
      strstr(msg, "cuInit")) {
    printf("SKIP: %s\n", msg);
    exit(2);
  }
  printf("FAIL %s: %s\n", what, msg);
  failed++;
  return false;
}

static void verdict(bool ok, const char *what, size_t bad, size_t first) {
  if (ok)
    printf("ok   %s\n", what);
  else
    printf("FAIL %s: %zu elements wrong, the first at %zu\n", what, bad, first);
  ok ? passed++ : failed++;
}

enum { M = 32832, N = 65536, K = 32 };

/* The GEMM `kernel` of `file`; with `dynamic`, compiled without sizes
 * and given them at launch (the shapes of the arguments). */
static void gemm(const char *file, const char *kernel, bool dynamic) {
  static const char *const defs[] = {"M=32832", "N=65536", "K=32", NULL};
  char what[96];
  snprintf(what, sizeof what, "%s %dx%dx%d (c: %zu elements)", kernel, M, N, K,
           (size_t)M * N);
  wavec_ctx *ctx = wavec_ctx_new(NULL, NULL);
  wavec_kernel *k = open_kernel(ctx, file, kernel, dynamic ? defs + 3 : defs);
  uint16_t *a = calloc((size_t)M * K, 2), *b = calloc((size_t)N * K, 2);
  float *c = malloc((size_t)M * N * sizeof *c);
  const int64_t shapes[3][2] = {{M, K}, {N, K}, {M, N}};
  for (size_t i = 0; k && dynamic && i < 3; i++)
    if (wavec_arg_shape(k, i, 2, shapes[i]) != WAVEC_OK) {
      printf("FAIL %s: %s\n", what, wavec_errmsg(ctx));
      failed++;
      k = NULL;
    }
  if (k && wavec_arg_count(k) == 3 && a && b && c) {
    for (size_t i = 0; i < M; i++)
      a[i * K] = wv_f64_to_f16((double)(i % 1021)), a[i * K + 1] = 0x3c00;
    for (size_t j = 0; j < N; j++)
      b[j * K] = 0x3c00, b[j * K + 1] = wv_f64_to_f16((double)(j % 509));
    memset(c, 0xff, (size_t)M * N * sizeof *c);
    void *bufs[] = {a, b, c};
    if (gpu(k, ctx, bufs, what)) {
      size_t bad = 0, first = 0;
      for (size_t i = 0; i < M; i++)
        for (size_t j = 0; j < N; j++)
          if (c[i * N + j] != (float)(i % 1021 + j % 509) && bad++ == 0)
            first = i * N + j;
      verdict(bad == 0, what, bad, first);
    }
  } else if (k) {
    printf("FAIL %s: no memory, or not 3 arguments\n", what);
    failed++;
  }
  free(a), free(b), free(c);
  wavec_ctx_free(ctx);
}

static void scale(void) {
  const size_t n = ((size_t)1 << 31) + 4096;
  static const char *const defs[] = {"N=2147487744", NULL};
  const char *what = "scale y = 2x + 1 over 2^31 + 4096 f16";
  wavec_ctx *ctx = wavec_ctx_new(NULL, NULL);
  wavec_kernel *k = open_kernel(ctx, "tests/kernels/large.wave", "scale", defs);
  uint16_t *x = malloc(n * 2), *y = malloc(n * 2);
  uint16_t xs[1000], ys[1000];
  for (int v = 0; v < 1000; v++)
    xs[v] = wv_f64_to_f16(v), ys[v] = wv_f64_to_f16(2.0 * v + 1);
  if (k && x && y) {
    for (size_t i = 0; i < n; i++)
      x[i] = xs[i % 1000];
    memset(y, 0xff, n * 2);
    void *bufs[] = {x, y};
    if (gpu(k, ctx, bufs, what)) {
      size_t bad = 0, first = 0;
      for (size_t i = 0; i < n; i++)
        if (y[i] != ys[i % 1000] && bad++ == 0)
          first = i;
      verdict(bad == 0, what, bad, first);
    }
  } else if (k) {
    printf("FAIL %s: no memory\n", what);
    failed++;
  }
  free(x), free(y);
  wavec_ctx_free(ctx);
}

int main(void) {
  scale();
  gemm("examples/gemm.wave", "gemm", false);
  gemm("examples/gemm_wgmma.wave", "gemm_wgmma", false);
  gemm("tests/kernels/dynamic.wave", "gemm_dyn", true);
  printf("large: %d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
