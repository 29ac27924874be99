/* The context: arena, buffers, diagnostics, guards, interning. */
#include "support/base.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "expr/expr.h"

struct wv_chunk {
  wv_chunk *next;
  size_t size;
  /* payload follows, max-aligned */
};

#define WV_ALIGN 16u
#define WV_CHUNK_MIN (64u * 1024u)

static void *default_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
  (void)ud;
  (void)osize;
  if (nsize == 0) {
    free(ptr);
    return NULL;
  }
  return realloc(ptr, nsize);
}

_Noreturn void wv_throw(wavec_ctx *ctx) {
  if (!ctx->guard)
    abort(); /* a library bug: an entry point without WV_GUARD */
  longjmp(ctx->guard->jb, 1);
}

static _Noreturn void out_of_memory(wavec_ctx *ctx, size_t asked) {
  if (ctx->status == WAVEC_OK) {
    ctx->status = WAVEC_ERR_NOMEM;
    ctx->oom_at = ctx->at;
    ctx->oom_asked = asked;
  }
  wv_throw(ctx);
}

static size_t chunk_header(void) {
  return (sizeof(wv_chunk) + WV_ALIGN - 1) & ~(size_t)(WV_ALIGN - 1);
}

void *wv_alloc(wavec_ctx *ctx, size_t n) {
  wv_arena *a = &ctx->arena;
  n = (n + WV_ALIGN - 1) & ~(size_t)(WV_ALIGN - 1);
  if (n == 0)
    n = WV_ALIGN;
  if ((size_t)(a->end - a->cur) < n) {
    size_t size = n > WV_CHUNK_MIN ? n : WV_CHUNK_MIN;
    if (a->total > 8 * WV_CHUNK_MIN && size < a->total / 4)
      size = a->total / 4; /* grow geometrically: few chunks for big inputs */
    wv_chunk *c = ctx->alloc(ctx->alloc_ud, NULL, 0, chunk_header() + size);
    if (!c)
      out_of_memory(ctx, size);
    c->next = a->head;
    c->size = size;
    a->head = c;
    a->cur = (char *)c + chunk_header();
    a->end = a->cur + size;
    a->total += size;
  }
  void *p = a->cur;
  a->cur += n;
  memset(p, 0, n);
  return p;
}

void *wv_dup(wavec_ctx *ctx, const void *p, size_t n) {
  void *q = wv_alloc(ctx, n);
  if (n)
    memcpy(q, p, n);
  return q;
}

char *wv_strndup(wavec_ctx *ctx, const char *s, size_t n) {
  char *q = wv_alloc(ctx, n + 1);
  memcpy(q, s, n);
  q[n] = 0;
  return q;
}

char *wv_strdup(wavec_ctx *ctx, const char *s) {
  return wv_strndup(ctx, s, strlen(s));
}

/* Growable arrays of WV_BIG bytes or more live in blocks of their own,
 * resized by the allocator and linked into ctx->bigs (freed with the
 * context): growing one leaves no old copy behind, where an arena copy
 * would stay until the context is freed (a doubling array would hold twice
 * its size). Smaller arrays come from the arena. */
#ifdef WV_DEBUG
#define WV_BIG 256u /* test builds: nearly every array moves when it grows */
#else
#define WV_BIG (64u * 1024u)
#endif
struct wv_big {
  wv_big *prev, *next;
  size_t size;   /* of the payload */
  uint64_t pad;  /* keeps the payload 16-aligned */
};

static bool in_arena(wavec_ctx *ctx, const void *p) {
  for (wv_chunk *c = ctx->arena.head; c; c = c->next) {
    const char *b = (const char *)c + chunk_header();
    if ((const char *)p >= b && (const char *)p < b + c->size)
      return true;
  }
  return false;
}

static void big_link(wavec_ctx *ctx, wv_big *b) {
  b->prev = NULL;
  b->next = ctx->bigs;
  if (ctx->bigs)
    ctx->bigs->prev = b;
  ctx->bigs = b;
}

static void big_unlink(wavec_ctx *ctx, wv_big *b) {
  if (b->prev)
    b->prev->next = b->next;
  else
    ctx->bigs = b->next;
  if (b->next)
    b->next->prev = b->prev;
}

