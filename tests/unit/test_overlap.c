/* Overlap (src/tir/overlap.c): a loop's carried group of wgmmas issued in
 * the next iteration right after that one's first group, in the simulator.
 *  - the attention forward, plain and specialized, causal (two loops),
 *    ragged and persistent, D = 64 and 128, and both backward kernels,
 *    with hardware(overlap = 1) and without: the outputs bit for bit the
 *    same (the same arithmetic in the same order, plus exact zeros), the
 *    forward against float64 too; the shape where the pass says (shape()):
 *    in the forward, the carried group retired at the top of the next
 *    iteration (o's rescale and p's copy moved there), in the backward
 *    by M's own full wait; the group again after the loop; a remark at the
 *    iterate (without it: none of this and a remark that it would apply);
 *  - the PTX: wgmma.commit_group between the groups, wgmma.wait_group 1;
 *  - none where there is nothing to overlap (a GEMM: one group an
 *    iteration; 2 stages: nothing carried) or where the carried group's
 *    address depends on the work between the groups (dq at a ragged size);
 *    overlap = 1 there is E0408;
 *  - planted bugs: nothing zeroed before the loop (the first iteration's
 *    group reads registers nothing wrote: E0602 at the mma's line), no
 *    copy of the slot's address (each group reads the next tile: the
 *    output is wrong, which the float64 comparison sees). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../ref/kcase.c"
#include "../ref/ref.c"
#include "check.h"
#include "passes/dist.h"
#include "tir/tir.h"
#include "wavec.h"

static int cases_run;

/* The overlap's shape in the first rotated loop of p: 1 if it is there
 * as the pass says with M waiting for the carried group, 2 with the top of
 * the next iteration waiting for it, 0 if there is no commit at all, -1 if
 * it is wrong. In the loop a commit right after the first group's last wgmma, then the
 * carried group, a partial wait (1) before the first other touch of the
 * first group's registers; then either a full wait before the loop's end
 * (M touches the carried group's registers) or none, the carried group
 * retired by a full wait at the top of the next iteration (before the
 * commit) and a carry wait before the end; the group again after the loop. */
static int shape(const tir_prog *p) {
  uint32_t loop = 0, commit = 0, partial = 0, full = 0, end = 0, after = 0;
  int carry = 0, d_in = 0, top = 0;
  for (uint32_t i = 0; i < p->code.n; i++) {
    const tir_instr *in = &p->code.v[i];
    if (in->op == T_WGCOMMIT && !commit) {
      commit = i;
      for (loop = i; loop && p->code.v[loop].op != T_LOOP; loop--)
        ;
      end = p->code.v[loop].match;
      for (uint32_t j = loop + 1; j < commit; j++)
        top += p->code.v[j].op == T_WGWAIT && p->code.v[j].imm == 0;
    }
    if (!commit || i <= commit)
      continue;
    if (i < end) {
      carry += in->op == T_WGWAIT && in->imm2 == TIR_WAIT_CARRY;
      d_in += in->op == T_WGMMA && !partial;
      if (in->op == T_WGWAIT && in->imm == 1 && !in->imm2 && !partial)
        partial = i;
      if (in->op == T_WGWAIT && in->imm == 0 && partial && !full)
        full = i;
    } else if (in->op == T_WGMMA && !after) {
      after = i;
    }
  }
  if (!commit)
    return 0;
  bool in_m = full > partial && !carry;                   /* M waits */
  bool deep = !full && top == 1 && carry == 1 &&          /* next top waits */
              p->code.v[end - 1].op == T_WGWAIT &&
              p->code.v[end - 1].imm2 == TIR_WAIT_CARRY;
  if (p->code.v[commit - 1].op != T_WGMMA || !d_in || !partial ||
      after <= end)
    return -1;
  return deep ? 2 : in_m ? 1 : -1;
}

static void fill(kcase *c, const char *const *names, uint64_t seed,
                 double **x) {
  for (int i = 0; names[i]; i++)
    x[i] = kc_input(c, names[i], &seed);
}

