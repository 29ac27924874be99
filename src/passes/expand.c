/* Pass `expand`. require: broadcast. Builds a new graph in which every node
 * is one vector tile: for each old node and each expansion coordinate (one
 * per vector tile of each of its dims, dist.h) one clone. Each operand of a
 * clone is found in the table (old operand, the clone's coordinate projected
 * onto the operand's own dims) -> clone. An mma becomes a chain along its
 * reduction dim, a reduction a chain along its reduced dim; users see the
 * last link. A conversion takes every clone of its operand that overlaps its
 * tile. Loops carry each clone of each carried value. Afterwards the old
 * graph is dropped: nothing can point into it (DESIGN.md, invariant 2).
 * First, tiles whose values need far more registers than a thread has are
 * refused (E0407, at their constraint). */
#include "passes/dist.h"

typedef struct xp {
  wv_kernel *k;
  wavec_ctx *ctx;
  wv_dist *d;
  wv_graph *old, *nw;
  wv_index *oix;
  uint32_t **clones;  /* old id -> new ids by flat coordinate */
  uint32_t *nclones;  /* old id -> count */
  int32_t *c;         /* current coordinate by dim symbol */
  VEC(wv_nodeinfo) info; /* new id -> info */
  bool break_lookup;  /* test hook: ignore the projection */
} xp;

/* The dims a node is expanded over and their vector-tile counts. */
static uint32_t grid(xp *x, uint32_t id, const wv_type **t,
                     const wv_layout **l, int64_t *cnt) {
  wv_node *n = wv_get(x->old, id);
  *t = &n->type;
  *l = x->oix->info[id].layout;
  if (n->op == WAVEC_OP_WRITE) {
    *t = &wv_get(x->old, n->ops[0])->type;
    *l = x->oix->info[n->ops[0]].layout;
  }
  if (!*l)
    return 0;
  for (uint32_t i = 0; i < (*t)->n; i++) {
    const wv_ldim *e =
        wv_layout_dim(*l, (*t)->dims[i]);
    cnt[i] = x->d->dim[(*t)->dims[i]].span / e->v;
  }
  return (*t)->n;
}

static uint32_t lookup(xp *x, uint32_t op) {
  const wv_type *t;
  const wv_layout *l;
  int64_t cnt[WV_MAX_DIMS];
  uint32_t nd = grid(x, op, &t, &l, cnt);
  uint64_t flat = 0;
  for (uint32_t i = 0; i < nd; i++) {
    int32_t ci = x->c[t->dims[i]];
    wv_assert(x->ctx, ci >= 0 && ci < cnt[i]);
    flat = flat * (uint64_t)cnt[i] + (uint64_t)ci;
  }
  if (x->break_lookup)
    flat = 0;
  wv_assert(x->ctx, flat < x->nclones[op] && x->clones[op][flat]);
  return x->clones[op][flat];
}

static uint32_t emit(xp *x, uint32_t block, wv_node *proto, uint32_t origin,
                     const wv_type *t, int32_t link) {
  uint32_t id = wv_graph_add(x->ctx, x->nw, block, proto);
  wv_nodeinfo in = {0};
  in.origin = origin;
  in.layout = x->oix->info[origin].layout;
  in.link = link;
  for (uint32_t i = 0; t && i < t->n; i++)
    in.coord[i] = x->c[t->dims[i]];
  vec_push(x->ctx, &x->info, in);
  return id;
}

static void expand_block(xp *x, uint32_t oblock, uint32_t nblock);

/* Position of clone g of carried value i among a loop's expanded values. */
static uint32_t loop_pos(xp *x, const wv_node *it, uint32_t i, uint32_t g) {
  uint32_t pos = g;
  for (uint32_t j = 0; j < i; j++)
    pos += x->nclones[x->old->blocks.v[it->body].nodes.v[j]];
  return pos;
}

/* Sets the current coordinate of the first nd dims of t from a flat index. */
static void set_coord(xp *x, const wv_type *t, uint32_t nd, const int64_t *cnt,
                      uint64_t flat) {
  for (int i = (int)nd - 1; i >= 0; i--) {
    x->c[t->dims[i]] = (int32_t)(flat % (uint64_t)cnt[i]);
    flat /= (uint64_t)cnt[i];
  }
}

/* Number of links of the chain an old mma or reduction became. */
static int32_t chain_len(xp *x, uint32_t oid) {
  wv_node *n = wv_get(x->old, oid);
  const wv_layout *ll = x->oix->info[n->ops[0]].layout;
  const wv_ldim *e =
      wv_layout_dim(ll, n->sym);
  return (int32_t)(x->d->dim[n->sym].span / e->v);
}

