/* NumPy .npy reading and writing (see npy.h).
 *
 * The format: the magic "\x93NUMPY", a major and a minor version byte, the
 * header length (2 bytes little-endian in version 1, 4 bytes in 2 and 3),
 * then the header: a Python dict literal such as
 *   {'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }
 * padded with spaces and ended by '\n' so that the data starts at a multiple
 * of 64, then the raw data. */
#include "support/npy.h"

#include "support/outfile.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "npy.c moves little-endian data as it is: a big-endian host needs swaps"
#endif

static const char magic[6] = {'\x93', 'N', 'U', 'M', 'P', 'Y'};

static const struct {
  const char *descr;
  size_t size;
} dtypes[] = {{"<f2", 2}, {"<f4", 4}, {"<u2", 2}, {"<i4", 4},
               {"|b1", 1}, {"|u1", 1}, {"|i1", 1}};

#define SUPPORTED "<f2 <f4 <u2 <i4 |b1 |u1 |i1"

__attribute__((format(printf, 3, 4))) static int fail(char *err, size_t errlen,
                                                      const char *fmt, ...) {
  if (err && errlen) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
  }
  return -1;
}

size_t wv_npy_itemsize(const char *descr) {
  for (size_t i = 0; descr && i < sizeof dtypes / sizeof dtypes[0]; i++)
    if (strcmp(descr, dtypes[i].descr) == 0)
      return dtypes[i].size;
  return 0;
}

int64_t wv_npy_count(const wv_npy *a) {
  int64_t n = 1;
  for (int i = 0; i < a->ndim; i++)
    n *= a->shape[i];
  return n;
}

void wv_npy_free(wv_npy *a) {
  if (!a)
    return;
  free(a->data);
  memset(a, 0, sizeof *a);
}

/* count * itemsize of a shape, checking every factor; -1 past INT64_MAX
 * bytes (so that the element count, wv_npy_count, is an int64_t too). */
static int shape_bytes(int ndim, const int64_t *shape, size_t item,
                       size_t *nbytes) {
  size_t n = item;
  for (int i = 0; i < ndim; i++) {
    uint64_t d = (uint64_t)shape[i];
    if (d != 0 && n > (size_t)INT64_MAX / d)
      return -1;
    n *= (size_t)d;
  }
  *nbytes = n;
  return 0;
}

/* ---- the header dictionary ----------------------------------------------- */
typedef struct scan {
  const char *p, *end;
  char *err;
  size_t errlen;
} scan;

static void skip_ws(scan *s) {
  while (s->p < s->end &&
         (*s->p == ' ' || *s->p == '\t' || *s->p == '\n' || *s->p == '\r'))
    s->p++;
}

static bool eat(scan *s, char c) {
  skip_ws(s);
  if (s->p < s->end && *s->p == c) {
    s->p++;
    return true;
  }
  return false;
}

/* What the scanner sees next, for messages. */
static const char *next_desc(scan *s, char *buf, size_t n) {
  if (s->p >= s->end)
    return "end of header";
  unsigned char c = (unsigned char)*s->p;
  if (c >= 0x20 && c < 0x7f)
    snprintf(buf, n, "'%c'", c);
  else
    snprintf(buf, n, "byte 0x%02x", c);
  return buf;
}

static int expected(scan *s, const char *what) {
  char buf[16];
  return fail(s->err, s->errlen, "malformed header: expected %s, found %s",
              what, next_desc(s, buf, sizeof buf));
}

/* A quoted string ('...' or "...", no escapes) into out[cap]. */
static int string_lit(scan *s, char *out, size_t cap, const char *what) {
  skip_ws(s);
  if (s->p >= s->end || (*s->p != '\'' && *s->p != '"'))
    return expected(s, what);
  char q = *s->p++;
  size_t n = 0;
  while (s->p < s->end && *s->p != q) {
    unsigned char c = (unsigned char)*s->p;
    if (c == '\\' || c < 0x20 || c >= 0x7f)
      return fail(s->err, s->errlen,
                  "malformed header: unsupported character in a string");
    if (n + 1 >= cap)
      return fail(s->err, s->errlen, "malformed header: %s too long", what);
    out[n++] = *s->p++;
  }
  if (s->p >= s->end)
    return fail(s->err, s->errlen, "malformed header: unterminated string");
  s->p++;
  out[n] = 0;
  return 0;
}

