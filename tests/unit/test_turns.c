/* Ping-pong (src/tir/turns.c): the consumer warpgroups of a specialized
 * kernel take turns issuing their wgmmas, in the simulator.
 *  - the attention forward, plain and causal, square and ragged, one tile
 *    a workgroup and persistent, D = 64 and 128, three ring stages and
 *    two (K2 tiles of 128, 176 and 192), with hardware(pingpong =
 *    1) and without (then no turns, and a remark that they would apply):
 *    both against float64 (o within 1e-2,
 *    lse within 1e-3), and the turns where the pass says: before the loop
 *    a pass (the last consumer's) and a wait; in the body a pass after the
 *    first group's last wgmma, before any wait, and a wait just before the
 *    carried group's first wgmma; a pass after the loop; barriers 2 and 3
 *    of 256 threads; a remark at the iterate;
 *  - none where there is nothing to overlap (a GEMM: one group an
 *    iteration) or no producer; pingpong = 1 there is E0408;
 *  - the PTX: bar.arrive after wgmma.commit_group, no commit at the wait
 *    that follows (an empty commit makes ptxas serialize the wgmmas);
 *  - with overlap = 1 (the rotated loop: q kᵀ of an iteration and p v of
 *    the one before in one section), the attention forward plain, causal
 *    and persistent against float64 as above, and the turns where the
 *    pass says (rotated_turns);
 *  - planted bugs, in both forms, caught at the .wave line: no first pass
 *    (every consumer waits for a turn: E0609 at the iterate, or at the
 *    first mma), no wait in the body (a consumer passes twice running:
 *    E0604 at the first mma, or at p v's), a pass too many after the loop
 *    (E0604: the turns do not balance). */
#include <stdlib.h>
#include <string.h>

#include "../ref/kcase.c"
#include "../ref/ref.c"
#include "check.h"
#include "passes/dist.h"
#include "tir/tir.h"
#include "wavec.h"

static int cases_run;

/* The instructions of a program that hold turns, in order. */
typedef struct turn_pos {
  uint32_t pre_pass, pre_wait, loop, body_pass, first_wait, body_wait,
      carried, end, post_pass;
  int waits, passes, bars_ok;
} turn_pos;

static turn_pos find_turns(const tir_prog *p) {
  turn_pos t = {0};
  uint32_t loop = 0;
  for (uint32_t i = 0; i < p->code.n; i++) {
    const tir_instr *in = &p->code.v[i];
    if (in->op == T_TURNWAIT || in->op == T_TURNPASS) {
      t.waits += in->op == T_TURNWAIT;
      t.passes += in->op == T_TURNPASS;
      t.bars_ok += in->imm2 == 256;
      if (in->op == T_TURNPASS && !loop)
        t.pre_pass = i;
      else if (in->op == T_TURNWAIT && !loop)
        t.pre_wait = i;
      else if (in->op == T_TURNPASS && loop && !t.end)
        t.body_pass = i;
      else if (in->op == T_TURNWAIT && loop && !t.end)
        t.body_wait = i;
      else if (in->op == T_TURNPASS && t.end)
        t.post_pass = i;
    }
    if (in->op == T_LOOP && t.pre_wait && !loop)
      loop = t.loop = i;
    if (loop && !t.end && in->op == T_WGWAIT && in->imm == 0 && !t.first_wait)
      t.first_wait = i;
    if (loop && !t.end && in->op == T_WGMMA && t.body_wait && !t.carried)
      t.carried = i;
    if (loop && in->op == T_ENDLOOP && in->match == loop)
      t.end = i;
  }
  return t;
}

/* The rotated form (overlap = 1): in each loop with turns, no wait
 * before it but a conditional pass; in the body the wait after the ring's
 * wait and before the first wgmma, the pass right after the moved group's
 * last wgmma and before the partial wait; after the loop a wait and a
 * conditional pass around the last iteration's group. NULL or what is
 * wrong. */
