/* Pass `waits`. require: lower. Inserts the full wgmma waits (T_WGWAIT 0):
 * while wgmmas are in flight, before the first other instruction that
 * touches their registers and before any barrier (but one that orders only
 * a scratch region, tir.h), loop or region boundary,
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

/* The registers wgmmas in flight use, by group: a group is the wgmmas
 * between two closes (a T_WGCOMMIT, a wait); closed counts the closed ones
 * (their numbers 0 .. closed - 1), open says the one after them has a
 * wgmma. */
typedef struct inflight {
  wavec_ctx *ctx;
  const tir_prog *p; /* the program the instructions are of */
  VEC(uint32_t) reg; /* by register: 1 + its newest group's number, or 0 */
  uint32_t n;       /* registers in flight */
  uint32_t closed;
  bool open;
  bool partial;     /* a carry wait (TIR_WAIT_CARRY) precedes the end of
                       this loop */
  uint32_t depth;   /* loops open */
  bool carried_out; /* the last instruction ended a loop nested in another
                       that carried a group out */
} inflight;

static uint32_t group_of(const inflight *f, uint32_t r) {
  return r && r < f->reg.n ? f->reg.v[r] : 0;
}

/* The newest group (1 + its number; 0: none) of a register `in` reads or
 * writes (operands, result, list). */
static uint32_t newest_touched(const inflight *f, const tir_instr *in) {
  uint32_t g = 0, ops[4] = {in->dst, in->a, in->b, in->c};
  for (int e = 0; e < 4; e++)
    if (group_of(f, ops[e]) > g)
      g = group_of(f, ops[e]);
  for (uint32_t e = 0; e < in->nlist; e++)
    if (group_of(f, in->list[e]) > g)
      g = group_of(f, in->list[e]);
  return g;
}

static bool touches(const inflight *f, const tir_instr *in) {
  return newest_touched(f, in) != 0;
}

enum { NO_WAIT = -1 };

/* Does instruction x of a region need everything retired before the
 * region: a wgmma, a wait or commit, a barrier (but a scratch region's),
 * a loop or region, an exit, setmaxnreg or an arrival? */
static bool full_in_region(const tir_instr *x) {
  return x->op == T_WGMMA || x->op == T_WGWAIT || x->op == T_WGCOMMIT ||
         (x->op == T_BAR && !(x->tag & TIR_REGION_MASK)) ||
         x->op == T_LOOP || x->op == T_IF || x->op == T_EXIT ||
         x->op == T_REGINC || x->op == T_REGDEC || x->op == T_MBARRIVE;
}

/* The wait a region (T_IF at `in`, uniform across each wave) needs before
 * it: the strongest its instructions' touches of registers in flight need,
 * so that no wait inside it retires a group on one path only; a full one
 * if it issues wgmmas, or holds a barrier (but a scratch region's), loop,
 * region, exit, setmaxnreg or arrival. */
static int64_t region_wait(const inflight *f, const tir_instr *in) {
  const tir_prog *p = f->p;
  uint32_t i = (uint32_t)(in - p->code.v);
  int64_t need = NO_WAIT;
  for (uint32_t j = i + 1; j < in->match; j++) {
    const tir_instr *x = &p->code.v[j];
    if (full_in_region(x))
      return 0;
    uint32_t g = newest_touched(f, x);
    int64_t keep = g ? (int64_t)(f->closed + f->open) - g : NO_WAIT;
    if (keep != NO_WAIT && (need == NO_WAIT || keep < need))
      need = keep;
  }
  return need;
}

/* The group (1 + its number) the first instruction of region `in` (a
 * T_IF) that touches a register in flight touches; 0 where none does, or
 * where something before it needs a full wait (full_in_region). */
static uint32_t region_first_touch(const inflight *f, const tir_instr *in) {
  const tir_prog *p = f->p;
  for (uint32_t j = (uint32_t)(in - p->code.v) + 1; j < in->match; j++) {
    const tir_instr *x = &p->code.v[j];
    if (full_in_region(x))
      return 0;
    uint32_t g = newest_touched(f, x);
    if (g)
      return g;
  }
  return 0;
}

