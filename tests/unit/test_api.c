/* The public API: status codes, messages with locations and carets, builder
 * errors, error propagation through 0 handles, and allocation-failure
 * injection through the context allocator (every failure point of parsing
 * and compiling an example ends in WAVEC_ERR_NOMEM, no crash, no leak). */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "wavec.h"

typedef struct failing {
  long left;   /* allocations before failing; -1 never */
  long live;   /* blocks outstanding */
} failing;

static void *failing_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
  failing *f = ud;
  (void)osize;
  if (nsize == 0) {
    if (ptr)
      f->live--;
    free(ptr);
    return NULL;
  }
  if (f->left == 0)
    return NULL;
  if (f->left > 0)
    f->left--;
  void *p = realloc(ptr, nsize);
  if (p && !ptr)
    f->live++;
  return p;
}

static void status_strings(void) {
  CHECK(strcmp(wavec_status_string(WAVEC_OK), "ok") == 0);
  CHECK(strcmp(wavec_status_string(WAVEC_ERR_NOMEM), "out of memory") == 0);
  CHECK(strcmp(wavec_status_string((wavec_status)999), "unknown status") == 0);
  CHECK(strcmp(wavec_version(), WAVEC_VERSION_STRING) == 0);
}

static void error_has_location_and_caret(void) {
  wavec_ctx *ctx = wavec_ctx_new(NULL, NULL);
  const char *src = "kernel k(a: Memory[M, f16]) {\n"
                    "    x = read(a)\n"
                    "    y = x + zz\n"
                    "}\n";
  wavec_status st = wavec_parse(ctx, "t.wave", src, strlen(src));
  CHECK(st != WAVEC_OK);
  CHECK(wavec_errcode(ctx) == st);
  const char *msg = wavec_errmsg(ctx);
  CHECKF(strncmp(msg, "t.wave:3:13: error[E", 20) == 0, "got: %s", msg);
  CHECKF(strstr(msg, "    y = x + zz\n") != NULL, "got: %s", msg);
  CHECKF(strstr(msg, "|             ^") != NULL, "got: %s", msg);
  wavec_diag_info d;
  CHECK(wavec_diag_count(ctx) == 1);
  CHECK(wavec_diag(ctx, 0, &d) == WAVEC_OK);
  CHECK(d.loc.line == 3 && d.loc.col == 13);
  CHECK(d.offset == strlen("kernel k(a: Memory[M, f16]) {\n    x = read(a)\n    y = x + "));
  CHECK(wavec_diag(ctx, 1, &d) == WAVEC_ERR_INVALID);
  wavec_ctx_free(ctx);
}

static void builder_errors_propagate(void) {
  wavec_ctx *ctx = wavec_ctx_new(NULL, NULL);
  wavec_loc here = {"b.c", 10, 3};
  wavec_sym M = wavec_symbol(ctx, "M"), N = wavec_symbol(ctx, "N");
  CHECK(wavec_symbol(ctx, "M") == M);
  CHECK(strcmp(wavec_symbol_name(ctx, N), "N") == 0);
  wavec_kernel *k = wavec_kernel_begin(ctx, "k", here);
  wavec_value a = wavec_arg(k, "a", 1, &M, WAVEC_F16, 0, here);
  wavec_value b = wavec_arg(k, "b", 1, &N, WAVEC_F16, 0, here);
  wavec_value x = wavec_read(k, a, 0, 0, here);
  wavec_value y = wavec_read(k, b, 0, 0, here);
  CHECK(x && y);
  wavec_loc bad = {"b.c", 20, 7};
  wavec_value z = wavec_binary(k, WAVEC_OP_ADD, x, y, bad);
  CHECK(z == 0);
  CHECK(wavec_errcode(ctx) == WAVEC_ERR_TYPE);
  /* Later calls return 0 without replacing the first error. */
  CHECK(wavec_unary(k, WAVEC_OP_EXP2, z, here) == 0);
  CHECK(wavec_kernel_end(k) == WAVEC_ERR_TYPE);
  const char *msg = wavec_errmsg(ctx);
  CHECKF(strncmp(msg, "b.c:20:7: error[E0304]: add of [M] f16 and [N] f16", 50) == 0,
         "got: %s", msg);
  CHECK(wavec_diag_count(ctx) == 1);
  wavec_ctx_free(ctx);
}

/* A builder can say where a constraint's tile is written; errors about
 * the tile point there, else at the constraint. */
