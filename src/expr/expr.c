/* The index algebra: hash-consed quasi-affine expressions.
 *
 * Representation. Every expression is a node in one per-context table; a
 * handle (ex_t) is the node's index, 0 being "none". Nodes are immutable once
 * made. Arguments live in one shared pool (`args`), a node holding an offset
 * and a count. Because the table grows with wv_grow (copy into a new arena
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
 * Memo tables for simplify, bounds and subst are indexed by node id and
 * stamped with an epoch, so starting a new query costs nothing. Simplify
 * and bounds results are kept while the ranges given are the same as the
 * last call's: the passes ask many questions under one set of ranges.
 */
#include "expr/expr.h"

#include <stdlib.h>

#define NEG_INF INT64_MIN
#define POS_INF INT64_MAX

typedef struct ex_node {
  uint8_t kind;
  uint32_t nargs;
  uint32_t a; /* offset into args; EX_SYM: the symbol */
  uint32_t hash;
  ex_t base;      /* this == coef * base; 0 for EX_CONST */
  int64_t coef;   /* EX_CONST: the value */
  int64_t lo, hi; /* range-free bounds */
  uint64_t mask;  /* symbols mentioned: bit (s % 64) */
} ex_node;

typedef struct ex_term {
  int64_t coef;
  ex_t base;
} ex_term;

#define SMALL_CONST 64 /* constants in [-64, 64] are cached */

/* The operation cache: a direct-mapped table from (operator, a, b) to the
 * constructor's result, as in BDD packages. The passes build the same
 * indices again and again; a hit skips the canonicalisation. Entries never
 * go stale (nodes are immutable and constructors ignore ranges); a
 * collision just overwrites. */
enum { OPC_ADD = 1, OPC_MUL, OPC_FLOORDIV, OPC_MOD, OPC_MIN, OPC_MAX };
#define OPC_SIZE 4096
typedef struct ex_opc {
  uint32_t op;
  ex_t a, b, r;
} ex_opc;

struct wv_exprs {
  wavec_ctx *ctx;
  VEC(ex_node) nodes; /* node 0 unused */
  VEC(ex_t) args;
  ex_t *slots; /* open addressing, linear probing; 0 = empty */
  uint32_t slot_mask;
  ex_t small[2 * SMALL_CONST + 1];
  ex_opc *opc; /* OPC_SIZE entries */
  /* memo, indexed by node id, valid where the stamp equals the epoch */
  uint32_t memo_cap;
  uint32_t *simp_stamp, *bnd_stamp, *sub_stamp;
  ex_t *simp_val, *sub_val;
  int64_t *bnd_lo, *bnd_hi;
  uint32_t range_epoch, sub_epoch;
  /* the ranges the range epoch stands for */
  ex_range *rkey;
  uint32_t rkey_n, rkey_cap;
  bool rkey_valid;
  const ex_range *r;
  uint32_t nr;
  uint32_t simp_depth;
};

/* ---- small helpers ----------------------------------------------------- */
static inline ex_node *nd(wv_exprs *X, ex_t e) {
  return &X->nodes.v[e];
}
static inline ex_kind kind(wv_exprs *X, ex_t e) {
  return (ex_kind)X->nodes.v[e].kind;
}
static inline ex_t arg(wv_exprs *X, ex_t e, uint32_t i) {
  return X->args.v[X->nodes.v[e].a + i];
}
static inline bool is_const(wv_exprs *X, ex_t e, int64_t *v) {
  if (X->nodes.v[e].kind != EX_CONST)
    return false;
  if (v)
    *v = X->nodes.v[e].coef;
  return true;
}

/* Floor division and modulus; b != 0 and not (INT64_MIN, -1). */
static inline int64_t fdiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  if (a % b != 0 && ((a < 0) != (b < 0)))
    q--;
  return q;
}
static inline int64_t fmodi(int64_t a, int64_t b) {
  int64_t r = a % b;
  if (r != 0 && ((r < 0) != (b < 0)))
    r += b;
  return r;
}

static uint64_t uabs(int64_t v) {
  return v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
}
static uint64_t gcd_u(uint64_t a, uint64_t b) {
  while (b) {
    uint64_t t = a % b;
    a = b;
    b = t;
  }
  return a;
}

