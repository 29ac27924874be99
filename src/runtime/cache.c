/* The disk cache of GPU binaries (runtime.h): one file per key,
 * "<32 hex digits>.wvbin", in the cache folder. An entry is the module in
 * the format below, checked whole on every read; anything that does not
 * check out is a miss, and the next store replaces it.
 *
 * Entry format (integers little-endian):
 *   "WVBIN\0" u16 format   magic and WV_BIN_FORMAT
 *   u64 key[2]             the key it was stored under
 *   str kernel, entry, target, desc     (str: u32 length, bytes)
 *   u32 grid[3], block[3]; u64 smem
 *   u32 nargs; per argument: str name, u32 dtype, u32 ndims,
 *                            i64 shape[ndims], u32 is_output,
 *                            u32 align (a power of two, 1 to 16)
 *   u32 ntmaps; per tensor map: u32 arg, u32 ndims, u32 box[ndims],
 *                               u32 swizzle (bytes)
 *   u32 nsizes; per run-time size: str name, i64 multiple
 *   per argument: u32 dyn[ndims] (1 + its size, 0: fixed)
 *   u32 grid_size[3]; i64 grid_tile[3]
 *   i64 persistent, tiles[3]  (persistent tiles: 0, 0 0 0 when not)
 *   u64 code length, code bytes (the cubin)
 *   u64 XXH64 (seed 0) of every byte before it
 * Entries are written through support/outfile.c (a temporary beside the
 * entry, renamed over it once whole). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ir/ir.h"
#include "runtime/runtime.h"
#include "support/outfile.h"
#include "support/xxh64.h"
#include "tir/tir.h"

#ifndef WV_SOURCE_ID
#define WV_SOURCE_ID "unknown"
#endif

#define WV_BIN_FORMAT 5
#define WV_ENTRY_MAX ((size_t)1 << 30) /* larger files are not entries */
static const char magic[6] = {'W', 'V', 'B', 'I', 'N', 0};
static const char suffix[] = ".wvbin";
typedef VEC(const char *) wv_names;

/* ---- the entry format
 * ----------------------------------------------------------- */
static void put_u32(wv_buf *b, uint32_t v) {
  unsigned char c[4];
  for (int i = 0; i < 4; i++)
    c[i] = (unsigned char)(v >> (8 * i));
  wv_buf_add(b, (const char *)c, 4);
}
static void put_u64(wv_buf *b, uint64_t v) {
  put_u32(b, (uint32_t)v);
  put_u32(b, (uint32_t)(v >> 32));
}
static void put_str(wv_buf *b, const char *s) {
  size_t n = s ? strlen(s) : 0;
  put_u32(b, (uint32_t)n);
  wv_buf_add(b, s ? s : "", n);
}

void wv_module_write(const wavec_module *b, wv_buf *out) {
  uint32_t start = out->n;
  wv_buf_add(out, magic, sizeof magic);
  wv_buf_add(out, (const char[]){WV_BIN_FORMAT & 0xff, WV_BIN_FORMAT >> 8}, 2);
  put_u64(out, b->key[0]);
  put_u64(out, b->key[1]);
  put_str(out, b->kernel);
  put_str(out, b->entry);
  put_str(out, b->target);
  put_str(out, b->desc);
  for (int d = 0; d < 3; d++)
    put_u32(out, b->grid[d]);
  for (int d = 0; d < 3; d++)
    put_u32(out, b->block[d]);
  put_u64(out, b->smem);
  put_u32(out, b->nargs);
  for (uint32_t i = 0; i < b->nargs; i++) {
    const wavec_arg_info *a = &b->args[i];
    put_str(out, a->name);
    put_u32(out, (uint32_t)a->dtype);
    put_u32(out, (uint32_t)a->ndims);
    for (size_t d = 0; d < a->ndims; d++)
      put_u64(out, (uint64_t)a->shape[d]);
    put_u32(out, (uint32_t)a->is_output);
    put_u32(out, b->align[i]);
  }
  put_u32(out, b->ntmaps);
  for (uint32_t i = 0; i < b->ntmaps; i++) {
    const wavec_tensor_map_info *m = &b->tmaps[i];
    put_u32(out, (uint32_t)m->arg);
    put_u32(out, (uint32_t)m->ndims);
    for (size_t d = 0; d < m->ndims; d++)
      put_u32(out, m->box[d]);
    put_u32(out, (uint32_t)m->swizzle);
  }
  put_u32(out, b->nsizes);
  for (uint32_t i = 0; i < b->nsizes; i++) {
    put_str(out, b->sizes[i].name);
    put_u64(out, (uint64_t)b->sizes[i].multiple);
    put_u64(out, (uint64_t)b->sizes[i].most);
  }
  for (uint32_t i = 0; i < b->nargs; i++)
    for (size_t d = 0; d < b->args[i].ndims; d++)
      put_u32(out, b->dyn[i][d]);
  for (int d = 0; d < 3; d++)
    put_u32(out, b->grid_size[d]);
  for (int d = 0; d < 3; d++)
    put_u64(out, (uint64_t)b->grid_tile[d]);
  put_u64(out, (uint64_t)b->persistent);
  for (int d = 0; d < 3; d++)
    put_u64(out, (uint64_t)b->tiles[d]);
  put_u64(out, b->code_len);
  wv_buf_add(out, b->code, b->code_len);
  put_u64(out, wv_xxh64(out->s + start, out->n - start, 0));
}

