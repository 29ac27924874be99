/* The parser's shared state and token helpers (parse.c: kernels, values,
 * statements; parse_decl.c: integer expressions and the declarations:
 * constraints, hardware, dynamic dims, defaults, mappings). Internal to
 * src/front. */
#ifndef WV_FRONT_PARSE_H
#define WV_FRONT_PARSE_H

#include <math.h>

#include "front/front.h"

/* Deeper nesting of expressions or loops is refused: recursion is bounded
 * whatever the input. */
enum { MAX_DEPTH = 200 };

typedef VEC(wavec_sym) symvec;
typedef VEC(wavec_value) valvec;
typedef VEC(wv_tok *) tokvec;

/* A value name; `prev` is the index + 1 of the binding it shadows. */
typedef struct binding {
  const char *name;
  wavec_value v;
  uint32_t prev;
} binding;

typedef struct iter {
  const char *name;
  wavec_sym sym;
} iter;

/* The iterate whose body is being parsed. */
typedef struct loopctx {
  wavec_loop l;
  uint32_t n; /* carried values */
  bool yielded;
} loopctx;

typedef struct parser {
  wavec_ctx *ctx;
  const char *file; /* the context's copy */
  wv_tok *t;        /* tokens; the last is T_EOF */
  uint32_t ntok, pos;
  int depth;
  /* the kernel being parsed */
  wavec_kernel *k;
  wv_strmap *dims;  /* dimension names of the arguments */
  wv_strmap *hyper; /* names that may stand for a scalar hyperparameter */
  wv_strmap *maps;  /* mapping name -> wavec_mapping */
  wv_strmap *scope; /* value name -> index + 1 of its newest binding */
  wv_strmap *gone;  /* value name -> line of the iterate whose body had it */
  wv_strmap *named; /* value name -> index + 1 of the token that first took it */
  VEC(binding) binds;
  VEC(iter) iters; /* of the mapping being parsed; empty elsewhere */
  const char *only; /* wavec_parse_kernel's kernel, or NULL: every one */
} parser;


/* ---- tokens and messages ------------------------------------------------ */

static inline wavec_loc loc_of(parser *p, const wv_tok *t) {
  wavec_loc l = {p->file, t->line, t->col};
  return l;
}

/* How a message names a token: "'x'", "end of line", "end of input". */
static inline const char *desc(parser *p, const wv_tok *t) {
  if (t->kind == T_EOF)
    return "end of input";
  if (t->kind == T_NL) /* len 0: the end of the last line */
    return !t->len ? "end of input" : t->s[0] == ';' ? "';'" : "end of line";
  wv_buf b;
  wv_buf_init(&b, p->ctx);
  if (t->len > 40)
    wv_buf_printf(&b, "'%.40s...'", t->s);
  else
    wv_buf_printf(&b, "'%.*s'", (int)t->len, t->s);
  return wv_buf_str(&b);
}

