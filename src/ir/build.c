/* The builder: the public API that makes kernel graphs, with type inference.
 * The parser is one of its users; every type rule of LANGUAGE.md lives here
 * and nowhere else, so text and C-built kernels are checked alike. */
#include <math.h>

#include "ir/ir.h"

/* Every public builder call: guard, refuse to work once an error is
 * recorded (a 0 handle propagates silently), run the impl. */
#define BUILD(kh, failret, call)                                               \
  do {                                                                         \
    if (!(kh))                                                                 \
      return failret;                                                          \
    wavec_ctx *ctx_ = (kh)->k.ctx;                                              \
    if (ctx_->status != WAVEC_OK)                                              \
      return failret;                                                          \
    WV_GUARD(ctx_, failret);                                                   \
    __typeof__(call) r_ = (call);                                              \
    WV_UNGUARD(ctx_);                                                          \
    return r_;                                                                 \
  } while (0)

/* A builder call that returns a status: WAVEC_ERR_INVALID for a NULL
 * kernel, else the context's first error once there is one. */
#define BUILD_ST(kh, call)                                                     \
  BUILD(kh, (kh) ? (kh)->k.ctx->status : WAVEC_ERR_INVALID, call)

static wv_node *node(wv_kernel *k, uint32_t id) { return wv_get(k->g, id); }

static uint32_t cur_block(wv_kernel *k) {
  return k->block_stack.v[k->block_stack.n - 1];
}

static uint32_t add(wv_kernel *k, wv_node *proto) {
  if (k->ended)
    wv_fail(k->ctx, D_INVALID, proto->loc, "kernel '%s' is already ended",
            k->name);
  return wv_graph_add(k->ctx, k->g, cur_block(k), proto);
}

static const char *sym_name(wv_kernel *k, wavec_sym s) {
  return wavec_symbol_name(k->ctx, s);
}

static const char *type_str(wv_kernel *k, const wv_type *t) {
  wv_buf b;
  wv_buf_init(&b, k->ctx);
  wv_type_print(k->ctx, &b, t);
  return wv_buf_str(&b);
}

/* Operand v must exist and be visible: defined in an open block. */
static wv_node *operand(wv_kernel *k, wavec_value v, wavec_loc loc) {
  if (v == 0 || v >= k->g->nodes.n)
    wv_fail(k->ctx, D_INVALID, loc, "invalid value handle %u", v);
  wv_node *n = node(k, v);
  bool open = false;
  for (uint32_t i = 0; i < k->block_stack.n; i++)
    open |= k->block_stack.v[i] == n->block;
  if (!open)
    wv_fail(k->ctx, D_LOOP, loc,
            "'%s' is defined inside an iterate body and used outside it; use "
            "the loop's results",
            n->name ? n->name : wv_ops[n->op].name);
  return n;
}

static wv_node *reg_operand(wv_kernel *k, wavec_value v, wavec_loc loc) {
  wv_node *n = operand(k, v, loc);
  if (n->op == WAVEC_OP_ARG)
    wv_fail(k->ctx, D_NOT_REGISTER, loc,
            "'%s' is a memory argument; read() it into registers first",
            n->name);
  if (n->op == WAVEC_OP_WRITE || n->op == WAVEC_OP_YIELD ||
      n->op == WAVEC_OP_ITERATE)
    wv_fail(k->ctx, D_NOT_REGISTER, loc, "%s has no value",
            wv_ops[n->op].name);
  return n;
}

static wv_node *mem_operand(wv_kernel *k, wavec_value v, wavec_loc loc) {
  wv_node *n = operand(k, v, loc);
  if (n->op != WAVEC_OP_ARG)
    wv_fail(k->ctx, D_NOT_MEMORY, loc,
            "'%s' is a register value, not a memory argument",
            n->name ? n->name : wv_ops[n->op].name);
  return n;
}

static bool is_scalar(const wv_node *n) { return n->op == WAVEC_OP_SCALAR; }

static void check_dims(wv_kernel *k, size_t n, const wavec_sym *dims,
                       wavec_loc loc, wv_type *out) {
  if (n > WV_MAX_DIMS)
    wv_fail(k->ctx, D_INVALID, loc, "%zu dimensions; at most %d are supported",
            n, WV_MAX_DIMS);
  if (n && !dims)
    wv_fail(k->ctx, D_INVALID, loc, "%zu dimensions but dims is NULL", n);
  out->n = (uint8_t)n;
  for (size_t i = 0; i < n; i++) {
    if (dims[i] == 0 || dims[i] >= k->ctx->sym_names.n)
      wv_fail(k->ctx, D_INVALID, loc, "invalid symbol handle %u", dims[i]);
    for (size_t j = 0; j < i; j++)
      if (dims[j] == dims[i])
        wv_fail(k->ctx, D_DUP_DIM, loc, "dimension '%s' appears twice",
                sym_name(k, dims[i]));
    out->dims[i] = dims[i];
  }
}

static void check_dtype(wv_kernel *k, wavec_dtype dt, wavec_loc loc) {
  if ((unsigned)dt >= WAVEC_DTYPE_COUNT)
    wv_fail(k->ctx, D_UNKNOWN_DTYPE, loc, "invalid dtype %d", (int)dt);
}

/* A name the emitted PTX and C take as it is (a kernel's, an argument's)
 * must be an identifier. */
static void check_name(wavec_ctx *ctx, const char *what, const char *name,
                       wavec_loc loc) {
  if (!name)
    wv_fail(ctx, D_INVALID, loc, "%s name is NULL", what);
  if (!wv_is_ident(name))
    wv_fail(ctx, D_INVALID, loc,
            "%s name '%s' is not an identifier (a letter or '_', then "
            "letters, digits and '_')", what, name);
}

/* ---- kernels ----------------------------------------------------------------- */
static wavec_kernel *kernel_begin(wavec_ctx *ctx, const char *name,
                                  wavec_loc loc) {
  check_name(ctx, "kernel", name, loc);
  for (uint32_t i = 0; i < ctx->kernels.n; i++)
    if (strcmp(ctx->kernels.v[i]->name, name) == 0)
      wv_fail(ctx, D_REDEFINED, loc, "kernel '%s' is defined twice", name);
  wavec_kernel *pk = wv_alloc(ctx, sizeof *pk);
  wv_kernel *k = &pk->k;
  k->ctx = ctx;
  k->name = wv_strdup(ctx, name);
  k->loc = loc;
  if (loc.file)
    k->loc.file = wv_strdup(ctx, loc.file);
  k->g = wv_graph_new(ctx);
  k->hw.mma = WAVEC_MMA_NONE;
  vec_push(ctx, &k->block_stack, 0);
  wv_buf_init(&k->dump, ctx);
  vec_push(ctx, &ctx->kernels, k);
  return pk;
}

wavec_kernel *wavec_kernel_begin(wavec_ctx *ctx, const char *name,
                                 wavec_loc loc) {
  if (!ctx || ctx->status != WAVEC_OK)
    return NULL;
  WV_GUARD(ctx, NULL);
  wavec_kernel *k = kernel_begin(ctx, name, loc);
  WV_UNGUARD(ctx);
  return k;
}

static wavec_status kernel_end(wv_kernel *k) {
  if (k->block_stack.n != 1) {
    wv_node *it = node(k, k->g->blocks.v[cur_block(k)].owner);
    wv_fail(k->ctx, D_LOOP, it->loc, "iterate over '%s' has no yield",
            sym_name(k, it->sym));
  }
  k->ended = true;
  return wv_verify(k, "build");
}

wavec_status wavec_kernel_end(wavec_kernel *pk) {
  if (!pk)
    return WAVEC_ERR_INVALID;
  wv_kernel *k = &pk->k;
  if (k->ctx->status != WAVEC_OK)
    return k->ctx->status;
  WV_GUARD(k->ctx, k->ctx->status);
  wavec_status st = kernel_end(k);
  WV_UNGUARD(k->ctx);
  return st;
}

