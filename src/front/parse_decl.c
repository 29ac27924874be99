/* The parser's integer expressions (sizes, tiles, coordinates, defaults)
 * and its declarations: constraints, hardware entries, dynamic dims,
 * defaults and mappings (parse.c parses the kernels, values and
 * statements around them). */
#include "front/parse.h"

static const char *const mma_names[] = {
#define X(e, v, name) [e] = name,
    WAVEC_MMAS(X)
#undef X
};

/* ---- integer expressions ---------------------------------------------------- */

wavec_expr ps_iexpr(parser *p);

wavec_expr ps_iconst(parser *p, int64_t v) {
  return must(p, wavec_expr_int(p->k, v));
}

/* iprimary = INT | NAME | '(' iexpr ')'
 *          | ('ceildiv' | 'min' | 'max') '(' iexpr ',' iexpr ')'
 * A NAME is a mapping iterator inside a mapping, else a symbol. */
static wavec_expr parse_iprimary(parser *p) {
  wv_tok *t = cur(p);
  if (t->kind == T_INT) {
    advance(p);
    return ps_iconst(p, t->ival);
  }
  if (t->kind == T_LPAREN) {
    advance(p);
    wavec_expr e = ps_iexpr(p);
    expect(p, T_RPAREN, NULL);
    return e;
  }
  if (t->kind == T_FLOAT || is_word(t, "inf"))
    fail(p, t, D_NOT_INT, "expected an integer but found %s (sizes, tiles "
                          "and coordinates are integers)",
         desc(p, t));
  if (t->kind != T_IDENT)
    fail(p, t, D_EXPECTED, "expected an integer expression but found %s",
         desc(p, t));
  advance(p);
  if (at(p, T_LPAREN)) {
    wavec_expr_op op;
    if (strcmp(t->name, "ceildiv") == 0)
      op = WAVEC_EXPR_CEILDIV;
    else if (strcmp(t->name, "min") == 0)
      op = WAVEC_EXPR_MIN;
    else if (strcmp(t->name, "max") == 0)
      op = WAVEC_EXPR_MAX;
    else
      fail(p, t, D_UNKNOWN_OP, "unknown function %s in an integer expression "
                               "(expected ceildiv, min or max)",
           desc(p, t));
    advance(p);
    wavec_expr a = ps_iexpr(p);
    expect(p, T_COMMA, "',' and a second operand");
    wavec_expr b = ps_iexpr(p);
    expect(p, T_RPAREN, NULL);
    return must(p, wavec_expr_binary(p->k, op, a, b, loc_of(p, t)));
  }
  for (uint32_t i = 0; i < p->iters.n; i++)
    if (strcmp(p->iters.v[i].name, t->name) == 0)
      return must(p, wavec_expr_sym(p->k, p->iters.v[i].sym));
  return must(p, wavec_expr_sym(p->k, ps_symbol(p, t)));
}

/* iunary = '-' iunary | iprimary */
static wavec_expr parse_iunary(parser *p) {
  wv_tok *t = cur(p);
  if (t->kind != T_MINUS)
    return parse_iprimary(p);
  advance(p);
  if (at(p, T_INT))
    return ps_iconst(p, -advance(p)->ival);
  enter(p);
  wavec_expr x = parse_iunary(p);
  leave(p);
  return must(p, wavec_expr_binary(p->k, WAVEC_EXPR_SUB, ps_iconst(p, 0), x,
                                   loc_of(p, t)));
}

/* iterm = iunary {('*' | '/' | '//' | '%') iunary} */
wavec_expr ps_iterm(parser *p) {
  wavec_expr a = parse_iunary(p);
  for (;;) {
    wv_tok *t = cur(p);
    wavec_expr_op op;
    if (t->kind == T_STAR)
      op = WAVEC_EXPR_MUL;
    else if (t->kind == T_SLASH)
      op = WAVEC_EXPR_DIV;
    else if (t->kind == T_DSLASH)
      op = WAVEC_EXPR_FLOORDIV;
    else if (t->kind == T_PERCENT)
      op = WAVEC_EXPR_MOD;
    else
      return a;
    advance(p);
    wavec_expr b = parse_iunary(p);
    a = must(p, wavec_expr_binary(p->k, op, a, b, loc_of(p, t)));
  }
}

