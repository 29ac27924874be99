/* defaults { } entries that are integer expressions of sizes and other
 * hyperparameters (`T = 16 * min(N // 64, 2)`), through the parser and
 * the builder API (wavec_default_expr):
 *  - each is evaluated once its symbols have values, in any order of
 *    writing (U = T + 16 before T), and the tiles they give are the
 *    grid's (wavec_launch_dims);
 *  - a -D of the entry wins over it, and a -D of a symbol it uses changes
 *    it;
 *  - a literal default stays a literal (a float one too), and an entry is
 *    given once;
 *  - the refusals, at the entry's line: a cycle (both named), a dynamic
 *    size, a float hyperparameter, an unknown symbol;
 *  - examples/attention_fwd_wgmma.wave's tiles from the head dim and the
 *    key length: 128 x 128 under D = 80, 192 x 128 from 80 on, 128 x 64
 *    there under 2048 keys, 128 x 64 above D = 160 (each compiles: a
 *    warpgroup kernel that needs more shared memory than sm_90a gives is
 *    refused when it is compiled, wv_lower_refit). */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "wavec.h"

static const char SRC[] =
    "kernel copy2(x: Memory[M, N, f32], y: Memory[M, N, f32]) {\n"
    "    constraints {\n"
    "        workgroup(N, T, 0)\n"
    "        workgroup(M, U, 1)\n"
    "        wave(N, T)\n"
    "        wave(M, 1)\n"
    "        hardware(threads_per_wave = 32, vector_shapes = {M: 1})\n"
    "    }\n"
    "    defaults { U = T // 16 + 1, T = 32 * min(N // 64, 2), S = 0.5 }\n"
    "    write(read(x) * S, y)\n"
    "}\n";

/* Compiles SRC's kernel with the definitions, "NAME=V" each; the grid, or
 * the error message (NULL grid). */
static bool grid_of(const char *src, const char *const *defs, uint32_t g[3],
                    char *err, size_t nerr) {
  wavec_ctx *ctx = wavec_ctx_new(NULL, NULL);
  bool ok = true;
  for (size_t i = 0; defs && defs[i]; i++) {
    char name[32];
    const char *eq = strchr(defs[i], '=');
    snprintf(name, sizeof name, "%.*s", (int)(eq - defs[i]), defs[i]);
    ok &= wavec_define_int(ctx, name, atoll(eq + 1)) == WAVEC_OK;
  }
  ok = ok && wavec_parse(ctx, "defaults.wave", src, strlen(src)) == WAVEC_OK;
  wavec_kernel *k = ok ? wavec_kernel_get(ctx, 0) : NULL;
  ok = ok && wavec_compile(k, NULL) == WAVEC_OK;
  uint32_t b[3];
  ok = ok && wavec_launch_dims(k, g, b, NULL) == WAVEC_OK;
  snprintf(err, nerr, "%s", ok ? "" : wavec_errmsg(ctx));
  wavec_ctx_free(ctx);
  return ok;
}

static void evaluated_in_order(void) {
  static const struct {
    const char *defs[4];
    uint32_t gx, gy; /* ceil(N / T), ceil(M / U) */
  } cases[] = {
      /* N = 256: T = 64, U = 5; N = 64: T = 32, U = 3; N = 130: T = 64 */
      {{"M=10", "N=256", NULL}, 4, 2},
      {{"M=10", "N=64", NULL}, 2, 4},
      {{"M=10", "N=130", NULL}, 3, 2},
      /* -D T wins over its expression, and U follows it */
      {{"M=10", "N=256", "T=128"}, 2, 2},
      /* -D U wins; T is still N's */
      {{"M=10", "N=64", "U=10"}, 2, 1},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    uint32_t g[3];
    char err[512];
    bool ok = grid_of(SRC, cases[i].defs, g, err, sizeof err);
    CHECKF(ok, "case %zu: %s", i, err);
    CHECKF(!ok || (g[0] == cases[i].gx && g[1] == cases[i].gy),
           "case %zu: grid (%u, %u), want (%u, %u)", i, g[0], g[1], cases[i].gx,
           cases[i].gy);
  }
}

