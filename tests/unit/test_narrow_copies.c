/* Warpgroup GEMMs whose operand rows in memory are not a multiple of 16
 * bytes (K = 66 of f16: 132 bytes; an N-contiguous rhs with N = 100: 200
 * bytes; fp8 with K = 52): promote.c copies their staged tiles 8 or 4 bytes
 * at a time (cp.async.ca), and rows of an odd number of elements (K = 101)
 * an element at a time by loads and stores, where they were refused
 * (E0701) before; a tensor map cannot take such rows (its strides are
 * multiples of 16), so they never come by tensor copies.
 *  - the GEMMs of tests/kernels/swizzle.wave in the simulator against
 *    float64 at ragged sizes, in the compiler's schedule, 3 stages, the
 *    copies=2 ring and without a ring (stages = 1);
 *  - what the GPU is told: the PTX's copies are cp.async.ca of the chosen
 *    width, with the zero-filling form past the ragged K edge, and no
 *    tensor map of an operand; the remark that says why;
 *  - a producer warpgroup (specialize = 1), which needs tensor copies, is
 *    refused with the reason;
 *  - the run-time form: gemm_wgmma_dyn with dynamic(K, multiple_of = 2)
 *    at K = 66, 100 and 128 (the same 4-byte copies at every K);
 *  - the copies' proxy fence before a wgmma reads them (and the simulator's
 *    report without it). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../ref/kcase.c"
#include "../ref/ref.c"
#include "check.h"

static const char *const FILE_ = "tests/kernels/swizzle.wave";

typedef struct ncase {
  const char *kernel;
  int M, N, K;
  int vb;   /* the copies' bytes: of a (and of b, K-contiguous) */
  int vb_b; /* of b where it is N-contiguous */
} ncase;

static const ncase CASES[] = {
    {"gemm_nt", 128, 128, 66, 4, 4},  /* 132-byte rows */
    {"gemm_nt", 200, 72, 100, 8, 8},  /* 200: 8 bytes */
    {"gemm_nt", 64, 130, 36, 8, 8},   /* 72, one K tile (BLOCK_K = 32) */
    {"gemm_nn", 130, 100, 64, 16, 8}, /* b [K, N]: 200-byte rows */
    {"gemm_nn", 128, 98, 70, 4, 4},   /* a 140, b 196 */
    {"gemm_fp8_nt", 130, 128, 52, 4, 4}, {"gemm_fp8_nt", 128, 64, 200, 8, 8},
};

/* The PTX's copies of compiled case n: cp.async.ca of the narrower width
 * (with its zero-filling form), 16-byte ones only where an operand has
 * them, and no operand's tensor map. */
static void check_ptx(kcase *c, const ncase *n, const char *what) {
  const char *ptx = NULL;
  size_t len = 0;
  bool ok = wavec_emit_ptx(c->k, "sm_90a", &ptx, &len) == WAVEC_OK && ptx;
  CHECKF(ok, "%s: %s", what, wavec_errmsg(c->ctx));
  if (!ok)
    return;
  int narrow = n->vb < n->vb_b ? n->vb : n->vb_b;
  char want[64];
  snprintf(want, sizeof want, "], %d", narrow);
  CHECKF(strstr(ptx, "cp.async.ca.shared.global") && strstr(ptx, want),
         "%s: no %d-byte cp.async.ca", what, narrow);
  bool wide = n->vb == 16 || n->vb_b == 16;
  CHECKF(wide == (strstr(ptx, "cp.async.cg.shared.global") != NULL),
         "%s: 16-byte copies %s", what, wide ? "missing" : "present");
  /* the zero-filling form past the ragged edge (every case has one): a
   * src-size register after the width */
  snprintf(want, sizeof want, "], %d, %%", narrow);
  CHECKF(strstr(ptx, want), "%s: no zero-filling %d-byte copy", what, narrow);
  size_t maps = wavec_tensor_map_count(c->k);
  for (size_t i = 0; i < maps; i++) {
    wavec_tensor_map_info ti;
    CHECK(wavec_tensor_map_info_get(c->k, i, &ti) == 0);
    CHECKF(ti.arg > 1, "%s: a tensor map of operand %zu", what, (size_t)ti.arg);
  }
}

/* Simulates compiled GEMM case c (`what`) of `kernel` at M x N x K on
 * random inputs against float64 (a as [K, M] for the _tn kernels, b as
 * [K, N] for gemm_nn), within 1e-5; the error, -1 where it did not run. */
static double gemm_checked(kcase *c, const char *what, const char *kernel,
                           int M, int N, int K, uint64_t *rng) {
  double e = kc_gemm_err_as(c, M, N, K, strstr(kernel, "_tn") != NULL,
                            !strcmp(kernel, "gemm_nn"), rng);
  CHECKF(e >= 0, "%s: %s", what, c->err);
  CHECKF(e >= 0 && e < 1e-5, "%s: rel err %g", what, e);
  return e;
}

