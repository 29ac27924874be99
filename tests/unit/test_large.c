/* Tensors of 2^31 elements or more, and the widths of index arithmetic
 * (tests/kernels/large.wave):
 *  - PTX: a GEMM whose output has 2^32 elements computes that output's
 *    offsets in 64 bits (mul.lo.s64 into the address) and its operands'
 *    in 32 (mul.wide.s32), an elementwise kernel of 2^31 + 4096 elements
 *    all of them in 64, the same GEMM at 128^2 none; each assembled by
 *    ptxas (on PATH, else /usr/local/cuda/bin; "SKIPPED: ..." without it);
 *  - a kernel with run-time sizes gets 64-bit offsets for its tensors of
 *    two or more run-time dims, and a remark that says so;
 *  - the simulator, on a tensor of 2 GiB of which the kernel touches 512
 *    bytes across the 2^31 edge (rows), gives the bytes of those rows;
 *    with the test hook narrow-index (every index in 32 bits, as before)
 *    the same kernel reads out of bounds: the simulator's 32-bit registers
 *    wrap as the GPU's do, so a wrong width cannot pass;
 *  - i32 arithmetic wraps in the simulator as on the GPU (wrap);
 *  - wavec_arg_shape takes a compiled-in dimension of 2^31 or more (a
 *    run-time size stays below 2^31);
 *  - an index that must fit in 32 bits and cannot (the coordinate of a dim
 *    of 2^32 as an i32 value) is refused at its line. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "wavec.h"

static wavec_kernel *open_kernel(wavec_ctx *ctx, const char *file,
                                 const char *kernel, const char *const *defs) {
  for (size_t i = 0; defs && defs[i]; i++) {
    char name[32];
    const char *eq = strchr(defs[i], '=');
    size_t n = (size_t)(eq - defs[i]);
    memcpy(name, defs[i], n);
    name[n] = 0;
    wavec_define_int(ctx, name, atoll(eq + 1));
  }
  size_t len;
  char *src = slurp(file, &len);
  wavec_status st = src ? wavec_parse(ctx, file, src, len) : WAVEC_ERR_INVALID;
  free(src);
  wavec_kernel *k = st == WAVEC_OK ? wavec_kernel_find(ctx, kernel) : NULL;
  st = k ? wavec_compile(k, NULL) : WAVEC_ERR_INVALID;
  CHECKF(st == WAVEC_OK, "%s %s: %s", file, kernel, wavec_errmsg(ctx));
  return st == WAVEC_OK ? k : NULL;
}

static const char *ptxas(void) {
  static const char *found;
  static int looked;
  if (!looked) {
    looked = 1;
    if (system("command -v ptxas >/dev/null 2>&1") == 0)
      found = "ptxas";
    else if (access("/usr/local/cuda/bin/ptxas", X_OK) == 0)
      found = "/usr/local/cuda/bin/ptxas";
    if (!found)
      printf("SKIPPED: ptxas not found (not on PATH, not in "
             "/usr/local/cuda/bin): large-tensor PTX not assembled\n");
  }
  return found;
}

static void assemble(const char *ptx, const char *arch, const char *what) {
  if (!ptxas())
    return;
  char path[64], cubin[64], cmd[256];
  snprintf(path, sizeof path, "/tmp/wavec_test_large_%ld.ptx", (long)getpid());
  snprintf(cubin, sizeof cubin, "/tmp/wavec_test_large_%ld.cubin",
           (long)getpid());
  FILE *f = fopen(path, "wb");
  CHECK(f != NULL);
  if (!f)
    return;
  fputs(ptx, f);
  fclose(f);
  snprintf(cmd, sizeof cmd, "%s -arch=%s %s -o %s 2>&1", ptxas(), arch, path,
           cubin);
  FILE *p = popen(cmd, "r");
  char out[2048] = "";
  size_t n = p ? fread(out, 1, sizeof out - 1, p) : 0;
  out[n] = 0;
  int rc = p ? pclose(p) : -1;
  remove(path);
  remove(cubin);
  CHECKF(rc == 0, "ptxas -arch=%s on %s: %s", arch, what, out);
}

/* How the PTX computes the addresses of argument `arg`: the number of
 * accesses whose element offset is scaled in 64 bits (mul.lo.s64) and in
 * 32 (mul.wide.s32). The printer forms an address as "mul... %rdN, OFF,
 * SIZE" followed by "add.s64 %rdN, %gaARG, %rdN". */
static void widths(const char *ptx, int arg, int *n64, int *n32) {
  char ga[16];
  snprintf(ga, sizeof ga, ", %%ga%d, ", arg);
  *n64 = *n32 = 0;
  const char *prev = NULL;
  for (const char *l = ptx; *l;) {
    const char *e = strchr(l, '\n');
    if (!e)
      break;
    const char *a = strstr(l, ga);
    if (a && a < e && prev && strncmp(l, "\tadd.s64 %rd", 12) == 0) {
      *n64 += strncmp(prev, "\tmul.lo.s64 %rd", 15) == 0;
      *n32 += strncmp(prev, "\tmul.wide.s32 %rd", 17) == 0;
    }
    prev = l;
    l = e + 1;
  }
}

