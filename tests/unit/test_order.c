/* Program order over global memory (plan.c's ordered_accesses, the
 * simulator's E0616): kernels of tests/kernels/order.wave that read back,
 * or write again, a tensor they wrote, where the elements a thread reads
 * are another thread's. Each against float64 at sizes the tiles divide and
 * at ragged ones; with the ordering barrier planted away (hook
 * no-order-barrier) the simulator reports the race at the source line;
 * across workgroups, where no barrier helps, it reports it whatever the
 * compiler does. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../ref/kcase.c"
#include "../ref/ref.c"
#include "check.h"

static const char *const FILE_ = "tests/kernels/order.wave";

/* c = a bᵀ in float64 (a [M, K], b [N, K]). */
static double *gemm(int M, int N, int K, const double *a, const double *b) {
  double *c = calloc((size_t)M * N, sizeof *c);
  for (int i = 0; i < M; i++)
    for (int j = 0; j < N; j++)
      for (int k = 0; k < K; k++)
        c[(size_t)i * N + j] += a[(size_t)i * K + k] * b[(size_t)j * K + k];
  return c;
}

static double max_err(const double *x, const double *r, size_t n) {
  double e = 0, m = 1e-30;
  for (size_t i = 0; i < n; i++) {
    e = fmax(e, fabs(x[i] - r[i]));
    m = fmax(m, fabs(r[i]));
  }
  return e / m;
}

/* Opens `kernel` at M, N, K (hook: a planted bug, or NULL). */
static bool open_at(kcase *c, const char *kernel, int M, int N, int K,
                    const char *hook) {
  char m[32], n[32], k[32], h[64];
  snprintf(m, sizeof m, "M=%d", M);
  snprintf(n, sizeof n, "N=%d", N);
  snprintf(k, sizeof k, "K=%d", K);
  snprintf(h, sizeof h, "hook=%s", hook ? hook : "");
  const char *defs[] = {m, n, k, hook ? h : NULL, NULL};
  bool ok = kc_open(c, FILE_, kernel, NULL, defs);
  CHECKF(ok, "%s", c->err);
  return ok;
}

/* shift_back (mma.sync) and shift_back_wgmma: d is c with its columns
 * (rows) turned by half the workgroup's tile, which the other wave
 * (warpgroup) wrote. Returns the simulator's message where it refused. */
static void shifted(const char *kernel, int M, int N, int K, int tile,
                    bool rows, const char *hook, char *err, size_t errn) {
  kcase c;
  err[0] = 0;
  if (!open_at(&c, kernel, M, N, K, hook))
    return;
  uint64_t rng = 7;
  double *a = kc_input(&c, "a", &rng), *b = kc_input(&c, "b", &rng);
  double *ref = gemm(M, N, K, a, b);
  if (!kc_simulate(&c)) {
    snprintf(err, errn, "%s", c.err);
  } else {
    double *cc = kc_output(&c, "c"), *d = kc_output(&c, "d");
    double *rd = malloc((size_t)M * N * sizeof *rd);
    int half = tile / 2;
    for (int i = 0; i < M; i++)
      for (int j = 0; j < N; j++) {
        int si = i, sj = j;
        if (rows)
          si = (i % tile + half) % tile + i / tile * tile;
        else
          sj = (j % tile + half) % tile + j / tile * tile;
        /* (past the edge of a ragged tile the read is masked: 0) */
        bool in = si < M && sj < N;
        rd[(size_t)i * N + j] = in ? ref[(size_t)si * N + sj] : 0.0;
      }
    double ec = max_err(cc, ref, (size_t)M * N);
    double ed = max_err(d, rd, (size_t)M * N);
    printf("  %s %dx%dx%d: c rel err %.2g, d %.2g\n", kernel, M, N, K, ec,
           ed);
    CHECKF(ec < 1e-5, "%s %dx%dx%d: c %g", kernel, M, N, K, ec);
    CHECKF(ed < 1e-5, "%s %dx%dx%d: d %g", kernel, M, N, K, ed);
    CHECKF(kc_has_remark(c.k, "a barrier of the workgroup orders the two"),
           "%s: no remark on the ordering barrier", kernel);
    free(cc);
    free(d);
    free(rd);
  }
  free(a);
  free(b);
  free(ref);
  kc_close(&c);
}

static void read_back_other_wave(void) {
  char err[4096];
  static const int sz[][3] = {{64, 128, 64}, {48, 96, 40}};
  for (int i = 0; i < 2; i++) {
    shifted("shift_back", sz[i][0], sz[i][1], sz[i][2], 32, false, NULL, err,
            sizeof err);
    CHECKF(!err[0], "%s", err);
  }
}

static void read_back_other_warpgroup(void) {
  char err[4096];
  shifted("shift_back_wgmma", 128, 128, 64, 128, true, NULL, err, sizeof err);
  CHECKF(!err[0], "%s", err);
  shifted("shift_back_wgmma", 256, 192, 128, 128, true, NULL, err,
          sizeof err);
  CHECKF(!err[0], "%s", err);
}

