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

/* ---- widths ---------------------------------------------------------------
 * An index value is computed in 32 bits (TY_I32) when the interval bounds
 * of the index algebra, under the ranges of the thread, workgroup and loop
 * ids and of the run-time sizes (plan.c), put it within 32 bits, and also
 * every partial sum or product of the chain of instructions that computes
 * it from its arguments, each of them within 32 bits too; the GPU's
 * registers would wrap otherwise. Any other value is computed in 64 bits
 * (TY_I64), from its 32-bit arguments widened (cvt), and narrowed back
 * when the value itself fits. A symbol (a thread, workgroup or loop id, a
 * run-time size) comes from a 32-bit register. With the test hook
 * narrow-index every value is computed in 32 bits, proved or not, as
 * before large tensors: a test shows the simulator catches the wrap. */

static bool in32(int64_t lo, int64_t hi) {
  return lo >= INT32_MIN && hi <= INT32_MAX;
}

static bool unchecked(lw *w) {
  return (w->ctx->test_hooks & WV_HOOK_NARROW_INDEX) != 0;
}

static bound_ent *bound_slot(lw *w, ex_t e) {
  uint32_t i = (uint32_t)(e * 2654435761u) & (w->bounds_cap - 1);
  while (w->bounds[i].e && w->bounds[i].e != e)
    i = (i + 1) & (w->bounds_cap - 1);
  return &w->bounds[i];
}

/* ex_bounds of e under the lowering's ranges, remembered (INT64_MIN and
 * INT64_MAX stand for an unbounded side). */
static void bounds_of(lw *w, ex_t e, int64_t *lo, int64_t *hi) {
  wavec_sym s = ex_sym_of(w->ctx, e);
  if (ex_is_const(w->ctx, e, lo)) {
    *hi = *lo;
    return;
  }
  if (s) {
    bool known = s < w->nranges && w->ranges[s].known;
    *lo = known ? w->ranges[s].lo : INT64_MIN;
    *hi = known ? w->ranges[s].hi : INT64_MAX;
    return;
  }
  if (2 * (w->bounds_used + 1) > w->bounds_cap) {
    bound_ent *old = w->bounds;
    uint32_t oc = w->bounds_cap;
    w->bounds_cap = oc ? oc * 2 : 1024;
    w->bounds = wv_alloc(w->ctx, w->bounds_cap * sizeof *w->bounds);
    for (uint32_t i = 0; i < oc; i++)
      if (old[i].e)
        *bound_slot(w, old[i].e) = old[i];
  }
  bound_ent *b = bound_slot(w, e);
  if (!b->e) {
    b->e = e;
    ex_bounds(w->ctx, e, w->ranges, w->nranges, &b->lo, &b->hi);
    w->bounds_used++;
  }
  *lo = b->lo;
  *hi = b->hi;
}

/* e's value lies within 32 bits (then lower() gives an i32 register). */
static bool value32(lw *w, ex_t e) {
  int64_t lo, hi;
  if (unchecked(w) || ex_kind_of(w->ctx, e) == EX_SYM)
    return true;
  bounds_of(w, e, &lo, &hi);
  return in32(lo, hi);
}

/* [lo, hi] becomes the interval of its value plus (sum) or times the
 * value in [alo, ahi]; false if a bound passes 64 bits. */
static bool fold_step(bool sum, int64_t *lo, int64_t *hi, int64_t alo,
                      int64_t ahi) {
  if (alo == INT64_MIN || ahi == INT64_MAX)
    return false;
  if (sum)
    return !__builtin_add_overflow(*lo, alo, lo) &&
           !__builtin_add_overflow(*hi, ahi, hi);
  int64_t p[4];
  if (__builtin_mul_overflow(*lo, alo, &p[0]) ||
      __builtin_mul_overflow(*lo, ahi, &p[1]) ||
      __builtin_mul_overflow(*hi, alo, &p[2]) ||
      __builtin_mul_overflow(*hi, ahi, &p[3]))
    return false;
  *lo = *hi = p[0];
  for (int j = 1; j < 4; j++)
    *lo = p[j] < *lo ? p[j] : *lo, *hi = p[j] > *hi ? p[j] : *hi;
  return true;
}

/* Can e be computed from its arguments in 32-bit instructions: its value
 * and its arguments' within 32 bits, and the running sum or product of
 * those too? */
