/* The parser: `.wave` source text → kernels, built through the public
 * builder API of include/wavec.h exactly as a C user would build them.
 *
 * Recursive descent over the token array of lex.c. The grammar rule sits
 * above the function that parses it: {x} is zero or more x, [x] at most
 * one, 'w' a word or punctuation, END a line end or ';'.
 *
 * Names live in four places:
 *  - symbols (dimensions, tile sizes, hyperparameters) are the context's,
 *    by name (wavec_symbol);
 *  - values (arguments, variables, loop-carried names) are in the parser's
 *    scope: a stack of bindings, so that a reassigned name refers to its
 *    newest value and the names bound inside an iterate body vanish when
 *    the body closes (the graph is SSA: a body's values are not visible
 *    after the loop; the loop's results are);
 *  - mappings by name, per kernel, defined before use;
 *  - mapping iterators, local to their mapping.
 * A name in a value position that is no value stands for a hyperparameter
 * (a scalar broadcast like a literal) when the kernel knows it as a symbol:
 * a dimension of an argument, a symbol of a constraint, a name of the
 * kernel's `defaults` (anywhere in the kernel: they are collected before
 * the body is parsed) or a -D definition made before parsing. Any other
 * name is an error where it is written. No value may take the name of a
 * symbol of the kernel, nor `inf`: the name would mean the value in some
 * places and the symbol or the literal in others (`sum(x, dim = N) / N`).
 *
 * Errors unwind (wv_fail, wv_throw) to the guard of wavec_parse. Builder
 * calls record their own diagnostics; a 0 or non-OK result just unwinds.
 */
#include "front/parse.h"

/* ---- tables --------------------------------------------------------------- */

static const char *const dtype_names[] = {
#define X(e, v, name, bits, isfloat) [e] = name,
    WAVEC_DTYPES(X)
#undef X
};




/* dtype = 'f16' | 'bf16' | 'f32' | 'i32' | 'i1' */
static wavec_dtype parse_dtype(parser *p) {
  wv_tok *t = cur(p);
  int d = t->kind == T_IDENT
              ? find_name(dtype_names, WV_ARRAY_LEN(dtype_names), t->name)
              : -1;
  if (d < 0)
    fail(p, t, D_UNKNOWN_DTYPE, "expected a dtype (%s) but found %s",
         name_list(p, dtype_names, WV_ARRAY_LEN(dtype_names)), desc(p, t));
  advance(p);
  return (wavec_dtype)d;
}

/* ---- names ---------------------------------------------------------------- */


/* A value named by t takes the name of a symbol of the kernel, or `inf`.
 * `sym` is where the name is first a symbol when that comes after t (a
 * constraint or a mapping below the statement), else NULL. */
static _Noreturn void name_taken(parser *p, const wv_tok *t,
                                 const wv_tok *sym) {
  if (is_word(t, "inf"))
    fail(p, t, D_REDEFINED,
         "'inf' is the literal infinity; a value cannot take its name");
  const char *what = map_get(p->dims, t) ? "a dimension" : "a hyperparameter";
  if (sym && sym->line != t->line)
    fail(p, t, D_REDEFINED,
         "%s is %s of the kernel (at line %u); a value cannot take its name",
         desc(p, t), what, sym->line);
  fail(p, t, D_REDEFINED, "%s is %s of the kernel; a value cannot take its "
                          "name",
       desc(p, t), what);
}

/* t names a new value (an argument, an assigned or loop-carried name). */
static void value_name(parser *p, const wv_tok *t) {
  if (is_word(t, "inf") || map_get(p->hyper, t))
    name_taken(p, t, NULL);
  if (!map_get(p->named, t))
    wv_strmap_put(p->named, t->name, t->len, (uint32_t)(t - p->t) + 1);
}

/* From now on the name t may stand for a symbol (and, in a value
 * position, for a scalar hyperparameter); no value may have taken it. */
static void note_symbol(parser *p, const wv_tok *t) {
  if (map_get(p->hyper, t))
    return;
  uint32_t v = map_get(p->named, t);
  if (v)
    name_taken(p, &p->t[v - 1], t);
  wv_strmap_put(p->hyper, t->name, t->len, 1);
}

/* A symbol named where sizes are written (a type, a constraint, defaults). */
wavec_sym ps_symbol(parser *p, const wv_tok *t) {
  wavec_sym s = must(p, wavec_symbol(p->ctx, t->name));
  note_symbol(p, t);
  return s;
}

static bool is_hyper(parser *p, const wv_tok *t) {
  if (map_get(p->hyper, t))
    return true;
  for (uint32_t i = 0; i < p->ctx->defines.n; i++)
    if (strcmp(p->ctx->defines.v[i].name, t->name) == 0)
      return true;
  return false;
}

static wavec_value lookup(parser *p, const wv_tok *t) {
  uint32_t i = map_get(p->scope, t);
  return i ? p->binds.v[i - 1].v : 0;
}

/* Binds a value name; names the value for dumps when it is new. */
static void bind(parser *p, const wv_tok *name, wavec_value v, bool set_name) {
  if (set_name)
    wavec_value_name(p->k, v, name->name);
  binding b = {name->name, v, map_get(p->scope, name)};
  vec_push(p->ctx, &p->binds, b);
  wv_strmap_put(p->scope, name->name, name->len, p->binds.n);
}

/* Drops the bindings made since the stack held `mark` of them: the names
 * of an iterate body, remembered (with the iterate's line) so that a later
 * use gets a message that says why it cannot see them. */
static void unbind_to(parser *p, uint32_t mark, uint32_t line) {
  while (p->binds.n > mark) {
    binding *b = &p->binds.v[--p->binds.n];
    wv_strmap_put(p->scope, b->name, strlen(b->name), b->prev);
    if (!b->prev)
      wv_strmap_put(p->gone, b->name, strlen(b->name), line);
  }
}