/* iexpr = iterm {('+' | '-') iterm} */
wavec_expr ps_iexpr(parser *p) {
  enter(p);
  wavec_expr a = ps_iterm(p);
  for (;;) {
    wv_tok *t = cur(p);
    wavec_expr_op op;
    if (t->kind == T_PLUS)
      op = WAVEC_EXPR_ADD;
    else if (t->kind == T_MINUS)
      op = WAVEC_EXPR_SUB;
    else
      break;
    advance(p);
    wavec_expr b = ps_iterm(p);
    a = must(p, wavec_expr_binary(p->k, op, a, b, loc_of(p, t)));
  }
  leave(p);
  return a;
}

/* ---- declarations --------------------------------------------------------------- */

/* braced = '{' {entry (',' | END)} '}'      (entries separated by commas or
 * line ends; `entry` parses one) */
void ps_braced(parser *p, void (*entry)(parser *, void *),
                         void *ud) {
  expect(p, T_LBRACE, NULL);
  for (;;) {
    skip_ends(p);
    if (accept(p, T_RBRACE))
      return;
    entry(p, ud);
    if (accept(p, T_COMMA) || accept(p, T_NL))
      continue;
    if (!at(p, T_RBRACE))
      fail(p, cur(p), D_EXPECTED, "expected ',', end of line or '}' but "
                                  "found %s",
           desc(p, cur(p)));
  }
}

/* vector_shape = dim ':' iexpr */
static void parse_vector_shape(parser *p, void *ud) {
  (void)ud;
  wv_tok *d = cur(p);
  wavec_sym dim = ps_parse_dim(p, D_CONSTRAINT_DIM, "vector_shapes");
  expect(p, T_COLON, "':' and the vector size");
  wavec_expr e = ps_iexpr(p);
  must_ok(p, wavec_vector_shape(p->k, dim, e, loc_of(p, d)));
}

/* hardware = 'hardware' '(' [hwentry {',' hwentry} [',']] ')'
 * hwentry  = 'threads_per_wave' '=' iexpr
 *          | ('mma' | 'mma_type') '=' MMA
 *          | 'vector_shapes' '=' braced(vector_shape)
 *          | HWINT '=' iexpr       (an entry of WAVEC_HW_INTS: stages, ...) */
static void parse_hardware(parser *p) {
  static const char *const entries[] = {"threads_per_wave", "mma",
                                        "vector_shapes", "mma_type"};
  static const char *const ints[] = {
#define X(e, v, name, lo, hi) [e] = name,
      WAVEC_HW_INTS(X)
#undef X
  };
  expect(p, T_LPAREN, NULL);
  unsigned seen = 0;
  while (!at(p, T_RPAREN)) {
    wv_tok *kt = expect(p, T_IDENT, "a hardware entry");
    int e = find_name(entries, WV_ARRAY_LEN(entries), kt->name);
    if (e == 3)
      e = 1; /* Wave's spelling */
    for (int i = 0; e < 0 && i < WAVEC_HW_INT_COUNT; i++)
      if (strcmp(kt->name, ints[i]) == 0)
        e = 4 + i;
    if (e < 0)
      fail(p, kt, D_BAD_KWARG, "hardware has no entry %s (it takes %s, %s)",
           desc(p, kt), name_list(p, entries, 3),
           name_list(p, ints, WAVEC_HW_INT_COUNT));
    if (seen & (1u << e))
      fail(p, kt, D_BAD_KWARG, "hardware entry %s is given twice",
           desc(p, kt));
    seen |= 1u << e;
    expect(p, T_ASSIGN, "'='");
    wv_tok *v = cur(p);
    if (e == 0) {
      wavec_expr n = ps_iexpr(p);
      must_ok(p, wavec_threads_per_wave(p->k, n, loc_of(p, v)));
    } else if (e >= 4) {
      wavec_expr n = ps_iexpr(p);
      must_ok(p, wavec_hardware_int(p->k, (wavec_hw_int)(e - 4), n,
                                    loc_of(p, v)));
    } else if (e == 1) {
      int m = v->kind == T_IDENT
                  ? find_name(mma_names, WV_ARRAY_LEN(mma_names), v->name)
                  : -1;
      if (m < 0)
        fail(p, v, D_UNKNOWN_MMA, "unknown mma type %s (expected one of %s)",
             desc(p, v), name_list(p, mma_names, WV_ARRAY_LEN(mma_names)));
      advance(p);
      must_ok(p, wavec_hardware_mma(p->k, (wavec_mma_kind)m, loc_of(p, v)));
    } else {
      ps_braced(p, parse_vector_shape, NULL);
    }
    if (!accept(p, T_COMMA))
      break;
  }
  expect(p, T_RPAREN, "',' or ')'");
}

