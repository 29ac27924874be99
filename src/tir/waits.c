/* Pass `waits`. require: lower. Inserts the full wgmma waits (T_WGWAIT 0):
 * while wgmmas are in flight, before the first other instruction that
 * touches their registers and before any barrier, loop or region boundary,
 * setmaxnreg or mbarrier arrival (the tiles they read must stay put; an arrival may
 * release a slot they read) — except, after a partial wait (T_WGWAIT n > 0,
 * which the lowering puts at the end of a loop that carries its last group
 * into the next iteration), at the loop's end and the arrivals before it;
 * and at the end of the program. Nothing else changes.
 *
 * The rule is one function (wait_before), which the lowering's carry
 * decision (tir_carry_blocker) and the verifier after this pass
 * (tir_verify_waits) use too. */
#include "tir/tir.h"

/* The registers wgmmas in flight write, since the last full wait. */
typedef struct inflight {
  wavec_ctx *ctx;
  VEC(uint8_t) reg; /* by register */
  uint32_t n;       /* registers set */
  bool partial;     /* a partial wait precedes the end of this loop */
  uint32_t depth;   /* loops open */
  bool carried_out; /* the last instruction ended a loop nested in another
                       that carried a group out */
} inflight;

static bool in_flight(const inflight *f, uint32_t r) {
  return r && r < f->reg.n && f->reg.v[r];
}

/* Does `in` read or write a register in flight (operands, result, list)? */
static bool touches(const inflight *f, const tir_instr *in) {
  if (in_flight(f, in->dst) || in_flight(f, in->a) || in_flight(f, in->b) ||
      in_flight(f, in->c))
    return true;
  for (uint32_t e = 0; e < in->nlist; e++)
    if (in_flight(f, in->list[e]))
      return true;
  return false;
}

/* Must a full wait come before instruction `in`? */
static bool wait_before(const inflight *f, const tir_instr *in) {
  if (!f->n || in->op == T_WGMMA || in->op == T_WGWAIT)
    return false;
  /* after a loop nested in another that carries a group out, at once:
   * anything between them makes ptxas serialize every wgmma (C7514) */
  return f->carried_out || in->op == T_BAR || in->op == T_LOOP ||
         in->op == T_IF ||
         in->op == T_ENDIF || in->op == T_EXIT || in->op == T_REGINC ||
         in->op == T_REGDEC ||
         ((in->op == T_ENDLOOP || in->op == T_MBARRIVE) && !f->partial) ||
         touches(f, in);
}

static void clear(inflight *f) {
  memset(f->reg.v, 0, f->reg.n);
  f->n = 0;
}

/* The state after instruction `in` (and the full wait before it, if
 * `waited`). */
static void step(inflight *f, const tir_instr *in, bool waited) {
  if (waited || (in->op == T_WGWAIT && in->imm == 0))
    clear(f);
  if (in->op == T_WGWAIT && in->imm > 0)
    f->partial = true;
  f->carried_out = false;
  if (in->op == T_LOOP)
    f->depth++;
  if (in->op == T_ENDLOOP) {
    f->depth--;
    f->carried_out = f->partial && f->depth > 0 && f->n;
    f->partial = false;
  }
  if (in->op != T_WGMMA)
    return;
  for (uint32_t e = 0; e < in->nlist; e++) {
    uint32_t r = in->list[e];
    while (f->reg.n <= r)
      vec_push(f->ctx, &f->reg, 0);
    f->n += !f->reg.v[r];
    f->reg.v[r] = 1;
  }
}

const tir_instr *tir_carry_blocker(wavec_ctx *ctx, const tir_prog *p,
                                   uint32_t from, bool never, bool *pending) {
  /* the program up to its end as this pass would leave it: where the
   * first full wait at or after `from` goes, and what is in flight at the
   * end */
  inflight f = {.ctx = ctx};
  uint32_t first_wait = p->code.n;
  for (uint32_t i = 0; i < p->code.n; i++) {
    bool w = !never && wait_before(&f, &p->code.v[i]);
    if (w && i >= from && first_wait == p->code.n)
      first_wait = i;
    step(&f, &p->code.v[i], w);
  }
  *pending = f.n != 0;
  /* the next iteration, up to that wait, against what is in flight */
  for (uint32_t i = from; i < first_wait; i++) {
    const tir_instr *in = &p->code.v[i];
    if (in->op == T_WGWAIT && in->imm == 0)
      return NULL;
    if (in->op == T_WGMMA)
      continue;
    if (in->op == T_LOOP || in->op == T_ENDLOOP || in->op == T_CPA)
      return in;
    if (touches(&f, in))
      return in;
  }
  return NULL;
}