static bool word(scan *s, const char *w) {
  size_t n = strlen(w);
  skip_ws(s);
  if ((size_t)(s->end - s->p) >= n && memcmp(s->p, w, n) == 0) {
    s->p += n;
    return true;
  }
  return false;
}

/* A non-negative integer (Python 2 files may append 'L'). */
static int int_lit(scan *s, int64_t *v) {
  skip_ws(s);
  if (s->p >= s->end || *s->p < '0' || *s->p > '9')
    return expected(s, "a dimension (non-negative integer)");
  int64_t x = 0;
  while (s->p < s->end && *s->p >= '0' && *s->p <= '9') {
    int dig = *s->p++ - '0';
    if (x > (INT64_MAX - dig) / 10)
      return fail(s->err, s->errlen, "dimension too large");
    x = x * 10 + dig;
  }
  if (s->p < s->end && *s->p == 'L')
    s->p++;
  *v = x;
  return 0;
}

/* (), (5,), (3, 4), (3, 4,) -- and (5), leniently. */
static int shape_lit(scan *s, wv_npy *out) {
  if (!eat(s, '('))
    return expected(s, "'(' starting the shape");
  out->ndim = 0;
  if (eat(s, ')'))
    return 0;
  for (;;) {
    int64_t d = 0;
    if (int_lit(s, &d))
      return -1;
    if (out->ndim == WV_NPY_MAX_DIMS)
      return fail(s->err, s->errlen, "shape has more than %d dimensions",
                  WV_NPY_MAX_DIMS);
    out->shape[out->ndim++] = d;
    if (eat(s, ')'))
      return 0;
    if (!eat(s, ','))
      return expected(s, "',' or ')' in the shape");
    if (eat(s, ')'))
      return 0;
  }
}

static int parse_dict(scan *s, wv_npy *out) {
  bool have_descr = false, have_order = false, have_shape = false;
  bool fortran = false;
  if (!eat(s, '{'))
    return expected(s, "'{' starting the header");
  while (!eat(s, '}')) {
    char key[32];
    if (string_lit(s, key, sizeof key, "a quoted key"))
      return -1;
    if (!eat(s, ':'))
      return expected(s, "':' after a key");
    if (strcmp(key, "descr") == 0 && !have_descr) {
      skip_ws(s);
      if (s->p < s->end && *s->p == '[')
        return fail(s->err, s->errlen,
                    "structured dtypes are not supported (supported: " SUPPORTED
                    ")");
      char d[16];
      if (string_lit(s, d, sizeof d, "a dtype string"))
        return -1;
      if (!wv_npy_itemsize(d)) {
        if (d[0] == '>' && d[1])
          return fail(
              s->err, s->errlen,
              "big-endian dtype '%s' is not supported (supported: " SUPPORTED
              ")",
              d);
        return fail(s->err, s->errlen,
                    "unsupported dtype '%s' (supported: " SUPPORTED ")", d);
      }
      memcpy(out->descr, d, strlen(d) + 1);
      have_descr = true;
    } else if (strcmp(key, "fortran_order") == 0 && !have_order) {
      if (word(s, "True"))
        fortran = true;
      else if (!word(s, "False"))
        return expected(s, "True or False for fortran_order");
      have_order = true;
    } else if (strcmp(key, "shape") == 0 && !have_shape) {
      if (shape_lit(s, out))
        return -1;
      have_shape = true;
    } else if (strcmp(key, "descr") == 0 || strcmp(key, "fortran_order") == 0 ||
               strcmp(key, "shape") == 0) {
      return fail(s->err, s->errlen, "malformed header: key '%s' repeated",
                  key);
    } else {
      return fail(s->err, s->errlen, "malformed header: unknown key '%s'", key);
    }
    if (eat(s, '}'))
      break;
    if (!eat(s, ','))
      return expected(s, "',' or '}' after a value");
  }
  skip_ws(s);
  if (s->p != s->end)
    return fail(s->err, s->errlen,
                "malformed header: text after the closing '}'");
  if (!have_descr || !have_order || !have_shape)
    return fail(s->err, s->errlen, "malformed header: missing key '%s'",
                !have_descr   ? "descr"
                : !have_order ? "fortran_order"
                              : "shape");
  if (fortran) {
    /* Fortran and C order coincide when at most one extent exceeds 1. */
    int big = 0;
    for (int i = 0; i < out->ndim; i++)
      big += out->shape[i] > 1;
    if (big > 1)
      return fail(s->err, s->errlen,
                  "fortran_order is True: only C-order arrays are supported "
                  "(save np.ascontiguousarray(x) instead)");
  }
  return 0;
}

