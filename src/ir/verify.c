/* The graph verifier: runs after the builder and after every pass. A failure
 * is a compiler bug, reported as D_INTERNAL naming the pass, node and rule. */
#include "ir/ir.h"

typedef struct vctx {
  wv_kernel *k;
  const char *pass;
  VEC(uint8_t) seen; /* node id -> listed in a block */
} vctx;

static _Noreturn void bad(vctx *v, uint32_t id, const char *what) {
  wv_node *n = wv_get(v->k->g, id);
  wv_fail(v->k->ctx, D_INTERNAL, n->loc,
          "verifier after '%s': node %%%u (%s): %s", v->pass, id,
          wv_ops[n->op].name, what);
}

/* Is block `inner` equal to or nested in block `outer`? */
static bool nested_in(wv_graph *g, uint32_t inner, uint32_t outer) {
  for (;;) {
    if (inner == outer)
      return true;
    if (inner == 0)
      return false;
    inner = g->nodes.v[g->blocks.v[inner].owner].block;
  }
}

static void check_type(vctx *v, uint32_t id, const wv_type *t) {
  if ((unsigned)t->dt >= WAVEC_DTYPE_COUNT || t->n > WV_MAX_DIMS)
    bad(v, id, "malformed type");
  for (uint32_t i = 0; i < t->n; i++)
    for (uint32_t j = 0; j < i; j++)
      if (t->dims[i] == t->dims[j])
        bad(v, id, "type repeats a dimension");
}

static void want_ops(vctx *v, uint32_t id, uint32_t lo, uint32_t hi) {
  uint32_t n = wv_get(v->k->g, id)->nops;
  if (n < lo || n > hi)
    bad(v, id, "wrong number of operands");
}

