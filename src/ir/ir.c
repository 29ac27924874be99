/* Op, dtype and mma tables; graph construction; type helpers. */
#include "ir/ir.h"

#include <stdio.h>
#include <string.h>

const wv_opinfo wv_ops[WV_OP_COUNT] = {
#define X(e, v, name, cls) [e] = {name, cls},
    WAVEC_OPS(X)
#undef X
    [WV_OP_CONVERT] = {"convert", 'O'},
};

const wv_dtinfo wv_dtypes[WAVEC_DTYPE_COUNT] = {
#define X(e, v, name, bits, isfloat) [e] = {name, bits, isfloat},
    WAVEC_DTYPES(X)
#undef X
};

const char *const wv_mma_names[WAVEC_MMA_COUNT] = {
#define X(e, v, name) [e] = name,
    WAVEC_MMAS(X)
#undef X
};

const wv_hwint_info wv_hwints[WAVEC_HW_INT_COUNT] = {
#define X(e, v, name, lo, hi) [e] = {name, lo, hi},
    WAVEC_HW_INTS(X)
#undef X
};

const char *const wv_rel_names[WAVEC_REL_GE + 1] = {
    [WAVEC_REL_LT] = "<", [WAVEC_REL_LE] = "<=", [WAVEC_REL_GT] = ">",
    [WAVEC_REL_GE] = ">="};

static int lookup(const char *const *names, size_t count, size_t stride,
                  const char *name, size_t n) {
  for (size_t i = 0; i < count; i++) {
    const char *s = *(const char *const *)((const char *)names + i * stride);
    if (strlen(s) == n && memcmp(s, name, n) == 0)
      return (int)i;
  }
  return -1;
}

int wv_dtype_lookup(const char *name, size_t n) {
  return lookup(&wv_dtypes[0].name, WAVEC_DTYPE_COUNT, sizeof wv_dtypes[0],
                name, n);
}

int wv_mma_lookup(const char *name, size_t n) {
  return lookup(wv_mma_names, WAVEC_MMA_COUNT, sizeof wv_mma_names[0], name,
                n);
}

wv_graph *wv_graph_new(wavec_ctx *ctx) {
  wv_graph *g = wv_alloc(ctx, sizeof *g);
  wv_node none = {0};
  vec_push(ctx, &g->nodes, none);
  wv_graph_add_block(ctx, g, 0);
  return g;
}

uint32_t wv_graph_add_block(wavec_ctx *ctx, wv_graph *g, uint32_t owner) {
  wv_block b = {0};
  b.owner = owner;
  vec_push(ctx, &g->blocks, b);
  return g->blocks.n - 1;
}

uint32_t wv_graph_add(wavec_ctx *ctx, wv_graph *g, uint32_t block,
                      const wv_node *proto) {
  uint32_t id = g->nodes.n;
  wv_node n = *proto;
  n.block = block;
  if (n.nops)
    n.ops = wv_dup(ctx, proto->ops, n.nops * sizeof *n.ops);
  vec_push(ctx, &g->nodes, n);
  vec_push(ctx, &g->blocks.v[block].nodes, id);
  return id;
}

void wv_graph_release(wavec_ctx *ctx, wv_graph *g) {
  for (uint32_t b = 0; b < g->blocks.n; b++)
    wv_release(ctx, g->blocks.v[b].nodes.v);
  wv_release(ctx, g->blocks.v);
  wv_release(ctx, g->nodes.v);
  memset(g, 0, sizeof *g);
}

bool wv_type_has(const wv_type *t, wavec_sym d) {
  for (uint32_t i = 0; i < t->n; i++)
    if (t->dims[i] == d)
      return true;
  return false;
}

bool wv_type_eq(const wv_type *a, const wv_type *b) {
  if (a->dt != b->dt || a->n != b->n)
    return false;
  for (uint32_t i = 0; i < a->n; i++)
    if (a->dims[i] != b->dims[i])
      return false;
  return true;
}

bool wv_dims_subset(const wv_type *small, const wv_type *big) {
  for (uint32_t i = 0; i < small->n; i++)
    if (!wv_type_has(big, small->dims[i]))
      return false;
  return true;
}

void wv_type_print(wavec_ctx *ctx, wv_buf *b, const wv_type *t) {
  wv_buf_puts(b, "[");
  for (uint32_t i = 0; i < t->n; i++)
    wv_buf_printf(b, "%s%s", i ? ", " : "", wavec_symbol_name(ctx, t->dims[i]));
  wv_buf_printf(b, "] %s", wv_dtypes[t->dt].name);
}

void wv_remark_start(wv_kernel *k, wavec_loc loc, wv_buf *b) {
  wv_buf_init(b, k->ctx);
  if (loc.file)
    wv_buf_printf(b, "%s:", loc.file);
  wv_buf_printf(b, "%u:%u: remark: ", loc.line, loc.col);
}

/* A remark said once: the same words at the same place (a read's clones
 * each reaching the code that remarks on it) are one remark. */
void wv_remark_end(wv_kernel *k, wv_buf *b) {
  const char *r = wv_buf_str(b);
  for (uint32_t i = 0; i < k->remarks.n; i++)
    if (!strcmp(k->remarks.v[i], r))
      return;
  vec_push(k->ctx, &k->remarks, r);
}

const char *wavec_dtype_name(wavec_dtype dt) {
  return (unsigned)dt < WAVEC_DTYPE_COUNT ? wv_dtypes[dt].name : "?";
}

int64_t wv_tensor_elems(wv_kernel *k, const wv_node *arg, int64_t *bytes) {
  const wv_type *t = &arg->type;
  int64_t item = (wv_dtypes[t->dt].bits + 7) / 8, elems = 1, b = item;
  bool over = false;
  for (uint32_t i = 0; i < t->n; i++) {
    int64_t d = k->bind.ival[t->dims[i]];
    over |= __builtin_mul_overflow(elems, d, &elems) ||
            __builtin_mul_overflow(b, d, &b) || b > WV_MAX_TENSOR_BYTES;
  }
  if (over) {
    /* "M x N = 4294967296 x 4294967296" */
    wv_buf names, vals;
    wv_buf_init(&names, k->ctx);
    wv_buf_init(&vals, k->ctx);
    for (uint32_t i = 0; i < t->n; i++) {
      wv_buf_printf(&names, "%s%s", i ? " x " : "",
                    wavec_symbol_name(k->ctx, t->dims[i]));
      wv_buf_printf(&vals, "%s%lld", i ? " x " : "",
                    (long long)k->bind.ival[t->dims[i]]);
    }
    wv_fail(k->ctx, D_TOO_LARGE, arg->loc,
            "'%s' has %s = %s elements of %s: more than 2^62 bytes",
            arg->name ? arg->name : "?", wv_buf_str(&names),
            wv_buf_str(&vals), wv_dtypes[t->dt].name);
  }
  if (bytes)
    *bytes = b;
  return elems;
}

const char *wv_node_what(wavec_ctx *ctx, const wv_node *n) {
  wv_buf b;
  wv_buf_init(&b, ctx);
  if (n->name)
    wv_buf_printf(&b, "'%s'", n->name);
  else
    wv_buf_printf(&b, "the %s at line %u", wv_ops[n->op].name, n->loc.line);
  return wv_buf_str(&b);
}

const wv_dynamic *wv_dynamic_of(const wv_kernel *k, wavec_sym d) {
  for (uint32_t i = 0; i < k->dynamics.n; i++)
    if (k->dynamics.v[i].dim == d)
      return &k->dynamics.v[i];
  return NULL;
}
