/* Regressions: kernels that once gave wrong numbers without any error.
 *  - rowsum: a sum carried through a loop took the carried value's layout
 *    instead of its input's, and dropped rows;
 *  - ints: integer constants (literals, i32 Register fills) became 0;
 * and a reduction whose dimension the waves split (partials meet in shared
 * memory). */
#include <math.h>
#include <stdlib.h>

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

int main(void) {
  RUN(carried_sum_keeps_rows);
  RUN(integer_constants);
  CHECK_EXIT();
}