static const char *rotated_turns(const tir_prog *p) {
  int loops = 0;
  for (uint32_t i = 0; i < p->code.n; i++) {
    if (p->code.v[i].op != T_LOOP)
      continue;
    uint32_t e = p->code.v[i].match;
    if (i == 0 || p->code.v[i - 1].op != T_TURNPASS || !p->code.v[i - 1].b)
      continue;
    loops++;
    uint32_t mbwait = 0, wait = 0, first = 0, pass = 0, partial = 0;
    for (uint32_t j = i + 1; j < e; j++) {
      const tir_instr *in = &p->code.v[j];
      if (in->op == T_MBWAIT && !mbwait)
        mbwait = j;
      if (in->op == T_TURNWAIT && !wait)
        wait = j;
      if (in->op == T_WGMMA && !first)
        first = j;
      if (in->op == T_TURNPASS && !pass)
        pass = j;
      if (in->op == T_WGWAIT && in->imm == 1 && pass && !partial)
        partial = j;
    }
    if (!(mbwait && mbwait < wait && wait < first))
      return "the body's wait is not between the ring's wait and the "
             "first wgmma";
    if (!(pass && p->code.v[pass - 1].op == T_WGMMA && partial &&
          p->code.v[pass].b == 0))
      return "the body's pass is not after the moved group, before the "
             "partial wait";
    uint32_t ew = 0, ep = 0, mma = 0;
    for (uint32_t j = e + 1; j < p->code.n && !ep; j++) {
      const tir_instr *in = &p->code.v[j];
      if (in->op == T_TURNWAIT && !ew)
        ew = j;
      if (in->op == T_WGMMA && ew && !mma)
        mma = j;
      if (in->op == T_TURNPASS)
        ep = j;
    }
    if (!(ew && mma && ep > mma && p->code.v[ep].b != 0))
      return "no wait and conditional pass around the group after the loop";
  }
  return loops ? NULL : "no loop with a pass before it";
}

/* The attention forward with and without turns, against float64. */
static void attention(void) {
  uint64_t rng = 71;
  static const struct {
    const char *kernel;
    int n, d, block_k2;
    const char *extra;
    int stages;
  } rows[] = {
      {"attention_fwd_wgmma", 256, 128, 128, NULL, 3},
      {"attention_fwd_wgmma_causal", 256, 128, 64, NULL, 3},
      {"attention_fwd_wgmma", 200, 64, 64, NULL, 3},
      {"attention_fwd_wgmma_causal", 200, 64, 128, "persistent=1", 3},
      {"attention_fwd_wgmma", 328, 64, 64, "persistent=1", 3},
      {"attention_fwd_wgmma", 256, 128, 128, "overlap=1", 3},
      {"attention_fwd_wgmma_causal", 200, 64, 64, "overlap=1", 3},
      {"attention_fwd_wgmma", 200, 128, 64, "overlap=1", 3},
      {"attention_fwd_wgmma_causal", 328, 64, 128, "persistent=1,overlap=1", 3},
      /* two stages: the producer refills the carried group's slot once
       * it retires (K2 tiles of 176 and 192 keys, the last one masked) */
      {"attention_fwd_wgmma", 456, 128, 176, NULL, 2},
      {"attention_fwd_wgmma_causal", 200, 128, 192, "overlap=1", 2},
      {"attention_fwd_wgmma", 328, 64, 128, "persistent=1,overlap=1", 2},
  };
  for (size_t i = 0; i < sizeof rows / sizeof *rows; i++)
    for (int pp = 1; pp >= 0; pp--) {
      char m[32], k2[32], d1[32], d2[32], bk[32], st[32];
      snprintf(m, sizeof m, "M=%d", rows[i].n);
      snprintf(k2, sizeof k2, "K2=%d", rows[i].n);
      snprintf(d1, sizeof d1, "K1=%d", rows[i].d);
      snprintf(d2, sizeof d2, "N=%d", rows[i].d);
      snprintf(bk, sizeof bk, "BLOCK_K2=%d", rows[i].block_k2);
      snprintf(st, sizeof st, "stages=%d", rows[i].stages);
      /* (an extra of two knobs: a comma between them) */
      char extra[64] = "", *more = NULL;
      if (rows[i].extra) {
        snprintf(extra, sizeof extra, "%s", rows[i].extra);
        more = strchr(extra, ',');
        if (more)
          *more++ = '\0';
      }
      bool rot = rows[i].extra && strstr(rows[i].extra, "overlap=1");
      const char *defs[] = {"B=2", m, k2, d1, d2, bk, "specialize=1",
                            st, "sms=3",
                            pp ? "pingpong=1" : "sms=3",
                            rows[i].extra ? extra : NULL, more, NULL};
      kcase c;
      bool ok = kc_open(&c, "examples/attention_fwd_wgmma.wave",
                        rows[i].kernel, NULL, defs);
      CHECKF(ok, "%s: %s", rows[i].kernel, c.err);
      if (!ok) {
        kc_close(&c);
        continue;
      }
      const tir_prog *p = c.k->k.tir;
      turn_pos t = find_turns(p);
      if (pp && rot) {
        const char *bad = rotated_turns(p);
        CHECKF(t.waits >= 2 && t.waits * 3 == t.passes * 2 &&
                   t.bars_ok == t.waits + t.passes && !bad,
               "row %zu: %d waits, %d passes: %s", i, t.waits, t.passes,
               bad ? bad : "");
        CHECKF(kc_has_remark(c.k, "previous iteration's last (overlap)"),
               "row %zu: no remark", i);
      } else if (pp) {
        /* two waits and three passes a loop (the causal forward has two
         * loops: the tiles the mask misses and those it crosses) */
        CHECKF(t.waits >= 2 && t.waits * 3 == t.passes * 2 &&
                   t.bars_ok == t.waits + t.passes &&
                   (t.waits == 2) == !strstr(rows[i].kernel, "causal"),
               "row %zu: %d waits, %d passes", i, t.waits, t.passes);
        CHECKF(t.pre_pass && t.pre_pass < t.pre_wait && t.pre_wait < t.loop &&
                   p->code.v[t.pre_pass].b != 0,
               "row %zu: no conditional pass and wait before the loop", i);
        CHECKF(t.body_pass && t.first_wait && t.body_pass < t.first_wait &&
                   p->code.v[t.body_pass - 1].op == T_WGMMA &&
                   p->code.v[t.body_pass].b == 0,
               "row %zu: the body's pass is not after the first group", i);
        CHECKF(t.body_wait && t.carried == t.body_wait + 1,
               "row %zu: the body's wait is not before the carried group", i);
        CHECKF(t.post_pass > t.end && p->code.v[t.post_pass].b != 0,
               "row %zu: no conditional pass after the loop", i);
        CHECKF(kc_has_remark(c.k, "ping-pong: the 2 consumer warpgroups take "
                              "turns"),
               "row %zu: no remark", i);
      } else {
        CHECKF(t.waits == 0 && t.passes == 0 &&
                   kc_has_remark(c.k, "ping-pong: not chosen"),
               "row %zu: turns without pingpong = 1, or no remark", i);
      }
      int b = 2, n = rows[i].n, d = rows[i].d;
      double *q = kc_input(&c, "q", &rng), *k = kc_input(&c, "k", &rng),
             *v = kc_input(&c, "v", &rng);
      double *o = malloc((size_t)b * n * d * sizeof *o),
             *lse = malloc((size_t)b * n * sizeof *lse);
      ref_attn_fwd(b, n, n, d, d, 0.125,
                   strstr(rows[i].kernel, "causal") ? REF_CAUSAL : 0, q, k, v,
                   o, lse);
      bool ran = kc_simulate(&c);
      CHECKF(ran, "row %zu pingpong %d: %s", i, pp, c.err);
      if (ran) {
        double eo = kc_rel_err(&c, "o", o), el = kc_rel_err(&c, "lse", lse);
        CHECKF(eo < 1e-2 && el < 1e-3, "row %zu pingpong %d: o %.3g lse %.3g",
               i, pp, eo, el);
        cases_run++;
      }
      free(q), free(k), free(v), free(o), free(lse);
      kc_close(&c);
    }
}