/* An mma or a reduction becomes a chain along its reduced dimension: link
 * k takes its operands' tiles at coordinate k of that dimension and, as its
 * accumulator, the previous link (the first link: the node's own
 * accumulator, if it has one). Returns the last link, the one users see. */
static uint32_t expand_chain(xp *x, uint32_t oid, uint32_t nblock,
                             wv_node *p, const wv_type *t, uint32_t *ops) {
  wv_node *n = wv_get(x->old, oid);
  uint32_t acc = n->op == WAVEC_OP_MMA ? 2 : 1; /* the accumulator operand */
  int32_t links = chain_len(x, oid);
  uint32_t prev = 0;
  for (int32_t k = 0; k < links; k++) {
    x->c[n->sym] = k;
    p->nops = 0;
    for (uint32_t i = 0; i < acc; i++)
      ops[p->nops++] = lookup(x, n->ops[i]);
    if (k > 0)
      ops[p->nops++] = prev;
    else if (n->nops > acc)
      ops[p->nops++] = lookup(x, n->ops[acc]);
    prev = emit(x, nblock, p, oid, t, k);
  }
  x->c[n->sym] = -1;
  return prev;
}

static void expand_node(xp *x, uint32_t oid, uint32_t nblock) {
  wavec_ctx *ctx = x->ctx;
  wv_node *n = wv_get(x->old, oid);
  if (n->op == WAVEC_OP_CARRIED)
    return; /* made with its loop */
  ctx->at = n->loc;
  const wv_type *t;
  const wv_layout *l;
  int64_t cnt[WV_MAX_DIMS];
  uint32_t nd = grid(x, oid, &t, &l, cnt);
  uint64_t total = 1;
  for (uint32_t i = 0; i < nd; i++)
    total *= (uint64_t)cnt[i];
  if (n->op == WAVEC_OP_ITERATE || n->op == WAVEC_OP_YIELD)
    total = 1;
  if (total > (1u << 20))
    wv_fail(ctx, D_TILE_DIVIDE, n->loc,
            "expanding this %s makes %llu copies; use smaller tiles",
            wv_ops[n->op].name, (unsigned long long)total);
  x->clones[oid] = wv_alloc(ctx, total * sizeof(uint32_t));
  x->nclones[oid] = (uint32_t)total;
  uint32_t ops_buf[64];
  for (uint64_t f = 0; f < total; f++) {
    set_coord(x, t, nd, cnt, f);
    wv_node p = *n;
    p.ops = ops_buf;
    uint32_t id = 0;
    switch (n->op) {
    case WAVEC_OP_MMA:
    case WAVEC_OP_MAX:
    case WAVEC_OP_SUM:
      id = expand_chain(x, oid, nblock, &p, t, ops_buf);
      break;
    case WV_OP_CONVERT: {
      /* every operand clone whose tile overlaps this one's */
      const wv_type *ot;
      const wv_layout *ol;
      int64_t ocnt[WV_MAX_DIMS], lo[WV_MAX_DIMS], hi[WV_MAX_DIMS];
      uint32_t ond = grid(x, n->ops[0], &ot, &ol, ocnt);
      uint64_t m = 1;
      for (uint32_t i = 0; i < ond; i++) {
        wavec_sym dim = ot->dims[i];
        const wv_ldim *mine = wv_layout_dim(l, dim), *theirs = wv_layout_dim(ol, dim);
        lo[i] = x->c[dim] * mine->v / theirs->v;
        hi[i] = ((x->c[dim] + 1) * mine->v - 1) / theirs->v;
        m *= (uint64_t)(hi[i] - lo[i] + 1);
      }
      if (m > WV_ARRAY_LEN(ops_buf))
        wv_fail(ctx, D_TILE_DIVIDE, n->loc,
                "a layout conversion here gathers %llu tiles; use smaller "
                "tiles", (unsigned long long)m);
      int32_t saved[WV_MAX_DIMS];
      for (uint32_t i = 0; i < ond; i++)
        saved[i] = x->c[ot->dims[i]];
      for (uint64_t j = 0; j < m; j++) {
        uint64_t r = j;
        for (int i = (int)ond - 1; i >= 0; i--) {
          int64_t w = hi[i] - lo[i] + 1;
          x->c[ot->dims[i]] = (int32_t)(lo[i] + (int64_t)(r % (uint64_t)w));
          r /= (uint64_t)w;
        }
        ops_buf[j] = lookup(x, n->ops[0]);
      }
      for (uint32_t i = 0; i < ond; i++)
        x->c[ot->dims[i]] = saved[i];
      p.nops = (uint32_t)m;
      id = emit(x, nblock, &p, oid, t, 0);
      break;
    }
    case WAVEC_OP_ITERATE: {
      wv_block *body = &x->old->blocks.v[n->body];
      VEC(uint32_t) inits = {0};
      for (uint32_t i = 0; i < n->nops; i++)
        for (uint32_t g = 0; g < x->nclones[n->ops[i]]; g++)
          vec_push(ctx, &inits, x->clones[n->ops[i]][g]);
      p.ops = inits.v;
      p.nops = inits.n;
      id = emit(x, nblock, &p, oid, NULL, 0);
      x->clones[oid][0] = id; /* the body's yield and results refer to it */
      uint32_t nb = wv_graph_add_block(ctx, x->nw, id);
      wv_get(x->nw, id)->body = nb;
      /* carried clones: same grid as their inits */
      for (uint32_t i = 0; i < n->nops; i++) {
        uint32_t cid = body->nodes.v[i];
        const wv_type *ct;
        const wv_layout *cl;
        int64_t ccnt[WV_MAX_DIMS];
        uint32_t cnd = grid(x, cid, &ct, &cl, ccnt);
        uint32_t total_c = x->nclones[n->ops[i]];
        x->clones[cid] = wv_alloc(ctx, total_c * sizeof(uint32_t));
        x->nclones[cid] = total_c;
        for (uint32_t g = 0; g < total_c; g++) {
          set_coord(x, ct, cnd, ccnt, g);
          wv_node cp = *wv_get(x->old, cid);
          cp.loop = id;
          cp.index = loop_pos(x, n, i, g);
          x->clones[cid][g] = emit(x, nb, &cp, cid, ct, 0);
        }
      }
      expand_block(x, n->body, nb);
      break;
    }
    case WAVEC_OP_YIELD: {
      wv_node *it = wv_get(x->old, n->loop);
      VEC(uint32_t) outs = {0};
      for (uint32_t i = 0; i < n->nops; i++)
        for (uint32_t g = 0; g < x->nclones[n->ops[i]]; g++)
          vec_push(ctx, &outs, x->clones[n->ops[i]][g]);
      p.ops = outs.v;
      p.nops = outs.n;
      p.loop = x->clones[n->loop][0];
      (void)it;
      id = emit(x, nblock, &p, oid, NULL, 0);
      break;
    }
    case WAVEC_OP_RESULT: {
      wv_node *it = wv_get(x->old, n->loop);
      p.loop = x->clones[n->loop][0];
      p.index = loop_pos(x, it, n->index, (uint32_t)f);
      id = emit(x, nblock, &p, oid, t, 0);
      if (p.index == 0)
        wv_get(x->nw, p.loop)->index = id;
      break;
    }
    default:
      wv_assert(ctx, n->nops <= WV_ARRAY_LEN(ops_buf));
      for (uint32_t i = 0; i < n->nops; i++)
        ops_buf[i] = lookup(x, n->ops[i]);
      if (n->mem)
        p.mem = lookup(x, n->mem);
      id = emit(x, nblock, &p, oid, t, 0);
      break;
    }
    x->clones[oid][f] = id;
  }
  for (uint32_t i = 0; i < nd; i++)
    x->c[t->dims[i]] = -1;
}