static void constraint_tile_location(void) {
  for (int given = 0; given < 2; given++) {
    wavec_ctx *ctx = wavec_ctx_new(NULL, NULL);
    wavec_loc here = {"b.c", 30, 9}, tile_at = {"b.c", 30, 22};
    wavec_sym M = wavec_symbol(ctx, "M");
    CHECK(wavec_define_int(ctx, "M", 64) == WAVEC_OK);
    wavec_kernel *k = wavec_kernel_begin(ctx, "k", here);
    /* before any constraint: nothing to locate */
    CHECK(wavec_constraint_tile_loc(k, here) == WAVEC_ERR_INVALID);
    wavec_ctx_free(ctx);
    ctx = wavec_ctx_new(NULL, NULL);
    M = wavec_symbol(ctx, "M");
    CHECK(wavec_define_int(ctx, "M", 64) == WAVEC_OK);
    k = wavec_kernel_begin(ctx, "k", here);
    wavec_value a = wavec_arg(k, "a", 1, &M, WAVEC_F32, 0, here);
    wavec_value b = wavec_arg(k, "b", 1, &M, WAVEC_F32, 0, here);
    CHECK(wavec_write(k, wavec_read(k, a, 0, 0, here), b, 0, 0, here) != 0);
    CHECK(wavec_workgroup(k, M, wavec_expr_int(k, 0), 0, here) == WAVEC_OK);
    if (given)
      CHECK(wavec_constraint_tile_loc(k, tile_at) == WAVEC_OK);
    CHECK(wavec_kernel_end(k) == WAVEC_OK);
    CHECK(wavec_compile(k, NULL) != WAVEC_OK);
    const char *msg = wavec_errmsg(ctx);
    const char *want = given ? "b.c:30:22: error[E0406]: workgroup tile of "
                               "'M' is 0"
                             : "b.c:30:9: error[E0406]: workgroup tile of "
                               "'M' is 0";
    CHECKF(strncmp(msg, want, strlen(want)) == 0,
           "got: %s", msg);
    wavec_ctx_free(ctx);
  }
}

static void invalid_handles(void) {
  wavec_ctx *ctx = wavec_ctx_new(NULL, NULL);
  wavec_loc here = {0};
  wavec_kernel *k = wavec_kernel_begin(ctx, "k", here);
  CHECK(wavec_unary(k, WAVEC_OP_EXP2, 12345, here) == 0);
  CHECK(wavec_errcode(ctx) == WAVEC_ERR_INVALID);
  wavec_ctx_free(ctx);
  CHECK(wavec_kernel_end(NULL) == WAVEC_ERR_INVALID);
  CHECK(wavec_compile(NULL, NULL) == WAVEC_ERR_INVALID);
}

static void contexts_are_independent(void) {
  wavec_ctx *a = wavec_ctx_new(NULL, NULL), *b = wavec_ctx_new(NULL, NULL);
  const char *bad = "kernel k( {";
  CHECK(wavec_parse(a, "a.wave", bad, strlen(bad)) == WAVEC_ERR_SYNTAX);
  CHECK(wavec_errcode(b) == WAVEC_OK);
  CHECK(strcmp(wavec_errmsg(b), "") == 0);
  wavec_ctx_free(a);
  wavec_ctx_free(b);
}

/* Fails the n-th allocation for every n until parsing and compiling the
 * example succeeds: each run must end in NOMEM (or success), and free every
 * block. */
/* A definition no kernel has a symbol for is reported (a misspelling);
 * the others are not. */
static void unused_defines(void) {
  wavec_ctx *ctx = wavec_ctx_new(NULL, NULL);
  CHECK(wavec_define_int(ctx, "M", 64) == WAVEC_OK);
  CHECK(wavec_define_int(ctx, "BLOK_M", 32) == WAVEC_OK);
  CHECK(wavec_define_float(ctx, "SCALE", 0.5) == WAVEC_OK);
  size_t len;
  char *src = slurp("examples/gemm.wave", &len);
  CHECK(wavec_parse(ctx, "gemm.wave", src, len) == WAVEC_OK);
  free(src);
  const char *u0 = wavec_unused_define(ctx, 0), *u1 = wavec_unused_define(ctx, 1);
  CHECKF(u0 && !strcmp(u0, "BLOK_M"), "first unused: %s", u0 ? u0 : "none");
  CHECKF(u1 && !strcmp(u1, "SCALE"), "second unused: %s", u1 ? u1 : "none");
  CHECK(wavec_unused_define(ctx, 2) == NULL);
  wavec_ctx_free(ctx);
}

/* wavec_hardware_key lists every key wavec_hardware_override takes, then
 * NULL. */
