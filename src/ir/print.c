/* The deterministic kernel dump: header, constraints, graph. Everything in it
 * depends on the kernel only (never on addresses or hash order), so golden
 * files can pin it. */
#include "ir/ir.h"
#include "passes/dist.h"

static const char *sym(wv_kernel *k, wavec_sym s) {
  return wavec_symbol_name(k->ctx, s);
}

static void print_loc(wv_buf *b, uint32_t start, wavec_loc loc) {
  uint32_t col = b->n - start;
  for (; col < 56; col++)
    wv_buf_puts(b, " ");
  if (loc.line)
    wv_buf_printf(b, "  # %u:%u", loc.line, loc.col);
}

static void print_expr(wv_kernel *k, wv_buf *b, ex_t e) {
  ex_print(k->ctx, b, e);
}

static void print_header(wv_kernel *k, wv_buf *b) {
  wv_buf_printf(b, "kernel %s(", k->name);
  for (uint32_t i = 0; i < k->args.n; i++) {
    wv_node *a = wv_get(k->g, k->args.v[i]);
    wv_buf_printf(b, "%s%s: Memory", i ? ", " : "", a->name);
    wv_type_print(k->ctx, b, &a->type);
    if (a->flags & WAVEC_ARG_SHARED)
      wv_buf_puts(b, " shared");
  }
  wv_buf_puts(b, ")\n");
  static const char *const kinds[] = {"workgroup", "wave", "tiling"};
  for (uint32_t i = 0; i < k->constraints.n; i++) {
    wv_constraint *c = &k->constraints.v[i];
    uint32_t start = b->n;
    wv_buf_printf(b, "  %s(%s, ", kinds[c->kind], sym(k, c->dim));
    print_expr(k, b, c->tile);
    if (c->kind == WV_WORKGROUP)
      wv_buf_printf(b, ", %d", c->axis);
    wv_buf_puts(b, ")");
    print_loc(b, start, c->loc);
    wv_buf_puts(b, "\n");
  }
  for (uint32_t i = 0; i < k->dynamics.n; i++) {
    wv_dynamic *dy = &k->dynamics.v[i];
    uint32_t start = b->n;
    wv_buf_printf(b, "  dynamic(%s", sym(k, dy->dim));
    if (dy->multiple) {
      wv_buf_puts(b, ", multiple_of = ");
      print_expr(k, b, dy->multiple);
    }
    wv_buf_puts(b, ")");
    print_loc(b, start, dy->loc);
    wv_buf_puts(b, "\n");
  }
  bool ints = false;
  for (int i = 0; i < WAVEC_HW_INT_COUNT; i++)
    ints |= k->hw.ints[i] != 0;
  if (k->hw.threads_per_wave || k->hw.mma != WAVEC_MMA_NONE || ints ||
      k->hw.vector_shapes.n) {
    wv_buf_puts(b, "  hardware(");
    const char *sep = "";
    if (k->hw.threads_per_wave) {
      wv_buf_puts(b, "threads_per_wave = ");
      print_expr(k, b, k->hw.threads_per_wave);
      sep = ", ";
    }
    if (k->hw.mma != WAVEC_MMA_NONE) {
      wv_buf_printf(b, "%smma = %s", sep, wv_mma_names[k->hw.mma]);
      sep = ", ";
    }
    for (int i = 0; i < WAVEC_HW_INT_COUNT; i++) {
      if (k->hw.ints[i]) {
        wv_buf_printf(b, "%s%s = ", sep, wv_hwints[i].name);
        print_expr(k, b, k->hw.ints[i]);
        sep = ", ";
      }
    }
    if (k->hw.vector_shapes.n) {
      wv_buf_printf(b, "%svector_shapes = {", sep);
      for (uint32_t i = 0; i < k->hw.vector_shapes.n; i++) {
        wv_buf_printf(b, "%s%s: ", i ? ", " : "",
                      sym(k, k->hw.vector_shapes.v[i].dim));
        print_expr(k, b, k->hw.vector_shapes.v[i].e);
      }
      wv_buf_puts(b, "}");
    }
    wv_buf_puts(b, ")\n");
  }
  for (uint32_t i = 0; i < k->defaults.n; i++) {
    wv_default *d = &k->defaults.v[i];
    if (d->e) {
      wv_buf_printf(b, "  default %s = ", sym(k, d->sym));
      print_expr(k, b, d->e);
      wv_buf_puts(b, "\n");
    } else if (d->is_float)
      wv_buf_printf(b, "  default %s = %.17g\n", sym(k, d->sym), d->f);
    else
      wv_buf_printf(b, "  default %s = %lld\n", sym(k, d->sym),
                    (long long)d->i);
  }
  for (uint32_t i = 0; i < k->mappings.n; i++) {
    wv_mapping *m = &k->mappings.v[i];
    wv_buf_printf(b, "  mapping %s(", m->name);
    for (uint32_t j = 0; j < m->iters.n; j++)
      wv_buf_printf(b, "%s%s", j ? ", " : "", sym(k, m->iters.v[j]));
    wv_buf_puts(b, ") inputs {");
    for (uint32_t j = 0; j < m->inputs.n; j++) {
      wv_buf_printf(b, "%s%s: ", j ? ", " : "", sym(k, m->inputs.v[j].dim));
      print_expr(k, b, m->inputs.v[j].e);
    }
    wv_buf_puts(b, "} outputs {");
    for (uint32_t j = 0; j < m->outputs.n; j++) {
      wv_buf_printf(b, "%s%s: ", j ? ", " : "", sym(k, m->outputs.v[j].dim));
      print_expr(k, b, m->outputs.v[j].e);
    }
    wv_buf_puts(b, "}\n");
  }
  if (k->bind.n) {
    /* Bound symbols in name order. */
    const char *last = "";
    wv_buf_puts(b, "  bound:");
    for (;;) {
      uint32_t best = 0;
      for (uint32_t s = 1; s < k->bind.n; s++)
        if (k->bind.known[s] && strcmp(sym(k, s), last) > 0 &&
            (!best || strcmp(sym(k, s), sym(k, best)) < 0))
          best = s;
      if (!best)
        break;
      if (k->bind.is_float[best])
        wv_buf_printf(b, " %s=%.17g", sym(k, best), k->bind.fval[best]);
      else
        wv_buf_printf(b, " %s=%lld", sym(k, best),
                      (long long)k->bind.ival[best]);
      last = sym(k, best);
    }
    wv_buf_puts(b, "\n");
  }
}