static bool direct32(lw *w, ex_t e) {
  wavec_ctx *ctx = w->ctx;
  ex_kind k = ex_kind_of(ctx, e);
  if (unchecked(w) || k == EX_SYM || k == EX_CONST)
    return value32(w, e);
  if (!value32(w, e))
    return false;
  bool fold = k == EX_ADD || k == EX_MUL;
  int64_t lo = 0, hi = 0;
  for (uint32_t i = 0; i < ex_nargs(ctx, e); i++) {
    ex_t t = ex_arg(ctx, e, i);
    int64_t alo, ahi;
    bounds_of(w, t, &alo, &ahi);
    if (!in32(alo, ahi) && ex_kind_of(ctx, t) != EX_SYM)
      return false;
    if (i == 0)
      lo = alo, hi = ahi;
    else if (fold && (!fold_step(k == EX_ADD, &lo, &hi, alo, ahi) ||
                      !in32(lo, hi)))
      return false;
  }
  return true;
}

/* Do the running results of folding the n values a[] in order, a sum or a
 * product, stay within 64 bits (the ends of which stand for unbounded)? */
static bool chain64(lw *w, bool sum, const ex_t *a, uint32_t n) {
  int64_t lo = 0, hi = 0;
  for (uint32_t i = 0; i < n; i++) {
    int64_t alo, ahi;
    bounds_of(w, a[i], &alo, &ahi);
    if (alo == INT64_MIN || ahi == INT64_MAX)
      return false;
    if (i == 0)
      lo = alo, hi = ahi;
    else if (!fold_step(sum, &lo, &hi, alo, ahi) || lo == INT64_MIN ||
             hi == INT64_MAX)
      return false;
  }
  return true;
}

static const tir_op fold_ops[] = {[EX_ADD] = T_ADD, [EX_MUL] = T_MUL,
                                  [EX_MIN] = T_MIN, [EX_MAX] = T_MAX,
                                  [EX_FLOORDIV] = T_DIV, [EX_MOD] = T_MOD};

/* Memo keys of the i64 copies of i32 values: e with this bit. */
enum { WIDE_KEY = 1u << 31 };

static uint32_t lower(lw *w, ex_t e);

/* e's value in an i64 register: its own if e is wide, else its i32 one
 * sign-extended (or, a constant, made in 64 bits), once per scope. */
static uint32_t lower64(lw *w, ex_t e) {
  int64_t v;
  bool c = ex_is_const(w->ctx, e, &v);
  uint32_t r = c ? 0 : lower(w, e);
  if (r && w->p->regs.v[r] == TY_I64)
    return r;
  if (w->memo_cap) {
    memo_ent *m = memo_slot(w, e | WIDE_KEY);
    if (m->e == (e | WIDE_KEY) && w->scope_open[m->scope])
      return m->reg;
  }
  uint32_t d = lw_reg(w, TY_I64);
  if (c)
    lw_emit(w, T_CONST, TY_I64, d, 0, 0, 0, v);
  else
    lw_emit(w, T_CVT, TY_I64, d, r, 0, 0, 0);
  memo_put(w, e | WIDE_KEY, d);
  return d;
}

/* e in 64 bits (direct32 does not hold). A sum adds its constant to the
 * rest (shared by the sums that differ in the constant only), and the
 * rest adds its terms that fit (lowered together in 32 bits where their
 * sum fits) to the others. */
