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

/* Every function of wavec.h given NULL where it needs a pointer: no crash.
 * Without a context, a status function gives WAVEC_ERR_INVALID, a builder
 * call 0 and a query 0, NULL or "". */
static void null_without_context(void) {
  wavec_loc L = {0};
  const char *msg = wavec_errmsg(NULL);
  CHECKF(msg && strstr(msg, "no context"), "errmsg(NULL): %s", msg);
  CHECK(wavec_errcode(NULL) == WAVEC_ERR_INVALID);
  CHECK(wavec_diag_count(NULL) == 0);
  wavec_diag_info d;
  CHECK(wavec_diag(NULL, 0, &d) == WAVEC_ERR_INVALID);
  CHECK(wavec_define_int(NULL, "M", 1) == WAVEC_ERR_INVALID);
  CHECK(wavec_define_float(NULL, "M", 1.0) == WAVEC_ERR_INVALID);
  CHECK(wavec_unused_define(NULL, 0) == NULL);
  CHECK(wavec_hardware_override(NULL, "stages", "2") == WAVEC_ERR_INVALID);
  CHECK(wavec_kernel_begin(NULL, "k", L) == NULL);
  CHECK(wavec_kernel_count(NULL) == 0);
  CHECK(wavec_kernel_get(NULL, 0) == NULL);
  CHECK(wavec_kernel_find(NULL, "k") == NULL);
  CHECK(wavec_symbol(NULL, "M") == 0);
  CHECK(strcmp(wavec_symbol_name(NULL, 1), "?") == 0);
  CHECK(wavec_parse(NULL, "f", "x", 1) == WAVEC_ERR_INVALID);
  CHECK(wavec_pass_lookup(NULL) == -1);
  CHECK(wavec_time_count(NULL) == 0);
  const char *name;
  uint64_t ns;
  CHECK(wavec_time_get(NULL, 0, &name, &ns) == WAVEC_ERR_INVALID);
  CHECK(wavec_test_hook(NULL, "expand-lookup") == WAVEC_ERR_INVALID);
  const char *out = "x";
  CHECK(wavec_layout_render(NULL, "F32_16x8x16_F16", "acc", 0, 0, &out) ==
            WAVEC_ERR_INVALID && out == NULL);
  wavec_module *mod = NULL;
  CHECK(wavec_gpu_load(NULL, NULL, "sm_80", 0, &mod) == WAVEC_ERR_INVALID);
  CHECK(wavec_cache_dir(NULL) == NULL);
  const wavec_cache_entry *es;
  size_t n;
  CHECK(wavec_cache_list(NULL, &es, &n) == WAVEC_ERR_INVALID);
  CHECK(wavec_cache_clear(NULL, &n) == WAVEC_ERR_INVALID);
  /* a NULL kernel */
  CHECK(wavec_kernel_end(NULL) == WAVEC_ERR_INVALID);
  CHECK(wavec_kernel_ctx(NULL) == NULL);
  CHECK(strcmp(wavec_kernel_name(NULL), "") == 0);
  CHECK(wavec_expr_int(NULL, 1) == 0 && wavec_expr_sym(NULL, 1) == 0);
  CHECK(wavec_arg(NULL, "a", 0, NULL, WAVEC_F32, 0, L) == 0);
  CHECK(wavec_dim_loc(NULL, 1, L) == WAVEC_ERR_INVALID);
  CHECK(wavec_workgroup(NULL, 1, 1, 0, L) == WAVEC_ERR_INVALID);
  CHECK(wavec_wave(NULL, 1, 1, L) == WAVEC_ERR_INVALID);
  CHECK(wavec_tiling(NULL, 1, 1, L) == WAVEC_ERR_INVALID);
  CHECK(wavec_dynamic(NULL, 1, 0, L) == WAVEC_ERR_INVALID);
  CHECK(wavec_constraint_tile_loc(NULL, L) == WAVEC_ERR_INVALID);
  CHECK(wavec_threads_per_wave(NULL, 1, L) == WAVEC_ERR_INVALID);
  CHECK(wavec_hardware_mma(NULL, WAVEC_MMA_F32_16x8x16_F16, L) ==
        WAVEC_ERR_INVALID);
  CHECK(wavec_hardware_int(NULL, WAVEC_HW_STAGES, 1, L) == WAVEC_ERR_INVALID);
  CHECK(wavec_vector_shape(NULL, 1, 1, L) == WAVEC_ERR_INVALID);
  CHECK(wavec_default_int(NULL, 1, 1, L) == WAVEC_ERR_INVALID);
  CHECK(wavec_default_float(NULL, 1, 1.0, L) == WAVEC_ERR_INVALID);
  CHECK(wavec_default_expr(NULL, 1, 1, L) == WAVEC_ERR_INVALID);
  CHECK(wavec_mapping_begin(NULL, "m", L) == 0);
  CHECK(wavec_mapping_iter(NULL, 1, "i", L) == 0);
  CHECK(wavec_mapping_input(NULL, 1, 1, 1, L) == WAVEC_ERR_INVALID);
  CHECK(wavec_mapping_output(NULL, 1, 1, 1, L) == WAVEC_ERR_INVALID);
  CHECK(wavec_mapping_end(NULL, 1, L) == WAVEC_ERR_INVALID);
  CHECK(wavec_loop_begin(NULL, 1, 0, NULL, L) == 0);
  CHECK(wavec_loop_bound(NULL, 1, WAVEC_REL_LE, 1, L) == WAVEC_ERR_INVALID);
  CHECK(wavec_loop_yield(NULL, 1, 0, NULL, L) == WAVEC_ERR_INVALID);
  wavec_value_name(NULL, 1, "v");
  CHECK(wavec_compile(NULL, NULL) == WAVEC_ERR_INVALID);
  CHECK(strcmp(wavec_kernel_dump(NULL), "") == 0);
  CHECK(wavec_arg_count(NULL) == 0);
  int64_t shape[1] = {32};
  CHECK(wavec_arg_shape(NULL, 0, 1, shape) == WAVEC_ERR_INVALID);
  CHECK(wavec_arg_dim_is_dynamic(NULL, 0, 0) == 0);
  CHECK(wavec_arg_dim_name(NULL, 0, 0) == NULL);
  wavec_arg_info ai;
  CHECK(wavec_arg_info_get(NULL, 0, &ai) == WAVEC_ERR_INVALID);
  CHECK(wavec_arg_keep(NULL, 0, 1) == WAVEC_ERR_INVALID);
  CHECK(wavec_simulate(NULL, NULL) == WAVEC_ERR_INVALID);
  CHECK(wavec_remark_count(NULL) == 0 && wavec_remark(NULL, 0) == NULL);
  CHECK(wavec_layout_render_node(NULL, "x", 0, &out) == WAVEC_ERR_INVALID);
  const char *ptx;
  CHECK(wavec_emit_ptx(NULL, "sm_80", &ptx, NULL) == WAVEC_ERR_INVALID);
  uint32_t grid[3] = {1, 1, 1}, block[3] = {1, 1, 1};
  size_t smem = 1;
  CHECK(wavec_launch_dims(NULL, grid, block, &smem) == WAVEC_ERR_INVALID);
  CHECK(wavec_tensor_map_count(NULL) == 0);
  wavec_tensor_map_info tm;
  CHECK(wavec_tensor_map_info_get(NULL, 0, &tm) == -1);
  CHECK(wavec_gpu_run(NULL, NULL, NULL) == WAVEC_ERR_INVALID);
  const char *c, *h;
  CHECK(wavec_emit_c(NULL, "sm_80", 0, "h.h", &c, &h, NULL) ==
        WAVEC_ERR_INVALID);
  /* a NULL module */
  CHECK(strcmp(wavec_module_kernel(NULL), "") == 0);
  CHECK(strcmp(wavec_module_target(NULL), "") == 0);
  CHECK(wavec_module_cached(NULL) == 0 && wavec_module_arg_count(NULL) == 0);
  wavec_module_launch_dims(NULL, grid, block, &smem);
  CHECK(grid[0] == 0 && block[0] == 0 && smem == 0);
  CHECK(wavec_module_arg(NULL, 0, &ai) == -1);
  CHECK(wavec_module_arg_shape(NULL, 0, 1, shape) == WAVEC_ERR_INVALID);
  CHECK(wavec_module_dim_name(NULL, 0, 0) == NULL);
  size_t len = 1;
  CHECK(wavec_module_code(NULL, &len) == NULL && len == 0);
  uint64_t dev[1] = {0};
  CHECK(wavec_module_launch(NULL, NULL, dev) == WAVEC_ERR_INVALID);
}