static void print_block(wv_kernel *k, wv_buf *b, uint32_t block, int depth);

/* The distribution, once pass `constraints` ran. */
static void print_dist(wv_kernel *k, wv_buf *b) {
  wv_dist *d = k->dist;
  if (!d)
    return;
  wv_buf_printf(b, "  grid [%lld, %lld, %lld] block [%lld, %lld, %lld] "
                   "lanes %d mma %s\n",
                (long long)d->grid[0], (long long)d->grid[1],
                (long long)d->grid[2], (long long)d->block[0],
                (long long)d->block[1], (long long)d->block[2], d->lanes,
                d->mma >= 0 ? wv_mma_names[d->mma] : "none");
  /* dims in name order, for stable dumps */
  const char *last = "";
  for (;;) {
    wavec_sym best = 0;
    for (wavec_sym s = 1; s < d->nsyms; s++)
      if (d->dim[s].used && strcmp(sym(k, s), last) > 0 &&
          (!best || strcmp(sym(k, s), sym(k, best)) < 0))
        best = s;
    if (!best)
      break;
    wv_diminfo *di = &d->dim[best];
    if (di->dynamic)
      wv_buf_printf(b, "  dim %s: size dynamic (a multiple of %lld) span %lld",
                    sym(k, best), (long long)di->multiple, (long long)di->span);
    else
      wv_buf_printf(b, "  dim %s: size %lld span %lld", sym(k, best),
                    (long long)di->size, (long long)di->span);
    if (di->wg_axis >= 0)
      wv_buf_printf(b, " workgroup axis %d tile %lld wave tile %lld",
                    di->wg_axis, (long long)di->wg_tile,
                    (long long)di->wave_tile);
    if (di->tile)
      wv_buf_printf(b, " loop %s tile %lld", sym(k, di->loopvar),
                    (long long)di->tile);
    if (di->ragged && di->dynamic)
      wv_buf_puts(b, " ragged");
    else if (di->ragged && di->wg_axis < 0 && !di->tile)
      wv_buf_printf(b, " ragged (held whole, %lld past the edge)",
                    (long long)(di->span - di->size));
    else if (di->ragged)
      wv_buf_printf(b, " ragged (%lld tiles, the last %lld past the edge)",
                    (long long)di->tiles,
                    (long long)(di->tiles * (di->tile ? di->tile : di->wg_tile) -
                                di->size));
    wv_buf_puts(b, " base ");
    print_expr(k, b, di->base);
    wv_buf_puts(b, "\n");
    last = sym(k, best);
  }
}

/* The index of node id, once pass `index` ran: per dim of its type, the
 * index of its elements; before expansion that of the first vector tile with
 * the number of tiles (xN), after it the clone's coordinate. */
