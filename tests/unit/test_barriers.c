/* Pass `barriers`: the barriers that only wait for a scratch region's last
 * readers go where another barrier already covers them, and stay where it
 * does not.
 *  - two_reductions (tests/kernels/barriers.wave): a sum and a max across
 *    two waves back to back; the simulator's results match float64, the
 *    module keeps the barrier between the sum's reads and the max's writes
 *    (with the planted bug drop-reuse-barriers, which drops every such
 *    barrier, it has fewer, and the simulator reports the race between
 *    them);
 *  - the one-pass backward (attention_bwd_fused_wgmma, leaving parts):
 *    every such barrier of its loop (the ds conversion's and the parts'
 *    first) is covered,
 *    so the module has exactly as many barriers as with every one dropped,
 *    and the simulator passes (test_attention_bwd checks its numbers). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../ref/kcase.c"
#include "../ref/ref.c"
#include "check.h"

static size_t count(const char *s, const char *needle) {
  size_t n = 0;
  for (const char *p = strstr(s, needle); p; p = strstr(p + 1, needle))
    n++;
  return n;
}

/* bar.sync in the kernel's sm_90a (or sm_90) PTX, or -1. */
static long bars(const char *file, const char *kernel, const char *const *defs,
                 const char *target) {
  kcase c;
  long n = -1;
  if (kc_open(&c, file, kernel, NULL, defs)) {
    const char *ptx = NULL;
    if (wavec_emit_ptx(c.k, target, &ptx, NULL) == WAVEC_OK)
      n = (long)count(ptx, "bar.sync");
  } else {
    CHECKF(0, "%s", c.err);
  }
  kc_close(&c);
  return n;
}

static void two_reductions(void) {
  const char *file = "tests/kernels/barriers.wave";
  const char *defs[] = {"M=40", NULL};
  const char *hooked[] = {"M=40", "hook=drop-reuse-barriers", NULL};
  long kept = bars(file, "two_reductions", defs, "sm_90"),
       none = bars(file, "two_reductions", hooked, "sm_90");
  printf("  two_reductions: %ld barriers (%ld with every reuse barrier "
         "dropped)\n", kept, none);
  /* one round trip each (the row tiles together): two barriers each, less
   * the sum's first */
  CHECKF(kept == 3 && none == 2, "%ld vs %ld", kept, none);
  kcase c;
  if (kc_open(&c, file, "two_reductions", NULL, defs)) {
    uint64_t rng = 5;
    double *x = kc_input(&c, "x", &rng);
    double y[40], z[40];
    for (int i = 0; i < 40; i++) {
      y[i] = 0, z[i] = -INFINITY;
      for (int j = 0; j < 64; j++) {
        y[i] += x[i * 64 + j];
        z[i] = fmax(z[i], x[i * 64 + j]);
      }
    }
    CHECKF(kc_simulate(&c), "%s", c.err);
    double ey = kc_rel_err(&c, "y", y), ez = kc_rel_err(&c, "z", z);
    CHECKF(ey < 1e-6 && ez == 0, "rel err y %g z %g", ey, ez);
    free(x);
  }
  kc_close(&c);
  if (kc_open(&c, file, "two_reductions", NULL, hooked)) {
    uint64_t rng = 5;
    free(kc_input(&c, "x", &rng));
    CHECK(!kc_simulate(&c));
    CHECKF(strstr(c.err, "barriers.wave:16:11: error[E060"), "%s", c.err);
    printf("  planted: %.150s\n", c.err);
  }
  kc_close(&c);
}

/* A softmax over rows that the waves split: the max and the sum each one
 * round trip for all rows (3 barriers), and the right numbers. */
