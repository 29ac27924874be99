/* The index algebra: the structural order of expressions and the printer
 * (Wave's notation; expr.h, ex_print). */
#include "expr/expr_int.h"

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
