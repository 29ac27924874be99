/* Pass `ahead`. require: lower (before waits). A loop whose iteration
 * opens with a group of wgmmas that reads only its ring slot and what the
 * loop does not change (the one-pass backward's s = k qᵀ and dp = v doᵀ)
 * issues that group for iteration j + 1 at the end of iteration j, right
 * after j's last wgmma, so that it runs on the tensor cores while j
 * finishes (the dq tile's staging, its barrier, the release) and the top
 * of j + 1 finds it done or nearly.
 *
 * The iteration is
 *     H (the head: the slot's full wait, integer arithmetic, the
 *        accumulators zeroed, the first wgmmas)  R1 (up to and with the
 *        last wgmma)  R2 (the rest)
 * and becomes, where the loop runs at all (a region on a < b unless the
 * trips are known):
 *     H(a)   loop j in [a, b - 1): X(j) R1(j) commit H'(j + 1) R2(j)
 *                                  carry wait
 *     X(b - 1) R1(b - 1) R2(b - 1)
 * X is H's integer arithmetic, which stays where it was (R1 and R2 read
 * it); H' is H on registers of its own for everything but the
 * accumulators, the counter j + 1, one group of wgmmas (put_head says
 * why), after R1's last wgmma (mma_ahead = 1) or after R2's last read of
 * what R1's wgmmas give (= 2: dq's staging); the wait before the first
 * arrival after it (the slot's release) keeps H' in flight
 * (TIR_WAIT_CARRY), which the waits pass then knows is in flight at the
 * top of the body (T_LOOP's imm2 TIR_LOOP_AHEAD). The last iteration,
 * peeled, issues no H'.
 *
 * It applies where H's wgmmas read only registers H writes, the counter,
 * or what the loop body does not write; R2 neither reads nor writes H's
 * accumulators; the body has no loop, turn, exit or wgmma wait of its own
 * and its last wgmma is not in a region; the loop runs 2 or more trips
 * at most. Asked for with hardware(mma_ahead = 1) (E0408 where no loop
 * qualifies); not given, a remark says where it would apply. */
#include "tir/lower.h"

typedef struct ahead_site {
  uint32_t loop, end; /* T_LOOP, T_ENDLOOP */
  uint32_t h_end;     /* H's last wgmma */
  uint32_t cut;       /* the body's last wgmma */
  uint32_t at;        /* H' goes after it: cut, or (mma_ahead = 2) the
                         last read of what R1's wgmmas give R2 */
  uint32_t carry_at;  /* the carry wait goes before it */
  const bool *acc;    /* by register: H's accumulators */
} ahead_site;

/* The accumulator registers of a wgmma: its list less the lhs's. */
static uint32_t acc_count(const tir_instr *in) {
  wavec_mma_kind kind = (wavec_mma_kind)(in->imm & TIR_WG_KIND);
  uint32_t na = (in->imm & TIR_WG_A_REGS)
                    ? (uint32_t)wv_mma_elems(kind, WV_LHS, 8) : 0;
  return in->nlist - na;
}

/* May instruction `in` be part of H (it is cloned whole)? */
static bool head_op(const tir_prog *p, const tir_instr *in) {
  return in->op == T_WGMMA || in->op == T_MBWAIT || in->op == T_CONST ||
         tir_int_pure(p, in);
}

