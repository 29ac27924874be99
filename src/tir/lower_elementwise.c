/* The lowering: elementwise ops. */
#include "tir/lower.h"

const tir_op lw_unary_ops[WV_OP_COUNT] = {
    [WAVEC_OP_EXP2] = T_EXP2,   [WAVEC_OP_EXP] = T_EXP,
    [WAVEC_OP_LOG2] = T_LOG2,   [WAVEC_OP_RECIPROCAL] = T_RCP,
    [WAVEC_OP_SQRT] = T_SQRT,   [WAVEC_OP_RSQRT] = T_RSQRT,
    [WAVEC_OP_ABS] = T_ABS,     [WAVEC_OP_TANH] = T_TANH,
    [WAVEC_OP_NEG] = T_NEG,     [WAVEC_OP_ADD] = T_ADD,
    [WAVEC_OP_SUB] = T_SUB,     [WAVEC_OP_MUL] = T_MUL,
    [WAVEC_OP_DIV] = T_DIV,     [WAVEC_OP_MAXIMUM] = T_MAX,
    [WAVEC_OP_MINIMUM] = T_MIN, [WAVEC_OP_MAX] = T_MAX,
    [WAVEC_OP_SUM] = T_ADD,     [WAVEC_OP_REM] = T_TREM};

/* The TIR op of elementwise op `op` on type ty: integer division truncates
 * (the kernel's `/` is C's; T_DIV is the index algebra's floor). */
static tir_op op_on(wavec_op op, tir_ty ty) {
  return op == WAVEC_OP_DIV && ty == TY_I32 ? T_TDIV : lw_unary_ops[op];
}

static const int cmp_of[WV_OP_COUNT] = {
    [WAVEC_OP_GT] = TIR_CMP_GT, [WAVEC_OP_LT] = TIR_CMP_LT,
    [WAVEC_OP_GE] = TIR_CMP_GE, [WAVEC_OP_LE] = TIR_CMP_LE,
    [WAVEC_OP_EQ] = TIR_CMP_EQ, [WAVEC_OP_NE] = TIR_CMP_NE};

/* The registers an elementwise node may write in place: those of an
 * operand that is a loop-carried value of the same type and layout, used
 * by nothing else, in the same loop body (o_prev * corr in attention):
 * its registers are rewritten by the yield anyway, and an mma that then
 * accumulates into them in place leaves the yield nothing to copy. 0 if
 * there is none. */
static uint32_t in_place(lw *w, uint32_t id, uint32_t ne) {
  const wv_node *n = wv_get(w->g, id);
  char cls = wv_ops[n->op].cls;
  if (cls != 'U' && cls != 'B')
    return 0;
  for (uint32_t i = 0; i < n->nops; i++) {
    uint32_t o = n->ops[i];
    const wv_node *c = wv_get(w->g, o);
    if (c->op == WAVEC_OP_CARRIED && w->nuses[o] == 1 && c->block == n->block &&
        c->type.dt == n->type.dt && lw_nelem(w, o) == ne &&
        wv_layout_eq(w->ix->info[o].layout, w->ix->info[id].layout))
      return w->vals[o];
  }
  return 0;
}

void lw_register(lw *w, uint32_t id) {
  wv_node *n = wv_get(w->g, id);
  tir_ty ty = lw_node_ty(n);
  uint32_t ne = lw_nelem(w, id);
  w->vals[id] = lw_new_regs(w, ty, ne);
  double v = lw_scalar_value(w, wv_get(w->g, n->ops[0]));
  for (uint32_t e = 0; e < ne; e++)
    lw_const_into(w, ty, w->vals[id] + e, v);
}

void lw_cast(lw *w, uint32_t id) {
  wv_node *n = wv_get(w->g, id);
  tir_ty ty = lw_node_ty(n);
  uint32_t ne = lw_nelem(w, id);
  w->vals[id] = lw_new_regs(w, ty, ne);
  tir_ty from = tir_ty_of(wv_get(w->g, n->ops[0])->type.dt);
  for (uint32_t e = 0; e < ne; e++)
    lw_emit(w, from == ty ? T_MOV : T_CVT, ty, w->vals[id] + e,
            lw_elem(w, n->ops[0], e, from), 0, 0, 0);
}