/* dynamic = 'dynamic' '(' dim [',' 'multiple_of' '=' iexpr] ')' */
static void parse_dynamic(parser *p, wv_tok *t) {
  expect(p, T_LPAREN, NULL);
  wavec_sym dim = ps_parse_dim(p, D_CONSTRAINT_DIM, "dynamic");
  wavec_expr multiple = 0;
  if (accept(p, T_COMMA)) {
    wv_tok *kt = expect(p, T_IDENT, "multiple_of");
    if (!is_word(kt, "multiple_of"))
      fail(p, kt, D_BAD_KWARG,
           "dynamic has no keyword argument %s (usage: dynamic(DIM) or "
           "dynamic(DIM, multiple_of = M))",
           desc(p, kt));
    expect(p, T_ASSIGN, "'='");
    multiple = ps_iexpr(p);
  }
  expect(p, T_RPAREN, NULL);
  must_ok(p, wavec_dynamic(p->k, dim, multiple, loc_of(p, t)));
}

/* constraint = 'workgroup' '(' dim ',' iexpr ',' INT ')'
 *            | ('wave' | 'tiling') '(' dim ',' iexpr ')'
 *            | dynamic | hardware */
void ps_constraint(parser *p, void *ud) {
  (void)ud;
  wv_tok *t = expect(p, T_IDENT, "a constraint (workgroup, wave, tiling, "
                                 "dynamic or hardware)");
  if (is_word(t, "hardware")) {
    parse_hardware(p);
    return;
  }
  if (is_word(t, "dynamic")) {
    parse_dynamic(p, t);
    return;
  }
  bool wg = is_word(t, "workgroup");
  if (!wg && !is_word(t, "wave") && !is_word(t, "tiling"))
    fail(p, t, D_UNKNOWN_OP, "unknown constraint %s (expected workgroup, "
                             "wave, tiling, dynamic or hardware)",
         desc(p, t));
  expect(p, T_LPAREN, NULL);
  wavec_sym dim = ps_parse_dim(p, D_CONSTRAINT_DIM, t->name);
  expect(p, T_COMMA, "',' and the tile size");
  wavec_loc tile_at = loc_of(p, cur(p));
  wavec_expr tile = ps_iexpr(p);
  int axis = 0;
  if (wg) {
    expect(p, T_COMMA, "',' and the grid axis (0, 1 or 2)");
    wv_tok *a = cur(p);
    if (a->kind != T_INT)
      fail(p, a, D_CONSTRAINT_AXIS,
           "expected a grid axis (0, 1 or 2) but found %s", desc(p, a));
    if (a->ival > 2)
      fail(p, a, D_CONSTRAINT_AXIS, "grid axis %lld is not 0, 1 or 2",
           (long long)a->ival);
    axis = (int)advance(p)->ival;
  }
  expect(p, T_RPAREN, NULL);
  wavec_loc l = loc_of(p, t);
  if (wg)
    must_ok(p, wavec_workgroup(p->k, dim, tile, axis, l));
  else if (is_word(t, "wave"))
    must_ok(p, wavec_wave(p->k, dim, tile, l));
  else
    must_ok(p, wavec_tiling(p->k, dim, tile, l));
  must_ok(p, wavec_constraint_tile_loc(p->k, tile_at));
}

/* default = NAME '=' (['-'] (INT | FLOAT | 'inf') | iexpr)
 * An integer literal gives an integer hyperparameter, any other literal a
 * float; an integer expression of sizes and hyperparameters
 * (`128 + 64 * min(K1 // 80, 1)`) is evaluated when they have values. */