/* The wait instruction `in` needs first: NO_WAIT, or how many of the
 * newest groups may stay in flight (0: a full wait). Touching a register
 * of a group needs that group retired, and no more; everything else that
 * needs one needs a full wait. */
static int64_t wait_before(const inflight *f, const tir_instr *in) {
  if (!f->n || in->op == T_WGMMA || in->op == T_WGWAIT ||
      in->op == T_WGCOMMIT)
    return NO_WAIT;
  /* a region of a wave-uniform branch waits before it for what it touches
   * (region_wait), so nothing in flight is retired inside it; its end
   * waits only for what it issued (a path that skipped it has fewer
   * groups: a partial wait after it would count wrong) */
  if (f->p && in->op == T_IF)
    return region_wait(f, in);
  if (f->p && in->op == T_ENDIF) {
    for (uint32_t j = in->match + 1; j < (uint32_t)(in - f->p->code.v); j++)
      if (f->p->code.v[j].op == T_WGMMA)
        return 0;
    return NO_WAIT;
  }
  /* after a loop nested in another that carries a group out, at once:
   * anything between them makes ptxas serialize every wgmma (C7514) */
  /* (a barrier that orders only a scratch region, which no wgmma reads,
   * lets them run on) */
  if (f->carried_out ||
      (in->op == T_BAR && !(in->tag & TIR_REGION_MASK)) || in->op == T_LOOP ||
      in->op == T_IF || in->op == T_ENDIF || in->op == T_EXIT ||
      in->op == T_REGINC || in->op == T_REGDEC ||
      ((in->op == T_ENDLOOP || in->op == T_MBARRIVE) && !f->partial))
    return 0;
  uint32_t g = newest_touched(f, in);
  if (!g)
    return NO_WAIT;
  /* groups after g - 1 once the wait has closed the open one */
  return (int64_t)(f->closed + f->open) - g;
}

static void step(inflight *f, const tir_instr *in, int64_t w);

/* A loop whose body issues its next iteration's first groups
 * (TIR_LOOP_AHEAD, pass `ahead`): at its top, after the wait before it,
 * those groups are in flight, as the body leaves them at its carry wait
 * (an iteration walked from an empty state up to that wait, and the wait
 * applied: the newest groups it keeps). */
static void seed_ahead(inflight *f, uint32_t loop) {
  const tir_prog *p = f->p;
  uint32_t end = p->code.v[loop].match, carry = 0;
  for (uint32_t j = loop + 1; j < end; j++)
    if (p->code.v[j].op == T_WGWAIT && p->code.v[j].imm2 == TIR_WAIT_CARRY)
      carry = j;
  if (!carry)
    return;
  inflight g = {.ctx = f->ctx, .p = p};
  for (uint32_t j = loop + 1; j <= carry; j++) {
    const tir_instr *in = &p->code.v[j];
    int64_t w = j < carry ? wait_before(&g, in) : NO_WAIT;
    step(&g, in, w);
  }
  /* g's groups closed - imm + 1 .. closed become f's next ones */
  int64_t base = (int64_t)g.closed - p->code.v[carry].imm;
  for (uint32_t r = 0; r < g.reg.n; r++)
    if (g.reg.v[r]) {
      while (f->reg.n <= r)
        vec_push(f->ctx, &f->reg, 0);
      f->n += !f->reg.v[r];
      f->reg.v[r] = (uint32_t)((int64_t)f->closed + g.reg.v[r] - base);
    }
  f->closed += (uint32_t)p->code.v[carry].imm;
  f->open = false;
}

static void clear(inflight *f) {
  if (f->reg.n) /* (none yet: a wait before any wgmma) */
    memset(f->reg.v, 0, f->reg.n * sizeof *f->reg.v);
  f->n = 0;
}

