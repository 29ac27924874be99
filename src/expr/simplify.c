/* The index algebra: substitution (symbols replaced by expressions, the
 * result rebuilt through the constructors) and simplification under ranges
 * (expr.h, ex_simplify, says what it knows). */
#include "expr/expr_int.h"

/* ---- substitution
 * -------------------------------------------------------------- */
/* Rebuilds node e over new arguments through the constructors. */
static ex_t rebuild(wv_exprs *X, ex_t e, const ex_t *a, uint32_t n) {
  wavec_ctx *ctx = X->ctx;
  ex_kind k = kind(X, e);
  switch (k) {
  case EX_ADD: {
    ex_terms t;
    terms_init(&t);
    for (uint32_t i = 0; i < n; i++)
      exi_terms_add(X, &t, a[i], 1);
    exi_terms_canon(X, &t);
    return exi_terms_build(X, &t);
  }
  case EX_MUL: {
    ex_t r = a[0];
    for (uint32_t i = 1; i < n; i++)
      r = ex_mul(ctx, r, a[i]);
    return r;
  }
  case EX_FLOORDIV:
    return ex_floordiv(ctx, a[0], a[1]);
  case EX_MOD:
    return ex_mod(ctx, a[0], a[1]);
  case EX_MIN:
  case EX_MAX: {
    ex_list l;
    list_init(&l);
    for (uint32_t i = 0; i < n; i++)
      exi_flatten_into(X, &l, k, a[i]);
    return exi_minmax_build(X, k, &l, false);
  }
  default:
    return e;
  }
}

typedef struct subst_env {
  uint32_t n;
  const wavec_sym *syms;
  const ex_t *repl;
  uint64_t mask;
} subst_env;

static ex_t subst_rec(wv_exprs *X, ex_t e, const subst_env *s) {
  const ex_node *q = nd(X, e);
  if (!(q->mask & s->mask))
    return e;
  if (q->kind == EX_SYM) {
    for (uint32_t i = 0; i < s->n; i++)
      if (s->syms[i] == q->a)
        return s->repl[i];
    return e;
  }
  if (e < X->memo_cap && X->sub_stamp[e] == X->sub_epoch)
    return X->sub_val[e];
  uint32_t n = q->nargs;
  ex_t loc[LOCAL_N];
  ex_t *a = n <= LOCAL_N ? loc : wv_alloc(X->ctx, n * sizeof *a);
  bool changed = false;
  for (uint32_t i = 0; i < n; i++) {
    ex_t x = arg(X, e, i);
    a[i] = subst_rec(X, x, s);
    changed |= a[i] != x;
  }
  ex_t r = changed ? rebuild(X, e, a, n) : e;
  exi_memo_reserve(X, e);
  X->sub_stamp[e] = X->sub_epoch;
  X->sub_val[e] = r;
  return r;
}

ex_t ex_subst(wavec_ctx *ctx, ex_t e, uint32_t n, const wavec_sym *syms,
              const ex_t *repl) {
  wv_exprs *X = ctx->ex;
  subst_env s = {n, syms, repl, 0};
  for (uint32_t i = 0; i < n; i++)
    s.mask |= 1ull << (syms[i] & 63);
  X->sub_epoch = exi_next_epoch(X, X->sub_epoch, X->sub_stamp);
  return subst_rec(X, e, &s);
}

/* ---- simplification under ranges
 * ---------------------------------------------- */
static ex_t simp(wv_exprs *X, ex_t e);

/* Splits a sum over a divisor g of c:  a == g*B + S  where B collects the
 * terms whose coefficient g divides and S the rest (with the constant).
 * When the ranges put S within one period, q*g <= S < (q+1)*g:
 *   floor(a / c)  == floor((B + q) / (c/g))
 *   a mod c       == g * ((B + q) mod (c/g)) + (S - q*g)
 * (for c == g*k: floor((g*B + S)/g) == B + q, then floor(floor(y/g)/k) ==
 * floor(y/(g*k)); the mod follows from a == c*floor(a/c) + a mod c). The
 * largest g that works is used. Returns 0 when none does. */