static void expand_block(xp *x, uint32_t oblock, uint32_t nblock) {
  wv_block *ob = &x->old->blocks.v[oblock];
  for (uint32_t j = 0; j < ob->nodes.n; j++)
    expand_node(x, ob->nodes.v[j], nblock);
}

/* ---- verification of the expansion --------------------------------------- */
static _Noreturn void bad(xp *x, uint32_t id, const char *what) {
  wv_node *n = wv_get(x->nw, id);
  wv_fail(x->ctx, D_INTERNAL, n->loc,
          "verifier after 'expand': clone %%%u of node %%%u (%s%s%s): %s", id,
          x->info.v[id].origin, wv_ops[n->op].name, n->name ? " " : "",
          n->name ? n->name : "", what);
}

static int32_t coord_of(xp *x, uint32_t id, wavec_sym dim) {
  wv_node *n = wv_get(x->nw, id);
  for (uint32_t i = 0; i < n->type.n; i++)
    if (n->type.dims[i] == dim)
      return x->info.v[id].coord[i];
  return -1;
}

static bool is_chain(wavec_op op) {
  return op == WAVEC_OP_MMA || op == WAVEC_OP_MAX || op == WAVEC_OP_SUM;
}


static void verify(xp *x) {
  wv_graph *g = x->nw;
  /* coverage: the clones of each old node are its grid, each once */
  for (uint32_t oid = 1; oid < x->old->nodes.n; oid++) {
    for (uint32_t f = 0; f < x->nclones[oid]; f++) {
      uint32_t id = x->clones[oid][f];
      if (!id || id >= g->nodes.n || x->info.v[id].origin != oid)
        wv_fail(x->ctx, D_INTERNAL, wv_get(x->old, oid)->loc,
                "verifier after 'expand': node %%%u lacks clone %u", oid, f);
      for (uint32_t f2 = 0; f2 < f; f2++)
        if (x->clones[oid][f2] == id)
          bad(x, id, "one clone stands for two coordinates");
    }
  }
  for (uint32_t id = 1; id < g->nodes.n; id++) {
    wv_node *n = wv_get(g, id);
    wv_nodeinfo *in = &x->info.v[id];
    wv_node *o = wv_get(x->old, in->origin);
    if (n->op == WAVEC_OP_ITERATE || n->op == WAVEC_OP_YIELD ||
        n->op == WV_OP_CONVERT)
      continue;
    for (uint32_t i = 0; i < n->nops; i++) {
      uint32_t p = n->ops[i];
      if (p == 0 || p >= id)
        bad(x, id, "operand is not an earlier node of the new graph");
      wv_nodeinfo *pi = &x->info.v[p];
      bool chained = is_chain(n->op) && in->link > 0 &&
                     i == (n->op == WAVEC_OP_MMA ? 2u : 1u);
      uint32_t want = chained ? in->origin : o->ops[i];
      if (pi->origin != want)
        bad(x, id, "an operand is a clone of the wrong node");
      if (chained) {
        if (pi->link != in->link - 1)
          bad(x, id, "a chain link does not follow the previous one");
        continue;
      }
      /* a user of a chain sees its last link */
      wv_node *po = wv_get(x->old, pi->origin);
      if (is_chain(po->op) && pi->link != chain_len(x, pi->origin) - 1)
        bad(x, id, "an operand is not the last link of its chain");
      /* the operand's coordinate is this clone's, projected */
      wv_node *pn = wv_get(g, p);
      for (uint32_t j = 0; j < pn->type.n && pi->layout; j++) {
        wavec_sym dim = pn->type.dims[j];
        int32_t want_c = (is_chain(n->op) && dim == n->sym)
                             ? in->link
                             : coord_of(x, id, dim);
        if (want_c >= 0 && pi->coord[j] != want_c)
          bad(x, id, "an operand's expansion coordinate is not this "
                     "clone's, projected onto the operand's dims");
      }
    }
  }
}

