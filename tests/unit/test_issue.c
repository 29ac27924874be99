/* Issue order (lower.c, hardware(early_mma)) and groups of their own for
 * mmas whose results are touched in another order than issued (waits.c):
 *  - the one-pass backward issues dp = v doᵀ right after s = k qᵀ, and the
 *    wait before the exponentials keeps dp in flight (a partial wait, each
 *    chain a group of its own); dv runs while ds is computed; in program
 *    order (early_mma = 0) the first wait is a full one;
 *  - the results are the same bits either way (each accumulator's chain
 *    adds in the same order), and those of float64 within 1e-2;
 *  - a kernel whose mmas already come where they are ready (GEMM, the
 *    attention forward) has the same program either way. */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "../ref/kcase.c"
#include "../ref/ref.c"
#include "check.h"
#include "tir/tir.h"
#include "wavec.h"

/* The first wgmma wait inside the first loop that issues wgmmas, and the
 * accumulators (first registers) of the chains issued before it. */
static int64_t first_wait(const tir_prog *p, int *chains) {
  uint32_t last = 0;
  *chains = 0;
  bool in_loop = false;
  for (uint32_t i = 0; i < p->code.n; i++) {
    const tir_instr *in = &p->code.v[i];
    if (in->op == T_LOOP)
      in_loop = true;
    if (!in_loop)
      continue;
    if (in->op == T_WGMMA && in->list[0] != last) {
      last = in->list[0];
      ++*chains;
    }
    if (in->op == T_WGWAIT && *chains)
      return in->imm;
  }
  return -1;
}

static void backward_order(void) {
  double *out[2][3] = {{NULL}};
  size_t n = 2 * 192 * 64;
  for (int early = 0; early < 2; early++) {
    const char *defs[] = {"B=2", "M=192", "K2=192", "K1=64", "N=64",
                          "BLOCK_K2=128", "BLOCK_M=64", "stages=2",
                          early ? NULL : "early_mma=0", NULL};
    kcase c;
    bool ok = kc_open(&c, "examples/attention_bwd_wgmma.wave",
                      "attention_bwd_fused_wgmma", NULL, defs);
    CHECKF(ok, "early=%d: %s", early, c.err);
    if (!ok) {
      kc_close(&c);
      continue;
    }
    const tir_prog *p = c.k->k.tir;
    int chains;
    int64_t w = first_wait(p, &chains);
    /* early: s and dp issued, the wait before exp keeps dp; program
     * order: s alone, waited for in full */
    CHECKF(early ? w == 1 && chains == 2 : w == 0 && chains == 1,
           "early=%d: first wait keeps %lld groups after %d chains", early,
           (long long)w, chains);
    uint64_t rng = 5;
    double *in[6];
    static const char *const names[] = {"q", "k", "v", "do", "lse", "D"};
    for (int a = 0; a < 6; a++)
      in[a] = kc_input(&c, names[a], &rng);
    bool ran = kc_simulate(&c);
    CHECKF(ran, "early=%d: %s", early, c.err);
    if (ran) {
      out[early][0] = kc_output(&c, "dk");
      out[early][1] = kc_output(&c, "dv");
      out[early][2] = kc_output(&c, "dq_acc");
    }
    for (int a = 0; a < 6; a++)
      free(in[a]);
    kc_close(&c);
  }
  if (out[0][0] && out[1][0])
    for (int o = 0; o < 3; o++)
      CHECKF(!memcmp(out[0][o], out[1][o], n * sizeof(double)),
             "output %d: early mmas compute other bits", o);
  for (int e = 0; e < 2; e++)
    for (int o = 0; o < 3; o++)
      free(out[e][o]);
}

/* Kernels whose mmas come where they are ready: the same thread program. */
static void unchanged(void) {
  static const struct {
    const char *file, *kernel, *defs[8];
  } rows[] = {
      {"examples/gemm_wgmma.wave", "gemm_wgmma",
       {"M=256", "N=256", "K=256", "BLOCK_M=256", NULL}},
      {"examples/attention_fwd_wgmma.wave", "attention_fwd_wgmma",
       {"B=1", "M=256", "K2=256", "K1=128", "N=128", NULL}},
      {"examples/attention_fwd_wgmma.wave", "attention_fwd_wgmma_causal",
       {"B=1", "M=256", "K2=256", "K1=64", "N=64", "specialize=1", NULL}},
  };
  for (size_t r = 0; r < sizeof rows / sizeof *rows; r++) {
    char *text[2] = {NULL, NULL};
    for (int early = 0; early < 2; early++) {
      const char *defs[10];
      size_t d = 0;
      for (; rows[r].defs[d]; d++)
        defs[d] = rows[r].defs[d];
      defs[d++] = early ? NULL : "early_mma=0";
      defs[d] = NULL;
      kcase c;
      bool ok = kc_open(&c, rows[r].file, rows[r].kernel, NULL, defs);
      CHECKF(ok, "%s: %s", rows[r].kernel, c.err);
      if (ok) {
        wv_buf b;
        wv_buf_init(&b, c.k->k.ctx);
        tir_print(c.k->k.ctx, c.k->k.tir, &b);
        text[early] = strdup(wv_buf_str(&b));
      }
      kc_close(&c);
    }
    CHECKF(text[0] && text[1] && !strcmp(text[0], text[1]),
           "%s: early mmas changed the program", rows[r].kernel);
    free(text[0]), free(text[1]);
  }
}

int main(void) {
  RUN(backward_order);
  RUN(unchanged);
  CHECK_EXIT();
}