static void check_node(vctx *v, uint32_t id) {
  wv_graph *g = v->k->g;
  wv_node *n = wv_get(g, id);
  check_type(v, id, &n->type);
  for (uint32_t i = 0; i < n->nops; i++) {
    uint32_t o = n->ops[i];
    if (o == 0 || o >= id)
      bad(v, id, "operand is not defined before its use");
    if (!nested_in(g, n->block, wv_get(g, o)->block))
      bad(v, id, "operand is defined in a block that does not enclose it");
  }
  const wv_type *t0 = n->nops ? &wv_get(g, n->ops[0])->type : NULL;
  switch (wv_ops[n->op].cls) {
  case 'U':
    want_ops(v, id, 1, 1);
    if (!wv_type_eq(t0, &n->type))
      bad(v, id, "unary op changes its operand's type");
    return;
  case 'B':
  case 'C':
    want_ops(v, id, 2, 2);
    for (uint32_t i = 0; i < 2; i++) {
      wv_node *o = wv_get(g, n->ops[i]);
      if (o->op != WAVEC_OP_SCALAR && !wv_dims_subset(&o->type, &n->type))
        bad(v, id, "operand has a dimension the result lacks");
    }
    return;
  case 'R':
    want_ops(v, id, 1, 2);
    if (!wv_type_has(t0, n->sym) || wv_type_has(&n->type, n->sym) ||
        n->type.n + 1 != t0->n)
      bad(v, id, "reduction type does not drop exactly its dimension");
    return;
  default:
    break;
  }
  switch (n->op) {
  case WAVEC_OP_ARG:
  case WAVEC_OP_SCALAR:
  case WAVEC_OP_SELF_INDEX:
    want_ops(v, id, 0, 0);
    break;
  case WAVEC_OP_REGISTER:
    want_ops(v, id, 1, 1);
    break;
  case WAVEC_OP_READ:
    want_ops(v, id, 1, 2);
    if (wv_get(g, n->ops[0])->op != WAVEC_OP_ARG || n->mem != n->ops[0])
      bad(v, id, "read of something other than a memory argument");
    if (n->nops == 2 && wv_get(g, n->ops[1])->op != WAVEC_OP_SCALAR)
      bad(v, id, "read fill that is not a constant");
    break;
  case WAVEC_OP_WRITE:
    want_ops(v, id, 2, 2);
    if (wv_get(g, n->ops[1])->op != WAVEC_OP_ARG || n->mem != n->ops[1])
      bad(v, id, "write to something other than a memory argument");
    break;
  case WAVEC_OP_MMA:
    want_ops(v, id, 3, 3);
    if (!wv_type_eq(&wv_get(g, n->ops[2])->type, &n->type))
      bad(v, id, "mma result type differs from its accumulator");
    if (wv_type_has(&n->type, n->sym))
      bad(v, id, "mma result has its reduction dimension");
    break;
  case WAVEC_OP_SELECT:
    want_ops(v, id, 3, 3);
    break;
  case WV_OP_CONVERT:
    /* after expansion: every operand tile that overlaps this one */
    want_ops(v, id, 1, UINT32_MAX);
    for (uint32_t i = 1; i < n->nops; i++)
      if (!wv_type_eq(&wv_get(g, n->ops[i])->type, t0))
        bad(v, id, "conversion operands differ in type");
    /* fall through */
  case WAVEC_OP_CAST:
  case WAVEC_OP_PERMUTE:
  case WAVEC_OP_BROADCAST:
    if (n->op != WV_OP_CONVERT)
      want_ops(v, id, 1, 1);
    if (n->op != WAVEC_OP_BROADCAST
            ? (t0->n != n->type.n || !wv_dims_subset(t0, &n->type))
            : !wv_dims_subset(t0, &n->type))
      bad(v, id, "result dimensions do not fit the operand's");
    break;
  case WAVEC_OP_ITERATE: {
    if (n->body == 0 || n->body >= g->blocks.n ||
        g->blocks.v[n->body].owner != id)
      bad(v, id, "iterate without its body");
    wv_block *body = &g->blocks.v[n->body];
    if (body->nodes.n < n->nops + 1)
      bad(v, id, "iterate body too short");
    for (uint32_t i = 0; i < n->nops; i++) {
      wv_node *c = wv_get(g, body->nodes.v[i]);
      if (c->op != WAVEC_OP_CARRIED || c->index != i || c->loop != id ||
          !wv_type_eq(&c->type, &wv_get(g, n->ops[i])->type))
        bad(v, id, "iterate body does not start with its carried values");
    }
    wv_node *y = wv_get(g, body->nodes.v[body->nodes.n - 1]);
    if (y->op != WAVEC_OP_YIELD || y->loop != id || y->nops != n->nops)
      bad(v, id, "iterate body does not end with its yield");
    for (uint32_t i = 0; i < n->nops; i++) {
      if (!wv_type_eq(&wv_get(g, y->ops[i])->type,
                      &wv_get(g, body->nodes.v[i])->type))
        bad(v, id, "yielded type differs from the carried type");
      wv_node *r = n->index + i < g->nodes.n ? wv_get(g, n->index + i) : NULL;
      if (!r || r->op != WAVEC_OP_RESULT || r->loop != id || r->index != i ||
          r->block != n->block)
        bad(v, id, "iterate results are missing");
    }
    break;
  }
  case WAVEC_OP_CARRIED:
  case WAVEC_OP_YIELD:
    if (n->loop == 0 || n->loop >= g->nodes.n ||
        wv_get(g, n->loop)->body != n->block)
      bad(v, id, "carried value or yield outside its loop's body");
    break;
  case WAVEC_OP_RESULT:
    if (n->loop == 0 || n->loop >= id ||
        wv_get(g, n->loop)->op != WAVEC_OP_ITERATE)
      bad(v, id, "loop result without its loop");
    break;
  default:
    break;
  }
}

wavec_status wv_verify(wv_kernel *k, const char *after_pass) {
  vctx v = {k, after_pass, {0}};
  wv_graph *g = k->g;
  for (uint32_t i = 0; i < g->nodes.n; i++)
    vec_push(k->ctx, &v.seen, 0);
  for (uint32_t b = 0; b < g->blocks.n; b++) {
    wv_block *bl = &g->blocks.v[b];
    uint32_t prev = 0;
    for (uint32_t i = 0; i < bl->nodes.n; i++) {
      uint32_t id = bl->nodes.v[i];
      if (id == 0 || id >= g->nodes.n || v.seen.v[id] ||
          wv_get(g, id)->block != b || id <= prev)
        wv_fail(k->ctx, D_INTERNAL, k->loc,
                "verifier after '%s': block %u lists node %u wrongly",
                after_pass, b, id);
      v.seen.v[id] = 1;
      prev = id;
    }
  }
  for (uint32_t id = 1; id < g->nodes.n; id++) {
    if (!v.seen.v[id])
      bad(&v, id, "node is in no block");
    check_node(&v, id);
  }
  wv_release(k->ctx, v.seen.v);
  return WAVEC_OK;
}