wavec_ctx *wavec_kernel_ctx(wavec_kernel *k) { return k ? k->k.ctx : NULL; }
const char *wavec_kernel_name(wavec_kernel *k) { return k ? k->k.name : ""; }
size_t wavec_kernel_count(wavec_ctx *ctx) { return ctx ? ctx->kernels.n : 0; }

wavec_kernel *wavec_kernel_get(wavec_ctx *ctx, size_t i) {
  return ctx && i < ctx->kernels.n ? (wavec_kernel *)ctx->kernels.v[i] : NULL;
}

wavec_kernel *wavec_kernel_find(wavec_ctx *ctx, const char *name) {
  for (uint32_t i = 0; ctx && name && i < ctx->kernels.n; i++)
    if (strcmp(ctx->kernels.v[i]->name, name) == 0)
      return (wavec_kernel *)ctx->kernels.v[i];
  return NULL;
}

/* ---- integer expressions ----------------------------------------------------- */
wavec_expr wavec_expr_int(wavec_kernel *pk, int64_t v) {
  BUILD(pk, 0, ex_const(pk->k.ctx, v));
}

static ex_t expr_sym(wv_kernel *k, wavec_sym s) {
  if (s == 0 || s >= k->ctx->sym_names.n)
    wv_fail(k->ctx, D_INVALID, k->loc, "invalid symbol handle %u", s);
  return ex_sym(k->ctx, s);
}

wavec_expr wavec_expr_sym(wavec_kernel *pk, wavec_sym s) {
  BUILD(pk, 0, expr_sym(&pk->k, s));
}

static ex_t expr_binary(wv_kernel *k, wavec_expr_op op, ex_t a, ex_t b,
                        wavec_loc loc) {
  wavec_ctx *ctx = k->ctx;
  ctx->at = loc; /* an overflow while folding constants is reported here */
  if (!a || !b)
    wv_fail(ctx, D_INVALID, loc, "invalid expression handle");
  int64_t bv;
  bool bconst = ex_is_const(ctx, b, &bv);
  if (bconst && bv == 0 && op >= WAVEC_EXPR_DIV && op <= WAVEC_EXPR_CEILDIV)
    wv_fail(ctx, D_DIV_ZERO, loc, "division by zero");
  switch (op) {
  case WAVEC_EXPR_ADD: return ex_add(ctx, a, b);
  case WAVEC_EXPR_SUB: return ex_sub(ctx, a, b);
  case WAVEC_EXPR_MUL: return ex_mul(ctx, a, b);
  case WAVEC_EXPR_DIV: {
    wv_exactdiv d = {a, b, loc};
    int64_t av;
    if (ex_is_const(ctx, a, &av) && bconst && av % bv != 0)
      wv_fail(ctx, D_NOT_EXACT, loc, "%lld / %lld is not exact; use // for "
              "floor division", (long long)av, (long long)bv);
    vec_push(ctx, &k->exactdivs, d);
    return ex_floordiv(ctx, a, b);
  }
  case WAVEC_EXPR_FLOORDIV: return ex_floordiv(ctx, a, b);
  case WAVEC_EXPR_MOD: return ex_mod(ctx, a, b);
  case WAVEC_EXPR_CEILDIV: return ex_ceildiv(ctx, a, b);
  case WAVEC_EXPR_MIN: return ex_min(ctx, a, b);
  case WAVEC_EXPR_MAX: return ex_max(ctx, a, b);
  }
  wv_fail(ctx, D_INVALID, loc, "invalid expression operator %d", (int)op);
}

wavec_expr wavec_expr_binary(wavec_kernel *pk, wavec_expr_op op, wavec_expr a,
                             wavec_expr b, wavec_loc loc) {
  BUILD(pk, 0, expr_binary(&pk->k, op, a, b, loc));
}

/* ---- arguments ----------------------------------------------------------------- */
static wavec_value arg(wv_kernel *k, const char *name, size_t ndims,
                       const wavec_sym *dims, wavec_dtype dt, unsigned flags,
                       wavec_loc loc) {
  check_name(k->ctx, "argument", name, loc);
  for (uint32_t i = 0; i < k->args.n; i++)
    if (strcmp(node(k, k->args.v[i])->name, name) == 0)
      wv_fail(k->ctx, D_REDEFINED, loc, "argument '%s' is declared twice",
              name);
  if (ndims == 0)
    wv_fail(k->ctx, D_INVALID, loc, "memory '%s' has no dimensions", name);
  check_dtype(k, dt, loc);
  wv_node n = {.op = WAVEC_OP_ARG, .loc = loc, .flags = flags};
  check_dims(k, ndims, dims, loc, &n.type);
  n.type.dt = dt;
  n.name = wv_strdup(k->ctx, name);
  n.index = k->args.n;
  uint32_t id = add(k, &n);
  vec_push(k->ctx, &k->args, id);
  return id;
}

static wavec_status dim_loc(wv_kernel *k, wavec_sym dim, wavec_loc loc) {
  wavec_ctx *ctx = k->ctx;
  if (!dim || dim >= ctx->sym_names.n)
    wv_fail(ctx, D_INVALID, loc, "invalid symbol handle");
  if (dim >= k->ndim_loc) {
    uint32_t n = ctx->sym_names.n;
    wavec_loc *l = wv_alloc(ctx, n * sizeof *l);
    if (k->ndim_loc)
      memcpy(l, k->dim_loc, k->ndim_loc * sizeof *l);
    k->dim_loc = l;
    k->ndim_loc = n;
  }
  if (!k->dim_loc[dim].line)
    k->dim_loc[dim] = loc;
  return WAVEC_OK;
}

wavec_status wavec_dim_loc(wavec_kernel *pk, wavec_sym dim, wavec_loc loc) {
  BUILD_ST(pk, dim_loc(&pk->k, dim, loc));
}

wavec_value wavec_arg(wavec_kernel *pk, const char *name, size_t ndims,
                      const wavec_sym *dims, wavec_dtype dt, unsigned flags,
                      wavec_loc loc) {
  BUILD(pk, 0, arg(&pk->k, name, ndims, dims, dt, flags, loc));
}

/* ---- constraints ----------------------------------------------------------------- */
static const char *const cons_names[] = {"workgroup", "wave", "tiling"};

static wavec_status constraint(wv_kernel *k, wv_cons_kind kind, wavec_sym dim,
                               ex_t tile, int axis, wavec_loc loc) {
  if (!tile)
    wv_fail(k->ctx, D_INVALID, loc, "invalid tile expression");
  if (kind == WV_WORKGROUP && (axis < 0 || axis > 2))
    wv_fail(k->ctx, D_CONSTRAINT_AXIS, loc,
            "grid axis %d is out of range; axes are 0, 1 and 2", axis);
  for (uint32_t i = 0; i < k->constraints.n; i++) {
    wv_constraint *c = &k->constraints.v[i];
    if (c->kind == kind && c->dim == dim)
      wv_fail(k->ctx, D_CONSTRAINT_DUP, loc,
              "%s constraint on '%s' is given twice (first at line %u)",
              cons_names[kind], sym_name(k, dim), c->loc.line);
    if (kind == WV_WORKGROUP && c->kind == WV_WORKGROUP && c->axis == axis)
      wv_fail(k->ctx, D_CONSTRAINT_AXIS, loc,
              "grid axis %d is already used by '%s' (line %u)", axis,
              sym_name(k, c->dim), c->loc.line);
  }
  wv_constraint c = {kind, dim, tile, axis, loc, loc};
  vec_push(k->ctx, &k->constraints, c);
  return WAVEC_OK;
}

wavec_status wavec_workgroup(wavec_kernel *pk, wavec_sym dim, wavec_expr tile,
                             int axis, wavec_loc loc) {
  BUILD_ST(pk, constraint(&pk->k, WV_WORKGROUP, dim, tile, axis, loc));
}

wavec_status wavec_wave(wavec_kernel *pk, wavec_sym dim, wavec_expr tile,
                        wavec_loc loc) {
  BUILD_ST(pk, constraint(&pk->k, WV_WAVE, dim, tile, 0, loc));
}

wavec_status wavec_tiling(wavec_kernel *pk, wavec_sym dim, wavec_expr tile,
                          wavec_loc loc) {
  BUILD_ST(pk, constraint(&pk->k, WV_TILING, dim, tile, 0, loc));
}