static ex_t split_sum(wv_exprs *X, ex_kind k, ex_t a, int64_t c) {
  wavec_ctx *ctx = X->ctx;
  ex_terms t;
  terms_init(&t);
  exi_terms_add(X, &t, a, 1);
  int64_t tried[LOCAL_N];
  uint32_t ntried = 0;
  for (;;) {
    /* The next candidate: the largest untried gcd(coef, c) in (1, c). */
    int64_t g = 0;
    for (uint32_t i = 0; i < t.n; i++) {
      int64_t gi = (int64_t)gcd_u(uabs(t.v[i].coef), (uint64_t)c);
      if (gi <= 1 || gi >= c || gi <= g)
        continue;
      bool seen = false;
      for (uint32_t j = 0; j < ntried; j++)
        seen |= tried[j] == gi;
      if (!seen)
        g = gi;
    }
    if (!g || ntried == LOCAL_N)
      return 0;
    tried[ntried++] = g;
    ex_terms big, small;
    terms_init(&big);
    terms_init(&small);
    for (uint32_t i = 0; i < t.n; i++) {
      if (t.v[i].coef % g == 0)
        terms_push(X, &big, t.v[i].coef / g, t.v[i].base);
      else
        terms_push(X, &small, t.v[i].coef, t.v[i].base);
    }
    small.k = t.k;
    ex_t se = exi_terms_build(X, &small);
    iv sb = exi_bounds(X, se);
    if (sb.lo == NEG_INF || sb.hi == POS_INF ||
        fdiv(sb.lo, g) != fdiv(sb.hi, g))
      continue;
    int64_t q = fdiv(sb.lo, g);
    big.k = q;
    ex_t be = exi_terms_build(X, &big);
    ex_t cg = ex_const(ctx, c / g);
    if (k == EX_FLOORDIV)
      return ex_floordiv(ctx, be, cg);
    ex_t low = ex_sub(ctx, se, ex_const(ctx, ck_mul(X, q, g)));
    return ex_add(ctx, exi_scale(X, ex_mod(ctx, be, cg), g), low);
  }
}

