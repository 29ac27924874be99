/* The lowering: index expressions become integer code, one register per
 * distinct canonical expression in scope (hash-consing makes common-
 * subexpression elimination a table lookup). */
#include "tir/lower.h"

static memo_ent *memo_slot(lw *w, ex_t e) {
  uint32_t i = (uint32_t)(e * 2654435761u) & (w->memo_cap - 1);
  while (w->memo[i].e && w->memo[i].e != e)
    i = (i + 1) & (w->memo_cap - 1);
  return &w->memo[i];
}

static void memo_put(lw *w, ex_t e, uint32_t r) {
  if (2 * (w->memo_used + 1) > w->memo_cap) {
    memo_ent *old = w->memo;
    uint32_t oc = w->memo_cap;
    w->memo_cap = oc ? oc * 2 : 1024;
    w->memo = wv_alloc(w->ctx, w->memo_cap * sizeof *w->memo);
    w->memo_used = 0;
    for (uint32_t i = 0; i < oc; i++)
      if (old[i].e && w->scope_open[old[i].scope]) {
        *memo_slot(w, old[i].e) = old[i];
        w->memo_used++;
      }
  }
  memo_ent *m = memo_slot(w, e);
  if (!m->e)
    w->memo_used++;
  *m = (memo_ent){e, r, w->scopes.v[w->scopes.n - 1]};
}

uint32_t lw_expr(lw *w, ex_t e) {
  wavec_ctx *ctx = w->ctx;
  if (w->memo_cap) {
    memo_ent *m = memo_slot(w, e);
    if (m->e == e && w->scope_open[m->scope])
      return m->reg;
  }
  uint32_t r = 0;
  int64_t v;
  switch (ex_kind_of(ctx, e)) {
  case EX_CONST:
    ex_is_const(ctx, e, &v);
    r = lw_iconst(w, v);
    break;
  case EX_SYM: {
    wavec_sym s = ex_sym_of(ctx, e);
    for (int a = 0; a < 3 && !r; a++) {
      if (s == w->d->T[a])
        r = lw_reg(w, TY_I32),
        lw_emit(w, T_SREG, TY_I32, r, 0, 0, 0, TIR_SREG_TID_X + a);
      else if (s == w->d->WG[a] && w->wgreg[a]) /* a persistent tile's */
        r = w->wgreg[a];
      else if (s == w->d->WG[a])
        r = lw_reg(w, TY_I32),
        lw_emit(w, T_SREG, TY_I32, r, 0, 0, 0, TIR_SREG_CTAID_X + a);
    }
    if (!r && s < w->nloopreg && w->loopreg[s])
      r = w->loopreg[s];
    if (!r && s < w->d->nsyms && w->size_index[s]) /* a dynamic size */
      r = lw_reg(w, TY_I32),
      lw_emit(w, T_PARAM, TY_I32, r, 0, 0, 0, w->size_index[s] - 1);
    if (!r)
      wv_fail(ctx, D_INTERNAL, w->loc, "index uses '%s', which has no value "
              "in the thread program", wavec_symbol_name(ctx, s));
    break;
  }
  case EX_ADD:
  case EX_MUL:
  case EX_MIN:
  case EX_MAX: {
    static const tir_op ops[] = {[EX_ADD] = T_ADD, [EX_MUL] = T_MUL,
                                 [EX_MIN] = T_MIN, [EX_MAX] = T_MAX};
    tir_op op = ops[ex_kind_of(ctx, e)];
    r = lw_expr(w, ex_arg(ctx, e, 0));
    for (uint32_t i = 1; i < ex_nargs(ctx, e); i++)
      r = lw_op2(w, op, TY_I32, r, lw_expr(w, ex_arg(ctx, e, i)));
    break;
  }
  case EX_FLOORDIV:
  case EX_MOD: {
    uint32_t a = lw_expr(w, ex_arg(ctx, e, 0));
    uint32_t b = lw_expr(w, ex_arg(ctx, e, 1));
    r = lw_op2(w, ex_kind_of(ctx, e) == EX_MOD ? T_MOD : T_DIV, TY_I32, a, b);
    break;
  }
  }
  memo_put(w, e, r);
  return r;
}

/* e with the element number and the bound symbols made constants,
 * simplified under the ranges of the thread, workgroup and loop ids. */