/* A compiled one-argument-in, one-out copy kernel in a new context. */
static wavec_kernel *compiled_copy(wavec_ctx *ctx) {
  static const char src[] =
      "kernel copy(x: Memory[N, f32], y: Memory[N, f32]) {\n"
      "    constraints { workgroup(N, 32, 0)\n wave(N, 32)\n"
      "                  hardware(threads_per_wave = 32) }\n"
      "    write(read(x), y)\n"
      "}\n";
  wavec_define_int(ctx, "N", 32);
  if (wavec_parse(ctx, "copy.wave", src, sizeof src - 1) != WAVEC_OK)
    return NULL;
  wavec_kernel *k = wavec_kernel_get(ctx, 0);
  return wavec_compile(k, NULL) == WAVEC_OK ? k : NULL;
}

/* Case i of null_with_context: a call with a NULL pointer where it needs
 * one, on ctx (k: a kernel being built, with argument x[M]; or compiled
 * when `compiled`), as a status (a 0 handle: WAVEC_ERR_INVALID). */
#define NULL_CASES 30
static wavec_status null_call(int i, wavec_ctx *ctx, wavec_kernel *k,
                              wavec_sym M, wavec_value x) {
  wavec_loc L = {"n.c", 1, 1};
  uint64_t ns;
  size_t n;
  const char *c, *h;
  float buf[32] = {0};
  void *half[2] = {buf, NULL};
  wavec_value r = 0;
  if (i == 15 || i == 16 || i == 18)
    r = wavec_read(k, x, 0, 0, L);
#define H(e) ((e) ? WAVEC_OK : WAVEC_ERR_INVALID)
  switch (i) {
  case 0: return wavec_define_int(ctx, NULL, 5);
  case 1: return wavec_define_float(ctx, NULL, 0.5);
  case 2: return wavec_hardware_override(ctx, "stages", NULL);
  case 3: return wavec_hardware_override(ctx, NULL, "1");
  case 4: return H(wavec_symbol(ctx, NULL));
  case 5: return wavec_diag(ctx, 0, NULL);
  case 6: return wavec_time_get(ctx, 0, NULL, &ns);
  case 7: return wavec_test_hook(ctx, NULL);
  case 8: return wavec_layout_render(ctx, "F32_16x8x16_F16", "acc", 0, 0, NULL);
  case 9: return wavec_gpu_load(ctx, NULL, "sm_80", 0, NULL);
  case 10: return wavec_cache_list(ctx, NULL, &n);
  case 11: return H(wavec_kernel_begin(ctx, NULL, L));
  case 12: return H(wavec_arg(k, "z", 2, NULL, WAVEC_F32, 0, L));
  case 13: return H(wavec_arg(k, NULL, 1, &M, WAVEC_F32, 0, L));
  case 14: return H(wavec_register(k, 1, NULL, WAVEC_F32,
                                   wavec_scalar(k, 0.0, L), L));
  case 15: return H(wavec_permute(k, r, 1, NULL, L));
  case 16: return H(wavec_broadcast(k, r, 1, NULL, L));
  case 17: return H(wavec_loop_begin(k, M, 1, NULL, L));
  case 18: {
    wavec_loop l = wavec_loop_begin(k, M, 1, &r, L);
    return l ? wavec_loop_yield(k, l, 1, NULL, L) : WAVEC_ERR_INTERNAL;
  }
  case 19: return H(wavec_mapping_begin(k, NULL, L));
  case 20: return H(wavec_mapping_iter(k, wavec_mapping_begin(k, "m", L),
                                       NULL, L));
  case 21: return wavec_simulate(k, NULL);
  case 22: return wavec_simulate(k, half);
  case 23: return wavec_arg_info_get(k, 0, NULL);
  case 24: return wavec_arg_shape(k, 0, 1, NULL);
  case 25: return wavec_emit_ptx(k, "sm_80", NULL, NULL);
  case 26: return wavec_emit_c(k, "sm_80", 0, NULL, &c, &h, NULL);
  case 27: return wavec_emit_c(k, "sm_80", 0, "h.h", NULL, &h, NULL);
  case 28: return wavec_layout_render_node(k, "x", 0, NULL);
  case 29: return wavec_gpu_run(k, NULL, NULL);
  }
#undef H
  return WAVEC_ERR_INTERNAL;
}