/* NULL and *s where loop i qualifies; else why not. */
static const char *qualifies(wavec_ctx *ctx, const tir_prog *p, uint32_t i,
                             ahead_site *s, bool late) {
  const tir_instr *lp = &p->code.v[i];
  uint32_t e = lp->match, h_end = 0, cut = 0, depth = 0;
  if (lp->b == 0 && lp->imm < 2)
    return "it runs fewer than 2 trips";
  if (lp->b && lp->imm < 2)
    return "it runs fewer than 2 trips at most";
  for (uint32_t j = i + 1; j < e; j++) {
    const tir_instr *in = &p->code.v[j];
    if (in->op == T_WGWAIT || in->op == T_WGCOMMIT)
      return "its body already waits for wgmmas of its own (a group it "
             "carries into the next iteration)";
    if (in->op == T_LOOP || in->op == T_TURNWAIT || in->op == T_TURNPASS ||
        in->op == T_EXIT || in->op == T_REGINC || in->op == T_REGDEC)
      return "its body has a loop, a turn, an exit or a setmaxnreg of its "
             "own";
    depth += in->op == T_IF;
    depth -= in->op == T_ENDIF;
    if (in->op == T_WGMMA) {
      if (depth)
        return "its wgmmas are in a region";
      cut = j;
    }
  }
  /* H: the run of head ops from the top, to its last wgmma */
  for (uint32_t j = i + 1; j < e && head_op(p, &p->code.v[j]); j++)
    if (p->code.v[j].op == T_WGMMA)
      h_end = j;
  if (!h_end)
    return "its iteration does not open with wgmmas";
  if (cut <= h_end)
    return "it issues no wgmma after its first group";
  /* what H reads: its own results, the counter, or what the body leaves */
  bool *body_w = wv_alloc(ctx, p->regs.n * sizeof *body_w);
  bool *head_w = wv_alloc(ctx, p->regs.n * sizeof *head_w);
  bool *acc = wv_alloc(ctx, p->regs.n * sizeof *acc);
  for (uint32_t j = i + 1; j < e; j++) {
    const tir_instr *in = &p->code.v[j];
    if (in->dst && writes_dst(in))
      body_w[in->dst] = true;
    if (writes_list(in) || in->op == T_WGMMA || in->op == T_MMA)
      for (uint32_t k = 0; k < in->nlist; k++)
        body_w[in->list[k]] = true;
  }
  for (uint32_t j = i + 1; j <= h_end; j++) {
    const tir_instr *in = &p->code.v[j];
    uint32_t ops[3] = {in->a, in->b, in->c};
    uint32_t nread = in->op == T_WGMMA ? in->nlist : 0;
    for (uint32_t k = 0; k < 3 + nread; k++) {
      uint32_t r = k < 3 ? ops[k] : in->list[k - 3];
      if (r && r != lp->dst && body_w[r] && !head_w[r] && !acc[r])
        return "its first wgmmas read what the iteration computes";
    }
    if (in->op == T_WGMMA) {
      uint32_t na = acc_count(in);
      for (uint32_t k = na; k < in->nlist; k++)
        if (body_w[in->list[k]] && !head_w[in->list[k]])
          return "its first wgmmas take their lhs from the iteration's "
                 "registers";
      for (uint32_t k = 0; k < na; k++)
        acc[in->list[k]] = true;
    } else if (in->dst) {
      head_w[in->dst] = true;
    }
  }
  /* R2 leaves H's accumulators alone; R1's reads before the cut */
  uint32_t carry_at = e;
  depth = 0;
  for (uint32_t j = cut + 1; j < e; j++) {
    const tir_instr *in = &p->code.v[j];
    uint32_t ops[4] = {in->dst, in->a, in->b, in->c};
    for (uint32_t k = 0; k < 4 + in->nlist; k++) {
      uint32_t r = k < 4 ? ops[k] : in->list[k - 4];
      if (r && acc[r])
        return "the work after its last wgmma touches the accumulators of "
               "its first";
    }
    depth += in->op == T_IF;
    depth -= in->op == T_ENDIF;
    if (in->op == T_MBARRIVE && !depth && carry_at == e)
      carry_at = j;
  }
  /* late: after the last instruction (or region) of R2 before the
   * arrival that reads the accumulators of R1's wgmmas */
  uint32_t at = cut;
  if (late) {
    bool *acc1 = wv_alloc(ctx, p->regs.n * sizeof *acc1), region = false;
    for (uint32_t j = h_end + 1; j <= cut; j++)
      if (p->code.v[j].op == T_WGMMA)
        for (uint32_t k = 0; k < acc_count(&p->code.v[j]); k++)
          acc1[p->code.v[j].list[k]] = true;
    depth = 0;
    for (uint32_t j = cut + 1; j < carry_at; j++) {
      const tir_instr *in = &p->code.v[j];
      bool reads = false;
      uint32_t ops[3] = {in->a, in->b, in->c};
      for (uint32_t k = 0; k < 3 + in->nlist && !reads; k++) {
        uint32_t r = k < 3 ? ops[k] : in->list[k - 3];
        reads = r && acc1[r];
      }
      depth += in->op == T_IF;
      depth -= in->op == T_ENDIF;
      region |= reads && depth;
      if ((reads && !depth) || (region && !depth)) {
        at = j;
        region = false;
      }
    }
  }
  *s = (ahead_site){.loop = i, .end = e, .h_end = h_end, .cut = cut,
                    .at = at, .carry_at = carry_at, .acc = acc};
  return NULL;
}

typedef VEC(tir_instr) code_vec;

static void emit(wavec_ctx *ctx, code_vec *c, tir_instr in) {
  vec_push(ctx, c, in);
}

