/* The layout view: a picture of which lane holds which element of an mma
 * operand (wavec_layout_render) or of a value of a compiled kernel
 * (wavec_layout_render_node), as a text grid or an SVG document.
 *
 * The picture is not drawn from formulas of its own. For an mma operand it
 * asks wv_mma_layout() for the role's coordinate expressions — the ones the
 * index pass uses — and evaluates them with ex_eval() for every lane and
 * element (wv_layout_fill), which also proves the layout a bijection onto the
 * tile. For a node it evaluates the layouts of the expanded graph (dist.h)
 * for every clone, lane and element, and checks that the clones tile the
 * wave's tile. So what the view shows is the table the compiler uses, and a
 * wrong table cannot be drawn. Both fill one `view` and share the text and
 * SVG renderers. */
#include <stdarg.h>
#include <stdio.h>

#include "passes/dist.h"
#include "target/target.h"

/* What the renderers draw: a rows x cols grid with a label, a tooltip and a
 * colour (by lane) per cell, a title and a legend. Both pictures (an mma
 * operand, a node of a compiled kernel) fill one and share the renderers. */
typedef struct view {
  const char *title;
  const char *legend;
  const char *coord[2]; /* coordinate names of rows and cols */
  int rows, cols;
  const char **label;   /* rows x cols: the cell's text */
  const char **tip;     /* rows x cols: the SVG tooltip */
  int32_t *lane;        /* rows x cols: lane whose colour fills it, -1 grey */
} view;

static const char *const coord_names[WV_ROLE_COUNT][2] = {
    [WV_LHS] = {"m", "k"}, [WV_RHS] = {"n", "k"}, [WV_ACC] = {"m", "n"}};

/* Default N of a wgmma view: two 8-column blocks show the repetition. */
enum { DEFAULT_WGMMA_N = 16 };

static int digits(int v) {
  int d = 1;
  while (v >= 10) {
    v /= 10;
    d++;
  }
  return d;
}

static void view_alloc(wavec_ctx *ctx, view *v) {
  size_t cells = (size_t)v->rows * (size_t)v->cols;
  v->label = wv_alloc(ctx, cells * sizeof *v->label);
  v->tip = wv_alloc(ctx, cells * sizeof *v->tip);
  v->lane = wv_alloc(ctx, cells * sizeof *v->lane);
}

/* The widest cell label. */
static int label_width(const view *v) {
  int w = 1;
  for (int i = 0; i < v->rows * v->cols; i++) {
    int n = (int)strlen(v->label[i]);
    if (n > w)
      w = n;
  }
  return w;
}

static void render_text(wv_buf *b, const view *v) {
  char corner[160];
  snprintf(corner, sizeof corner, "%s\\%s", v->coord[0], v->coord[1]);
  int w = label_width(v);
  if (digits(v->cols - 1) > w)
    w = digits(v->cols - 1);
  int hw = (int)strlen(corner);
  if (digits(v->rows - 1) > hw)
    hw = digits(v->rows - 1);
  wv_buf_printf(b, "%s: %s", v->title, v->legend);
  wv_buf_printf(b, "\n%*s", hw, corner);
  for (int c = 0; c < v->cols; c++)
    wv_buf_printf(b, " %*d", w, c);
  wv_buf_puts(b, "\n");
  for (int r = 0; r < v->rows; r++) {
    wv_buf_printf(b, "%*d", hw, r);
    for (int c = 0; c < v->cols; c++)
      wv_buf_printf(b, " %*s", w, v->label[r * v->cols + c]);
    wv_buf_puts(b, "\n");
  }
}

static void xml_puts(wv_buf *b, const char *s) {
  for (; *s; s++) {
    switch (*s) {
    case '&':
      wv_buf_puts(b, "&amp;");
      break;
    case '<':
      wv_buf_puts(b, "&lt;");
      break;
    case '>':
      wv_buf_puts(b, "&gt;");
      break;
    case '"':
      wv_buf_puts(b, "&quot;");
      break;
    default:
      wv_buf_add(b, s, 1);
      break;
    }
  }
}

/* A light colour per lane: hues spread by the golden angle so that lanes
 * next to each other differ, two lightness levels by parity. HSL to RGB. */