/* With a context, each NULL is refused with WAVEC_ERR_INVALID and a
 * diagnostic in the context that says what was NULL. */
static void null_with_context(void) {
  for (int i = 0; i < NULL_CASES; i++) {
    wavec_ctx *ctx = wavec_ctx_new(NULL, NULL);
    wavec_loc L = {"n.c", 1, 1};
    wavec_sym M = wavec_symbol(ctx, "M");
    wavec_kernel *k = NULL;
    wavec_value x = 0;
    if (i >= 21) {
      k = compiled_copy(ctx);
      CHECKF(k, "case %d: %s", i, wavec_errmsg(ctx));
    } else {
      k = wavec_kernel_begin(ctx, "k", L);
      x = wavec_arg(k, "x", 1, &M, WAVEC_F32, 0, L);
    }
    if (!k) {
      wavec_ctx_free(ctx);
      continue;
    }
    wavec_status st = null_call(i, ctx, k, M, x);
    const char *msg = wavec_errmsg(ctx);
    CHECKF(st == WAVEC_ERR_INVALID && wavec_errcode(ctx) == WAVEC_ERR_INVALID,
           "case %d: status %d, errcode %d: %s", i, (int)st,
           (int)wavec_errcode(ctx), msg);
    CHECKF(wavec_diag_count(ctx) == 1 && strstr(msg, "error[E0901]") &&
               strstr(msg, "NULL"),
           "case %d: %zu diagnostics: %s", i, wavec_diag_count(ctx), msg);
    wavec_ctx_free(ctx);
  }
  /* a query with a NULL name finds nothing and records nothing */
  wavec_ctx *ctx = wavec_ctx_new(NULL, NULL);
  wavec_kernel_begin(ctx, "k", (wavec_loc){0});
  CHECK(wavec_kernel_find(ctx, NULL) == NULL);
  CHECK(wavec_errcode(ctx) == WAVEC_OK);
  wavec_ctx_free(ctx);
}