static uint32_t lower_wide(lw *w, ex_t e) {
  wavec_ctx *ctx = w->ctx;
  ex_kind k = ex_kind_of(ctx, e);
  int64_t lo, hi, v;
  bounds_of(w, e, &lo, &hi);
  if (lo == INT64_MIN || hi == INT64_MAX)
    wv_fail(ctx, D_OVERFLOW, w->loc, "integer overflow: the index analysis "
            "cannot bound '%s' within 64 bits", ex_str(ctx, e));
  if (k == EX_CONST)
    return lower64(w, e);
  uint32_t n = ex_nargs(ctx, e), m = 0;
  ex_t *a = wv_alloc(ctx, (n + 1) * sizeof *a);
  if (k == EX_ADD && ex_is_const(ctx, ex_arg(ctx, e, n - 1), &v)) {
    a[0] = ex_sub(ctx, e, ex_const(ctx, v)); /* (the constant is last) */
    a[1] = ex_const(ctx, v);
    m = 2;
  } else if (k == EX_ADD) {
    ex_t narrow = ex_const(ctx, 0);
    uint32_t nn = 0;
    for (uint32_t i = 0; i < n; i++) {
      ex_t t = ex_arg(ctx, e, i);
      if (value32(w, t))
        narrow = ex_add(ctx, narrow, t), nn++;
      else
        a[++m] = t;
    }
    if (m == 0) { /* every term fits: the sum of them does not */
      for (uint32_t i = 0; i < n; i++)
        a[i] = ex_arg(ctx, e, i);
      m = n;
    } else if (nn) {
      a[0] = narrow, m++;
    } else {
      memmove(a, a + 1, m * sizeof *a);
    }
  } else {
    for (uint32_t i = 0; i < n; i++)
      a[i] = ex_arg(ctx, e, i);
    m = n;
  }
  if ((k == EX_ADD || k == EX_MUL) && !chain64(w, k == EX_ADD, a, m))
    wv_fail(ctx, D_OVERFLOW, w->loc, "integer overflow: computing '%s' "
            "passes 64 bits", ex_str(ctx, e));
  uint32_t r = lower64(w, a[0]);
  for (uint32_t i = 1; i < m; i++)
    r = lw_op2(w, fold_ops[k], TY_I64, r, lower64(w, a[i]));
  return r;
}

/* e's register: i32 when its value fits (value32), else i64. */
static uint32_t lower(lw *w, ex_t e) {
  wavec_ctx *ctx = w->ctx;
  wv_assert(ctx, e < WIDE_KEY);
  if (w->memo_cap) {
    memo_ent *m = memo_slot(w, e);
    if (m->e == e && w->scope_open[m->scope])
      return m->reg;
  }
  uint32_t r = 0;
  int64_t v;
  if (!direct32(w, e)) {
    r = lower_wide(w, e);
    if (value32(w, e)) { /* the value fits, its computation did not */
      uint32_t d = lw_reg(w, TY_I32);
      lw_emit(w, T_CVT, TY_I32, d, r, 0, 0, 0);
      r = d;
    }
    memo_put(w, e, r);
    return r;
  }
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
      else if (s == w->d->WG[a]) {
        r = lw_reg(w, TY_I32);
        lw_emit(w, T_SREG, TY_I32, r, 0, 0, 0, TIR_SREG_CTAID_X + a);
        r = lw_tile_order(w, a, r, 0);
      }
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
    tir_op op = fold_ops[ex_kind_of(ctx, e)];
    r = lower(w, ex_arg(ctx, e, 0));
    for (uint32_t i = 1; i < ex_nargs(ctx, e); i++)
      r = lw_op2(w, op, TY_I32, r, lower(w, ex_arg(ctx, e, i)));
    break;
  }
  case EX_FLOORDIV:
  case EX_MOD: {
    uint32_t a = lower(w, ex_arg(ctx, e, 0));
    uint32_t b = lower(w, ex_arg(ctx, e, 1));
    r = lw_op2(w, fold_ops[ex_kind_of(ctx, e)], TY_I32, a, b);
    break;
  }
  }
  memo_put(w, e, r);
  return r;
}

uint32_t lw_expr_wide(lw *w, ex_t e) { return lower(w, e); }

uint32_t lw_expr(lw *w, ex_t e) {
  uint32_t r = lower(w, e);
  if (w->p->regs.v[r] != TY_I32) {
    int64_t lo, hi;
    bounds_of(w, e, &lo, &hi);
    wv_fail(w->ctx, D_OVERFLOW, w->loc,
            "integer overflow: '%s' ranges over [%lld, %lld] here, where it "
            "must fit in 32 bits", ex_str(w->ctx, e), (long long)lo,
            (long long)hi);
  }
  return r;
}

/* The i64 register of e, for a comparison with a wide value. */
uint32_t lw_expr64(lw *w, ex_t e) { return lower64(w, e); }

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

/* The step of the linear wave id (lw_wave_id) along axis a: 1, the waves
 * along x, or those along x and y. */
int64_t lw_wave_stride(const lw *w, int a) {
  const wv_dist *d = w->d;
  return a == 0 ? 1 : a == 1 ? d->waves[0] : d->waves[0] * d->waves[1];
}