/* Index of the term with this base in canonical (sorted) terms, or -1. */
static int terms_find(const ex_terms *t, ex_t base) {
  uint32_t lo = 0, hi = t->n;
  while (lo < hi) {
    uint32_t mid = (lo + hi) / 2;
    if (t->v[mid].base < base)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < t->n && t->v[lo].base == base ? (int)lo : -1;
}

/* a == b (exact, cm == 0) or a == b mod cm. */
static bool same_mod(int64_t a, int64_t b, int64_t cm) {
  int64_t d;
  if (__builtin_sub_overflow(a, b, &d))
    return false;
  return cm ? d % cm == 0 : d == 0;
}

/* One candidate of recombine: term j of t is cj * P * F where F is
 *   floor(x/d)                  (whole = x), or
 *   (floor(x/d) + q) mod m      (whole = (x + d*q) mod (d*m)).
 * With R0 = P * (x mod d) and k chosen so that t holds k*R0:
 *   k*d*P*F + k*R0 == k*P*whole
 * (x == d*floor(x/d) + x mod d; for the second form, with x' = x + d*q,
 * floor(x'/d) == floor(x/d) + q and d*(floor(x'/d) mod m) + x' mod d ==
 * x' mod (d*m)). When cj == k*d the sum becomes t - cj*P*F - k*R0 +
 * k*P*whole, equal to it; in a mod-cm context cj == k*d mod cm is enough,
 * the difference (k*d - cj)*P*F being a multiple of cm. */
static ex_t recombine_at(wv_exprs *X, const ex_terms *t, uint32_t j, ex_t p,
                         ex_t x, int64_t d, ex_t whole, int64_t cm) {
  wavec_ctx *ctx = X->ctx;
  ex_t r0 = ex_mul(ctx, p, ex_mod(ctx, x, ex_const(ctx, d)));
  ex_terms u;
  terms_init(&u);
  exi_terms_add(X, &u, r0, 1);
  if (u.n == 0)
    return 0;
  int i0 = terms_find(t, u.v[0].base);
  if (i0 < 0 || (uint32_t)i0 == j || t->v[i0].coef % u.v[0].coef != 0)
    return 0;
  int64_t k = t->v[i0].coef / u.v[0].coef, kd, ku;
  if (__builtin_mul_overflow(k, d, &kd) || !same_mod(kd, t->v[j].coef, cm))
    return 0;
  for (uint32_t i = 1; i < u.n; i++) {
    int at = terms_find(t, u.v[i].base);
    if (at < 0 || (uint32_t)at == j ||
        __builtin_mul_overflow(k, u.v[i].coef, &ku) ||
        !same_mod(t->v[at].coef, ku, cm))
      return 0;
  }
  ex_terms r;
  terms_init(&r);
  for (uint32_t i = 0; i < t->n; i++)
    if (i != j)
      terms_push(X, &r, t->v[i].coef, t->v[i].base);
  r.k = t->k;
  exi_terms_add(X, &r, r0, ck_neg(X, k));
  exi_terms_add(X, &r, ex_mul(ctx, p, whole), k);
  exi_terms_canon(X, &r);
  return exi_terms_build(X, &r);
}

/* Recombines terms of a sum that are one value cut in two, in any
 * coefficient and cofactor (see recombine_at):
 *   k*c*floor(x/c) + k*(x mod c)             == k*x
 *   k*c*((floor(x/c) + q) mod m) + k*(x mod c) == k*((x + c*q) mod (c*m))
 * Both hold for every integer x. floor(y/D) may stand for floor(x/d) with
 * x = floor(y/d1), D = d1*d (the constructors fold the nested floors), so
 * each divisor d1 of D is tried. cm != 0 means
 * the sum is the argument of a mod cm, where coefficients only matter
 * modulo cm. Returns 0 when no pair is found. */
static ex_t recombine(wv_exprs *X, ex_t e, int64_t cm) {
  wavec_ctx *ctx = X->ctx;
  ex_terms t;
  terms_init(&t);
  exi_terms_add(X, &t, e, 1);
  /* A pair needs a term with a mod in it besides the one with the floor. */
  uint32_t nmod = 0;
  for (uint32_t j = 0; j < t.n; j++) {
    const ex_t *fp;
    uint32_t nf = factors(X, t.v[j].base, &fp);
    for (uint32_t i = 0; i < nf; i++)
      if (kind(X, fp[i]) == EX_MOD) {
        nmod++;
        break;
      }
  }
  if (nmod == 0)
    return 0;
  for (uint32_t j = 0; j < t.n; j++) {
    const ex_t *fp;
    uint32_t nf = factors(X, t.v[j].base, &fp);
    if (nf > LOCAL_N)
      continue;
    ex_t f[LOCAL_N];
    memcpy(f, fp, nf * sizeof *f);
    for (uint32_t fi = 0; fi < nf; fi++) {
      ex_t fac = f[fi], fd = fac, y;
      int64_t big_d, m = 0, q = 0;
      if (kind(X, fac) == EX_MOD) {
        /* (floor(y/D) + q) mod m */
        if (!is_const(X, arg(X, fac, 1), &m) || m <= 0)
          continue;
        fd = arg(X, fac, 0);
        if (kind(X, fd) == EX_ADD && nd(X, fd)->nargs == 2 &&
            is_const(X, arg(X, fd, 1), &q))
          fd = arg(X, fd, 0);
      }
      if (kind(X, fd) != EX_FLOORDIV || !is_const(X, arg(X, fd, 1), &big_d) ||
          big_d <= 1)
        continue;
      y = arg(X, fd, 0);
      /* P: the other factors. */
      ex_t p = ex_const(ctx, 1);
      for (uint32_t i = 0; i < nf; i++)
        if (i != fi)
          p = ex_mul(ctx, p, f[i]);
      for (int64_t a = 1; a <= big_d / a; a++) {
        if (big_d % a)
          continue;
        int64_t pair[2] = {a, big_d / a};
        for (int s = 0; s < 2; s++) {
          int64_t d1 = pair[s], d = big_d / d1;
          if (s == 1 && pair[0] == pair[1])
            continue;
          ex_t x = d1 > 1 ? ex_floordiv(ctx, y, ex_const(ctx, d1)) : y;
          ex_t whole = x;
          if (m) {
            int64_t dq = ck_mul(X, d, q), dm = ck_mul(X, d, m);
            whole = ex_mod(ctx, ex_add(ctx, x, ex_const(ctx, dq)),
                           ex_const(ctx, dm));
          }
          ex_t r = recombine_at(X, &t, j, p, x, d, whole, cm);
          if (r)
            return r;
        }
      }
    }
  }
  return 0;
}

/* One round of the range rules on a node whose arguments are simplified.
 * Returns e when nothing applies. Each rule makes the expression strictly
 * smaller (fewer or smaller mods and floors, smaller divisors, fewer
 * terms), so repeating them ends. */
static ex_t rules(wv_exprs *X, ex_t e) {
  wavec_ctx *ctx = X->ctx;
  ex_kind k = kind(X, e);
  iv b = exi_bounds(X, e);
  if (b.lo == b.hi && b.lo != NEG_INF) /* one value in range */
    return ex_const(ctx, b.lo);
  switch (k) {
  case EX_FLOORDIV:
  case EX_MOD: {
    ex_t a = arg(X, e, 0), d = arg(X, e, 1);
    int64_t c, m;
    if (!is_const(X, d, &c)) {
      /* 0 <= a < d: floor(a/d) == 0, a mod d == a. */
      iv ba = exi_bounds(X, a), bd = exi_bounds(X, d);
      if (ba.lo >= 0 && bd.lo >= 1 && exi_bounds(X, ex_sub(ctx, d, a)).lo >= 1)
        return k == EX_FLOORDIV ? ex_const(ctx, 0) : a;
      return e;
    }
    if (c <= 1)
      return e;
    iv ba = exi_bounds(X, a);
    if (k == EX_MOD && ba.lo != NEG_INF && ba.hi != POS_INF &&
        fdiv(ba.lo, c) == fdiv(ba.hi, c)) /* one period: a mod c == a - q*c */
      return ex_sub(ctx, a, ex_const(ctx, ck_mul(X, fdiv(ba.lo, c), c)));
    /* floor((x mod (c*m)) / c) == floor(x/c) mod m: x == c*m*u + (x mod cm),
     * so floor(x/c) == m*u + floor((x mod cm)/c), the latter in [0, m). */
    if (k == EX_FLOORDIV && kind(X, a) == EX_MOD &&
        is_const(X, arg(X, a, 1), &m) && m > 0 && m % c == 0)
      return ex_mod(ctx, ex_floordiv(ctx, arg(X, a, 0), d),
                    ex_const(ctx, m / c));
    if (kind(X, a) == EX_ADD && k == EX_MOD) {
      ex_t r = recombine(X, a, c); /* coefficients matter modulo c only */
      if (r)
        return ex_mod(ctx, r, d);
    }
    if (kind(X, a) == EX_ADD) {
      ex_t r = split_sum(X, k, a, c);
      if (r)
        return r;
    }
    return e;
  }
  case EX_ADD: {
    ex_t r = recombine(X, e, 0);
    return r ? r : e;
  }
  case EX_MIN:
  case EX_MAX: {
    ex_list l;
    list_init(&l);
    uint32_t n = nd(X, e)->nargs;
    for (uint32_t i = 0; i < n; i++)
      list_push(X, &l, arg(X, e, i));
    return exi_minmax_build(X, k, &l, true);
  }
  default:
    return e;
  }
}

#define SIMP_MAX_DEPTH 400

static void simp_memo(wv_exprs *X, ex_t e, ex_t r) {
  exi_memo_reserve(X, e);
  X->simp_stamp[e] = X->range_epoch;
  X->simp_val[e] = r;
}

/* Bottom-up: simplify the arguments, rebuild (the constructors apply the
 * range-free rules), then apply the range rules until nothing changes. */
static ex_t simp(wv_exprs *X, ex_t e) {
  const ex_node *q = nd(X, e);
  if (q->kind == EX_CONST)
    return e;
  if (e < X->memo_cap && X->simp_stamp[e] == X->range_epoch)
    return X->simp_val[e];
  if (q->kind == EX_SYM) {
    iv b = exi_bounds(X, e);
    ex_t r = b.lo == b.hi && b.lo != NEG_INF ? ex_const(X->ctx, b.lo) : e;
    simp_memo(X, e, r);
    return r;
  }
  if (X->simp_depth >= SIMP_MAX_DEPTH) /* a safety net, never hit in tests */
    return e;
  X->simp_depth++;
  /* Recombine before the arguments are simplified too: simplifying them one
   * by one may rewrite the two halves of a pair differently. */
  if (q->kind == EX_ADD) {
    ex_t r = recombine(X, e, 0);
    if (r) {
      r = simp(X, r);
      X->simp_depth--;
      simp_memo(X, e, r);
      return r;
    }
  }
  uint32_t n = q->nargs;
  ex_t loc[LOCAL_N];
  ex_t *a = n <= LOCAL_N ? loc : wv_alloc(X->ctx, n * sizeof *a);
  bool changed = false;
  for (uint32_t i = 0; i < n; i++) {
    ex_t x = arg(X, e, i);
    a[i] = simp(X, x);
    changed |= a[i] != x;
  }
  ex_t r = changed ? rebuild(X, e, a, n) : e;
  if (r != e) {
    r = simp(X, r); /* a new node: its own round */
  } else {
    ex_t r2 = rules(X, r);
    if (r2 != r)
      r = simp(X, r2);
  }
  X->simp_depth--;
  simp_memo(X, e, r);
  if (r != e)
    simp_memo(X, r, r);
  return r;
}

ex_t ex_simplify(wavec_ctx *ctx, ex_t e, const ex_range *r, uint32_t nr) {
  wv_exprs *X = ctx->ex;
  exi_set_ranges(X, r, nr);
  X->simp_depth = 0;
  return simp(X, e);
}