/* A bounds-checked reader: once a read runs past the end, every later
 * read gives zeros and `bad` stays set. */
typedef struct rd {
  wavec_ctx *ctx;
  const unsigned char *p, *end;
  bool bad;
} rd;

static const unsigned char *take(rd *r, size_t n) {
  if (r->bad || (size_t)(r->end - r->p) < n) {
    r->bad = true;
    return NULL;
  }
  const unsigned char *q = r->p;
  r->p += n;
  return q;
}
static uint32_t get_u32(rd *r) {
  const unsigned char *c = take(r, 4);
  return c ? (uint32_t)c[0] | (uint32_t)c[1] << 8 | (uint32_t)c[2] << 16 |
                 (uint32_t)c[3] << 24
           : 0;
}
static uint64_t get_u64(rd *r) {
  uint64_t lo = get_u32(r);
  return lo | (uint64_t)get_u32(r) << 32;
}
static const char *get_str(rd *r) {
  uint32_t n = get_u32(r);
  const unsigned char *s = take(r, n);
  if (!s)
    return "";
  if (memchr(s, 0, n))
    r->bad = true;
  return wv_strndup(r->ctx, (const char *)s, n);
}

wavec_module *wv_module_read(wavec_ctx *ctx, const void *data, size_t len,
                             const uint64_t key[2]) {
  const unsigned char *p = data;
  /* the checksum first: nothing below reads a damaged entry */
  if (len < sizeof magic + 2 + 8 || memcmp(p, magic, sizeof magic) != 0 ||
      (p[6] | p[7] << 8) != WV_BIN_FORMAT)
    return NULL;
  rd tail = {ctx, p + len - 8, p + len, false};
  if (get_u64(&tail) != wv_xxh64(p, len - 8, 0))
    return NULL;
  rd r = {ctx, p + sizeof magic + 2, p + len - 8, false};
  wavec_module *b = wv_alloc(ctx, sizeof *b);
  b->ctx = ctx;
  b->key[0] = get_u64(&r);
  b->key[1] = get_u64(&r);
  b->kernel = get_str(&r);
  b->entry = get_str(&r);
  b->target = get_str(&r);
  b->desc = get_str(&r);
  for (int d = 0; d < 3; d++)
    b->grid[d] = get_u32(&r);
  for (int d = 0; d < 3; d++)
    b->block[d] = get_u32(&r);
  b->smem = get_u64(&r);
  b->nargs = get_u32(&r);
  /* each argument takes at least 16 bytes: no count beyond the data */
  if (r.bad || b->nargs > WV_MAX_LAUNCH_ARGS ||
      b->nargs > (size_t)(r.end - r.p) / 16)
    return NULL;
  b->args = wv_alloc(ctx, (b->nargs + 1) * sizeof *b->args);
  b->align = wv_alloc(ctx, (b->nargs + 1) * sizeof *b->align);
  for (uint32_t i = 0; i < b->nargs && !r.bad; i++) {
    wavec_arg_info *a = &b->args[i];
    a->name = get_str(&r);
    uint32_t dt = get_u32(&r), nd = get_u32(&r);
    if (dt >= WAVEC_DTYPE_COUNT || nd > WV_ARRAY_LEN(a->shape))
      return NULL;
    a->dtype = (wavec_dtype)dt;
    a->ndims = nd;
    a->elems = 1;
    /* sizes as `bind` allows them: at most 2^62 bytes in all */
    for (uint32_t d = 0; d < nd; d++) {
      a->shape[d] = (int64_t)get_u64(&r);
      if (a->shape[d] < 0 ||
          __builtin_mul_overflow(a->elems, (size_t)a->shape[d], &a->elems))
        return NULL;
    }
    if (__builtin_mul_overflow(a->elems, (size_t)((wv_dtypes[dt].bits + 7) / 8),
                               &a->bytes) ||
        a->bytes > (size_t)1 << 62)
      return NULL;
    a->is_output = get_u32(&r) != 0;
    b->align[i] = get_u32(&r);
    if (!b->align[i] || b->align[i] > 16 || (b->align[i] & (b->align[i] - 1)))
      return NULL;
  }
  b->ntmaps = get_u32(&r);
  if (r.bad || b->ntmaps > WV_MAX_TMAPS)
    return NULL;
  b->tmaps = wv_alloc(ctx, (b->ntmaps + 1) * sizeof *b->tmaps);
  for (uint32_t i = 0; i < b->ntmaps && !r.bad; i++) {
    wavec_tensor_map_info *m = &b->tmaps[i];
    m->arg = get_u32(&r);
    m->ndims = get_u32(&r);
    if (m->arg >= b->nargs || m->ndims > WV_ARRAY_LEN(m->box) ||
        m->ndims != b->args[m->arg].ndims)
      return NULL;
    for (size_t d = 0; d < m->ndims; d++)
      m->box[d] = get_u32(&r);
    m->swizzle = (int)get_u32(&r);
    if (m->swizzle && !tir_swz_ok(m->swizzle))
      return NULL;
  }
  b->nsizes = get_u32(&r);
  if (r.bad || b->nsizes > WV_MAX_SIZES)
    return NULL;
  b->sizes = wv_alloc(ctx, (b->nsizes + 1) * sizeof *b->sizes);
  for (uint32_t i = 0; i < b->nsizes && !r.bad; i++) {
    b->sizes[i].name = get_str(&r);
    b->sizes[i].multiple = (int64_t)get_u64(&r);
    b->sizes[i].most = (int64_t)get_u64(&r);
    if (b->sizes[i].multiple < 1 || b->sizes[i].most < 1 ||
        b->sizes[i].most > INT32_MAX)
      return NULL;
  }
  b->dyn = wv_alloc(ctx, (b->nargs + 1) * sizeof *b->dyn);
  for (uint32_t i = 0; i < b->nargs && !r.bad; i++)
    for (size_t d = 0; d < b->args[i].ndims; d++)
      if ((b->dyn[i][d] = get_u32(&r)) > b->nsizes)
        return NULL;
  for (int d = 0; d < 3; d++)
    if ((b->grid_size[d] = get_u32(&r)) > b->nsizes)
      return NULL;
  for (int d = 0; d < 3; d++) {
    b->grid_tile[d] = (int64_t)get_u64(&r);
    if (b->grid_size[d] && b->grid_tile[d] < 1)
      return NULL;
  }
  b->persistent = (int64_t)get_u64(&r);
  for (int d = 0; d < 3; d++)
    if ((b->tiles[d] = (int64_t)get_u64(&r)) < 0 || b->persistent < 0)
      return NULL;
  uint64_t n = get_u64(&r);
  const unsigned char *code = r.bad ? NULL : take(&r, (size_t)n);
  if (!code || r.p != r.end)
    return NULL;
  if (b->key[0] != key[0] || b->key[1] != key[1])
    return NULL; /* another key's entry: stale or misplaced */
  b->code = wv_dup(ctx, code, (size_t)n);
  b->code_len = (size_t)n;
  return b;
}

