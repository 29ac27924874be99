/* The index algebra: hash-consed quasi-affine expressions; this file holds
 * the table and the canonicalising constructors.
 *
 * Representation. Every expression is a node in one per-context table; a
 * handle (ex_t) is the node's index, 0 being "none". Nodes are immutable once
 * made. Arguments live in one shared pool (`args`), a node holding an offset
 * and a count. Because the table grows with wv_grow_stable (copy into a new arena
 * block; the old one stays valid until the context dies), a stale node or
 * argument pointer still reads correct data for the nodes it held: growth
 * never causes a use-after-free, only waste.
 *
 * Canonical form (what every constructor returns; expr.h states it too):
 *  - CONST: a value. SYM: a symbol.
 *  - MUL: factors sorted by handle, none a CONST, ADD or MUL, except an
 *    optional constant coefficient (never 0 or 1) which is args[0]. Each node
 *    caches its "linear view" e == coef * base: a MUL with a coefficient has
 *    base = the coefficient-free product, every other non-constant node has
 *    coef 1 and base itself. A sum combines like terms through this view.
 *  - ADD: >= 2 arguments; terms (each coef*base with a nonzero coef and a
 *    base that no other term shares), sorted by base handle, then the
 *    constant, when nonzero, last.
 *  - FLOORDIV / MOD by a constant c: c > 1 (c == 0 is left as a node, whose
 *    evaluation fails). The numerator has no term whose coefficient is a
 *    multiple of c, no common factor with c, and its constant is reduced:
 *    to [0, c) for FLOORDIV; for MOD the coefficients are reduced into
 *    (-c/2, c/2], the constant into [0, c), and no term is k*(x mod m)
 *    with c dividing k*m.
 *  - MIN / MAX: flat, >= 2 distinct arguments sorted by handle, at most one
 *    constant, which is last; no argument that the range-free bounds prove
 *    can never be the result.
 * These are the rules that hold for every integer assignment; rules that
 * need ranges are ex_simplify's.
 *
 * Range-free ("intrinsic") bounds are computed once per node when it is made
 * (a symbol is unbounded; Mod(x, 16) lies in [0, 15]); the constructors use
 * them to drop a mod or floor that can never matter, whatever the symbols
 * are. Bounds use INT64_MIN / INT64_MAX as -inf / +inf.
 *
 * Constructors are fast on repeats: an operation cache maps (operator,
 * a, b) to the result (see OPC_SIZE). No constructor mallocs: scratch is
 * on the stack, moving to the arena only for unusually long sums.
 *
 * The other jobs live beside this file (expr_int.h lists them): bounds and
 * evaluation, substitution and simplification, printing.
 */
#include "expr/expr_int.h"

#include <stdlib.h>

/* Constructors refuse to build a value int64 cannot hold: the index would be
 * wrong on every target, so it is an error, not a wrap. */
_Noreturn void exi_overflow(wv_exprs *X) {
  wv_fail(X->ctx, D_OVERFLOW, X->ctx->at,
          "integer overflow: an integer computed here does not fit in 64 "
          "bits");
}

/* ---- the table ---------------------------------------------------------- */
wv_exprs *ex_table_new(wavec_ctx *ctx) {
  wv_exprs *X = wv_alloc(ctx, sizeof *X);
  X->ctx = ctx;
  X->slot_mask = 1023;
  X->slots = wv_alloc(ctx, (X->slot_mask + 1) * sizeof *X->slots);
  wv_grow_stable(ctx, (void **)&X->nodes.v, &X->nodes.cap, 512, sizeof(ex_node));
  wv_grow_stable(ctx, (void **)&X->args.v, &X->args.cap, 1024, sizeof(ex_t));
  X->nodes.n = 1; /* handle 0 is "none" */
  X->opc = wv_alloc(ctx, OPC_SIZE * sizeof *X->opc);
  return X;
}

static inline ex_opc *opc_at(wv_exprs *X, uint32_t op, ex_t a, ex_t b) {
  uint32_t h = (a * 0x9e3779b1u) ^ (b * 0x85ebca77u) ^ (op * 0xc2b2ae3du);
  h ^= h >> 15;
  return &X->opc[h & (OPC_SIZE - 1)];
}
static inline bool opc_hit(const ex_opc *c, uint32_t op, ex_t a, ex_t b) {
  return c->op == op && c->a == a && c->b == b;
}
/* Written only once the result exists: an unwind leaves no entry. */
static inline ex_t opc_put(ex_opc *c, uint32_t op, ex_t a, ex_t b, ex_t r) {
  *c = (ex_opc){op, a, b, r};
  return r;
}

