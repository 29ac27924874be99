/* The layout view of a node of a compiled kernel
 * (wavec_layout_render_node): every cell of the picture is checked against
 * the vendors' documented fragment layouts, written here independently of
 * the compiler's tables; replication is marked; names, NAME@LINE and bad
 * names behave; a planted broken layout is an internal error, not a
 * picture. The planted bugs use the internal headers. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "passes/dist.h"

/* Parses `file` with the given sizes and hardware (hw NULL: the file's own)
 * and compiles its kernel `kernel`; *out is NULL on failure. */
static wavec_ctx *build(const char *file, const char *kernel,
                        const char *const *defs, const char *const hw[2],
                        wavec_kernel **out) {
  wavec_ctx *ctx = wavec_ctx_new(NULL, NULL);
  *out = NULL;
  for (size_t i = 0; defs[i]; i += 2)
    wavec_define_int(ctx, defs[i], atoi(defs[i + 1]));
  if (hw) {
    CHECK(wavec_hardware_override(ctx, "threads_per_wave", hw[0]) ==
          WAVEC_OK);
    CHECK(wavec_hardware_override(ctx, "mma", hw[1]) == WAVEC_OK);
  }
  size_t len;
  char *src = slurp(file, &len);
  CHECKF(src, "cannot read %s", file);
  if (!src)
    return ctx;
  wavec_status st = wavec_parse(ctx, file, src, len);
  free(src);
  wavec_kernel *k = st == WAVEC_OK ? wavec_kernel_find(ctx, kernel) : NULL;
  if (k && wavec_compile(k, NULL) == WAVEC_OK)
    *out = k;
  CHECKF(*out, "%s: %s", file, wavec_errmsg(ctx));
  return ctx;
}

static const char *const gemm_defs[] = {"M", "64", "N", "64", "K", "32", NULL};
static const char *const bwd_defs[] = {"B",  "1",  "M",  "32", "K2", "32",
                                       "N",  "32", "K1", "32", NULL};
static const char *const mfma[2] = {"64", "F32_16x16x16_F16"};

/* A text view read back: the first line (title and legend), the column
 * count from the header, then one row of labels per line. */
enum { MAXR = 64, MAXC = 64, MAXL = 24 };
typedef struct grid {
  char head[1024];
  int rows, cols;
  char lab[MAXR][MAXC][MAXL];
} grid;

static bool parse_grid(const char *text, grid *g) {
  memset(g, 0, sizeof *g);
  const char *nl = strchr(text, '\n');
  if (!nl || (size_t)(nl - text) >= sizeof g->head)
    return false;
  memcpy(g->head, text, (size_t)(nl - text));
  const char *p = nl + 1;
  /* header: the corner, then 0 1 2 ... */
  nl = strchr(p, '\n');
  if (!nl)
    return false;
  int tok = 0;
  for (const char *q = p; q < nl;) {
    while (q < nl && *q == ' ')
      q++;
    if (q == nl)
      break;
    char *end;
    long v = strtol(q, &end, 10);
    if (tok > 0 && (end == q || v != tok - 1))
      return false;
    while (q < nl && *q != ' ')
      q++;
    tok++;
  }
  g->cols = tok - 1;
  if (g->cols <= 0 || g->cols > MAXC)
    return false;
  for (p = nl + 1; *p; p = nl + 1) {
    nl = strchr(p, '\n');
    if (!nl || g->rows == MAXR)
      return false;
    char *end;
    long r = strtol(p, &end, 10);
    if (end == p || r != g->rows)
      return false;
    const char *q = end;
    for (int c = 0; c < g->cols; c++) {
      while (q < nl && *q == ' ')
        q++;
      size_t n = 0;
      while (q < nl && *q != ' ' && n + 1 < MAXL)
        g->lab[g->rows][c][n++] = *q++;
      if (n == 0)
        return false;
    }
    while (q < nl && *q == ' ')
      q++;
    if (q != nl)
      return false;
    g->rows++;
  }
  return true;
}

/* "clone:lane:elem" with an optional "*". */
static bool parse_label(const char *s, int *clone, int *lane, int *elem,
                        bool *rep) {
  char star = 0;
  int n = sscanf(s, "%d:%d:%d%c", clone, lane, elem, &star);
  *rep = n == 4 && star == '*';
  return n == 3 || (n == 4 && star == '*' && s[strlen(s) - 1] == '*');
}

static grid G; /* large: not on the stack */

/* gemm, M = N = 64, K = 32, NVIDIA mma.sync m16n8k16 (the file's
 * hardware): each wave holds 32 x 32 of acc in 2 x 4 clones of 16 x 8. The
 * PTX ISA's accumulator fragment: c_i of lane l is at row groupID + 8*(i >=
 * 2), column 2*threadID_in_group + (i & 1), groupID = l / 4,
 * threadID_in_group = l % 4. */
