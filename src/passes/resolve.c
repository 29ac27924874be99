/* Pass `broadcast`. require: index. Makes every implicit broadcast and every
 * layout mismatch an explicit node, so that afterwards each operand of each
 * node has exactly the layout its user requires (checked by the verifier):
 *  - an elementwise operand with fewer dims than its user gets a BROADCAST
 *    node (e.g. `lse_i [B, M]` against `[B, M, K2]`);
 *  - an operand whose layout differs from the one required (an accumulator
 *    used as an mma operand, a carried value yielded in another layout) gets
 *    a CONVERT node at its user's line (lowering remarks how it moves) —
 *    unless it is a read of memory the kernel never writes: that is read
 *    again, in the layout its user wants (a tile staged in shared memory
 *    serves both reads; attention's backward reads q as the rhs of
 *    q kᵀ and of dsᵀ q);
 *  - a permute of a read used only as an mma's lhs or rhs goes: the mma
 *    takes the read (dims by name), as if written without it.
 * The graph is rebuilt in one walk; the old one is dropped. */
#include "passes/dist.h"

typedef struct conv {
  uint32_t operand, block;
  const wv_layout *layout;
  uint32_t id;
} conv;

typedef struct rw {
  wv_kernel *k;
  wv_graph *old, *nw;
  wv_index *oix;
  uint32_t *map; /* old id -> new id */
  VEC(const wv_layout *) lay; /* new id -> layout */
  VEC(conv) convs;
  bool *written; /* old id of an ARG -> the kernel writes it */
} rw;

static const wv_layout *old_layout(rw *r, uint32_t id) {
  return r->oix->info[id].layout;
}

static const wv_layout *required(rw *r, uint32_t uid, uint32_t i) {
  return wv_required_layout(r->k, r->oix, uid, i);
}

static uint32_t emit(rw *r, uint32_t block, const wv_node *proto,
                     const wv_layout *l) {
  uint32_t id = wv_graph_add(r->k->ctx, r->nw, block, proto);
  vec_push(r->k->ctx, &r->lay, l);
  return id;
}

/* Makes operand i of old user `uid` (new id `nop`) fit: returns the new id
 * to use. */
static uint32_t reconcile(rw *r, uint32_t block, uint32_t uid, uint32_t i,
                          uint32_t nop) {
  wavec_ctx *ctx = r->k->ctx;
  const wv_layout *req = required(r, uid, i);
  if (!req)
    return nop;
  wv_node *u = wv_get(r->old, uid), *o = wv_get(r->old, u->ops[i]);
  const wv_layout *have = old_layout(r, u->ops[i]);
  bool bcast = o->type.n < u->type.n && u->op != WAVEC_OP_BROADCAST &&
               u->op != WAVEC_OP_MMA && wv_ops[u->op].cls != 'R';
  const wv_layout *want = bcast ? wv_layout_project(ctx, req, &o->type) : req;
  if (!wv_layout_eq(have, want)) {
    uint32_t found = 0;
    for (uint32_t c = 0; c < r->convs.n && !found; c++) {
      conv *cv = &r->convs.v[c];
      if (cv->operand == nop && cv->block == block &&
          wv_layout_eq(cv->layout, want))
        found = cv->id;
    }
    if (!found && o->op == WAVEC_OP_READ && !r->written[o->mem]) {
      wv_node rn = *o;
      rn.ops = wv_alloc(ctx, rn.nops * sizeof *rn.ops);
      for (uint32_t j = 0; j < rn.nops; j++)
        rn.ops[j] = r->map[o->ops[j]];
      rn.mem = r->map[o->mem];
      found = emit(r, block, &rn, want);
      conv cv = {nop, block, want, found};
      vec_push(ctx, &r->convs, cv);
      wv_buf b;
      wv_remark_start(r->k, u->loc, &b);
      wv_buf_printf(&b, "'%s' ", o->name ? o->name : "read");
      wv_type_print(ctx, &b, &o->type);
      wv_buf_printf(&b, " is read again from '%s' in the layout this use "
                        "wants, not converted ('%s' is never written)",
                    wv_get(r->old, o->mem)->name, wv_get(r->old, o->mem)->name);
      wv_remark_end(r->k, &b);
    } else if (!found) {
      wv_node cn = {.op = WV_OP_CONVERT, .loc = u->loc, .nops = 1,
                    .ops = &nop, .type = o->type, .name = o->name};
      found = emit(r, block, &cn, want);
      conv cv = {nop, block, want, found};
      vec_push(ctx, &r->convs, cv);
    }
    nop = found;
  }
  if (bcast) {
    wv_node bn = {.op = WAVEC_OP_BROADCAST, .loc = u->loc, .nops = 1,
                  .ops = &nop, .type = u->type};
    bn.type.dt = o->type.dt;
    nop = emit(r, block, &bn, req);
  }
  return nop;
}

