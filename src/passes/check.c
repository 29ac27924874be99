/* Pass `check`. require: a built (ended) kernel graph.
 * Whole-kernel rules that no single builder call can see. */
#include "passes/passes.h"
#include "target/target.h"

static bool some_type_has(wv_kernel *k, wavec_sym d) {
  for (uint32_t id = 1; id < k->g->nodes.n; id++)
    if (wv_type_has(&wv_get(k->g, id)->type, d))
      return true;
  return false;
}

static const wv_constraint *find_cons(wv_kernel *k, wv_cons_kind kind,
                                      wavec_sym d) {
  for (uint32_t i = 0; i < k->constraints.n; i++)
    if (k->constraints.v[i].kind == kind && k->constraints.v[i].dim == d)
      return &k->constraints.v[i];
  return NULL;
}

/* Does node id lie in the body of an iterate over d (at any depth)? */
static bool inside_loop_over(wv_kernel *k, uint32_t id, wavec_sym d) {
  for (uint32_t b = wv_get(k->g, id)->block; b;) {
    const wv_node *it = wv_get(k->g, k->g->blocks.v[b].owner);
    if (it->sym == d)
      return true;
    b = it->block;
  }
  return false;
}

/* A value over a dim that a loop tiles exists a tile at a time, in that
 * loop's body: outside it no tile of the dim is chosen. (Constants hold
 * the same everywhere and are exempt; so are the tensors themselves.) */
static void check_tiled_outside(wv_kernel *k) {
  wavec_ctx *ctx = k->ctx;
  for (uint32_t i = 0; i < k->constraints.n; i++) {
    const wv_constraint *c = &k->constraints.v[i];
    if (c->kind != WV_TILING)
      continue;
    for (uint32_t id = 1; id < k->g->nodes.n; id++) {
      const wv_node *n = wv_get(k->g, id);
      if (n->op == WAVEC_OP_ARG || n->op == WAVEC_OP_REGISTER ||
          n->op == WAVEC_OP_SCALAR || n->op == WAVEC_OP_WRITE ||
          !wv_type_has(&n->type, c->dim) || inside_loop_over(k, id, c->dim))
        continue;
      const char *dn = wavec_symbol_name(ctx, c->dim);
      wv_fail(ctx, D_LOOP, n->loc,
              "this %s is over '%s', which tiling(%s, ...) walks a tile at "
              "a time in an iterate over '%s'; outside that loop no tile of "
              "'%s' is chosen: compute it in the loop, or walk '%s' again "
              "in an iterate of its own",
              wv_ops[n->op].name, dn, dn, dn, dn, dn);
    }
  }
}

