/* Pass `turns`. require: waits, schedule. Ping-pong: the consumer
 * warpgroups of a specialized kernel take turns at the tensor cores.
 *
 * A loop whose iteration issues a first group of wgmmas, waits for it,
 * works on its result in registers (attention's softmax) and ends by
 * issuing a last group that runs on into the next iteration (the carried
 * group, waits.c) spends part of each iteration on the tensor cores and
 * part off them. Left alone, the consumers drift into step: all of them
 * issue at once, then all work off the tensor cores at once, which idle.
 * With turns, the wgmmas of consumer c between its carried group and the
 * next iteration's first group (one section) are issued only after
 * consumer c - 1 issued its section (cyclically), so the sections queue on
 * the tensor cores in a fixed order and one consumer's softmax runs while
 * the others' wgmmas do.
 *
 * Barriers 2 .. 1 + C (C consumers; 0 and 1 are the workgroup's and the
 * consumers'), one per consumer, each of 256 threads: consumer c waits at
 * 2 + c (bar.sync) before a section and passes 2 + (c + 1) mod C
 * (bar.arrive, after committing the section's group) at its end:
 *   before the loop   c = C - 1 passes 2 (so that consumer 0 goes
 *                     first); every consumer waits (its first section:
 *                     the first group of iteration 0)
 *   in the body       pass after the first group's last wgmma; wait
 *                     before the carried group's first
 *   after the loop    every consumer but C - 1 passes (its last section:
 *                     the carried group of the last iteration)
 * so that each barrier is waited at and passed as often, alternately (a
 * consumer passes again only after its own wait, which needs the pass of
 * the one that waits for it). The sections are the same count for every
 * consumer: the loop's trips are the workgroup's, the same in every
 * warpgroup. A turn orders issue only; it makes no memory visible, and the
 * simulator's race checks take nothing from it.
 *
 * In a loop that overlap.c rotated (an iteration issues its first group
 * and the previous iteration's last together, then waits for the first
 * alone), a section is those two groups instead: the wait goes after the
 * iteration's ring wait, just before its first wgmma, and the pass after
 * the moved group's last; nothing waits before the loop (the first
 * section is the body's), and the last iteration's group after the loop,
 * or the if that holds it, is one more section whose pass every consumer
 * but the last makes. The counts are the same as above. Measured (run
 * jj, bench/NOTES.md v0.5.12): 3-13% slower than turns in the plain loop;
 * kept for the kernels where it gains (the backward's dq, +8%).
 *
 * Where: a specialized kernel of 2 or more consumers, loops of its
 * consumers' region whose body has no barrier and no loop of its own and
 * has both groups, when `hardware(pingpong = 1)` asks for it; given where
 * no loop qualifies, it is an error (E0408). Not the compiler's choice:
 * measured on the H100 with the toolkit's ptxas (bench/NOTES.md, v0.5.11;
 * v0.5.7's losses were the driver's compiler serializing every wgmma of
 * the kernel), turns gain 8-14% on the specialized 128x128 forward and
 * 0-20% in the backward kernels, but lose 14% on 128x64 causal tiles, and
 * the specialized kernel with turns only equals the plain one; where a
 * loop qualifies unasked, a remark says so. One remark a loop. */
#include "tir/lower.h"

enum { TURN_BAR0 = 2 }; /* 0: the workgroup's barrier; 1: the consumers' */

/* Where a loop's turns go (instruction indexes), or why it has none. */
typedef struct turn_site {
  uint32_t loop, end;
  uint32_t pass_after; /* the first group's last wgmma (rotated: the
                          moved group's) */
  uint32_t wait_before; /* the carried group's first wgmma (rotated: the
                           first group's) */
  bool rotated;         /* overlap.c's form: both groups in one section */
  uint32_t epi_wait, epi_pass; /* rotated: the last iteration's group after
                                  the loop (or the if around it) */
} turn_site;

/* The overlap form (overlap.c): an iteration issues its first group and
 * the previous iteration's last one together, then waits for the first
 * alone (wgmma.wait_group 1). Its section is those two groups, after the
 * iteration's ring wait (a late tile holds no other consumer up); after
 * the loop, the last iteration's group, or the if that holds it, is one
 * more section. NULL and *t where loop `i` has that form. */