/* ---- the folder
 * ------------------------------------------------------------------- */
const char *wv_cache_dir(wavec_ctx *ctx) {
  const char *d = getenv("WAVEC_CACHE_DIR");
  if (d && *d)
    return wv_strdup(ctx, d);
  wv_buf b;
  wv_buf_init(&b, ctx);
  const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
  if (xdg && *xdg)
    wv_buf_printf(&b, "%s/wavec", xdg);
  else if (home && *home)
    wv_buf_printf(&b, "%s/.cache/wavec", home);
  else
    return NULL;
  return wv_buf_str(&b);
}

static const char *entry_path(wavec_ctx *ctx, const char *dir,
                              const uint64_t key[2]) {
  wv_buf b;
  wv_buf_init(&b, ctx);
  wv_buf_printf(&b, "%s/%016llx%016llx%s", dir, (unsigned long long)key[0],
                (unsigned long long)key[1], suffix);
  return wv_buf_str(&b);
}

/* mkdir -p: every missing folder on the path; false when one cannot be
 * made. */
static bool make_dirs(wavec_ctx *ctx, const char *dir) {
  char *p = wv_strdup(ctx, dir);
  for (char *s = p + 1;; s++) {
    if (*s == '/' || *s == 0) {
      char c = *s;
      *s = 0;
      if (mkdir(p, 0755) != 0 && errno != EEXIST)
        return false;
      *s = c;
      if (!c)
        break;
    }
  }
  return true;
}