static void gemms(void) {
  static const char *const hw[][2] = {
      {NULL, NULL}, {"stages=3", NULL}, {"copies=2", NULL}, {"stages=1", NULL}};
  uint64_t rng = 21;
  for (size_t i = 0; i < sizeof CASES / sizeof *CASES; i++)
    for (size_t h = 0; h < 4; h++) {
      const ncase *n = &CASES[i];
      int M = n->M, N = n->N, K = n->K;
      const char *knobs[4] = {hw[h][0], hw[h][1], NULL, NULL};
      if (!strcmp(n->kernel, "gemm_nt") && K < 64) {
        knobs[0] = "BLOCK_K=32";
        knobs[1] = hw[h][0];
      }
      if (!strcmp(n->kernel, "gemm_nn")) {
        knobs[0] = "BLOCK_N=64";
        knobs[1] = hw[h][0];
      }
      char what[256];
      kcase c;
      if (!kc_gemm_open(&c, FILE_, n->kernel, M, N, K, knobs, what)) {
        CHECKF(0, "%s: %s", what, c.err);
        kc_close(&c);
        continue;
      }
      double e = gemm_checked(&c, what, n->kernel, M, N, K, &rng);
      printf("  %-44s rel err %.2g\n", what, e);
      if (h == 0) {
        check_ptx(&c, n, what);
        char rem[128];
        snprintf(rem, sizeof rem,
                 "the copies of '%s' into shared memory move %d bytes at a "
                 "time, not 16, and no tensor copies",
                 n->vb < 16 ? "a" : "b", n->vb < 16 ? n->vb : n->vb_b);
        CHECKF(kc_has_remark(c.k, rem), "%s: no remark '%s'", what, rem);
      }
      kc_close(&c);
    }
}

/* Rows of an odd number of 16-bit elements, or of 8-bit ones not a
 * multiple of 4 bytes: the rhs's tile goes an element at a time through
 * registers (ld.global, st.shared), the lhs of such rows is taken from
 * registers (gemm_nt, gemm_fp8_nt) or, aligned, still copied (gemm_nn's
 * a, N = 99: its b rows of 198 bytes by loads and stores); in the cp.async
 * ring, the 3-stage ring and without one. A run-time K with nothing stated
 * (gemm_wgmma_dyn_any) at K = 101, 66 and 128. */
static void element_copies(void) {
  static const struct {
    const char *kernel;
    int M, N, K;
    bool lhs_regs;
  } cases[] = {
      {"gemm_nt", 130, 100, 101, true},
      {"gemm_nt", 64, 128, 33, true},
      {"gemm_fp8_nt", 130, 128, 46, true},
      {"gemm_fp8_nt", 128, 70, 45, true},
      {"gemm_nn", 129, 99, 64, false},
      {"gemm_wgmma_dyn_any", 130, 72, 101, true},
      {"gemm_wgmma_dyn_any", 130, 72, 66, true},
      {"gemm_wgmma_dyn_any", 130, 72, 128, true},
  };
  static const char *const hw[] = {NULL, "stages=3", "stages=1", "copies=1"};
  uint64_t rng = 24;
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
    for (size_t h = 0; h < 4; h++) {
      int M = cases[i].M, N = cases[i].N, K = cases[i].K;
      bool nn = !strcmp(cases[i].kernel, "gemm_nn");
      const char *knobs[3] = {nn ? "BLOCK_N=64" : hw[h], nn ? hw[h] : NULL,
                              NULL};
      char what[256];
      kcase c;
      if (!kc_gemm_open(&c, FILE_, cases[i].kernel, M, N, K, knobs, what)) {
        CHECKF(0, "%s: %s", what, c.err);
        kc_close(&c);
        continue;
      }
      bool dyn = strstr(cases[i].kernel, "dyn") != NULL;
      /* the element path wherever the rows are not a multiple of 4 bytes
       * (the run-time K: always, nothing being stated) */
      CHECKF(kc_has_remark(c.k, "into shared memory go an element at a time "
                                "through registers"),
             "%s: no remark on the element copies", what);
      CHECKF(cases[i].lhs_regs == kc_has_remark(c.k, "its rows are not a "
                                                     "multiple of 4 bytes: the "
                                                     "wgmma takes it from "
                                                     "registers"),
             "%s: the remark on the lhs in registers", what);
      if (h == 0) {
        const char *ptx = NULL;
        size_t len = 0;
        bool ok = wavec_emit_ptx(c.k, "sm_90a", &ptx, &len) == WAVEC_OK;
        CHECKF(ok && strstr(ptx, "st.shared") && strstr(ptx, "ld.global") &&
                   strstr(ptx, "fence.proxy.async.shared::cta"),
               "%s: the PTX's loads, stores and fence", what);
      }
      double e = gemm_checked(&c, what, cases[i].kernel, M, N, K, &rng);
      printf("  %-44s rel err %.2g%s\n", what, e,
             dyn ? " (K at run time)" : "");
      kc_close(&c);
    }
}

/* An 8-bit lhs stored [K, M] (no transpose for 8-bit wgmma operands):
 * taken from registers with the reason, at M = 100, 128 and 130 (M = 128
 * was refused before, M = 100 since the narrow copies until this). */