static const char *rotated(const tir_prog *p, uint32_t i, turn_site *t) {
  uint32_t e = p->code.v[i].match, first = 0, last = 0, partial = 0;
  for (uint32_t j = i + 1; j < e; j++) {
    const tir_instr *in = &p->code.v[j];
    if (in->op == T_BAR || in->op == T_LOOP || in->op == T_IF ||
        in->op == T_TURNWAIT || in->op == T_TURNPASS)
      return "its body has a barrier, a loop or a region of its own";
    if (partial)
      continue;
    if (in->op == T_WGMMA) {
      first = first ? first : j;
      last = j;
    }
    if (in->op == T_WGWAIT && in->imm > 0 && in->imm2 != TIR_WAIT_CARRY)
      partial = j;
  }
  if (!first || !partial)
    return "its groups of wgmmas overlap within an iteration, but not as "
           "overlap.c rotates them";
  uint32_t at = 0, in_if = 0;
  for (uint32_t j = e + 1; j < p->code.n && !at; j++) {
    tir_op op = p->code.v[j].op;
    if (op == T_WGMMA)
      at = j;
    else if (op == T_IF && !in_if)
      in_if = j;
    else if (op == T_IF || op == T_LOOP || op == T_ENDLOOP ||
             op == T_BAR || op == T_ENDIF || op == T_TURNWAIT ||
             op == T_TURNPASS)
      break;
  }
  if (!at)
    return "the loop rotates its groups but no group follows it";
  uint32_t pass = at; /* the group's last wgmma: up to its wait */
  for (uint32_t j = at + 1; j < p->code.n; j++) {
    tir_op op = p->code.v[j].op;
    if (op == T_WGWAIT || op == T_WGCOMMIT || op == T_ENDIF || op == T_IF ||
        op == T_LOOP || op == T_BAR)
      break;
    if (op == T_WGMMA)
      pass = j;
  }
  *t = (turn_site){.loop = i, .end = e, .pass_after = last,
                   .wait_before = first, .rotated = true,
                   .epi_wait = in_if ? in_if : at,
                   .epi_pass = in_if ? p->code.v[in_if].match : pass};
  return NULL;
}

/* NULL and *t where loop `i` qualifies; else why not. */
static const char *qualifies(const tir_prog *p, uint32_t i, turn_site *t) {
  uint32_t e = p->code.v[i].match;
  uint32_t first_wait = 0, last_full = 0, partial = 0, last_before = 0;
  bool any = false;
  for (uint32_t j = i + 1; j < e; j++) {
    const tir_instr *in = &p->code.v[j];
    if (in->op == T_BAR || in->op == T_LOOP || in->op == T_IF ||
        in->op == T_TURNWAIT || in->op == T_TURNPASS)
      return "its body has a barrier, a loop or a region of its own";
    if (in->op == T_WGMMA) {
      any = true;
      if (!first_wait)
        last_before = j;
    }
    if (in->op == T_WGWAIT && in->imm == 0) {
      if (!first_wait)
        first_wait = j;
      last_full = j;
    }
    if (in->op == T_WGWAIT && in->imm2 == TIR_WAIT_CARRY)
      partial = j;
    else if (in->op == T_WGCOMMIT || (in->op == T_WGWAIT && in->imm > 0))
      return rotated(p, i, t);
  }
  if (!any)
    return "it issues no wgmma";
  if (!partial)
    return "no group of its wgmmas runs on into the next iteration";
  if (!first_wait || !last_before)
    return "it issues one group of wgmmas an iteration, with nothing to "
           "overlap";
  uint32_t carried = 0;
  for (uint32_t j = last_full + 1; j < partial && !carried; j++)
    if (p->code.v[j].op == T_WGMMA)
      carried = j;
  if (!carried)
    return "it issues one group of wgmmas an iteration, with nothing to "
           "overlap";
  *t = (turn_site){.loop = i, .end = e, .pass_after = last_before,
                   .wait_before = carried};
  return NULL;
}

typedef VEC(tir_instr) code_vec;

static uint32_t put(wavec_ctx *ctx, tir_prog *p, code_vec *c, tir_op op,
                    tir_ty ty, uint32_t a, uint32_t b, int64_t imm,
                    wavec_loc loc) {
  uint32_t d = tir_new_reg(ctx, p, ty);
  tir_instr in = {.op = op, .ty = ty, .dst = d, .a = a, .b = b, .imm = imm,
                  .loc = loc};
  vec_push(ctx, c, in);
  return d;
}

static void turn(wavec_ctx *ctx, code_vec *c, tir_op op, uint32_t bar,
                 uint32_t on, int64_t threads, wavec_loc loc) {
  tir_instr in = {.op = op, .ty = TY_PRED, .a = bar, .b = on,
                  .imm2 = threads, .loc = loc};
  vec_push(ctx, c, in);
}