static uint32_t hash_op(ex_kind k, const ex_t *a, uint32_t n) {
  uint64_t h = wv_hash_mix(0x9e37u + (uint64_t)k, n);
  for (uint32_t i = 0; i < n; i++)
    h = wv_hash_mix(h, a[i]);
  return (uint32_t)(h ^ (h >> 32));
}
static uint32_t hash_leaf(ex_kind k, int64_t v) {
  uint64_t h = wv_hash_mix(wv_hash_mix(0x7f4au + (uint64_t)k, (uint64_t)v), 0);
  return (uint32_t)(h ^ (h >> 32));
}

/* Makes room for one more node with n arguments. Everything that can unwind
 * (allocation) happens here, before the table is touched, so that a failure
 * leaves the table consistent. */
static void reserve(wv_exprs *X, uint32_t n) {
  wavec_ctx *ctx = X->ctx;
  if (X->nodes.n + 1 > X->nodes.cap)
    wv_grow_stable(ctx, (void **)&X->nodes.v, &X->nodes.cap, X->nodes.n + 1,
            sizeof(ex_node));
  if (X->args.n + n > X->args.cap)
    wv_grow_stable(ctx, (void **)&X->args.v, &X->args.cap, X->args.n + n,
            sizeof(ex_t));
  if (2 * (X->nodes.n + 1) > X->slot_mask + 1) {
    uint32_t ncap = 2 * (X->slot_mask + 1), m = ncap - 1;
    ex_t *ns = wv_alloc(ctx, ncap * sizeof *ns);
    for (ex_t id = 1; id < X->nodes.n; id++) {
      uint32_t i = X->nodes.v[id].hash & m;
      while (ns[i])
        i = (i + 1) & m;
      ns[i] = id;
    }
    X->slots = ns;
    X->slot_mask = m;
  }
}

static uint32_t empty_slot(wv_exprs *X, uint32_t h) {
  uint32_t i = h & X->slot_mask;
  while (X->slots[i])
    i = (i + 1) & X->slot_mask;
  return i;
}

static uint32_t probe_leaf(wv_exprs *X, uint32_t h, ex_kind k, int64_t v) {
  for (uint32_t i = h & X->slot_mask;; i = (i + 1) & X->slot_mask) {
    ex_t id = X->slots[i];
    if (!id)
      return i;
    const ex_node *q = &X->nodes.v[id];
    if (q->hash == h && q->kind == k &&
        (k == EX_CONST ? q->coef == v : q->a == (uint32_t)v))
      return i;
  }
}

static uint32_t probe_op(wv_exprs *X, uint32_t h, ex_kind k, const ex_t *a,
                         uint32_t n) {
  for (uint32_t i = h & X->slot_mask;; i = (i + 1) & X->slot_mask) {
    ex_t id = X->slots[i];
    if (!id)
      return i;
    const ex_node *q = &X->nodes.v[id];
    if (q->hash == h && q->kind == k && q->nargs == n &&
        memcmp(&X->args.v[q->a], a, n * sizeof *a) == 0)
      return i;
  }
}

static ex_t push_node(wv_exprs *X, const ex_node *proto, uint32_t slot) {
  ex_t id = X->nodes.n++;
  X->nodes.v[id] = *proto;
  X->slots[slot] = id;
  return id;
}

ex_t ex_const(wavec_ctx *ctx, int64_t v) {
  wv_exprs *X = ctx->ex;
  bool small = v >= -SMALL_CONST && v <= SMALL_CONST;
  if (small && X->small[v + SMALL_CONST])
    return X->small[v + SMALL_CONST];
  uint32_t h = hash_leaf(EX_CONST, v);
  uint32_t s = probe_leaf(X, h, EX_CONST, v);
  ex_t id = X->slots[s];
  if (!id) {
    reserve(X, 0);
    iv b = iv_const(v);
    ex_node p = {
        .kind = EX_CONST, .hash = h, .coef = v, .lo = b.lo, .hi = b.hi};
    id = push_node(X, &p, empty_slot(X, h));
  }
  if (small)
    X->small[v + SMALL_CONST] = id;
  return id;
}

ex_t ex_sym(wavec_ctx *ctx, wavec_sym s) {
  wv_exprs *X = ctx->ex;
  uint32_t h = hash_leaf(EX_SYM, s);
  uint32_t slot = probe_leaf(X, h, EX_SYM, s);
  if (X->slots[slot])
    return X->slots[slot];
  reserve(X, 0);
  ex_node p = {.kind = EX_SYM,
               .a = s,
               .hash = h,
               .coef = 1,
               .lo = NEG_INF,
               .hi = POS_INF,
               .mask = 1ull << (s & 63)};
  ex_t id = push_node(X, &p, empty_slot(X, h));
  X->nodes.v[id].base = id;
  return id;
}