void ps_default(parser *p, void *ud) {
  (void)ud;
  wv_tok *n = expect(p, T_IDENT, "a hyperparameter name");
  expect(p, T_ASSIGN, "'=' and a value");
  wavec_sym s = ps_symbol(p, n);
  /* a literal is one token (after a sign) followed by the item's end */
  uint32_t at = p->pos + (cur(p)->kind == T_MINUS);
  wv_tok *lit = at < p->ntok ? &p->t[at] : NULL;
  wv_tok *after = at + 1 < p->ntok ? &p->t[at + 1] : NULL;
  bool literal = lit && after &&
                 (lit->kind == T_INT || lit->kind == T_FLOAT ||
                  is_word(lit, "inf")) &&
                 after->kind != T_PLUS && after->kind != T_MINUS &&
                 after->kind != T_STAR && after->kind != T_SLASH &&
                 after->kind != T_DSLASH && after->kind != T_PERCENT;
  if (!literal && lit && (lit->kind == T_FLOAT || is_word(lit, "inf")))
    fail(p, lit, D_NOT_INT, "a default is a number or an integer "
                            "expression of sizes and hyperparameters; %s "
                            "starts a float expression",
         desc(p, lit));
  if (!literal) {
    wavec_expr e = ps_iexpr(p);
    must_ok(p, wavec_default_expr(p->k, s, e, loc_of(p, n)));
    return;
  }
  bool neg = accept(p, T_MINUS) != NULL;
  wv_tok *v = cur(p);
  if (v->kind == T_INT) {
    advance(p);
    must_ok(p, wavec_default_int(p->k, s, neg ? -v->ival : v->ival,
                                 loc_of(p, n)));
  } else if (v->kind == T_FLOAT || is_word(v, "inf")) {
    advance(p);
    double f = v->kind == T_FLOAT ? v->fval : INFINITY;
    must_ok(p, wavec_default_float(p->k, s, neg ? -f : f, loc_of(p, n)));
  } else {
    fail(p, v, D_EXPECTED, "expected a number for %s but found %s",
         desc(p, n), desc(p, v));
  }
}

typedef struct mapside {
  wavec_mapping m;
  bool inputs;
} mapside;

/* map_entry = dim ':' iexpr */
static void parse_map_entry(parser *p, void *ud) {
  mapside *ms = ud;
  wv_tok *d = cur(p);
  wavec_sym dim = ps_parse_dim(p, D_UNKNOWN_DIM, "mapping");
  expect(p, T_COLON, "':' and a coordinate");
  wavec_expr e = ps_iexpr(p);
  if (ms->inputs)
    must_ok(p, wavec_mapping_input(p->k, ms->m, dim, e, loc_of(p, d)));
  else
    must_ok(p, wavec_mapping_output(p->k, ms->m, dim, e, loc_of(p, d)));
}

/* mapping = 'mapping' NAME '(' [NAME {',' NAME} [',']] ')'
 *           '{' {('inputs' | 'outputs') braced(map_entry) [',' | END]} '}'
 * The names in parentheses are the mapping's iterators, local to it. */
void ps_mapping(parser *p) {
  advance(p); /* 'mapping' */
  wv_tok *name = expect(p, T_IDENT, "a mapping name");
  if (map_get(p->maps, name))
    fail(p, name, D_REDEFINED, "mapping %s is defined twice",
         desc(p, name));
  wavec_mapping m = must(p, wavec_mapping_begin(p->k, name->name,
                                                loc_of(p, name)));
  expect(p, T_LPAREN, NULL);
  p->iters.n = 0;
  while (!at(p, T_RPAREN)) {
    wv_tok *it = expect(p, T_IDENT, "an iterator name");
    for (uint32_t i = 0; i < p->iters.n; i++)
      if (strcmp(p->iters.v[i].name, it->name) == 0)
        fail(p, it, D_REDEFINED, "iterator %s is given twice", desc(p, it));
    iter e = {it->name,
              must(p, wavec_mapping_iter(p->k, m, it->name, loc_of(p, it)))};
    vec_push(p->ctx, &p->iters, e);
    if (!accept(p, T_COMMA))
      break;
  }
  expect(p, T_RPAREN, "',' or ')'");
  expect(p, T_LBRACE, "'{' and the mapping's inputs and outputs");
  for (;;) {
    skip_ends(p);
    if (accept(p, T_RBRACE))
      break;
    wv_tok *side = cur(p);
    bool in = is_word(side, "inputs");
    if (!in && !is_word(side, "outputs"))
      fail(p, side, D_EXPECTED,
           "expected 'inputs', 'outputs' or '}' in mapping %s but found %s",
           desc(p, name), desc(p, side));
    advance(p);
    mapside ms = {m, in};
    ps_braced(p, parse_map_entry, &ms);
    accept(p, T_COMMA); /* `inputs {...}, outputs {...}` on one line */
  }
  p->iters.n = 0;
  must_ok(p, wavec_mapping_end(p->k, m, loc_of(p, name)));
  wv_strmap_put(p->maps, name->name, name->len, m);
}

/* item = 'constraints' braced(constraint) | 'defaults' braced(default)
 *      | mapping | yield | stmt
 * Declarations may come in any order among the statements of the kernel
 * body, but not inside an iterate body; yield only inside one. */