/* Without the barrier the waves race on c: the simulator says where. */
static void planted_no_order_barrier(void) {
  char err[4096];
  shifted("shift_back", 64, 128, 64, 32, false, "no-order-barrier", err,
          sizeof err);
  printf("  planted: %.160s\n", err);
  CHECKF(strstr(err, "error[E0616]: global-memory race") != NULL, "%s", err);
  CHECKF(strstr(err, "order.wave:23:5") || strstr(err, "order.wave:24:11"),
         "not at the write or the read: %s", err);
  /* (and it names the other access's line: the read at 24:11 for the
   * write at 23:5, or the other way) */
  CHECKF(strstr(err, "(at 24:11)") || strstr(err, "(at 23:5)"),
         "the other access's line is not named: %s", err);
  shifted("shift_back_wgmma", 128, 128, 64, 128, true, "no-order-barrier",
          err, sizeof err);
  CHECKF(strstr(err, "error[E0616]") != NULL, "wgmma: %s", err);
}

/* Another workgroup wrote what each reads: a race whatever lies between. */
static void read_back_other_workgroup(void) {
  char err[4096];
  kcase c;
  if (!open_at(&c, "shift_across", 64, 128, 64, NULL))
    return;
  uint64_t rng = 3;
  free(kc_input(&c, "a", &rng));
  free(kc_input(&c, "b", &rng));
  CHECK(!kc_simulate(&c));
  snprintf(err, sizeof err, "%s", c.err);
  printf("  %.200s\n", err);
  CHECKF(strstr(err, "error[E0616]") != NULL, "%s", err);
  CHECKF(strstr(err, "workgroups run in no order") != NULL, "%s", err);
  kc_close(&c);
}

/* Two writes of c in different layouts: the second wins everywhere. */
static void write_twice(void) {
  static const int sz[][3] = {{64, 64, 32}, {40, 72, 24}};
  for (int t = 0; t < 2; t++) {
    int M = sz[t][0], N = sz[t][1], K = sz[t][2];
    kcase c;
    if (!open_at(&c, "write_twice", M, N, K, NULL))
      return;
    uint64_t rng = 11;
    free(kc_input(&c, "a", &rng));
    free(kc_input(&c, "b", &rng));
    double *bias = kc_input(&c, "bias", &rng);
    bool ok = kc_simulate(&c);
    CHECKF(ok, "%s", c.err);
    if (ok) {
      double *out = kc_output(&c, "c");
      double e = 0;
      for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++)
          e = fmax(e, fabs(out[(size_t)i * N + j] - bias[j]));
      printf("  write_twice %dx%dx%d: max err %.2g\n", M, N, K, e);
      CHECKF(e == 0, "%dx%dx%d: the first write survives (%g)", M, N, K, e);
      free(out);
    }
    free(bias);
    kc_close(&c);
  }
}

/* c's tile t = c's tile t - 1 with rows turned by one (inside 16) + x's
 * tile t, tile 0 from c's last tile as given: each iteration reads what
 * other threads wrote the iteration before. */
static void in_place_across_iterations(const char *hook) {
  int M = 32, N = 64;
  kcase c;
  if (!open_at(&c, "prefix_in_place", M, N, 16, hook))
    return;
  uint64_t rng = 5;
  double *x = kc_input(&c, "x", &rng), *c0 = kc_input(&c, "c", &rng);
  double *r = malloc((size_t)M * N * sizeof *r);
  memcpy(r, c0, (size_t)M * N * sizeof *r);
  for (int t = 0; t < N / 16; t++)
    for (int i = 0; i < M; i++)
      for (int j = t * 16; j < t * 16 + 16; j++) {
        int si = (i % 16 + 1) % 16 + i / 16 * 16, sj = (j + N - 16) % N;
        r[(size_t)i * N + j] = (double)(float)(r[(size_t)si * N + sj] +
                                               x[(size_t)i * N + j]);
      }
  bool ok = kc_simulate(&c);
  if (hook) {
    printf("  planted: %.160s\n", c.err);
    CHECKF(!ok && strstr(c.err, "error[E0616]"), "%s",
           ok ? "ran clean" : c.err);
  } else {
    CHECKF(ok, "%s", c.err);
    if (ok) {
      double *out = kc_output(&c, "c");
      double e = max_err(out, r, (size_t)M * N);
      printf("  prefix_in_place %dx%d: rel err %.2g\n", M, N, e);
      CHECKF(e < 1e-6, "rel err %g", e);
      free(out);
    }
  }
  free(x);
  free(c0);
  free(r);
  kc_close(&c);
}

static void in_place(void) { in_place_across_iterations(NULL); }
static void planted_in_place(void) {
  in_place_across_iterations("no-order-barrier");
}

int main(void) {
  RUN(read_back_other_wave);
  RUN(read_back_other_warpgroup);
  RUN(planted_no_order_barrier);
  RUN(read_back_other_workgroup);
  RUN(write_twice);
  RUN(in_place);
  RUN(planted_in_place);
  CHECK_EXIT();
}