static void hardware_keys(void) {
  size_t n = 0;
  while (wavec_hardware_key(n))
    n++;
  CHECKF(n == 2 + WAVEC_HW_INT_COUNT, "%zu keys", n);
  CHECK(!strcmp(wavec_hardware_key(0), "threads_per_wave") &&
        !strcmp(wavec_hardware_key(1), "mma"));
  wavec_ctx *ctx = wavec_ctx_new(NULL, NULL);
  for (size_t i = 2; i < n; i++)
    CHECKF(wavec_hardware_override(ctx, wavec_hardware_key(i), "1") ==
               WAVEC_OK,
           "key %s", wavec_hardware_key(i));
  wavec_ctx_free(ctx);
}

/* An allocator that tracks the bytes held (the peak too) and refuses any
 * allocation past a budget. */
typedef struct budget {
  size_t held, peak, limit;
} budget;

static void *budget_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
  budget *b = ud;
  if (nsize == 0) {
    b->held -= ptr ? osize : 0;
    free(ptr);
    return NULL;
  }
  if (b->limit && b->held - osize + nsize > b->limit)
    return NULL;
  void *p = realloc(ptr, nsize);
  if (p) {
    b->held = b->held - osize + nsize;
    b->peak = b->held > b->peak ? b->held : b->peak;
  }
  return p;
}

/* One statement of n elementwise ops on a [N] f32 value, one element per
 * lane, and a name for it. */
static char *chain_kernel(int n) {
  static const char head[] =
      "kernel ew(a: Memory[N, f32], c: Memory[N, f32]) {\n"
      "    constraints {\n"
      "        workgroup(N, 32, 0)\n"
      "        wave(N, 32)\n"
      "        hardware(threads_per_wave = 32)\n"
      "    }\n"
      "    defaults { N = 64 }\n"
      "    x = read(a)\n"
      "    write(x";
  char *src = malloc(sizeof head + 4 * (size_t)n + 16);
  char *p = src + sprintf(src, "%s", head);
  for (int i = 0; i < n; i++)
    p += sprintf(p, " + x");
  sprintf(p, ", c)\n}\n");
  return src;
}

/* Running out of memory is an error at the place being compiled, with
 * what was held and asked for; not a bare "out of memory". */
static void out_of_memory_is_located(void) {
  char *src = chain_kernel(3000);
  budget b = {0, 0, 0};
  wavec_ctx *ctx = wavec_ctx_new(budget_alloc, &b);
  CHECK(wavec_parse(ctx, "chain.wave", src, strlen(src)) == WAVEC_OK);
  b.limit = b.held + (256u << 10); /* 256 KiB more: the passes run out */
  CHECK(wavec_compile(wavec_kernel_get(ctx, 0), NULL) == WAVEC_ERR_NOMEM);
  const char *msg = wavec_errmsg(ctx);
  CHECKF(strncmp(msg, "chain.wave:", 11) == 0 &&
             strstr(msg, ": error[E0902]: out of memory: ") &&
             strstr(msg, " MiB held, ") && strstr(msg, "\n    9 | ") &&
             strstr(msg, "+ x + x + x ...\n") && strstr(msg, "^\n"),
         "got: %.300s", msg);
  wavec_ctx_free(ctx);
  CHECK(b.held == 0);
  free(src);
}

/* What a long chain of elementwise ops costs: the most memory held while
 * compiling, per op (was 3.1 KB with every grown array and replaced graph
 * kept until the context was freed; now about 1 KB). */
static void memory_per_op(void) {
  enum { OPS = 20000 };
  char *src = chain_kernel(OPS);
  budget b = {0, 0, 0};
  wavec_ctx *ctx = wavec_ctx_new(budget_alloc, &b);
  CHECK(wavec_parse(ctx, "chain.wave", src, strlen(src)) == WAVEC_OK);
  CHECK(wavec_compile(wavec_kernel_get(ctx, 0), NULL) == WAVEC_OK);
  double per_op = (double)b.peak / OPS;
  printf("  peak %.1f MB for %d ops: %.0f bytes per op\n", b.peak / 1e6, OPS,
         per_op);
  CHECKF(per_op < 1500, "%.0f bytes per op", per_op);
  wavec_ctx_free(ctx);
  free(src);
}