static void gemm_acc(void) {
  wavec_kernel *k;
  wavec_ctx *ctx = build("examples/gemm.wave", "gemm", gemm_defs, NULL, &k);
  const char *out = NULL;
  if (k)
    CHECKF(wavec_layout_render_node(k, "acc", 0, &out) == WAVEC_OK, "%s",
           wavec_errmsg(ctx));
  if (out) {
    CHECKF(parse_grid(out, &G), "unreadable grid:\n%s", out);
    CHECK(G.rows == 32 && G.cols == 32);
    CHECKF(strcmp(G.lab[0][0], "0:0:0") == 0, "%s", G.lab[0][0]);
    CHECKF(strcmp(G.lab[8][0], "0:0:2") == 0, "%s", G.lab[8][0]);
    CHECKF(strcmp(G.lab[0][1], "0:0:1") == 0, "%s", G.lab[0][1]);
    CHECKF(strncmp(G.lab[0][8], "1:", 2) == 0, "%s", G.lab[0][8]);
    CHECKF(strcmp(G.lab[16][0], "4:0:0") == 0, "%s", G.lab[16][0]);
    CHECK(strstr(G.head, "acc [M, N] f32"));
    CHECK(strstr(G.head, "rows M 0..31, cols N 0..31"));
    CHECK(strstr(G.head, "8 clones") && strstr(G.head, "not replicated"));
    CHECK(!strchr(out, '*'));
    for (int r = 0; r < G.rows; r++) {
      for (int c = 0; c < G.cols; c++) {
        int cl, l, e;
        bool rep;
        CHECKF(parse_label(G.lab[r][c], &cl, &l, &e, &rep), "%s",
               G.lab[r][c]);
        int wr = 16 * (cl / 4) + l / 4 + 8 * (e >= 2);
        int wc = 8 * (cl % 4) + 2 * (l % 4) + (e & 1);
        CHECKF(!rep && wr == r && wc == c && l < 32 && e < 4,
               "(%d, %d) is %s", r, c, G.lab[r][c]);
      }
    }
  }
  /* the SVG: one rect per cell, tooltips name the clone's coordinate */
  const char *svg = NULL;
  if (k)
    CHECK(wavec_layout_render_node(k, "acc", 1, &svg) == WAVEC_OK);
  if (svg) {
    CHECK(strncmp(svg, "<?xml", 5) == 0 && strstr(svg, "<svg "));
    size_t n = 0;
    for (const char *p = svg; (p = strstr(p, "<rect")) != NULL; p++)
      n++;
    CHECKF(n == 1 + 32 * 32, "%zu rects", n);
    CHECK(strstr(svg, "clone 1 @[M=0, N=1]"));
    CHECK(strstr(svg, "lane 0, element 0: M 0, N 8</title>"));
    CHECK(strstr(svg, ">1:0:0</text>"));
  }
  wavec_ctx_free(ctx);
}

/* The backward kernel on AMD MFMA 16x16x16: s_ij is the accumulator, whose
 * element i of lane l is at row 4*(l/16) + i, column l % 16 (the CDNA3 ISA's
 * v_mfma_f32_16x16x16f16 output layout). */
static void bwd_s_ij_mfma(void) {
  wavec_kernel *k;
  wavec_ctx *ctx = build("examples/attention_bwd_dkdv.wave",
                         "attention_bwd_dkdv", bwd_defs, mfma, &k);
  const char *out = NULL;
  if (k)
    CHECKF(wavec_layout_render_node(k, "s_ij", 0, &out) == WAVEC_OK, "%s",
           wavec_errmsg(ctx));
  if (out) {
    CHECKF(parse_grid(out, &G), "unreadable grid:\n%s", out);
    CHECK(G.rows == 16 && G.cols == 16);
    CHECK(strstr(G.head, "other dims at coordinate 0: B"));
    CHECK(strstr(G.head, "64 lanes x 4 elements"));
    int seen[64][4] = {{0}};
    for (int l = 0; l < 64; l++) {
      for (int i = 0; i < 4; i++) {
        int r = 4 * (l / 16) + i, c = l % 16;
        char want[40];
        snprintf(want, sizeof want, "0:%d:%d", l, i);
        CHECKF(strcmp(G.lab[r][c], want) == 0, "(%d, %d) is %s, want %s", r,
               c, G.lab[r][c], want);
        seen[l][i]++;
      }
    }
    CHECK(seen[63][3] == 1);
  }
  /* lse_i [B, M] is replicated: 16 lanes hold each M */
  if (k)
    CHECKF(wavec_layout_render_node(k, "lse_i", 0, &out) == WAVEC_OK, "%s",
           wavec_errmsg(ctx));
  if (out) {
    CHECKF(parse_grid(out, &G), "unreadable grid:\n%s", out);
    CHECK(G.rows == 1 && G.cols == 16);
    CHECK(strstr(G.head, "replicated (*): 16 of 16 cells"));
    CHECK(strstr(G.head, "up to 16"));
    for (int c = 0; c < G.cols; c++) {
      int cl, l, e;
      bool rep;
      CHECKF(parse_label(G.lab[0][c], &cl, &l, &e, &rep) && rep && cl == 0 &&
                 4 * (l / 16) + e == c,
             "M %d is %s", c, G.lab[0][c]);
    }
  }
  wavec_ctx_free(ctx);
}

