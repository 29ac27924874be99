/* The pass release (src/tir/release.c) and the zero-start wgmma
 * (ptx_zero_rule), in the simulator and in the PTX:
 *  - the specialized attention forward with a carried group (3 stages):
 *    the ring's slot release moves up to the first full wait of the
 *    iteration (q kᵀ retired), before the softmax's first max, and none
 *    is left at the iteration's end; the output against float64;
 *  - where the first full wait comes after the last reader (2 stages,
 *    nothing carried) or there is none (a GEMM: the carry wait only), the
 *    release stays where the lowering put it;
 *  - every wgmma that reads a ring's slot carries the ring's tag, and
 *    each release the tag of the slot it gives back;
 *  - the PTX: the first wgmma of q kᵀ starts from zero (scale-d false,
 *    from a register set to 0), the others accumulate;
 *  - planted bug: the release moved to the top of the iteration, before
 *    the wait that retires the previous iteration's wgmmas (hook
 *    release-early): the pass's verifier stops the compile (E0999) at the
 *    read the ring stages. */
#include <stdlib.h>
#include <string.h>

#include "../ref/kcase.c"
#include "../ref/ref.c"
#include "check.h"
#include "passes/dist.h"
#include "tir/tir.h"
#include "wavec.h"

static bool is_release(const tir_instr *in) {
  return in->op == T_MBARRIVE && in->imm == 0 && in->tag;
}

/* The loop of p with the most wgmmas (the consumers' main loop). */
static uint32_t main_loop(const tir_prog *p) {
  uint32_t best = 0, most = 0;
  for (uint32_t i = 0; i < p->code.n; i++) {
    if (p->code.v[i].op != T_LOOP)
      continue;
    uint32_t n = 0;
    for (uint32_t j = i; j < p->code.v[i].match; j++)
      n += p->code.v[j].op == T_WGMMA;
    if (n > most)
      most = n, best = i;
  }
  return best;
}

/* Where, in the body of loop `top`: its first full wait, its first f32
 * max, its releases (the first and the last) and its last wgmma. */
typedef struct body {
  uint32_t wait, max, first_rel, last_rel, last_wgmma, releases;
  bool untagged; /* a wgmma reading a ring's slot without its tag */
} body;

static body scan(const tir_prog *p, uint32_t top) {
  body b = {0};
  uint32_t end = p->code.v[top].match;
  for (uint32_t j = top + 1; j < end; j++) {
    const tir_instr *in = &p->code.v[j];
    if (in->op == T_WGWAIT && in->imm == 0 && !b.wait)
      b.wait = j;
    if (in->op == T_MAX && in->ty == TY_F32 && !b.max)
      b.max = j;
    if (is_release(in)) {
      b.first_rel = b.first_rel ? b.first_rel : j;
      b.last_rel = j;
      b.releases++;
    }
    if (in->op == T_WGMMA) {
      b.last_wgmma = j;
      /* (q comes from outside the ring: only a wgmma reading k or v, an
       * rhs from shared memory, must be tagged) */
      b.untagged |= !in->tag;
    }
  }
  return b;
}