static wavec_status dynamic_(wv_kernel *k, wavec_sym dim, ex_t multiple,
                             wavec_loc loc) {
  if (dim == 0 || dim >= k->ctx->sym_names.n)
    wv_fail(k->ctx, D_INVALID, loc, "invalid symbol handle %u", dim);
  /* its size becomes a parameter of the launcher wavec_emit_c writes */
  if (!wv_is_ident(sym_name(k, dim)))
    wv_fail(k->ctx, D_INVALID, loc,
            "dynamic dimension '%s' is not an identifier (a letter or '_', "
            "then letters, digits and '_')", sym_name(k, dim));
  const wv_dynamic *was = wv_dynamic_of(k, dim);
  if (was)
    wv_fail(k->ctx, D_CONSTRAINT_DUP, loc,
            "dynamic('%s') is given twice (first at line %u)",
            sym_name(k, dim), was->loc.line);
  wv_dynamic d = {dim, multiple, loc};
  vec_push(k->ctx, &k->dynamics, d);
  return WAVEC_OK;
}

wavec_status wavec_dynamic(wavec_kernel *pk, wavec_sym dim,
                           wavec_expr multiple, wavec_loc loc) {
  BUILD_ST(pk, dynamic_(&pk->k, dim, multiple, loc));
}

static wavec_status tile_loc(wv_kernel *k, wavec_loc loc) {
  if (!k->constraints.n)
    wv_fail(k->ctx, D_INVALID, loc, "no constraint to give a tile location");
  k->constraints.v[k->constraints.n - 1].tile_loc = loc;
  return WAVEC_OK;
}

wavec_status wavec_constraint_tile_loc(wavec_kernel *pk, wavec_loc loc) {
  BUILD_ST(pk, tile_loc(&pk->k, loc));
}

static wavec_status threads(wv_kernel *k, ex_t n, wavec_loc loc) {
  if (k->hw.threads_per_wave)
    wv_fail(k->ctx, D_HARDWARE, loc, "threads_per_wave is given twice");
  if (!n)
    wv_fail(k->ctx, D_INVALID, loc, "invalid expression handle");
  k->hw.threads_per_wave = n;
  k->hw.threads_loc = loc;
  return WAVEC_OK;
}

wavec_status wavec_threads_per_wave(wavec_kernel *pk, wavec_expr n,
                                    wavec_loc loc) {
  BUILD_ST(pk, threads(&pk->k, n, loc));
}

static wavec_status hw_int(wv_kernel *k, wavec_hw_int which, ex_t n,
                           wavec_loc loc) {
  if ((int)which < 0 || which >= WAVEC_HW_INT_COUNT)
    wv_fail(k->ctx, D_INVALID, loc, "invalid hardware entry %d", (int)which);
  if (k->hw.ints[which])
    wv_fail(k->ctx, D_HARDWARE, loc, "%s is given twice",
            wv_hwints[which].name);
  if (!n)
    wv_fail(k->ctx, D_INVALID, loc, "invalid expression handle");
  k->hw.ints[which] = n;
  k->hw.ints_loc[which] = loc;
  return WAVEC_OK;
}

wavec_status wavec_hardware_int(wavec_kernel *pk, wavec_hw_int which,
                                wavec_expr n, wavec_loc loc) {
  BUILD_ST(pk, hw_int(&pk->k, which, n, loc));
}

static wavec_status mma_type(wv_kernel *k, wavec_mma_kind m, wavec_loc loc) {
  if ((int)m < 0 || m >= WAVEC_MMA_COUNT)
    wv_fail(k->ctx, D_UNKNOWN_MMA, loc, "invalid mma type %d", (int)m);
  if (k->hw.mma != WAVEC_MMA_NONE)
    wv_fail(k->ctx, D_HARDWARE, loc, "mma is given twice");
  k->hw.mma = m;
  k->hw.mma_loc = loc;
  return WAVEC_OK;
}

wavec_status wavec_hardware_mma(wavec_kernel *pk, wavec_mma_kind m, wavec_loc loc) {
  BUILD_ST(pk, mma_type(&pk->k, m, loc));
}

static wavec_status vector_shape(wv_kernel *k, wavec_sym dim, ex_t n,
                                 wavec_loc loc) {
  for (uint32_t i = 0; i < k->hw.vector_shapes.n; i++)
    if (k->hw.vector_shapes.v[i].dim == dim)
      wv_fail(k->ctx, D_HARDWARE, loc, "vector shape of '%s' is given twice",
              sym_name(k, dim));
  if (!n)
    wv_fail(k->ctx, D_INVALID, loc, "invalid expression handle");
  wv_dimval v = {dim, n, loc};
  vec_push(k->ctx, &k->hw.vector_shapes, v);
  return WAVEC_OK;
}

wavec_status wavec_vector_shape(wavec_kernel *pk, wavec_sym dim, wavec_expr n,
                                wavec_loc loc) {
  BUILD_ST(pk, vector_shape(&pk->k, dim, n, loc));
}

static wavec_status set_default(wv_kernel *k, wavec_sym s, bool is_float,
                                int64_t i, double f, ex_t e, wavec_loc loc) {
  if (s == 0 || s >= k->ctx->sym_names.n)
    wv_fail(k->ctx, D_INVALID, loc, "invalid symbol handle %u", s);
  for (uint32_t j = 0; j < k->defaults.n; j++)
    if (k->defaults.v[j].sym == s)
      wv_fail(k->ctx, D_REDEFINED, loc, "default for '%s' is given twice",
              sym_name(k, s));
  wv_default d = {s, is_float, i, f, e, loc};
  vec_push(k->ctx, &k->defaults, d);
  return WAVEC_OK;
}

/* A default that is an integer expression: a constant one is the literal;
 * one of symbols is evaluated by pass bind (a symbol naming itself is
 * refused there, with the others of a cycle). */
static wavec_status default_expr(wv_kernel *k, wavec_sym s, ex_t e,
                                 wavec_loc loc) {
  if (s == 0 || s >= k->ctx->sym_names.n)
    wv_fail(k->ctx, D_INVALID, loc, "invalid symbol handle %u", s);
  if (!e)
    wv_fail(k->ctx, D_INVALID, loc, "invalid expression handle");
  int64_t v;
  if (ex_is_const(k->ctx, e, &v))
    return set_default(k, s, false, v, (double)v, 0, loc);
  return set_default(k, s, false, 0, 0.0, e, loc);
}

wavec_status wavec_default_int(wavec_kernel *pk, wavec_sym s, int64_t v,
                               wavec_loc loc) {
  BUILD_ST(pk, set_default(&pk->k, s, false, v, (double)v, 0, loc));
}

wavec_status wavec_default_float(wavec_kernel *pk, wavec_sym s, double v,
                                 wavec_loc loc) {
  BUILD_ST(pk, set_default(&pk->k, s, true, 0, v, 0, loc));
}

wavec_status wavec_default_expr(wavec_kernel *pk, wavec_sym s, wavec_expr e,
                                wavec_loc loc) {
  BUILD_ST(pk, default_expr(&pk->k, s, e, loc));
}

/* ---- mappings ------------------------------------------------------------------ */
static wv_mapping *mapping(wv_kernel *k, wavec_mapping m, wavec_loc loc) {
  if (m == 0 || m > k->mappings.n)
    wv_fail(k->ctx, D_INVALID, loc, "invalid mapping handle %u", m);
  return &k->mappings.v[m - 1];
}

static wavec_mapping mapping_begin(wv_kernel *k, const char *name,
                                   wavec_loc loc) {
  if (!name)
    wv_fail(k->ctx, D_INVALID, loc, "mapping name is NULL");
  for (uint32_t i = 0; i < k->mappings.n; i++)
    if (strcmp(k->mappings.v[i].name, name) == 0)
      wv_fail(k->ctx, D_REDEFINED, loc, "mapping '%s' is defined twice", name);
  wv_mapping m = {0};
  m.name = wv_strdup(k->ctx, name);
  m.loc = loc;
  vec_push(k->ctx, &k->mappings, m);
  return k->mappings.n;
}