static inline _Noreturn void fail(parser *p, const wv_tok *t, wv_diag_id id,
                           const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static inline _Noreturn void fail(parser *p, const wv_tok *t, wv_diag_id id,
                           const char *fmt, ...) {
  wv_buf b;
  wv_buf_init(&b, p->ctx);
  va_list ap;
  va_start(ap, fmt);
  wv_buf_vprintf(&b, fmt, ap);
  va_end(ap);
  /* an invalid character glued to the token (xé) is the mistake, not the
   * token before it */
  const wv_tok *next = t + 1;
  if (t->kind != T_EOF && next < p->t + p->ntok && next->kind == T_BAD &&
      next->s == t->s + t->len)
    wv_fail(p->ctx, next->bad, loc_of(p, next), "%s", next->badmsg);
  wv_fail(p->ctx, id, loc_of(p, t), "%s", wv_buf_str(&b));
}

/* A builder call failed: it recorded the diagnostic; unwind with it. */
static inline _Noreturn void builder_failed(parser *p) {
  wv_assert(p->ctx, wv_failed(p->ctx));
  wv_throw(p->ctx);
}

static inline uint32_t must(parser *p, uint32_t handle) {
  if (!handle)
    builder_failed(p);
  return handle;
}

static inline void must_ok(parser *p, wavec_status st) {
  if (st != WAVEC_OK)
    builder_failed(p);
}

static inline const char *plural(uint32_t n) { return n == 1 ? "" : "s"; }

/* The current token. Reaching a lexical error reports it, so lexical and
 * syntax errors come out in source order. */
static inline wv_tok *cur(parser *p) {
  wv_tok *t = &p->t[p->pos];
  if (t->kind == T_BAD)
    wv_fail(p->ctx, t->bad, loc_of(p, t), "%s", t->badmsg);
  return t;
}

/* Lookahead without reporting: a T_BAD ahead just does not match. */
static inline wv_tok *ahead(parser *p, uint32_t n) {
  uint32_t i = p->pos + n;
  return &p->t[i < p->ntok ? i : p->ntok - 1];
}

static inline wv_tok *advance(parser *p) {
  wv_tok *t = cur(p);
  if (t->kind != T_EOF)
    p->pos++;
  return t;
}

static inline bool at(parser *p, wv_tok_kind k) { return cur(p)->kind == k; }

static inline bool is_word(const wv_tok *t, const char *w) {
  return t->kind == T_IDENT && strcmp(t->name, w) == 0;
}

static inline wv_tok *accept(parser *p, wv_tok_kind k) {
  return at(p, k) ? advance(p) : NULL;
}

/* `what` names what was expected; NULL names the kind ("')'"). */
static inline wv_tok *expect(parser *p, wv_tok_kind k, const char *what) {
  wv_tok *t = cur(p);
  if (t->kind != k)
    fail(p, t, D_EXPECTED, "expected %s but found %s",
         what ? what : wv_tok_kind_name(k), desc(p, t));
  return advance(p);
}

static inline void skip_ends(parser *p) {
  while (at(p, T_NL))
    advance(p);
}

/* A statement ends at a line end or ';', or before the '}' of its block. */
static inline void end_statement(parser *p) {
  wv_tok *t = cur(p);
  if (t->kind == T_NL)
    advance(p);
  else if (t->kind != T_RBRACE && t->kind != T_EOF)
    fail(p, t, D_EXPECTED, "expected end of line but found %s", desc(p, t));
}

static inline void enter(parser *p) {
  if (++p->depth > MAX_DEPTH)
    fail(p, cur(p), D_TOO_DEEP, "nesting deeper than %d levels", MAX_DEPTH);
}

static inline void leave(parser *p) { p->depth--; }

/* The index of s in names, or -1. */
static inline int find_name(const char *const *names, size_t n, const char *s) {
  for (size_t i = 0; i < n; i++)
    if (strcmp(names[i], s) == 0)
      return (int)i;
  return -1;
}

/* "f16, bf16, f32, i32, i1" */
static inline const char *name_list(parser *p, const char *const *names, size_t n) {
  wv_buf b;
  wv_buf_init(&b, p->ctx);
  for (size_t i = 0; i < n; i++)
    wv_buf_printf(&b, "%s%s", i ? ", " : "", names[i]);
  return wv_buf_str(&b);
}

static inline uint32_t map_get(wv_strmap *m, const wv_tok *t) {
  return wv_strmap_get(m, t->name, t->len);
}

/* Shared between parse.c and parse_decl.c. */
wavec_sym ps_symbol(parser *p, const wv_tok *t);
wavec_sym ps_parse_dim(parser *p, wv_diag_id id, const char *where);
wavec_expr ps_iconst(parser *p, int64_t v);
wavec_expr ps_iterm(parser *p);
wavec_expr ps_iexpr(parser *p);
void ps_braced(parser *p, void (*entry)(parser *, void *), void *ud);
void ps_constraint(parser *p, void *ud);
void ps_default(parser *p, void *ud);
void ps_mapping(parser *p);

#endif
