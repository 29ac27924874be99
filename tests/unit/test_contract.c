/* Contraction (src/tir/contract.c), tests/kernels/contract.wave:
 *  - fused: x y + z, y z - x, z - x x become three T_FMA (two with a
 *    negated operand) and no f32 product; the simulator's outputs are
 *    fmaf's bits for every element, on inputs where rounding the product
 *    first gives other bits (checked on the data, so the comparison can
 *    tell the two apart); the PTX has three fma.rn.f32 and no mul.rn.f32;
 *  - twice: a product that is also written out stays a product;
 *  - half: f16 registers do not fuse;
 *  - the attention forward written with the scale inside the exponential
 *    (max over the raw scores) fuses its scaling into the subtraction: one
 *    fma per score element. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../ref/kcase.c"
#include "../ref/ref.c"
#include "check.h"
#include "passes/dist.h"
#include "tir/tir.h"
#include "wavec.h"

static const char *const file = "tests/kernels/contract.wave";

static uint32_t count_op(const tir_prog *p, tir_op op, tir_ty ty) {
  uint32_t n = 0;
  for (uint32_t i = 0; i < p->code.n; i++)
    n += p->code.v[i].op == op && p->code.v[i].ty == ty;
  return n;
}

static uint32_t count_str(const char *s, const char *what) {
  uint32_t n = 0;
  for (const char *q = s; (q = strstr(q, what)); q++)
    n++;
  return n;
}

static void fused(void) {
  kcase c;
  bool ok = kc_open(&c, file, "fused", NULL, NULL);
  CHECKF(ok, "%s", c.err);
  if (!ok)
    return;
  const tir_prog *p = c.k->k.tir;
  CHECKF(count_op(p, T_FMA, TY_F32) == 3 && count_op(p, T_MUL, TY_F32) == 0 &&
             count_op(p, T_NEG, TY_F32) == 2,
         "fma %u, f32 mul %u, neg %u", count_op(p, T_FMA, TY_F32),
         count_op(p, T_MUL, TY_F32), count_op(p, T_NEG, TY_F32));
  uint64_t seed = 7;
  double *x = kc_input(&c, "x", &seed), *y = kc_input(&c, "y", &seed),
         *z = kc_input(&c, "z", &seed);
  bool sim = kc_simulate(&c);
  CHECKF(sim, "%s", c.err);
  if (sim) {
    double *a = kc_output(&c, "a"), *b = kc_output(&c, "b"),
           *cc = kc_output(&c, "c");
    size_t n = c.info[kc_arg(&c, "x")].elems, bad = 0, differ = 0;
    for (size_t i = 0; i < n; i++) {
      float xf = (float)x[i], yf = (float)y[i], zf = (float)z[i];
      float want[3] = {fmaf(xf, yf, zf), fmaf(yf, zf, -xf), fmaf(-xf, xf, zf)};
      float twice = (float)((float)(xf * yf) + zf); /* rounded twice */
      differ += twice != want[0];
      bad += (float)a[i] != want[0] || (float)b[i] != want[1] ||
             (float)cc[i] != want[2];
    }
    CHECKF(bad == 0, "%zu of %zu elements are not fmaf's", bad, n);
    CHECKF(differ > 0, "the data cannot tell one rounding from two");
    free(a);
    free(b);
    free(cc);
  }
  const char *ptx = NULL;
  wavec_status st = wavec_emit_ptx(c.k, "sm_90", &ptx, NULL);
  CHECKF(st == WAVEC_OK, "%s", wavec_errmsg(c.ctx));
  if (st == WAVEC_OK)
    CHECKF(count_str(ptx, "fma.rn.f32") == 3 &&
               count_str(ptx, "mul.rn.f32") == 0,
           "PTX: %u fma.rn.f32, %u mul.rn.f32", count_str(ptx, "fma.rn.f32"),
           count_str(ptx, "mul.rn.f32"));
  free(x);
  free(y);
  free(z);
  kc_close(&c);
}

/* A product with a second use, and f16 registers: nothing fuses. */
static void kept(void) {
  static const char *const kernels[] = {"twice", "half"};
  for (int i = 0; i < 2; i++) {
    kcase c;
    bool ok = kc_open(&c, file, kernels[i], NULL, NULL);
    CHECKF(ok, "%s", c.err);
    if (!ok)
      continue;
    const tir_prog *p = c.k->k.tir;
    tir_ty t = i ? TY_F16 : TY_F32;
    CHECKF(count_op(p, T_FMA, TY_F32) == 0 && count_op(p, T_MUL, t) == 1,
           "%s: %u fma, %u products", kernels[i], count_op(p, T_FMA, TY_F32),
           count_op(p, T_MUL, t));
    uint64_t seed = 9;
    double *x = kc_input(&c, "x", &seed), *y = kc_input(&c, "y", &seed),
           *z = kc_input(&c, "z", &seed);
    bool sim = kc_simulate(&c);
    CHECKF(sim, "%s", c.err);
    if (sim && !i) { /* twice: the product and the sum, each rounded */
      double *a = kc_output(&c, "a"), *tt = kc_output(&c, "t");
      size_t n = c.info[kc_arg(&c, "x")].elems, bad = 0;
      for (size_t e = 0; e < n; e++) {
        float pr = (float)x[e] * (float)y[e];
        bad += (float)tt[e] != pr || (float)a[e] != pr + (float)z[e];
      }
      CHECKF(bad == 0, "twice: %zu of %zu elements differ", bad, n);
      free(a);
      free(tt);
    }
    free(x);
    free(y);
    free(z);
    kc_close(&c);
  }
}

/* The forward as examples/attention_fwd_wgmma.wave writes it: the scores
 * scaled inside the exponential, one fma each (64 x 64 scores a tile). */
static void attention(void) {
  const char *defs[] = {"B=1", "M=128", "K2=128", "K1=64", "N=64", NULL};
  kcase c;
  bool ok = kc_open(&c, "examples/attention_fwd_wgmma.wave",
                    "attention_fwd_wgmma", NULL, defs);
  CHECKF(ok, "%s", c.err);
  if (ok) {
    const tir_prog *p = c.k->k.tir;
    uint32_t loop = 0;
    while (loop < p->code.n && p->code.v[loop].op != T_LOOP)
      loop++;
    uint32_t fma = 0, exp2 = 0;
    for (uint32_t i = loop; i < p->code.n && loop < p->code.n &&
                            i < p->code.v[loop].match; i++) {
      fma += p->code.v[i].op == T_FMA;
      exp2 += p->code.v[i].op == T_EXP2;
    }
    /* each exponential of a score takes an fma (and so do the row
     * statistics' rescalings) */
    CHECKF(exp2 > 0 && fma >= exp2 - 2, "in the loop: %u fma, %u exp2", fma,
           exp2);
  }
  kc_close(&c);
}

int main(void) {
  RUN(fused);
  RUN(kept);
  RUN(attention);
  return check_failed_;
}
