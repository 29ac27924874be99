/* The index algebra: interval arithmetic over extended integers, bounds of
 * expressions under ranges of their symbols, and evaluation.
 *
 * Memo tables for simplify, bounds and subst are indexed by node id and
 * stamped with an epoch, so starting a new query costs nothing. Simplify
 * and bounds results are kept while the ranges given are the same as the
 * last call's: the passes ask many questions under one set of ranges. */
#include <string.h>
#include "expr/expr_int.h"

/* ---- extended-integer intervals ---------------------------------------- */
static inline iv iv_norm(iv r) {
  if (r.lo == POS_INF)
    r.lo = NEG_INF;
  if (r.hi == NEG_INF)
    r.hi = POS_INF;
  return r;
}
static inline int64_t xadd_lo(int64_t a, int64_t b) {
  int64_t r;
  if (a == NEG_INF || b == NEG_INF || __builtin_add_overflow(a, b, &r))
    return NEG_INF;
  return r;
}
static inline int64_t xadd_hi(int64_t a, int64_t b) {
  int64_t r;
  if (a == POS_INF || b == POS_INF || __builtin_add_overflow(a, b, &r))
    return POS_INF;
  return r;
}
static inline int64_t xneg(int64_t a) {
  return a == NEG_INF ? POS_INF : a == POS_INF ? NEG_INF : -a;
}
static inline int64_t xmul(int64_t a, int64_t b) {
  if (a == 0 || b == 0)
    return 0;
  bool neg = (a < 0) != (b < 0);
  int64_t r;
  if (a == NEG_INF || a == POS_INF || b == NEG_INF || b == POS_INF ||
      __builtin_mul_overflow(a, b, &r))
    return neg ? NEG_INF : POS_INF;
  return r;
}

static iv iv_add(iv x, iv y) {
  return (iv){xadd_lo(x.lo, y.lo), xadd_hi(x.hi, y.hi)};
}
static iv iv_mul(iv x, iv y) {
  int64_t a = xmul(x.lo, y.lo), b = xmul(x.lo, y.hi), c = xmul(x.hi, y.lo),
          d = xmul(x.hi, y.hi);
  return iv_norm(
      (iv){min64(min64(a, b), min64(c, d)), max64(max64(a, b), max64(c, d))});
}
static iv iv_neg(iv x) {
  return (iv){xneg(x.hi), xneg(x.lo)};
}
/* floor(x / d) for d >= 1 (d may be +inf). */
static int64_t xfdiv(int64_t x, int64_t d) {
  if (x == NEG_INF || x == POS_INF)
    return x;
  if (d == POS_INF)
    return x >= 0 ? 0 : -1;
  return fdiv(x, d);
}
static iv iv_floordiv(iv x, iv d) {
  if (d.lo >= 1) /* floor(x/d) rises with x; falls with d for x >= 0 */
    return (iv){min64(xfdiv(x.lo, d.lo), xfdiv(x.lo, d.hi)),
                max64(xfdiv(x.hi, d.lo), xfdiv(x.hi, d.hi))};
  if (d.hi <= -1) /* floor(x/d) == floor(-x/-d) */
    return iv_floordiv(iv_neg(x), iv_neg(d));
  return IV_ALL;
}
static iv iv_mod(iv x, iv d) {
  if (d.lo >= 1) {
    if (d.lo == d.hi && x.lo != NEG_INF && x.hi != POS_INF &&
        fdiv(x.lo, d.lo) == fdiv(x.hi, d.lo))
      return (iv){fmodi(x.lo, d.lo), fmodi(x.hi, d.lo)}; /* one period */
    if (x.lo >= 0 && x.hi < d.lo)
      return x;
    iv r = {0, d.hi == POS_INF ? POS_INF : d.hi - 1};
    if (x.lo >= 0)
      r.hi = min64(r.hi, x.hi); /* x mod d <= x for x >= 0 */
    return r;
  }
  /* Any nonzero d: the result lies between d+1 and d-1, and includes 0. */
  return (iv){min64(0, d.lo == NEG_INF ? NEG_INF : d.lo + 1),
              max64(0, d.hi == POS_INF ? POS_INF : d.hi - 1)};
}