void *wv_alloc_big(wavec_ctx *ctx, size_t n) {
  if (n < WV_BIG)
    return wv_alloc(ctx, n);
  wv_big *b = ctx->alloc(ctx->alloc_ud, NULL, 0, sizeof *b + n);
  if (!b)
    out_of_memory(ctx, n);
  memset(b + 1, 0, n);
  b->size = n;
  big_link(ctx, b);
  ctx->big_total += n;
  return b + 1;
}

void wv_release(wavec_ctx *ctx, void *p) {
  if (!p || in_arena(ctx, p))
    return;
  wv_big *b = (wv_big *)p - 1;
  big_unlink(ctx, b);
  ctx->big_total -= b->size;
  ctx->alloc(ctx->alloc_ud, b, sizeof *b + b->size, 0);
}

static void grow(wavec_ctx *ctx, void **p, uint32_t *cap, uint32_t need,
                 size_t elt, bool stable) {
  if (need <= *cap)
    return;
  uint32_t nc = *cap ? *cap * 2 : 8;
  while (nc < need)
    nc *= 2;
  size_t ob = (size_t)*cap * elt, nb = (size_t)nc * elt;
  if (nb < WV_BIG || stable) {
    void *q = wv_alloc(ctx, nb);
    if (*cap)
      memcpy(q, *p, ob);
    *p = q;
    *cap = nc;
    return;
  }
  wv_big *old = *cap && !in_arena(ctx, *p) ? (wv_big *)*p - 1 : NULL;
  if (old)
    big_unlink(ctx, old);
  wv_big *b = ctx->alloc(ctx->alloc_ud, old, old ? sizeof *old + old->size : 0,
                         sizeof *b + nb);
  if (!b) {
    if (old)
      big_link(ctx, old);
    out_of_memory(ctx, nb);
  }
  if (!old && *cap)
    memcpy(b + 1, *p, ob);
  memset((char *)(b + 1) + ob, 0, nb - ob); /* zeroed, as from the arena */
  b->size = nb;
  big_link(ctx, b);
  ctx->big_total += nb - (old ? ob : 0);
  *p = b + 1;
  *cap = nc;
}

void wv_grow(wavec_ctx *ctx, void **p, uint32_t *cap, uint32_t need,
             size_t elt) {
  grow(ctx, p, cap, need, elt, false);
}

void wv_grow_stable(wavec_ctx *ctx, void **p, uint32_t *cap, uint32_t need,
                    size_t elt) {
  grow(ctx, p, cap, need, elt, true);
}

/* ---- buffers --------------------------------------------------------------- */
void wv_buf_init(wv_buf *b, wavec_ctx *ctx) {
  memset(b, 0, sizeof *b);
  b->ctx = ctx;
}

void wv_buf_add(wv_buf *b, const char *s, size_t n) {
  wv_grow(b->ctx, (void **)&b->s, &b->cap, b->n + (uint32_t)n + 1, 1);
  memcpy(b->s + b->n, s, n);
  b->n += (uint32_t)n;
  b->s[b->n] = 0;
}

void wv_buf_puts(wv_buf *b, const char *s) { wv_buf_add(b, s, strlen(s)); }

void wv_buf_vprintf(wv_buf *b, const char *fmt, va_list ap) {
  char tmp[256];
  va_list ap2;
  va_copy(ap2, ap);
  int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
  if (n < 0) {
    va_end(ap2);
    return;
  }
  if ((size_t)n < sizeof tmp) {
    wv_buf_add(b, tmp, (size_t)n);
  } else {
    wv_grow(b->ctx, (void **)&b->s, &b->cap, b->n + (uint32_t)n + 1, 1);
    vsnprintf(b->s + b->n, (size_t)n + 1, fmt, ap2);
    b->n += (uint32_t)n;
  }
  va_end(ap2);
}

void wv_buf_printf(wv_buf *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  wv_buf_vprintf(b, fmt, ap);
  va_end(ap);
}

const char *wv_buf_str(wv_buf *b) { return b->s ? b->s : ""; }

/* ---- hashing and interning ------------------------------------------------- */
uint64_t wv_hash_bytes(const void *p, size_t n, uint64_t seed) {
  const unsigned char *s = p;
  uint64_t h = 1469598103934665603ull ^ seed;
  for (size_t i = 0; i < n; i++) {
    h ^= s[i];
    h *= 1099511628211ull;
  }
  return h;
}