/* Edit distance of a and b (insertions, deletions, substitutions and
 * swaps of neighbours), or max + 1 once it is sure to pass `max`. */
static size_t edit_distance(const char *a, const char *b, size_t max) {
  size_t na = strlen(a), nb = strlen(b);
  if (na > 32 || nb > 32 || (na > nb ? na - nb : nb - na) > max)
    return max + 1;
  size_t d[33][33];
  for (size_t i = 0; i <= na; i++)
    d[i][0] = i;
  for (size_t j = 0; j <= nb; j++)
    d[0][j] = j;
  for (size_t i = 1; i <= na; i++) {
    for (size_t j = 1; j <= nb; j++) {
      size_t best = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
      if (d[i - 1][j] + 1 < best)
        best = d[i - 1][j] + 1;
      if (d[i][j - 1] + 1 < best)
        best = d[i][j - 1] + 1;
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
          d[i - 2][j - 2] + 1 < best)
        best = d[i - 2][j - 2] + 1;
      d[i][j] = best;
    }
  }
  return d[na][nb];
}

/* Keeps in *best the candidate nearest to name, if near enough to be a
 * typo of it. Short names are near every other, so they get none. */
static void nearest(const char *name, const char *cand, const char **best,
                    size_t *best_d) {
  size_t len = strlen(name), max = len <= 5 ? 1 : 2;
  if (len < 3)
    return;
  size_t d = edit_distance(name, cand, max);
  if (d <= max && (!*best || d < *best_d)) {
    *best = cand;
    *best_d = d;
  }
}

static const char *did_you_mean(parser *p, const char *best) {
  if (!best)
    return "";
  wv_buf b;
  wv_buf_init(&b, p->ctx);
  wv_buf_printf(&b, " (did you mean '%s'?)", best);
  return wv_buf_str(&b);
}

/* " (did you mean 'a_reg'?)" for a near miss among the visible value
 * names, else "". */
static const char *suggestion(parser *p, const char *name) {
  const char *best = NULL;
  size_t best_d = 0;
  for (uint32_t i = p->binds.n; i-- > 0;)
    nearest(name, p->binds.v[i].name, &best, &best_d);
  return did_you_mean(p, best);
}

/* Collects the names that the kernel's `defaults { }` blocks bind, so that
 * statements may use them as values before the block. The current token is
 * the first of the kernel body (after its '{'). A sketch of the real parse:
 * it only finds NAME '=' inside `defaults {...}` at the body's top level. */
static void collect_defaults(parser *p) {
  uint32_t depth = 1;
  for (uint32_t i = p->pos; i + 1 < p->ntok; i++) {
    wv_tok *t = &p->t[i];
    if (t->kind == T_EOF || t->kind == T_BAD)
      return;
    if (t->kind == T_LBRACE) {
      depth++;
    } else if (t->kind == T_RBRACE) {
      if (--depth == 0)
        return;
    } else if (depth == 1 && is_word(t, "defaults") &&
               p->t[i + 1].kind == T_LBRACE) {
      for (i += 2; i + 1 < p->ntok; i++) {
        wv_tok *u = &p->t[i];
        if (u->kind == T_RBRACE)
          break;
        if (u->kind == T_LBRACE || u->kind == T_EOF || u->kind == T_BAD)
          return; /* malformed: the parse proper will say how */
        if (u->kind == T_IDENT && p->t[i + 1].kind == T_ASSIGN)
          note_symbol(p, u);
      }
    }
  }
}

/* dim = NAME          (a dimension of one of the kernel's arguments)
 * `where` names the construct for the message. */
wavec_sym ps_parse_dim(parser *p, wv_diag_id id, const char *where) {
  wv_tok *t = expect(p, T_IDENT, "a dimension name");
  if (!map_get(p->dims, t))
    fail(p, t, id, "unknown dimension %s in %s: no argument of the kernel "
                   "has it",
         desc(p, t), where);
  return ps_symbol(p, t);
}

/* A dimension may appear once in a type, and a type has at most
 * WAVEC_MAX_DIMS of them; both checked at the offending token. */
static void check_new_dim(parser *p, wv_tok *t, const symvec *dims,
                          wavec_sym s) {
  for (uint32_t i = 0; i < dims->n; i++)
    if (dims->v[i] == s)
      fail(p, t, D_DUP_DIM, "dimension %s appears twice", desc(p, t));
  if (dims->n == WAVEC_MAX_DIMS)
    fail(p, t, D_DUP_DIM, "%s would be dimension %u; at most %d are supported",
         desc(p, t), dims->n + 1, WAVEC_MAX_DIMS);
}

/* dims = '[' [dim {',' dim} [',']] ']' */
static void parse_dim_list(parser *p, symvec *out, const char *where) {
  expect(p, T_LBRACK, "'[' and a list of dimensions");
  while (!at(p, T_RBRACK)) {
    wv_tok *t = cur(p);
    wavec_sym s = ps_parse_dim(p, D_UNKNOWN_DIM, where);
    check_new_dim(p, t, out, s);
    vec_push(p->ctx, out, s);
    if (!accept(p, T_COMMA))
      break;
  }
  expect(p, T_RBRACK, "',' or ']'");
}

/* ---- value expressions ------------------------------------------------------ */

/* An expression's value; `ref` when it is a name's existing value (so an
 * assignment `x = y` aliases y rather than renaming its node). */
typedef struct operand {
  wavec_value v;
  bool ref;
} operand;

static operand parse_expr(parser *p);

static operand fresh(parser *p, wavec_value v) {
  operand o = {must(p, v), false};
  return o;
}

/* literal = INT | FLOAT | 'inf'   (no value is called inf: value_name) */
static bool take_literal(parser *p, double *out) {
  wv_tok *t = cur(p);
  if (t->kind == T_INT || t->kind == T_FLOAT) {
    *out = t->fval;
  } else if (is_word(t, "inf") && ahead(p, 1)->kind != T_LPAREN) {
    *out = INFINITY;
  } else {
    return false;
  }
  advance(p);
  return true;
}