wavec_mapping wavec_mapping_begin(wavec_kernel *pk, const char *name,
                                  wavec_loc loc) {
  BUILD(pk, 0, mapping_begin(&pk->k, name, loc));
}

static wavec_sym mapping_iter(wv_kernel *k, wavec_mapping mh, const char *name,
                              wavec_loc loc) {
  if (!name)
    wv_fail(k->ctx, D_INVALID, loc, "iterator name is NULL");
  wv_mapping *m = mapping(k, mh, loc);
  if (m->closed)
    wv_fail(k->ctx, D_MAPPING, loc, "mapping '%s' is already closed", m->name);
  for (uint32_t i = 0; i < m->iters.n; i++)
    if (strcmp(name, wavec_symbol_name(k->ctx, m->iters.v[i]) +
                         strlen(m->name) + 1) == 0)
      wv_fail(k->ctx, D_REDEFINED, loc,
              "iterator '%s' of mapping '%s' is declared twice", name,
              m->name);
  /* Iterators are private: "mapping.iter" cannot clash with user names. */
  wv_buf b;
  wv_buf_init(&b, k->ctx);
  wv_buf_printf(&b, "%s.%s", m->name, name);
  wavec_sym s = wavec_symbol(k->ctx, wv_buf_str(&b));
  vec_push(k->ctx, &m->iters, s);
  return s;
}

wavec_sym wavec_mapping_iter(wavec_kernel *pk, wavec_mapping m,
                             const char *name, wavec_loc loc) {
  BUILD(pk, 0, mapping_iter(&pk->k, m, name, loc));
}

static wavec_status mapping_entry(wv_kernel *k, wavec_mapping mh, bool input,
                                  wavec_sym dim, ex_t e, wavec_loc loc) {
  wv_mapping *m = mapping(k, mh, loc);
  if (m->closed)
    wv_fail(k->ctx, D_MAPPING, loc, "mapping '%s' is already closed", m->name);
  if (!e)
    wv_fail(k->ctx, D_INVALID, loc, "invalid expression handle");
  wv_dimvals *list = input ? &m->inputs : &m->outputs;
  for (uint32_t i = 0; i < list->n; i++)
    if (list->v[i].dim == dim)
      wv_fail(k->ctx, D_MAPPING, loc, "'%s' appears twice in the %s of '%s'",
              sym_name(k, dim), input ? "inputs" : "outputs", m->name);
  wv_dimval v = {dim, e, loc};
  vec_push(k->ctx, list, v);
  return WAVEC_OK;
}

wavec_status wavec_mapping_input(wavec_kernel *pk, wavec_mapping m,
                                 wavec_sym dim, wavec_expr e, wavec_loc loc) {
  BUILD_ST(pk, mapping_entry(&pk->k, m, true, dim, e, loc));
}

wavec_status wavec_mapping_output(wavec_kernel *pk, wavec_mapping m,
                                  wavec_sym dim, wavec_expr e, wavec_loc loc) {
  BUILD_ST(pk, mapping_entry(&pk->k, m, false, dim, e, loc));
}

/* The name an iterator of mapping m was declared with (its symbol is
 * "mapping.iter"). */
static const char *iter_name(wv_kernel *k, const wv_mapping *m,
                             wavec_sym it) {
  return wavec_symbol_name(k->ctx, it) + strlen(m->name) + 1;
}

static wavec_status mapping_end(wv_kernel *k, wavec_mapping mh,
                                wavec_loc loc) {
  wv_mapping *m = mapping(k, mh, loc);
  if (!m->inputs.n || !m->outputs.n)
    wv_fail(k->ctx, D_MAPPING, loc, "mapping '%s' needs inputs and outputs",
            m->name);
  if (m->outputs.n > WV_MAX_DIMS)
    wv_fail(k->ctx, D_MAPPING, loc, "mapping '%s' has too many outputs",
            m->name);
  /* each output is one of the iterators, each iterator at most one output:
   * the register coordinate names it */
  for (uint32_t o = 0; o < m->outputs.n; o++) {
    wavec_sym it = ex_sym_of(k->ctx, m->outputs.v[o].e);
    bool found = false;
    for (uint32_t j = 0; j < m->iters.n && it; j++)
      found |= m->iters.v[j] == it;
    if (!found)
      wv_fail(k->ctx, D_MAPPING, m->outputs.v[o].loc,
              "mapping '%s': output '%s' must be one of the mapping's "
              "iterators",
              m->name, sym_name(k, m->outputs.v[o].dim));
    for (uint32_t p = 0; p < o; p++)
      if (ex_sym_of(k->ctx, m->outputs.v[p].e) == it)
        wv_fail(k->ctx, D_MAPPING, m->outputs.v[o].loc,
                "mapping '%s': outputs '%s' and '%s' are both iterator "
                "'%s'",
                m->name, sym_name(k, m->outputs.v[p].dim),
                sym_name(k, m->outputs.v[o].dim), iter_name(k, m, it));
  }
  /* an input may use only iterators that an output binds */
  for (uint32_t i = 0; i < m->inputs.n; i++)
    for (uint32_t j = 0; j < m->iters.n; j++) {
      bool bound = false;
      for (uint32_t o = 0; o < m->outputs.n; o++)
        bound |= ex_sym_of(k->ctx, m->outputs.v[o].e) == m->iters.v[j];
      if (!bound && ex_uses(k->ctx, m->inputs.v[i].e, m->iters.v[j]))
        wv_fail(k->ctx, D_MAPPING, m->inputs.v[i].loc,
                "mapping '%s': input '%s' uses iterator '%s', which no "
                "output gives",
                m->name, sym_name(k, m->inputs.v[i].dim),
                iter_name(k, m, m->iters.v[j]));
    }
  m->closed = true;
  return WAVEC_OK;
}

wavec_status wavec_mapping_end(wavec_kernel *pk, wavec_mapping m,
                               wavec_loc loc) {
  BUILD_ST(pk, mapping_end(&pk->k, m, loc));
}

/* The mapping must relate exactly the memory's dims (inputs) and give the
 * register dims (outputs); returns the register type. */
static wv_type mapped_type(wv_kernel *k, wv_mapping *m, const wv_node *mem,
                           wavec_loc loc) {
  if (!m->closed)
    wv_fail(k->ctx, D_MAPPING, loc, "mapping '%s' is not closed", m->name);
  if (m->inputs.n != mem->type.n)
    wv_fail(k->ctx, D_MAPPING, loc,
            "mapping '%s' has %u input%s but memory '%s' has %u dimension%s",
            m->name, m->inputs.n, m->inputs.n == 1 ? "" : "s", mem->name,
            mem->type.n, mem->type.n == 1 ? "" : "s");
  for (uint32_t i = 0; i < m->inputs.n; i++)
    if (!wv_type_has(&mem->type, m->inputs.v[i].dim))
      wv_fail(k->ctx, D_MAPPING, loc,
              "mapping '%s' gives input '%s', which memory '%s' %s lacks",
              m->name, sym_name(k, m->inputs.v[i].dim), mem->name,
              type_str(k, &mem->type));
  wv_type t = {.dt = mem->type.dt, .n = (uint8_t)m->outputs.n};
  for (uint32_t i = 0; i < m->outputs.n; i++)
    t.dims[i] = m->outputs.v[i].dim;
  return t;
}

/* ---- values ------------------------------------------------------------------ */
static wavec_value scalar(wv_kernel *k, double v, wavec_sym s, wavec_loc loc) {
  wv_node n = {.op = WAVEC_OP_SCALAR, .loc = loc, .fval = v, .sym = s};
  n.type.dt = WAVEC_F32;
  return add(k, &n);
}

wavec_value wavec_scalar(wavec_kernel *pk, double v, wavec_loc loc) {
  BUILD(pk, 0, scalar(&pk->k, v, 0, loc));
}

wavec_value wavec_scalar_sym(wavec_kernel *pk, wavec_sym s, wavec_loc loc) {
  BUILD(pk, 0, scalar(&pk->k, 0.0, s, loc));
}