typedef struct wv_strent {
  const char *s;
  uint32_t n, v;
} wv_strent;

struct wv_strmap {
  wavec_ctx *ctx;
  wv_strent *slots;
  uint32_t cap, used;
};

wv_strmap *wv_strmap_new(wavec_ctx *ctx) {
  wv_strmap *m = wv_alloc(ctx, sizeof *m);
  m->ctx = ctx;
  m->cap = 64;
  m->slots = wv_alloc(ctx, m->cap * sizeof *m->slots);
  return m;
}

static wv_strent *strmap_find(wv_strmap *m, const char *s, size_t n) {
  uint32_t i = (uint32_t)wv_hash_bytes(s, n, 0) & (m->cap - 1);
  for (;;) {
    wv_strent *e = &m->slots[i];
    if (!e->s || (e->n == n && memcmp(e->s, s, n) == 0))
      return e;
    i = (i + 1) & (m->cap - 1);
  }
}

uint32_t wv_strmap_get(wv_strmap *m, const char *s, size_t n) {
  wv_strent *e = strmap_find(m, s, n);
  return e->s ? e->v : 0;
}

void wv_strmap_put(wv_strmap *m, const char *s, size_t n, uint32_t v) {
  if (2 * (m->used + 1) > m->cap) {
    wv_strent *old = m->slots;
    uint32_t oc = m->cap;
    m->cap *= 2;
    m->slots = wv_alloc(m->ctx, m->cap * sizeof *m->slots);
    for (uint32_t i = 0; i < oc; i++)
      if (old[i].s)
        *strmap_find(m, old[i].s, old[i].n) = old[i];
  }
  wv_strent *e = strmap_find(m, s, n);
  if (!e->s) {
    m->used++;
    e->s = wv_strndup(m->ctx, s, n);
    e->n = (uint32_t)n;
  }
  e->v = v;
}

/* ---- diagnostics ------------------------------------------------------------ */
static const struct {
  int num;
  wavec_status st;
  const char *summary;
} diag_table[] = {
#define X(e, num, st, summary) {num, st, summary},
    WV_DIAGS(X)
#undef X
};

int wv_diag_number(wv_diag_id d) { return diag_table[d].num; }

bool wv_failed(wavec_ctx *ctx) { return ctx->status != WAVEC_OK; }

static size_t loc_offset(wavec_ctx *ctx, wavec_loc loc) {
  if (!loc.file || !loc.line)
    return SIZE_MAX;
  for (uint32_t i = 0; i < ctx->sources.n; i++) {
    wv_source *s = &ctx->sources.v[i];
    if (strcmp(s->file, loc.file) != 0)
      continue;
    uint32_t line = 1;
    size_t off = wv_bom_len(s->text, s->len);
    while (line < loc.line && off < s->len) {
      size_t n = wv_line_end_len(s->text + off, s->text + s->len);
      off += n ? n : 1;
      line += n != 0;
    }
    if (line != loc.line)
      return SIZE_MAX;
    size_t col = loc.col ? loc.col - 1 : 0;
    return off + col;
  }
  return SIZE_MAX;
}

static wavec_status record(wavec_ctx *ctx, wv_diag_id id, wavec_loc loc,
                           const char *fmt, va_list ap) {
  if (ctx->status != WAVEC_OK)
    return ctx->status; /* keep the first error only */
  wv_buf b;
  wv_buf_init(&b, ctx);
  wv_buf_vprintf(&b, fmt, ap);
  wv_diag d = {id, loc, loc_offset(ctx, loc), (char *)wv_buf_str(&b)};
  if (loc.file)
    d.loc.file = wv_strdup(ctx, loc.file);
  vec_push(ctx, &ctx->diags, d);
  ctx->status = diag_table[id].st;
  return ctx->status;
}

/* record() under a guard of its own: wv_error is also called outside any
 * (a public function that returns the error as a status), where running out
 * of memory must not abort. */
static wavec_status record_guarded(wavec_ctx *ctx, wv_diag_id id,
                                   wavec_loc loc, const char *fmt,
                                   va_list ap) {
  WV_GUARD(ctx, ctx->status);
  wavec_status st = record(ctx, id, loc, fmt, ap);
  WV_UNGUARD(ctx);
  return st;
}