/* A name in a value position: a variable or argument, or a hyperparameter
 * (a scalar). */
static operand name_value(parser *p, const wv_tok *t) {
  wavec_value v = lookup(p, t);
  if (v) {
    operand o = {v, true};
    return o;
  }
  if (is_hyper(p, t)) {
    wavec_sym s = ps_symbol(p, t); /* a -D name is now the kernel's too */
    return fresh(p, wavec_scalar_sym(p->k, s, loc_of(p, t)));
  }
  if (map_get(p->maps, t))
    fail(p, t, D_UNKNOWN_NAME,
         "%s is a mapping, not a value (use it as mapping = %s)", desc(p, t),
         t->name);
  uint32_t body = map_get(p->gone, t);
  if (body)
    fail(p, t, D_LOOP,
         "%s is defined inside the body of the iterate at line %u and is not "
         "visible after it; carry it out as a loop result",
         desc(p, t), body);
  cur(p); /* `tkw.read`: the invalid '.' says more than the name */
  fail(p, t, D_UNKNOWN_NAME,
       "unknown name %s: not a variable, an argument or a hyperparameter of "
       "the kernel%s",
       desc(p, t), suggestion(p, t->name));
}

/* type = '[' {dim ','} dtype [',' 'shared'] ']' ['shared']
 * For an argument (`declare`) the dims are declared and 'shared' allowed;
 * for a register they must be dimensions of the arguments. */
static void parse_type(parser *p, bool declare, symvec *dims,
                       wavec_dtype *dt, unsigned *flags, const char *where) {
  expect(p, T_LBRACK, "'['");
  tokvec names = {0};
  while (!at(p, T_RBRACK)) {
    vec_push(p->ctx, &names, expect(p, T_IDENT, "a dimension or a dtype"));
    if (!accept(p, T_COMMA))
      break;
  }
  wv_tok *close = expect(p, T_RBRACK, "',' or ']'");
  if (declare && names.n && is_word(names.v[names.n - 1], "shared")) {
    *flags |= WAVEC_ARG_SHARED;
    names.n--;
  }
  for (uint32_t i = 0; i + 1 < names.n; i++) {
    wv_tok *t = names.v[i];
    if (find_name(dtype_names, WV_ARRAY_LEN(dtype_names), t->name) >= 0)
      fail(p, t, D_EXPECTED,
           "expected a dimension but found the dtype %s (the dtype comes "
           "last)",
           desc(p, t));
    if (is_word(t, "shared"))
      fail(p, t, D_EXPECTED,
           "expected a dimension but found 'shared' (it comes after the "
           "dtype)");
    if (declare) {
      wv_strmap_put(p->dims, t->name, t->len, 1);
    } else if (!map_get(p->dims, t)) {
      fail(p, t, D_UNKNOWN_DIM,
           "unknown dimension %s in %s: no argument of the kernel has it",
           desc(p, t), where);
    }
    check_new_dim(p, t, dims, ps_symbol(p, t));
    vec_push(p->ctx, dims, ps_symbol(p, t));
    if (declare)
      must_ok(p, wavec_dim_loc(p->k, ps_symbol(p, t), loc_of(p, t)));
  }
  wv_tok *last = names.n ? names.v[names.n - 1] : close;
  int d = last->kind == T_IDENT ? find_name(dtype_names,
                                            WV_ARRAY_LEN(dtype_names),
                                            last->name)
                                : -1;
  if (d < 0)
    fail(p, last, D_UNKNOWN_DTYPE, "expected a dtype (%s) but found %s",
         name_list(p, dtype_names, WV_ARRAY_LEN(dtype_names)),
         desc(p, last));
  *dt = (wavec_dtype)d;
  if (declare && is_word(cur(p), "shared")) {
    advance(p);
    *flags |= WAVEC_ARG_SHARED;
  }
}

/* constant = ['-'] (INT | FLOAT | 'inf') | NAME     (NAME: a hyperparameter)
 * `what` says what takes it ("a Register is filled with a constant"). */
static wavec_value parse_constant(parser *p, const char *what) {
  wv_tok *vt = cur(p);
  bool neg = accept(p, T_MINUS) != NULL;
  double lit;
  wv_tok *c = cur(p);
  if (take_literal(p, &lit))
    return must(p, wavec_scalar(p->k, neg ? -lit : lit, loc_of(p, vt)));
  if (!neg && c->kind == T_IDENT && ahead(p, 1)->kind != T_LPAREN) {
    if (lookup(p, c))
      fail(p, c, D_EXPECTED,
           "%s, but %s is a value (a number, inf or a hyperparameter name "
           "is expected)",
           what, desc(p, c));
    advance(p);
    return name_value(p, c).v;
  }
  fail(p, c, D_EXPECTED,
       "expected a constant (a number, inf or a hyperparameter name) but "
       "found %s",
       desc(p, c));
}

/* register = 'Register' type '(' constant ')' */
static operand parse_register(parser *p) {
  wv_tok *reg = advance(p);
  symvec dims = {0};
  wavec_dtype dt;
  unsigned flags = 0;
  parse_type(p, false, &dims, &dt, &flags, "Register type");
  expect(p, T_LPAREN, "'(' and the initial value after Register[...]");
  wavec_value init = parse_constant(p, "a Register is filled with a constant");
  expect(p, T_RPAREN, NULL);
  return fresh(p, wavec_register(p->k, dims.n, dims.v, dt, init,
                                 loc_of(p, reg)));
}

/* The ops written as calls. `args` gives the positional arguments:
 * v a value, t a dtype, d a dimension, l a list of dimensions; those after
 * '?' are optional. `kw` the keyword arguments it takes. */
enum { KW_EPT, KW_MAPPING, KW_DIM, KW_TARGET_SHAPE, KW_FILL, KW_REDUCE,
       KW_COUNT };