ex_t lw_concrete(lw *w, ex_t e, uint32_t elem) {
  wavec_ctx *ctx = w->ctx;
  ex_t ev = ex_const(ctx, elem);
  e = ex_subst(ctx, e, 1, &w->d->E, &ev);
  e = ex_subst(ctx, e, w->bsyms.n, w->bsyms.v, w->bvals.v);
  return ex_simplify(ctx, e, w->ranges, w->nranges);
}

ex_t lw_index_of(lw *w, uint32_t id, wavec_sym dim) {
  wv_node *n = wv_get(w->g, id);
  wv_nodeinfo *in = &w->ix->info[id];
  for (uint32_t i = 0; i < n->type.n; i++)
    if (n->type.dims[i] == dim)
      return wv_index_expr(w->k, dim, in->layout, in->coord[i]);
  wv_assert(w->ctx, 0);
  return 0;
}

ex_t lw_linear_tid(lw *w) {
  wavec_ctx *ctx = w->ctx;
  wv_dist *d = w->d;
  ex_t t = ex_sym(ctx, d->T[2]);
  t = ex_add(ctx, ex_mul(ctx, t, ex_const(ctx, d->block[1])),
             ex_sym(ctx, d->T[1]));
  return ex_add(ctx, ex_mul(ctx, t, ex_const(ctx, d->block[0])),
                ex_sym(ctx, d->T[0]));
}

/* The linear id of this thread's wave in its workgroup. */
ex_t lw_wave_id(lw *w) {
  wavec_ctx *ctx = w->ctx;
  wv_dist *d = w->d;
  ex_t t0 = ex_floordiv(ctx, ex_sym(ctx, d->T[0]), ex_const(ctx, d->lanes));
  ex_t t1 = ex_mul(ctx, ex_sym(ctx, d->T[1]), ex_const(ctx, d->waves[0]));
  ex_t t2 = ex_mul(ctx, ex_sym(ctx, d->T[2]),
                   ex_const(ctx, d->waves[0] * d->waves[1]));
  return ex_add(ctx, ex_add(ctx, t0, t1), t2);
}

/* A shared byte address: e (thread ids and constants) plus `at` (a slot
 * offset, or 0), lowered as (e's variable part + at) + e's constant so that
 * fragments of one slot share the register and the constant becomes the
 * access's immediate offset. */
uint32_t lw_smem_addr(lw *w, ex_t e, ex_t at) {
  wavec_ctx *ctx = w->ctx;
  int64_t c = 0;
  ex_t rest = e;
  if (ex_kind_of(ctx, e) == EX_ADD) {
    rest = ex_const(ctx, 0);
    for (uint32_t i = 0; i < ex_nargs(ctx, e); i++) {
      int64_t v;
      if (ex_is_const(ctx, ex_arg(ctx, e, i), &v))
        c += v;
      else
        rest = ex_add(ctx, rest, ex_arg(ctx, e, i));
    }
  } else if (ex_is_const(ctx, e, &c)) {
    rest = ex_const(ctx, 0);
  }
  if (at)
    rest = ex_simplify(ctx, ex_add(ctx, rest, at), w->ranges, w->nranges);
  uint32_t r = lw_expr(w, rest);
  return c ? lw_op2(w, T_ADD, TY_I32, r, lw_iconst(w, c)) : r;
}

/* The address of every thread of the block for expression e (only thread
 * ids may appear); false if something else does. */
bool lw_eval_threads(lw *w, ex_t e, int64_t *out) {
  wavec_ctx *ctx = w->ctx;
  wv_dist *d = w->d;
  uint32_t ns = ctx->sym_names.n;
  int64_t *vals = wv_alloc(ctx, ns * sizeof *vals);
  bool *known = wv_alloc(ctx, ns * sizeof *known);
  for (int a = 0; a < 3; a++)
    known[d->T[a]] = true;
  int64_t n = d->block[0] * d->block[1] * d->block[2];
  for (int64_t t = 0; t < n; t++) {
    vals[d->T[0]] = t % d->block[0];
    vals[d->T[1]] = t / d->block[0] % d->block[1];
    vals[d->T[2]] = t / (d->block[0] * d->block[1]);
    if (!ex_eval(ctx, e, vals, known, ns, &out[t]))
      return false;
  }
  return true;
}

ex_t lw_dim_size(lw *w, wavec_sym d) {
  wv_diminfo *di = &w->d->dim[d];
  return di->dynamic ? ex_sym(w->ctx, d) : ex_const(w->ctx, di->size);
}