/* H with the counter read from `ctr` and every result but the
 * accumulators on a register of its own, as one group of wgmmas, closed
 * right after them; with `close`, a commit before H closes the group in
 * flight (the last wgmmas'; a group left open across H's wait, a spin
 * loop, makes ptxas serialize every wgmma, C7514). One group: where the
 * next iteration's top retires H's groups one by one across the back
 * edge (the first accumulator's, then the next), ptxas serializes every
 * wgmma too. */
static void put_head(wavec_ctx *ctx, tir_prog *p, code_vec *c,
                     const ahead_site *s, uint32_t ctr, bool close) {
  uint32_t nr = p->regs.n;
  if (close)
    emit(ctx, c, (tir_instr){.op = T_WGCOMMIT, .ty = TY_PRED,
                             .loc = p->code.v[s->cut].loc});
  uint32_t *map = wv_alloc(ctx, nr * sizeof *map);
  map[p->code.v[s->loop].dst] = ctr;
#define MAP(r) ((r) && (r) < nr && map[r] ? map[r] : (r))
  for (uint32_t j = s->loop + 1; j <= s->h_end; j++) {
    tir_instr in = p->code.v[j];
    in.a = MAP(in.a);
    in.b = MAP(in.b);
    in.c = MAP(in.c);
    if (in.nlist) {
      uint32_t *l = wv_alloc(ctx, in.nlist * sizeof *l);
      for (uint32_t e = 0; e < in.nlist; e++)
        l[e] = MAP(in.list[e]);
      in.list = l;
    }
    if (in.op != T_WGMMA && in.dst && writes_dst(&in) && !s->acc[in.dst]) {
      uint32_t d = tir_new_reg(ctx, p, p->regs.v[in.dst]);
      map[in.dst] = d;
      in.dst = d;
    }
    emit(ctx, c, in);
  }
  /* (closed where its wgmmas are: a commit in a later block, past a
   * region, becomes a wgmma of its own in ptxas's code, and the carry
   * wait then retires H) */
  emit(ctx, c, (tir_instr){.op = T_WGCOMMIT, .ty = TY_PRED,
                           .loc = p->code.v[s->h_end].loc});
#undef MAP
}

/* The body's instructions [from, to) but H's moved part (its wait,
 * wgmmas and accumulator zeros). */
static void put_body(wavec_ctx *ctx, const tir_prog *p, code_vec *c,
                     const ahead_site *s, uint32_t from, uint32_t to) {
  for (uint32_t j = from; j < to; j++) {
    const tir_instr *in = &p->code.v[j];
    if (j <= s->h_end &&
        (in->op == T_WGMMA || in->op == T_MBWAIT ||
         (in->op == T_CONST && in->dst && s->acc[in->dst])))
      continue;
    emit(ctx, c, *in);
  }
}

static uint32_t const_reg(wavec_ctx *ctx, tir_prog *p, code_vec *c,
                          int64_t v, wavec_loc at) {
  uint32_t r = tir_new_reg(ctx, p, TY_I32);
  emit(ctx, c, (tir_instr){.op = T_CONST, .ty = TY_I32, .dst = r, .imm = v,
                           .loc = at});
  return r;
}