/* Is old node `id` a permute of a read whose every use is an mma's lhs or
 * rhs? The mma takes dims by name, so the permute adds nothing there, and
 * without it the read is what a wgmma reads from shared memory (the
 * layouts already say so: wv_mma_role_layout looks through it). */
static bool mma_permute(rw *r, uint32_t id) {
  const wv_node *n = wv_get(r->old, id);
  if (n->op != WAVEC_OP_PERMUTE ||
      wv_get(r->old, n->ops[0])->op != WAVEC_OP_READ)
    return false;
  bool any = false;
  for (uint32_t u = 1; u < r->old->nodes.n; u++) {
    const wv_node *x = wv_get(r->old, u);
    for (uint32_t i = 0; i < x->nops; i++)
      if (x->ops[i] == id) {
        if (x->op != WAVEC_OP_MMA || i >= 2)
          return false;
        any = true;
      }
  }
  return any;
}

static void copy_block(rw *r, uint32_t oblock, uint32_t nblock) {
  wavec_ctx *ctx = r->k->ctx;
  wv_block *ob = &r->old->blocks.v[oblock];
  for (uint32_t j = 0; j < ob->nodes.n; j++) {
    uint32_t oid = ob->nodes.v[j];
    wv_node n = *wv_get(r->old, oid);
    ctx->at = n.loc;
    if (mma_permute(r, oid)) {
      r->map[oid] = r->map[n.ops[0]];
      continue;
    }
    uint32_t *ops = n.nops ? wv_alloc(ctx, n.nops * sizeof *ops) : NULL;
    for (uint32_t i = 0; i < n.nops; i++)
      ops[i] = reconcile(r, nblock, oid, i, r->map[n.ops[i]]);
    n.ops = ops;
    if (n.mem)
      n.mem = r->map[n.mem];
    if (n.loop)
      n.loop = r->map[n.loop];
    uint32_t nid = emit(r, nblock, &n, old_layout(r, oid));
    r->map[oid] = nid;
    if (n.op == WAVEC_OP_ITERATE) {
      uint32_t body = wv_graph_add_block(ctx, r->nw, nid);
      wv_get(r->nw, nid)->body = body;
      copy_block(r, n.body, body);
    } else if (n.op == WAVEC_OP_RESULT && n.index == 0) {
      wv_get(r->nw, n.loop)->index = nid;
    }
  }
}

wavec_status wv_pass_broadcast(wv_kernel *k) {
  wavec_ctx *ctx = k->ctx;
  rw r = {k, k->g, wv_graph_new(ctx), k->index, NULL, {0}, {0}, NULL};
  r.map = wv_alloc(ctx, k->g->nodes.n * sizeof *r.map);
  r.written = wv_alloc(ctx, k->g->nodes.n * sizeof *r.written);
  for (uint32_t id = 1; id < k->g->nodes.n; id++)
    if (wv_get(k->g, id)->op == WAVEC_OP_WRITE)
      r.written[wv_get(k->g, id)->mem] = true;
  vec_push(ctx, &r.lay, NULL); /* node 0 */
  copy_block(&r, 0, 0);
  for (uint32_t i = 0; i < k->args.n; i++)
    k->args.v[i] = r.map[k->args.v[i]];
  wv_index *ix = wv_index_new(k, r.nw->nodes.n);
  for (uint32_t id = 1; id < r.nw->nodes.n; id++)
    ix->info[id].layout = r.lay.v[id];
  wv_graph_release(ctx, k->g);
  wv_release(ctx, k->index->info);
  wv_release(ctx, r.lay.v);
  k->g = r.nw;
  k->index = ix;
  return WAVEC_OK;
}