/* 8-bit values (f8e4m3, f8e5m2, i8) are loaded, stored, converted by
 * cast() and fed to mma; anything else computes in a wider type. */
static void wide(wv_kernel *k, wavec_dtype dt, const char *what,
                 wavec_loc loc) {
  if (dt == WAVEC_F8E4M3 || dt == WAVEC_F8E5M2 || dt == WAVEC_I8)
    wv_fail(k->ctx, D_DTYPE_MISMATCH, loc,
            "%s of %s: 8-bit values are read, written, cast and fed to mma; "
            "cast() to %s first",
            what, wv_dtypes[dt].name, dt == WAVEC_I8 ? "i32" : "f16 or f32");
}

/* i1 values (comparisons' results) are compared, selected with and cast;
 * arithmetic and reductions take numbers. */
static void numeric(wv_kernel *k, wavec_dtype dt, const char *what,
                    wavec_loc loc) {
  if (dt == WAVEC_I1)
    wv_fail(k->ctx, D_DTYPE_MISMATCH, loc,
            "%s of i1: i1 values (comparisons' results) go to select(), "
            "comparisons and cast(); cast() to i32 or f32 first (to count "
            "the true values: sum(cast(c, i32), dim = ...))",
            what);
}

static wavec_value reg(wv_kernel *k, size_t ndims, const wavec_sym *dims,
                       wavec_dtype dt, wavec_value init, wavec_loc loc) {
  wv_node *in = operand(k, init, loc);
  if (!is_scalar(in))
    wv_fail(k->ctx, D_INVALID, loc,
            "Register[...] takes a constant or a float hyperparameter");
  check_dtype(k, dt, loc);
  wide(k, dt, "a Register", loc);
  wv_node n = {.op = WAVEC_OP_REGISTER, .loc = loc, .nops = 1, .ops = &init};
  check_dims(k, ndims, dims, loc, &n.type);
  n.type.dt = dt;
  return add(k, &n);
}

wavec_value wavec_register(wavec_kernel *pk, size_t ndims,
                           const wavec_sym *dims, wavec_dtype dt,
                           wavec_value init, wavec_loc loc) {
  BUILD(pk, 0, reg(&pk->k, ndims, dims, dt, init, loc));
}

static ex_t check_ept(wv_kernel *k, ex_t ept, wavec_loc loc) {
  int64_t v;
  if (ept && ex_is_const(k->ctx, ept, &v) && v <= 0)
    wv_fail(k->ctx, D_EPT, loc, "elements_per_thread = %lld is not positive",
            (long long)v);
  return ept;
}

static wavec_value read_(wv_kernel *k, wavec_value mem, ex_t ept,
                         wavec_mapping mh, wavec_value fill, wavec_loc loc) {
  wv_node *m = mem_operand(k, mem, loc);
  uint32_t ops[2] = {mem, fill};
  if (fill && !is_scalar(operand(k, fill, loc)))
    wv_fail(k->ctx, D_NOT_REGISTER, loc,
            "a read's fill is a constant (a number, inf or a hyperparameter "
            "name), not a value");
  wv_node n = {.op = WAVEC_OP_READ, .loc = loc, .nops = fill ? 2 : 1,
               .ops = ops};
  n.type = m->type;
  n.mem = mem;
  n.ept = check_ept(k, ept, loc);
  if (mh) {
    n.type = mapped_type(k, mapping(k, mh, loc), m, loc);
    n.mapping = mh;
  }
  return add(k, &n);
}

wavec_value wavec_read(wavec_kernel *pk, wavec_value mem, wavec_expr ept,
                       wavec_mapping mapping_, wavec_loc loc) {
  BUILD(pk, 0, read_(&pk->k, mem, ept, mapping_, 0, loc));
}

wavec_value wavec_read_fill(wavec_kernel *pk, wavec_value mem,
                            wavec_expr ept, wavec_mapping mapping_,
                            wavec_value fill, wavec_loc loc) {
  BUILD(pk, 0, read_(&pk->k, mem, ept, mapping_, fill, loc));
}

static wavec_value write_(wv_kernel *k, wavec_value v, wavec_value mem,
                          ex_t ept, wavec_mapping mh, bool add_,
                          wavec_loc loc) {
  wv_node *x = reg_operand(k, v, loc);
  wv_node *m = mem_operand(k, mem, loc);
  wv_type want = m->type;
  if (mh)
    want = mapped_type(k, mapping(k, mh, loc), m, loc);
  if (is_scalar(x) || x->type.n != want.n || !wv_dims_subset(&x->type, &want))
    wv_fail(k->ctx, D_WRITE_SHAPE, loc,
            "cannot write %s to '%s', which holds %s", type_str(k, &x->type),
            m->name, type_str(k, &want));
  if (x->type.dt != want.dt)
    wv_fail(k->ctx, D_DTYPE_MISMATCH, loc,
            "cannot write %s to '%s' of %s; cast() it first",
            wv_dtypes[x->type.dt].name, m->name, wv_dtypes[want.dt].name);
  if (add_ && want.dt != WAVEC_F32)
    wv_fail(k->ctx, D_DTYPE_MISMATCH, loc,
            "write(..., reduce = add) adds f32 values into f32 memory, but "
            "'%s' holds %s; accumulate into an f32 tensor and cast it in a "
            "second kernel",
            m->name, wv_dtypes[want.dt].name);
  uint32_t ops[2] = {v, mem};
  wv_node n = {.op = WAVEC_OP_WRITE, .loc = loc, .nops = 2, .ops = ops};
  n.mem = mem;
  n.flags = add_ ? WV_WRITE_ADD : 0;
  n.ept = check_ept(k, ept, loc);
  n.mapping = mh;
  return add(k, &n);
}

wavec_value wavec_write(wavec_kernel *pk, wavec_value v, wavec_value mem,
                        wavec_expr ept, wavec_mapping mapping_,
                        wavec_loc loc) {
  BUILD(pk, 0, write_(&pk->k, v, mem, ept, mapping_, false, loc));
}

wavec_value wavec_write_add(wavec_kernel *pk, wavec_value v, wavec_value mem,
                            wavec_expr ept, wavec_mapping mapping_,
                            wavec_loc loc) {
  BUILD(pk, 0, write_(&pk->k, v, mem, ept, mapping_, true, loc));
}

/* Where an mma operand lacks batch dims of the accumulator (one weight for
 * every batch): how to give them, for the message; else "". */
static const char *shared_hint(wv_kernel *k, const wv_type *op,
                               const wv_type *acc) {
  for (uint32_t i = 0; i + 2 < acc->n; i++)
    if (!wv_type_has(op, acc->dims[i])) {
      wv_buf b;
      wv_buf_init(&b, k->ctx);
      wv_buf_printf(&b, "; an operand the same for every '%s' is read "
                        "through a mapping whose outputs add '%s' "
                        "(docs/LANGUAGE-additions.md, 'Staged reads through "
                        "mappings'), or broadcast to it",
                    sym_name(k, acc->dims[i]), sym_name(k, acc->dims[i]));
      return wv_buf_str(&b);
    }
  return "";
}

/* mma(lhs [.., M, K], rhs [.., N, K], acc [.., M, N]): M and N are acc's
 * last two dims, K = (lhs ∩ rhs) − acc, the rest are batch dims that all
 * three share. Dims are matched by name; their order does not matter. */