/* Does p issue any wgmma? (Without, there is nothing to wait for.) */
static bool has_wgmma(const tir_prog *p) {
  for (uint32_t i = 0; i < p->code.n; i++)
    if (p->code.v[i].op == T_WGMMA)
      return true;
  return false;
}

void tir_match_loops(wavec_ctx *ctx, tir_prog *p) {
  VEC(uint32_t) open = {0};
  for (uint32_t i = 0; i < p->code.n; i++) {
    if (p->code.v[i].op == T_LOOP || p->code.v[i].op == T_IF) {
      vec_push(ctx, &open, i);
    } else if (p->code.v[i].op == T_ENDLOOP || p->code.v[i].op == T_ENDIF) {
      wv_assert(ctx, open.n);
      uint32_t s = open.v[--open.n];
      p->code.v[s].match = i;
      p->code.v[i].match = s;
    }
  }
}

wavec_status wv_pass_waits(wv_kernel *k) {
  wavec_ctx *ctx = k->ctx;
  tir_prog *p = k->tir;
  /* planted bug for the tests: never wait */
  if ((ctx->test_hooks & WV_HOOK_WGMMA_NO_WAIT) || !has_wgmma(p))
    return WAVEC_OK;
  inflight f = {.ctx = ctx};
  VEC(tir_instr) code = {0};
  for (uint32_t i = 0; i < p->code.n; i++) {
    const tir_instr *in = &p->code.v[i];
    bool w = wait_before(&f, in);
    if (w) {
      tir_instr wait = {.op = T_WGWAIT, .ty = TY_PRED, .loc = in->loc};
      vec_push(ctx, &code, wait);
    }
    step(&f, in, w);
    vec_push(ctx, &code, *in);
  }
  if (f.n) {
    tir_instr wait = {.op = T_WGWAIT, .ty = TY_PRED,
                      .loc = code.n ? code.v[code.n - 1].loc : k->loc};
    vec_push(ctx, &code, wait);
  }
  if (code.n != p->code.n) {
    p->code.v = code.v;
    p->code.n = code.n;
    p->code.cap = code.cap;
    tir_match_loops(ctx, p);
  }
  return WAVEC_OK;
}

wavec_status tir_verify_waits(wavec_ctx *ctx, const tir_prog *p) {
  /* (the planted bug of the hook wgmma-no-wait is left for the simulator
   * to find: its tests need the program to run) */
  if ((ctx->test_hooks & WV_HOOK_WGMMA_NO_WAIT) || !has_wgmma(p))
    return WAVEC_OK;
  /* no instruction needs a wait it lacks */
  inflight f = {.ctx = ctx};
  for (uint32_t i = 0; i < p->code.n; i++) {
    const tir_instr *in = &p->code.v[i];
    if (wait_before(&f, in))
      wv_fail(ctx, D_INTERNAL, in->loc, "thread program: instruction %u "
              "touches what a wgmma in flight uses, without a wait", i);
    step(&f, in, false);
  }
  if (f.n)
    wv_fail(ctx, D_INTERNAL, (wavec_loc){0}, "thread program: wgmmas still "
            "in flight at its end");
  /* a loop that carries a group into its next iteration (a partial wait
   * before its end): the next iteration touches none of the group's
   * registers before a full wait (the shared bytes the group reads are the
   * ring's to protect, and the simulator's to check) */
  for (uint32_t i = 0; i < p->code.n; i++) {
    const tir_instr *end = &p->code.v[i];
    if (end->op != T_ENDLOOP || !i || p->code.v[i - 1].op != T_WGWAIT ||
        p->code.v[i - 1].imm == 0)
      continue;
    inflight g = {.ctx = ctx};
    for (uint32_t j = end->match; j < i; j++)
      step(&g, &p->code.v[j], p->code.v[j].op == T_WGWAIT &&
                                  p->code.v[j].imm == 0);
    for (uint32_t j = end->match + 1; j < i; j++) {
      const tir_instr *in = &p->code.v[j];
      if (in->op == T_WGWAIT && in->imm == 0)
        break;
      if (in->op != T_WGMMA && touches(&g, in))
        wv_fail(ctx, D_INTERNAL, in->loc, "thread program: instruction %u "
                "touches what the wgmmas the loop at %u carries into its next "
                "iteration use, before a wait", j, end->match);
    }
  }
  return WAVEC_OK;
}