/* A whole file into the arena; false when it cannot be read or is not a
 * regular file of at most WV_ENTRY_MAX bytes. */
static bool read_whole(wavec_ctx *ctx, const char *path, const void **data,
                       size_t *len) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return false;
  struct stat st;
  bool ok = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
            (uint64_t)st.st_size <= WV_ENTRY_MAX;
  /* the buffer from the arena may unwind: closed on that path too */
  char *buf = NULL;
  size_t n = 0;
  if (ok) {
    wv_guard g;
    g.prev = ctx->guard;
    ctx->guard = &g;
    if (setjmp(g.jb)) {
      ctx->guard = g.prev;
      close(fd);
      wv_throw(ctx);
    }
    buf = wv_alloc(ctx, (size_t)st.st_size + 1);
    ctx->guard = g.prev;
    while (n < (size_t)st.st_size) {
      ssize_t got = read(fd, buf + n, (size_t)st.st_size - n);
      if (got < 0 && errno == EINTR)
        continue;
      if (got <= 0)
        break;
      n += (size_t)got;
    }
    ok = n == (size_t)st.st_size; /* shorter: it changed under us */
  }
  close(fd);
  if (ok) {
    *data = buf;
    *len = n;
  }
  return ok;
}

bool wv_cache_get(wavec_ctx *ctx, const uint64_t key[2], const void **data,
                  size_t *len) {
  const char *dir = wv_cache_dir(ctx);
  return dir && read_whole(ctx, entry_path(ctx, dir, key), data, len);
}

bool wv_cache_put(wavec_ctx *ctx, const uint64_t key[2], const void *data,
                  size_t len) {
  const char *dir = wv_cache_dir(ctx);
  /* wv_write_file: a temporary of a unique name beside the entry
   * (".NAME.XXXXXX"), renamed over it once whole */
  wv_span part = {data, len};
  return dir && make_dirs(ctx, dir) &&
         wv_write_file(entry_path(ctx, dir, key), &part, 1, NULL, 0) == 0;
}

/* ---- the key
 * ---------------------------------------------------------------------- */
/* A length-prefixed field of the key's material. */
static void field(wv_buf *b, const void *p, size_t n) {
  put_u64(b, n);
  wv_buf_add(b, p, n);
}
static void field_str(wv_buf *b, const char *s) {
  field(b, s, strlen(s));
}

static int cmp_define(const void *a, const void *b) {
  return strcmp((*(const wv_define *const *)a)->name,
                (*(const wv_define *const *)b)->name);
}