/* Each kernel with and without overlap: the same bits. */
static void kernels(void) {
  static const struct {
    const char *file, *kernel;
    const char *defs[12];
    const char *in[7], *out[3];
    int fwd; /* 1: against float64 too (n, d from M and K1) */
    int n, d, rotated;
  } rows[] = {
      {"examples/attention_fwd_wgmma.wave", "attention_fwd_wgmma",
       {"B=2", "M=200", "K2=200", "K1=64", "N=64", "stages=3", NULL},
       {"q", "k", "v", NULL}, {"o", "lse", NULL}, 1, 200, 64, 1},
      {"examples/attention_fwd_wgmma.wave", "attention_fwd_wgmma",
       {"B=2", "M=256", "K2=256", "K1=128", "N=128", "specialize=1",
        "stages=3", NULL},
       {"q", "k", "v", NULL}, {"o", "lse", NULL}, 1, 256, 128, 1},
      {"examples/attention_fwd_wgmma.wave", "attention_fwd_wgmma_causal",
       {"B=2", "M=300", "K2=300", "K1=64", "N=64", "specialize=1",
        "stages=4", NULL},
       {"q", "k", "v", NULL}, {"o", "lse", NULL}, 2, 300, 64, 2},
      {"examples/attention_fwd_wgmma.wave", "attention_fwd_wgmma",
       {"B=3", "M=256", "K2=256", "K1=64", "N=64", "BLOCK_K2=128",
        "specialize=1", "persistent=1", "sms=2", "stages=3", NULL},
       {"q", "k", "v", NULL}, {"o", "lse", NULL}, 1, 256, 64, 1},
      {"examples/attention_bwd_wgmma.wave", "attention_bwd_dkdv_wgmma",
       {"B=1", "M=256", "K2=256", "K1=64", "N=64", "specialize=1",
        "stages=3", NULL},
       {"q", "k", "v", "do", "lse", "D", NULL}, {"dk", "dv", NULL}, 0, 0, 0,
       1},
      {"examples/attention_bwd_wgmma.wave", "attention_bwd_dq_wgmma",
       {"B=1", "M=256", "K2=256", "K1=128", "N=128", "specialize=1",
        "stages=3", NULL},
       {"q", "k", "v", "do", "lse", "D", NULL}, {"dq", NULL}, 0, 0, 0, 1},
  };
  for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
    double *outs[2][2] = {{NULL}};
    size_t elems[2] = {0};
    for (int ov = 0; ov < 2; ov++) {
      const char *defs[14];
      size_t n = 0;
      for (; rows[i].defs[n]; n++)
        defs[n] = rows[i].defs[n];
      /* (without overlap, in program order: the shape checked is the
       * pass's, not the early mmas' groups) */
      defs[n++] = ov ? "overlap=1" : "early_mma=0";
      defs[n] = NULL;
      kcase c;
      bool ok = kc_open(&c, rows[i].file, rows[i].kernel, NULL, defs);
      CHECKF(ok, "row %zu overlap %d: %s", i, ov, c.err);
      if (!ok) {
        kc_close(&c);
        continue;
      }
      const tir_prog *p = c.k->k.tir;
      int commits = 0;
      for (uint32_t j = 0; j < p->code.n; j++)
        commits += p->code.v[j].op == T_WGCOMMIT;
      if (ov)
        /* the forward's M rescales o and writes p: both move to the top
         * of the next iteration; the backward's M has wgmmas of its own */
        CHECKF(shape(p) == (rows[i].fwd ? 2 : 1) &&
                   commits == rows[i].rotated &&
                   kc_has_remark(c.k, "overlap: each iteration issues the "
                                  "previous one's last wgmmas"),
               "row %zu: shape %d, %d commits", i, shape(p), commits);
      else
        CHECKF(commits == 0 && kc_has_remark(c.k, "overlap: not chosen"),
               "row %zu: overlap without overlap = 1, or no remark", i);
      double *in[7] = {NULL};
      fill(&c, rows[i].in, 11, in);
      double *o = NULL, *lse = NULL;
      if (rows[i].fwd) {
        int b = strstr(rows[i].defs[0], "3") ? 3 : 2;
        o = malloc((size_t)b * rows[i].n * rows[i].d * sizeof *o);
        lse = malloc((size_t)b * rows[i].n * sizeof *lse);
        ref_attn_fwd(b, rows[i].n, rows[i].n, rows[i].d, rows[i].d, 0.125,
                     rows[i].fwd == 2 ? REF_CAUSAL : 0, in[0], in[1], in[2],
                     o, lse);
      }
      bool ran = kc_simulate(&c);
      CHECKF(ran, "row %zu overlap %d: %s", i, ov, c.err);
      if (ran) {
        for (int k = 0; k < 2 && rows[i].out[k]; k++) {
          outs[ov][k] = kc_output(&c, rows[i].out[k]);
          elems[k] = c.info[kc_arg(&c, rows[i].out[k])].elems;
        }
        if (o) {
          double eo = kc_rel_err(&c, "o", o), el = kc_rel_err(&c, "lse", lse);
          CHECKF(eo < 1e-2 && el < 1e-3, "row %zu overlap %d: o %.3g lse %.3g",
                 i, ov, eo, el);
        }
        cases_run++;
      }
      for (int k = 0; k < 7; k++)
        free(in[k]);
      free(o), free(lse);
      kc_close(&c);
    }
    for (int k = 0; k < 2; k++) {
      if (!outs[0][k] || !outs[1][k]) {
        free(outs[0][k]), free(outs[1][k]);
        continue;
      }
      size_t diff = 0;
      for (size_t e = 0; e < elems[k]; e++)
        diff += memcmp(&outs[0][k][e], &outs[1][k][e], sizeof(double)) != 0;
      CHECKF(diff == 0, "row %zu %s: %zu of %zu elements differ", i,
             rows[i].out[k], diff, elems[k]);
      free(outs[0][k]), free(outs[1][k]);
    }
  }
}

