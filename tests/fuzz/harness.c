/* What the fuzz harnesses share (harness.h). */
#include "harness.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const dims[WVF_DIMS] = {"M", "N", "K", "B", "K1", "K2"};
static const char *const targets[] = {"sm_90a", "sm_90", "sm_80"};
static const char *const threads[] = {NULL, "32", "64", "128"};
static const char *const mmas[] = {NULL,
#define X(e, v, name) name,
                                   WAVEC_MMAS(X)
#undef X
};
static const char *const stages[] = {NULL, "1", "2", "3", "4"};
static const char *const copies[] = {NULL, "1", "2"};
static const char *const per_sm[] = {NULL, "1", "2"};
static const char *const on_off[] = {NULL, "1", "0"};
static const char *const sms[] = {NULL, "2", "3", "132"};
static const char *const group_m[] = {NULL, "1", "2", "8"};

#define LEN(a) (sizeof(a) / sizeof((a)[0]))

static size_t pick(const uint8_t *line, size_t n, size_t i, size_t entries) {
  return i < n ? (size_t)(uint8_t)(line[i] - '0') % entries : 0;
}

void wvf_choose(wavec_ctx *ctx, const uint8_t *data, size_t size,
                const int64_t *sizes, size_t nsizes, wvf_choice *out) {
  const uint8_t *line = data + 2;
  size_t n = 0;
  if (size >= 2 && data[0] == '#' && data[1] == '@')
    while (2 + n < size && line[n] != '\n' && n < 64)
      n++;
  size_t i = 0;
  for (; i < WVF_DIMS; i++) {
    out->size[i] = sizes[pick(line, n, i, nsizes)];
    wavec_define_int(ctx, dims[i], out->size[i]);
  }
  out->target = targets[pick(line, n, i++, LEN(targets))];
  static const struct {
    const char *key;
    const char *const *values;
    size_t n;
  } hw[] = {{"threads_per_wave", threads, LEN(threads)},
            {"mma", mmas, LEN(mmas)},
            {"stages", stages, LEN(stages)},
            {"copies", copies, LEN(copies)},
            {"workgroups_per_sm", per_sm, LEN(per_sm)},
            {"specialize", on_off, LEN(on_off)},
            {"persistent", on_off, LEN(on_off)},
            {"sms", sms, LEN(sms)},
            {"group_m", group_m, LEN(group_m)}};
  for (size_t h = 0; h < LEN(hw); h++) {
    const char *v = hw[h].values[pick(line, n, i++, hw[h].n)];
    if (v && wavec_hardware_override(ctx, hw[h].key, v) != WAVEC_OK) {
      fprintf(stderr, "harness: --hardware %s=%s refused\n", hw[h].key, v);
      abort();
    }
  }
  out->seed = 0x2545f4914f6cdd1dull;
  for (size_t j = 0; j < size; j++)
    out->seed = (out->seed ^ data[j]) * 0x100000001b3ull;
}

void wvf_require_located(wavec_ctx *ctx, const char *what) {
  wavec_diag_info d;
  if (wavec_diag(ctx, 0, &d) != WAVEC_OK) {
    fprintf(stderr, "%s failed (%s) with no diagnostic\n", what,
            wavec_status_string(wavec_errcode(ctx)));
    abort();
  }
  if (d.status == WAVEC_ERR_NOMEM)
    return;
  if (!d.loc.file || !d.loc.line || !d.loc.col || d.code <= 0) {
    fprintf(stderr, "%s failed with an error that has no location or code:\n%s",
            what, wavec_errmsg(ctx));
    abort();
  }
}

enum { STAGES = 8 };
static const char *names[STAGES];
static unsigned long long counts[STAGES];

static void print_reach(void) {
  if (!counts[0])
    return;
  fprintf(stderr, "reach:");
  for (int i = 0; i < STAGES && names[i]; i++)
    fprintf(stderr, "%s %s %llu (%.1f%%)", i ? "," : "", names[i], counts[i],
            100.0 * (double)counts[i] / (double)counts[0]);
  fprintf(stderr, "\n");
}

void wvf_reach(int stage, const char *name) {
  if (!names[0]) {
    names[0] = "inputs";
    atexit(print_reach);
  }
  names[stage] = name;
  counts[stage]++;
}

/* ---- a mutator for .wave text --------------------------------------------- */
/* Words that can stand for each other (one class a line): swapping within
 * a class mostly keeps the text a kernel. */
