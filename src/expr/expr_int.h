/* The index algebra's insides, shared by its files (nothing outside
 * src/expr includes this; the interface is expr.h):
 *  - expr.c: the table, hash-consing and the canonicalising constructors,
 *    inspection;
 *  - bounds.c: interval arithmetic, the memo tables and the current ranges,
 *    bounds under ranges, evaluation;
 *  - simplify.c: substitution and simplification under ranges;
 *  - print.c: the structural order and the printer.
 * expr.c states the representation and the canonical form. */
#ifndef WV_EXPR_INT_H
#define WV_EXPR_INT_H

#include "expr/expr.h"

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

/* The factors of a coefficient-free base. */
static inline uint32_t factors(wv_exprs *X, ex_t base, const ex_t **f) {
  if (kind(X, base) == EX_MUL) {
    *f = &X->args.v[nd(X, base)->a];
    return nd(X, base)->nargs;
  }
  *f = &X->nodes.v[base].base; /* a one-element array holding base */
  return 1;
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

static inline uint64_t uabs(int64_t v) {
  return v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
}
static inline uint64_t gcd_u(uint64_t a, uint64_t b) {
  while (b) {
    uint64_t t = a % b;
    a = b;
    b = t;
  }
  return a;
}

/* Constructors refuse to build a value int64 cannot hold: the index would be
 * wrong on every target, so it is an error, not a wrap (expr.c). */
_Noreturn void exi_overflow(wv_exprs *X);
static inline int64_t ck_add(wv_exprs *X, int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r))
    exi_overflow(X);
  return r;
}
static inline int64_t ck_mul(wv_exprs *X, int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r))
    exi_overflow(X);
  return r;
}
static inline int64_t ck_neg(wv_exprs *X, int64_t a) {
  if (a == INT64_MIN)
    exi_overflow(X);
  return -a;
}

/* ---- extended-integer intervals (bounds.c) ------------------------------- */
/* lo is never +inf and hi never -inf (iv_norm); a finite result that does
 * not fit becomes the infinity on its side, which keeps the bound sound. */
typedef struct iv {
  int64_t lo, hi;
} iv;

static const iv IV_ALL = {NEG_INF, POS_INF};

static inline iv iv_const(int64_t v) {
  if (v == NEG_INF || v == POS_INF)
    return IV_ALL;
  return (iv){v, v};
}
static inline int64_t min64(int64_t a, int64_t b) {
  return a < b ? a : b;
}
static inline int64_t max64(int64_t a, int64_t b) {
  return a > b ? a : b;
}

/* Bounds of e under the current ranges (exi_set_ranges), memoized. */
iv exi_bounds(wv_exprs *X, ex_t e);
/* The interval of an operator node from its arguments' intervals: the
 * range-free ones, or those under the current ranges. */
iv exi_iv_op(wv_exprs *X, ex_kind k, const ex_t *a, uint32_t n, bool ranged);

static inline iv iv_child(wv_exprs *X, ex_t e, bool ranged) {
  if (ranged)
    return exi_bounds(X, e);
  return (iv){X->nodes.v[e].lo, X->nodes.v[e].hi};
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

static inline void terms_init(ex_terms *t) {
  t->v = t->local;
  t->n = 0;
  t->cap = LOCAL_N;
  t->k = 0;
}
static inline void terms_push(wv_exprs *X, ex_terms *t, int64_t c, ex_t b) {
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

static inline void list_init(ex_list *l) {
  l->v = l->local;
  l->n = 0;
  l->cap = LOCAL_N;
}
static inline void list_push(wv_exprs *X, ex_list *l, ex_t e) {
  if (l->n == l->cap) {
    ex_t *nv = wv_alloc(X->ctx, 2 * l->cap * sizeof *nv);
    memcpy(nv, l->v, l->n * sizeof *nv);
    l->v = nv;
    l->cap *= 2;
  }
  l->v[l->n++] = e;
}

/* ---- shared by the files (expr.c) ---------------------------------------- */
/* Adds scale * e to t (e canonical). */
void exi_terms_add(wv_exprs *X, ex_terms *t, ex_t e, int64_t scale);
/* Sorts by base, combines like terms, drops zero coefficients. */
void exi_terms_canon(wv_exprs *X, ex_terms *t);
/* The sum of canonical terms t (sorted, combined). */
ex_t exi_terms_build(wv_exprs *X, const ex_terms *t);
/* c * e. */
ex_t exi_scale(wv_exprs *X, ex_t e, int64_t c);
/* Appends e to l, or its arguments when it is a k node. */
void exi_flatten_into(wv_exprs *X, ex_list *l, ex_kind k, ex_t e);
/* Min or max of the arguments in l (flattened already), canonical; bounds
 * range-free, or under the current ranges when `ranged`. */
ex_t exi_minmax_build(wv_exprs *X, ex_kind k, ex_list *l, bool ranged);

/* ---- memo tables (bounds.c) ---------------------------------------------- */
/* Makes the memo arrays hold node id. */
void exi_memo_reserve(wv_exprs *X, ex_t id);
/* Starts a fresh epoch (stamps are never cleared; on wrap-around they are). */
uint32_t exi_next_epoch(wv_exprs *X, uint32_t e, uint32_t *stamps);
/* Makes r the current ranges, keeping the range epoch (and so the memo of
 * simplify and bounds) when they equal the last ones. */
void exi_set_ranges(wv_exprs *X, const ex_range *r, uint32_t nr);

#endif