bool wv_cache_key(wavec_ctx *ctx, const char *kernel, const char *target,
                  const char *toolchain, uint64_t key[2], const char **desc) {
  if (!ctx->sources.n)
    return false;
  wv_buf m, d;
  wv_buf_init(&m, ctx);
  wv_buf_init(&d, ctx);
  field_str(&m, "wavec-cache 1");
  field_str(&m, WAVEC_VERSION_STRING);
  field_str(&m, WV_SOURCE_ID);
  put_u32(&m, ctx->sources.n);
  for (uint32_t i = 0; i < ctx->sources.n; i++) {
    field_str(&m, ctx->sources.v[i].file);
    field(&m, ctx->sources.v[i].text, ctx->sources.v[i].len);
    wv_buf_printf(&d, "%s%s", i ? "," : "", ctx->sources.v[i].file);
  }
  field_str(&m, kernel);
  wv_buf_printf(&d, " %s", kernel);
  /* definitions in name order: the order they were given means nothing */
  uint32_t nd = ctx->defines.n;
  const wv_define **defs = wv_alloc(ctx, (nd + 1) * sizeof *defs);
  for (uint32_t i = 0; i < nd; i++)
    defs[i] = &ctx->defines.v[i];
  qsort(defs, nd, sizeof *defs, cmp_define);
  put_u32(&m, nd);
  for (uint32_t i = 0; i < nd; i++) {
    field_str(&m, defs[i]->name);
    put_u32(&m, defs[i]->is_float);
    uint64_t bits;
    memcpy(&bits, &defs[i]->f, sizeof bits);
    put_u64(&m, defs[i]->is_float ? bits : (uint64_t)defs[i]->i);
    if (defs[i]->is_float)
      wv_buf_printf(&d, " %s=%.17g", defs[i]->name, defs[i]->f);
    else
      wv_buf_printf(&d, " %s=%lld", defs[i]->name, (long long)defs[i]->i);
  }
  put_u64(&m, (uint64_t)ctx->hw_threads);
  put_u64(&m, (uint64_t)(int64_t)ctx->hw_mma);
  if (ctx->hw_threads)
    wv_buf_printf(&d, " threads_per_wave=%lld", (long long)ctx->hw_threads);
  if (ctx->hw_mma >= 0)
    wv_buf_printf(&d, " mma=%d", ctx->hw_mma);
  static const char *const hw_names[] = {
#define X(e, num, name, lo, hi) name,
      WAVEC_HW_INTS(X)
#undef X
  };
  for (int i = 0; i < WAVEC_HW_INT_COUNT; i++) {
    put_u64(&m, (uint64_t)ctx->hw_ints[i]);
    if (ctx->hw_ints[i] >= 0)
      wv_buf_printf(&d, " %s=%lld", hw_names[i], (long long)ctx->hw_ints[i]);
  }
  put_u64(&m, ctx->test_hooks);
  field_str(&m, target);
  field_str(&m, toolchain);
  wv_buf_printf(&d, " target=%s (%s, wavec %s)", target, toolchain,
                WAVEC_VERSION_STRING);
  key[0] = wv_xxh64(m.s, m.n, 0);
  key[1] = wv_xxh64(m.s, m.n, 0x9E3779B97F4A7C15ull);
  if (desc)
    *desc = wv_buf_str(&d);
  return true;
}

/* ---- listing and clearing
 * ------------------------------------------------------- */
const char *wavec_cache_dir(wavec_ctx *ctx) {
  if (!ctx)
    return NULL;
  WV_GUARD(ctx, NULL);
  const char *d = wv_cache_dir(ctx);
  WV_UNGUARD(ctx);
  return d;
}

static bool ends_with(const char *s, const char *end) {
  size_t n = strlen(s), m = strlen(end);
  return n >= m && strcmp(s + n - m, end) == 0;
}

/* An entry's name: 32 hex digits and the suffix; the key they spell. */
static bool entry_name(const char *name, uint64_t key[2]) {
  if (strlen(name) != 32 + sizeof suffix - 1 || !ends_with(name, suffix))
    return false;
  for (int h = 0; h < 2; h++) {
    key[h] = 0;
    for (int i = 0; i < 16; i++) {
      char c = name[16 * h + i];
      int v = c >= '0' && c <= '9'   ? c - '0'
              : c >= 'a' && c <= 'f' ? c - 'a' + 10
                                     : -1;
      if (v < 0)
        return false;
      key[h] = key[h] << 4 | (uint64_t)v;
    }
  }
  return true;
}

/* Other files of the cache that --clear removes: the autotuner's choices
 * ("<32 hex digits>.wvtune", python/wavec/_autotune.py) and temporary files
 * writers leave behind when they die (".<entry or choice name>.XXXXXX"). */