static const char *const classes[][9] = {
    {"f16", "bf16", "f32", "i32", "i1", "f8e4m3", "f8e5m2", "i8"},
    {"exp2", "exp", "log2", "reciprocal", "sqrt", "rsqrt", "abs", "tanh"},
    {"maximum", "minimum"},
    {"gt", "lt", "ge", "le", "eq", "ne"},
    {"sum", "max"},
    {"workgroup", "wave", "tiling"},
    {"F32_16x8x16_F16", "F32_16x8x16_BF16", "F32_16x16x16_F16",
     "F32_32x32x8_F16", "F32_64xNx16_F16", "F32_64xNx16_BF16"},
    {"M", "N", "K", "B", "K1", "K2"},
    {"BLOCK_M", "BLOCK_N", "BLOCK_K", "BLOCK_K2", "BLOCK_B", "WAVES"},
    {"stages", "copies", "workgroups_per_sm", "specialize", "persistent",
     "sms", "group_m"},
    {"read", "broadcast", "permute", "cast"},
};
static const char *const words[] = {
    "M", "N", "K", "B", "K1", "K2", "f16", "f32", "i32", "i1", "read",
    "write", "mma", "iterate", "yield", "Register", "Memory", "cast",
    "permute", "broadcast", "select", "self_index", "sum", "max", "exp2",
    "maximum", "gt", "workgroup", "wave", "tiling", "hardware", "dynamic",
    "threads_per_wave", "mma_type", "vector_shapes", "stages", "copies",
    "workgroups_per_sm", "elements_per_thread", "fill", "mapping", "dim",
    "multiple_of", "inf", "ceildiv", "min", "BLOCK_M", "BLOCK_N", "WAVES"};
static const char *const nums[] = {"1", "2", "4", "8", "16", "32", "64",
                                   "128", "256", "0", "3", "5", "7", "12",
                                   "24", "48", "100", "-1", "0.5", "1e9"};
static const char *const snippets[] = {
    " * 2.0", " + 1.0", " - 1.0", ", dim = N", ", dim = M", ", dim = K",
    "\n    t = sum(read(a), dim = K)\n", "\n        workgroup(K, 16, 2)\n",
    "\n        wave(N, 16)\n", "\n        tiling(N, 16)\n",
    "\n        dynamic(M)\n", "\n        dynamic(K, multiple_of = 16)\n",
    ", elements_per_thread = 4", ", fill = -inf", "exp2(", ")", "cast(",
    ", f16)", "[M, N, f32]", "[N, M]"};

typedef struct mrng {
  uint64_t s;
} mrng;
static size_t mr(mrng *r, size_t n) {
  r->s ^= r->s << 13;
  r->s ^= r->s >> 7;
  r->s ^= r->s << 17;
  return n ? (size_t)(r->s % n) : 0;
}

static bool is_id(uint8_t c, bool first) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
         (!first && c >= '0' && c <= '9');
}
static bool is_num(uint8_t c) { return (c >= '0' && c <= '9') || c == '.'; }

/* Replaces data[at, at + len) by s[0, n); the new size (unchanged when it
 * would not fit). */
static size_t replace(uint8_t *data, size_t size, size_t max, size_t at,
                      size_t len, const uint8_t *s, size_t n) {
  if (size - len + n > max)
    return size;
  memmove(data + at + n, data + at + len, size - at - len);
  if (n)
    memcpy(data + at, s, n);
  return size - len + n;
}

static size_t replace_str(uint8_t *data, size_t size, size_t max, size_t at,
                          size_t len, const char *s) {
  return replace(data, size, max, at, len, (const uint8_t *)s, strlen(s));
}

/* The token (identifier or number) at or after a random position, past
 * the "#@" line: [*at, *at + *len); false when there is none. */
static bool token(const uint8_t *d, size_t size, mrng *r, bool number,
                  size_t *at, size_t *len) {
  size_t from = 0;
  if (size >= 2 && d[0] == '#' && d[1] == '@')
    while (from < size && d[from] != '\n')
      from++;
  for (size_t tries = 0; tries < 4 && from < size; tries++) {
    size_t i = from + mr(r, size - from);
    while (i < size && !(number ? d[i] >= '0' && d[i] <= '9'
                                : is_id(d[i], true)))
      i++;
    if (i == size)
      continue;
    while (i > from && (number ? is_num(d[i - 1]) : is_id(d[i - 1], false)))
      i--;
    if (!number && i > 0 && is_num(d[i - 1]))
      continue; /* inside a number such as 1e9 */
    size_t e = i;
    while (e < size && (number ? is_num(d[e]) : is_id(d[e], false)))
      e++;
    *at = i;
    *len = e - i;
    return true;
  }
  return false;
}

/* A random line: [*at, *at + *len) including its '\n' when it has one. */
static bool line(const uint8_t *d, size_t size, mrng *r, size_t *at,
                 size_t *len) {
  if (!size)
    return false;
  size_t i = mr(r, size);
  while (i > 0 && d[i - 1] != '\n')
    i--;
  size_t e = i;
  while (e < size && d[e] != '\n')
    e++;
  *at = i;
  *len = e - i + (e < size);
  return true;
}

/* Another word of the class of d[at, at + len), or NULL. */
static const char *same_class(const uint8_t *d, size_t at, size_t len,
                              mrng *r) {
  for (size_t c = 0; c < sizeof classes / sizeof *classes; c++) {
    size_t n = 0;
    bool in = false;
    for (; n < 9 && classes[c][n]; n++)
      in |= strlen(classes[c][n]) == len && !memcmp(classes[c][n], d + at, len);
    if (in)
      return classes[c][mr(r, n)];
  }
  return NULL;
}