/* Interns an operator node whose arguments are already canonical. For a MUL
 * with a coefficient (args[0] constant), base is its coefficient-free
 * product; otherwise base is ignored. */
static ex_t intern(wv_exprs *X, ex_kind k, const ex_t *a, uint32_t n,
                   ex_t base) {
  uint32_t h = hash_op(k, a, n);
  uint32_t s = probe_op(X, h, k, a, n);
  if (X->slots[s])
    return X->slots[s];
  reserve(X, n);
  ex_node p = {
      .kind = (uint8_t)k, .nargs = n, .a = X->args.n, .hash = h, .coef = 1};
  uint64_t mask = 0;
  for (uint32_t i = 0; i < n; i++)
    mask |= X->nodes.v[a[i]].mask;
  p.mask = mask;
  iv b = exi_iv_op(X, k, a, n, false);
  p.lo = b.lo;
  p.hi = b.hi;
  if (k == EX_MUL && kind(X, a[0]) == EX_CONST) {
    p.coef = nd(X, a[0])->coef;
    p.base = base;
  }
  memcpy(&X->args.v[X->args.n], a, n * sizeof *a);
  X->args.n += n;
  ex_t id = push_node(X, &p, empty_slot(X, h));
  if (!X->nodes.v[id].base)
    X->nodes.v[id].base = id;
  return id;
}

/* ---- sums and products of terms (scratch arrays: expr_int.h) ------------- */
static int cmp_handle(const void *a, const void *b) {
  ex_t x = *(const ex_t *)a, y = *(const ex_t *)b;
  return (x > y) - (x < y);
}
static void sort_handles(ex_t *v, uint32_t n) {
  if (n > 24) {
    qsort(v, n, sizeof *v, cmp_handle);
    return;
  }
  for (uint32_t i = 1; i < n; i++) { /* short, mostly sorted: insertion */
    ex_t x = v[i];
    uint32_t j = i;
    for (; j > 0 && v[j - 1] > x; j--)
      v[j] = v[j - 1];
    v[j] = x;
  }
}
static int cmp_term_base(const void *a, const void *b) {
  ex_t x = ((const ex_term *)a)->base, y = ((const ex_term *)b)->base;
  return (x > y) - (x < y);
}

/* Adds scale * e to t (e canonical). */
void exi_terms_add(wv_exprs *X, ex_terms *t, ex_t e, int64_t scale) {
  const ex_node *q = nd(X, e);
  if (q->kind == EX_CONST) {
    t->k = ck_add(X, t->k, ck_mul(X, scale, q->coef));
    return;
  }
  if (q->kind != EX_ADD) {
    terms_push(X, t, ck_mul(X, scale, q->coef), q->base);
    return;
  }
  uint32_t off = q->a, n = q->nargs;
  for (uint32_t i = 0; i < n; i++) {
    const ex_node *ti = nd(X, X->args.v[off + i]);
    if (ti->kind == EX_CONST)
      t->k = ck_add(X, t->k, ck_mul(X, scale, ti->coef));
    else
      terms_push(X, t, ck_mul(X, scale, ti->coef), ti->base);
  }
}

/* Sorts by base, combines like terms, drops zero coefficients. */
void exi_terms_canon(wv_exprs *X, ex_terms *t) {
  ex_term *v = t->v;
  uint32_t n = t->n;
  if (n > 24) {
    qsort(v, n, sizeof *v, cmp_term_base);
  } else {
    for (uint32_t i = 1; i < n; i++) {
      ex_term x = v[i];
      uint32_t j = i;
      for (; j > 0 && v[j - 1].base > x.base; j--)
        v[j] = v[j - 1];
      v[j] = x;
    }
  }
  uint32_t m = 0;
  for (uint32_t i = 0; i < n;) {
    ex_term x = v[i++];
    while (i < n && v[i].base == x.base)
      x.coef = ck_add(X, x.coef, v[i++].coef);
    if (x.coef)
      v[m++] = x;
  }
  t->n = m;
}

/* coef * factors (sorted, non-constant, >= 1), canonical. */
static ex_t build_mul(wv_exprs *X, int64_t coef, const ex_t *f, uint32_t nf) {
  if (coef == 0)
    return ex_const(X->ctx, 0);
  ex_t base = nf == 1 ? f[0] : intern(X, EX_MUL, f, nf, 0);
  if (coef == 1)
    return base;
  ex_t loc[LOCAL_N + 1];
  ex_t *a =
      nf + 1 <= LOCAL_N + 1 ? loc : wv_alloc(X->ctx, (nf + 1) * sizeof *a);
  a[0] = ex_const(X->ctx, coef);
  memcpy(a + 1, f, nf * sizeof *f);
  return intern(X, EX_MUL, a, nf + 1, base);
}

