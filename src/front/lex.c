/* The lexer: `.wave` source text → tokens with line and column.
 *
 * Lexical grammar:
 *   comment = '#' {any byte but a line end}
 *   name    = [A-Za-z_][A-Za-z0-9_]*
 *   number  = digits ['.' [digits]] [exponent] | '.' digits [exponent]
 *   exponent = ('e' | 'E') ['+' | '-'] digits
 *   punct   = ( ) [ ] { } , : = + - * / // %
 *   end     = newline | ';'
 *   newline = '\n' | '\r\n' | '\r'
 * A number with '.' or an exponent is a float, otherwise an integer. `inf`
 * and the sign of `-inf` are the parser's business (a name and a '-').
 * Spaces, tabs, '\f' and '\v' separate tokens. A UTF-8 byte-order mark at
 * the start is skipped; columns count from after it.
 */
#include <errno.h>
#include <locale.h>
#include <math.h>
#include <stdlib.h>

#include <string.h>

#include "front/front.h"

const char *wv_tok_kind_name(wv_tok_kind k) {
  static const char *const names[] = {
#define X(e, what) what,
      WV_TOKS(X)
#undef X
  };
  return (unsigned)k < WV_ARRAY_LEN(names) ? names[k] : "?";
}

typedef struct lexer {
  wavec_ctx *ctx;
  const char *src, *p, *end;
  const char *line_start;
  uint32_t line;
  wv_toks *out;
  /* One entry per open bracket: do newlines end statements inside it? */
  VEC(bool) nest;
} lexer;

