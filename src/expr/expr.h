/* The index algebra: integer quasi-affine expressions over symbols,
 * hash-consed per context into one canonical form.
 *
 * Invariants:
 *  - An `ex_t` is a handle into the context's table; 0 is "no expression".
 *    Structurally equal canonical expressions are the same handle, so
 *    equality is `a == b`.
 *  - Every constructor returns a canonical form: sums are flat, like terms
 *    are combined, constants are folded, a sum's constant is its last term,
 *    products carry their constant coefficient separately, and operands of
 *    commutative nodes are in a fixed order. Constructors never use ranges;
 *    ex_simplify() does.
 *  - Division and modulus are floor semantics (Python's `//`, `%`): for
 *    c > 0, e mod c lies in [0, c).
 *  - Symbols are the context's symbols (wavec_sym); `$T0`, `$WG0`, `$ARGK`
 *    and the like are ordinary symbols by name.
 */
#ifndef WV_EXPR_H
#define WV_EXPR_H

#include "support/base.h"

typedef uint32_t ex_t;

typedef enum ex_kind {
  EX_CONST,    /* value */
  EX_SYM,      /* sym */
  EX_ADD,      /* n-ary sum of >= 2 terms */
  EX_MUL,      /* n-ary product of >= 2 factors, at most one constant */
  EX_FLOORDIV, /* args[0] // args[1] */
  EX_MOD,      /* args[0] mod args[1] */
  EX_MIN,      /* n-ary */
  EX_MAX       /* n-ary */
} ex_kind;

/* Creation of the table; called once by wavec_ctx_new. */
wv_exprs *ex_table_new(wavec_ctx *ctx);

ex_t ex_const(wavec_ctx *ctx, int64_t v);
ex_t ex_sym(wavec_ctx *ctx, wavec_sym s);
ex_t ex_add(wavec_ctx *ctx, ex_t a, ex_t b);
ex_t ex_sub(wavec_ctx *ctx, ex_t a, ex_t b);
ex_t ex_neg(wavec_ctx *ctx, ex_t a);
ex_t ex_mul(wavec_ctx *ctx, ex_t a, ex_t b);
ex_t ex_floordiv(wavec_ctx *ctx, ex_t a, ex_t b);
ex_t ex_ceildiv(wavec_ctx *ctx, ex_t a, ex_t b); /* == -((-a) // b) */
ex_t ex_mod(wavec_ctx *ctx, ex_t a, ex_t b);
ex_t ex_min(wavec_ctx *ctx, ex_t a, ex_t b);
ex_t ex_max(wavec_ctx *ctx, ex_t a, ex_t b);

/* Inspection. */
ex_kind ex_kind_of(wavec_ctx *ctx, ex_t e);
uint32_t ex_nargs(wavec_ctx *ctx, ex_t e);
ex_t ex_arg(wavec_ctx *ctx, ex_t e, uint32_t i);
bool ex_is_const(wavec_ctx *ctx, ex_t e, int64_t *v); /* v may be NULL */
wavec_sym ex_sym_of(wavec_ctx *ctx, ex_t e);          /* 0 unless EX_SYM */
/* Does e mention symbol s? */
bool ex_uses(wavec_ctx *ctx, ex_t e, wavec_sym s);
/* Calls f for each distinct symbol of e (deterministic order). */
void ex_syms(wavec_ctx *ctx, ex_t e, void (*f)(void *ud, wavec_sym s),
             void *ud);

/* Evaluation under an assignment: vals[s] for symbol s (nvals entries), with
 * known[s] telling which are set (known may be NULL: all set). Returns false
 * on an unset symbol, a division by zero or a value past int64 (then
 * ex_eval_ck sets *overflow; overflow may be NULL). Never unwinds. */
bool ex_eval(wavec_ctx *ctx, ex_t e, const int64_t *vals, const bool *known,
             uint32_t nvals, int64_t *out);
bool ex_eval_ck(wavec_ctx *ctx, ex_t e, const int64_t *vals,
                const bool *known, uint32_t nvals, int64_t *out,
                bool *overflow);