wavec_status wv_error(wavec_ctx *ctx, wv_diag_id id, wavec_loc loc,
                      const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  wavec_status st = record_guarded(ctx, id, loc, fmt, ap);
  va_end(ap);
  return st;
}

wavec_status wv_null_param(wavec_ctx *ctx, const char *fn, const char *param) {
  if (ctx)
    wv_error(ctx, D_INVALID, (wavec_loc){0}, "%s: %s is NULL", fn, param);
  return WAVEC_ERR_INVALID;
}

bool wv_is_ident(const char *name) {
  if (!name || !((*name >= 'a' && *name <= 'z') ||
                 (*name >= 'A' && *name <= 'Z') || *name == '_'))
    return false;
  for (const char *p = name + 1; *p; p++)
    if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
          (*p >= '0' && *p <= '9') || *p == '_'))
      return false;
  return true;
}

_Noreturn void wv_fail(wavec_ctx *ctx, wv_diag_id id, wavec_loc loc,
                       const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  record(ctx, id, loc, fmt, ap);
  va_end(ap);
  wv_throw(ctx);
}

_Noreturn void wv_internal(wavec_ctx *ctx, const char *file, int line,
                           const char *what) {
  wavec_loc none = {0};
  wv_error(ctx, D_INTERNAL, none, "internal error at %s:%d: %s", file, line,
           what);
  ctx->status = WAVEC_ERR_INTERNAL;
  wv_throw(ctx);
}

void wv_add_source(wavec_ctx *ctx, const char *file, const char *text,
                   size_t len) {
  wv_source s = {wv_strdup(ctx, file), wv_strndup(ctx, text, len), len};
  vec_push(ctx, &ctx->sources, s);
}

static const wv_source *find_source(wavec_ctx *ctx, const char *file) {
  for (uint32_t i = 0; file && i < ctx->sources.n; i++)
    if (strcmp(ctx->sources.v[i].file, file) == 0)
      return &ctx->sources.v[i];
  return NULL;
}

/* file:line:col: error[E0304]: message
 *     12 |     x = a + b
 *        |           ^            */
#define WV_SNIPPET 120
static void format_diag(wavec_ctx *ctx, wv_buf *b, const wv_diag *d) {
  if (d->loc.file && d->loc.line)
    wv_buf_printf(b, "%s:%u:%u: ", d->loc.file, d->loc.line, d->loc.col);
  else if (d->loc.line)
    wv_buf_printf(b, "<builder>:%u:%u: ", d->loc.line, d->loc.col);
  wv_buf_printf(b, "error[E%04d]: %s\n", wv_diag_number(d->id), d->msg);
  const wv_source *src = find_source(ctx, d->loc.file);
  if (!src || d->offset == SIZE_MAX || d->offset > src->len)
    return;
  /* The line runs from after the previous line end (or the byte-order
   * mark) to the next '\r' or '\n': a CRLF's '\r' is not shown. */
  const char *t = src->text, *end = src->text + src->len;
  size_t bom = wv_bom_len(t, src->len);
  size_t off = d->offset < bom ? bom : d->offset;
  size_t ls = off < src->len ? off : src->len;
  while (ls > bom && t[ls - 1] != '\n' &&
         !(t[ls - 1] == '\r' && wv_line_end_len(t + ls - 1, end) == 1))
    ls--;
  size_t le = ls;
  while (le < src->len && t[le] != '\n' && t[le] != '\r')
    le++;
  /* A long line is cut to WV_SNIPPET bytes around the caret, "..." marking
   * each cut, never inside a UTF-8 character. */
  size_t from = ls, to = le, at = off < le ? off : le;
  if (le - ls > WV_SNIPPET) {
    from = at - ls > WV_SNIPPET / 2 ? at - WV_SNIPPET / 2 : ls;
    if (le - from < WV_SNIPPET)
      from = le - WV_SNIPPET;
    to = from + WV_SNIPPET;
    while (from > ls && (src->text[from] & 0xc0) == 0x80)
      from--;
    while (to < le && (src->text[to] & 0xc0) == 0x80)
      to++;
  }
  wv_buf_printf(b, "%5u | %s", d->loc.line, from > ls ? "..." : "");
  for (size_t i = from; i < to; i++) /* a NUL must not end the message */
    wv_buf_add(b, src->text[i] ? &src->text[i] : "?", 1);
  wv_buf_printf(b, "%s\n      | %s", to < le ? "..." : "",
                from > ls ? "   " : "");
  for (size_t i = from; i < at; i++)
    wv_buf_add(b, src->text[i] == '\t' ? "\t" : " ", 1);
  wv_buf_puts(b, "^\n");
}

