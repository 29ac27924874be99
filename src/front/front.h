/* The front end's tokens, shared by the lexer (lex.c) and the parser
 * (parse.c). The parser is the only user; nothing else includes this. */
#ifndef WV_FRONT_H
#define WV_FRONT_H

#include "support/base.h"

/* Token kinds and how a diagnostic names the kind ("expected ')'"). */
#define WV_TOKS(X)                                                             \
  X(T_EOF, "end of input")                                                     \
  X(T_NL, "end of line") /* a newline or ';' that ends a statement */          \
  X(T_IDENT, "a name")                                                         \
  X(T_INT, "an integer")                                                       \
  X(T_FLOAT, "a number")                                                       \
  X(T_LPAREN, "'('")                                                           \
  X(T_RPAREN, "')'")                                                           \
  X(T_LBRACK, "'['")                                                           \
  X(T_RBRACK, "']'")                                                           \
  X(T_LBRACE, "'{'")                                                           \
  X(T_RBRACE, "'}'")                                                           \
  X(T_COMMA, "','")                                                            \
  X(T_COLON, "':'")                                                            \
  X(T_ASSIGN, "'='")                                                           \
  X(T_PLUS, "'+'")                                                             \
  X(T_MINUS, "'-'")                                                            \
  X(T_STAR, "'*'")                                                             \
  X(T_SLASH, "'/'")                                                            \
  X(T_DSLASH, "'//'")                                                          \
  X(T_PERCENT, "'%'")                                                          \
  X(T_LT, "'<'")                                                               \
  X(T_LE, "'<='")                                                              \
  X(T_GT, "'>'")                                                               \
  X(T_GE, "'>='")                                                              \
  X(T_BAD, "an invalid token")

typedef enum wv_tok_kind {
#define X(e, what) e,
  WV_TOKS(X)
#undef X
} wv_tok_kind;

/* How diagnostics name a token kind: "')'", "a name", "end of line". */
const char *wv_tok_kind_name(wv_tok_kind k);

typedef struct wv_tok {
  wv_tok_kind kind;
  uint32_t line, col; /* 1-based; col counts bytes */
  const char *s;      /* the token's text in the source copy */
  uint32_t len;
  const char *name;   /* T_IDENT: NUL-terminated copy of the text */
  int64_t ival;       /* T_INT */
  double fval;        /* T_INT and T_FLOAT */
  wv_diag_id bad;     /* T_BAD: the error and its message */
  const char *badmsg;
} wv_tok;

typedef VEC(wv_tok) wv_toks;

/* Splits src[0..len) into tokens, ending with one T_EOF.
 *
 * Never fails on bad input: the first lexical error becomes a T_BAD token
 * (then T_EOF), which the parser reports when it reaches it, so errors come
 * out in source order. A newline is a statement end (T_NL) unless it lies
 * inside parentheses or brackets, or inside braces that are themselves
 * inside parentheses (`vector_shapes = {B: 0,` + newline). Runs of
 * statement ends collapse into one T_NL. */
void wv_lex(wavec_ctx *ctx, const char *src, size_t len, wv_toks *out);

#endif