/* Each refusal, with its code, at the entry (line 9) and naming why. */
static void refusals(void) {
  static const struct {
    const char *from, *to, *defs[4], *code, *text;
  } cases[] = {
      {"U = T // 16 + 1",
       "U = T + V, V = U + 1",
       {"M=10", "N=64", NULL},
       "error[E",
       "depends, through '"},
      {"U = T // 16 + 1",
       "U = U + 1",
       {"M=10", "N=64", NULL},
       "error[E",
       "the default of 'U' depends on itself"},
      {"U = T // 16 + 1",
       "U = S * 2",
       {"M=10", "N=64", NULL},
       "error[E",
       "is a float but a default needs an integer"},
      {"U = T // 16 + 1",
       "U = W + 1",
       {"M=10", "N=64", NULL},
       "error[E",
       "'W' in a default has no value"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    char src[sizeof SRC + 64];
    const char *at = strstr(SRC, cases[i].from);
    snprintf(src, sizeof src, "%.*s%s%s", (int)(at - SRC), SRC, cases[i].to,
             at + strlen(cases[i].from));
    uint32_t g[3];
    char err[512];
    bool ok = grid_of(src, cases[i].defs, g, err, sizeof err);
    CHECKF(!ok && strstr(err, "defaults.wave:9:") &&
               strstr(err, cases[i].code) && strstr(err, cases[i].text),
           "case %zu: %s", i, ok ? "compiled" : err);
  }
  /* a run-time size has no value when the kernel is compiled */
  char src[sizeof SRC + 64];
  const char *at = strstr(SRC, "    constraints {\n") + 18;
  snprintf(src, sizeof src, "%.*s        dynamic(N)\n%s", (int)(at - SRC), SRC,
           at);
  uint32_t g[3];
  char err[512];
  const char *defs[] = {"M=10", NULL};
  bool ok = grid_of(src, defs, g, err, sizeof err);
  CHECKF(!ok && strstr(err, "'N' is dynamic") && strstr(err, ":10:"),
         "dynamic: %s", ok ? "compiled" : err);
}

/* A multiple_of naming an expression default takes its value; many
 * entries that all depend on each other are refused at once (the cycle
 * found in as many steps as there are entries); an expression default of
 * a run-time size is only its run-time default. */
static void orders_and_cycles(void) {
  char src[sizeof SRC + 512];
  const char *at = strstr(SRC, "    constraints {\n") + 18;
  snprintf(src, sizeof src, "%.*s        dynamic(N, multiple_of = V)\n%s",
           (int)(at - SRC), SRC, at);
  char *d = strstr(src, "S = 0.5 }");
  snprintf(d, sizeof src - (size_t)(d - src), "S = 0.5, V = T // 2 }%s",
           strstr(SRC, "S = 0.5 }") + 9);
  uint32_t g[3];
  char err[512];
  /* N at run time (64 its run-time default), T given: V = 16 */
  const char *defs[] = {"M=10", "N=64", "T=32", NULL};
  bool ok = grid_of(src, defs, g, err, sizeof err);
  CHECKF(ok && g[0] == 2, "multiple_of of a default: %s", ok ? "" : err);
  /* ten entries, each using all the others */
  char many[4096];
  int w = snprintf(many, sizeof many, "kernel k(x: Memory[N, f32], y: "
                                      "Memory[N, f32]) {\n"
                                      "    constraints { workgroup(N, X, 0)\n"
                                      "                  wave(N, X)\n"
                                      "                  hardware(threads_per_"
                                      "wave = 32) }\n    defaults { X = A0");
  for (int i = 0; i < 10; i++) {
    w += snprintf(many + w, sizeof many - (size_t)w, ", A%d = 1", i);
    for (int j = 0; j < 10; j++)
      if (j != i)
        w += snprintf(many + w, sizeof many - (size_t)w, " + A%d", j);
  }
  snprintf(many + w, sizeof many - (size_t)w,
           " }\n    write(read(x), y)\n}\n");
  const char *n64[] = {"N=64", NULL};
  ok = grid_of(many, n64, g, err, sizeof err);
  CHECKF(!ok && strstr(err, "depends, through 'A"), "many: %s",
         ok ? "compiled" : err);
}

/* The builder API: T = 32 * 2 folds to a literal; U = N // 8 is an
 * expression; both give the grid. */
static void builder(void) {
  wavec_ctx *ctx = wavec_ctx_new(NULL, NULL);
  CHECK(wavec_define_int(ctx, "M", 10) == WAVEC_OK);
  CHECK(wavec_define_int(ctx, "N", 256) == WAVEC_OK);
  char src[sizeof SRC];
  const char *at = strstr(SRC, "    defaults {");
  const char *end = strchr(at, '\n') + 1;
  snprintf(src, sizeof src, "%.*s    defaults { S = 0.5 }\n%s", (int)(at - SRC),
           SRC, end);
  CHECK(wavec_parse(ctx, "b.wave", src, strlen(src)) == WAVEC_OK);
  wavec_kernel *k = wavec_kernel_get(ctx, 0);
  wavec_loc loc = {"b.wave", 9, 5};
  wavec_sym T = wavec_symbol(ctx, "T"), U = wavec_symbol(ctx, "U"),
            N = wavec_symbol(ctx, "N");
  wavec_expr t = wavec_expr_binary(k, WAVEC_EXPR_MUL, wavec_expr_int(k, 32),
                                   wavec_expr_int(k, 2), loc);
  wavec_expr u = wavec_expr_binary(k, WAVEC_EXPR_FLOORDIV, wavec_expr_sym(k, N),
                                   wavec_expr_int(k, 8), loc);
  CHECK(wavec_default_expr(k, T, t, loc) == WAVEC_OK);
  CHECK(wavec_default_expr(k, U, u, loc) == WAVEC_OK);
  CHECKF(wavec_compile(k, NULL) == WAVEC_OK, "%s", wavec_errmsg(ctx));
  uint32_t g[3], b[3];
  CHECK(wavec_launch_dims(k, g, b, NULL) == WAVEC_OK);
  CHECKF(g[0] == 4 && g[1] == 1, "grid (%u, %u), want (4, 1)", g[0], g[1]);
  wavec_ctx_free(ctx);
  /* an entry given twice is refused, naming it */
  ctx = wavec_ctx_new(NULL, NULL);
  CHECK(wavec_parse(ctx, "b.wave", src, strlen(src)) == WAVEC_OK);
  k = wavec_kernel_get(ctx, 0);
  u = wavec_expr_sym(k, wavec_symbol(ctx, "N"));
  CHECK(wavec_default_expr(k, U, u, loc) == WAVEC_OK);
  CHECK(wavec_default_expr(k, U, u, loc) != WAVEC_OK);
  CHECK(strstr(wavec_errmsg(ctx), "default for 'U' is given twice"));
  wavec_ctx_free(ctx);
}

/* The example's tiles: the grid's x is ceil(M / BLOCK_M). */
static void attention_tiles(void) {
  static const struct {
    int d, n;
    uint32_t gx;
  } cases[] = {{64, 4096, 32},  {32, 1024, 8},  {80, 4096, 22}, {128, 4096, 22},
               {128, 2048, 11}, {128, 1024, 8}, {96, 1000, 8},
               {160, 4096, 22}, {176, 4096, 32}, {256, 2048, 16},
               {256, 1000, 8}};
  FILE *f = fopen("examples/attention_fwd_wgmma.wave", "rb");
  CHECK(f != NULL);
  if (!f)
    return;
  static char src[1 << 16];
  size_t len = fread(src, 1, sizeof src - 1, f);
  fclose(f);
  src[len] = 0;
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    wavec_ctx *ctx = wavec_ctx_new(NULL, NULL);
    const char *names[] = {"B", "K1", "N", "M", "K2"};
    const int64_t vals[] = {2, cases[i].d, cases[i].d, cases[i].n, cases[i].n};
    for (size_t j = 0; j < 5; j++)
      CHECK(wavec_define_int(ctx, names[j], vals[j]) == WAVEC_OK);
    bool ok = wavec_parse(ctx, "examples/attention_fwd_wgmma.wave", src, len) ==
              WAVEC_OK;
    wavec_kernel *k = ok ? wavec_kernel_get(ctx, 0) : NULL;
    ok = ok && wavec_compile(k, NULL) == WAVEC_OK;
    uint32_t g[3], b[3];
    ok = ok && wavec_launch_dims(k, g, b, NULL) == WAVEC_OK;
    CHECKF(ok, "D=%d N=%d: %s", cases[i].d, cases[i].n, wavec_errmsg(ctx));
    CHECKF(!ok || g[0] == cases[i].gx, "D=%d N=%d: %u query tiles, want %u",
           cases[i].d, cases[i].n, g[0], cases[i].gx);
    wavec_ctx_free(ctx);
  }
}

int main(void) {
  RUN(evaluated_in_order);
  RUN(refusals);
  RUN(orders_and_cycles);
  RUN(builder);
  RUN(attention_tiles);
  CHECK_EXIT();
}