/* ---- public context API ------------------------------------------------------ */
const char *wavec_version(void) { return WAVEC_VERSION_STRING; }
int wavec_version_number(void) { return WAVEC_VERSION_NUMBER; }

const char *wavec_status_string(wavec_status s) {
  static const char *names[] = {
#define X(e, v, str) [e] = str,
      WAVEC_STATUSES(X)
#undef X
  };
  if ((unsigned)s >= WV_ARRAY_LEN(names))
    return "unknown status";
  return names[s];
}

wavec_ctx *wavec_ctx_new(wavec_alloc_fn alloc, void *ud) {
  if (!alloc)
    alloc = default_alloc;
  wavec_ctx *ctx = alloc(ud, NULL, 0, sizeof *ctx);
  if (!ctx)
    return NULL;
  memset(ctx, 0, sizeof *ctx);
  ctx->alloc = alloc;
  ctx->alloc_ud = ud;
  ctx->hw_mma = -1;
  for (int i = 0; i < WAVEC_HW_INT_COUNT; i++)
    ctx->hw_ints[i] = -1;
  WV_GUARD(ctx, (wavec_ctx_free(ctx), NULL));
  wv_buf_init(&ctx->errbuf, ctx);
  ctx->sym_map = wv_strmap_new(ctx);
  vec_push(ctx, &ctx->sym_names, ""); /* symbol 0 is "none" */
  ctx->ex = ex_table_new(ctx);
  WV_UNGUARD(ctx);
  return ctx;
}

void wv_on_free(wavec_ctx *ctx, void (*fn)(void *ud), void *ud) {
  vec_push(ctx, &ctx->cleanups, ((wv_cleanup){fn, ud}));
}

void wavec_ctx_free(wavec_ctx *ctx) {
  if (!ctx)
    return;
  for (uint32_t i = ctx->cleanups.n; i-- > 0;)
    ctx->cleanups.v[i].fn(ctx->cleanups.v[i].ud);
  wv_chunk *c = ctx->arena.head;
  while (c) {
    wv_chunk *n = c->next;
    ctx->alloc(ctx->alloc_ud, c, chunk_header() + c->size, 0);
    c = n;
  }
  for (wv_big *b = ctx->bigs, *n; b; b = n) {
    n = b->next;
    ctx->alloc(ctx->alloc_ud, b, sizeof *b + b->size, 0);
  }
  ctx->alloc(ctx->alloc_ud, ctx, sizeof *ctx, 0);
}

wavec_status wavec_errcode(wavec_ctx *ctx) {
  return ctx ? ctx->status : WAVEC_ERR_INVALID;
}

const char *wavec_errmsg(wavec_ctx *ctx) {
  if (!ctx)
    return "error: no context (the wavec_ctx is NULL: did wavec_ctx_new "
           "fail?)\n";
  if (ctx->status == WAVEC_OK)
    return "";
  WV_GUARD(ctx, wavec_status_string(ctx->status));
  wv_buf_init(&ctx->errbuf, ctx);
  for (uint32_t i = 0; i < ctx->diags.n; i++)
    format_diag(ctx, &ctx->errbuf, &ctx->diags.v[i]);
  if (!ctx->diags.n && ctx->status == WAVEC_ERR_NOMEM) {
    /* Formatted without allocating (memory ran out): into oom_text, which
     * holds it whole: the file name is bounded and the source line cut. */
    char msg[160];
    snprintf(msg, sizeof msg,
             "out of memory: %.1f MiB held, %.1f MiB more asked for%s",
             (double)(ctx->arena.total + ctx->big_total) / 1048576.0,
             (double)ctx->oom_asked / 1048576.0,
             ctx->oom_at.line ? " while compiling this" : "");
    wavec_loc at = ctx->oom_at;
    if (at.file && strlen(at.file) > 1024)
      at = (wavec_loc){0};
    wv_diag d = {D_NOMEM, at, loc_offset(ctx, at), msg};
    wv_buf ob = {ctx, ctx->oom_text, 0, sizeof ctx->oom_text};
    format_diag(ctx, &ob, &d);
    WV_UNGUARD(ctx);
    return ctx->oom_text;
  } else if (!ctx->diags.n) {
    wv_buf_printf(&ctx->errbuf, "error: %s\n", wavec_status_string(ctx->status));
  }
  WV_UNGUARD(ctx);
  return wv_buf_str(&ctx->errbuf);
}