/* The PTX of the turns: the pass in the body commits the group first, and
 * the wait after it commits nothing. */
static void ptx(void) {
  const char *defs[] = {"B=1", "M=256", "K2=256", "K1=128", "N=128",
                        "BLOCK_K2=128", "stages=3", "pingpong=1", NULL};
  kcase c;
  bool ok = kc_open(&c, "examples/attention_fwd_wgmma.wave",
                    "attention_fwd_wgmma", NULL, defs);
  CHECKF(ok, "%s", c.err);
  if (ok) {
    size_t len = 0;
    const char *ptx = NULL;
    wavec_status st = wavec_emit_ptx(c.k, "sm_90a", &ptx, &len);
    CHECKF(st == WAVEC_OK, "%s", wavec_errmsg(c.ctx));
    if (st == WAVEC_OK) {
      const char *arrive = strstr(ptx, "\tbar.arrive ");
      CHECKF(arrive != NULL, "no unconditional bar.arrive");
      if (arrive) {
        /* the line before the arrive's */
        const char *line = arrive - 1;
        while (line > ptx && line[-1] != '\n')
          line--;
        CHECKF(strncmp(line, "\twgmma.commit_group", 19) == 0,
               "the line before bar.arrive: %.40s", line);
        const char *wait = strstr(arrive, "wgmma.wait_group");
        const char *commit = strstr(arrive, "wgmma.commit_group");
        CHECKF(wait && (!commit || commit > wait),
               "a commit between the pass and its wait");
      }
      CHECKF(strstr(ptx, "bar.sync %r") != NULL, "no turn wait");
    }
  }
  kc_close(&c);
}