/* The registers of a consumer's turns, computed before the loop: its own
 * barrier, the next consumer's, and whether it is the last consumer. */
typedef struct turn_regs {
  uint32_t mine, next, last, not_last;
} turn_regs;

static turn_regs consumer_regs(wavec_ctx *ctx, tir_prog *p, code_vec *c,
                               int64_t consumers, wavec_loc loc) {
  turn_regs r;
  uint32_t tid = put(ctx, p, c, T_SREG, TY_I32, 0, 0, TIR_SREG_TID_X, loc);
  uint32_t k128 = put(ctx, p, c, T_CONST, TY_I32, 0, 0, 128, loc);
  uint32_t wg = put(ctx, p, c, T_DIV, TY_I32, tid, k128, 0, loc);
  uint32_t base = put(ctx, p, c, T_CONST, TY_I32, 0, 0, TURN_BAR0, loc);
  r.mine = put(ctx, p, c, T_ADD, TY_I32, wg, base, 0, loc);
  uint32_t one = put(ctx, p, c, T_CONST, TY_I32, 0, 0, 1, loc);
  uint32_t n = put(ctx, p, c, T_CONST, TY_I32, 0, 0, consumers, loc);
  uint32_t up = put(ctx, p, c, T_ADD, TY_I32, wg, one, 0, loc);
  uint32_t wrap = put(ctx, p, c, T_MOD, TY_I32, up, n, 0, loc);
  r.next = put(ctx, p, c, T_ADD, TY_I32, wrap, base, 0, loc);
  uint32_t lastc = put(ctx, p, c, T_CONST, TY_I32, 0, 0, consumers - 1, loc);
  r.last = tir_new_reg(ctx, p, TY_PRED);
  r.not_last = tir_new_reg(ctx, p, TY_PRED);
  tir_instr eq = {.op = T_SETP, .ty = TY_I32, .dst = r.last, .a = wg,
                  .b = lastc, .imm = TIR_CMP_EQ, .loc = loc};
  tir_instr ne = eq;
  ne.dst = r.not_last;
  ne.imm = TIR_CMP_NE;
  vec_push(ctx, c, eq);
  vec_push(ctx, c, ne);
  return r;
}

static void remark(wv_kernel *k, const tir_prog *p, const turn_site *t,
                   int64_t consumers) {
  wv_buf b;
  wv_remark_start(k, p->code.v[t->loop].loc, &b);
  wv_buf_printf(&b, "ping-pong: the %lld consumer warpgroups take turns at "
                    "the tensor cores (named barriers %d to %lld): each "
                    "issues %s between its turn and the next consumer's, "
                    "so that one works off the tensor cores (the softmax) "
                    "while another's wgmmas run",
                (long long)consumers, TURN_BAR0,
                (long long)(TURN_BAR0 + consumers - 1),
                t->rotated ? "an iteration's first wgmmas and the previous "
                             "iteration's last (overlap), after the ring's "
                             "wait,"
                           : "an iteration's last wgmmas and the next "
                             "iteration's first");
  wv_remark_end(k, &b);
}