size_t wavec_diag_count(wavec_ctx *ctx) { return ctx ? ctx->diags.n : 0; }

wavec_status wavec_diag(wavec_ctx *ctx, size_t i, wavec_diag_info *out) {
  if (!ctx || !out)
    return wv_null_param(ctx, "wavec_diag", "out");
  if (i >= ctx->diags.n)
    return WAVEC_ERR_INVALID;
  wv_diag *d = &ctx->diags.v[i];
  out->status = diag_table[d->id].st;
  out->code = diag_table[d->id].num;
  out->message = d->msg;
  out->loc = d->loc;
  out->offset = d->offset;
  return WAVEC_OK;
}

wavec_sym wavec_symbol(wavec_ctx *ctx, const char *name) {
  if (!ctx || !name) {
    wv_null_param(ctx, "wavec_symbol", "name");
    return 0;
  }
  size_t n = strlen(name);
  uint32_t s = wv_strmap_get(ctx->sym_map, name, n);
  if (s)
    return s;
  WV_GUARD(ctx, 0);
  s = ctx->sym_names.n;
  vec_push(ctx, &ctx->sym_names, wv_strndup(ctx, name, n));
  wv_strmap_put(ctx->sym_map, name, n, s);
  WV_UNGUARD(ctx);
  return s;
}

const char *wavec_symbol_name(wavec_ctx *ctx, wavec_sym s) {
  return ctx && s < ctx->sym_names.n ? ctx->sym_names.v[s] : "?";
}

static wavec_status define(wavec_ctx *ctx, const char *name, bool is_float,
                           int64_t i, double f) {
  if (!ctx || !name)
    return wv_null_param(ctx, is_float ? "wavec_define_float"
                                       : "wavec_define_int", "name");
  WV_GUARD(ctx, ctx->status);
  for (uint32_t k = 0; k < ctx->defines.n; k++) {
    if (strcmp(ctx->defines.v[k].name, name) == 0) {
      ctx->defines.v[k] = (wv_define){.name = ctx->defines.v[k].name,
                                      .is_float = is_float, .i = i, .f = f};
      WV_UNGUARD(ctx);
      return WAVEC_OK;
    }
  }
  wv_define d = {.name = wv_strdup(ctx, name), .is_float = is_float, .i = i,
                 .f = f};
  vec_push(ctx, &ctx->defines, d);
  WV_UNGUARD(ctx);
  return WAVEC_OK;
}

const char *wavec_unused_define(wavec_ctx *ctx, size_t i) {
  for (uint32_t k = 0; ctx && k < ctx->defines.n; k++) {
    const char *nm = ctx->defines.v[k].name;
    if (!wv_strmap_get(ctx->sym_map, nm, strlen(nm)) && i-- == 0)
      return nm;
  }
  return NULL;
}

wavec_status wavec_define_int(wavec_ctx *ctx, const char *name, int64_t v) {
  return define(ctx, name, false, v, (double)v);
}

wavec_status wavec_define_float(wavec_ctx *ctx, const char *name, double v) {
  return define(ctx, name, true, 0, v);
}

uint64_t wv_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

size_t wavec_time_count(wavec_ctx *ctx) { return ctx ? ctx->times.n : 0; }

wavec_status wavec_time_get(wavec_ctx *ctx, size_t i, const char **name,
                            uint64_t *ns) {
  if (!ctx || !name || !ns)
    return wv_null_param(ctx, "wavec_time_get", !name ? "name" : "ns");
  if (i >= ctx->times.n)
    return WAVEC_ERR_INVALID;
  *name = ctx->times.v[i].name;
  *ns = ctx->times.v[i].ns;
  return WAVEC_OK;
}