/* coef * base, where base is a coefficient-free non-constant node. */
static ex_t make_term(wv_exprs *X, int64_t coef, ex_t base) {
  if (coef == 0)
    return ex_const(X->ctx, 0);
  if (coef == 1)
    return base;
  if (kind(X, base) != EX_MUL)
    return build_mul(X, coef, &base, 1);
  uint32_t n = nd(X, base)->nargs;
  ex_t loc[LOCAL_N + 1];
  ex_t *a = n + 1 <= LOCAL_N + 1 ? loc : wv_alloc(X->ctx, (n + 1) * sizeof *a);
  a[0] = ex_const(X->ctx, coef);
  memcpy(a + 1, &X->args.v[nd(X, base)->a], n * sizeof *a);
  return intern(X, EX_MUL, a, n + 1, base);
}

/* The sum of canonical terms t (sorted, combined). */
ex_t exi_terms_build(wv_exprs *X, const ex_terms *t) {
  uint32_t n = t->n;
  if (n == 0)
    return ex_const(X->ctx, t->k);
  if (n == 1 && t->k == 0)
    return make_term(X, t->v[0].coef, t->v[0].base);
  ex_list l;
  list_init(&l);
  for (uint32_t i = 0; i < n; i++)
    list_push(X, &l, make_term(X, t->v[i].coef, t->v[i].base));
  if (t->k)
    list_push(X, &l, ex_const(X->ctx, t->k));
  return intern(X, EX_ADD, l.v, l.n, 0);
}

/* ---- constructors ---------------------------------------------------------
 */
ex_t ex_add(wavec_ctx *ctx, ex_t a, ex_t b) {
  wv_exprs *X = ctx->ex;
  wv_assert(ctx, a && b); /* 0 is "no expression" */
  int64_t va, vb;
  bool ca = is_const(X, a, &va), cb = is_const(X, b, &vb);
  if (ca && cb)
    return ex_const(ctx, ck_add(X, va, vb));
  if (ca && va == 0)
    return b;
  if (cb && vb == 0)
    return a;
  if (a > b) { /* commutative: one cache entry for both orders */
    ex_t s = a;
    a = b;
    b = s;
  }
  ex_opc *oc = opc_at(X, OPC_ADD, a, b);
  if (opc_hit(oc, OPC_ADD, a, b))
    return oc->r;
  ex_terms t;
  terms_init(&t);
  exi_terms_add(X, &t, a, 1);
  exi_terms_add(X, &t, b, 1);
  exi_terms_canon(X, &t);
  return opc_put(oc, OPC_ADD, a, b, exi_terms_build(X, &t));
}

/* c * e. Scaling keeps a sum's term order, so no sort is needed. */
ex_t exi_scale(wv_exprs *X, ex_t e, int64_t c) {
  if (c == 1)
    return e;
  if (c == 0)
    return ex_const(X->ctx, 0);
  const ex_node *q = nd(X, e);
  if (q->kind == EX_CONST)
    return ex_const(X->ctx, ck_mul(X, q->coef, c));
  if (q->kind != EX_ADD)
    return make_term(X, ck_mul(X, q->coef, c), q->base);
  ex_terms t;
  terms_init(&t);
  exi_terms_add(X, &t, e, c);
  return exi_terms_build(X, &t);
}

ex_t ex_neg(wavec_ctx *ctx, ex_t a) {
  wv_assert(ctx, a);
  return exi_scale(ctx->ex, a, -1);
}

ex_t ex_sub(wavec_ctx *ctx, ex_t a, ex_t b) {
  wv_assert(ctx, a && b);
  return ex_add(ctx, a, exi_scale(ctx->ex, b, -1));
}

/* Product of two non-constant, non-sum canonical nodes. */
static ex_t mul_mono(wv_exprs *X, ex_t a, ex_t b) {
  int64_t coef = ck_mul(X, nd(X, a)->coef, nd(X, b)->coef);
  const ex_t *fa, *fb;
  uint32_t na = factors(X, nd(X, a)->base, &fa);
  uint32_t nb = factors(X, nd(X, b)->base, &fb);
  ex_list l;
  list_init(&l);
  for (uint32_t i = 0; i < na; i++)
    list_push(X, &l, fa[i]);
  for (uint32_t i = 0; i < nb; i++)
    list_push(X, &l, fb[i]);
  sort_handles(l.v, l.n);
  return build_mul(X, coef, l.v, l.n);
}