/* Where turns do not apply: none unless asked; asked, E0408. */
static void refused(void) {
  static const struct {
    const char *file, *kernel;
    const char *defs[8];
    const char *text;
  } rows[] = {
      {"examples/gemm_wgmma.wave", "gemm_wgmma",
       {"M=256", "N=256", "K=512", "specialize=1", NULL},
       "one group of wgmmas an iteration"},
      {"examples/attention_fwd_wgmma.wave", "attention_fwd_wgmma",
       {"B=1", "M=256", "K2=256", "K1=64", "N=64", "BLOCK_K2=64", "stages=2",
        NULL},
       "no producer warpgroup"},
      {"examples/attention_fwd_wgmma.wave", "attention_fwd_wgmma",
       {"B=1", "M=256", "K2=256", "K1=64", "N=64", "BLOCK_M=64",
        "specialize=1", NULL},
       "this one has one"},
  };
  for (size_t i = 0; i < sizeof rows / sizeof *rows; i++)
    for (int ask = 0; ask < 2; ask++) {
      const char *defs[10];
      size_t n = 0;
      for (; rows[i].defs[n]; n++)
        defs[n] = rows[i].defs[n];
      defs[n++] = ask ? "pingpong=1" : NULL;
      defs[n] = NULL;
      kcase c;
      bool ok = kc_open(&c, rows[i].file, rows[i].kernel, NULL, defs);
      if (!ask) {
        CHECKF(ok, "row %zu: %s", i, c.err);
        if (ok) {
          turn_pos t = find_turns(c.k->k.tir);
          CHECKF(t.waits == 0 && t.passes == 0, "row %zu: turns", i);
        }
      } else {
        CHECKF(!ok && strstr(c.err, "error[E0408]") &&
                   strstr(c.err, "--hardware pingpong=1") &&
                   strstr(c.err, rows[i].text) && strstr(c.err, ".wave:"),
               "row %zu: got: %s", i, c.err);
      }
      kc_close(&c);
    }
}

/* Planted bugs: the simulator finds each at the line. */
static void bugs(void) {
  static const struct {
    const char *hook, *code, *text, *line, *line_rot;
  } rows[] = {
      /* (the rotated form's first wait is the body's, at the first mma;
       * its body's pass and the one after the loop follow p v's mma) */
      {"turn-no-first", "error[E0609]", "waits for its turn at barrier",
       "attention_fwd_wgmma.wave:25:17", "attention_fwd_wgmma.wave:29:13"},
      {"turn-no-wait", "error[E0604]", "passed the turn again",
       "attention_fwd_wgmma.wave:29:13", "attention_fwd_wgmma.wave:35:19"},
      {"turn-extra-pass", "error[E0604]", "the turns do not balance",
       "attention_fwd_wgmma.wave:25:17", "attention_fwd_wgmma.wave:35:19"},
  };
  for (size_t r = 0; r < 2 * (sizeof rows / sizeof *rows); r++) {
    size_t i = r % (sizeof rows / sizeof *rows);
    bool rot = r >= sizeof rows / sizeof *rows; /* the overlap form */
    char hook[64];
    snprintf(hook, sizeof hook, "hook=%s", rows[i].hook);
    const char *defs[] = {"B=1", "M=256", "K2=256", "K1=64", "N=64",
                          "BLOCK_K2=64", "specialize=1", "stages=3",
                          "pingpong=1", hook, rot ? "overlap=1" : NULL,
                          NULL};
    kcase c;
    bool ok = kc_open(&c, "examples/attention_fwd_wgmma.wave",
                      "attention_fwd_wgmma", NULL, defs);
    CHECKF(ok, "%s: %s", rows[i].hook, c.err);
    if (ok) {
      uint64_t rng = 5;
      free(kc_input(&c, "q", &rng));
      free(kc_input(&c, "k", &rng));
      free(kc_input(&c, "v", &rng));
      bool ran = kc_simulate(&c);
      CHECKF(!ran && strstr(c.err, rows[i].code) &&
                 strstr(c.err, rows[i].text) &&
                 strstr(c.err, rot ? rows[i].line_rot : rows[i].line),
             "%s%s: got: %s", rows[i].hook, rot ? " (overlap)" : "",
             ran ? "(ran)" : c.err);
    }
    kc_close(&c);
  }
}

int main(void) {
  RUN(attention);
  RUN(ptx);
  RUN(refused);
  RUN(bugs);
  printf("  %d cases simulated against float64\n", cases_run);
  CHECK_EXIT();
}