/* A wait that keeps the `keep` newest groups in flight. */
static void retire(inflight *f, int64_t keep) {
  f->closed += f->open;
  f->open = false;
  if (keep == 0) {
    clear(f);
    return;
  }
  for (uint32_t r = 0; r < f->reg.n; r++)
    if (f->reg.v[r] && (int64_t)f->reg.v[r] <= (int64_t)f->closed - keep) {
      f->reg.v[r] = 0;
      f->n--;
    }
}

/* The state after instruction `in` (and the wait `w` before it, unless
 * NO_WAIT). */
static void step(inflight *f, const tir_instr *in, int64_t w) {
  if (w != NO_WAIT)
    retire(f, w);
  if (in->op == T_WGWAIT)
    retire(f, in->imm);
  if (in->op == T_WGCOMMIT) {
    f->closed += f->open;
    f->open = false;
  }
  if (in->op == T_WGWAIT && in->imm2 == TIR_WAIT_CARRY)
    f->partial = true;
  f->carried_out = false;
  if (in->op == T_LOOP)
    f->depth++;
  if (in->op == T_LOOP && in->imm2 == TIR_LOOP_AHEAD && f->p)
    seed_ahead(f, (uint32_t)(in - f->p->code.v));
  if (in->op == T_ENDLOOP) {
    f->depth--;
    f->carried_out = f->partial && f->depth > 0 && f->n;
    f->partial = false;
  }
  if (in->op != T_WGMMA)
    return;
  f->open = true;
  for (uint32_t e = 0; e < in->nlist; e++) {
    uint32_t r = in->list[e];
    while (f->reg.n <= r)
      vec_push(f->ctx, &f->reg, 0);
    f->n += !f->reg.v[r];
    f->reg.v[r] = f->closed + 1;
  }
}