static void softmax_rows(void) {
  const char *file = "tests/kernels/barriers.wave";
  const char *defs[] = {"M=10", NULL};
  long n = bars(file, "softmax_rows", defs, "sm_90");
  printf("  softmax_rows: %ld barriers\n", n);
  CHECKF(n == 3, "%ld barriers", n);
  kcase c;
  if (kc_open(&c, file, "softmax_rows", NULL, defs)) {
    uint64_t rng = 3;
    double *x = kc_input(&c, "x", &rng);
    double *y = malloc(10 * 256 * sizeof *y);
    for (int i = 0; i < 10; i++) {
      double m = -INFINITY, s = 0;
      for (int j = 0; j < 256; j++)
        m = fmax(m, x[i * 256 + j]);
      for (int j = 0; j < 256; j++)
        s += y[i * 256 + j] = exp(x[i * 256 + j] - m);
      for (int j = 0; j < 256; j++)
        y[i * 256 + j] /= s;
    }
    CHECKF(kc_simulate(&c), "%s", c.err);
    double e = kc_rel_err(&c, "y", y);
    CHECKF(e < 1e-6, "rel err %g", e);
    free(x), free(y);
  }
  kc_close(&c);
}

static void one_pass_backward(void) {
  const char *file = "examples/attention_bwd_wgmma.wave";
  /* (the waves leaving parts: exchanging ds, with the threads' adds,
   * nothing else separates one iteration's reads of ds from the next
   * one's writes, and the conversion's barrier stays) */
  const char *defs[] = {"B=1", "M=200", "K2=200", "N=64", "K1=64",
                        "exchange=0", NULL};
  const char *hooked[] = {"B=1",  "M=200", "K2=200", "N=64", "K1=64",
                          "exchange=0", "hook=drop-reuse-barriers", NULL};
  for (int adds = 1; adds <= 2; adds++) {
    const char *d[9], *h[9];
    memcpy(d, defs, 6 * sizeof *d), memcpy(h, hooked, 7 * sizeof *h);
    d[6] = h[7] = adds == 2 ? "adds=2" : "adds=1";
    d[7] = h[8] = NULL;
    long kept = bars(file, "attention_bwd_fused_wgmma", d, "sm_90a"),
         none = bars(file, "attention_bwd_fused_wgmma", h, "sm_90a");
    printf("  attention_bwd_fused_wgmma adds=%d: %ld barriers (%ld with every "
           "reuse barrier dropped)\n", adds, kept, none);
    CHECKF(kept > 0 && kept == none, "adds=%d: %ld vs %ld", adds, kept, none);
  }
}

/* The one-pass backward at D = 128 (specialized, the warpgroups
 * exchanging ds, tensor reduces of dq): the barrier before dq's sums are
 * written to the reduces' buffer is covered by the ds conversion's, once
 * the issuing thread's wait for the buffer's last reduces moves up before
 * it: the loop keeps two barriers (ds written; the buffer written), as
 * many as with every reuse barrier dropped. Dropped without the move
 * (the planted bug), the simulator reports the buffer written while the
 * reduces may still read it, at the write's line. */
static void one_pass_backward_exchange(void) {
  const char *file = "examples/attention_bwd_wgmma.wave";
  const char *defs[] = {"B=1", "M=128", "K2=256", "N=128", "K1=128",
                        NULL, NULL};
  long kept = bars(file, "attention_bwd_fused_wgmma", defs, "sm_90a");
  defs[5] = "hook=drop-reuse-barriers";
  long none = bars(file, "attention_bwd_fused_wgmma", defs, "sm_90a");
  printf("  attention_bwd_fused_wgmma D=128: %ld barriers (%ld with every "
         "reuse barrier dropped)\n", kept, none);
  CHECKF(kept > 0 && kept == none, "%ld vs %ld", kept, none);
  kcase c;
  bool ok = kc_open(&c, file, "attention_bwd_fused_wgmma", NULL, defs);
  CHECKF(ok, "%s", c.err);
  if (ok) {
    uint64_t rng = 3;
    static const char *const in[] = {"q", "k", "v", "do", "lse", "D",
                                     "dq_acc"};
    for (int a = 0; a < 7; a++)
      free(kc_input(&c, in[a], &rng));
    bool ran = kc_simulate(&c);
    if (!ran)
      printf("  planted (no move): %.*s\n", (int)strcspn(c.err, "\n"), c.err);
    CHECKF(!ran && strstr(c.err, "error[E06") &&
               strstr(c.err, "attention_bwd_wgmma.wave:233:9"),
           "got: %s", ran ? "(ran)" : c.err);
  }
  kc_close(&c);
}

int main(void) {
  RUN(two_reductions);
  RUN(softmax_rows);
  RUN(one_pass_backward);
  RUN(one_pass_backward_exchange);
  CHECK_EXIT();
}