static wavec_value mma(wv_kernel *k, wavec_value a, wavec_value b,
                       wavec_value c, wavec_loc loc) {
  wv_node *lhs = reg_operand(k, a, loc), *rhs = reg_operand(k, b, loc),
          *acc = reg_operand(k, c, loc);
  const wv_type *ta = &lhs->type, *tb = &rhs->type, *tc = &acc->type;
  if (tc->n < 2)
    wv_fail(k->ctx, D_MMA_SHAPE, loc,
            "mma accumulator %s needs at least two dimensions [..., M, N]",
            type_str(k, tc));
  wavec_sym M = tc->dims[tc->n - 2], N = tc->dims[tc->n - 1];
  wavec_sym K = 0;
  for (uint32_t i = 0; i < ta->n; i++) {
    wavec_sym d = ta->dims[i];
    if (wv_type_has(tb, d) && !wv_type_has(tc, d)) {
      if (K)
        wv_fail(k->ctx, D_MMA_SHAPE, loc,
                "mma has two reduction dimensions '%s' and '%s' (lhs %s, rhs "
                "%s)",
                sym_name(k, K), sym_name(k, d), type_str(k, ta),
                type_str(k, tb));
      K = d;
    }
  }
  if (!K)
    wv_fail(k->ctx, D_MMA_SHAPE, loc,
            "mma has no reduction dimension: lhs %s and rhs %s share no "
            "dimension that the accumulator %s lacks",
            type_str(k, ta), type_str(k, tb), type_str(k, tc));
  /* lhs = batch ∪ {M, K}, rhs = batch ∪ {N, K} */
  if (ta->n != tc->n || !wv_type_has(ta, M) || wv_type_has(ta, N))
    wv_fail(k->ctx, D_MMA_SHAPE, loc,
            "mma lhs %s must have the accumulator's dims without '%s' and "
            "with '%s' (accumulator %s)%s",
            type_str(k, ta), sym_name(k, N), sym_name(k, K), type_str(k, tc),
            shared_hint(k, ta, tc));
  if (tb->n != tc->n || !wv_type_has(tb, N) || wv_type_has(tb, M))
    wv_fail(k->ctx, D_MMA_SHAPE, loc,
            "mma rhs %s must have the accumulator's dims without '%s' and "
            "with '%s' (accumulator %s)%s",
            type_str(k, tb), sym_name(k, M), sym_name(k, K), type_str(k, tc),
            shared_hint(k, tb, tc));
  for (uint32_t i = 0; i + 2 < tc->n; i++) {
    wavec_sym d = tc->dims[i];
    if (!wv_type_has(ta, d) || !wv_type_has(tb, d))
      wv_fail(k->ctx, D_MMA_SHAPE, loc,
              "mma batch dimension '%s' of the accumulator %s is missing from "
              "lhs %s or rhs %s",
              sym_name(k, d), type_str(k, tc), type_str(k, ta),
              type_str(k, tb));
  }
  /* operand type -> accumulator type; the operands share one type */
  static const wavec_dtype acc_of[WAVEC_DTYPE_COUNT] = {
      [WAVEC_F16] = WAVEC_F32,    [WAVEC_BF16] = WAVEC_F32,
      [WAVEC_F8E4M3] = WAVEC_F32, [WAVEC_F8E5M2] = WAVEC_F32,
      [WAVEC_I8] = WAVEC_I32,     [WAVEC_F32] = WAVEC_DTYPE_COUNT,
      [WAVEC_I32] = WAVEC_DTYPE_COUNT, [WAVEC_I1] = WAVEC_DTYPE_COUNT};
  if (ta->dt != tb->dt || acc_of[ta->dt] == WAVEC_DTYPE_COUNT)
    wv_fail(k->ctx, D_MMA_DTYPE, loc,
            "mma operands must both be f16, bf16, f8e4m3, f8e5m2 or i8 "
            "(the same type), not %s and %s",
            wv_dtypes[ta->dt].name, wv_dtypes[tb->dt].name);
  if (tc->dt != acc_of[ta->dt])
    wv_fail(k->ctx, D_MMA_DTYPE, loc,
            "mma accumulator of %s operands must be %s, not %s",
            wv_dtypes[ta->dt].name, wv_dtypes[acc_of[ta->dt]].name,
            wv_dtypes[tc->dt].name);
  uint32_t ops[3] = {a, b, c};
  wv_node n = {.op = WAVEC_OP_MMA, .loc = loc, .nops = 3, .ops = ops};
  n.type = *tc;
  n.sym = K;
  return add(k, &n);
}

wavec_value wavec_mma(wavec_kernel *pk, wavec_value lhs, wavec_value rhs,
                      wavec_value acc, wavec_loc loc) {
  BUILD(pk, 0, mma(&pk->k, lhs, rhs, acc, loc));
}

static wavec_value unary(wv_kernel *k, wavec_op op, wavec_value v,
                         wavec_loc loc) {
  if ((unsigned)op >= WAVEC_OP_COUNT || wv_ops[op].cls != 'U')
    wv_fail(k->ctx, D_INVALID, loc, "op %d is not a unary op", (int)op);
  wv_node *x = reg_operand(k, v, loc);
  wide(k, x->type.dt, wv_ops[op].name, loc);
  numeric(k, x->type.dt, wv_ops[op].name, loc);
  if (op != WAVEC_OP_NEG && op != WAVEC_OP_ABS && !wv_dtypes[x->type.dt].is_float)
    wv_fail(k->ctx, D_DTYPE_MISMATCH, loc, "%s needs a float operand, not %s",
            wv_ops[op].name, wv_dtypes[x->type.dt].name);
  wv_node n = {.op = op, .loc = loc, .nops = 1, .ops = &v};
  n.type = x->type;
  return add(k, &n);
}

wavec_value wavec_unary(wavec_kernel *pk, wavec_op op, wavec_value x,
                        wavec_loc loc) {
  BUILD(pk, 0, unary(&pk->k, op, x, loc));
}

/* The type of an elementwise op over a and b: a scalar takes the other's
 * type; otherwise the dtypes agree and one's dims contain the other's. */
static wv_type unify(wv_kernel *k, const wv_node *a, const wv_node *b,
                     const char *what, wavec_loc loc) {
  if (is_scalar(a))
    return b->type;
  if (is_scalar(b))
    return a->type;
  if (a->type.dt != b->type.dt)
    wv_fail(k->ctx, D_DTYPE_MISMATCH, loc,
            "%s of %s and %s: element types differ; cast() one of them", what,
            type_str(k, &a->type), type_str(k, &b->type));
  if (wv_dims_subset(&b->type, &a->type))
    return a->type;
  if (wv_dims_subset(&a->type, &b->type))
    return b->type;
  wv_fail(k->ctx, D_BINARY_DIMS, loc,
          "%s of %s and %s: neither operand's dimensions contain the other's",
          what, type_str(k, &a->type), type_str(k, &b->type));
}

/* Is n an expression of literals and hyperparameters alone (no dims,
 * every leaf a scalar, only elementwise ops between)? */
static bool scalar_expr(wv_kernel *k, const wv_node *n) {
  if (is_scalar(n))
    return true;
  if (n->type.n || (n->op < WAVEC_OP_COUNT && wv_ops[n->op].cls != 'U' &&
                    wv_ops[n->op].cls != 'B'))
    return false;
  for (uint32_t i = 0; i < n->nops; i++)
    if (!scalar_expr(k, wv_get(k->g, n->ops[i])))
      return false;
  return n->nops > 0;
}

static wavec_value cast(wv_kernel *k, wavec_value v, wavec_dtype dt,
                        wavec_loc loc);

/* An expression of hyperparameters *v (*x; A + 1, -WIN: computed in f32)
 * takes the dtype of the other operand y as cast() gives it, as a lone
 * one does. */
static void take_dtype(wv_kernel *k, wavec_value *v, wv_node **x,
                       const wv_node *y, wavec_loc loc) {
  if (!is_scalar(*x) && scalar_expr(k, *x) && !scalar_expr(k, y) &&
      (*x)->type.dt != y->type.dt) {
    *v = cast(k, *v, y->type.dt, loc);
    *x = reg_operand(k, *v, loc);
  }
}