static void lane_colour(int lane, char out[8]) {
  double h = (double)((lane * 137508 / 1000) % 360) / 60.0;
  double s = 0.70, l = (lane & 1) ? 0.74 : 0.84;
  double c = (1.0 - (2.0 * l - 1.0 < 0 ? 1.0 - 2.0 * l : 2.0 * l - 1.0)) * s;
  double hm = h - 2.0 * (double)(int)(h / 2.0) - 1.0; /* (h mod 2) - 1 */
  double x = c * (1.0 - (hm < 0 ? -hm : hm));
  double rgb[3] = {0, 0, 0};
  int sector = (int)h;
  static const int pick[6][3] = {{0, 1, 2}, {1, 0, 2}, {2, 0, 1},
                                 {2, 1, 0}, {1, 2, 0}, {0, 2, 1}};
  /* pick[s] tells which of (c, x, 0) each of r, g, b gets */
  double vals[3] = {c, x, 0};
  for (int i = 0; i < 3; i++)
    rgb[i] = vals[pick[sector % 6][i]];
  double m = l - c / 2.0;
  int ri = (int)((rgb[0] + m) * 255.0 + 0.5),
      gi = (int)((rgb[1] + m) * 255.0 + 0.5),
      bi = (int)((rgb[2] + m) * 255.0 + 0.5);
  snprintf(out, 8, "#%02x%02x%02x", ri & 255, gi & 255, bi & 255);
}

static void render_svg(wv_buf *b, const view *v) {
  char col[8];
  const int margin = 10, ch = 18, head = 18, top = 52;
  const int cw = 8 + 7 * label_width(v);
  int hw = 12 + 7 * (digits(v->rows - 1) > 3 ? digits(v->rows - 1) : 3);
  int x0 = margin + hw, y0 = top + head;
  /* wide enough for the legend line too (11px monospace: ~6.7px a char) */
  int width = x0 + v->cols * cw + margin, height = y0 + v->rows * ch + margin;
  int lw = 2 * margin + (int)(strlen(v->legend) * 7);
  if (lw > width)
    width = lw;

  wv_buf_printf(b,
                "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
                "height=\"%d\" viewBox=\"0 0 %d %d\" "
                "font-family=\"monospace\" font-size=\"11\">\n",
                width, height, width, height);
  wv_buf_puts(b, "<title>");
  xml_puts(b, v->title);
  wv_buf_puts(b, "</title>\n<desc>");
  xml_puts(b, v->legend);
  wv_buf_puts(b, "</desc>\n");
  wv_buf_printf(b, "<rect width=\"%d\" height=\"%d\" fill=\"#ffffff\"/>\n",
                width, height);
  wv_buf_printf(b,
                "<text x=\"%d\" y=\"%d\" font-size=\"14\" "
                "font-weight=\"bold\">",
                margin, margin + 14);
  xml_puts(b, v->title);
  wv_buf_printf(b, "</text>\n<text x=\"%d\" y=\"%d\">", margin, margin + 32);
  xml_puts(b, v->legend);
  wv_buf_puts(b, "</text>\n");
  /* corner and headers */
  wv_buf_printf(b,
                "<text x=\"%d\" y=\"%d\" text-anchor=\"end\" "
                "fill=\"#555555\">",
                x0 - 4, y0 - 5);
  xml_puts(b, v->coord[0]);
  wv_buf_puts(b, "\\");
  xml_puts(b, v->coord[1]);
  wv_buf_puts(b, "</text>\n");
  for (int c = 0; c < v->cols; c++)
    wv_buf_printf(b,
                  "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" "
                  "fill=\"#555555\">%d</text>\n",
                  x0 + c * cw + cw / 2, y0 - 5, c);
  for (int r = 0; r < v->rows; r++)
    wv_buf_printf(b,
                  "<text x=\"%d\" y=\"%d\" text-anchor=\"end\" "
                  "fill=\"#555555\">%d</text>\n",
                  x0 - 4, y0 + r * ch + ch - 5, r);
  /* cells */
  for (int r = 0; r < v->rows; r++) {
    for (int c = 0; c < v->cols; c++) {
      int x = x0 + c * cw, y = y0 + r * ch, i = r * v->cols + c;
      wv_buf_puts(b, "<g><title>");
      xml_puts(b, v->tip[i]);
      if (v->lane[i] < 0)
        snprintf(col, sizeof col, "#dddddd");
      else
        lane_colour(v->lane[i], col);
      wv_buf_printf(b,
                    "</title><rect x=\"%d\" y=\"%d\" width=\"%d\" "
                    "height=\"%d\" fill=\"%s\" stroke=\"#ffffff\"/>"
                    "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">",
                    x, y, cw, ch, col, x + cw / 2, y + ch - 5);
      xml_puts(b, v->label[i]);
      wv_buf_puts(b, "</text></g>\n");
    }
  }
  wv_buf_puts(b, "</svg>\n");
}