static const char *const kw_names[KW_COUNT] = {
    "elements_per_thread", "mapping", "dim", "target_shape", "fill",
    "reduce"};
#define KW(x) (1u << (x))

typedef struct opsig {
  const char *name;
  wavec_op op;
  const char *args;
  unsigned kw;
  const char *usage;
} opsig;

static const opsig op_table[] = {
    {"read", WAVEC_OP_READ, "v", KW(KW_EPT) | KW(KW_MAPPING) | KW(KW_FILL),
     "read(memory, elements_per_thread = E, mapping = M, fill = VALUE)"},
    {"write", WAVEC_OP_WRITE, "vv", KW(KW_EPT) | KW(KW_MAPPING) | KW(KW_REDUCE),
     "write(value, memory, elements_per_thread = E, mapping = M, reduce = add)"},
    {"mma", WAVEC_OP_MMA, "vvv", 0, "mma(lhs, rhs, acc)"},
    {"exp2", WAVEC_OP_EXP2, "v", 0, "exp2(x)"},
    {"exp", WAVEC_OP_EXP, "v", 0, "exp(x)"},
    {"log2", WAVEC_OP_LOG2, "v", 0, "log2(x)"},
    {"reciprocal", WAVEC_OP_RECIPROCAL, "v", 0, "reciprocal(x)"},
    {"sqrt", WAVEC_OP_SQRT, "v", 0, "sqrt(x)"},
    {"rsqrt", WAVEC_OP_RSQRT, "v", 0, "rsqrt(x)"},
    {"abs", WAVEC_OP_ABS, "v", 0, "abs(x)"},
    {"tanh", WAVEC_OP_TANH, "v", 0, "tanh(x)"},
    {"maximum", WAVEC_OP_MAXIMUM, "vv", 0, "maximum(a, b)"},
    {"minimum", WAVEC_OP_MINIMUM, "vv", 0, "minimum(a, b)"},
    {"gt", WAVEC_OP_GT, "vv", 0, "gt(a, b)"},
    {"lt", WAVEC_OP_LT, "vv", 0, "lt(a, b)"},
    {"ge", WAVEC_OP_GE, "vv", 0, "ge(a, b)"},
    {"le", WAVEC_OP_LE, "vv", 0, "le(a, b)"},
    {"eq", WAVEC_OP_EQ, "vv", 0, "eq(a, b)"},
    {"ne", WAVEC_OP_NE, "vv", 0, "ne(a, b)"},
    {"select", WAVEC_OP_SELECT, "vvv", 0, "select(cond, a, b)"},
    {"cast", WAVEC_OP_CAST, "vt", 0, "cast(x, dtype)"},
    {"permute", WAVEC_OP_PERMUTE, "vl", KW(KW_TARGET_SHAPE),
     "permute(x, [dims])"},
    {"broadcast", WAVEC_OP_BROADCAST, "vl", KW(KW_TARGET_SHAPE),
     "broadcast(x, [dims])"},
    {"max", WAVEC_OP_MAX, "v?v", KW(KW_DIM), "max(x, dim = D) or "
                                            "max(x, acc, dim = D)"},
    {"sum", WAVEC_OP_SUM, "v?v", KW(KW_DIM), "sum(x, dim = D) or "
                                            "sum(x, acc, dim = D)"},
    {"self_index", WAVEC_OP_SELF_INDEX, "dt", 0, "self_index(dim, dtype)"},
};

static const opsig *find_op(const char *name) {
  for (size_t i = 0; i < WV_ARRAY_LEN(op_table); i++)
    if (strcmp(op_table[i].name, name) == 0)
      return &op_table[i];
  return NULL;
}

/* The arguments of one call, as its signature sorts them. */
typedef struct callargs {
  wavec_value v[3];
  uint32_t nv;
  wavec_dtype dt;
  wavec_sym dim;
  symvec dims;
  bool has_dims;
  wavec_expr ept;
  wavec_mapping map;
  wavec_value fill;
  bool add; /* reduce = add */
  unsigned kw_seen;
} callargs;

/* kwarg = NAME '=' (iexpr | NAME | dim | dims)    (by the keyword) */
static void parse_kwarg(parser *p, const opsig *op, callargs *a) {
  wv_tok *kt = advance(p);
  advance(p); /* '=' */
  int kw = find_name(kw_names, KW_COUNT, kt->name);
  if (kw < 0 || !(op->kw & KW(kw))) {
    if (!op->kw)
      fail(p, kt, D_BAD_KWARG,
           "'%s' takes no keyword arguments, but %s is given (usage: %s)",
           op->name, desc(p, kt), op->usage);
    fail(p, kt, D_BAD_KWARG, "'%s' has no keyword argument %s (usage: %s)",
         op->name, desc(p, kt), op->usage);
  }
  if (a->kw_seen & KW(kw))
    fail(p, kt, D_BAD_KWARG, "keyword argument %s is given twice",
         desc(p, kt));
  a->kw_seen |= KW(kw);
  switch (kw) {
  case KW_EPT:
    a->ept = ps_iexpr(p);
    break;
  case KW_MAPPING: {
    wv_tok *m = expect(p, T_IDENT, "a mapping name");
    a->map = map_get(p->maps, m);
    if (!a->map)
      fail(p, m, D_UNKNOWN_NAME,
           "unknown mapping %s (a mapping is defined before its use)",
           desc(p, m));
    break;
  }
  case KW_DIM:
    a->dim = ps_parse_dim(p, D_UNKNOWN_DIM, op->name);
    break;
  case KW_FILL:
    a->fill = parse_constant(p, "a read's fill is a constant");
    break;
  case KW_REDUCE: {
    wv_tok *r = expect(p, T_IDENT, "'add' (the only reduction a write does)");
    if (strcmp(r->name, "add"))
      fail(p, r, D_BAD_KWARG,
           "a write reduces with 'add' only, not %s (usage: %s)", desc(p, r),
           op->usage);
    a->add = true;
    break;
  }
  default: /* KW_TARGET_SHAPE */
    if (a->has_dims)
      fail(p, kt, D_BAD_KWARG,
           "the dimensions of '%s' are given twice (usage: %s)", op->name,
           op->usage);
    parse_dim_list(p, &a->dims, op->name);
    a->has_dims = true;
    break;
  }
}