static wavec_value binary(wv_kernel *k, wavec_op op, wavec_value a,
                          wavec_value b, wavec_loc loc) {
  if ((unsigned)op >= WAVEC_OP_COUNT ||
      (wv_ops[op].cls != 'B' && wv_ops[op].cls != 'C'))
    wv_fail(k->ctx, D_INVALID, loc, "op %d is not a binary op", (int)op);
  wv_node *x = reg_operand(k, a, loc), *y = reg_operand(k, b, loc);
  take_dtype(k, &a, &x, y, loc);
  take_dtype(k, &b, &y, x, loc);
  uint32_t ops[2] = {a, b};
  wv_node n = {.op = op, .loc = loc, .nops = 2, .ops = ops};
  n.type = unify(k, x, y, wv_ops[op].name, loc);
  wide(k, n.type.dt, wv_ops[op].name, loc);
  if (wv_ops[op].cls == 'B')
    numeric(k, n.type.dt, wv_ops[op].name, loc);
  if (op == WAVEC_OP_REM && n.type.dt != WAVEC_I32)
    wv_fail(k->ctx, D_DTYPE_MISMATCH, loc,
            "%% (rem) takes i32 operands, not %s", wv_dtypes[n.type.dt].name);
  if (wv_ops[op].cls == 'C')
    n.type.dt = WAVEC_I1;
  return add(k, &n);
}

wavec_value wavec_binary(wavec_kernel *pk, wavec_op op, wavec_value a,
                         wavec_value b, wavec_loc loc) {
  BUILD(pk, 0, binary(&pk->k, op, a, b, loc));
}

static wavec_value select_(wv_kernel *k, wavec_value c, wavec_value a,
                           wavec_value b, wavec_loc loc) {
  wv_node *cn = reg_operand(k, c, loc), *x = reg_operand(k, a, loc),
          *y = reg_operand(k, b, loc);
  if (is_scalar(cn) || cn->type.dt != WAVEC_I1)
    wv_fail(k->ctx, D_SELECT, loc, "select condition %s is not i1",
            type_str(k, &cn->type));
  wv_type t = unify(k, x, y, "select", loc);
  wide(k, t.dt, "select", loc);
  if (!is_scalar(x) || !is_scalar(y)) {
    if (!wv_dims_subset(&cn->type, &t)) {
      if (!wv_dims_subset(&t, &cn->type))
        wv_fail(k->ctx, D_BINARY_DIMS, loc,
                "select condition %s and values %s: neither's dimensions "
                "contain the other's",
                type_str(k, &cn->type), type_str(k, &t));
      wavec_dtype dt = t.dt;
      t = cn->type;
      t.dt = dt;
    }
  } else {
    t = cn->type;
    t.dt = WAVEC_F32;
  }
  uint32_t ops[3] = {c, a, b};
  wv_node n = {.op = WAVEC_OP_SELECT, .loc = loc, .nops = 3, .ops = ops};
  n.type = t;
  return add(k, &n);
}

wavec_value wavec_select(wavec_kernel *pk, wavec_value cond, wavec_value a,
                         wavec_value b, wavec_loc loc) {
  BUILD(pk, 0, select_(&pk->k, cond, a, b, loc));
}

static wavec_value cast(wv_kernel *k, wavec_value v, wavec_dtype dt,
                        wavec_loc loc) {
  wv_node *x = reg_operand(k, v, loc);
  check_dtype(k, dt, loc);
  if (is_scalar(x))
    wv_fail(k->ctx, D_NOT_REGISTER, loc,
            "cast() of a constant: a number, a hyperparameter or a size "
            "takes the type of the value it meets (x * N is x's type); "
            "there is nothing to cast");
  wv_node n = {.op = WAVEC_OP_CAST, .loc = loc, .nops = 1, .ops = &v};
  n.type = x->type;
  n.type.dt = dt;
  return add(k, &n);
}

wavec_value wavec_cast(wavec_kernel *pk, wavec_value x, wavec_dtype dt,
                       wavec_loc loc) {
  BUILD(pk, 0, cast(&pk->k, x, dt, loc));
}

static wavec_value permute(wv_kernel *k, wavec_value v, size_t nd,
                           const wavec_sym *dims, wavec_loc loc) {
  wv_node *x = reg_operand(k, v, loc);
  wv_node n = {.op = WAVEC_OP_PERMUTE, .loc = loc, .nops = 1, .ops = &v};
  check_dims(k, nd, dims, loc, &n.type);
  n.type.dt = x->type.dt;
  if (is_scalar(x) || n.type.n != x->type.n ||
      !wv_dims_subset(&n.type, &x->type))
    wv_fail(k->ctx, D_PERMUTE, loc,
            "permute to %s is not a permutation of %s", type_str(k, &n.type),
            type_str(k, &x->type));
  return add(k, &n);
}

wavec_value wavec_permute(wavec_kernel *pk, wavec_value x, size_t ndims,
                          const wavec_sym *dims, wavec_loc loc) {
  BUILD(pk, 0, permute(&pk->k, x, ndims, dims, loc));
}

static wavec_value broadcast(wv_kernel *k, wavec_value v, size_t nd,
                             const wavec_sym *dims, wavec_loc loc) {
  wv_node *x = reg_operand(k, v, loc);
  wv_node n = {.op = WAVEC_OP_BROADCAST, .loc = loc, .nops = 1, .ops = &v};
  check_dims(k, nd, dims, loc, &n.type);
  n.type.dt = x->type.dt;
  if (!wv_dims_subset(&x->type, &n.type))
    wv_fail(k->ctx, D_BROADCAST, loc,
            "broadcast of %s to %s would drop a dimension",
            type_str(k, &x->type), type_str(k, &n.type));
  return add(k, &n);
}

wavec_value wavec_broadcast(wavec_kernel *pk, wavec_value x, size_t ndims,
                            const wavec_sym *dims, wavec_loc loc) {
  BUILD(pk, 0, broadcast(&pk->k, x, ndims, dims, loc));
}

static wavec_value reduce(wv_kernel *k, wavec_op op, wavec_value v,
                          wavec_value acc, wavec_sym dim, wavec_loc loc) {
  if ((unsigned)op >= WAVEC_OP_COUNT || wv_ops[op].cls != 'R')
    wv_fail(k->ctx, D_INVALID, loc, "op %d is not a reduction", (int)op);
  wv_node *x = reg_operand(k, v, loc);
  wide(k, x->type.dt, wv_ops[op].name, loc);
  numeric(k, x->type.dt, wv_ops[op].name, loc);
  if (!wv_type_has(&x->type, dim))
    wv_fail(k->ctx, D_REDUCE_DIM, loc, "%s over '%s', which %s lacks",
            wv_ops[op].name, sym_name(k, dim), type_str(k, &x->type));
  uint32_t ops[2] = {v, acc};
  wv_node n = {.op = op, .loc = loc, .nops = acc ? 2 : 1, .ops = ops,
               .sym = dim};
  n.type.dt = x->type.dt;
  for (uint32_t i = 0; i < x->type.n; i++)
    if (x->type.dims[i] != dim)
      n.type.dims[n.type.n++] = x->type.dims[i];
  if (acc) {
    wv_node *a = reg_operand(k, acc, loc);
    if (!wv_type_eq(&a->type, &n.type))
      wv_fail(k->ctx, D_REDUCE_DIM, loc,
              "%s accumulator %s does not match the result %s",
              wv_ops[op].name, type_str(k, &a->type), type_str(k, &n.type));
  }
  return add(k, &n);
}

wavec_value wavec_reduce(wavec_kernel *pk, wavec_op op, wavec_value x,
                         wavec_value acc, wavec_sym dim, wavec_loc loc) {
  BUILD(pk, 0, reduce(&pk->k, op, x, acc, dim, loc));
}

static wavec_value self_index(wv_kernel *k, wavec_sym dim, wavec_dtype dt,
                              wavec_loc loc) {
  check_dtype(k, dt, loc);
  wide(k, dt, "self_index", loc);
  wv_node n = {.op = WAVEC_OP_SELF_INDEX, .loc = loc, .sym = dim};
  check_dims(k, 1, &dim, loc, &n.type);
  n.type.dt = dt;
  return add(k, &n);
}

wavec_value wavec_self_index(wavec_kernel *pk, wavec_sym dim, wavec_dtype dt,
                             wavec_loc loc) {
  BUILD(pk, 0, self_index(&pk->k, dim, dt, loc));
}

/* ---- loops ------------------------------------------------------------------- */
/* An ITERATE node holds the inits as operands; its body block starts with one
 * CARRIED node per carried value; the body ends with a YIELD; the RESULT
 * nodes follow the ITERATE in the enclosing block (`index` of the ITERATE is
 * the id of its first RESULT). */