/* Another choice on the "#@" line (which the parser skips: the text
 * parses as before), or the line, all zeros, where there is none. */
static size_t choose(uint8_t *d, size_t size, size_t max, mrng *r) {
  if (size < 2 || d[0] != '#' || d[1] != '@')
    return replace_str(d, size, max, 0, 0, "#@0000000000000000\n");
  size_t n = 2;
  while (n < size && d[n] != '\n')
    n++;
  if (n > 2)
    d[2 + mr(r, n - 2)] = (uint8_t)('0' + mr(r, 10));
  return size;
}

static size_t edit(uint8_t *d, size_t size, size_t max, mrng *r) {
  size_t at, len, at2, len2;
  uint8_t tmp[512];
  size_t roll = mr(r, 100);
  if (roll < 25) { /* a number */
    if (token(d, size, r, true, &at, &len))
      return replace_str(d, size, max, at, len,
                         nums[mr(r, sizeof nums / sizeof *nums)]);
  } else if (roll < 50) { /* a word of the same class, or a name of the input */
    if (token(d, size, r, false, &at, &len)) {
      const char *w = same_class(d, at, len, r);
      if (w)
        return replace_str(d, size, max, at, len, w);
      if (token(d, size, r, false, &at2, &len2) && len2 < sizeof tmp) {
        memcpy(tmp, d + at2, len2);
        return replace(d, size, max, at, len, tmp, len2);
      }
    }
  } else if (roll < 60) {
    return choose(d, size, max, r);
  } else if (roll < 68) { /* copy a line after another, or move it */
    if (line(d, size, r, &at, &len) && len < sizeof tmp &&
        line(d, size, r, &at2, &len2)) {
      memcpy(tmp, d + at, len);
      size_t to = at2 + len2;
      size_t n = replace(d, size, max, to, 0, tmp, len);
      if (n != size && mr(r, 2))
        n = replace(d, n, max, to <= at ? at + len : at, len, NULL, 0);
      return n;
    }
  } else if (roll < 75) { /* delete a line */
    if (line(d, size, r, &at, &len) && at > 0)
      return replace(d, size, max, at, len, NULL, 0);
  } else if (roll < 83) { /* a snippet at a token's edge */
    const char *s = snippets[mr(r, sizeof snippets / sizeof *snippets)];
    if (token(d, size, r, mr(r, 4) == 0, &at, &len))
      return replace_str(d, size, max, at + (mr(r, 2) ? len : 0), 0, s);
  } else if (roll < 95) { /* a word of the language */
    if (token(d, size, r, false, &at, &len))
      return replace_str(d, size, max, at, len,
                         words[mr(r, sizeof words / sizeof *words)]);
  }
  return LLVMFuzzerMutate(d, size, max);
}

static bool parses(const uint8_t *d, size_t n) {
  wavec_ctx *ctx = wavec_ctx_new(NULL, NULL);
  bool ok = ctx && wavec_parse(ctx, "m.wave", (const char *)d, n) == WAVEC_OK;
  wavec_ctx_free(ctx);
  return ok;
}

size_t wvf_mutate_wave(uint8_t *d, size_t size, size_t max, unsigned seed) {
  mrng r = {0x9e3779b97f4a7c15ull ^ ((uint64_t)seed << 17 | seed)};
  enum { TRIES = 8, KEEP = 1 << 16 };
  static uint8_t orig[KEEP];
  if (size > KEEP)
    return edit(d, size, max, &r);
  memcpy(orig, d, size);
  for (int t = 0; t < TRIES; t++) {
    size_t n = edit(d, size, max, &r);
    if (parses(d, n))
      return n;
    memcpy(d, orig, size);
  }
  return choose(d, size, max, &r); /* parses if the input did */
}

/* The start of the line that holds byte i. */
static size_t line_start(const uint8_t *d, size_t i) {
  while (i > 0 && d[i - 1] != '\n')
    i--;
  return i;
}

size_t wvf_cross_wave(const uint8_t *d1, size_t s1, const uint8_t *d2,
                      size_t s2, uint8_t *out, size_t max, unsigned seed) {
  mrng r = {0x2545f4914f6cdd1dull ^ ((uint64_t)seed << 21 | seed)};
  size_t n = 0;
  if (s1 > max)
    s1 = max;
  for (int t = 0; t < 8; t++) {
    /* d1's lines up to a, 1 to 6 lines of d2 from b, the rest of d1 */
    size_t a = line_start(d1, mr(&r, s1 + 1));
    size_t b = line_start(d2, mr(&r, s2 + 1)), c = b;
    for (size_t k = 1 + mr(&r, 6); k > 0 && c < s2; k--)
      while (c < s2 && d2[c++] != '\n')
        ;
    if (s1 + (c - b) > max)
      c = b + (max > s1 ? max - s1 : 0);
    memcpy(out, d1, a);
    memcpy(out + a, d2 + b, c - b);
    memcpy(out + a + (c - b), d1 + a, s1 - a);
    n = s1 + (c - b);
    if (parses(out, n))
      return n;
  }
  return 0; /* none parsed: libFuzzer edits another way */
}