/* Pipelines the loop of site s: appends its new code to c. */
static void pipeline_loop(wavec_ctx *ctx, tir_prog *p, code_vec *c,
                          const ahead_site *s) {
  tir_instr lp = p->code.v[s->loop], ep = p->code.v[s->end];
  wavec_loc at = lp.loc;
  uint32_t ctr = lp.dst;
  /* the bounds: first, and the last trip's counter */
  uint32_t first = lp.a ? lp.a : const_reg(ctx, p, c, 0, at);
  uint32_t one = const_reg(ctx, p, c, 1, at);
  uint32_t last = tir_new_reg(ctx, p, TY_I32);
  if (lp.b) {
    emit(ctx, c, (tir_instr){.op = T_SUB, .ty = TY_I32, .dst = last,
                             .a = lp.b, .b = one, .loc = at});
  } else {
    emit(ctx, c, (tir_instr){.op = T_CONST, .ty = TY_I32, .dst = last,
                             .imm = lp.imm - 1, .loc = at});
  }
  uint32_t any = 0;
  if (lp.a || lp.b) { /* (else it runs lp.imm >= 2 trips) */
    any = tir_new_reg(ctx, p, TY_PRED);
    emit(ctx, c, (tir_instr){.op = T_SETP, .ty = TY_I32, .dst = any,
                             .a = last, .b = first, .imm = TIR_CMP_GE,
                             .loc = at});
    emit(ctx, c, (tir_instr){.op = T_IF, .ty = TY_PRED, .a = any, .loc = at});
  }
  /* H of the first trip */
  put_head(ctx, p, c, s, first, false);
  /* the loop, one trip fewer */
  lp.imm2 = TIR_LOOP_AHEAD;
  ep.imm2 = TIR_LOOP_AHEAD;
  if (lp.b) {
    lp.b = ep.b = last;
  }
  lp.imm -= 1;
  ep.imm -= 1;
  emit(ctx, c, lp);
  put_body(ctx, p, c, s, s->loop + 1, s->at + 1);
  uint32_t next = tir_new_reg(ctx, p, TY_I32);
  emit(ctx, c, (tir_instr){.op = T_ADD, .ty = TY_I32, .dst = next, .a = ctr,
                           .b = one, .loc = at});
  put_head(ctx, p, c, s, next, true);
  put_body(ctx, p, c, s, s->at + 1, s->carry_at);
  emit(ctx, c, (tir_instr){.op = T_WGWAIT, .ty = TY_PRED, .imm = 1,
                           .imm2 = TIR_WAIT_CARRY, .loc = at});
  put_body(ctx, p, c, s, s->carry_at, s->end);
  emit(ctx, c, ep);
  /* the last trip */
  emit(ctx, c, (tir_instr){.op = T_MOV, .ty = TY_I32, .dst = ctr, .a = last,
                           .loc = at});
  put_body(ctx, p, c, s, s->loop + 1, s->end);
  if (any)
    emit(ctx, c, (tir_instr){.op = T_ENDIF, .ty = TY_PRED, .loc = at});
}

static void remark(wv_kernel *k, const tir_prog *p, const ahead_site *s,
                   bool done) {
  wv_buf b;
  wv_remark_start(k, p->code.v[s->loop].loc, &b);
  if (done)
    wv_buf_printf(&b, "mma_ahead: each iteration issues the next one's "
                      "first wgmmas (line %u) right after its own last "
                      "(line %u)%s, so that they run while it finishes; "
                      "the last iteration is peeled",
                  p->code.v[s->h_end].loc.line, p->code.v[s->cut].loc.line,
                  s->at > s->cut ? " and the staging of its results"
                                 : "");
  else
    wv_buf_printf(&b, "mma_ahead: not chosen: the next iteration's first "
                      "wgmmas (line %u) could be issued right after this "
                      "one's last (line %u) (hardware(mma_ahead = 1) asks "
                      "for it)",
                  p->code.v[s->h_end].loc.line, p->code.v[s->cut].loc.line);
  wv_remark_end(k, &b);
}

wavec_status wv_pass_ahead(wv_kernel *k) {
  wavec_ctx *ctx = k->ctx;
  tir_prog *p = k->tir;
  wavec_loc at;
  int64_t knob = lw_knob(k, WAVEC_HW_MMA_AHEAD, &at);
  if (knob == 0)
    return WAVEC_OK;
  bool asked = knob > 0;
  VEC(ahead_site) sites = {0};
  const char *why = "it has no loop";
  bool why_inner = false; /* (the reason of a loop with no loop inside) */
  for (uint32_t i = 0; i < p->code.n; i++) {
    if (p->code.v[i].op != T_LOOP)
      continue;
    ahead_site s;
    const char *no = qualifies(ctx, p, i, &s, knob == 2);
    bool inner = true;
    for (uint32_t j = i + 1; j < p->code.v[i].match && inner; j++)
      inner = p->code.v[j].op != T_LOOP;
    if (no && (inner || !why_inner)) {
      why = no;
      why_inner |= inner;
    } else if (!no) {
      vec_push(ctx, &sites, s);
    }
  }
  if (!sites.n) {
    if (asked)
      wv_fail(ctx, D_SCHEDULE, at, "hardware(mma_ahead = %lld): no loop "
              "can issue its next iteration's first wgmmas early: %s",
              (long long)knob, why);
    return WAVEC_OK;
  }
  if (!asked) {
    remark(k, p, &sites.v[0], false);
    return WAVEC_OK;
  }
  code_vec code = {0};
  uint32_t next = 0;
  for (uint32_t i = 0; i < p->code.n; i++) {
    if (next < sites.n && i == sites.v[next].loop) {
      remark(k, p, &sites.v[next], true);
      pipeline_loop(ctx, p, &code, &sites.v[next]);
      i = sites.v[next++].end;
      continue;
    }
    vec_push(ctx, &code, p->code.v[i]);
  }
  tir_install_code(ctx, p, code);
  return WAVEC_OK;
}