/* The preamble: magic, version, header length. Sets *data_offset. */
static int preamble(const unsigned char *b, size_t len, size_t *data_offset,
                    char *err, size_t errlen) {
  if (len < 8 || memcmp(b, magic, sizeof magic) != 0)
    return fail(err, errlen, "not a .npy file (bad magic)");
  if (b[6] < 1 || b[6] > 3 || b[7] != 0)
    return fail(err, errlen, "unsupported .npy format version %u.%u", b[6],
                b[7]);
  size_t pre = b[6] == 1 ? 10 : 12;
  if (len < pre)
    return fail(err, errlen, "truncated .npy preamble");
  size_t hlen = (size_t)b[8] | (size_t)b[9] << 8;
  if (pre == 12)
    hlen |= (size_t)b[10] << 16 | (size_t)b[11] << 24;
  if (hlen > WV_NPY_MAX_HEADER)
    return fail(err, errlen, "header length %zu exceeds the limit of %d", hlen,
                WV_NPY_MAX_HEADER);
  *data_offset = pre + hlen;
  return 0;
}

int wv_npy_parse_header(const void *buf, size_t len, wv_npy *out,
                        size_t *data_offset, char *err, size_t errlen) {
  const unsigned char *b = buf;
  size_t off;
  memset(out, 0, sizeof *out);
  if (preamble(b, len, &off, err, errlen))
    return -1;
  size_t pre = b[6] == 1 ? 10 : 12; /* preamble() checked len >= pre */
  if (len < off)
    return fail(err, errlen, "truncated header: %zu of %zu bytes present",
                len - pre, off - pre);
  scan s = {(const char *)b + pre, (const char *)b + off, err, errlen};
  if (parse_dict(&s, out)) {
    memset(out, 0, sizeof *out);
    return -1;
  }
  if (shape_bytes(out->ndim, out->shape, wv_npy_itemsize(out->descr),
                  &out->nbytes)) {
    memset(out, 0, sizeof *out);
    return fail(err, errlen, "shape too large: its size overflows");
  }
  *data_offset = off;
  return 0;
}