static bool hex32(const char *s) {
  for (int i = 0; i < 32; i++)
    if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
      return false;
  return true;
}
static bool other_cache_file(const char *name) {
  static const char *const exts[] = {".wvbin", ".wvtune"};
  bool temp = name[0] == '.';
  const char *p = name + temp;
  if (strlen(p) < 32 || !hex32(p))
    return false;
  p += 32;
  for (size_t i = 0; i < WV_ARRAY_LEN(exts); i++) {
    size_t n = strlen(exts[i]);
    if (strncmp(p, exts[i], n) == 0 &&
        (temp ? p[n] == '.' && p[n + 1] : p[n] == 0))
      return true;
  }
  return false;
}

static int cmp_entry(const void *a, const void *b) {
  return strcmp(((const wavec_cache_entry *)a)->file,
                ((const wavec_cache_entry *)b)->file);
}

/* The names in dir that `want` accepts; NULL when dir cannot be opened. */
static wv_names *scan(wavec_ctx *ctx, const char *dir,
                      bool (*want)(const char *)) {
  wv_names *out = wv_alloc(ctx, sizeof *out);
  DIR *dd = opendir(dir);
  if (!dd)
    return NULL;
  /* closed on an unwind too */
  wv_guard g;
  g.prev = ctx->guard;
  ctx->guard = &g;
  if (setjmp(g.jb)) {
    ctx->guard = g.prev;
    closedir(dd);
    wv_throw(ctx);
  }
  for (struct dirent *e; (e = readdir(dd));)
    if (want(e->d_name))
      vec_push(ctx, out, wv_strdup(ctx, e->d_name));
  ctx->guard = g.prev;
  closedir(dd);
  return out;
}

static bool is_entry(const char *name) {
  uint64_t k[2];
  return entry_name(name, k);
}
static bool is_cache_file(const char *name) {
  return is_entry(name) || other_cache_file(name);
}

wavec_status wavec_cache_list(wavec_ctx *ctx, const wavec_cache_entry **out,
                              size_t *n) {
  if (!ctx || !out || !n)
    return wv_null_param(ctx, "wavec_cache_list", !out ? "out" : "n");
  *out = NULL;
  *n = 0;
  WV_GUARD(ctx, ctx->status ? ctx->status : WAVEC_ERR_NOMEM);
  const char *dir = wv_cache_dir(ctx);
  wv_names *names = dir ? scan(ctx, dir, is_entry) : NULL;
  uint32_t count = names ? names->n : 0;
  wavec_cache_entry *es = wv_alloc(ctx, (count + 1) * sizeof *es);
  for (uint32_t i = 0; i < count; i++) {
    wavec_cache_entry *e = &es[i];
    wv_buf path;
    wv_buf_init(&path, ctx);
    wv_buf_printf(&path, "%s/%s", dir, names->v[i]);
    e->file = wv_buf_str(&path);
    uint64_t key[2];
    entry_name(names->v[i], key);
    const void *data;
    size_t len = 0;
    if (!read_whole(ctx, e->file, &data, &len))
      continue;
    e->bytes = len;
    wavec_module *b = wv_module_read(ctx, data, len, key);
    if (b) {
      e->valid = 1;
      e->kernel = b->kernel;
      e->target = b->target;
      e->desc = b->desc;
    }
  }
  qsort(es, count, sizeof *es, cmp_entry);
  WV_UNGUARD(ctx);
  *out = es;
  *n = count;
  return WAVEC_OK;
}

wavec_status wavec_cache_clear(wavec_ctx *ctx, size_t *removed) {
  if (!ctx)
    return WAVEC_ERR_INVALID;
  if (removed)
    *removed = 0;
  if (ctx->status != WAVEC_OK)
    return ctx->status;
  WV_GUARD(ctx, ctx->status);
  const char *dir = wv_cache_dir(ctx);
  wv_names *names = dir ? scan(ctx, dir, is_cache_file) : NULL;
  size_t done = 0;
  for (uint32_t i = 0; names && i < names->n; i++) {
    wv_buf path;
    wv_buf_init(&path, ctx);
    wv_buf_printf(&path, "%s/%s", dir, names->v[i]);
    if (unlink(wv_buf_str(&path)) == 0 || errno == ENOENT)
      done++;
    else
      wv_fail(ctx, D_CACHE, (wavec_loc){0}, "cannot remove '%s': %s",
              wv_buf_str(&path), strerror(errno));
  }
  WV_UNGUARD(ctx);
  if (removed)
    *removed = done;
  return WAVEC_OK;
}