/* args = '(' [arg {',' arg} [',']] ')'
 * arg  = expr | dtype | dim | dims | kwarg     (by the op's signature) */
static void parse_args(parser *p, const opsig *op, callargs *a) {
  expect(p, T_LPAREN, NULL);
  const char *slot = op->args;
  bool keywords = false;
  while (!at(p, T_RPAREN)) {
    wv_tok *t = cur(p);
    if (t->kind == T_IDENT && ahead(p, 1)->kind == T_ASSIGN) {
      parse_kwarg(p, op, a);
      keywords = true;
    } else {
      if (keywords)
        fail(p, t, D_EXPECTED,
             "expected a keyword argument (positional ones come first) but "
             "found %s",
             desc(p, t));
      if (*slot == '?')
        slot++;
      if (!*slot)
        fail(p, t, D_ARITY, "too many arguments for '%s' (usage: %s)",
             op->name, op->usage);
      switch (*slot++) {
      case 'v':
        a->v[a->nv++] = parse_expr(p).v;
        break;
      case 't':
        a->dt = parse_dtype(p);
        break;
      case 'd':
        a->dim = ps_parse_dim(p, D_UNKNOWN_DIM, op->name);
        break;
      default: /* 'l' */
        if (a->has_dims)
          fail(p, t, D_BAD_KWARG,
               "the dimensions of '%s' are given twice (usage: %s)",
               op->name, op->usage);
        parse_dim_list(p, &a->dims, op->name);
        a->has_dims = true;
        break;
      }
    }
    if (!accept(p, T_COMMA))
      break;
  }
  wv_tok *close = expect(p, T_RPAREN, "',' or ')'");
  bool missing = *slot && *slot != '?' && !(*slot == 'l' && a->has_dims);
  if (missing)
    fail(p, close, D_ARITY, "too few arguments for '%s' (usage: %s)",
         op->name, op->usage);
}

/* call = NAME args      (NAME one of op_table) */
static operand parse_call(parser *p) {
  wv_tok *name = advance(p);
  const opsig *op = find_op(name->name);
  if (!op) {
    if (is_word(name, "iterate"))
      fail(p, name, D_EXPECTED,
           "iterate(...) { ... } must be the whole right-hand side of an "
           "assignment");
    if (lookup(p, name))
      fail(p, name, D_UNKNOWN_OP, "%s is a value, not an operation",
           desc(p, name));
    const char *best = NULL;
    size_t best_d = 0;
    for (size_t i = 0; i < WV_ARRAY_LEN(op_table); i++)
      nearest(name->name, op_table[i].name, &best, &best_d);
    fail(p, name, D_UNKNOWN_OP, "unknown operation %s%s", desc(p, name),
         did_you_mean(p, best));
  }
  callargs a = {0};
  parse_args(p, op, &a);
  wavec_kernel *k = p->k;
  wavec_loc l = loc_of(p, name);
  switch (op->op) {
  case WAVEC_OP_READ:
    return fresh(p, wavec_read_fill(k, a.v[0], a.ept, a.map, a.fill, l));
  case WAVEC_OP_WRITE:
    return fresh(p, a.add ? wavec_write_add(k, a.v[0], a.v[1], a.ept, a.map, l)
                          : wavec_write(k, a.v[0], a.v[1], a.ept, a.map, l));
  case WAVEC_OP_MMA:
    return fresh(p, wavec_mma(k, a.v[0], a.v[1], a.v[2], l));
  case WAVEC_OP_SELECT:
    return fresh(p, wavec_select(k, a.v[0], a.v[1], a.v[2], l));
  case WAVEC_OP_CAST:
    return fresh(p, wavec_cast(k, a.v[0], a.dt, l));
  case WAVEC_OP_PERMUTE:
    return fresh(p, wavec_permute(k, a.v[0], a.dims.n, a.dims.v, l));
  case WAVEC_OP_BROADCAST:
    return fresh(p, wavec_broadcast(k, a.v[0], a.dims.n, a.dims.v, l));
  case WAVEC_OP_MAX:
  case WAVEC_OP_SUM:
    if (!(a.kw_seen & KW(KW_DIM)))
      fail(p, name, D_ARITY, "'%s' needs the reduced dimension (usage: %s)",
           op->name, op->usage);
    return fresh(p, wavec_reduce(k, op->op, a.v[0], a.nv > 1 ? a.v[1] : 0,
                                 a.dim, l));
  case WAVEC_OP_SELF_INDEX:
    return fresh(p, wavec_self_index(k, a.dim, a.dt, l));
  default:
    if (a.nv == 1)
      return fresh(p, wavec_unary(k, op->op, a.v[0], l));
    return fresh(p, wavec_binary(k, op->op, a.v[0], a.v[1], l));
  }
}

/* primary = literal | NAME | call | register | '(' expr ')' */
static operand parse_primary(parser *p) {
  wv_tok *t = cur(p);
  double lit;
  if (t->kind == T_LPAREN) {
    advance(p);
    operand o = parse_expr(p);
    expect(p, T_RPAREN, NULL);
    return o;
  }
  if (take_literal(p, &lit))
    return fresh(p, wavec_scalar(p->k, lit, loc_of(p, t)));
  if (t->kind != T_IDENT)
    fail(p, t, D_EXPECTED, "expected an expression but found %s",
         desc(p, t));
  wv_tok *next = ahead(p, 1);
  if (is_word(t, "Register") && next->kind == T_LBRACK)
    return parse_register(p);
  if (next->kind == T_LPAREN)
    return parse_call(p);
  advance(p);
  return name_value(p, t);
}