/* ---- files -------------------------------------------------------------- */
int wv_npy_read(const char *path, wv_npy *out, char *err, size_t errlen) {
  char msg[256];
  unsigned char *head = NULL;
  memset(out, 0, sizeof *out);
  FILE *f = fopen(path, "rb");
  if (!f)
    return fail(err, errlen, "%s: cannot open: %s", path, strerror(errno));
  unsigned char pre[12];
  size_t got = fread(pre, 1, sizeof pre, f), off;
  if (preamble(pre, got, &off, msg, sizeof msg))
    goto bad;
  /* Only now, with off bounded by WV_NPY_MAX_HEADER, read the header. */
  head = malloc(off);
  if (!head) {
    snprintf(msg, sizeof msg, "out of memory");
    goto bad;
  }
  memcpy(head, pre, got < off ? got : off);
  if (got < off)
    got += fread(head + got, 1, off - got, f);
  if (wv_npy_parse_header(head, got < off ? got : off, out, &off, msg,
                          sizeof msg))
    goto bad;
  free(head);
  head = NULL;
  /* Compare with the file's real size before allocating what it claims. */
  long end;
  if (fseek(f, 0, SEEK_END) != 0 || (end = ftell(f)) < 0 ||
      fseek(f, (long)off, SEEK_SET) != 0) {
    snprintf(msg, sizeof msg, "cannot seek (not a regular file?)");
    goto bad;
  }
  size_t have = (size_t)end > off ? (size_t)end - off : 0;
  if (have != out->nbytes) {
    snprintf(msg, sizeof msg,
             have < out->nbytes
                 ? "truncated data: the header needs %zu bytes, the file has "
                   "%zu"
                 : "the header needs %zu bytes of data, the file has %zu",
             out->nbytes, have);
    goto bad;
  }
  out->data = malloc(out->nbytes ? out->nbytes : 1);
  if (!out->data) {
    snprintf(msg, sizeof msg, "out of memory for %zu bytes", out->nbytes);
    goto bad;
  }
  if (fread(out->data, 1, out->nbytes, f) != out->nbytes) {
    snprintf(msg, sizeof msg, "read error");
    goto bad;
  }
  fclose(f);
  if (strcmp(out->descr, "|b1") == 0) {
    unsigned char *p = out->data;
    for (size_t i = 0; i < out->nbytes; i++)
      p[i] = p[i] != 0;
  }
  return 0;
bad:
  free(head);
  fclose(f);
  wv_npy_free(out);
  return fail(err, errlen, "%s: %s", path, msg);
}

int wv_npy_write(const char *path, const char *descr, int ndim,
                 const int64_t *shape, const void *data, char *err,
                 size_t errlen) {
  size_t item = wv_npy_itemsize(descr), nbytes;
  if (!item)
    return fail(err, errlen,
                "%s: unsupported dtype '%s' (supported: " SUPPORTED ")", path,
                descr ? descr : "(null)");
  if (ndim < 0 || ndim > WV_NPY_MAX_DIMS)
    return fail(err, errlen, "%s: rank %d is not in 0..%d", path, ndim,
                WV_NPY_MAX_DIMS);
  for (int i = 0; i < ndim; i++)
    if (shape[i] < 0)
      return fail(err, errlen, "%s: negative dimension %lld", path,
                  (long long)shape[i]);
  if (shape_bytes(ndim, shape, item, &nbytes))
    return fail(err, errlen, "%s: shape too large: its size overflows", path);
  if (!data && nbytes)
    return fail(err, errlen, "%s: no data", path);

  /* 10-byte version 1.0 preamble, then the dict padded to a multiple of 64
   * with spaces and a final '\n'. Rank <= 8 keeps it well under 512. */
  char head[512];
  int n = snprintf(head + 10, sizeof head - 10,
                   "{'descr': '%s', 'fortran_order': False, 'shape': (", descr);
  for (int i = 0; i < ndim; i++)
    n += snprintf(head + 10 + n, sizeof head - 10 - (size_t)n,
                  i == 0 ? "%lld," : " %lld,", (long long)shape[i]);
  if (ndim > 1)
    n--; /* (3, 4) rather than (3, 4,); (5,) keeps its comma */
  n += snprintf(head + 10 + n, sizeof head - 10 - (size_t)n, "), }");
  size_t total = (10 + (size_t)n + 1 + 63) / 64 * 64;
  memset(head + 10 + n, ' ', total - 10 - (size_t)n);
  head[total - 1] = '\n';
  size_t hlen = total - 10;
  memcpy(head, magic, sizeof magic);
  head[6] = 1;
  head[7] = 0;
  head[8] = (char)(hlen & 0xff);
  head[9] = (char)(hlen >> 8);

  wv_span parts[2] = {{head, total}, {data, nbytes}};
  return wv_write_file(path, parts, nbytes ? 2 : 1, err, errlen);
}