/* A refused hardware override says what is wrong and what is valid. */
static void hardware_override_diagnostics(void) {
  static const struct {
    const char *key, *value, *want[2];
  } rows[] = {
      {"stages", "9", {"hardware entry stages takes an integer from 1 to 8, "
                       "not '9'", NULL}},
      {"stages", "2x", {"stages takes an integer from 1 to 8, not '2x'"}},
      {"stages", "", {"stages takes an integer from 1 to 8, not ''"}},
      {"mma", "NOPE", {"mma takes an mma type, not 'NOPE'; the types are "
                       "F32_16x8x16_F16, F32_16x8x16_BF16,",
                       "S32_16x8x32_S8"}},
      {"nope", "1", {"unknown hardware entry 'nope'; the entries are "
                     "threads_per_wave (32, 64 or 128), mma (an mma type), "
                     "stages (1 to 8), workgroups_per_sm (1 to 32),",
                     "mma_ahead (0 to 2)"}},
      {"threads_per_wave", "48", {"threads_per_wave takes 32, 64 or 128 (a "
                                  "warpgroup, for wgmma), not '48'"}},
  };
  for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
    wavec_ctx *ctx = wavec_ctx_new(NULL, NULL);
    CHECK(wavec_hardware_override(ctx, rows[i].key, rows[i].value) ==
          WAVEC_ERR_INVALID);
    CHECK(wavec_errcode(ctx) == WAVEC_ERR_INVALID);
    wavec_diag_info d = {.message = ""};
    CHECKF(wavec_diag_count(ctx) == 1 && wavec_diag(ctx, 0, &d) == WAVEC_OK,
           "%s=%s: %zu diagnostics", rows[i].key, rows[i].value,
           wavec_diag_count(ctx));
    CHECKF(d.code == 410 && d.status == WAVEC_ERR_INVALID, "%s=%s: E%04d",
           rows[i].key, rows[i].value, d.code);
    for (int w = 0; w < 2 && rows[i].want[w]; w++)
      CHECKF(strstr(d.message, rows[i].want[w]), "%s=%s: %s", rows[i].key,
             rows[i].value, d.message);
    CHECKF(strstr(wavec_errmsg(ctx), "error[E0410]: "), "%s",
           wavec_errmsg(ctx));
    wavec_ctx_free(ctx);
  }
}