static void eight_bit_m_major_lhs(void) {
  static const int ms[] = {100, 128, 130};
  uint64_t rng = 25;
  for (size_t i = 0; i < 3; i++) {
    int M = ms[i], N = 64, K = 128;
    char what[256];
    kcase c;
    if (!kc_gemm_open(&c, FILE_, "gemm_fp8_tn", M, N, K, NULL, what)) {
      CHECKF(0, "%s: %s", what, c.err);
      kc_close(&c);
      continue;
    }
    /* (at M = 130 its rows are not a multiple of 4 bytes either: the
     * K-major rule is named, which no row size lifts) */
    CHECKF(kc_has_remark(c.k, "a wgmma reads 8-bit operands K-major only, "
                              "and this one is stored otherwise"),
           "%s: no remark on the lhs in registers", what);
    double e = gemm_checked(&c, what, "gemm_fp8_tn", M, N, K, &rng);
    printf("  %-44s rel err %.2g\n", what, e);
    kc_close(&c);
  }
}

/* A producer warpgroup issues tensor copies only: refused where the rows
 * cannot take them, with the reason. */
static void specialize_refused(void) {
  const char *knobs[] = {"specialize=1", NULL};
  char what[256];
  kcase c;
  bool ok = kc_gemm_open(&c, FILE_, "gemm_nt", 128, 128, 66, knobs, what);
  CHECKF(!ok && strstr(c.err, "E0408") &&
             strstr(c.err, "rows are not a multiple of 16 bytes"),
         "%s: %s", what, ok ? "compiled" : c.err);
  kc_close(&c);
}

/* A run-time K, stated even: 4-byte copies whatever K is (the size here
 * from a definition, as wavec run -D gives it). */
static void dynamic_k(void) {
  static const int ks[] = {66, 100, 128};
  uint64_t rng = 22;
  for (size_t i = 0; i < 3; i++) {
    int K = ks[i];
    char what[256];
    kcase c;
    if (!kc_gemm_open(&c, FILE_, "gemm_wgmma_dyn", 130, 72, K, NULL, what)) {
      CHECKF(0, "%s: %s", what, c.err);
      kc_close(&c);
      continue;
    }
    CHECKF(kc_has_remark(c.k, "the copies of 'b' into shared memory move 4 "
                              "bytes at a time, not 16: its rows along 'K' "
                              "are known to be a multiple of 2 elements only"),
           "%s: no remark on the 4-byte copies", what);
    double e = kc_gemm_err(&c, 130, 72, K, &rng);
    printf("  %-44s rel err %.2g\n", what, e);
    CHECKF(e >= 0 && e < 1e-5, "%s: rel err %g (%s)", what, e, c.err);
    kc_close(&c);
  }
}

/* Copies through the generic proxy, read by a wgmma through the async
 * proxy: the lowering fences them (fence.proxy.async after the wait,
 * before the barrier); without the fence (hook no-copy-fence) the
 * simulator fails the run at the mma's line, for the 16-byte copies of a
 * cp.async ring as for the narrow ones, a tile copied where it is read
 * (stages = 1) and the element copies' stores (K = 101). */
static void copies_fenced(void) {
  static const char *const forms[][3] = {{"K=66", NULL},
                                         {"K=64", "copies=1"},
                                         {"K=66", "stages=1"},
                                         {"K=101", NULL}};
  uint64_t rng = 23;
  for (size_t f = 0; f < 4; f++)
    for (int hook = 0; hook < 2; hook++) {
      const char *defs[] = {"M=128",
                            "N=128",
                            forms[f][0],
                            hook ? "hook=no-copy-fence" : forms[f][1],
                            hook ? forms[f][1] : NULL,
                            NULL};
      kcase c;
      bool ok = kc_open(&c, FILE_, "gemm_nt", NULL, defs);
      CHECKF(ok, "%s: %s", forms[f][0], c.err);
      if (!ok) {
        kc_close(&c);
        continue;
      }
      const char *ptx = NULL;
      size_t len = 0;
      CHECK(wavec_emit_ptx(c.k, "sm_90a", &ptx, &len) == WAVEC_OK);
      CHECKF(ptx && (strstr(ptx, "fence.proxy.async.shared::cta") != NULL) ==
                        !hook,
             "%s %s hook=%d: the PTX's fence", forms[f][0],
             forms[f][1] ? forms[f][1] : "", hook);
      free(kc_input(&c, "a", &rng));
      free(kc_input(&c, "b", &rng));
      bool ran = kc_simulate(&c);
      if (hook)
        CHECKF(!ran && strstr(c.err, "error[E0603]") &&
                   strstr(c.err, "no proxy fence") &&
                   strstr(c.err, "swizzle.wave:19:15"),
               "%s %s: got: %s", forms[f][0], forms[f][1] ? forms[f][1] : "",
               ran ? "a clean run" : c.err);
      else
        CHECKF(ran, "%s: %s", forms[f][0], c.err);
      kc_close(&c);
    }
}

int main(void) {
  RUN(gemms);
  RUN(specialize_refused);
  RUN(dynamic_k);
  RUN(element_copies);
  RUN(eight_bit_m_major_lhs);
  RUN(copies_fenced);
  CHECK_EXIT();
}