void lw_select(lw *w, uint32_t id) {
  wv_node *n = wv_get(w->g, id);
  tir_ty ty = lw_node_ty(n);
  uint32_t ne = lw_nelem(w, id);
  wv_node *x = wv_get(w->g, n->ops[1]);
  if (w->unmasking && w->unmask_cand[id] && x->op != WAVEC_OP_SCALAR &&
      x->op != WAVEC_OP_READ) {
    w->vals[id] = w->vals[n->ops[1]]; /* a whole tile: the value itself */
    return;
  }
  w->vals[id] = lw_new_regs(w, ty, ne);
  for (uint32_t e = 0; e < ne; e++) { /* operands last to first */
    uint32_t b = lw_elem(w, n->ops[2], e, ty), a = lw_elem(w, n->ops[1], e, ty);
    lw_emit(w, T_SELP, ty, w->vals[id] + e, lw_elem(w, n->ops[0], e, TY_PRED),
            a, b, 0);
  }
}

void lw_self_index(lw *w, uint32_t id) {
  wv_node *n = wv_get(w->g, id);
  tir_ty ty = lw_node_ty(n);
  uint32_t ne = lw_nelem(w, id);
  w->vals[id] = lw_new_regs(w, ty, ne);
  for (uint32_t e = 0; e < ne; e++) {
    uint32_t r = lw_expr(w, lw_concrete(w, lw_index_of(w, id, n->sym), e));
    lw_emit(w, ty == TY_I32 ? T_MOV : T_CVT, ty, w->vals[id] + e, r, 0, 0, 0);
  }
}

/* An elementwise op: each distinct element computed once, its repeats
 * copied. */
void lw_elementwise(lw *w, uint32_t id) {
  wavec_ctx *ctx = w->ctx;
  wv_node *n = wv_get(w->g, id);
  tir_ty ty = lw_node_ty(n);
  char cls = wv_ops[n->op].cls;
  uint32_t ne = lw_nelem(w, id);
  uint32_t into = in_place(w, id, ne);
  w->vals[id] = into ? into : lw_new_regs(w, ty, ne);
  const uint32_t *rep = cls == 'U' || cls == 'B' || cls == 'C'
                            ? lw_elem_reps(w, w->ix->info[id].layout)
                            : NULL;
  if (!rep)
    wv_fail(ctx, D_INTERNAL, n->loc, "no lowering for %s", wv_ops[n->op].name);
  uint32_t d0 = w->vals[id];
  for (uint32_t e = 0; e < ne; e++) {
    if (rep[e] != e) { /* a repeat (a compare's result is a predicate) */
      lw_emit(w, T_MOV, ty, d0 + e, d0 + rep[e], 0, 0, 0);
      continue;
    }
    switch (cls) {
    case 'U':
      lw_emit(w, lw_unary_ops[n->op], ty, d0 + e, lw_elem(w, n->ops[0], e, ty),
              0, 0, 0);
      break;
    case 'B': { /* operands last to first */
      uint32_t b = lw_elem(w, n->ops[1], e, ty);
      lw_emit(w, op_on(n->op, ty), ty, d0 + e, lw_elem(w, n->ops[0], e, ty), b,
              0, 0);
      break;
    }
    default: { /* 'C' */
      wv_node *a = wv_get(w->g, n->ops[0]), *b = wv_get(w->g, n->ops[1]);
      tir_ty ot = tir_ty_of((a->op == WAVEC_OP_SCALAR ? b : a)->type.dt);
      uint32_t rb = lw_elem(w, n->ops[1], e, ot); /* operands last to first */
      lw_emit(w, T_SETP, ot, d0 + e, lw_elem(w, n->ops[0], e, ot), rb, 0,
              cmp_of[n->op]);
    }
    }
  }
}