ex_t ex_mul(wavec_ctx *ctx, ex_t a, ex_t b) {
  wv_exprs *X = ctx->ex;
  wv_assert(ctx, a && b); /* 0 is "no expression" */
  int64_t c;
  if (is_const(X, a, &c))
    return exi_scale(X, b, c);
  if (is_const(X, b, &c))
    return exi_scale(X, a, c);
  if (a > b) {
    ex_t s = a;
    a = b;
    b = s;
  }
  ex_opc *oc = opc_at(X, OPC_MUL, a, b);
  if (opc_hit(oc, OPC_MUL, a, b))
    return oc->r;
  if (kind(X, a) != EX_ADD && kind(X, b) != EX_ADD)
    return opc_put(oc, OPC_MUL, a, b, mul_mono(X, a, b));
  /* Symbolic products distribute over sums: the canonical form of a
   * polynomial is its expanded sum of monomials. */
  ex_terms ta, tb, r;
  terms_init(&ta);
  terms_init(&tb);
  terms_init(&r);
  exi_terms_add(X, &ta, a, 1);
  exi_terms_add(X, &tb, b, 1);
  r.k = ck_mul(X, ta.k, tb.k);
  for (uint32_t i = 0; i <= ta.n; i++) {
    for (uint32_t j = 0; j <= tb.n; j++) {
      if (i == ta.n && j == tb.n)
        continue;
      ex_t p;
      if (i == ta.n)
        p = make_term(X, ck_mul(X, ta.k, tb.v[j].coef), tb.v[j].base);
      else if (j == tb.n)
        p = make_term(X, ck_mul(X, tb.k, ta.v[i].coef), ta.v[i].base);
      else
        p = mul_mono(X, make_term(X, ta.v[i].coef, ta.v[i].base),
                     make_term(X, tb.v[j].coef, tb.v[j].base));
      exi_terms_add(X, &r, p, 1);
    }
  }
  exi_terms_canon(X, &r);
  return opc_put(oc, OPC_MUL, a, b, exi_terms_build(X, &r));
}

/* gcd of c and of every coefficient and the constant of t. */
static uint64_t terms_gcd(const ex_terms *t, int64_t c) {
  uint64_t g = gcd_u(uabs(c), uabs(t->k));
  for (uint32_t i = 0; i < t->n && g != 1; i++)
    g = gcd_u(g, uabs(t->v[i].coef));
  return g;
}

static ex_t floordiv_pos(wv_exprs *X, ex_t a, int64_t c);

/* floor(a / c), c > 1: the rules that hold for every integer value. */
static ex_t floordiv_pos(wv_exprs *X, ex_t a, int64_t c) {
  wavec_ctx *ctx = X->ctx;
  ex_terms t, q, r;
  terms_init(&t);
  exi_terms_add(X, &t, a, 1);
  /* floor(g*u / (g*v)) == floor(u / v). */
  int64_t g = (int64_t)terms_gcd(&t, c);
  if (g > 1) {
    for (uint32_t i = 0; i < t.n; i++)
      t.v[i].coef /= g;
    t.k /= g;
    c /= g;
  }
  if (c == 1)
    return exi_terms_build(X, &t);
  /* floor((c*u + w) / c) == u + floor(w / c): multiples of c leave. */
  terms_init(&q);
  terms_init(&r);
  for (uint32_t i = 0; i < t.n; i++) {
    if (t.v[i].coef % c == 0)
      terms_push(X, &q, t.v[i].coef / c, t.v[i].base);
    else
      terms_push(X, &r, t.v[i].coef, t.v[i].base);
  }
  q.k = fdiv(t.k, c);
  r.k = fmodi(t.k, c);
  ex_t qe = exi_terms_build(X, &q);
  if (r.n == 0) /* floor(r.k / c) == 0 since 0 <= r.k < c */
    return qe;
  ex_t re = exi_terms_build(X, &r);
  const ex_node *rn = nd(X, re);
  if (rn->lo != NEG_INF && rn->hi != POS_INF &&
      fdiv(rn->lo, c) == fdiv(rn->hi, c)) /* always in one period */
    return ex_add(ctx, qe, ex_const(ctx, fdiv(rn->lo, c)));
  /* floor((floor(x/d) + k) / c) == floor((x + d*k) / (d*c)) for d > 0. */
  int64_t d;
  if (r.n == 1 && r.v[0].coef == 1 && kind(X, r.v[0].base) == EX_FLOORDIV &&
      is_const(X, arg(X, r.v[0].base, 1), &d) && d > 0) {
    ex_t x = arg(X, r.v[0].base, 0);
    ex_t inner = ex_add(ctx, x, ex_const(ctx, ck_mul(X, d, r.k)));
    return ex_add(ctx, qe, floordiv_pos(X, inner, ck_mul(X, d, c)));
  }
  ex_t args[2] = {re, ex_const(ctx, c)};
  return ex_add(ctx, qe, intern(X, EX_FLOORDIV, args, 2, 0));
}