/* unary = '-' unary | primary
 * A negated literal is one constant: `-inf`, `-1.0`. */
static operand parse_unary(parser *p) {
  wv_tok *t = cur(p);
  if (t->kind != T_MINUS)
    return parse_primary(p);
  advance(p);
  double lit;
  if (take_literal(p, &lit))
    return fresh(p, wavec_scalar(p->k, -lit, loc_of(p, t)));
  enter(p);
  operand x = parse_unary(p);
  leave(p);
  return fresh(p, wavec_unary(p->k, WAVEC_OP_NEG, x.v, loc_of(p, t)));
}

/* term = unary {('*' | '/' | '%') unary} */
static operand parse_term(parser *p) {
  operand a = parse_unary(p);
  for (;;) {
    wv_tok *t = cur(p);
    wavec_op op;
    if (t->kind == T_STAR)
      op = WAVEC_OP_MUL;
    else if (t->kind == T_SLASH)
      op = WAVEC_OP_DIV;
    else if (t->kind == T_PERCENT)
      op = WAVEC_OP_REM;
    else if (t->kind == T_DSLASH)
      fail(p, t, D_UNKNOWN_OP,
           "%s is for integer expressions (sizes and tiles), not for "
           "values",
           desc(p, t));
    else
      return a;
    advance(p);
    operand b = parse_unary(p);
    a = fresh(p, wavec_binary(p->k, op, a.v, b.v, loc_of(p, t)));
  }
}

/* expr = term {('+' | '-') term} */
static operand parse_expr(parser *p) {
  enter(p);
  operand a = parse_term(p);
  for (;;) {
    wv_tok *t = cur(p);
    wavec_op op;
    if (t->kind == T_PLUS)
      op = WAVEC_OP_ADD;
    else if (t->kind == T_MINUS)
      op = WAVEC_OP_SUB;
    else
      break;
    advance(p);
    operand b = parse_term(p);
    a = fresh(p, wavec_binary(p->k, op, a.v, b.v, loc_of(p, t)));
  }
  leave(p);
  return a;
}

/* ---- statements --------------------------------------------------------------- */

static void parse_body(parser *p, loopctx *loop, const wv_tok *open);

/* iterate = 'iterate' '(' dim [rel dim] {',' NAME '=' expr} [','] ')'
 *           '{' body '}'
 * rel     = '<' | '<=' | '>' | '>='
 * The names after the dimension are the loop-carried values, bound inside
 * the body; the loop's results are bound to the assigned names `lhs`.
 * `K2 <= M` walks only the tiles of K2 that hold a key some query of the
 * workgroup's tile of M can see (wavec_loop_bound). */
static void parse_iterate(parser *p, wv_tok **lhs, uint32_t nlhs) {
  wv_tok *it = advance(p);
  expect(p, T_LPAREN, NULL);
  wavec_sym dim = ps_parse_dim(p, D_UNKNOWN_DIM, "iterate");
  static const wavec_rel rels[] = {[T_LT] = WAVEC_REL_LT, [T_LE] = WAVEC_REL_LE,
                                   [T_GT] = WAVEC_REL_GT, [T_GE] = WAVEC_REL_GE};
  wavec_rel rel = WAVEC_REL_NONE;
  wavec_sym rdim = 0;
  wv_tok *rtok = NULL;
  wavec_expr off = 0;
  wv_tok *otok = NULL;
  if (at(p, T_LT) || at(p, T_LE) || at(p, T_GT) || at(p, T_GE)) {
    rel = rels[advance(p)->kind];
    rtok = cur(p);
    rdim = ps_parse_dim(p, D_UNKNOWN_DIM, "iterate's bound");
    /* E + OFF, E - OFF: an offset, an integer expression of sizes */
    if (at(p, T_PLUS) || at(p, T_MINUS))
      otok = cur(p);
    off = ps_iconst(p, 0);
    while (at(p, T_PLUS) || at(p, T_MINUS)) {
      wv_tok *t = advance(p);
      wavec_expr b = ps_iterm(p);
      off = must(p, wavec_expr_binary(p->k, t->kind == T_PLUS ? WAVEC_EXPR_ADD
                                                              : WAVEC_EXPR_SUB,
                                      off, b, loc_of(p, t)));
    }
    if (!otok)
      off = 0;
  }
  tokvec names = {0};
  valvec inits = {0};
  while (accept(p, T_COMMA)) {
    if (at(p, T_RPAREN))
      break;
    wv_tok *n = expect(p, T_IDENT, "a loop-carried name");
    for (uint32_t i = 0; i < names.n; i++)
      if (strcmp(names.v[i]->name, n->name) == 0)
        fail(p, n, D_REDEFINED, "loop-carried name %s is given twice",
             desc(p, n));
    value_name(p, n);
    expect(p, T_ASSIGN, "'=' and the initial value");
    vec_push(p->ctx, &names, n);
    wavec_value init = parse_expr(p).v;
    vec_push(p->ctx, &inits, init);
  }
  expect(p, T_RPAREN, "',' or ')'");
  if (nlhs != names.n) {
    if (!lhs)
      fail(p, it, D_ARITY,
           "the results of this iterate are unused: assign its %u carried "
           "value%s (x = iterate(...))",
           names.n, plural(names.n));
    fail(p, lhs[0], D_ARITY, "iterate carries %u value%s but %u name%s %s "
                             "assigned",
         names.n, plural(names.n), nlhs, plural(nlhs),
         nlhs == 1 ? "is" : "are");
  }
  wv_tok *open = expect(p, T_LBRACE, "'{' and the loop body");
  wavec_loop l = must(p, wavec_loop_begin(p->k, dim, names.n, inits.v,
                                          loc_of(p, it)));
  if (rel)
    must_ok(p, wavec_loop_bound(p->k, l, rel, rdim, loc_of(p, rtok)));
  if (off)
    must_ok(p, wavec_loop_bound_offset(p->k, l, off, loc_of(p, otok)));
  uint32_t mark = p->binds.n;
  for (uint32_t i = 0; i < names.n; i++)
    bind(p, names.v[i], must(p, wavec_loop_carried(p->k, l, i)), true);
  loopctx lc = {l, names.n, false};
  enter(p);
  parse_body(p, &lc, open);
  leave(p);
  unbind_to(p, mark, it->line);
  for (uint32_t i = 0; i < nlhs; i++)
    bind(p, lhs[i], must(p, wavec_loop_result(p->k, l, i)), true);
}