/* The PTX: a commit between the groups, then a wait for all but one. */
static void ptx(void) {
  const char *defs[] = {"B=1", "M=256", "K2=256", "K1=64", "N=64",
                        "stages=3", "overlap=1", NULL};
  kcase c;
  bool ok = kc_open(&c, "examples/attention_fwd_wgmma.wave",
                    "attention_fwd_wgmma", NULL, defs);
  CHECKF(ok, "%s", c.err);
  if (ok) {
    const char *ptx = NULL;
    wavec_status st = wavec_emit_ptx(c.k, "sm_90a", &ptx, NULL);
    CHECKF(st == WAVEC_OK, "%s", wavec_errmsg(c.ctx));
    if (st == WAVEC_OK) {
      const char *commit = strstr(ptx, "\twgmma.commit_group.sync.aligned;\n"
                                       "\t"),
                 *next = commit ? strstr(commit + 1, "wgmma.mma_async") : NULL,
                 *wait1 = next ? strstr(next, "wgmma.wait_group.sync.aligned 1;")
                               : NULL;
      CHECKF(commit && next && wait1, "no commit, then wgmmas, then wait 1");
    }
  }
  kc_close(&c);
}

/* Where it does not apply: none unless asked; asked, E0408. */
static void refused(void) {
  static const struct {
    const char *file, *kernel;
    const char *defs[8];
    const char *text;
  } rows[] = {
      {"examples/gemm_wgmma.wave", "gemm_wgmma",
       {"M=256", "N=256", "K=512", NULL}, "one group of wgmmas an iteration"},
      /* the tile's edge mask, computed between the groups, feeds the
       * address of the carried group: the first iteration could not run
       * it as the original would */
      {"examples/attention_bwd_wgmma.wave", "attention_bwd_dq_wgmma",
       {"B=1", "M=200", "K2=200", "K1=128", "N=128", "specialize=1",
        "stages=3", NULL},
       "writes an address its last wgmmas read"},
      {"examples/attention_fwd_wgmma.wave", "attention_fwd_wgmma",
       {"B=1", "M=256", "K2=256", "K1=64", "N=64", "stages=2", NULL},
       "its last wgmmas do not run on"},
  };
  for (size_t i = 0; i < sizeof rows / sizeof *rows; i++)
    for (int ask = 0; ask < 2; ask++) {
      const char *defs[10];
      size_t n = 0;
      for (; rows[i].defs[n]; n++)
        defs[n] = rows[i].defs[n];
      defs[n++] = ask ? "overlap=1" : "early_mma=0";
      defs[n] = NULL;
      kcase c;
      bool ok = kc_open(&c, rows[i].file, rows[i].kernel, NULL, defs);
      if (!ask) {
        CHECKF(ok && shape(c.k->k.tir) == 0 &&
                   !kc_has_remark(c.k, "overlap:"),
               "row %zu: %s", i, ok ? "an overlap or a remark" : c.err);
      } else {
        CHECKF(!ok && strstr(c.err, "error[E0408]") &&
                   strstr(c.err, "--hardware overlap=1") &&
                   strstr(c.err, rows[i].text) && strstr(c.err, ".wave:"),
               "row %zu: got: %s", i, c.err);
      }
      kc_close(&c);
    }
}

/* Planted bugs: each is caught. */
static void bugs(void) {
  const char *defs[] = {"B=1", "M=256", "K2=256", "K1=64", "N=64",
                        "stages=3", "overlap=1", NULL, NULL};
  for (int bug = 0; bug < 2; bug++) {
    defs[7] = bug ? "hook=overlap-no-copy" : "hook=overlap-no-zero";
    kcase c;
    bool ok = kc_open(&c, "examples/attention_fwd_wgmma.wave",
                      "attention_fwd_wgmma", NULL, defs);
    CHECKF(ok, "%s: %s", defs[7], c.err);
    if (ok) {
      uint64_t rng = 5;
      double *q = kc_input(&c, "q", &rng), *k = kc_input(&c, "k", &rng),
             *v = kc_input(&c, "v", &rng);
      double *o = malloc(256 * 64 * sizeof *o), *lse = malloc(256 * sizeof *lse);
      ref_attn_fwd(1, 256, 256, 64, 64, 0.125, 0, q, k, v, o, lse);
      bool ran = kc_simulate(&c);
      if (!bug)
        CHECKF(!ran && strstr(c.err, "error[E0602]") &&
                   strstr(c.err, "attention_fwd_wgmma.wave:35:19"),
               "no-zero: got: %s", ran ? "(ran)" : c.err);
      else
        CHECKF(ran && kc_rel_err(&c, "o", o) > 0.1,
               "no-copy: %s", ran ? "the output is right" : c.err);
      free(q), free(k), free(v), free(o), free(lse);
    }
    kc_close(&c);
  }
}

int main(void) {
  RUN(kernels);
  RUN(ptx);
  RUN(refused);
  RUN(bugs);
  printf("  %d cases simulated (with and without overlap)\n", cases_run);
  CHECK_EXIT();
}