/* A reassigned name is its last value; NAME@LINE picks by line. */
static void names_and_lines(void) {
  wavec_kernel *k;
  wavec_ctx *ctx = build("examples/attention_bwd_dkdv.wave",
                         "attention_bwd_dkdv", bwd_defs, mfma, &k);
  const char *out = NULL;
  if (!k) {
    wavec_ctx_free(ctx);
    return;
  }
  CHECK(wavec_layout_render_node(k, "p_ij", 0, &out) == WAVEC_OK);
  CHECKF(out && strstr(out, "p_ij [B, K2, M] f16") &&
             strstr(out, "line 41"),
         "%s", out);
  CHECK(wavec_layout_render_node(k, "p_ij@39", 0, &out) == WAVEC_OK);
  CHECKF(out && strstr(out, "p_ij [B, M, K2] f16"), "%s", out);
  /* the permuted p_ij is the transpose of the exp2 one */
  grid *a = malloc(sizeof *a);
  CHECK(wavec_layout_render_node(k, "p_ij@41", 0, &out) == WAVEC_OK);
  if (a && out && parse_grid(out, a) &&
      wavec_layout_render_node(k, "p_ij@39", 0, &out) == WAVEC_OK &&
      parse_grid(out, &G)) {
    CHECK(a->rows == G.cols && a->cols == G.rows);
    for (int r = 0; r < G.rows; r++)
      for (int c = 0; c < G.cols; c++)
        CHECKF(strcmp(G.lab[r][c], a->lab[c][r]) == 0, "(%d, %d)", r, c);
  } else {
    CHECK(!"p_ij@41 and p_ij@39 render");
  }
  free(a);
  /* the loop result and the carried value share a name: the last wins */
  CHECK(wavec_layout_render_node(k, "dv_acc", 0, &out) == WAVEC_OK);
  CHECK(out && strstr(out, "dv_acc [B, K2, N] f32"));
  CHECK(wavec_errcode(ctx) == WAVEC_OK);
  wavec_ctx_free(ctx);
}