wavec_status wv_pass_turns(wv_kernel *k) {
  wavec_ctx *ctx = k->ctx;
  lw *w = k->lw;
  tir_prog *p = k->tir;
  const sched_plan *s = &w->sched;
  wavec_loc at;
  int64_t knob = lw_knob(k, WAVEC_HW_PINGPONG, &at);
  if (knob == 0)
    return WAVEC_OK;
  bool asked = knob > 0;
  if (!s->specialize || s->consumers < 2) {
    if (asked)
      wv_fail(ctx, D_SCHEDULE, at, "%s: turns need a "
              "specialized kernel (hardware(specialize = 1)) of two or more "
              "consumer warpgroups; this one has %s",
              lw_knob_text(k, WAVEC_HW_PINGPONG, 1),
              s->specialize ? "one" : "no producer warpgroup");
    return WAVEC_OK;
  }
  VEC(turn_site) sites = {0};
  const char *why = "it has no loop";
  for (uint32_t i = 0; i < p->code.n; i++) {
    if (p->code.v[i].op != T_LOOP)
      continue;
    turn_site t;
    const char *no = qualifies(p, i, &t);
    if (no)
      why = no;
    else
      vec_push(ctx, &sites, t);
  }
  if (!sites.n) {
    if (asked)
      wv_fail(ctx, D_SCHEDULE, at, "%s: no loop of the "
              "consumers has wgmmas to take turns at: %s",
              lw_knob_text(k, WAVEC_HW_PINGPONG, 1), why);
    return WAVEC_OK;
  }
  if (!asked) {
    wv_buf b;
    wv_remark_start(k, p->code.v[sites.v[0].loop].loc, &b);
    wv_buf_puts(&b, "ping-pong: not chosen: the consumer warpgroups could "
                    "take turns at the tensor cores here; measured, turns "
                    "gain on 128-key tiles and in the attention backward "
                    "and lose on 64-key causal tiles (hardware(pingpong = "
                    "1) asks for them)");
    wv_remark_end(k, &b);
    return WAVEC_OK;
  }
  int64_t threads = 256; /* the waiting consumer's and the passing one's */
  code_vec code = {0};
  uint32_t next_site = 0;
  turn_regs r = {0};
  for (uint32_t i = 0; i < p->code.n; i++) {
    const turn_site *t = next_site < sites.n ? &sites.v[next_site] : NULL;
    const tir_instr *in = &p->code.v[i];
    if (t && i == t->loop) {
      r = consumer_regs(ctx, p, &code, s->consumers, in->loc);
      /* planted bugs for the tests: no first pass (nobody starts); every
       * consumer passes after the loop (one pass too many); no wait in
       * the body (a consumer passes twice running) */
      if (!(ctx->test_hooks & WV_HOOK_TURN_NO_FIRST))
        turn(ctx, &code, T_TURNPASS, r.next, r.last, threads, in->loc);
      if (!t->rotated) /* (rotated: the first section is in the body) */
        turn(ctx, &code, T_TURNWAIT, r.mine, 0, threads, in->loc);
    }
    if (t && i == t->wait_before && !(ctx->test_hooks & WV_HOOK_TURN_NO_WAIT))
      turn(ctx, &code, T_TURNWAIT, r.mine, 0, threads, in->loc);
    if (t && t->rotated && i == t->epi_wait)
      turn(ctx, &code, T_TURNWAIT, r.mine, 0, threads, in->loc);
    vec_push(ctx, &code, *in);
    if (t && i == t->pass_after)
      turn(ctx, &code, T_TURNPASS, r.next, 0, threads, in->loc);
    if (t && t->rotated && i == t->epi_pass) {
      /* every consumer but the last: the last one's pass is the one
       * before the loop */
      turn(ctx, &code, T_TURNPASS, r.next,
           (ctx->test_hooks & WV_HOOK_TURN_EXTRA_PASS) ? 0 : r.not_last,
           threads, in->loc);
      remark(k, p, t, s->consumers);
      next_site++;
    }
    if (t && !t->rotated && i == t->end) {
      /* after the wait that follows the loop, where there is one: nothing
       * may come between a loop that carries a group out and that wait
       * (waits.c) */
      if (i + 1 < p->code.n && p->code.v[i + 1].op == T_WGWAIT &&
          p->code.v[i + 1].imm == 0)
        vec_push(ctx, &code, p->code.v[++i]);
      turn(ctx, &code, T_TURNPASS, r.next,
           (ctx->test_hooks & WV_HOOK_TURN_EXTRA_PASS) ? 0 : r.not_last,
           threads, in->loc);
      remark(k, p, t, s->consumers);
      next_site++;
    }
  }
  tir_install_code(ctx, p, code);
  return WAVEC_OK;
}

/* What turns promises: every T_TURNWAIT has as many T_TURNPASS on its
 * barrier register's loop (the same count of each kind in the program),
 * and no turn sits in a loop nested in the loop it serves. */
wavec_status wv_verify_turns(wv_kernel *k) {
  const tir_prog *p = k->tir;
  int64_t waits = 0, passes = 0;
  for (uint32_t i = 0; i < p->code.n; i++) {
    waits += p->code.v[i].op == T_TURNWAIT;
    passes += p->code.v[i].op == T_TURNPASS;
  }
  if (k->ctx->test_hooks & (WV_HOOK_TURN_NO_FIRST | WV_HOOK_TURN_NO_WAIT))
    return WAVEC_OK; /* (planted bugs: the simulator's to find) */
  if (waits * 3 != passes * 2)
    wv_fail(k->ctx, D_INTERNAL, k->loc, "turns: %lld waits and %lld passes "
            "(two waits and three passes a loop)", (long long)waits,
            (long long)passes);
  return WAVEC_OK;
}
