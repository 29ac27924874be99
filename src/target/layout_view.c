/* The layout view: a picture of which lane holds which element of an mma
 * operand, as a text grid or an SVG document (wavec_layout_render).
 *
 * The picture is not drawn from formulas of its own: it asks wv_mma_layout()
 * for the role's coordinate expressions — the ones the index pass uses — and
 * evaluates them with ex_eval() for every lane and element (wv_layout_fill),
 * which also proves the layout a bijection onto the tile. So what the view
 * shows is the table the compiler uses, and a wrong table cannot be drawn. */
#include <stdio.h>

#include "target/target.h"

typedef struct view {
  wavec_mma_kind kind;
  const wv_mma_info *mi;
  wv_role role;
  int n;                /* the N of the tile */
  int rows, cols;       /* the role's tile */
  int lanes, elems;     /* elems == 0: read from shared memory */
  int32_t *owner;       /* rows x cols: lane*elems + elem */
  const char *coord[2]; /* coordinate names of rows and cols */
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

static void cell_label(const view *v, int r, int c, char *buf, size_t size) {
  int32_t o = v->owner ? v->owner[r * v->cols + c] : -1;
  if (v->elems == 0)
    snprintf(buf, size, "shared");
  else
    snprintf(buf, size, "%d:%d", o / v->elems, o % v->elems);
}

static int label_width(const view *v) {
  if (v->elems == 0)
    return 6; /* "shared" */
  return digits(v->lanes - 1) + 1 + digits(v->elems - 1);
}

/* "F32_64xNx16_F16 acc (N=16)" */
static void title(wv_buf *b, const view *v) {
  wv_buf_printf(b, "%s %s", v->mi->name, wv_role_names[v->role]);
  if (v->mi->n == 0)
    wv_buf_printf(b, " (N=%d)", v->n);
}

/* "rows m 0..15, cols n 0..7, cell lane:elem; 32 lanes x 4 elements; mma..." */
static void legend(wv_buf *b, const view *v) {
  wv_buf_printf(b, "rows %s 0..%d, cols %s 0..%d", v->coord[0], v->rows - 1,
                v->coord[1], v->cols - 1);
  if (v->elems == 0)
    wv_buf_printf(b,
                  "; read by all %d lanes from shared memory through a "
                  "matrix descriptor, no lane holds it in registers "
                  "(cell: shared)",
                  v->lanes);
  else
    wv_buf_printf(b, ", cell lane:elem; %d lanes x %d elements", v->lanes,
                  v->elems);
  wv_buf_printf(b, "; %s", v->mi->instr);
}

static void render_text(wv_buf *b, const view *v) {
  char corner[16], lab[32];
  snprintf(corner, sizeof corner, "%s\\%s", v->coord[0], v->coord[1]);
  int w = label_width(v);
  if (digits(v->cols - 1) > w)
    w = digits(v->cols - 1);
  int hw = (int)strlen(corner);
  if (digits(v->rows - 1) > hw)
    hw = digits(v->rows - 1);
  title(b, v);
  wv_buf_puts(b, ": ");
  legend(b, v);
  wv_buf_printf(b, "\n%*s", hw, corner);
  for (int c = 0; c < v->cols; c++)
    wv_buf_printf(b, " %*d", w, c);
  wv_buf_puts(b, "\n");
  for (int r = 0; r < v->rows; r++) {
    wv_buf_printf(b, "%*d", hw, r);
    for (int c = 0; c < v->cols; c++) {
      cell_label(v, r, c, lab, sizeof lab);
      wv_buf_printf(b, " %*s", w, lab);
    }
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
  char lab[32], col[8];
  const int margin = 10, ch = 18, head = 18, top = 52;
  const int cw = 8 + 7 * label_width(v);
  int hw = 12 + 7 * (digits(v->rows - 1) > 3 ? digits(v->rows - 1) : 3);
  int x0 = margin + hw, y0 = top + head;
  wv_buf t;
  wv_buf_init(&t, b->ctx);
  title(&t, v);
  wv_buf l;
  wv_buf_init(&l, b->ctx);
  legend(&l, v);
  /* wide enough for the legend line too (11px monospace: ~6.7px a char) */
  int width = x0 + v->cols * cw + margin, height = y0 + v->rows * ch + margin;
  int lw = 2 * margin + (int)(l.n * 7);
  if (lw > width)
    width = lw;

  wv_buf_printf(b,
                "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
                "height=\"%d\" viewBox=\"0 0 %d %d\" "
                "font-family=\"monospace\" font-size=\"11\">\n",
                width, height, width, height);
  wv_buf_puts(b, "<title>");
  xml_puts(b, wv_buf_str(&t));
  wv_buf_puts(b, "</title>\n<desc>");
  xml_puts(b, wv_buf_str(&l));
  wv_buf_puts(b, "</desc>\n");
  wv_buf_printf(b, "<rect width=\"%d\" height=\"%d\" fill=\"#ffffff\"/>\n",
                width, height);
  wv_buf_printf(b,
                "<text x=\"%d\" y=\"%d\" font-size=\"14\" "
                "font-weight=\"bold\">",
                margin, margin + 14);
  xml_puts(b, wv_buf_str(&t));
  wv_buf_printf(b, "</text>\n<text x=\"%d\" y=\"%d\">", margin, margin + 32);
  xml_puts(b, wv_buf_str(&l));
  wv_buf_puts(b, "</text>\n");
  /* corner and headers */
  wv_buf_printf(b,
                "<text x=\"%d\" y=\"%d\" text-anchor=\"end\" "
                "fill=\"#555555\">%s\\%s</text>\n",
                x0 - 4, y0 - 5, v->coord[0], v->coord[1]);
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
      int x = x0 + c * cw, y = y0 + r * ch;
      cell_label(v, r, c, lab, sizeof lab);
      wv_buf_puts(b, "<g><title>");
      if (v->elems == 0) {
        wv_buf_printf(b, "%s %d, %s %d: in shared memory", v->coord[0], r,
                      v->coord[1], c);
        snprintf(col, sizeof col, "#dddddd");
      } else {
        int32_t o = v->owner[r * v->cols + c];
        wv_buf_printf(b, "lane %d, element %d: %s %d, %s %d", o / v->elems,
                      o % v->elems, v->coord[0], r, v->coord[1], c);
        lane_colour(o / v->elems, col);
      }
      wv_buf_printf(b,
                    "</title><rect x=\"%d\" y=\"%d\" width=\"%d\" "
                    "height=\"%d\" fill=\"%s\" stroke=\"#ffffff\"/>"
                    "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">%s</text>"
                    "</g>\n",
                    x, y, cw, ch, col, x + cw / 2, y + ch - 5, lab);
    }
  }
  wv_buf_puts(b, "</svg>\n");
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

static wavec_status render(wavec_ctx *ctx, const char *mma_name,
                           const char *role, int n, int svg, const char **out) {
  view v = {0};
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
  v.kind = (wavec_mma_kind)k;
  v.mi = wv_mma_info_get(v.kind);
  int r = -1;
  for (int i = 0; i < WV_ROLE_COUNT; i++)
    if (strcmp(role ? role : "acc", wv_role_names[i]) == 0)
      r = i;
  if (r < 0) {
    wv_buf_printf(&msg, "unknown mma role '%s' (expected lhs, rhs or acc)",
                  role);
    return invalid(ctx, &msg);
  }
  v.role = (wv_role)r;
  if (v.mi->n == 0 && n == 0)
    n = DEFAULT_WGMMA_N;
  if (!wv_mma_n_valid(v.kind, n)) {
    if (v.mi->n == 0)
      wv_buf_printf(&msg,
                    "N = %d is not valid for %s (expected 8, 16, 24, "
                    "..., 256)",
                    n, v.mi->name);
    else
      wv_buf_printf(&msg, "N = %d does not fit %s, whose N is %d", n,
                    v.mi->name, v.mi->n);
    return invalid(ctx, &msg);
  }
  v.n = wv_mma_n(v.kind, n);
  int shape[2];
  wv_mma_role_shape(v.kind, v.role, v.n, shape);
  v.rows = shape[0];
  v.cols = shape[1];
  v.lanes = v.mi->lanes;
  v.elems = wv_mma_elems(v.kind, v.role, v.n);
  v.coord[0] = coord_names[v.role][0];
  v.coord[1] = coord_names[v.role][1];
  if (!wv_mma_role_in_shared(v.kind, v.role)) {
    wavec_sym ls = wavec_symbol(ctx, "$LANE"), es = wavec_symbol(ctx, "$E");
    wv_assert(ctx, ls && es);
    ex_t coord[2];
    wv_mma_layout(ctx, v.kind, v.role, v.n, ex_sym(ctx, ls), ex_sym(ctx, es),
                  coord);
    v.owner = wv_alloc(ctx, (size_t)v.rows * (size_t)v.cols * sizeof *v.owner);
    wv_buf what;
    wv_buf_init(&what, ctx);
    title(&what, &v);
    if (!wv_layout_fill(ctx, wv_buf_str(&what), v.lanes, v.elems, v.rows,
                        v.cols, ls, es, coord, v.owner))
      return WAVEC_ERR_INTERNAL;
  }
  wv_buf b;
  wv_buf_init(&b, ctx);
  if (svg)
    render_svg(&b, &v);
  else
    render_text(&b, &v);
  *out = wv_buf_str(&b);
  return WAVEC_OK;
}

wavec_status wavec_layout_render(wavec_ctx *ctx, const char *mma_name,
                                 const char *role, int n, int svg,
                                 const char **out) {
  const char *res = NULL;
  if (out)
    *out = NULL;
  WV_GUARD(ctx, ctx->status ? ctx->status : WAVEC_ERR_INTERNAL);
  wavec_status st = render(ctx, mma_name, role, n, svg, &res);
  WV_UNGUARD(ctx);
  if (st == WAVEC_OK && out)
    *out = res;
  return st;
}