iv exi_iv_op(wv_exprs *X, ex_kind k, const ex_t *a, uint32_t n,
               bool ranged) {
  iv r = iv_child(X, a[0], ranged);
  switch (k) {
  case EX_ADD:
    for (uint32_t i = 1; i < n; i++)
      r = iv_add(r, iv_child(X, a[i], ranged));
    return r;
  case EX_MUL:
    for (uint32_t i = 1; i < n; i++)
      r = iv_mul(r, iv_child(X, a[i], ranged));
    return r;
  case EX_FLOORDIV:
    return iv_floordiv(r, iv_child(X, a[1], ranged));
  case EX_MOD:
    return iv_mod(r, iv_child(X, a[1], ranged));
  case EX_MIN:
  case EX_MAX:
    for (uint32_t i = 1; i < n; i++) {
      iv y = iv_child(X, a[i], ranged);
      if (k == EX_MIN)
        r = (iv){min64(r.lo, y.lo), min64(r.hi, y.hi)};
      else
        r = (iv){max64(r.lo, y.lo), max64(r.hi, y.hi)};
    }
    return r;
  default:
    return IV_ALL;
  }
}

/* ---- memo tables ------------------------------------------------------------
 */
void exi_memo_reserve(wv_exprs *X, ex_t id) {
  if (id < X->memo_cap)
    return;
  wavec_ctx *ctx = X->ctx;
  uint32_t need = X->nodes.cap > id ? X->nodes.cap : id + 1;
  /* Each wv_grow doubles from the same capacity: grow copies then commit. */
  uint32_t c;
  c = X->memo_cap;
  wv_grow(ctx, (void **)&X->simp_stamp, &c, need, sizeof(uint32_t));
  c = X->memo_cap;
  wv_grow(ctx, (void **)&X->simp_val, &c, need, sizeof(ex_t));
  c = X->memo_cap;
  wv_grow(ctx, (void **)&X->bnd_stamp, &c, need, sizeof(uint32_t));
  c = X->memo_cap;
  wv_grow(ctx, (void **)&X->bnd_lo, &c, need, sizeof(int64_t));
  c = X->memo_cap;
  wv_grow(ctx, (void **)&X->bnd_hi, &c, need, sizeof(int64_t));
  c = X->memo_cap;
  wv_grow(ctx, (void **)&X->sub_stamp, &c, need, sizeof(uint32_t));
  c = X->memo_cap;
  wv_grow(ctx, (void **)&X->sub_val, &c, need, sizeof(ex_t));
  X->memo_cap = c;
}

/* Starts a fresh epoch (stamps are never cleared; on wrap-around they are). */
uint32_t exi_next_epoch(wv_exprs *X, uint32_t e, uint32_t *stamps) {
  if (++e == 0) {
    if (stamps)
      memset(stamps, 0, X->memo_cap * sizeof *stamps);
    e = 1;
  }
  return e;
}

/* Makes r the current ranges, keeping the range epoch (and so the memo of
 * simplify and bounds) when they equal the last ones. */
void exi_set_ranges(wv_exprs *X, const ex_range *r, uint32_t nr) {
  X->r = r;
  X->nr = nr;
  bool same = X->rkey_valid && X->rkey_n == nr;
  for (uint32_t i = 0; same && i < nr; i++) {
    const ex_range *p = &X->rkey[i];
    same = p->known == r[i].known &&
           (!p->known || (p->lo == r[i].lo && p->hi == r[i].hi));
  }
  if (same)
    return;
  /* Invalidate first: should the copy unwind, no stale key survives. */
  X->rkey_valid = false;
  if (nr > X->rkey_cap)
    wv_grow(X->ctx, (void **)&X->rkey, &X->rkey_cap, nr, sizeof(ex_range));
  for (uint32_t i = 0; i < nr; i++)
    X->rkey[i] = r[i];
  X->rkey_n = nr;
  X->range_epoch = exi_next_epoch(X, X->range_epoch, X->simp_stamp);
  if (X->range_epoch == 1 && X->bnd_stamp)
    memset(X->bnd_stamp, 0, X->memo_cap * sizeof *X->bnd_stamp);
  X->rkey_valid = true;
}