/* Constructors refuse to build a value int64 cannot hold: the index would be
 * wrong on every target, so it is an error, not a wrap. */
static _Noreturn void overflow(wv_exprs *X) {
  wavec_loc none = {0};
  wv_fail(X->ctx, D_INVALID, none, "integer overflow in an index expression");
}
static int64_t ck_add(wv_exprs *X, int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r))
    overflow(X);
  return r;
}
static int64_t ck_mul(wv_exprs *X, int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r))
    overflow(X);
  return r;
}
static int64_t ck_neg(wv_exprs *X, int64_t a) {
  if (a == INT64_MIN)
    overflow(X);
  return -a;
}

/* ---- extended-integer intervals ---------------------------------------- */
/* lo is never +inf and hi never -inf (iv_norm); a finite result that does
 * not fit becomes the infinity on its side, which keeps the bound sound. */
typedef struct iv {
  int64_t lo, hi;
} iv;

static const iv IV_ALL = {NEG_INF, POS_INF};

static inline iv iv_norm(iv r) {
  if (r.lo == POS_INF)
    r.lo = NEG_INF;
  if (r.hi == NEG_INF)
    r.hi = POS_INF;
  return r;
}
static inline iv iv_const(int64_t v) {
  if (v == NEG_INF || v == POS_INF)
    return IV_ALL;
  return (iv){v, v};
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
static inline int64_t min64(int64_t a, int64_t b) {
  return a < b ? a : b;
}
static inline int64_t max64(int64_t a, int64_t b) {
  return a > b ? a : b;
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

static iv bounds_rec(wv_exprs *X, ex_t e);

static inline iv iv_child(wv_exprs *X, ex_t e, bool ranged) {
  if (ranged)
    return bounds_rec(X, e);
  return (iv){X->nodes.v[e].lo, X->nodes.v[e].hi};
}

/* The interval of an operator node from its arguments' intervals: the
 * range-free ones, or those under the current ranges. */
static iv iv_op(wv_exprs *X, ex_kind k, const ex_t *a, uint32_t n,
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

/* ---- the table ---------------------------------------------------------- */
wv_exprs *ex_table_new(wavec_ctx *ctx) {
  wv_exprs *X = wv_alloc(ctx, sizeof *X);
  X->ctx = ctx;
  X->slot_mask = 1023;
  X->slots = wv_alloc(ctx, (X->slot_mask + 1) * sizeof *X->slots);
  wv_grow(ctx, (void **)&X->nodes.v, &X->nodes.cap, 512, sizeof(ex_node));
  wv_grow(ctx, (void **)&X->args.v, &X->args.cap, 1024, sizeof(ex_t));
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
    wv_grow(ctx, (void **)&X->nodes.v, &X->nodes.cap, X->nodes.n + 1,
            sizeof(ex_node));
  if (X->args.n + n > X->args.cap)
    wv_grow(ctx, (void **)&X->args.v, &X->args.cap, X->args.n + n,
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
  iv b = iv_op(X, k, a, n, false);
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

/* ---- scratch arrays ------------------------------------------------------ */
/* A stack-allocated array that moves to the arena when it outgrows its
 * local storage (rare: sums of more than 16 terms). */
#define LOCAL_N 16

typedef struct ex_terms {
  ex_term *v;
  uint32_t n, cap;
  int64_t k; /* the constant */
  ex_term local[LOCAL_N];
} ex_terms;

static void terms_init(ex_terms *t) {
  t->v = t->local;
  t->n = 0;
  t->cap = LOCAL_N;
  t->k = 0;
}
static void terms_push(wv_exprs *X, ex_terms *t, int64_t c, ex_t b) {
  if (t->n == t->cap) {
    ex_term *nv = wv_alloc(X->ctx, 2 * t->cap * sizeof *nv);
    memcpy(nv, t->v, t->n * sizeof *nv);
    t->v = nv;
    t->cap *= 2;
  }
  t->v[t->n++] = (ex_term){c, b};
}

typedef struct ex_list {
  ex_t *v;
  uint32_t n, cap;
  ex_t local[LOCAL_N];
} ex_list;

static void list_init(ex_list *l) {
  l->v = l->local;
  l->n = 0;
  l->cap = LOCAL_N;
}
static void list_push(wv_exprs *X, ex_list *l, ex_t e) {
  if (l->n == l->cap) {
    ex_t *nv = wv_alloc(X->ctx, 2 * l->cap * sizeof *nv);
    memcpy(nv, l->v, l->n * sizeof *nv);
    l->v = nv;
    l->cap *= 2;
  }
  l->v[l->n++] = e;
}

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
static void terms_add(wv_exprs *X, ex_terms *t, ex_t e, int64_t scale) {
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
static void terms_canon(wv_exprs *X, ex_terms *t) {
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
static ex_t terms_build(wv_exprs *X, const ex_terms *t) {
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
  terms_add(X, &t, a, 1);
  terms_add(X, &t, b, 1);
  terms_canon(X, &t);
  return opc_put(oc, OPC_ADD, a, b, terms_build(X, &t));
}

/* c * e. Scaling keeps a sum's term order, so no sort is needed. */
static ex_t scale(wv_exprs *X, ex_t e, int64_t c) {
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
  terms_add(X, &t, e, c);
  return terms_build(X, &t);
}

ex_t ex_neg(wavec_ctx *ctx, ex_t a) {
  wv_assert(ctx, a);
  return scale(ctx->ex, a, -1);
}

ex_t ex_sub(wavec_ctx *ctx, ex_t a, ex_t b) {
  wv_assert(ctx, a && b);
  return ex_add(ctx, a, scale(ctx->ex, b, -1));
}

/* The factors of a coefficient-free base. */
static uint32_t factors(wv_exprs *X, ex_t base, const ex_t **f) {
  if (kind(X, base) == EX_MUL) {
    *f = &X->args.v[nd(X, base)->a];
    return nd(X, base)->nargs;
  }
  *f = &X->nodes.v[base].base; /* a one-element array holding base */
  return 1;
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
    return scale(X, b, c);
  if (is_const(X, b, &c))
    return scale(X, a, c);
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
  terms_add(X, &ta, a, 1);
  terms_add(X, &tb, b, 1);
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
      terms_add(X, &r, p, 1);
    }
  }
  terms_canon(X, &r);
  return opc_put(oc, OPC_MUL, a, b, terms_build(X, &r));
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
  terms_add(X, &t, a, 1);
  /* floor(g*u / (g*v)) == floor(u / v). */
  int64_t g = (int64_t)terms_gcd(&t, c);
  if (g > 1) {
    for (uint32_t i = 0; i < t.n; i++)
      t.v[i].coef /= g;
    t.k /= g;
    c /= g;
  }
  if (c == 1)
    return terms_build(X, &t);
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
  ex_t qe = terms_build(X, &q);
  if (r.n == 0) /* floor(r.k / c) == 0 since 0 <= r.k < c */
    return qe;
  ex_t re = terms_build(X, &r);
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
               ? floordiv_pos(X, scale(X, a, -1), ck_neg(X, c))
               : floordiv_pos(X, a, c);
  return opc_put(oc, OPC_FLOORDIV, a, b, r);
}

ex_t ex_ceildiv(wavec_ctx *ctx, ex_t a, ex_t b) {
  wv_exprs *X = ctx->ex;
  wv_assert(ctx, a && b); /* 0 is "no expression" */
  int64_t c;
  if (is_const(X, b, &c) && c > 0) /* ceil(a/c) == floor((a + c-1) / c) */
    return ex_floordiv(ctx, ex_add(ctx, a, ex_const(ctx, c - 1)), b);
  return scale(X, ex_floordiv(ctx, scale(X, a, -1), b), -1);
}

/* a mod c, c > 1: the rules that hold for every integer value. */
static ex_t mod_pos(wv_exprs *X, ex_t a, int64_t c) {
  wavec_ctx *ctx = X->ctx;
  ex_terms t;
  terms_init(&t);
  terms_add(X, &t, a, 1);
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
      terms_add(X, &inner, arg(X, b, 0), k);
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
    terms_canon(X, &inner);
    return ex_mod(ctx, terms_build(X, &inner), ex_const(ctx, c));
  }
  if (t.n == 0)
    return ex_const(ctx, t.k);
  /* (g*u) mod (g*v) == g * (u mod v). */
  int64_t g = (int64_t)terms_gcd(&t, c);
  if (g > 1) {
    for (uint32_t i = 0; i < t.n; i++)
      t.v[i].coef /= g;
    t.k /= g;
    return scale(X, mod_pos(X, terms_build(X, &t), c / g), g);
  }
  ex_t re = terms_build(X, &t);
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
               ? scale(X, mod_pos(X, scale(X, a, -1), ck_neg(X, c)), -1)
               : mod_pos(X, a, c);
  return opc_put(oc, OPC_MOD, a, b, r);
}

/* Min or max of the arguments in l (flattened already), canonical. An
 * argument is dropped when another's bounds show it can never be the
 * result: bounds are range-free here, the current ranges in simplify. */
static ex_t minmax_build(wv_exprs *X, ex_kind k, ex_list *l, bool ranged) {
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
        iv d = bounds_rec(X, ex_sub(ctx, l->v[i], l->v[j]));
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

static void flatten_into(wv_exprs *X, ex_list *l, ex_kind k, ex_t e) {
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
  flatten_into(X, &l, k, a);
  flatten_into(X, &l, k, b);
  return opc_put(oc, op, a, b, minmax_build(X, k, &l, false));
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

/* ---- evaluation ---------------------------------------------------------- */
typedef struct ev_env {
  const int64_t *vals;
  const bool *known;
  uint32_t n;
} ev_env;

static bool ev(wv_exprs *X, ex_t e, const ev_env *env, int64_t *out) {
  const ex_node *q = nd(X, e);
  int64_t a, b;
  switch ((ex_kind)q->kind) {
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
  case EX_MAX: {
    uint32_t off = q->a, n = q->nargs;
    ex_kind k = (ex_kind)q->kind;
    if (!ev(X, X->args.v[off], env, &a))
      return false;
    for (uint32_t i = 1; i < n; i++) {
      if (!ev(X, X->args.v[off + i], env, &b))
        return false;
      if (k == EX_ADD) {
        if (__builtin_add_overflow(a, b, &a))
          return false;
      } else if (k == EX_MUL) {
        if (__builtin_mul_overflow(a, b, &a))
          return false;
      } else if (k == EX_MIN) {
        a = min64(a, b);
      } else {
        a = max64(a, b);
      }
    }
    *out = a;
    return true;
  }
  case EX_FLOORDIV:
  case EX_MOD:
    if (!ev(X, arg(X, e, 0), env, &a) || !ev(X, arg(X, e, 1), env, &b) ||
        b == 0)
      return false;
    if (b == -1) { /* avoids INT64_MIN / -1 */
      if (q->kind == EX_MOD)
        *out = 0;
      else if (a == INT64_MIN)
        return false;
      else
        *out = -a;
      return true;
    }
    *out = q->kind == EX_FLOORDIV ? fdiv(a, b) : fmodi(a, b);
    return true;
  }
  return false;
}

bool ex_eval(wavec_ctx *ctx, ex_t e, const int64_t *vals, const bool *known,
             uint32_t nvals, int64_t *out) {
  ev_env env = {vals, known, nvals};
  if (!e)
    return false;
  return ev(ctx->ex, e, &env, out);
}

/* ---- memo tables ------------------------------------------------------------
 */
static void memo_reserve(wv_exprs *X, ex_t id) {
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
static uint32_t next_epoch(wv_exprs *X, uint32_t e, uint32_t *stamps) {
  if (++e == 0) {
    if (stamps)
      memset(stamps, 0, X->memo_cap * sizeof *stamps);
    e = 1;
  }
  return e;
}

/* Makes r the current ranges, keeping the range epoch (and so the memo of
 * simplify and bounds) when they equal the last ones. */
static void set_ranges(wv_exprs *X, const ex_range *r, uint32_t nr) {
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
  X->range_epoch = next_epoch(X, X->range_epoch, X->simp_stamp);
  if (X->range_epoch == 1 && X->bnd_stamp)
    memset(X->bnd_stamp, 0, X->memo_cap * sizeof *X->bnd_stamp);
  X->rkey_valid = true;
}

/* ---- bounds under ranges
 * ------------------------------------------------------ */
static iv bounds_rec(wv_exprs *X, ex_t e) {
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
  iv r = iv_op(X, (ex_kind)q->kind, &X->args.v[q->a], q->nargs, true);
  q = nd(X, e);
  /* The range-free bounds hold too. */
  r.lo = max64(r.lo, q->lo);
  r.hi = min64(r.hi, q->hi);
  memo_reserve(X, e);
  X->bnd_stamp[e] = X->range_epoch;
  X->bnd_lo[e] = r.lo;
  X->bnd_hi[e] = r.hi;
  return r;
}

bool ex_bounds(wavec_ctx *ctx, ex_t e, const ex_range *r, uint32_t nr,
               int64_t *lo, int64_t *hi) {
  wv_exprs *X = ctx->ex;
  set_ranges(X, r, nr);
  iv b = bounds_rec(X, e);
  *lo = b.lo;
  *hi = b.hi;
  return b.lo != NEG_INF && b.hi != POS_INF;
}

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
      terms_add(X, &t, a[i], 1);
    terms_canon(X, &t);
    return terms_build(X, &t);
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
      flatten_into(X, &l, k, a[i]);
    return minmax_build(X, k, &l, false);
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
  memo_reserve(X, e);
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
  X->sub_epoch = next_epoch(X, X->sub_epoch, X->sub_stamp);
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
  terms_add(X, &t, a, 1);
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
    ex_t se = terms_build(X, &small);
    iv sb = bounds_rec(X, se);
    if (sb.lo == NEG_INF || sb.hi == POS_INF ||
        fdiv(sb.lo, g) != fdiv(sb.hi, g))
      continue;
    int64_t q = fdiv(sb.lo, g);
    big.k = q;
    ex_t be = terms_build(X, &big);
    ex_t cg = ex_const(ctx, c / g);
    if (k == EX_FLOORDIV)
      return ex_floordiv(ctx, be, cg);
    ex_t low = ex_sub(ctx, se, ex_const(ctx, ck_mul(X, q, g)));
    return ex_add(ctx, scale(X, ex_mod(ctx, be, cg), g), low);
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
  terms_add(X, &u, r0, 1);
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
  terms_add(X, &r, r0, ck_neg(X, k));
  terms_add(X, &r, ex_mul(ctx, p, whole), k);
  terms_canon(X, &r);
  return terms_build(X, &r);
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
  terms_add(X, &t, e, 1);
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
  iv b = bounds_rec(X, e);
  if (b.lo == b.hi && b.lo != NEG_INF) /* one value in range */
    return ex_const(ctx, b.lo);
  switch (k) {
  case EX_FLOORDIV:
  case EX_MOD: {
    ex_t a = arg(X, e, 0), d = arg(X, e, 1);
    int64_t c, m;
    if (!is_const(X, d, &c)) {
      /* 0 <= a < d: floor(a/d) == 0, a mod d == a. */
      iv ba = bounds_rec(X, a), bd = bounds_rec(X, d);
      if (ba.lo >= 0 && bd.lo >= 1 && bounds_rec(X, ex_sub(ctx, d, a)).lo >= 1)
        return k == EX_FLOORDIV ? ex_const(ctx, 0) : a;
      return e;
    }
    if (c <= 1)
      return e;
    iv ba = bounds_rec(X, a);
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
    return minmax_build(X, k, &l, true);
  }
  default:
    return e;
  }
}

#define SIMP_MAX_DEPTH 400

static void simp_memo(wv_exprs *X, ex_t e, ex_t r) {
  memo_reserve(X, e);
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
    iv b = bounds_rec(X, e);
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
  set_ranges(X, r, nr);
  X->simp_depth = 0;
  return simp(X, e);
}

/* ---- printing
 * ------------------------------------------------------------------ */
/* A total order that depends only on structure and symbol names: terms by
 * the kind of their base, then names and arguments; constants last. */
static int rank(ex_kind k) {
  static const int r[] = {
      [EX_CONST] = 0, [EX_SYM] = 1, [EX_MUL] = 2, [EX_FLOORDIV] = 3,
      [EX_MOD] = 4,   [EX_MIN] = 5, [EX_MAX] = 6, [EX_ADD] = 7};
  return r[k];
}

static int cmp_struct(wavec_ctx *ctx, ex_t a, ex_t b);

static void sort_struct(wavec_ctx *ctx, ex_t *v, uint32_t n) {
  for (uint32_t i = 1; i < n; i++) {
    ex_t x = v[i];
    uint32_t j = i;
    for (; j > 0 && cmp_struct(ctx, v[j - 1], x) > 0; j--)
      v[j] = v[j - 1];
    v[j] = x;
  }
}

/* The arguments of e (for a MUL without its coefficient) in structural
 * order, into l. */
static void sorted_args(wavec_ctx *ctx, ex_t e, ex_list *l) {
  wv_exprs *X = ctx->ex;
  list_init(l);
  uint32_t n = nd(X, e)->nargs;
  for (uint32_t i = 0; i < n; i++) {
    ex_t x = arg(X, e, i);
    if (kind(X, e) == EX_MUL && kind(X, x) == EX_CONST)
      continue;
    list_push(X, l, x);
  }
  sort_struct(ctx, l->v, l->n);
}

static int cmp_lists(wavec_ctx *ctx, ex_t a, ex_t b) {
  ex_list la, lb;
  sorted_args(ctx, a, &la);
  sorted_args(ctx, b, &lb);
  for (uint32_t i = 0; i < la.n && i < lb.n; i++) {
    int c = cmp_struct(ctx, la.v[i], lb.v[i]);
    if (c)
      return c;
  }
  return (la.n > lb.n) - (la.n < lb.n);
}

static int cmp_struct(wavec_ctx *ctx, ex_t a, ex_t b) {
  wv_exprs *X = ctx->ex;
  if (a == b)
    return 0;
  const ex_node *na = nd(X, a), *nb = nd(X, b);
  if (na->kind == EX_CONST || nb->kind == EX_CONST) {
    if (na->kind != nb->kind)
      return na->kind == EX_CONST ? 1 : -1; /* constants last */
    return (na->coef > nb->coef) - (na->coef < nb->coef);
  }
  int64_t ca = na->coef, cb = nb->coef;
  ex_t ba = na->base, bb = nb->base;
  if (ba != bb) {
    ex_kind ka = kind(X, ba), kb = kind(X, bb);
    if (ka != kb)
      return rank(ka) - rank(kb);
    int c = 0;
    switch (ka) {
    case EX_SYM: {
      wavec_sym sa = nd(X, ba)->a, sb = nd(X, bb)->a;
      c = strcmp(wavec_symbol_name(ctx, sa), wavec_symbol_name(ctx, sb));
      if (!c)
        c = (sa > sb) - (sa < sb);
      break;
    }
    case EX_FLOORDIV:
    case EX_MOD:
      c = cmp_struct(ctx, arg(X, ba, 0), arg(X, bb, 0));
      if (!c)
        c = cmp_struct(ctx, arg(X, ba, 1), arg(X, bb, 1));
      break;
    default:
      c = cmp_lists(ctx, ba, bb);
      break;
    }
    if (c)
      return c;
  }
  return (ca > cb) - (ca < cb);
}

int ex_cmp(wavec_ctx *ctx, ex_t a, ex_t b) {
  return cmp_struct(ctx, a, b);
}

static void print(wavec_ctx *ctx, wv_buf *b, ex_t e);

static void print_factor(wavec_ctx *ctx, wv_buf *b, ex_t e) {
  if (kind(ctx->ex, e) == EX_ADD) {
    wv_buf_puts(b, "(");
    print(ctx, b, e);
    wv_buf_puts(b, ")");
  } else {
    print(ctx, b, e);
  }
}

/* A term with its sign dropped when `magnitude` (after " - "). */
static void print_term(wavec_ctx *ctx, wv_buf *b, ex_t e, bool magnitude) {
  wv_exprs *X = ctx->ex;
  const ex_node *q = nd(X, e);
  if (q->kind == EX_CONST) {
    if (magnitude)
      wv_buf_printf(b, "%llu", (unsigned long long)uabs(q->coef));
    else
      wv_buf_printf(b, "%lld", (long long)q->coef);
    return;
  }
  if (q->kind != EX_MUL) {
    print(ctx, b, e);
    return;
  }
  int64_t c = q->coef;
  ex_t base = q->base;
  if (magnitude || c == 1) {
    if (uabs(c) != 1)
      wv_buf_printf(b, "%llu*", (unsigned long long)uabs(c));
  } else if (c == -1) {
    wv_buf_puts(b, "-");
  } else {
    wv_buf_printf(b, "%lld*", (long long)c);
  }
  if (kind(X, base) != EX_MUL) {
    print_factor(ctx, b, base);
    return;
  }
  ex_list l;
  sorted_args(ctx, base, &l);
  for (uint32_t i = 0; i < l.n; i++) {
    if (i)
      wv_buf_puts(b, "*");
    print_factor(ctx, b, l.v[i]);
  }
}

static bool is_atom(wv_exprs *X, ex_t e) {
  ex_kind k = kind(X, e);
  return (k == EX_CONST && nd(X, e)->coef >= 0) || k == EX_SYM;
}

static void print(wavec_ctx *ctx, wv_buf *b, ex_t e) {
  wv_exprs *X = ctx->ex;
  if (!e) {
    wv_buf_puts(b, "<none>");
    return;
  }
  ex_kind k = kind(X, e);
  switch (k) {
  case EX_CONST:
  case EX_MUL:
    print_term(ctx, b, e, false);
    return;
  case EX_SYM:
    wv_buf_puts(b, wavec_symbol_name(ctx, nd(X, e)->a));
    return;
  case EX_ADD: {
    ex_list l;
    sorted_args(ctx, e, &l);
    for (uint32_t i = 0; i < l.n; i++) {
      bool neg = nd(X, l.v[i])->coef < 0;
      if (i)
        wv_buf_puts(b, neg ? " - " : " + ");
      print_term(ctx, b, l.v[i], i > 0);
    }
    return;
  }
  case EX_FLOORDIV: {
    ex_t n = arg(X, e, 0), d = arg(X, e, 1);
    wv_buf_puts(b, "floor(");
    print_factor(ctx, b, n);
    wv_buf_puts(b, "/");
    if (is_atom(X, d)) {
      print(ctx, b, d);
    } else {
      wv_buf_puts(b, "(");
      print(ctx, b, d);
      wv_buf_puts(b, ")");
    }
    wv_buf_puts(b, ")");
    return;
  }
  case EX_MOD:
    wv_buf_puts(b, "Mod(");
    print(ctx, b, arg(X, e, 0));
    wv_buf_puts(b, ", ");
    print(ctx, b, arg(X, e, 1));
    wv_buf_puts(b, ")");
    return;
  case EX_MIN:
  case EX_MAX: {
    ex_list l;
    sorted_args(ctx, e, &l);
    wv_buf_puts(b, k == EX_MIN ? "Min(" : "Max(");
    for (uint32_t i = 0; i < l.n; i++) {
      if (i)
        wv_buf_puts(b, ", ");
      print(ctx, b, l.v[i]);
    }
    wv_buf_puts(b, ")");
    return;
  }
  }
}

void ex_print(wavec_ctx *ctx, wv_buf *b, ex_t e) {
  print(ctx, b, e);
}

void ex_print_index(wavec_ctx *ctx, wv_buf *b, ex_t start, ex_t size,
                    ex_t stride) {
  print(ctx, b, start);
  wv_buf_puts(b, " : ");
  print(ctx, b, size);
  wv_buf_puts(b, " : ");
  print(ctx, b, stride);
}

const char *ex_str(wavec_ctx *ctx, ex_t e) {
  wv_buf b;
  wv_buf_init(&b, ctx);
  print(ctx, &b, e);
  return wv_buf_str(&b);
}
