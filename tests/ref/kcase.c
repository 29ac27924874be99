/* The kernel-case harness (kcase.h). */
#include "kcase.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

const kc_hw kc_nvidia = {"nvidia", "32", "F32_16x8x16_F16"};
const kc_hw kc_mfma = {"mfma", "64", "F32_16x16x16_F16"};

static char *kc_slurp(const char *path, size_t *len) {
  *len = 0;
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  char *buf = malloc(1 << 20);
  *len = buf ? fread(buf, 1, 1 << 20, f) : 0;
  fclose(f);
  return buf;
}

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

bool kc_open(kcase *c, const char *file, const char *kernel, const kc_hw *hw,
             const char *const *defs) {
  memset(c, 0, sizeof *c);
  c->ctx = wavec_ctx_new(NULL, NULL);
  for (size_t i = 0; defs && defs[i]; i++) {
    char name[64];
    const char *eq = strchr(defs[i], '=');
    size_t n = (size_t)(eq - defs[i]);
    memcpy(name, defs[i], n);
    name[n] = 0;
    static const char *const hw_ints[] = {
#define X(e, v, hw_name, lo, hi) [e] = hw_name,
        WAVEC_HW_INTS(X)
#undef X
    };
    bool hw_int = false;
    for (size_t j = 0; j < sizeof hw_ints / sizeof *hw_ints; j++)
      hw_int |= !strcmp(name, hw_ints[j]);
    if (hw_int) /* a hardware entry: stages=, workgroups_per_sm=, ... */
      wavec_hardware_override(c->ctx, name, eq + 1);
    else if (!strcmp(name, "hook")) /* a planted bug: hook=NAME */
      wavec_test_hook(c->ctx, eq + 1);
    else if (strpbrk(eq + 1, ".eEn")) /* 0.125, 1e-3, inf, nan */
      wavec_define_float(c->ctx, name, atof(eq + 1));
    else
      wavec_define_int(c->ctx, name, atoll(eq + 1));
  }
  if (hw) {
    wavec_hardware_override(c->ctx, "threads_per_wave", hw->threads);
    wavec_hardware_override(c->ctx, "mma", hw->mma);
  }
  size_t len;
  char *src = kc_slurp(file, &len);
  double t0 = now_ms();
  wavec_status st = src ? wavec_parse(c->ctx, file, src, len)
                        : WAVEC_ERR_INVALID;
  free(src);
  if (st == WAVEC_OK) {
    c->k = wavec_kernel_find(c->ctx, kernel);
    st = c->k ? wavec_compile(c->k, NULL) : WAVEC_ERR_INVALID;
  }
  c->compile_ms = now_ms() - t0;
  if (st != WAVEC_OK) {
    snprintf(c->err, sizeof c->err, "%s %s: %s", file, kernel,
             src ? wavec_errmsg(c->ctx) : "cannot read the file");
    return false;
  }
  c->n = wavec_arg_count(c->k);
  for (size_t i = 0; i < c->n && i < 16; i++) {
    wavec_arg_info_get(c->k, i, &c->info[i]);
    c->buf[i] = malloc(c->info[i].bytes);
    memset(c->buf[i], 0xff, c->info[i].bytes); /* poison */
  }
  return true;
}

void kc_close(kcase *c) {
  for (size_t i = 0; i < c->n; i++)
    free(c->buf[i]);
  wavec_ctx_free(c->ctx);
  c->ctx = NULL;
}

size_t kc_arg(kcase *c, const char *name) {
  for (size_t i = 0; i < c->n; i++)
    if (strcmp(c->info[i].name, name) == 0)
      return i;
  fprintf(stderr, "kcase: no argument '%s'\n", name);
  abort();
}