/* Kernel, argument and dynamic dim names reach the PTX and the C launcher:
 * the builder takes identifiers only. */
static void builder_names(void) {
  static const char *const bad[] = {NULL, "", "a b", "1k", "k-1", "k*/"};
  wavec_loc L = {"n.c", 3, 1};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    const char *shown = bad[i] ? bad[i] : "NULL";
    for (int what = 0; what < 3; what++) {
      wavec_ctx *ctx = wavec_ctx_new(NULL, NULL);
      wavec_sym M = wavec_symbol(ctx, "M");
      wavec_kernel *k = wavec_kernel_begin(ctx, what == 0 ? bad[i] : "k", L);
      wavec_status st = k ? WAVEC_OK : WAVEC_ERR_INVALID;
      if (what == 1)
        st = wavec_arg(k, bad[i], 1, &M, WAVEC_F32, 0, L) ? WAVEC_OK
                                                          : WAVEC_ERR_INVALID;
      if (what == 2 && bad[i]) {
        wavec_sym D = wavec_symbol(ctx, bad[i]);
        CHECK(wavec_arg(k, "x", 1, &D, WAVEC_F32, 0, L) != 0);
        st = wavec_dynamic(k, D, 0, L);
      }
      if (what == 2 && !bad[i]) {
        wavec_ctx_free(ctx);
        continue;
      }
      const char *msg = wavec_errmsg(ctx);
      CHECKF(st == WAVEC_ERR_INVALID &&
                 wavec_errcode(ctx) == WAVEC_ERR_INVALID,
             "%d '%s': status %d", what, shown, (int)st);
      CHECKF(strstr(msg, bad[i] ? "is not an identifier" : "name is NULL"),
             "%d '%s': %s", what, shown, msg);
      wavec_ctx_free(ctx);
    }
  }
  /* identifiers pass */
  wavec_ctx *ctx = wavec_ctx_new(NULL, NULL);
  wavec_sym M = wavec_symbol(ctx, "_M1");
  wavec_kernel *k = wavec_kernel_begin(ctx, "_k9", L);
  CHECK(wavec_arg(k, "Arg_2", 1, &M, WAVEC_F32, 0, L) != 0);
  CHECK(wavec_dynamic(k, M, 0, L) == WAVEC_OK);
  CHECKF(wavec_errcode(ctx) == WAVEC_OK, "%s", wavec_errmsg(ctx));
  wavec_ctx_free(ctx);
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
  RUN(null_without_context);
  RUN(null_with_context);
  RUN(hardware_override_diagnostics);
  RUN(builder_names);
  CHECK_EXIT();
}