static void allocation_failures(void) {
  size_t len;
  char *src = slurp("examples/attention_bwd_dkdv.wave", &len);
  CHECK(src != NULL);
  if (!src)
    return;
  int succeeded = 0;
  long n;
  for (n = 0; n < 100000 && !succeeded; n++) {
    failing f = {n, 0};
    wavec_ctx *ctx = wavec_ctx_new(failing_alloc, &f);
    if (!ctx) {
      CHECK(f.live == 0);
      continue;
    }
    wavec_status st = wavec_define_int(ctx, "B", 2);
    const char *syms[] = {"M", "N", "K1", "K2"};
    for (int i = 0; i < 4 && st == WAVEC_OK; i++)
      st = wavec_define_int(ctx, syms[i], 32);
    if (st == WAVEC_OK)
      st = wavec_parse(ctx, "x.wave", src, len);
    for (size_t i = 0; st == WAVEC_OK && i < wavec_kernel_count(ctx); i++)
      st = wavec_compile(wavec_kernel_get(ctx, i), NULL);
    CHECKF(st == WAVEC_OK || st == WAVEC_ERR_NOMEM, "n=%ld st=%s msg=%s", n,
           wavec_status_string(st), wavec_errmsg(ctx));
    (void)wavec_errmsg(ctx); /* must not crash with memory exhausted */
    succeeded = st == WAVEC_OK;
    wavec_ctx_free(ctx);
    CHECKF(f.live == 0, "n=%ld: %ld blocks leaked", n, f.live);
  }
  CHECK(succeeded);
  printf("  allocation failure points tried: %ld\n", n);
  free(src);
}

/* Pass values are pinned (a program may store them); the pipeline order is
 * wavec_pass_at's, each pass has a name that looks it up and a contract. */
static void passes(void) {
  static const struct {
    wavec_pass p;
    int value;
    const char *name;
  } pinned[] = {{WAVEC_PASS_CHECK, 0, "check"},
                {WAVEC_PASS_BIND, 1, "bind"},
                {WAVEC_PASS_CONSTRAINTS, 2, "constraints"},
                {WAVEC_PASS_INDEX, 3, "index"},
                {WAVEC_PASS_BROADCAST, 4, "broadcast"},
                {WAVEC_PASS_EXPAND, 5, "expand"},
                {WAVEC_PASS_LOWER, 6, "lower"},
                {WAVEC_PASS_WAITS, 7, "waits"},
                {WAVEC_PASS_PROMOTE, 8, "promote"},
                {WAVEC_PASS_PIPELINE, 9, "pipeline"},
                {WAVEC_PASS_WALKS, 10, "walks"},
                {WAVEC_PASS_MASKSPLIT, 11, "masksplit"},
                {WAVEC_PASS_SCHEDULE, 12, "schedule"},
                {WAVEC_PASS_TURNS, 13, "turns"},
                {WAVEC_PASS_OVERLAP, 14, "overlap"},
                {WAVEC_PASS_AHEAD, 18, "ahead"}};
  for (size_t i = 0; i < sizeof pinned / sizeof *pinned; i++) {
    CHECKF((int)pinned[i].p == pinned[i].value, "%s is %d, pinned %d",
           pinned[i].name, (int)pinned[i].p, pinned[i].value);
    CHECK(strcmp(wavec_pass_name(pinned[i].p), pinned[i].name) == 0);
    CHECK(wavec_pass_lookup(pinned[i].name) == pinned[i].value);
  }
  /* every pass once in the pipeline, each with a contract; bits of
   * wavec_options.print_after */
  size_t n = 0;
  unsigned seen = 0;
  for (int p; (p = wavec_pass_at(n)) >= 0; n++) {
    CHECKF(p < WAVEC_PASS_COUNT && p < 32, "pass %d out of range", p);
    CHECKF(!(seen >> p & 1u), "pass %d twice in the pipeline", p);
    seen |= 1u << p;
    CHECK(*wavec_pass_about((wavec_pass)p) != 0);
  }
  CHECKF(n == WAVEC_PASS_COUNT, "%zu passes in the pipeline, %d values", n,
         (int)WAVEC_PASS_COUNT);
  CHECK(wavec_pass_at(0) == WAVEC_PASS_CHECK);
  CHECK(wavec_pass_lookup("nope") == -1);
  CHECK(strcmp(wavec_pass_name((wavec_pass)99), "?") == 0);
  CHECK(*wavec_pass_about((wavec_pass)99) == 0);
}

/* wavec_simulate refuses an output that shares memory with another
 * argument (the same buffer, or one that overlaps it by a byte), with both
 * names; inputs may share, and buffers that only touch are apart. */