static bool is_digit(char c) { return c >= '0' && c <= '9'; }
static bool is_alpha(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
static bool is_alnum(char c) { return is_alpha(c) || is_digit(c); }

static wv_tok *push(lexer *L, wv_tok_kind kind, const char *b, const char *e) {
  wv_tok t = {0};
  t.kind = kind;
  t.line = L->line;
  t.col = (uint32_t)(b - L->line_start) + 1;
  t.s = b;
  t.len = (uint32_t)(e - b);
  vec_push(L->ctx, L->out, t);
  return &L->out->v[L->out->n - 1];
}

/* A T_BAD token with its message; lexing stops after it. */
static void bad(lexer *L, wv_diag_id id, const char *b, const char *e,
                const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static void bad(lexer *L, wv_diag_id id, const char *b, const char *e,
                const char *fmt, ...) {
  wv_buf msg;
  wv_buf_init(&msg, L->ctx);
  va_list ap;
  va_start(ap, fmt);
  wv_buf_vprintf(&msg, fmt, ap);
  va_end(ap);
  wv_tok *t = push(L, T_BAD, b, e);
  t->bad = id;
  t->badmsg = wv_buf_str(&msg);
}

/* Length of the valid UTF-8 sequence at p (2 to 4 bytes), or 0. */
static size_t utf8_len(const char *p, const char *end) {
  unsigned char c = (unsigned char)*p;
  size_t n = c >= 0xf0 && c <= 0xf4 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 ? 2 : 0;
  if (c >= 0xf5 || n == 0 || (size_t)(end - p) < n)
    return 0;
  for (size_t i = 1; i < n; i++)
    if (((unsigned char)p[i] & 0xc0) != 0x80)
      return 0;
  return n;
}

/* An invalid character, named so that any byte prints readably. */
static void bad_char(lexer *L) {
  const char *p = L->p;
  unsigned char c = (unsigned char)*p;
  size_t n = c >= 0x80 ? utf8_len(p, L->end) : 0;
  if (n)
    bad(L, D_BAD_CHAR, p, p + n, "invalid character '%.*s'", (int)n, p);
  else if (c == 0)
    bad(L, D_BAD_CHAR, p, p + 1, "invalid character '\\0' (a NUL byte)");
  else if (c < 0x20 || c >= 0x7f)
    bad(L, D_BAD_CHAR, p, p + 1, "invalid byte 0x%02x", c);
  else if (c == '.')
    bad(L, D_BAD_CHAR, p, p + 1,
        "invalid character '.' (ops are plain names: 'read', not 'tkw.read')");
  else
    bad(L, D_BAD_CHAR, p, p + 1, "invalid character '%c'", c);
}

/* strtod, independent of the host's locale: if the locale's decimal point
 * is not '.', the text is rewritten with it. Returns false if s is not
 * entirely a number. */
static bool to_double(wavec_ctx *ctx, const char *b, size_t n, double *out) {
  char *s = wv_strndup(ctx, b, n);
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  if ((size_t)(end - s) != n) {
    const char *dp = localeconv()->decimal_point;
    if (!dp || !dp[0] || dp[1] || dp[0] == '.')
      return false;
    for (char *q = s; *q; q++)
      if (*q == '.')
        *q = dp[0];
    errno = 0;
    v = strtod(s, &end);
    if ((size_t)(end - s) != n)
      return false;
  }
  if (isinf(v))
    return false;
  *out = v;
  return true;
}

/* number = digits ['.' [digits]] [exponent] | '.' digits [exponent] */
static void lex_number(lexer *L) {
  const char *b = L->p, *p = L->p, *e = L->end;
  bool is_float = false, ok = true;
  while (p < e && is_digit(*p))
    p++;
  if (p < e && *p == '.') {
    is_float = true;
    p++;
    while (p < e && is_digit(*p))
      p++;
  }
  if (p < e && (*p == 'e' || *p == 'E')) {
    const char *q = p + 1;
    if (q < e && (*q == '+' || *q == '-'))
      q++;
    if (q < e && is_digit(*q)) {
      is_float = true;
      p = q;
      while (p < e && is_digit(*p))
        p++;
    } else {
      ok = false;
    }
  }
  if (!ok || (p < e && (is_alnum(*p) || *p == '.'))) {
    while (p < e && (is_alnum(*p) || *p == '.'))
      p++;
    int n = (int)(p - b) > 40 ? 40 : (int)(p - b);
    bad(L, D_BAD_NUMBER, b, p, "malformed number '%.*s%s'", n, b,
        p - b > 40 ? "..." : "");
    L->p = p;
    return;
  }
  int n = (int)(p - b) > 40 ? 40 : (int)(p - b);
  const char *more = p - b > 40 ? "..." : "";
  if (!is_float) {
    int64_t v = 0;
    for (const char *q = b; q < p; q++) {
      int d = *q - '0';
      if (v > (INT64_MAX - d) / 10) {
        bad(L, D_BAD_NUMBER, b, p, "integer '%.*s%s' is too large", n, b,
            more);
        L->p = p;
        return;
      }
      v = v * 10 + d;
    }
    wv_tok *t = push(L, T_INT, b, p);
    t->ival = v;
    t->fval = (double)v;
  } else {
    double v;
    if (!to_double(L->ctx, b, (size_t)(p - b), &v)) {
      bad(L, D_BAD_NUMBER, b, p, "number '%.*s%s' is out of range", n, b,
          more);
      L->p = p;
      return;
    }
    wv_tok *t = push(L, T_FLOAT, b, p);
    t->fval = v;
  }
  L->p = p;
}

/* A statement end; consecutive ends (and ends before anything) collapse. */
static void end_statement(lexer *L, const char *b, const char *e) {
  if (L->out->n && L->out->v[L->out->n - 1].kind != T_NL)
    push(L, T_NL, b, e);
}

/* After the word `kernel`: blanks, a name, blanks and '('. */
static bool header_follows(const char *p, const char *end) {
  while (p < end && (*p == ' ' || *p == '\t'))
    p++;
  if (p == end || !is_alpha(*p))
    return false;
  while (p < end && is_alnum(*p))
    p++;
  while (p < end && (*p == ' ' || *p == '\t'))
    p++;
  return p < end && *p == '(';
}

static bool newline_ends_statement(lexer *L) {
  return L->nest.n == 0 || L->nest.v[L->nest.n - 1];
}

static void open_bracket(lexer *L, char c) {
  /* '{' keeps line ends significant only where they already are: a block's
   * braces do, a dictionary's braces inside a call's parentheses do not. */
  bool sig = c == '{' && newline_ends_statement(L);
  vec_push(L->ctx, &L->nest, sig);
}

static void close_bracket(lexer *L) {
  if (L->nest.n) /* a mismatch is the parser's to report */
    L->nest.n--;
}

void wv_lex(wavec_ctx *ctx, const char *src, size_t len, wv_toks *out) {
  lexer L = {0};
  L.ctx = ctx;
  L.src = L.p = L.line_start = src + wv_bom_len(src, len);
  L.end = src + len;
  L.line = 1;
  L.out = out;
  while (L.p < L.end) {
    const char *b = L.p;
    char c = *b;
    size_t nl = wv_line_end_len(b, L.end);
    if (c == ' ' || c == '\t' || c == '\f' || c == '\v') {
      L.p++;
    } else if (c == '#') {
      while (L.p < L.end && *L.p != '\n' && *L.p != '\r')
        L.p++;
    } else if (nl) {
      if (newline_ends_statement(&L))
        end_statement(&L, b, b + nl);
      L.p += nl;
      L.line++;
      L.line_start = L.p;
    } else if (c == ';') {
      end_statement(&L, b, b + 1);
      L.p++;
    } else if (is_alpha(c)) {
      while (L.p < L.end && is_alnum(*L.p))
        L.p++;
      wv_tok *t = push(&L, T_IDENT, b, L.p);
      t->name = wv_strndup(ctx, b, (size_t)(L.p - b));
      /* `kernel NAME (` first on its line is a kernel's header, at the
       * top level whatever brackets the text before it left open (a
       * kernel with an unclosed one must not take the next kernel's line
       * ends away: wavec_parse_kernel skips it and parses that one) */
      if (!strcmp(t->name, "kernel") &&
          (out->n == 1 || out->v[out->n - 2].line < t->line) &&
          header_follows(L.p, L.end))
        L.nest.n = 0;
    } else if (is_digit(c) ||
               (c == '.' && b + 1 < L.end && is_digit(b[1]))) {
      lex_number(&L);
    } else {
      wv_tok_kind k;
      switch (c) {
      case '(': k = T_LPAREN; break;
      case ')': k = T_RPAREN; break;
      case '[': k = T_LBRACK; break;
      case ']': k = T_RBRACK; break;
      case '{': k = T_LBRACE; break;
      case '}': k = T_RBRACE; break;
      case ',': k = T_COMMA; break;
      case ':': k = T_COLON; break;
      case '=': k = T_ASSIGN; break;
      case '+': k = T_PLUS; break;
      case '-': k = T_MINUS; break;
      case '*': k = T_STAR; break;
      case '%': k = T_PERCENT; break;
      case '/':
        k = b + 1 < L.end && b[1] == '/' ? T_DSLASH : T_SLASH;
        break;
      case '<':
        k = b + 1 < L.end && b[1] == '=' ? T_LE : T_LT;
        break;
      case '>':
        k = b + 1 < L.end && b[1] == '=' ? T_GE : T_GT;
        break;
      default:
        bad_char(&L);
        k = T_BAD;
        break;
      }
      if (k == T_BAD)
        break;
      L.p += k == T_DSLASH || k == T_LE || k == T_GE ? 2 : 1;
      push(&L, k, b, L.p);
      if (k == T_LPAREN || k == T_LBRACK || k == T_LBRACE)
        open_bracket(&L, c);
      else if (k == T_RPAREN || k == T_RBRACK || k == T_RBRACE)
        close_bracket(&L);
    }
    if (out->n && out->v[out->n - 1].kind == T_BAD)
      break;
  }
  /* The end of input ends the last statement, and then the input; both
   * sit just after the last line's text, not on the empty line a final
   * newline opens (a diagnostic there would show nothing). */
  const char *e = L.p;
  if (e > L.src && (e[-1] == '\n' || e[-1] == '\r') &&
      !(out->n && out->v[out->n - 1].kind == T_BAD)) {
    e -= e - 1 > L.src && e[-1] == '\n' && e[-2] == '\r' ? 2 : 1;
    L.line--;
    L.line_start = e;
    while (L.line_start > L.src && L.line_start[-1] != '\n' &&
           L.line_start[-1] != '\r')
      L.line_start--;
  }
  if (!(out->n && out->v[out->n - 1].kind == T_BAD))
    end_statement(&L, e, e);
  push(&L, T_EOF, e, e);
}