/* ex_eval at npoints points at once: symbol s takes cols[s][i] at point i
 * where cols[s] is set (cols may be NULL), else vals[s] where known[s]
 * (vals NULL: no such symbol). out[i] for point i; false as ex_eval is at
 * any point (overflow included). The same values as ex_eval point by
 * point, for a fraction of the time (one walk of e per 128 points). */
bool ex_eval_batch(wavec_ctx *ctx, ex_t e, const int64_t *const *cols,
                   const int64_t *vals, const bool *known, uint32_t nvals,
                   size_t npoints, int64_t *out);

/* Substitution: each symbol syms[i] becomes repl[i]; the result is
 * canonical (constants folded). */
ex_t ex_subst(wavec_ctx *ctx, ex_t e, uint32_t n, const wavec_sym *syms,
              const ex_t *repl);

/* Ranges: lo <= s <= hi for the symbols that have `known` set. */
typedef struct ex_range {
  int64_t lo, hi;
  bool known;
} ex_range;

/* Interval bound of e under ranges r (nr entries, indexed by symbol);
 * false when unbounded. lo and hi are set either way, INT64_MIN / INT64_MAX
 * standing for an unbounded side. */
bool ex_bounds(wavec_ctx *ctx, ex_t e, const ex_range *r, uint32_t nr,
               int64_t *lo, int64_t *hi);

/* Simplification under ranges: the result is equal to e for every
 * assignment within the ranges. Knows at least, for 0 <= t < 64:
 * 16*floor(t/16) + t mod 16 == t, floor((t mod 64)/16) == floor(t/16),
 * t mod 64 == t, floor(t/64) == 0, and the same with affine arguments.
 * In full: any node the bounds pin to one value becomes it; x mod c == x - q*c
 * when x stays in one period; (g*B + S) split over a divisor g of c when
 * the ranges keep S within one period of g (floor((4w + i)/8) == floor(w/2)
 * for 0 <= i < 4); floor((x mod c*m)/c) == floor(x/c) mod m; k*c*floor(x/c)
 * + k*(x mod c) == k*x and c*(floor(x/c) mod m) + x mod c == x mod (c*m),
 * with any cofactor, also inside a mod where coefficients count modulo it;
 * min/max drop an argument the bounds (of it, or of a difference) show
 * cannot win; floor(a/d) == 0 and a mod d == a for 0 <= a < d, d symbolic.
 * Results are kept while the ranges stay the same, so asking again is a
 * lookup. Simplifying a result again gives it back (a property the
 * randomised test checks, also after the memo is gone). */
ex_t ex_simplify(wavec_ctx *ctx, ex_t e, const ex_range *r, uint32_t nr);

/* Printing in Wave's notation: `$WG0*BLOCK_K2 + Mod($T0, 16)`,
 * `floor($T0/16)`, `Max(a, b)`. Deterministic: term order depends on the
 * structure and the symbol names only, never on construction history. */
void ex_print(wavec_ctx *ctx, wv_buf *b, ex_t e);
const char *ex_str(wavec_ctx *ctx, ex_t e); /* arena string */
/* Wave's `start : size : stride` for one dimension of an index. */
void ex_print_index(wavec_ctx *ctx, wv_buf *b, ex_t start, ex_t size,
                    ex_t stride);

/* The structural order the printer uses (kind, then symbol names and
 * arguments; constants last): <0, 0 (iff a == b) or >0. Independent of
 * creation history, so usable for deterministic output elsewhere. */
int ex_cmp(wavec_ctx *ctx, ex_t a, ex_t b);
/* The linear view e == coef * base: a product's constant coefficient and
 * its coefficient-free rest; coef 1 and base e for other non-constant
 * nodes; for a constant, coef is its value and base 0. */
void ex_linear(wavec_ctx *ctx, ex_t e, int64_t *coef, ex_t *base);
/* Is e a multiple of m (m > 0) whatever integers its symbols are? True
 * when the structure shows it: a constant multiple of m, a sum of
 * multiples, a product with a factor that is one, a min or max of
 * multiples, a mod by a constant multiple of m of a multiple. False may
 * mean "not shown" (a floor division, a symbol). */
bool ex_multiple_of(wavec_ctx *ctx, ex_t e, int64_t m);
/* Number of distinct expressions in the table (for tests and --time). */
uint32_t ex_count(wavec_ctx *ctx);

#endif