ex_t ex_floordiv(wavec_ctx *ctx, ex_t a, ex_t b) {
  wv_exprs *X = ctx->ex;
  wv_assert(ctx, a && b); /* 0 is "no expression" */
  int64_t c, va;
  if (!is_const(X, b, &c) || c == 0) {
    ex_t args[2] = {a, b};
    return intern(X, EX_FLOORDIV, args, 2, 0);
  }
  if (is_const(X, a, &va)) {
    if (c == -1)
      return ex_const(ctx, ck_neg(X, va));
    return ex_const(ctx, fdiv(va, c));
  }
  if (c == 1)
    return a;
  ex_opc *oc = opc_at(X, OPC_FLOORDIV, a, b);
  if (opc_hit(oc, OPC_FLOORDIV, a, b))
    return oc->r;
  ex_t r = c < 0 /* floor(a / c) == floor(-a / -c) */
               ? floordiv_pos(X, exi_scale(X, a, -1), ck_neg(X, c))
               : floordiv_pos(X, a, c);
  return opc_put(oc, OPC_FLOORDIV, a, b, r);
}

ex_t ex_ceildiv(wavec_ctx *ctx, ex_t a, ex_t b) {
  wv_exprs *X = ctx->ex;
  wv_assert(ctx, a && b); /* 0 is "no expression" */
  int64_t c;
  if (is_const(X, b, &c) && c > 0) /* ceil(a/c) == floor((a + c-1) / c) */
    return ex_floordiv(ctx, ex_add(ctx, a, ex_const(ctx, c - 1)), b);
  return exi_scale(X, ex_floordiv(ctx, exi_scale(X, a, -1), b), -1);
}

/* a mod c, c > 1: the rules that hold for every integer value. */
static ex_t mod_pos(wv_exprs *X, ex_t a, int64_t c) {
  wavec_ctx *ctx = X->ctx;
  ex_terms t;
  terms_init(&t);
  exi_terms_add(X, &t, a, 1);
  /* (k*c*u + w) mod c == w mod c: coefficients reduce into (-c/2, c/2]
   * (the smallest in size, for readable output), the constant into [0, c).
   * (k*(x mod m) + w) mod c == (k*x + w) mod c when c divides k*m, since
   * k*(x mod m) == k*x - k*m*floor(x/m). */
  bool unwrapped = false;
  ex_terms inner;
  terms_init(&inner);
  uint32_t m = 0;
  for (uint32_t i = 0; i < t.n; i++) {
    int64_t k = fmodi(t.v[i].coef, c);
    if (k > c / 2)
      k -= c;
    if (k == 0)
      continue;
    ex_t b = t.v[i].base;
    int64_t dm;
    if (kind(X, b) == EX_MOD && is_const(X, arg(X, b, 1), &dm) && dm > 0 &&
        dm % (c / (int64_t)gcd_u(uabs(k), (uint64_t)c)) == 0) {
      exi_terms_add(X, &inner, arg(X, b, 0), k);
      unwrapped = true;
      continue;
    }
    t.v[m++] = (ex_term){k, b};
  }
  t.n = m;
  t.k = fmodi(t.k, c);
  if (unwrapped) {
    for (uint32_t i = 0; i < t.n; i++)
      terms_push(X, &inner, t.v[i].coef, t.v[i].base);
    inner.k = ck_add(X, inner.k, t.k); /* the unwrapped x may have one too */
    exi_terms_canon(X, &inner);
    return ex_mod(ctx, exi_terms_build(X, &inner), ex_const(ctx, c));
  }
  if (t.n == 0)
    return ex_const(ctx, t.k);
  /* (g*u) mod (g*v) == g * (u mod v). */
  int64_t g = (int64_t)terms_gcd(&t, c);
  if (g > 1) {
    for (uint32_t i = 0; i < t.n; i++)
      t.v[i].coef /= g;
    t.k /= g;
    return exi_scale(X, mod_pos(X, exi_terms_build(X, &t), c / g), g);
  }
  ex_t re = exi_terms_build(X, &t);
  const ex_node *rn = nd(X, re);
  if (rn->lo != NEG_INF && rn->hi != POS_INF &&
      fdiv(rn->lo, c) == fdiv(rn->hi, c)) /* always in one period */
    return ex_sub(ctx, re, ex_const(ctx, ck_mul(X, c, fdiv(rn->lo, c))));
  ex_t args[2] = {re, ex_const(ctx, c)};
  return intern(X, EX_MOD, args, 2, 0);
}