/* ---- bounds under ranges
 * ------------------------------------------------------ */
iv exi_bounds(wv_exprs *X, ex_t e) {
  const ex_node *q = nd(X, e);
  if (q->kind == EX_CONST)
    return (iv){q->lo, q->hi};
  if (q->kind == EX_SYM) {
    if (q->a < X->nr && X->r[q->a].known)
      return (iv){X->r[q->a].lo, X->r[q->a].hi};
    return IV_ALL;
  }
  if (e < X->memo_cap && X->bnd_stamp[e] == X->range_epoch)
    return (iv){X->bnd_lo[e], X->bnd_hi[e]};
  iv r = exi_iv_op(X, (ex_kind)q->kind, &X->args.v[q->a], q->nargs, true);
  q = nd(X, e);
  /* The range-free bounds hold too. */
  r.lo = max64(r.lo, q->lo);
  r.hi = min64(r.hi, q->hi);
  exi_memo_reserve(X, e);
  X->bnd_stamp[e] = X->range_epoch;
  X->bnd_lo[e] = r.lo;
  X->bnd_hi[e] = r.hi;
  return r;
}

bool ex_bounds(wavec_ctx *ctx, ex_t e, const ex_range *r, uint32_t nr,
               int64_t *lo, int64_t *hi) {
  wv_exprs *X = ctx->ex;
  exi_set_ranges(X, r, nr);
  iv b = exi_bounds(X, e);
  *lo = b.lo;
  *hi = b.hi;
  return b.lo != NEG_INF && b.hi != POS_INF;
}

/* ---- evaluation ---------------------------------------------------------- */
typedef struct ev_env {
  const int64_t *vals;
  const bool *known;
  uint32_t n;
  bool overflow; /* set when a value does not fit in int64 */
} ev_env;

/* One step of evaluation, shared by ev and evb: a k b into *out, for the
 * n-ary kinds (one fold step) and the division ones. */
typedef enum { EV_OK, EV_UNDEF, EV_OVERFLOW } ev_res;

static inline ev_res ev_step(ex_kind k, int64_t a, int64_t b, int64_t *out) {
  switch (k) {
  case EX_ADD:
    return __builtin_add_overflow(a, b, out) ? EV_OVERFLOW : EV_OK;
  case EX_MUL:
    return __builtin_mul_overflow(a, b, out) ? EV_OVERFLOW : EV_OK;
  case EX_MIN:
    *out = min64(a, b);
    return EV_OK;
  case EX_MAX:
    *out = max64(a, b);
    return EV_OK;
  case EX_FLOORDIV:
  case EX_MOD:
    if (b == 0)
      return EV_UNDEF;
    if (b == -1) { /* avoids INT64_MIN / -1 */
      if (k == EX_FLOORDIV && a == INT64_MIN)
        return EV_OVERFLOW;
      *out = k == EX_MOD ? 0 : -a;
      return EV_OK;
    }
    *out = k == EX_FLOORDIV ? fdiv(a, b) : fmodi(a, b);
    return EV_OK;
  default:
    return EV_UNDEF;
  }
}