static wv_node *loop_node(wv_kernel *k, wavec_loop l, wavec_loc loc) {
  if (l == 0 || l >= k->g->nodes.n || node(k, l)->op != WAVEC_OP_ITERATE)
    wv_fail(k->ctx, D_INVALID, loc, "invalid loop handle %u", l);
  return node(k, l);
}

static wavec_loop loop_begin(wv_kernel *k, wavec_sym dim, size_t n,
                             const wavec_value *init, wavec_loc loc) {
  if (dim == 0 || dim >= k->ctx->sym_names.n)
    wv_fail(k->ctx, D_INVALID, loc, "invalid symbol handle %u", dim);
  for (uint32_t i = 0; i < k->block_stack.n; i++) {
    uint32_t owner = k->g->blocks.v[k->block_stack.v[i]].owner;
    if (owner && node(k, owner)->sym == dim)
      wv_fail(k->ctx, D_LOOP, loc, "iterate over '%s' inside an iterate over "
              "the same dimension", sym_name(k, dim));
  }
  if (n && !init)
    wv_fail(k->ctx, D_INVALID, loc, "%zu carried values but init is NULL", n);
  for (size_t i = 0; i < n; i++)
    if (is_scalar(reg_operand(k, init[i], loc)))
      wv_fail(k->ctx, D_LOOP, loc,
              "carried value %zu starts from a constant; use Register[...]",
              i + 1);
  wv_node it = {.op = WAVEC_OP_ITERATE, .loc = loc, .sym = dim,
                .nops = (uint32_t)n, .ops = (uint32_t *)init};
  uint32_t id = add(k, &it);
  uint32_t body = wv_graph_add_block(k->ctx, k->g, id);
  node(k, id)->body = body;
  vec_push(k->ctx, &k->block_stack, body);
  for (size_t i = 0; i < n; i++) {
    wv_node c = {.op = WAVEC_OP_CARRIED, .loc = loc, .loop = id,
                 .index = (uint32_t)i};
    c.type = node(k, init[i])->type;
    c.name = node(k, init[i])->name;
    add(k, &c);
  }
  return id;
}

wavec_loop wavec_loop_begin(wavec_kernel *pk, wavec_sym dim, size_t n,
                            const wavec_value *init, wavec_loc loc) {
  BUILD(pk, 0, loop_begin(&pk->k, dim, n, init, loc));
}

static wavec_value loop_carried(wv_kernel *k, wavec_loop l, size_t i) {
  wv_node *it = loop_node(k, l, k->loc);
  if (i >= it->nops)
    wv_fail(k->ctx, D_INVALID, it->loc, "loop has %u carried values, not %zu",
            it->nops, i + 1);
  return k->g->blocks.v[it->body].nodes.v[i];
}

wavec_value wavec_loop_carried(wavec_kernel *pk, wavec_loop l, size_t i) {
  BUILD(pk, 0, loop_carried(&pk->k, l, i));
}

static wavec_status loop_bound(wv_kernel *k, wavec_loop l, wavec_rel rel,
                               wavec_sym dim, wavec_loc loc) {
  wv_node *it = loop_node(k, l, loc);
  if (rel <= WAVEC_REL_NONE || rel > WAVEC_REL_GE)
    wv_fail(k->ctx, D_INVALID, loc, "invalid relation %d", (int)rel);
  if (!dim || dim >= k->ctx->sym_names.n)
    wv_fail(k->ctx, D_INVALID, loc, "invalid symbol handle");
  if (it->rel)
    wv_fail(k->ctx, D_LOOP, loc, "this iterate is already bounded");
  if (dim == it->sym)
    wv_fail(k->ctx, D_LOOP, loc, "iterate over '%s' cannot be bounded by "
            "'%s' itself", sym_name(k, dim), sym_name(k, dim));
  it->rel = rel;
  it->rel_dim = dim;
  it->rel_loc = loc;
  return WAVEC_OK;
}

wavec_status wavec_loop_bound(wavec_kernel *pk, wavec_loop l, wavec_rel rel,
                              wavec_sym dim, wavec_loc loc) {
  BUILD_ST(pk, loop_bound(&pk->k, l, rel, dim, loc));
}

static wavec_status loop_bound_offset(wv_kernel *k, wavec_loop l,
                                      wavec_expr off, wavec_loc loc) {
  wv_node *it = loop_node(k, l, loc);
  if (!it->rel)
    wv_fail(k->ctx, D_LOOP, loc, "an offset bounds a bounded iterate: call "
            "wavec_loop_bound first");
  if (!off)
    wv_fail(k->ctx, D_INVALID, loc, "invalid expression handle");
  it->rel_off = (ex_t)off;
  return WAVEC_OK;
}

wavec_status wavec_loop_bound_offset(wavec_kernel *pk, wavec_loop l,
                                     wavec_expr off, wavec_loc loc) {
  BUILD_ST(pk, loop_bound_offset(&pk->k, l, off, loc));
}

static wavec_status loop_yield(wv_kernel *k, wavec_loop l, size_t n,
                               const wavec_value *next, wavec_loc loc) {
  wv_node *it = loop_node(k, l, loc);
  if (cur_block(k) != it->body)
    wv_fail(k->ctx, D_YIELD, loc, "yield must end the innermost iterate");
  if (n != it->nops)
    wv_fail(k->ctx, D_YIELD, loc,
            "yield gives %zu values but the iterate carries %u", n, it->nops);
  if (n && !next)
    wv_fail(k->ctx, D_INVALID, loc, "yield of %zu values but next is NULL", n);
  for (size_t i = 0; i < n; i++) {
    wv_node *v = reg_operand(k, next[i], loc);
    wv_node *c = node(k, k->g->blocks.v[it->body].nodes.v[i]);
    if (is_scalar(v) || !wv_type_eq(&v->type, &c->type))
      wv_fail(k->ctx, D_YIELD, loc,
              "yielded value %zu is %s but carried '%s' is %s", i + 1,
              type_str(k, &v->type), c->name ? c->name : "?",
              type_str(k, &c->type));
  }
  wv_node y = {.op = WAVEC_OP_YIELD, .loc = loc, .loop = l,
               .nops = (uint32_t)n, .ops = (uint32_t *)next};
  add(k, &y);
  k->block_stack.n--;
  for (size_t i = 0; i < n; i++) {
    it = node(k, l); /* add() may move the node array */
    wv_node r = {.op = WAVEC_OP_RESULT, .loc = it->loc, .loop = l,
                 .index = (uint32_t)i};
    r.type = node(k, k->g->blocks.v[it->body].nodes.v[i])->type;
    uint32_t rid = add(k, &r);
    if (i == 0)
      node(k, l)->index = rid;
  }
  return WAVEC_OK;
}

wavec_status wavec_loop_yield(wavec_kernel *pk, wavec_loop l, size_t n,
                              const wavec_value *next, wavec_loc loc) {
  BUILD_ST(pk, loop_yield(&pk->k, l, n, next, loc));
}

static wavec_value loop_result(wv_kernel *k, wavec_loop l, size_t i) {
  wv_node *it = loop_node(k, l, k->loc);
  if (!it->index)
    wv_fail(k->ctx, D_LOOP, it->loc, "loop result used before its yield");
  if (i >= it->nops)
    wv_fail(k->ctx, D_INVALID, it->loc, "loop has %u results, not %zu",
            it->nops, i + 1);
  return it->index + (uint32_t)i;
}

wavec_value wavec_loop_result(wavec_kernel *pk, wavec_loop l, size_t i) {
  BUILD(pk, 0, loop_result(&pk->k, l, i));
}

static int set_name(wv_kernel *k, wavec_value v, const char *name) {
  if (v && v < k->g->nodes.n && name)
    node(k, v)->name = wv_strdup(k->ctx, name);
  return 0;
}

void wavec_value_name(wavec_kernel *pk, wavec_value v, const char *name) {
  if (!pk)
    return;
  wavec_ctx *ctx = pk->k.ctx;
  WV_GUARD(ctx, );
  set_name(&pk->k, v, name);
  WV_UNGUARD(ctx);
}