static void moved_in_the_forward(void) {
  const char *defs[] = {"B=1",  "M=256",        "K2=512",   "K1=64",
                        "N=64", "specialize=1", "stages=3", NULL};
  kcase c;
  bool ok = kc_open(&c, "examples/attention_fwd_wgmma.wave",
                    "attention_fwd_wgmma", NULL, defs);
  CHECKF(ok, "%s", c.err);
  if (!ok) {
    kc_close(&c);
    return;
  }
  const tir_prog *p = c.k->k.tir;
  uint32_t top = main_loop(p);
  body b = scan(p, top);
  CHECKF(top && b.wait && b.max && b.releases == 1,
         "loop %u: wait %u, max %u, %u releases", top, b.wait, b.max,
         b.releases);
  /* right after the first full wait (the arithmetic of its operands in
   * between), before the softmax, and of the previous tile */
  CHECKF(b.first_rel > b.wait && b.first_rel < b.max,
         "release at %u: not between the wait at %u and the max at %u",
         b.first_rel, b.wait, b.max);
  for (uint32_t j = b.wait + 1; j < b.first_rel; j++)
    CHECKF(p->code.v[j].op != T_WGMMA && p->code.v[j].op != T_MAX,
           "instruction %u between the wait and the release", j);
  CHECKF(p->code.v[b.first_rel].tag & TIR_TAG_PREV,
         "the carried ring's release is not of the previous tile");
  CHECKF(!b.untagged, "a wgmma of the loop reads a ring's slot untagged");
  /* the zero start: the first wgmma's scale-d from 0, the later ones' 1 */
  const char *ptx = NULL;
  wavec_status st = wavec_emit_ptx(c.k, "sm_90a", &ptx, NULL);
  CHECKF(st == WAVEC_OK, "PTX: %s", wavec_errmsg(c.ctx));
  if (st == WAVEC_OK) {
    int zero = 0, acc = 0;
    for (const char *w = ptx; (w = strstr(w, "wgmma.mma_async")); w++) {
      /* the mov that sets the scale-d register, the last before it */
      const char *m = NULL;
      for (const char *q = ptx; (q = strstr(q, "mov.b32 %tr")) && q < w; q++)
        m = q;
      const char *v = m ? strchr(m, ',') : NULL;
      zero += v && !strncmp(v, ", 0;", 4);
      acc += v && !strncmp(v, ", 1;", 4);
    }
    /* q kᵀ: K1 / 16 = 4 wgmmas, the first from zero; p v: BLOCK_K2 / 16
     * = 4, all accumulating */
    CHECKF(zero >= 1 && acc >= 6, "%d wgmmas from zero, %d accumulating", zero,
           acc);
  }
  /* and it still computes attention */
  uint64_t seed = 5;
  double *q = kc_input(&c, "q", &seed), *k = kc_input(&c, "k", &seed),
         *v = kc_input(&c, "v", &seed);
  double *o = malloc(256 * 64 * sizeof *o), *lse = malloc(256 * sizeof *lse);
  ref_attn_fwd(1, 256, 512, 64, 64, 0.125, 0, q, k, v, o, lse);
  bool ran = kc_simulate(&c);
  CHECKF(ran, "%s", c.err);
  if (ran) {
    double eo = kc_rel_err(&c, "o", o), el = kc_rel_err(&c, "lse", lse);
    CHECKF(eo < 1e-2 && el < 1e-3, "o %.3g lse %.3g", eo, el);
  }
  free(q), free(k), free(v), free(o), free(lse);
  kc_close(&c);
}

/* Nothing earlier to go to: the release stays at the iteration's end. */
static void left_in_place(void) {
  static const struct {
    const char *file, *kernel, *defs[8], *in[4];
  } rows[] = {
      {"examples/attention_fwd_wgmma.wave",
       "attention_fwd_wgmma",
       {"B=1", "M=128", "K2=256", "K1=64", "N=64", "stages=2", NULL},
       {"q", "k", "v", NULL}},
      {"examples/gemm_wgmma.wave",
       "gemm_wgmma",
       {"M=128", "N=128", "K=512", "stages=3", NULL},
       {"a", "b", NULL}},
  };
  for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
    kcase c;
    bool ok = kc_open(&c, rows[i].file, rows[i].kernel, NULL, rows[i].defs);
    CHECKF(ok, "row %zu: %s", i, c.err);
    if (ok) {
      const tir_prog *p = c.k->k.tir;
      body b = scan(p, main_loop(p));
      CHECKF(b.releases == 1 && b.first_rel > b.last_wgmma,
             "row %zu: %u releases, at %u, the last wgmma at %u", i, b.releases,
             b.first_rel, b.last_wgmma);
      uint64_t seed = 9;
      for (int a = 0; rows[i].in[a]; a++)
        free(kc_input(&c, rows[i].in[a], &seed));
      CHECKF(kc_simulate(&c), "row %zu: %s", i, c.err);
    }
    kc_close(&c);
  }
}

static void planted_early_release(void) {
  const char *defs[] = {
      "B=1",  "M=256",        "K2=512",   "K1=64",
      "N=64", "specialize=1", "stages=3", "hook=release-early",
      NULL};
  kcase c;
  bool ok = kc_open(&c, "examples/attention_fwd_wgmma.wave",
                    "attention_fwd_wgmma", NULL, defs);
  CHECKF(!ok && strstr(c.err, "error[E0999]") &&
             strstr(c.err, "gives back a ring's slot of the previous "
                           "iteration") &&
             strstr(c.err, "attention_fwd_wgmma.wave:27:"),
         "got: %s", ok ? "(compiled)" : c.err);
  kc_close(&c);
}

int main(void) {
  RUN(moved_in_the_forward);
  RUN(left_in_place);
  RUN(planted_early_release);
  CHECK_EXIT();
}