ex_t ex_mod(wavec_ctx *ctx, ex_t a, ex_t b) {
  wv_exprs *X = ctx->ex;
  wv_assert(ctx, a && b); /* 0 is "no expression" */
  int64_t c, va;
  if (!is_const(X, b, &c) || c == 0) {
    ex_t args[2] = {a, b};
    return intern(X, EX_MOD, args, 2, 0);
  }
  if (c == 1 || c == -1)
    return ex_const(ctx, 0);
  if (is_const(X, a, &va))
    return ex_const(ctx, fmodi(va, c));
  ex_opc *oc = opc_at(X, OPC_MOD, a, b);
  if (opc_hit(oc, OPC_MOD, a, b))
    return oc->r;
  ex_t r = c < 0 /* a mod c == -((-a) mod -c) */
               ? exi_scale(X, mod_pos(X, exi_scale(X, a, -1), ck_neg(X, c)), -1)
               : mod_pos(X, a, c);
  return opc_put(oc, OPC_MOD, a, b, r);
}

/* Min or max of the arguments in l (flattened already), canonical. An
 * argument is dropped when another's bounds show it can never be the
 * result: bounds are range-free here, the current ranges in simplify. */
ex_t exi_minmax_build(wv_exprs *X, ex_kind k, ex_list *l, bool ranged) {
  wavec_ctx *ctx = X->ctx;
  /* Fold the constants into one. */
  bool have_c = false;
  int64_t cv = 0;
  uint32_t m = 0;
  for (uint32_t i = 0; i < l->n; i++) {
    int64_t v;
    if (is_const(X, l->v[i], &v)) {
      cv = !have_c ? v : k == EX_MIN ? min64(cv, v) : max64(cv, v);
      have_c = true;
    } else {
      l->v[m++] = l->v[i];
    }
  }
  l->n = m;
  if (have_c)
    list_push(X, l, ex_const(ctx, cv));
  sort_handles(l->v, l->n);
  m = 0;
  for (uint32_t i = 0; i < l->n; i++)
    if (m == 0 || l->v[m - 1] != l->v[i])
      l->v[m++] = l->v[i];
  l->n = m;
  /* Drop dominated arguments, one at a time so that two always-equal
   * arguments do not drop each other. */
  m = 0;
  for (uint32_t i = 0; i < l->n; i++) {
    iv bi = iv_child(X, l->v[i], ranged);
    bool drop = false;
    for (uint32_t j = 0; j < l->n && !drop; j++) {
      if (j == i || (j < i && l->v[j] == 0))
        continue;
      iv bj = iv_child(X, l->v[j], ranged);
      drop = k == EX_MIN ? bj.hi <= bi.lo : bj.lo >= bi.hi;
      if (!drop && ranged && kind(X, l->v[i]) != EX_CONST) {
        /* Compare through the difference: min(t, t + 1) == t. */
        iv d = exi_bounds(X, ex_sub(ctx, l->v[i], l->v[j]));
        drop = k == EX_MIN ? d.lo >= 0 : d.hi <= 0;
      }
    }
    if (drop)
      l->v[i] = 0; /* marked; removed below */
  }
  for (uint32_t i = 0; i < l->n; i++)
    if (l->v[i])
      l->v[m++] = l->v[i];
  l->n = m;
  if (l->n == 1)
    return l->v[0];
  /* The constant goes last, as in a sum. */
  for (uint32_t i = 0; i + 1 < l->n; i++) {
    if (kind(X, l->v[i]) == EX_CONST) {
      ex_t c = l->v[i];
      memmove(&l->v[i], &l->v[i + 1], (l->n - i - 1) * sizeof(ex_t));
      l->v[l->n - 1] = c;
      break;
    }
  }
  return intern(X, k, l->v, l->n, 0);
}

void exi_flatten_into(wv_exprs *X, ex_list *l, ex_kind k, ex_t e) {
  if (kind(X, e) != k) {
    list_push(X, l, e);
    return;
  }
  uint32_t n = nd(X, e)->nargs;
  for (uint32_t i = 0; i < n; i++)
    list_push(X, l, arg(X, e, i));
}

static ex_t minmax(wv_exprs *X, ex_kind k, ex_t a, ex_t b) {
  wv_assert(X->ctx, a && b);
  if (a == b)
    return a;
  if (a > b) {
    ex_t s = a;
    a = b;
    b = s;
  }
  uint32_t op = k == EX_MIN ? OPC_MIN : OPC_MAX;
  ex_opc *oc = opc_at(X, op, a, b);
  if (opc_hit(oc, op, a, b))
    return oc->r;
  ex_list l;
  list_init(&l);
  exi_flatten_into(X, &l, k, a);
  exi_flatten_into(X, &l, k, b);
  return opc_put(oc, op, a, b, exi_minmax_build(X, k, &l, false));
}