static bool ev(wv_exprs *X, ex_t e, ev_env *env, int64_t *out) {
  const ex_node *q = nd(X, e);
  ex_kind k = (ex_kind)q->kind;
  int64_t a, b;
  switch (k) {
  case EX_CONST:
    *out = q->coef;
    return true;
  case EX_SYM:
    if (q->a >= env->n || (env->known && !env->known[q->a]))
      return false;
    *out = env->vals[q->a];
    return true;
  case EX_ADD:
  case EX_MUL:
  case EX_MIN:
  case EX_MAX:
  case EX_FLOORDIV:
  case EX_MOD: {
    /* (the division kinds have two arguments: one step) */
    uint32_t off = q->a, n = q->nargs;
    if (!ev(X, X->args.v[off], env, &a))
      return false;
    for (uint32_t i = 1; i < n; i++) {
      if (!ev(X, X->args.v[off + i], env, &b))
        return false;
      ev_res r = ev_step(k, a, b, &a);
      if (r != EV_OK) {
        env->overflow |= r == EV_OVERFLOW;
        return false;
      }
    }
    *out = a;
    return true;
  }
  }
  return false;
}

bool ex_eval_ck(wavec_ctx *ctx, ex_t e, const int64_t *vals,
                const bool *known, uint32_t nvals, int64_t *out,
                bool *overflow) {
  ev_env env = {vals, known, nvals, false};
  bool ok = e && ev(ctx->ex, e, &env, out);
  if (overflow)
    *overflow = env.overflow;
  return ok;
}

bool ex_eval(wavec_ctx *ctx, ex_t e, const int64_t *vals, const bool *known,
             uint32_t nvals, int64_t *out) {
  return ex_eval_ck(ctx, e, vals, known, nvals, out, NULL);
}

/* ---- evaluation at many points ------------------------------------------
 * One walk of the expression per chunk of points, on arrays, instead of one
 * walk per point; the arithmetic is ev's, point by point. */
enum { EVB_CHUNK = 128 };

typedef struct evb_env {
  const int64_t *const *cols; /* per symbol: its value at each point */
  const int64_t *vals;        /* else one value for every point */
  const bool *known;
  uint32_t n;
  size_t base; /* the chunk's first point */
} evb_env;

static bool evb(wv_exprs *X, ex_t e, const evb_env *env, uint32_t cnt,
                int64_t *out) {
  const ex_node *q = nd(X, e);
  int64_t b[EVB_CHUNK];
  switch ((ex_kind)q->kind) {
  case EX_CONST:
    for (uint32_t i = 0; i < cnt; i++)
      out[i] = q->coef;
    return true;
  case EX_SYM:
    if (q->a >= env->n)
      return false;
    if (env->cols && env->cols[q->a]) {
      memcpy(out, env->cols[q->a] + env->base, cnt * sizeof *out);
      return true;
    }
    if (!env->vals || (env->known && !env->known[q->a]))
      return false;
    for (uint32_t i = 0; i < cnt; i++)
      out[i] = env->vals[q->a];
    return true;
  case EX_ADD:
  case EX_MUL:
  case EX_MIN:
  case EX_MAX:
  case EX_FLOORDIV:
  case EX_MOD: {
    uint32_t off = q->a, n = q->nargs;
    ex_kind k = (ex_kind)q->kind;
    if (!evb(X, X->args.v[off], env, cnt, out))
      return false;
    for (uint32_t a = 1; a < n; a++) {
      if (!evb(X, X->args.v[off + a], env, cnt, b))
        return false;
      bool ok = true;
      for (uint32_t i = 0; i < cnt; i++)
        ok &= ev_step(k, out[i], b[i], &out[i]) == EV_OK;
      if (!ok)
        return false;
    }
    return true;
  }
  }
  return false;
}

bool ex_eval_batch(wavec_ctx *ctx, ex_t e, const int64_t *const *cols,
                   const int64_t *vals, const bool *known, uint32_t nvals,
                   size_t npoints, int64_t *out) {
  if (!e)
    return false;
  evb_env env = {cols, vals, known, nvals, 0};
  for (; env.base < npoints; env.base += EVB_CHUNK) {
    size_t left = npoints - env.base;
    uint32_t cnt = left < EVB_CHUNK ? (uint32_t)left : EVB_CHUNK;
    if (!evb(ctx->ex, e, &env, cnt, out + env.base))
      return false;
  }
  return true;
}