static void overlapping_arguments(void) {
  static const char src[] =
      "kernel shift(x: Memory[N, f32], y: Memory[N, f32], z: Memory[N, f32]) "
      "{\n"
      "    constraints { workgroup(N, 32, 0)\n"
      "                  wave(N, 32)\n"
      "                  hardware(threads_per_wave = 32) }\n"
      "    write(read(x) + read(y), z)\n"
      "}\n";
  wavec_ctx *ctx = wavec_ctx_new(NULL, NULL);
  wavec_define_int(ctx, "N", 64);
  CHECK(wavec_parse(ctx, "shift.wave", src, sizeof src - 1) == WAVEC_OK);
  wavec_kernel *k = wavec_kernel_get(ctx, 0);
  CHECK(k && wavec_compile(k, NULL) == WAVEC_OK);
  float buf[64 * 3] = {0};
  static const int at[][3] = {{0, 0, 64}, {0, 64, 64}, {0, 64, 127}, {0, 64, 128}};
  static const bool ok[] = {true, false, false, true};
  for (size_t i = 0; k && i < sizeof at / sizeof *at; i++) {
    void *args[3] = {buf + at[i][0], buf + at[i][1], buf + at[i][2]};
    wavec_status st = wavec_simulate(k, args);
    CHECKF((st == WAVEC_OK) == ok[i], "row %zu: status %d", i, (int)st);
    CHECKF(ok[i] || (st == WAVEC_ERR_INVALID &&
                      strstr(wavec_errmsg(ctx), "arguments 'y' and 'z' share "
                                                "memory, and the kernel "
                                                "writes 'z'")),
           "row %zu: %s", i, wavec_errmsg(ctx));
    if (st != WAVEC_OK) { /* the context keeps its first error */
      wavec_ctx_free(ctx);
      ctx = wavec_ctx_new(NULL, NULL);
      wavec_define_int(ctx, "N", 64);
      CHECK(wavec_parse(ctx, "shift.wave", src, sizeof src - 1) == WAVEC_OK);
      k = wavec_kernel_get(ctx, 0);
      CHECK(k && wavec_compile(k, NULL) == WAVEC_OK);
    }
  }
  wavec_ctx_free(ctx);
}

/* wavec_parse_kernel: the kernel named alone, with an error in another
 * kernel of the source (which wavec_parse reports); NULL parses all; a
 * name the source lacks parses to no kernel. */
static void parse_one_kernel(void) {
  static const char src[] =
      "kernel bad(x: Memory[N, f32], y: Memory[N, i32]) {\n"
      "    constraints { workgroup(N, 32, 0)\n wave(N, 32)\n"
      "                  hardware(threads_per_wave = 32) }\n"
      "    write(read(x), y)\n"
      "}\n"
      "kernel copy(x: Memory[N, f32], y: Memory[N, f32]) {\n"
      "    constraints { workgroup(N, 32, 0)\n wave(N, 32)\n"
      "                  hardware(threads_per_wave = 32) }\n"
      "    write(read(x), y)\n"
      "}\n";
  static const struct {
    const char *only;
    wavec_status st;
    size_t kernels;
  } rows[] = {{"copy", WAVEC_OK, 1}, {NULL, WAVEC_ERR_TYPE, 0},
              {"bad", WAVEC_ERR_TYPE, 0}, {"nope", WAVEC_OK, 0}};
  for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
    wavec_ctx *ctx = wavec_ctx_new(NULL, NULL);
    wavec_status st =
        wavec_parse_kernel(ctx, "two.wave", src, sizeof src - 1, rows[i].only);
    CHECKF(st == rows[i].st, "row %zu: status %d: %s", i, (int)st,
           wavec_errmsg(ctx));
    CHECKF(st != WAVEC_OK || wavec_kernel_count(ctx) == rows[i].kernels,
           "row %zu: %zu kernels", i, wavec_kernel_count(ctx));
    if (st == WAVEC_OK && rows[i].kernels) {
      wavec_define_int(ctx, "N", 64);
      CHECKF(wavec_compile(wavec_kernel_get(ctx, 0), NULL) == WAVEC_OK,
             "row %zu: %s", i, wavec_errmsg(ctx));
    }
    wavec_ctx_free(ctx);
  }
}

int main(void) {
  RUN(passes);
  RUN(parse_one_kernel);
  RUN(overlapping_arguments);
  RUN(constraint_tile_location);
  RUN(status_strings);
  RUN(error_has_location_and_caret);
  RUN(hardware_keys);
  RUN(builder_errors_propagate);
  RUN(invalid_handles);
  RUN(contexts_are_independent);
  RUN(unused_defines);
  RUN(allocation_failures);
  RUN(out_of_memory_is_located);
  RUN(memory_per_op);
  CHECK_EXIT();
}