/* 32-bit registers each thread needs to hold value id: its elements per
 * clone times its clones (what expansion makes of it), 16-bit ones paired. */
static int64_t value_words(xp *x, uint32_t id) {
  wv_node *n = wv_get(x->old, id);
  const wv_layout *l = x->oix->info[id].layout;
  if (!l || n->op == WAVEC_OP_WRITE || n->op == WAVEC_OP_ARG)
    return 0;
  double elems = l->nelem;
  for (uint32_t i = 0; i < n->type.n; i++) {
    const wv_ldim *e = wv_layout_dim(l, n->type.dims[i]);
    elems *= (double)(x->d->dim[n->type.dims[i]].span / e->v);
  }
  double w = elems * wv_dtypes[n->type.dt].bits / 32.0;
  return w > (double)INT64_MAX / 4 ? INT64_MAX / 4 : (int64_t)(w + 0.999);
}

/* Registers a thread has (NVIDIA: 255), and the estimate past which
 * tiles are refused: the code would be mostly spills, and its PTX and
 * ptxas's time grow with the clones. */
#define THREAD_REGS 255
#define MAX_REGS_ESTIMATE 1024

/* Where to blame a value's size: the wave (else workgroup, else tiling)
 * constraint of its dim with the most vector tiles, else the value. */