static const char *emit(wavec_kernel *k, wavec_ctx *ctx, const char *target) {
  const char *ptx = NULL;
  CHECKF(wavec_emit_ptx(k, target, &ptx, NULL) == WAVEC_OK, "%s",
         wavec_errmsg(ctx));
  return ptx;
}

static bool has_remark(wavec_kernel *k, const char *what) {
  for (size_t i = 0; i < wavec_remark_count(k); i++)
    if (strstr(wavec_remark(k, i), what))
      return true;
  return false;
}

/* c[M, N] = a[M, K] b[N, K]^T with c of 2^32 elements: c's offsets are
 * 64-bit, a's and b's 32-bit (cp.async copies of the operand tiles); at
 * 128 x 128 nothing is 64-bit. */
static void gemm_output_past_2_31(void) {
  static const struct {
    const char *defs[4];
    int c64;
  } cs[] = {{{"M=65536", "N=65536", "K=64", NULL}, 1},
            {{"M=128", "N=128", "K=64", NULL}, 0}};
  for (int i = 0; i < 2; i++) {
    wavec_ctx *ctx = wavec_ctx_new(NULL, NULL);
    wavec_kernel *k =
        open_kernel(ctx, "examples/gemm.wave", "gemm", cs[i].defs);
    for (int t = 0; k && t < 2; t++) {
      const char *target = t ? "sm_90" : "sm_80";
      const char *ptx = emit(k, ctx, target);
      if (!ptx)
        continue;
      int a64, a32, b64, b32, c64, c32;
      widths(ptx, 0, &a64, &a32);
      widths(ptx, 1, &b64, &b32);
      widths(ptx, 2, &c64, &c32);
      CHECKF(a64 == 0 && a32 > 0 && b64 == 0 && b32 > 0,
             "%s: a %d/%d b %d/%d (64/32-bit)", cs[i].defs[0], a64, a32, b64,
             b32);
      if (cs[i].c64)
        CHECKF(c64 > 0 && c32 == 0, "c %d/%d (64/32-bit)", c64, c32);
      else
        CHECKF(c64 == 0 && c32 > 0 && !strstr(ptx, ".b64 %x"),
               "c %d/%d (64/32-bit)", c64, c32);
      assemble(ptx, target, cs[i].defs[0]);
    }
    if (k)
      CHECK(has_remark(k, "offsets into 'c' are 64-bit: it has 4294967296 "
                          "elements") == (cs[i].c64 != 0));
    wavec_ctx_free(ctx);
  }
}

/* y = 2x + 1 over 2^31 + 4096 elements: every offset is 64-bit; at 2^31 -
 * 1024 (the largest multiple of its tile below 2^31) none. x's eight
 * f16 elements a thread loaded and y's stored as one 16-byte vector
 * each. */
static void elementwise_past_2_31(void) {
  static const char *const sizes[] = {"N=2147487744", "N=2147482624"};
  for (int i = 0; i < 2; i++) {
    const char *defs[] = {sizes[i], NULL};
    wavec_ctx *ctx = wavec_ctx_new(NULL, NULL);
    wavec_kernel *k =
        open_kernel(ctx, "tests/kernels/large.wave", "scale", defs);
    const char *ptx = k ? emit(k, ctx, "sm_90") : NULL;
    const int64_t n = atoll(sizes[i] + 2), other = n + 1024;
    if (k) { /* the shapes as compiled, not another */
      CHECKF(wavec_arg_shape(k, 0, 1, &n) == WAVEC_OK, "%s",
             wavec_errmsg(ctx));
      CHECK(wavec_arg_shape(k, 1, 1, &other) == WAVEC_ERR_INVALID);
    }
    if (ptx) {
      int x64, x32, y64, y32;
      widths(ptx, 0, &x64, &x32);
      widths(ptx, 1, &y64, &y32);
      if (i == 0)
        CHECKF(x64 == 1 && x32 == 0 && y64 == 1 && y32 == 0,
               "x %d/%d y %d/%d (64/32-bit)", x64, x32, y64, y32);
      else
        CHECKF(x64 == 0 && x32 == 1 && y64 == 0 && y32 == 1,
               "x %d/%d y %d/%d (64/32-bit)", x64, x32, y64, y32);
      assemble(ptx, "sm_90", sizes[i]);
    }
    wavec_ctx_free(ctx);
  }
}

/* gemm_dyn (M, N, K at launch): every tensor has two run-time dims, so
 * its offsets are 64-bit, and the remark says why. */