/* The linear id of this thread's wave in its workgroup. */
ex_t lw_wave_id(lw *w) {
  wavec_ctx *ctx = w->ctx;
  wv_dist *d = w->d;
  ex_t t0 = wv_wave_coord(ctx, d, 0);
  ex_t t1 = ex_mul(ctx, ex_sym(ctx, d->T[1]),
                   ex_const(ctx, lw_wave_stride(w, 1)));
  ex_t t2 = ex_mul(ctx, ex_sym(ctx, d->T[2]),
                   ex_const(ctx, lw_wave_stride(w, 2)));
  return ex_add(ctx, ex_add(ctx, t0, t1), t2);
}

/* W predicates, the k-th true in the waves whose coordinate along axis a
 * is k mod W (one setp each). */
uint32_t *lw_wave_preds(lw *w, int a, int64_t W) {
  wavec_ctx *ctx = w->ctx;
  ex_t c = ex_mod(ctx, wv_wave_coord(ctx, w->d, a), ex_const(ctx, W));
  uint32_t creg = lw_expr(w, ex_simplify(ctx, c, w->ranges, w->nranges));
  uint32_t *is = wv_alloc(ctx, (size_t)W * sizeof *is);
  for (int64_t k = 0; k < W; k++) {
    is[k] = lw_reg(w, TY_PRED);
    lw_emit(w, T_SETP, TY_PRED, is[k], creg, lw_iconst(w, k), 0, TIR_CMP_EQ);
  }
  return is;
}

/* e as its variable part (returned) plus a constant (*c). */
ex_t lw_split_const(lw *w, ex_t e, int64_t *c) {
  wavec_ctx *ctx = w->ctx;
  *c = 0;
  if (ex_is_const(ctx, e, c))
    return ex_const(ctx, 0);
  if (ex_kind_of(ctx, e) != EX_ADD)
    return e;
  ex_t rest = ex_const(ctx, 0);
  for (uint32_t i = 0; i < ex_nargs(ctx, e); i++) {
    int64_t v;
    if (ex_is_const(ctx, ex_arg(ctx, e, i), &v))
      *c += v;
    else
      rest = ex_add(ctx, rest, ex_arg(ctx, e, i));
  }
  return rest;
}

/* A shared byte address: e (thread ids and constants) plus `at` (a slot
 * offset, or 0), lowered as (e's variable part + at) + e's constant so that
 * fragments of one slot share the register and the constant becomes the
 * access's immediate offset. */
uint32_t lw_smem_addr(lw *w, ex_t e, ex_t at) {
  wavec_ctx *ctx = w->ctx;
  int64_t c;
  ex_t rest = lw_split_const(w, e, &c);
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
  /* the thread ids of every thread, computed once per lowering */
  int64_t n = d->block[0] * d->block[1] * d->block[2];
  if (!w->tid_cols) {
    w->tid_ncols = ctx->sym_names.n;
    w->tid_cols = wv_alloc(ctx, w->tid_ncols * sizeof *w->tid_cols);
    for (int a = 0; a < 3; a++) {
      int64_t *c = wv_alloc(ctx, ((size_t)n + 1) * sizeof *c);
      for (int64_t t = 0; t < n; t++)
        c[t] = a == 0 ? t % d->block[0]
             : a == 1 ? t / d->block[0] % d->block[1]
                      : t / (d->block[0] * d->block[1]);
      w->tid_cols[d->T[a]] = c;
    }
  }
  return ex_eval_batch(ctx, e, w->tid_cols, NULL, NULL, w->tid_ncols,
                       (size_t)n, out);
}

uint32_t lw_tiles_along(lw *w, int a) {
  wavec_ctx *ctx = w->ctx;
  const wv_dist *d = w->d;
  if (d->grid[a] >= 0)
    return lw_expr(w, ex_const(ctx, d->grid[a]));
  wavec_sym g = d->grid_dim[a];
  return lw_expr(w, ex_ceildiv(ctx, lw_dim_size(w, g),
                               ex_const(ctx, d->dim[g].wg_tile)));
}

uint32_t lw_tile_order(lw *w, int a, uint32_t i, uint32_t n) {
  if (!w->sched.reverse[a]) /* longest walks first (schedule.c) */
    return i;
  uint32_t last = lw_op2(w, T_SUB, TY_I32, n ? n : lw_tiles_along(w, a),
                         lw_iconst(w, 1));
  return lw_op2(w, T_SUB, TY_I32, last, i);
}

ex_t lw_dim_size(lw *w, wavec_sym d) {
  wv_diminfo *di = &w->d->dim[d];
  return di->dynamic ? ex_sym(w->ctx, d) : ex_const(w->ctx, di->size);
}