static wavec_loc size_loc(xp *x, uint32_t id) {
  wv_node *n = wv_get(x->old, id);
  const wv_layout *l = x->oix->info[id].layout;
  wavec_sym widest = 0;
  int64_t most = 0;
  for (uint32_t i = 0; i < n->type.n; i++) {
    wavec_sym d = n->type.dims[i];
    int64_t c = x->d->dim[d].span / wv_layout_dim(l, d)->v;
    if (c > most)
      most = c, widest = d;
  }
  static const wv_cons_kind order[] = {WV_WAVE, WV_WORKGROUP, WV_TILING};
  for (size_t o = 0; o < WV_ARRAY_LEN(order); o++)
    for (uint32_t c = 0; c < x->k->constraints.n; c++) {
      wv_constraint *k = &x->k->constraints.v[c];
      if (k->kind == order[o] && k->dim == widest)
        return k->loc;
    }
  return n->loc;
}

/* An mma that adds into a value its loop carries: its result is that
 * value's registers, counted once (a GEMM's accumulator). */
static bool in_place(wv_graph *g, const wv_node *n) {
  return n->op == WAVEC_OP_MMA &&
         wv_get(g, n->ops[2])->op == WAVEC_OP_CARRIED;
}

/* Refuses tiles that need far more registers than a thread has, before
 * expansion makes a clone per vector tile of them (4096 x 4096 tiles:
 * 1.6 million registers, 106 MB of PTX, ptxas out of memory); a remark
 * when they need more than a thread has. The estimate: the values loops
 * carry, live all through them, plus the largest other value in a loop
 * (an mma's result adds to its carried accumulator in place), or the
 * largest value outside the loops where that is more. */
static void check_registers(xp *x) {
  int64_t carried = 0, widest = 0, outside = 0, bigw = 0;
  uint32_t big = 0;
  for (uint32_t id = 1; id < x->old->nodes.n; id++) {
    const wv_node *n = wv_get(x->old, id);
    int64_t w = value_words(x, id);
    if (n->op == WAVEC_OP_CARRIED)
      carried += w;
    else if (!n->block && w > outside)
      outside = w;
    else if (n->block && w > widest && !in_place(x->old, n))
      widest = w;
    if (w > bigw)
      bigw = w, big = id;
  }
  if (carried + widest < outside)
    carried = 0, widest = outside;
  int64_t est = carried + widest;
  if (est <= THREAD_REGS)
    return;
  wavec_loc at = size_loc(x, big);
  if (est > MAX_REGS_ESTIMATE)
    wv_fail(x->ctx, D_REGISTERS, at,
            "these tiles need about %lld 32-bit registers per thread (%lld "
            "for the values loops carry, %lld for the largest other; %s "
            "alone %lld): a thread has %d, and past %d the code is mostly "
            "spills; use smaller tiles or more waves",
            (long long)est, (long long)carried, (long long)widest,
            wv_node_what(x->ctx, wv_get(x->old, big)), (long long)bigw,
            THREAD_REGS,
            MAX_REGS_ESTIMATE);
  wv_buf b;
  wv_remark_start(x->k, at, &b);
  wv_buf_printf(&b, "these tiles need about %lld 32-bit registers per thread, "
                "more than the %d a thread has: expect spills to local "
                "memory", (long long)est, THREAD_REGS);
  wv_remark_end(x->k, &b);
}

wavec_status wv_pass_expand(wv_kernel *k) {
  wavec_ctx *ctx = k->ctx;
  xp x = {0};
  x.k = k;
  x.ctx = ctx;
  x.d = k->dist;
  x.old = k->g;
  x.nw = wv_graph_new(ctx);
  x.oix = k->index;
  x.break_lookup = (ctx->test_hooks & WV_HOOK_BREAK_EXPAND_LOOKUP) != 0;
  uint32_t nn = x.old->nodes.n;
  x.clones = wv_alloc(ctx, nn * sizeof *x.clones);
  x.nclones = wv_alloc(ctx, nn * sizeof *x.nclones);
  x.c = wv_alloc(ctx, ctx->sym_names.n * sizeof *x.c);
  for (uint32_t s = 0; s < ctx->sym_names.n; s++)
    x.c[s] = -1;
  wv_nodeinfo none = {0};
  vec_push(ctx, &x.info, none);
  check_registers(&x);
  expand_block(&x, 0, 0);
  verify(&x);
  for (uint32_t i = 0; i < k->args.n; i++)
    k->args.v[i] = x.clones[k->args.v[i]][0];
  wv_index *ix = wv_alloc(ctx, sizeof *ix);
  ix->n = x.nw->nodes.n;
  ix->info = x.info.v; /* one entry per new node, as wv_index_new's */
  ix->expanded = true;
  k->g = x.nw; /* the old graph is unreachable from here on */
  k->index = ix;
  wv_graph_release(ctx, x.old);
  wv_release(ctx, x.oix->info);
  return WAVEC_OK;
}