static const char *strf(wavec_ctx *ctx, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static const char *strf(wavec_ctx *ctx, const char *fmt, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  return wv_strdup(ctx, buf);
}

static const char *render_view(wavec_ctx *ctx, const view *v, int svg) {
  wv_buf b;
  wv_buf_init(&b, ctx);
  if (svg)
    render_svg(&b, v);
  else
    render_text(&b, v);
  return wv_buf_str(&b);
}

static int find_mma(const char *name) {
  for (int k = 0; name && k < WAVEC_MMA_COUNT; k++) {
    const wv_mma_info *mi = wv_mma_info_get((wavec_mma_kind)k);
    if (mi && strcmp(mi->name, name) == 0)
      return k;
  }
  return -1;
}

static wavec_status invalid(wavec_ctx *ctx, wv_buf *msg) {
  wavec_loc none = {0};
  wv_error(ctx, D_INVALID, none, "%s", wv_buf_str(msg));
  return WAVEC_ERR_INVALID;
}

/* ---- an mma operand --------------------------------------------------------
 */

static wavec_status render(wavec_ctx *ctx, const char *mma_name,
                           const char *role, int n, int svg, const char **out) {
  wv_buf msg;
  wv_buf_init(&msg, ctx);
  int k = find_mma(mma_name);
  if (k < 0) {
    wv_buf_printf(&msg, "unknown mma type '%s' (expected one of",
                  mma_name ? mma_name : "(null)");
    for (int i = 0; i < WAVEC_MMA_COUNT; i++)
      wv_buf_printf(&msg, "%s %s", i ? "," : "",
                    wv_mma_info_get((wavec_mma_kind)i)->name);
    wv_buf_puts(&msg, ")");
    return invalid(ctx, &msg);
  }
  wavec_mma_kind kind = (wavec_mma_kind)k;
  const wv_mma_info *mi = wv_mma_info_get(kind);
  int r = -1;
  for (int i = 0; i < WV_ROLE_COUNT; i++)
    if (strcmp(role ? role : "acc", wv_role_names[i]) == 0)
      r = i;
  if (r < 0) {
    wv_buf_printf(&msg, "unknown mma role '%s' (expected lhs, rhs or acc)",
                  role);
    return invalid(ctx, &msg);
  }
  if (mi->n == 0 && n == 0)
    n = DEFAULT_WGMMA_N;
  if (!wv_mma_n_valid(kind, n)) {
    if (mi->n == 0)
      wv_buf_printf(&msg,
                    "N = %d is not valid for %s (expected 8, 16, 24, "
                    "..., 256)",
                    n, mi->name);
    else
      wv_buf_printf(&msg, "N = %d does not fit %s, whose N is %d", n,
                    mi->name, mi->n);
    return invalid(ctx, &msg);
  }
  n = wv_mma_n(kind, n);
  view v = {0};
  int shape[2];
  wv_mma_role_shape(kind, (wv_role)r, n, shape);
  v.rows = shape[0];
  v.cols = shape[1];
  int lanes = mi->lanes, elems = wv_mma_elems(kind, (wv_role)r, n);
  v.coord[0] = coord_names[r][0];
  v.coord[1] = coord_names[r][1];
  /* "F32_64xNx16_F16 acc (N=16)" */
  wv_buf t;
  wv_buf_init(&t, ctx);
  wv_buf_printf(&t, "%s %s", mi->name, wv_role_names[r]);
  if (mi->n == 0)
    wv_buf_printf(&t, " (N=%d)", n);
  v.title = wv_buf_str(&t);
  /* "rows m 0..15, cols n 0..7, cell lane:elem; 32 lanes x 4 elements;
   * mma..." */
  wv_buf l;
  wv_buf_init(&l, ctx);
  wv_buf_printf(&l, "rows %s 0..%d, cols %s 0..%d", v.coord[0], v.rows - 1,
                v.coord[1], v.cols - 1);
  if (elems == 0)
    wv_buf_printf(&l,
                  "; read by all %d lanes from shared memory through a "
                  "matrix descriptor, no lane holds it in registers "
                  "(cell: shared)",
                  lanes);
  else
    wv_buf_printf(&l, ", cell lane:elem; %d lanes x %d elements", lanes,
                  elems);
  wv_buf_printf(&l, "; %s", mi->instr);
  v.legend = wv_buf_str(&l);
  int32_t *owner = NULL;
  if (elems > 0) {
    wavec_sym ls = wavec_symbol(ctx, "$LANE"), es = wavec_symbol(ctx, "$E");
    wv_assert(ctx, ls && es);
    ex_t coord[2];
    wv_mma_layout(ctx, kind, (wv_role)r, n, ex_sym(ctx, ls), ex_sym(ctx, es),
                  coord);
    owner = wv_alloc(ctx, (size_t)v.rows * (size_t)v.cols * sizeof *owner);
    if (!wv_layout_fill(ctx, v.title, lanes, elems, v.rows, v.cols, ls, es,
                        coord, owner))
      return WAVEC_ERR_INTERNAL;
  }
  view_alloc(ctx, &v);
  for (int row = 0; row < v.rows; row++) {
    for (int c = 0; c < v.cols; c++) {
      int i = row * v.cols + c;
      if (elems == 0) {
        v.label[i] = "shared";
        v.tip[i] = strf(ctx, "%s %d, %s %d: in shared memory", v.coord[0],
                        row, v.coord[1], c);
        v.lane[i] = -1;
      } else {
        int lane = owner[i] / elems, e = owner[i] % elems;
        v.label[i] = strf(ctx, "%d:%d", lane, e);
        v.tip[i] = strf(ctx, "lane %d, element %d: %s %d, %s %d", lane, e,
                        v.coord[0], row, v.coord[1], c);
        v.lane[i] = lane;
      }
    }
  }
  *out = render_view(ctx, &v, svg);
  return WAVEC_OK;
}

wavec_status wavec_layout_render(wavec_ctx *ctx, const char *mma_name,
                                 const char *role, int n, int svg,
                                 const char **out) {
  const char *res = NULL;
  if (out)
    *out = NULL;
  if (!ctx || !out)
    return wv_null_param(ctx, "wavec_layout_render", "out");
  WV_GUARD(ctx, ctx->status ? ctx->status : WAVEC_ERR_INTERNAL);
  wavec_status st = render(ctx, mma_name, role, n, svg, &res);
  WV_UNGUARD(ctx);
  if (st == WAVEC_OK && out)
    *out = res;
  return st;
}

/* ---- a node of a compiled kernel ---------------------------------------------
 *
 * The expanded graph holds one clone per vector tile of each source value;
 * the clones share the value's name and their origin (the node they were
 * cloned from). Element e of lane l of the clone at expansion coordinate c
 * lies at c[D]*v[D] + frag[D](l, e) from the wave tile's base along each
 * dim D (dist.h): the picture evaluates exactly that, the index the lowering
 * uses, for every clone, lane and element. */

/* Who holds a cell: the first (clone, lane, element) found, and how many
 * (lane, element) pairs of that clone hold it. */
typedef struct holder {
  int32_t clone, lane, elem, count;
} holder;

/* Node id holds elements in registers: it has a layout, and the layout
 * has elements (an operand a warpgroup mma reads from shared memory has
 * only the extents of its tile). */
static bool in_registers(const wv_kernel *k, uint32_t id) {
  const wv_layout *l = k->index->info[id].layout;
  return l && l->nelem > 0 && wv_get(k->g, id)->type.n > 0;
}

/* The distinct names of register values, in graph order, for a diagnostic. */
static void list_values(wv_kernel *k, wv_buf *msg) {
  enum { SHOWN = 16 };
  const char *seen[SHOWN];
  int n = 0;
  bool more = false;
  for (uint32_t id = 1; id < k->g->nodes.n && id < k->index->n; id++) {
    const wv_node *nd = wv_get(k->g, id);
    if (!nd->name || !in_registers(k, id))
      continue;
    bool dup = false;
    for (int i = 0; i < n && !dup; i++)
      dup = strcmp(seen[i], nd->name) == 0;
    if (dup)
      continue;
    if (n == SHOWN) {
      more = true;
      break;
    }
    seen[n++] = nd->name;
  }
  if (n == 0) {
    wv_buf_puts(msg, "it has no named values in registers");
    return;
  }
  wv_buf_puts(msg, "values:");
  for (int i = 0; i < n; i++)
    wv_buf_printf(msg, "%s %s", i ? "," : "", seen[i]);
  if (more)
    wv_buf_puts(msg, ", ...");
}

/* The node named by `spec` ("NAME" or "NAME@LINE"): the last value of that
 * name in the graph (on that source line), as its origin; 0 after recording
 * the diagnostic. *pick is one of its clones. */
static uint32_t find_value(wv_kernel *k, const char *spec, uint32_t *pick) {
  wavec_ctx *ctx = k->ctx;
  wv_index *ix = k->index;
  wv_buf msg;
  wv_buf_init(&msg, ctx);
  const char *name = spec ? spec : "";
  const char *at = strrchr(name, '@');
  uint32_t line = 0;
  bool bad = !*name;
  if (at) {
    name = wv_strndup(ctx, spec, (size_t)(at - spec));
    const char *p = at + 1;
    bad = !*name || !*p;
    for (; *p && !bad; p++) {
      bad = *p < '0' || *p > '9' || line > 100000000u;
      line = line * 10u + (uint32_t)(*p - '0');
    }
    bad = bad || line == 0;
  }
  if (bad) {
    wv_buf_printf(&msg,
                  "bad node '%s' in kernel '%s' (expected NAME or NAME@LINE, "
                  "the name of a source variable); ",
                  spec ? spec : "(null)", k->name);
    list_values(k, &msg);
    invalid(ctx, &msg);
    return 0;
  }
  uint32_t origin = 0;
  bool named = false, in_regs = false;
  *pick = 0;
  for (uint32_t id = 1; id < k->g->nodes.n && id < ix->n; id++) {
    const wv_node *n = wv_get(k->g, id);
    if (!n->name || strcmp(n->name, name) != 0)
      continue;
    named = true;
    if (!in_registers(k, id))
      continue;
    in_regs = true;
    if (line && n->loc.line != line)
      continue;
    if (!*pick || ix->info[id].origin > origin) {
      origin = ix->info[id].origin;
      *pick = id;
    }
  }
  if (*pick)
    return origin;
  if (in_regs) {
    wv_buf lines;
    wv_buf_init(&lines, ctx);
    uint32_t last = 0;
    int count = 0;
    for (uint32_t id = 1; id < k->g->nodes.n && id < ix->n; id++) {
      const wv_node *n = wv_get(k->g, id);
      if (n->name && strcmp(n->name, name) == 0 && in_registers(k, id) &&
          n->loc.line != last) {
        wv_buf_printf(&lines, "%s %u", count++ ? "," : "", n->loc.line);
        last = n->loc.line;
      }
    }
    wv_buf_printf(&msg,
                  "no value named '%s' at line %u of kernel '%s' (%s is "
                  "assigned at line%s%s)",
                  name, line, k->name, name, count > 1 ? "s" : "",
                  wv_buf_str(&lines));
  } else {
    if (named)
      wv_buf_printf(&msg,
                    "'%s' in kernel '%s' is not a value in registers (a "
                    "kernel argument in memory, a scalar or an operand the "
                    "warpgroup mma reads from shared memory has no lane "
                    "layout); ",
                    name, k->name);
    else
      wv_buf_printf(&msg, "no value named '%s' in kernel '%s'; ", name,
                    k->name);
    list_values(k, &msg);
  }
  invalid(ctx, &msg);
  return 0;
}

/* The picture of one value being made: its tile, its clones, who holds
 * each cell. Filled in order by the pic_* steps below. */
typedef struct npic {
  wv_kernel *k;
  wavec_ctx *ctx;
  const wv_node *pn;    /* the clone find_value picked: name, type, line */
  const wv_layout *lay; /* its layout */
  uint32_t origin;
  int nd;               /* dims of the value */
  const char *dn[WV_MAX_DIMS];
  int64_t v[WV_MAX_DIMS];    /* vector tile per dim */
  int64_t span[WV_MAX_DIMS]; /* the wave's tile per dim */
  int64_t cnt[WV_MAX_DIMS];  /* clones per dim: span / v */
  ex_t frag[WV_MAX_DIMS];    /* coordinate in the vector tile of ($T0, $E) */
  uint64_t total;            /* clones */
  int rd, cd;                /* dims drawn as rows (-1: one row) and cols */
  int64_t rows, cols;
  uint32_t *clone; /* node of each clone, by flat expansion coordinate */
  int lanes, ne;   /* lanes, elements per lane */
  int64_t *pos;    /* [lane][elem][dim]: frag evaluated */
  size_t cells;    /* rows x cols */
  holder *own;     /* per cell */
  int replicated, most; /* cells held more than once; the most holders */
} npic;

/* The vector tile and the wave's tile along each dim, and the slice drawn:
 * the last two dims. */
static wavec_status pic_tile(npic *q) {
  wavec_ctx *ctx = q->ctx;
  const wv_type *t = &q->pn->type;
  q->nd = t->n;
  q->total = 1;
  for (int i = 0; i < q->nd; i++) {
    const wv_ldim *e = wv_layout_dim(q->lay, t->dims[i]);
    q->dn[i] = wavec_symbol_name(ctx, t->dims[i]);
    q->span[i] = q->k->dist->dim[t->dims[i]].span;
    if (!e || e->v <= 0 || q->span[i] <= 0 || q->span[i] % e->v != 0) {
      wv_error(ctx, D_INTERNAL, q->pn->loc,
               "layout view of '%s': dim %s has no vector tile that divides "
               "the wave's span %lld",
               q->pn->name, q->dn[i], (long long)q->span[i]);
      return WAVEC_ERR_INTERNAL;
    }
    q->v[i] = e->v;
    q->frag[i] = e->frag;
    q->cnt[i] = q->span[i] / q->v[i];
    q->total *= (uint64_t)q->cnt[i];
  }
  q->rd = q->nd >= 2 ? q->nd - 2 : -1;
  q->cd = q->nd - 1;
  q->rows = q->rd >= 0 ? q->span[q->rd] : 1;
  q->cols = q->span[q->cd];
  q->cells = (size_t)q->rows * (size_t)q->cols;
  if (q->rows * q->cols > (1 << 20) || q->total > (1u << 20)) {
    wv_buf msg;
    wv_buf_init(&msg, ctx);
    wv_buf_printf(&msg,
                  "the tile of '%s' is %lld x %lld in %llu clones: too large "
                  "to draw",
                  q->pn->name, (long long)q->rows, (long long)q->cols,
                  (unsigned long long)q->total);
    return invalid(ctx, &msg);
  }
  return WAVEC_OK;
}

/* The clones by flat expansion coordinate (of a chain: its last link);
 * every coordinate has one. */
static wavec_status pic_clones(npic *q) {
  wavec_ctx *ctx = q->ctx;
  wv_index *ix = q->k->index;
  q->clone = wv_alloc(ctx, q->total * sizeof *q->clone);
  int32_t *link = wv_alloc(ctx, q->total * sizeof *link);
  for (uint32_t id = 1; id < q->k->g->nodes.n && id < ix->n; id++) {
    const wv_nodeinfo *in = &ix->info[id];
    if (in->origin != q->origin || !in->layout)
      continue;
    uint64_t flat = 0;
    for (int i = 0; i < q->nd; i++) {
      if (in->coord[i] < 0 || in->coord[i] >= q->cnt[i]) {
        wv_error(ctx, D_INTERNAL, q->pn->loc,
                 "layout view of '%s': clone %%%u has coordinate %d along %s, "
                 "outside 0..%lld",
                 q->pn->name, id, in->coord[i], q->dn[i],
                 (long long)q->cnt[i] - 1);
        return WAVEC_ERR_INTERNAL;
      }
      flat = flat * (uint64_t)q->cnt[i] + (uint64_t)in->coord[i];
    }
    if (!q->clone[flat] || in->link > link[flat]) {
      q->clone[flat] = id;
      link[flat] = in->link;
    }
  }
  for (uint64_t f = 0; f < q->total; f++) {
    if (!q->clone[f]) {
      wv_error(ctx, D_INTERNAL, q->pn->loc,
               "layout view of '%s': no clone at flat expansion coordinate "
               "%llu of %llu",
               q->pn->name, (unsigned long long)f,
               (unsigned long long)q->total);
      return WAVEC_ERR_INTERNAL;
    }
  }
  return WAVEC_OK;
}

/* frag of every dim for every lane and element. */
static wavec_status pic_frags(npic *q) {
  wavec_ctx *ctx = q->ctx;
  const wv_dist *d = q->k->dist;
  int nd = q->nd;
  q->lanes = d->lanes;
  q->ne = (int)q->lay->nelem;
  uint32_t nv = ctx->sym_names.n;
  int64_t *vals = wv_alloc(ctx, nv * sizeof *vals);
  bool *known = wv_alloc(ctx, nv * sizeof *known);
  wv_assert(ctx, d->T[0] < nv && d->E < nv && q->lanes > 0 && q->ne > 0);
  known[d->T[0]] = known[d->E] = true;
  q->pos = wv_alloc(ctx, (size_t)q->lanes * (size_t)q->ne * (size_t)nd *
                             sizeof *q->pos);
  for (int l = 0; l < q->lanes; l++) {
    for (int e = 0; e < q->ne; e++) {
      vals[d->T[0]] = l;
      vals[d->E] = e;
      for (int i = 0; i < nd; i++) {
        if (!ex_eval(ctx, q->frag[i], vals, known, nv,
                     &q->pos[((size_t)l * q->ne + e) * nd + i])) {
          wv_error(ctx, D_INTERNAL, q->pn->loc,
                   "layout view of '%s': the coordinate along %s of lane %d "
                   "element %d (%s) does not evaluate",
                   q->pn->name, q->dn[i], l, e, ex_str(ctx, q->frag[i]));
          return WAVEC_ERR_INTERNAL;
        }
      }
    }
  }
  return WAVEC_OK;
}

/* Who holds each cell of the slice shown: every element of every lane of
 * every clone, placed at its coordinate; two clones never meet. */
static wavec_status pic_holders(npic *q) {
  wavec_ctx *ctx = q->ctx;
  int nd = q->nd, rd = q->rd, cd = q->cd;
  q->own = wv_alloc(ctx, q->cells * sizeof *q->own);
  for (size_t i = 0; i < q->cells; i++)
    q->own[i] = (holder){-1, -1, -1, 0};
  int32_t cc[WV_MAX_DIMS];
  for (uint64_t f = 0; f < q->total; f++) {
    uint64_t rest = f;
    for (int i = nd - 1; i >= 0; i--) {
      cc[i] = (int32_t)(rest % (uint64_t)q->cnt[i]);
      rest /= (uint64_t)q->cnt[i];
    }
    for (int l = 0; l < q->lanes; l++) {
      for (int e = 0; e < q->ne; e++) {
        const int64_t *fp = &q->pos[((size_t)l * q->ne + e) * nd];
        int64_t p[WV_MAX_DIMS];
        bool shown = true;
        for (int i = 0; i < nd; i++) {
          p[i] = cc[i] * q->v[i] + fp[i];
          if (fp[i] < 0 || fp[i] >= q->v[i]) {
            wv_error(ctx, D_INTERNAL, q->pn->loc,
                     "layout view of '%s': lane %d element %d lies at %lld "
                     "along %s, outside its vector tile 0..%lld",
                     q->pn->name, l, e, (long long)fp[i], q->dn[i],
                     (long long)q->v[i] - 1);
            return WAVEC_ERR_INTERNAL;
          }
          if (i != rd && i != cd && p[i] != 0)
            shown = false;
        }
        if (!shown)
          continue;
        holder *h = &q->own[(size_t)(rd >= 0 ? p[rd] : 0) * (size_t)q->cols +
                            (size_t)p[cd]];
        if (h->count == 0) {
          *h = (holder){(int32_t)f, l, e, 1};
        } else if (h->clone != (int32_t)f) {
          wv_error(ctx, D_INTERNAL, q->pn->loc,
                   "layout view of '%s': clones %d and %llu overlap: lane "
                   "%d element %d of one and lane %d element %d of the "
                   "other both hold %s %lld, %s %lld",
                   q->pn->name, h->clone, (unsigned long long)f, h->lane,
                   h->elem, l, e, rd >= 0 ? q->dn[rd] : "row",
                   (long long)(rd >= 0 ? p[rd] : 0), q->dn[cd],
                   (long long)p[cd]);
          return WAVEC_ERR_INTERNAL;
        } else {
          h->count++;
        }
      }
    }
  }
  return WAVEC_OK;
}

/* Every cell has a holder; counts the replicated ones. */
static wavec_status pic_coverage(npic *q) {
  int rd = q->rd, cd = q->cd;
  q->replicated = 0;
  q->most = 1;
  for (size_t i = 0; i < q->cells; i++) {
    if (q->own[i].count == 0) {
      wv_error(q->ctx, D_INTERNAL, q->pn->loc,
               "layout view of '%s': no lane holds %s %lld, %s %lld of the "
               "wave's tile",
               q->pn->name, rd >= 0 ? q->dn[rd] : "row",
               (long long)(rd >= 0 ? (int64_t)i / q->cols : 0), q->dn[cd],
               (long long)((int64_t)i % q->cols));
      return WAVEC_ERR_INTERNAL;
    }
    if (q->own[i].count > 1)
      q->replicated++;
    if (q->own[i].count > q->most)
      q->most = q->own[i].count;
  }
  return WAVEC_OK;
}

/* The view's title (the value, its type and line) and legend (the slice,
 * the clones, the vector tile, replication). */
static void pic_caption(const npic *q, view *vw) {
  wavec_ctx *ctx = q->ctx;
  int nd = q->nd, rd = q->rd, cd = q->cd;
  const char *const *dn = q->dn;
  wv_buf tb;
  wv_buf_init(&tb, ctx);
  wv_buf_printf(&tb, "%s ", q->pn->name);
  wv_type_print(ctx, &tb, &q->pn->type);
  wv_buf_printf(&tb, " (kernel %s, line %u)", q->k->name, q->pn->loc.line);
  vw->title = wv_buf_str(&tb);
  wv_buf lb;
  wv_buf_init(&lb, ctx);
  if (rd >= 0)
    wv_buf_printf(&lb, "rows %s 0..%lld, cols %s 0..%lld", dn[rd],
                  (long long)q->rows - 1, dn[cd], (long long)q->cols - 1);
  else
    wv_buf_printf(&lb, "one row, cols %s 0..%lld", dn[cd],
                  (long long)q->cols - 1);
  wv_buf_puts(&lb, " of one wave's tile, from its base");
  /* the dims not drawn: their first coordinate only */
  for (int i = 0; i < rd; i++)
    wv_buf_printf(&lb, "%s%s", i ? ", " : " (other dims at coordinate 0: ",
                  dn[i]);
  if (rd > 0)
    wv_buf_puts(&lb, ")");
  wv_buf_printf(&lb, "; cell clone:lane:elem; %llu clone%s (",
                (unsigned long long)q->total, q->total == 1 ? "" : "s");
  for (int i = 0; i < nd; i++)
    wv_buf_printf(&lb, "%s%s %lld", i ? " x " : "", dn[i],
                  (long long)q->cnt[i]);
  wv_buf_puts(&lb, ") of vector tile ");
  for (int i = 0; i < nd; i++)
    wv_buf_printf(&lb, "%s%s %lld", i ? " x " : "", dn[i],
                  (long long)q->v[i]);
  wv_buf_printf(&lb, ", %d lanes x %d elements each; ", q->lanes, q->ne);
  if (q->replicated)
    wv_buf_printf(&lb,
                  "replicated (*): %d of %zu cells are held by several "
                  "lanes or elements (up to %d), the first is shown",
                  q->replicated, q->cells, q->most);
  else
    wv_buf_puts(&lb, "not replicated: one lane and element holds each cell");
  vw->legend = wv_buf_str(&lb);
}

/* Each cell's label, tooltip and colour (its holder's lane). */
static void pic_cells(const npic *q, view *vw) {
  wavec_ctx *ctx = q->ctx;
  int rd = q->rd, cd = q->cd;
  view_alloc(ctx, vw);
  for (size_t i = 0; i < q->cells; i++) {
    const holder *h = &q->own[i];
    const wv_nodeinfo *in = &q->k->index->info[q->clone[h->clone]];
    int64_t r = rd >= 0 ? (int64_t)i / q->cols : 0, c = (int64_t)i % q->cols;
    vw->label[i] = strf(ctx, "%d:%d:%d%s", h->clone, h->lane, h->elem,
                        h->count > 1 ? "*" : "");
    wv_buf tip;
    wv_buf_init(&tip, ctx);
    wv_buf_printf(&tip, "clone %d @[", h->clone);
    for (int j = 0; j < q->nd; j++)
      wv_buf_printf(&tip, "%s%s=%d", j ? ", " : "", q->dn[j], in->coord[j]);
    wv_buf_printf(&tip, "] (%%%u), lane %d, element %d: ",
                  q->clone[h->clone], h->lane, h->elem);
    if (rd >= 0)
      wv_buf_printf(&tip, "%s %lld, ", q->dn[rd], (long long)r);
    wv_buf_printf(&tip, "%s %lld", q->dn[cd], (long long)c);
    if (h->count > 1)
      wv_buf_printf(&tip, " (replicated: %d holders)", h->count);
    vw->tip[i] = wv_buf_str(&tip);
    vw->lane[i] = h->lane;
  }
}

static wavec_status render_node(wv_kernel *k, const char *spec, int svg,
                                const char **out) {
  wavec_ctx *ctx = k->ctx;
  if (!k->dist || !k->index || !k->index->expanded) {
    wv_buf msg;
    wv_buf_init(&msg, ctx);
    wv_buf_printf(&msg,
                  "kernel '%s' is not compiled: the layout of a node is "
                  "drawn after expansion (call wavec_compile first)",
                  k->name);
    return invalid(ctx, &msg);
  }
  npic q = {.k = k, .ctx = ctx};
  uint32_t pick;
  q.origin = find_value(k, spec, &pick);
  if (!q.origin)
    return WAVEC_ERR_INVALID;
  q.pn = wv_get(k->g, pick);
  q.lay = k->index->info[pick].layout;
  static wavec_status (*const steps[])(npic *) = {
      pic_tile, pic_clones, pic_frags, pic_holders, pic_coverage};
  for (size_t i = 0; i < sizeof steps / sizeof *steps; i++) {
    wavec_status st = steps[i](&q);
    if (st != WAVEC_OK)
      return st;
  }
  view vw = {0};
  vw.rows = (int)q.rows;
  vw.cols = (int)q.cols;
  vw.coord[0] = q.rd >= 0 ? q.dn[q.rd] : "-";
  vw.coord[1] = q.dn[q.cd];
  pic_caption(&q, &vw);
  pic_cells(&q, &vw);
  *out = render_view(ctx, &vw, svg);
  return WAVEC_OK;
}

wavec_status wavec_layout_render_node(wavec_kernel *pk, const char *node,
                                      int svg, const char **out) {
  const char *res = NULL;
  if (out)
    *out = NULL;
  if (!pk || !out)
    return wv_null_param(pk ? pk->k.ctx : NULL, "wavec_layout_render_node",
                         "out");
  wv_kernel *k = &pk->k;
  wavec_ctx *ctx = k->ctx;
  if (ctx->status != WAVEC_OK)
    return ctx->status;
  WV_GUARD(ctx, ctx->status ? ctx->status : WAVEC_ERR_INTERNAL);
  wavec_status st = render_node(k, node, svg, &res);
  WV_UNGUARD(ctx);
  if (st == WAVEC_OK && out)
    *out = res;
  return st;
}