static void bad_names(void) {
  static const struct {
    const char *node, *want;
  } cases[] = {
      {"nope", "no value named 'nope'"},
      {"q", "not a value in registers"},
      {"p_ij@40", "assigned at lines 39, 41"},
      {"p_ij@", "expected NAME or NAME@LINE"},
      {"@39", "expected NAME or NAME@LINE"},
      {"", "expected NAME or NAME@LINE"},
      {NULL, "expected NAME or NAME@LINE"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    wavec_kernel *k;
    wavec_ctx *ctx = build("examples/attention_bwd_dkdv.wave",
                           "attention_bwd_dkdv", bwd_defs, mfma, &k);
    const char *out = "unset";
    if (k) {
      CHECKF(wavec_layout_render_node(k, cases[i].node, 0, &out) ==
                 WAVEC_ERR_INVALID,
             "%s", cases[i].node ? cases[i].node : "(null)");
      CHECK(out == NULL);
      const char *msg = wavec_errmsg(ctx);
      CHECKF(strstr(msg, cases[i].want), "%s: %s",
             cases[i].node ? cases[i].node : "(null)", msg);
      /* the message lists valid names */
      if (!strstr(cases[i].want, "lines"))
        CHECKF(strstr(msg, "values: dv_init, dk_init") &&
                   strstr(msg, "s_ij"),
               "%s", msg);
    }
    wavec_ctx_free(ctx);
  }
  /* a kernel that is only parsed, and no kernel */
  wavec_ctx *ctx = wavec_ctx_new(NULL, NULL);
  size_t len;
  char *src = slurp("examples/gemm.wave", &len);
  CHECK(src && wavec_parse(ctx, "gemm.wave", src, len) == WAVEC_OK);
  free(src);
  wavec_kernel *k = wavec_kernel_find(ctx, "gemm");
  const char *out = NULL;
  CHECK(k && wavec_layout_render_node(k, "acc", 0, &out) ==
                 WAVEC_ERR_INVALID);
  CHECK(strstr(wavec_errmsg(ctx), "not compiled"));
  CHECK(wavec_layout_render_node(NULL, "acc", 0, &out) == WAVEC_ERR_INVALID);
  wavec_ctx_free(ctx);
}

/* Planted bugs: a layout that leaves cells empty, and two clones on one
 * vector tile, are internal errors rather than pictures. */
/* An operand the warpgroup mma reads from shared memory (q_i, k_j, v_j of
 * the wgmma forward) has no elements in registers: a diagnostic, not an
 * internal error; the values listed are all drawable. */
static void wgmma_shared_operands(void) {
  static const char *const defs[] = {"B",  "1",  "M",  "128", "K2", "128",
                                     "N",  "64", "K1", "64",  NULL};
  static const char *const names[] = {"p", "q_i", "k_j", "v_j"};
  for (int i = 0; i < 4; i++) { /* an error sticks: a context each */
    wavec_kernel *k;
    wavec_ctx *ctx = build("examples/attention_fwd_wgmma.wave",
                           "attention_fwd_wgmma", defs, NULL, &k);
    const char *out = "unset";
    wavec_status st =
        k ? wavec_layout_render_node(k, names[i], 0, &out) : WAVEC_OK;
    const char *msg = wavec_errmsg(ctx);
    if (k && i == 0) /* a value in registers draws */
      CHECKF(st == WAVEC_OK && out && strstr(out, "p [B, M, K2]"), "%s",
             msg);
    else if (k)
      CHECKF(st == WAVEC_ERR_INVALID && out == NULL &&
                 strstr(msg, "not a value in registers") &&
                 strstr(msg, "reads from shared memory") &&
                 strstr(msg, "values: m_init") && !strstr(msg, " q_i,") &&
                 !strstr(msg, " k_j,") && !strstr(msg, " v_j,"),
             "%s: %s", names[i], msg);
    wavec_ctx_free(ctx);
  }
}

static void planted_bugs(void) {
  for (int bug = 0; bug < 2; bug++) {
    wavec_kernel *pk;
    wavec_ctx *ctx = build("examples/gemm.wave", "gemm", gemm_defs, NULL, &pk);
    if (!pk) {
      wavec_ctx_free(ctx);
      continue;
    }
    wv_kernel *k = &pk->k;
    wv_index *ix = k->index;
    wavec_sym N = wavec_symbol(ctx, "N");
    const wv_layout *orig = NULL;
    uint32_t origin = 0;
    for (uint32_t id = 1; id < k->g->nodes.n; id++) {
      const wv_node *n = wv_get(k->g, id);
      if (n->name && strcmp(n->name, "acc") == 0 && ix->info[id].layout &&
          ix->info[id].origin >= origin) {
        orig = ix->info[id].layout;
        origin = ix->info[id].origin;
      }
    }
    CHECK(orig);
    if (!orig) {
      wavec_ctx_free(ctx);
      continue;
    }
    if (bug == 0) {
      /* every lane's N is 0 within its vector tile: N 1..7 are empty */
      static wv_layout bad;
      bad = *orig;
      for (uint32_t j = 0; j < bad.n; j++)
        if (bad.d[j].dim == N)
          bad.d[j].frag = ex_const(ctx, 0);
      for (uint32_t id = 1; id < k->g->nodes.n; id++)
        if (ix->info[id].layout == orig)
          ix->info[id].layout = &bad;
    } else {
      /* the clone at [M=0, N=1] claims [M=0, N=0] */
      for (uint32_t id = 1; id < k->g->nodes.n; id++)
        if (ix->info[id].origin == origin && ix->info[id].coord[0] == 0 &&
            ix->info[id].coord[1] == 1)
          ix->info[id].coord[1] = 0;
    }
    const char *out = "unset";
    CHECK(wavec_layout_render_node(pk, "acc", 0, &out) == WAVEC_ERR_INTERNAL);
    CHECK(out == NULL);
    const char *msg = wavec_errmsg(ctx);
    CHECKF(strstr(msg, bug == 0 ? "no lane holds M 0, N 1"
                                : "no clone at flat expansion coordinate 1"),
           "%s", msg);
    wavec_ctx_free(ctx);
  }
}

int main(void) {
  RUN(gemm_acc);
  RUN(bwd_s_ij_mfma);
  RUN(names_and_lines);
  RUN(bad_names);
  RUN(wgmma_shared_operands);
  RUN(planted_bugs);
  CHECK_EXIT();
}