static void print_index(wv_kernel *k, wv_buf *b, uint32_t id, int depth) {
  wv_index *ix = k->index;
  if (!ix || id >= ix->n || !ix->info[id].layout)
    return;
  wv_nodeinfo *in = &ix->info[id];
  const wv_layout *l = in->layout;
  wv_node *n = wv_get(k->g, id);
  for (int i = 0; i < depth + 2; i++)
    wv_buf_puts(b, "  ");
  if (ix->expanded) {
    wv_buf_printf(b, "clone of %%%u @[", in->origin);
    for (uint32_t i = 0; i < n->type.n; i++)
      wv_buf_printf(b, "%s%s=%d", i ? ", " : "",
                    sym(k, n->type.dims[i]), in->coord[i]);
    wv_buf_puts(b, "]");
    if (n->op == WAVEC_OP_MMA || n->op == WAVEC_OP_MAX ||
        n->op == WAVEC_OP_SUM)
      wv_buf_printf(b, " link %d", in->link);
    wv_buf_puts(b, " ");
  }
  wv_buf_printf(b, "elems %u {", l->nelem);
  for (uint32_t i = 0; i < n->type.n; i++) {
    wavec_sym dim = n->type.dims[i];
    const wv_ldim *e = wv_layout_dim(l, dim);
    wv_buf_printf(b, "%s%s: ", i ? ", " : "", sym(k, dim));
    int64_t c = ix->expanded ? in->coord[i] : 0;
    wv_index_print(k, b, wv_index_expr(k, dim, l, c), l->nelem);
    if (!ix->expanded && k->dist->dim[dim].span / e->v > 1)
      wv_buf_printf(b, " x%lld", (long long)(k->dist->dim[dim].span / e->v));
  }
  wv_buf_puts(b, "}\n");
}

static void print_node(wv_kernel *k, wv_buf *b, uint32_t id, int depth) {
  wv_node *n = wv_get(k->g, id);
  uint32_t start = b->n;
  for (int i = 0; i < depth; i++)
    wv_buf_puts(b, "  ");
  bool has_value = n->op != WAVEC_OP_WRITE && n->op != WAVEC_OP_YIELD &&
                   n->op != WAVEC_OP_ITERATE;
  if (has_value || n->op == WAVEC_OP_ITERATE) {
    wv_buf_printf(b, "%%%u", id);
    if (n->name && n->op != WAVEC_OP_ITERATE)
      wv_buf_printf(b, " %s", n->name);
    wv_buf_puts(b, " = ");
  }
  wv_buf_puts(b, wv_ops[n->op].name);
  switch (n->op) {
  case WAVEC_OP_ARG:
    wv_buf_printf(b, " %u", n->index);
    break;
  case WAVEC_OP_SCALAR:
    if (n->sym)
      wv_buf_printf(b, " %s", sym(k, n->sym));
    else
      wv_buf_printf(b, " %.17g", n->fval);
    break;
  case WAVEC_OP_MMA:
    wv_buf_printf(b, " reduce=%s", sym(k, n->sym));
    break;
  case WAVEC_OP_MAX:
  case WAVEC_OP_SUM:
  case WAVEC_OP_SELF_INDEX:
    wv_buf_printf(b, " %s", sym(k, n->sym));
    break;
  case WAVEC_OP_ITERATE: {
    wv_buf_printf(b, " %s", sym(k, n->sym));
    if (n->rel)
      wv_buf_printf(b, " %s %s", wv_rel_names[n->rel], sym(k, n->rel_dim));
    if (n->rel && n->rel_off) {
      wv_buf_puts(b, " + (");
      ex_print(k->ctx, b, n->rel_off);
      wv_buf_puts(b, ")");
    }
    break;
  }
  case WAVEC_OP_CARRIED:
  case WAVEC_OP_RESULT:
    wv_buf_printf(b, " %u of %%%u", n->index, n->loop);
    break;
  default:
    break;
  }
  for (uint32_t i = 0; i < n->nops; i++)
    wv_buf_printf(b, "%s%%%u", i ? ", " : " ", n->ops[i]);
  if (n->op == WAVEC_OP_READ || n->op == WAVEC_OP_WRITE) {
    if (n->ept) {
      wv_buf_puts(b, " ept=");
      print_expr(k, b, n->ept);
    }
    if (n->mapping)
      wv_buf_printf(b, " mapping=%s", k->mappings.v[n->mapping - 1].name);
    if (n->flags & WV_WRITE_ADD)
      wv_buf_puts(b, " reduce=add");
  }
  if (has_value) {
    wv_buf_puts(b, " : ");
    wv_type_print(k->ctx, b, &n->type);
  }
  if (n->op == WAVEC_OP_ITERATE)
    wv_buf_puts(b, " {");
  print_loc(b, start, n->loc);
  wv_buf_puts(b, "\n");
  print_index(k, b, id, depth);
  if (n->op == WAVEC_OP_ITERATE) {
    print_block(k, b, n->body, depth + 1);
    for (int i = 0; i < depth; i++)
      wv_buf_puts(b, "  ");
    wv_buf_puts(b, "}\n");
  }
}

static void print_block(wv_kernel *k, wv_buf *b, uint32_t block, int depth) {
  wv_block *bl = &k->g->blocks.v[block];
  for (uint32_t i = 0; i < bl->nodes.n; i++)
    print_node(k, b, bl->nodes.v[i], depth);
}

void wv_print_kernel(wv_kernel *k, wv_buf *b) {
  print_header(k, b);
  print_dist(k, b);
  print_block(k, b, 0, 1);
}