/* assign = NAME {',' NAME} '=' (iterate | expr)
 * Several names only for iterate, which gives several values. */
static void parse_assign(parser *p) {
  tokvec lhs = {0};
  do {
    wv_tok *n = expect(p, T_IDENT, "a name");
    for (uint32_t i = 0; i < lhs.n; i++)
      if (strcmp(lhs.v[i]->name, n->name) == 0)
        fail(p, n, D_REDEFINED, "%s is assigned twice in one statement",
             desc(p, n));
    value_name(p, n);
    vec_push(p->ctx, &lhs, n);
  } while (accept(p, T_COMMA));
  expect(p, T_ASSIGN, "'=' or ','");
  wv_tok *r = cur(p);
  if (is_word(r, "iterate") && ahead(p, 1)->kind == T_LPAREN) {
    parse_iterate(p, lhs.v, lhs.n);
    return;
  }
  if (lhs.n > 1)
    fail(p, r, D_ARITY, "%u names are assigned, but only iterate gives more "
                        "than one value",
         lhs.n);
  operand o = parse_expr(p);
  bind(p, lhs.v[0], o.v, !o.ref);
}

/* yield = 'yield' [expr {',' expr}] */
static void parse_yield(parser *p, loopctx *loop) {
  wv_tok *y = advance(p);
  valvec vals = {0};
  if (!at(p, T_NL) && !at(p, T_RBRACE) && !at(p, T_EOF)) {
    do {
      wavec_value v = parse_expr(p).v;
      vec_push(p->ctx, &vals, v);
    } while (accept(p, T_COMMA));
  }
  if (vals.n != loop->n)
    fail(p, y, D_YIELD, "yield gives %u value%s but the iterate carries %u",
         vals.n, plural(vals.n), loop->n);
  must_ok(p, wavec_loop_yield(p->k, loop->l, vals.n, vals.v, loc_of(p, y)));
  loop->yielded = true;
}

/* stmt = assign | 'write' args | iterate        (iterate: no carried values) */
static void parse_stmt(parser *p) {
  wv_tok *t = cur(p), *next = ahead(p, 1);
  if (t->kind == T_IDENT) {
    if (next->kind == T_ASSIGN || next->kind == T_COMMA) {
      parse_assign(p);
      return;
    }
    if (next->kind == T_LPAREN && is_word(t, "write")) {
      parse_call(p);
      return;
    }
    if (next->kind == T_LPAREN && is_word(t, "iterate")) {
      parse_iterate(p, NULL, 0);
      return;
    }
    if (next->kind == T_LPAREN && find_op(t->name))
      fail(p, t, D_EXPECTED,
           "the value of %s(...) is unused: assign it to a name", t->name);
  }
  fail(p, t, D_EXPECTED,
       "expected a statement (NAME = ..., write(...) or yield) but found %s",
       desc(p, t));
}

static void parse_item(parser *p, loopctx *loop) {
  wv_tok *t = cur(p), *next = ahead(p, 1);
  p->ctx->at = (wavec_loc){p->file, t->line, t->col};
  bool cons = is_word(t, "constraints") && next->kind == T_LBRACE;
  bool defs = is_word(t, "defaults") && next->kind == T_LBRACE;
  bool map = is_word(t, "mapping") && next->kind == T_IDENT;
  if ((cons || defs || map) && loop)
    fail(p, t, D_MISPLACED, "%s belongs at the top level of the kernel, not "
                            "inside an iterate body",
         desc(p, t));
  if (cons) {
    advance(p);
    ps_braced(p, ps_constraint, NULL);
  } else if (defs) {
    advance(p);
    ps_braced(p, ps_default, NULL);
  } else if (map) {
    ps_mapping(p);
  } else if (is_word(t, "yield")) {
    if (!loop)
      fail(p, t, D_MISPLACED, "'yield' outside of an iterate body");
    parse_yield(p, loop);
  } else {
    parse_stmt(p);
  }
}

/* body = {item END} '}'
 * Inside an iterate (`loop`), the last item is the yield; a loop without
 * carried values may omit it. `open` is the body's '{'. */
static void parse_body(parser *p, loopctx *loop, const wv_tok *open) {
  for (;;) {
    skip_ends(p);
    wv_tok *t = cur(p);
    if (t->kind == T_RBRACE)
      break;
    if (t->kind == T_EOF)
      fail(p, t, D_EXPECTED, "expected '}' closing the %s opened at line %u "
                             "but found end of input",
           loop ? "iterate body" : "kernel body", open->line);
    if (loop && loop->yielded)
      fail(p, t, D_MISPLACED, "'yield' must be the last statement of the "
                              "iterate body, but %s follows it",
           desc(p, t));
    parse_item(p, loop);
    end_statement(p);
  }
  wv_tok *close = advance(p);
  if (loop && !loop->yielded) {
    if (loop->n)
      fail(p, close, D_YIELD, "the iterate body must end with a yield of "
                              "%u value%s (the next carried values)",
           loop->n, plural(loop->n));
    must_ok(p, wavec_loop_yield(p->k, loop->l, 0, NULL, loc_of(p, close)));
  }
}