const tir_instr *tir_carry_blocker(wavec_ctx *ctx, const tir_prog *p,
                                   uint32_t from, bool never, bool *pending,
                                   uint32_t *tags) {
  /* the program up to its end as this pass would leave it: where the
   * first full wait at or after `from` goes, and what is in flight at the
   * end (the tags of the newest group's wgmmas) */
  inflight f = {.ctx = ctx, .p = p};
  uint32_t first_wait = p->code.n, newest = 0;
  for (uint32_t i = 0; i < p->code.n; i++) {
    const tir_instr *in = &p->code.v[i];
    int64_t w = never ? NO_WAIT : wait_before(&f, in);
    if (w == 0 && i >= from && first_wait == p->code.n)
      first_wait = i;
    if (w != NO_WAIT || in->op == T_WGWAIT || in->op == T_WGCOMMIT)
      newest = 0;
    step(&f, in, w);
    if (in->op == T_WGMMA)
      newest |= in->tag;
  }
  *pending = f.n != 0;
  *tags = f.n ? newest : 0;
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

/* Does wgmma `at` (of another accumulator than the open group's) have
 * the open group's registers touched before its own, with no full wait
 * between (a barrier, a loop or region boundary, an arrival)? Then a
 * group of its own lets the wait before that touch keep it in flight. */
static bool older_first(const inflight *f, uint32_t at) {
  const tir_prog *p = f->p;
  const tir_instr *w = &p->code.v[at];
  for (uint32_t j = at + 1; j < p->code.n; j++) {
    const tir_instr *x = &p->code.v[j];
    if (x->op == T_WGMMA)
      continue;
    bool mine = false;
    for (uint32_t e = 0; e < w->nlist && !mine; e++)
      mine = touches_reg(x, w->list[e]);
    if (mine || x->op == T_WGWAIT || x->op == T_WGCOMMIT)
      return false;
    if (newest_touched(f, x) == f->closed + 1)
      return true;
    /* a wave-uniform region whose first touch is of the open group (the
     * tensor reduces' buffer written by each warpgroup in turn) */
    if (x->op == T_IF && region_first_touch(f, x) == f->closed + 1)
      return true;
    if (wait_before(f, x) == 0)
      return false;
  }
  return false;
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
  tir_match_loops(ctx, p); /* (region_wait reads the matches) */
  inflight f = {.ctx = ctx, .p = p};
  VEC(tir_instr) code = {0};
  uint32_t last_acc = 0;
  for (uint32_t i = 0; i < p->code.n; i++) {
    const tir_instr *in = &p->code.v[i];
    int64_t w = wait_before(&f, in);
    if (w != NO_WAIT) {
      tir_instr wait = {.op = T_WGWAIT, .ty = TY_PRED, .imm = w,
                        .loc = in->loc};
      vec_push(ctx, &code, wait);
    }
    /* a wgmma of another accumulator than the open group's, where the
     * open group is touched first: the group is closed before it, so
     * that the wait for it leaves this one in flight */
    if (in->op == T_WGMMA && f.open && last_acc && in->list[0] != last_acc &&
        older_first(&f, i)) {
      tir_instr commit = {.op = T_WGCOMMIT, .ty = TY_PRED, .loc = in->loc};
      step(&f, &commit, NO_WAIT);
      vec_push(ctx, &code, commit);
    }
    if (in->op == T_WGMMA)
      last_acc = in->list[0];
    step(&f, in, w);
    vec_push(ctx, &code, *in);
  }
  if (f.n) {
    tir_instr wait = {.op = T_WGWAIT, .ty = TY_PRED,
                      .loc = code.n ? code.v[code.n - 1].loc : k->loc};
    vec_push(ctx, &code, wait);
  }
  if (code.n != p->code.n) {
    tir_install_code(ctx, p, code);
  }
  return WAVEC_OK;
}

wavec_status tir_verify_waits(wavec_ctx *ctx, const tir_prog *p) {
  /* (the planted bug of the hook wgmma-no-wait is left for the simulator
   * to find: its tests need the program to run) */
  if ((ctx->test_hooks & WV_HOOK_WGMMA_NO_WAIT) || !has_wgmma(p))
    return WAVEC_OK;
  /* no instruction needs a wait it lacks */
  inflight f = {.ctx = ctx, .p = p};
  for (uint32_t i = 0; i < p->code.n; i++) {
    const tir_instr *in = &p->code.v[i];
    if (wait_before(&f, in) != NO_WAIT)
      wv_fail(ctx, D_INTERNAL, in->loc, "thread program: instruction %u "
              "touches what a wgmma in flight uses, without a wait", i);
    step(&f, in, NO_WAIT);
  }
  if (f.n)
    wv_fail(ctx, D_INTERNAL, (wavec_loc){0}, "thread program: wgmmas still "
            "in flight at its end");
  /* a loop that carries a group into its next iteration (a partial wait
   * before its end): the next iteration touches none of the group's
   * registers before a wait that retires it (the shared bytes the group
   * reads are the ring's to protect, and the simulator's to check) */
  for (uint32_t i = 0; i < p->code.n; i++) {
    const tir_instr *end = &p->code.v[i];
    if (end->op != T_ENDLOOP || !i || p->code.v[i - 1].op != T_WGWAIT ||
        p->code.v[i - 1].imm2 != TIR_WAIT_CARRY ||
        end->imm2 == TIR_LOOP_AHEAD) /* (its top walked with them above) */
      continue;
    inflight g = {.ctx = ctx, .p = p};
    for (uint32_t j = end->match; j < i; j++)
      step(&g, &p->code.v[j], NO_WAIT);
    /* (a wait retires the carried group once it keeps fewer groups than
     * the iteration has closed: those are all newer) */
    uint32_t closed = 0;
    bool open = false;
    for (uint32_t j = end->match + 1; j < i; j++) {
      const tir_instr *in = &p->code.v[j];
      if (in->op == T_WGWAIT || in->op == T_WGCOMMIT) {
        closed += open;
        open = false;
      }
      open |= in->op == T_WGMMA;
      if (in->op == T_WGWAIT && in->imm <= (int64_t)closed)
        break;
      if (in->op != T_WGMMA && touches(&g, in))
        wv_fail(ctx, D_INTERNAL, in->loc, "thread program: instruction %u "
                "touches what the wgmmas the loop at %u carries into its next "
                "iteration use, before a wait", j, end->match);
    }
  }
  return WAVEC_OK;
}