ex_t ex_min(wavec_ctx *ctx, ex_t a, ex_t b) {
  return minmax(ctx->ex, EX_MIN, a, b);
}
ex_t ex_max(wavec_ctx *ctx, ex_t a, ex_t b) {
  return minmax(ctx->ex, EX_MAX, a, b);
}

/* ---- inspection ------------------------------------------------------------
 */
ex_kind ex_kind_of(wavec_ctx *ctx, ex_t e) {
  return kind(ctx->ex, e);
}
uint32_t ex_nargs(wavec_ctx *ctx, ex_t e) {
  return nd(ctx->ex, e)->nargs;
}
ex_t ex_arg(wavec_ctx *ctx, ex_t e, uint32_t i) {
  wv_exprs *X = ctx->ex;
  wv_assert(ctx, i < nd(X, e)->nargs);
  return arg(X, e, i);
}
bool ex_is_const(wavec_ctx *ctx, ex_t e, int64_t *v) {
  return is_const(ctx->ex, e, v);
}
wavec_sym ex_sym_of(wavec_ctx *ctx, ex_t e) {
  const ex_node *q = nd(ctx->ex, e);
  return q->kind == EX_SYM ? q->a : 0;
}
uint32_t ex_count(wavec_ctx *ctx) {
  return ctx->ex->nodes.n - 1;
}

void ex_linear(wavec_ctx *ctx, ex_t e, int64_t *coef, ex_t *base) {
  const ex_node *q = nd(ctx->ex, e);
  *coef = q->coef;
  *base = q->base;
}

bool ex_multiple_of(wavec_ctx *ctx, ex_t e, int64_t m) {
  int64_t v;
  if (m == 1 || (ex_is_const(ctx, e, &v) && v % m == 0))
    return true;
  uint32_t n = ex_nargs(ctx, e);
  switch (ex_kind_of(ctx, e)) {
  case EX_MUL:
    for (uint32_t i = 0; i < n; i++)
      if (ex_multiple_of(ctx, ex_arg(ctx, e, i), m))
        return true;
    return false;
  case EX_ADD:
  case EX_MIN:
  case EX_MAX:
    for (uint32_t i = 0; i < n; i++)
      if (!ex_multiple_of(ctx, ex_arg(ctx, e, i), m))
        return false;
    return true;
  case EX_MOD: /* a mod d = a - d*floor(a/d) */
    return ex_is_const(ctx, ex_arg(ctx, e, 1), &v) && v % m == 0 &&
           ex_multiple_of(ctx, ex_arg(ctx, e, 0), m);
  default: return false;
  }
}

static bool uses(wv_exprs *X, ex_t e, wavec_sym s, uint64_t bit) {
  const ex_node *q = nd(X, e);
  if (!(q->mask & bit))
    return false;
  if (q->kind == EX_SYM)
    return q->a == s;
  for (uint32_t i = 0; i < q->nargs; i++)
    if (uses(X, arg(X, e, i), s, bit))
      return true;
  return false;
}
bool ex_uses(wavec_ctx *ctx, ex_t e, wavec_sym s) {
  return uses(ctx->ex, e, s, 1ull << (s & 63));
}

static void collect_syms(wv_exprs *X, ex_t e, ex_list *l) {
  const ex_node *q = nd(X, e);
  if (!q->mask)
    return;
  if (q->kind == EX_SYM) {
    for (uint32_t i = 0; i < l->n; i++)
      if (l->v[i] == q->a)
        return;
    list_push(X, l, q->a);
    return;
  }
  for (uint32_t i = 0; i < q->nargs; i++)
    collect_syms(X, arg(X, e, i), l);
}

void ex_syms(wavec_ctx *ctx, ex_t e, void (*f)(void *ud, wavec_sym s),
             void *ud) {
  wv_exprs *X = ctx->ex;
  ex_list l;
  list_init(&l);
  collect_syms(X, e, &l);
  /* By name, so that the order does not depend on creation history. */
  for (uint32_t i = 1; i < l.n; i++) {
    ex_t s = l.v[i];
    uint32_t j = i;
    for (; j > 0 && strcmp(wavec_symbol_name(ctx, l.v[j - 1]),
                           wavec_symbol_name(ctx, s)) > 0;
         j--)
      l.v[j] = l.v[j - 1];
    l.v[j] = s;
  }
  for (uint32_t i = 0; i < l.n; i++)
    f(ud, l.v[i]);
}