/* param = NAME ':' 'Memory' type */
static void parse_param(parser *p) {
  wv_tok *name = expect(p, T_IDENT, "an argument name");
  if (lookup(p, name))
    fail(p, name, D_REDEFINED, "argument %s is declared twice",
         desc(p, name));
  value_name(p, name);
  expect(p, T_COLON, "':' and the argument's type");
  wv_tok *ty = cur(p);
  if (!is_word(ty, "Memory"))
    fail(p, ty, D_EXPECTED, "expected a type Memory[...] but found %s",
         desc(p, ty));
  advance(p);
  symvec dims = {0};
  wavec_dtype dt;
  unsigned flags = 0;
  parse_type(p, true, &dims, &dt, &flags, "Memory type");
  wavec_value v = must(p, wavec_arg(p->k, name->name, dims.n, dims.v, dt,
                                    flags, loc_of(p, name)));
  bind(p, name, v, false); /* wavec_arg names it */
}

/* kernel = 'kernel' NAME '(' [param {',' param} [',']] ')' '{' body */
static void parse_kernel(parser *p) {
  wv_tok *kw = cur(p);
  if (!is_word(kw, "kernel"))
    fail(p, kw, D_EXPECTED, "expected 'kernel' but found %s", desc(p, kw));
  advance(p);
  wv_tok *name = expect(p, T_IDENT, "a kernel name");
  if (wavec_kernel_find(p->ctx, name->name))
    fail(p, name, D_REDEFINED, "kernel %s is defined twice", desc(p, name));
  p->k = wavec_kernel_begin(p->ctx, name->name, loc_of(p, name));
  if (!p->k)
    builder_failed(p);
  p->dims = wv_strmap_new(p->ctx);
  p->hyper = wv_strmap_new(p->ctx);
  p->maps = wv_strmap_new(p->ctx);
  p->scope = wv_strmap_new(p->ctx);
  p->gone = wv_strmap_new(p->ctx);
  p->named = wv_strmap_new(p->ctx);
  p->binds.n = 0;
  expect(p, T_LPAREN, NULL);
  while (!at(p, T_RPAREN)) {
    parse_param(p);
    if (!accept(p, T_COMMA))
      break;
  }
  expect(p, T_RPAREN, "',' or ')'");
  wv_tok *open = expect(p, T_LBRACE, "'{' and the kernel body");
  collect_defaults(p);
  parse_body(p, NULL, open);
  must_ok(p, wavec_kernel_end(p->k));
  p->k = NULL;
}

/* A kernel's header, `kernel NAME (`, starts at token i (read raw: a
 * token the lexer refused is no header, and no error here). */
static bool header_at(const parser *p, uint32_t i) {
  return i + 2 < p->ntok && is_word(&p->t[i], "kernel") &&
         p->t[i + 1].kind == T_IDENT && p->t[i + 2].kind == T_LPAREN;
}

/* wavec_parse_kernel: skips what is not the kernel asked for, unchecked:
 * a kernel to the brace that closes its body, or, where its braces do not
 * balance (or it is no kernel), to the next header at the start of a line.
 * Its tokens are only read raw, so nothing in it is an error. */
static void skip_kernel(parser *p) {
  int depth = 0;
  bool opened = false;
  for (p->pos++; p->pos + 1 < p->ntok && !(opened && depth == 0); p->pos++) {
    const wv_tok *t = &p->t[p->pos];
    if (header_at(p, p->pos) && t->line > p->t[p->pos - 1].line)
      return; /* (the first token of its line) */
    depth += t->kind == T_LBRACE ? 1 : t->kind == T_RBRACE ? -1 : 0;
    opened |= t->kind == T_LBRACE;
  }
}

/* program = {kernel} EOF           (at least one kernel) */
static void parse_program(parser *p) {
  skip_ends(p);
  if (at(p, T_EOF))
    fail(p, cur(p), D_NO_KERNEL, "no kernel in %s", p->file);
  while (!at(p, T_EOF)) {
    if (p->only && !(header_at(p, p->pos) &&
                     !strcmp(p->t[p->pos + 1].name, p->only)))
      skip_kernel(p);
    else
      parse_kernel(p);
    skip_ends(p);
  }
}

/* Everything but the guard, so that no local of wavec_parse lives across
 * the setjmp. */
static void parse_source(wavec_ctx *ctx, const char *filename,
                         const char *src, size_t len, const char *only) {
  uint64_t t0 = wv_now_ns();
  ctx->times.n = 0;
  wavec_loc none = {0};
  if (!src && len)
    wv_fail(ctx, D_INVALID, none, "wavec_parse: the source text is NULL");
  if (len > UINT32_MAX / 2)
    wv_fail(ctx, D_INVALID, none, "wavec_parse: source of %zu bytes is too "
                                  "large",
            len);
  wv_add_source(ctx, filename ? filename : "<input>", src ? src : "", len);
  const wv_source *s = &ctx->sources.v[ctx->sources.n - 1];
  wv_toks toks = {0};
  wv_lex(ctx, s->text, s->len, &toks);
  parser p = {0};
  p.ctx = ctx;
  p.file = s->file;
  p.t = toks.v;
  p.ntok = toks.n;
  p.only = only;
  parse_program(&p);
  wv_release(ctx, toks.v); /* the graph holds what the tokens said */
  wv_time tm = {"parse", wv_now_ns() - t0};
  vec_push(ctx, &ctx->times, tm);
}

wavec_status wavec_parse_kernel(wavec_ctx *ctx, const char *filename,
                                const char *src, size_t len,
                                const char *kernel) {
  if (!ctx)
    return WAVEC_ERR_INVALID;
  if (ctx->status != WAVEC_OK)
    return ctx->status; /* the context keeps its first error */
  WV_GUARD(ctx, ctx->status);
  parse_source(ctx, filename, src, len, kernel);
  ctx->at = (wavec_loc){0};
  WV_UNGUARD(ctx);
  return WAVEC_OK;
}

wavec_status wavec_parse(wavec_ctx *ctx, const char *filename,
                         const char *src, size_t len) {
  return wavec_parse_kernel(ctx, filename, src, len, NULL);
}