static void dynamic_sizes_get_64_bits(void) {
  wavec_ctx *ctx = wavec_ctx_new(NULL, NULL);
  wavec_kernel *k =
      open_kernel(ctx, "tests/kernels/dynamic.wave", "gemm_dyn", NULL);
  const char *ptx = k ? emit(k, ctx, "sm_90") : NULL;
  if (ptx) {
    for (int a = 0; a < 3; a++) {
      int n64, n32;
      widths(ptx, a, &n64, &n32);
      CHECKF(n64 > 0 && n32 == 0, "argument %d: %d/%d (64/32-bit)", a, n64,
             n32);
    }
    CHECK(has_remark(k, "offsets into 'c' are 64-bit: its run-time size M "
                        "x N can reach 2^31 elements"));
    assemble(ptx, "sm_90", "gemm_dyn");
    /* the ranges the index analysis assumed: a run-time size < 2^31 */
    const int64_t big[2] = {2147483648, 64}, most[2] = {2147483647, 64};
    CHECK(wavec_arg_shape(k, 0, 2, big) == WAVEC_ERR_INVALID &&
          strstr(wavec_errmsg(ctx), "out of range"));
    CHECKF(wavec_arg_shape(k, 0, 2, most) == WAVEC_OK, "%s",
           wavec_errmsg(ctx));
  }
  wavec_ctx_free(ctx);
}

enum { R = 33554496, C = 64, S = 8, R0 = 33554428 };

/* rows: y = x[R0 .. R0 + S), x of R x C = 2^31 + 4096 bytes (calloc: only
 * the pages touched take memory). Returns the simulator's status. */
static wavec_status simulate_rows(const char *hook, char *err, size_t errn) {
  wavec_ctx *ctx = wavec_ctx_new(NULL, NULL);
  if (hook)
    CHECK(wavec_test_hook(ctx, hook) == WAVEC_OK);
  wavec_kernel *k = open_kernel(ctx, "tests/kernels/large.wave", "rows", NULL);
  wavec_status st = WAVEC_ERR_INTERNAL;
  int8_t *x = calloc((size_t)R * C, 1), *y = calloc((size_t)S * C, 1);
  CHECK(x && y);
  if (k && x && y) {
    for (size_t r = R0; r < R0 + S; r++)
      for (size_t c = 0; c < C; c++)
        x[r * C + c] = (int8_t)((r * 7 + c * 3) % 251 - 125);
    void *args[] = {x, y};
    st = wavec_simulate(k, args);
    snprintf(err, errn, "%s", wavec_errmsg(ctx));
    for (size_t r = 0; st == WAVEC_OK && r < S; r++)
      for (size_t c = 0; c < C; c++)
        CHECKF(y[r * C + c] == x[(R0 + r) * C + c],
               "y[%zu, %zu] = %d, not x[%zu, %zu] = %d", r, c, y[r * C + c],
               R0 + r, c, x[(R0 + r) * C + c]);
  }
  free(x);
  free(y);
  wavec_ctx_free(ctx);
  return st;
}

static void simulator_across_2_31(void) {
  char err[1024];
  wavec_status st = simulate_rows(NULL, err, sizeof err);
  CHECKF(st == WAVEC_OK, "%s", err);
  /* every index in 32 bits: row 2^25 starts at offset 2^31, which wraps */
  st = simulate_rows("narrow-index", err, sizeof err);
  CHECKF(st == WAVEC_ERR_RUNTIME && strstr(err, "error[E0601]") &&
             strstr(err, "out-of-bounds read of 'x': element -2147483648 "
                         "of 2147487744"),
         "narrow-index: %s", err);
}

/* wrap: x * 65536 * 65536 + 7 is 7 in i32, as add.s32 and mul.lo.s32
 * compute it. */
static void i32_arithmetic_wraps(void) {
  wavec_ctx *ctx = wavec_ctx_new(NULL, NULL);
  wavec_kernel *k = open_kernel(ctx, "tests/kernels/large.wave", "wrap", NULL);
  int32_t x[32], y[32];
  for (int i = 0; i < 32; i++)
    x[i] = i * 12345 - 7, y[i] = -1;
  void *args[] = {x, y};
  if (k) {
    CHECKF(wavec_simulate(k, args) == WAVEC_OK, "%s", wavec_errmsg(ctx));
    for (int i = 0; i < 32; i++)
      CHECKF(y[i] == 7, "y[%d] = %d", i, y[i]);
  }
  wavec_ctx_free(ctx);
}

int main(void) {
  RUN(gemm_output_past_2_31);
  RUN(elementwise_past_2_31);
  RUN(dynamic_sizes_get_64_bits);
  RUN(simulator_across_2_31);
  RUN(i32_arithmetic_wraps);
  CHECK_EXIT();
}