wavec_status wv_pass_check(wv_kernel *k) {
  wavec_ctx *ctx = k->ctx;
  static const char *const kinds[] = {"workgroup", "wave", "tiling"};
  for (uint32_t i = 0; i < k->constraints.n; i++) {
    wv_constraint *c = &k->constraints.v[i];
    if (!some_type_has(k, c->dim))
      wv_fail(ctx, D_CONSTRAINT_DIM, c->loc,
              "%s constraint names '%s', which no tensor of kernel '%s' has",
              kinds[c->kind], wavec_symbol_name(ctx, c->dim), k->name);
  }
  for (uint32_t i = 0; i < k->hw.vector_shapes.n; i++) {
    wv_dimval *v = &k->hw.vector_shapes.v[i];
    if (!some_type_has(k, v->dim))
      wv_fail(ctx, D_CONSTRAINT_DIM, v->loc,
              "vector_shapes names '%s', which no tensor of kernel '%s' has",
              wavec_symbol_name(ctx, v->dim), k->name);
  }
  int mma = ctx->hw_mma >= 0 ? ctx->hw_mma : k->hw.mma;
  for (uint32_t id = 1; id < k->g->nodes.n; id++) {
    wv_node *n = wv_get(k->g, id);
    if (n->op == WAVEC_OP_ITERATE && !find_cons(k, WV_TILING, n->sym))
      wv_fail(ctx, D_LOOP, n->loc,
              "iterate over '%s' needs a tiling(%s, TILE) constraint",
              wavec_symbol_name(ctx, n->sym), wavec_symbol_name(ctx, n->sym));
    if (n->op == WAVEC_OP_ITERATE && n->rel &&
        !find_cons(k, WV_WORKGROUP, n->rel_dim))
      wv_fail(ctx, D_LOOP, n->rel_loc,
              "iterate over '%s' is bounded by the workgroup's tile of '%s', "
              "but '%s' is not split over workgroups (it needs a "
              "workgroup(%s, TILE, AXIS) constraint)",
              wavec_symbol_name(ctx, n->sym), wavec_symbol_name(ctx, n->rel_dim),
              wavec_symbol_name(ctx, n->rel_dim),
              wavec_symbol_name(ctx, n->rel_dim));
    if (n->op == WAVEC_OP_MMA && mma >= 0) {
      /* the builder made the accumulator's type the operands' own */
      const wv_mma_info *mi = wv_mma_info_get((wavec_mma_kind)mma);
      wavec_dtype in = wv_get(k->g, n->ops[0])->type.dt;
      if (in != mi->in)
        wv_fail(ctx, D_MMA_DTYPE, n->loc,
                "mma operands are %s but the hardware mma %s takes %s",
                wv_dtypes[in].name, wv_mma_names[mma], wv_dtypes[mi->in].name);
    }
  }
  for (uint32_t i = 0; i < k->constraints.n; i++) {
    wv_constraint *c = &k->constraints.v[i];
    if (c->kind != WV_TILING)
      continue;
    bool walked = false;
    for (uint32_t id = 1; id < k->g->nodes.n && !walked; id++) {
      wv_node *n = wv_get(k->g, id);
      walked = n->op == WAVEC_OP_ITERATE && n->sym == c->dim;
    }
    if (!walked)
      wv_fail(ctx, D_CONSTRAINT_DIM, c->loc,
              "tiling(%s, ...) but no iterate walks '%s'",
              wavec_symbol_name(ctx, c->dim), wavec_symbol_name(ctx, c->dim));
  }
  check_tiled_outside(k);
  /* how constraints combine on a dim: a wave split needs the workgroup
   * split it divides; a dim is split over workgroups or walked by a loop,
   * not both */
  for (uint32_t i = 0; i < k->constraints.n; i++) {
    const wv_constraint *c = &k->constraints.v[i];
    const char *dn = wavec_symbol_name(ctx, c->dim);
    bool split = find_cons(k, WV_WORKGROUP, c->dim) != NULL;
    if (c->kind == WV_WAVE && !split)
      wv_fail(ctx, D_CONSTRAINT_DIM, c->loc,
              "wave(%s, ...) needs a workgroup(%s, ...) constraint to split",
              dn, dn);
    if (c->kind == WV_TILING && split)
      wv_fail(ctx, D_CONSTRAINT_DUP, c->loc,
              "'%s' is split over workgroups and walked by a loop; choose one",
              dn);
  }
  /* a run-time size is a value in arithmetic, not a constant: not a
   * Register's or a read's fill (lw_scalar_value relies on it) */
  for (uint32_t id = 1; id < k->g->nodes.n; id++) {
    wv_node *n = wv_get(k->g, id);
    bool reg = n->op == WAVEC_OP_REGISTER,
         fill = n->op == WAVEC_OP_READ && n->nops > 1;
    if (!reg && !fill)
      continue;
    wv_node *v = wv_get(k->g, n->ops[reg ? 0 : 1]);
    if (v->sym && wv_dynamic_of(k, v->sym))
      wv_fail(ctx, D_UNSUPPORTED, v->loc,
              "'%s' is a size known at run time: it is a value in "
              "arithmetic (x / %s), not a constant here (a Register's or "
              "a read's fill)",
              wavec_symbol_name(ctx, v->sym), wavec_symbol_name(ctx, v->sym));
  }
  /* values the source writes as constants (a tile of 0, threads_per_wave
   * = 48, stages = 0): bind says the same once every value is known */
  wv_value_rules(k, true);
  return WAVEC_OK;
}