static ref_dtype rdt(wavec_dtype dt) {
  static const ref_dtype map[WAVEC_DTYPE_COUNT] = {
      [WAVEC_F16] = REF_F16,       [WAVEC_BF16] = REF_BF16,
      [WAVEC_F32] = REF_F32,       [WAVEC_I32] = REF_I32,
      [WAVEC_I1] = REF_F32,        [WAVEC_F8E4M3] = REF_E4M3,
      [WAVEC_F8E5M2] = REF_E5M2,   [WAVEC_I8] = REF_I8};
  if (dt == WAVEC_I1) { /* no reference type: a caller bug */
    fprintf(stderr, "kcase: no reference type for i1\n");
    abort();
  }
  return map[dt];
}

double *kc_input(kcase *c, const char *name, uint64_t *rng) {
  size_t i = kc_arg(c, name);
  double *x = malloc(c->info[i].elems * sizeof *x);
  ref_rand_fill(rng, c->info[i].elems, -1, 1, rdt(c->info[i].dtype), x);
  ref_pack(c->info[i].elems, x, rdt(c->info[i].dtype), c->buf[i]);
  return x;
}

void kc_set(kcase *c, const char *name, double *x) {
  size_t i = kc_arg(c, name);
  ref_pack(c->info[i].elems, x, rdt(c->info[i].dtype), c->buf[i]);
  ref_unpack(c->info[i].elems, c->buf[i], rdt(c->info[i].dtype), x);
}

double *kc_output(kcase *c, const char *name) {
  size_t i = kc_arg(c, name);
  double *x = malloc(c->info[i].elems * sizeof *x);
  ref_unpack(c->info[i].elems, c->buf[i], rdt(c->info[i].dtype), x);
  return x;
}

bool kc_simulate(kcase *c) {
  if (wavec_simulate(c->k, c->buf) == WAVEC_OK)
    return true;
  snprintf(c->err, sizeof c->err, "%s", wavec_errmsg(c->ctx));
  return false;
}

double kc_rel_err(kcase *c, const char *name, const double *ref) {
  double *out = kc_output(c, name);
  double e = ref_rel_err(c->info[kc_arg(c, name)].elems, out, ref);
  free(out);
  return e;
}

bool kc_has_remark(wavec_kernel *k, const char *text) {
  for (size_t i = 0; i < wavec_remark_count(k); i++)
    if (strstr(wavec_remark(k, i), text))
      return true;
  return false;
}

bool kc_gemm_open(kcase *c, const char *file, const char *kernel, int M,
                  int N, int K, const char *const *knobs, char what[256]) {
  char dm[32], dn[32], dk[32];
  snprintf(dm, sizeof dm, "M=%d", M);
  snprintf(dn, sizeof dn, "N=%d", N);
  snprintf(dk, sizeof dk, "K=%d", K);
  const char *defs[16] = {dm, dn, dk};
  size_t n = 3;
  int w = snprintf(what, 256, "%s %dx%dx%d", kernel, M, N, K);
  for (size_t i = 0; knobs && knobs[i] && n < 15; i++) {
    defs[n++] = knobs[i];
    if (w < 256)
      w += snprintf(what + w, 256 - (size_t)w, " %s", knobs[i]);
  }
  return kc_open(c, file, kernel, NULL, defs);
}

double kc_gemm_err(kcase *c, int M, int N, int K, uint64_t *rng) {
  return kc_gemm_err_as(c, M, N, K, false, false, rng);
}

double kc_gemm_err_as(kcase *c, int M, int N, int K, bool a_km, bool b_kn,
                      uint64_t *rng) {
  double *a = kc_input(c, "a", rng), *b = kc_input(c, "b", rng);
  double *ref = malloc(sizeof *ref * (size_t)M * N);
  if (!a_km && !b_kn) {
    ref_gemm((size_t)M, (size_t)N, (size_t)K, a, b, ref);
  } else {
    for (int m = 0; m < M; m++)
      for (int n = 0; n < N; n++) {
        double sum = 0;
        for (int k = 0; k < K; k++)
          sum += (a_km ? a[k * M + m] : a[m * K + k]) *
                 (b_kn ? b[k * N + n] : b[n * K + k]);
        ref[m * N + n] = sum;
      }
  }
  double e = kc_simulate(c) ? kc_rel_err(c, "c", ref) : -1;
  free(a), free(b), free(ref);
  return e;
}
