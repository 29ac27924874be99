/* Pass `lower`. require: expand. The expanded graph becomes the thread
 * program (tir.h): each clone's elements become registers; indices become
 * integer code (one register per distinct canonical expression in scope:
 * hash-consing makes common-subexpression elimination a table lookup);
 * mma, reductions (within a thread, then across lanes with xor shuffles,
 * then along the chain), layout conversions (through shared memory between
 * barriers) and loops with carried registers. */
#include <math.h>

#include "passes/dist.h"
#include "tir/tir.h"

const char *const tir_ty_names[TY_COUNT] = {"pred", "i32", "f16", "bf16",
                                            "f32"};

int tir_ty_bytes(tir_ty ty) {
  static const int bytes[TY_COUNT] = {1, 4, 2, 2, 4};
  return bytes[ty];
}

tir_ty tir_ty_of(wavec_dtype dt) {
  static const tir_ty map[WAVEC_DTYPE_COUNT] = {
      [WAVEC_F16] = TY_F16, [WAVEC_BF16] = TY_BF16, [WAVEC_F32] = TY_F32,
      [WAVEC_I32] = TY_I32, [WAVEC_I1] = TY_PRED};
  return map[dt];
}

typedef struct memo_ent {
  ex_t e;
  uint32_t reg;
  uint32_t scope;
} memo_ent;

/* A global load in scope: what it loaded (argument, offset and mask
 * registers, type) into which register. */
typedef struct load_ent {
  int64_t arg;
  uint32_t off, mask;
  tir_ty ty;
  uint32_t reg, scope;
} load_ent;

/* An ldmatrix decision: for these fragment addresses, the address each
 * lane supplies (0: no ldmatrix) and whether it is the transposed one. */
typedef struct ldsm_memo {
  uint32_t ne;
  ex_t addr[8];
  ex_t e;
  bool tr;
} ldsm_memo;

/* What the lowering works out once per layout (see facts_of). */
typedef struct layout_facts {
  const wv_layout *l;
  const int64_t *frag; /* frag_table, or NULL until asked for */
  const uint32_t *rep; /* elem_reps, or NULL until asked for */
} layout_facts;

typedef struct lw {
  wv_kernel *k;
  wavec_ctx *ctx;
  wv_dist *d;
  wv_index *ix;
  wv_graph *g;
  tir_prog *p;
  uint32_t *vals;      /* node id -> first register of its elements */
  memo_ent *memo;      /* open addressing by ex_t */
  uint32_t memo_cap, memo_used;
  VEC(uint32_t) scopes; /* open scopes, innermost last */
  uint8_t *scope_open;  /* by scope id */
  uint32_t nscopes;
  uint32_t *loopreg;    /* by symbol: the counter register of $ARGD */
  VEC(wavec_sym) bsyms; /* bound user symbols and their values */
  VEC(ex_t) bvals;
  ex_range *ranges;
  uint32_t nranges;
  wavec_loc loc;
  int64_t convert_bytes; /* shared memory of the widest conversion */
  int64_t stage_bytes;   /* shared memory of staged operands, before it */
  int64_t stages;        /* slots of each loop's ring of staged tiles */
  bool *mma_only;        /* by node: every use is an mma lhs or rhs */
  bool *written;         /* by ARG node: some write stores to it */
  bool *hoisted;         /* by node: lowered before its loop */
  /* by staged read: the fragments of a staged read are loaded at each use
   * instead of at the read, once per scope; 1 + the scope whose registers
   * hold them, 0 if none. That keeps a large operand that a loop reuses
   * (attention's q, the backward's k and v) in shared memory instead of
   * registers, and puts fragment loads next to the mma that takes them. */
  uint32_t *lazy_scope;
  /* global loads of arguments the kernel does not write, for reuse: the
   * elements a lane holds of a broadcast operand often repeat (attention's
   * lse and D per row, read for every column) */
  VEC(load_ent) loads;
  bool *remarked;        /* by origin: conversion remark given */
  bool *red_more;        /* by reduction link: a later link follows it */
  uint32_t *red_init;    /* by deferred link: the chain's initial value */
  struct stage **stage_of; /* by origin (pre-expansion node): its staging */
  VEC(struct stage *) stages_all; /* every staged tile, once */
  uint32_t *nuses;       /* by node: operands that name it */
  bool wgmma;            /* the kernel's mma is a warpgroup one */
  /* registers a wgmma in flight writes (by register; see emit) */
  VEC(uint8_t) pend;
  uint32_t npend;
  bool carry_group;      /* the ENDLOOP being emitted keeps a group in flight */
  int64_t *frag_vals;    /* frag_at's scratch */
  bool *frag_known;
  VEC(layout_facts) facts; /* frag_table and elem_reps, by layout */
  VEC(ldsm_memo) ldsm_memos; /* try_ldmatrix's decisions */
  bool *unmask_cand;     /* by node: a causal mask of its loop (mask_split) */
  bool unmasking;        /* lowering the tiles the masks leave whole */
} lw;

static uint32_t reg(lw *w, tir_ty ty) {
  vec_push(w->ctx, &w->p->regs, ty);
  return w->p->regs.n - 1;
}

static bool pending(const lw *w, uint32_t r) {
  return r && r < w->pend.n && w->pend.v[r];
}

/* Every instruction goes through here. While wgmmas are in flight, the
 * first other instruction that touches their registers, and any barrier
 * or loop boundary (the tiles they read must not be overwritten), is
 * preceded by a wait for all of them (tir.h) — except the end of a loop
 * that carries its last group into the next iteration (carry_group). */
static tir_instr *emit(lw *w, tir_op op, tir_ty ty, uint32_t dst, uint32_t a,
                       uint32_t b, uint32_t c, int64_t imm) {
  /* planted bug for the tests: never wait */
  if (w->npend && op != T_WGMMA &&
      !(w->ctx->test_hooks & WV_HOOK_WGMMA_NO_WAIT) &&
      (op == T_BAR || op == T_LOOP || (op == T_ENDLOOP && !w->carry_group) ||
       pending(w, dst) ||
       pending(w, a) || pending(w, b) || pending(w, c))) {
    tir_instr wait = {.op = T_WGWAIT, .ty = TY_PRED, .loc = w->loc};
    vec_push(w->ctx, &w->p->code, wait);
    memset(w->pend.v, 0, w->pend.n);
    w->npend = 0;
  }
  tir_instr in = {.op = op, .ty = ty, .dst = dst, .a = a, .b = b, .c = c,
                  .imm = imm, .loc = w->loc};
  vec_push(w->ctx, &w->p->code, in);
  return &w->p->code.v[w->p->code.n - 1];
}

static uint32_t op2(lw *w, tir_op op, tir_ty ty, uint32_t a, uint32_t b) {
  uint32_t d = reg(w, ty);
  emit(w, op, ty, d, a, b, 0, 0);
  return d;
}

static uint32_t iconst(lw *w, int64_t v) {
  uint32_t d = reg(w, TY_I32);
  emit(w, T_CONST, TY_I32, d, 0, 0, 0, v);
  return d;
}

/* A constant of any type into register d: floats keep v, integers and
 * predicates take it rounded. */
static void const_into(lw *w, tir_ty ty, uint32_t d, double v) {
  bool fl = ty == TY_F16 || ty == TY_BF16 || ty == TY_F32;
  emit(w, T_CONST, ty, d, 0, 0, 0, fl ? 0 : (int64_t)nearbyint(v))->fimm = v;
}

static uint32_t fconst(lw *w, tir_ty ty, double v) {
  uint32_t d = reg(w, ty);
  const_into(w, ty, d, v);
  return d;
}

/* ---- index expressions -> integer code ------------------------------------ */
static memo_ent *memo_slot(lw *w, ex_t e) {
  uint32_t i = (uint32_t)(e * 2654435761u) & (w->memo_cap - 1);
  while (w->memo[i].e && w->memo[i].e != e)
    i = (i + 1) & (w->memo_cap - 1);
  return &w->memo[i];
}

static void memo_put(lw *w, ex_t e, uint32_t r) {
  if (2 * (w->memo_used + 1) > w->memo_cap) {
    memo_ent *old = w->memo;
    uint32_t oc = w->memo_cap;
    w->memo_cap = oc ? oc * 2 : 1024;
    w->memo = wv_alloc(w->ctx, w->memo_cap * sizeof *w->memo);
    w->memo_used = 0;
    for (uint32_t i = 0; i < oc; i++)
      if (old[i].e && w->scope_open[old[i].scope]) {
        *memo_slot(w, old[i].e) = old[i];
        w->memo_used++;
      }
  }
  memo_ent *m = memo_slot(w, e);
  if (!m->e)
    w->memo_used++;
  *m = (memo_ent){e, r, w->scopes.v[w->scopes.n - 1]};
}

static uint32_t lower_expr(lw *w, ex_t e) {
  wavec_ctx *ctx = w->ctx;
  if (w->memo_cap) {
    memo_ent *m = memo_slot(w, e);
    if (m->e == e && w->scope_open[m->scope])
      return m->reg;
  }
  uint32_t r = 0;
  int64_t v;
  switch (ex_kind_of(ctx, e)) {
  case EX_CONST:
    ex_is_const(ctx, e, &v);
    r = iconst(w, v);
    break;
  case EX_SYM: {
    wavec_sym s = ex_sym_of(ctx, e);
    for (int a = 0; a < 3 && !r; a++) {
      if (s == w->d->T[a])
        r = reg(w, TY_I32), emit(w, T_SREG, TY_I32, r, 0, 0, 0, TIR_SREG_TID_X + a);
      else if (s == w->d->WG[a])
        r = reg(w, TY_I32), emit(w, T_SREG, TY_I32, r, 0, 0, 0, TIR_SREG_CTAID_X + a);
    }
    if (!r && s < w->d->nsyms && w->loopreg[s])
      r = w->loopreg[s];
    if (!r)
      wv_fail(ctx, D_INTERNAL, w->loc, "index uses '%s', which has no value "
              "in the thread program", wavec_symbol_name(ctx, s));
    break;
  }
  case EX_ADD:
  case EX_MUL:
  case EX_MIN:
  case EX_MAX: {
    static const tir_op ops[] = {[EX_ADD] = T_ADD, [EX_MUL] = T_MUL,
                                 [EX_MIN] = T_MIN, [EX_MAX] = T_MAX};
    tir_op op = ops[ex_kind_of(ctx, e)];
    r = lower_expr(w, ex_arg(ctx, e, 0));
    for (uint32_t i = 1; i < ex_nargs(ctx, e); i++)
      r = op2(w, op, TY_I32, r, lower_expr(w, ex_arg(ctx, e, i)));
    break;
  }
  case EX_FLOORDIV:
  case EX_MOD: {
    uint32_t a = lower_expr(w, ex_arg(ctx, e, 0));
    uint32_t b = lower_expr(w, ex_arg(ctx, e, 1));
    r = op2(w, ex_kind_of(ctx, e) == EX_MOD ? T_MOD : T_DIV, TY_I32, a, b);
    break;
  }
  }
  memo_put(w, e, r);
  return r;
}

/* e with the element number and the bound symbols made constants,
 * simplified under the ranges of the thread, workgroup and loop ids. */
static ex_t concrete(lw *w, ex_t e, uint32_t elem) {
  wavec_ctx *ctx = w->ctx;
  ex_t ev = ex_const(ctx, elem);
  e = ex_subst(ctx, e, 1, &w->d->E, &ev);
  e = ex_subst(ctx, e, w->bsyms.n, w->bsyms.v, w->bvals.v);
  return ex_simplify(ctx, e, w->ranges, w->nranges);
}

static ex_t index_of(lw *w, uint32_t id, wavec_sym dim) {
  wv_node *n = wv_get(w->g, id);
  wv_nodeinfo *in = &w->ix->info[id];
  for (uint32_t i = 0; i < n->type.n; i++)
    if (n->type.dims[i] == dim)
      return wv_index_expr(w->k, dim, in->layout, in->coord[i]);
  wv_assert(w->ctx, 0);
  return 0;
}

/* ---- memory accesses ------------------------------------------------------ */
/* Offset (in elements) of element e of clone `id` (a READ, or the value a
 * WRITE stores) in memory `mem`, through the mapping if any; *mask gets a
 * predicate register, or 0 when the access is provably in bounds. */
/* The memory coordinate along each memory dim (out[i] for mem dim i) of
 * element e of clone `id` (a READ, or the value a WRITE stores), through the
 * mapping if any, as concrete expressions. */
static void mem_coords(lw *w, uint32_t id, uint32_t mapping,
                       const wv_node *mem, uint32_t e, ex_t *out) {
  wavec_ctx *ctx = w->ctx;
  wv_kernel *k = w->k;
  wv_mapping *m = mapping ? &k->mappings.v[mapping - 1] : NULL;
  ex_t iterval[WV_MAX_DIMS];
  if (m) {
    /* outputs bind each iterator to a register coordinate */
    for (uint32_t j = 0; j < m->iters.n; j++)
      iterval[j] = 0;
    for (uint32_t o = 0; o < m->outputs.n; o++) {
      ex_t oe = m->outputs.v[o].e;
      wavec_sym it = ex_sym_of(ctx, oe);
      uint32_t j = 0;
      while (j < m->iters.n && m->iters.v[j] != it)
        j++;
      if (!it || j == m->iters.n)
        wv_fail(ctx, D_MAPPING, m->outputs.v[o].loc,
                "mapping '%s': an output must be one of its iterators",
                m->name);
      iterval[j] = index_of(w, id, m->outputs.v[o].dim);
    }
  }
  for (uint32_t i = 0; i < mem->type.n; i++) {
    wavec_sym dim = mem->type.dims[i];
    ex_t coord = 0;
    if (m) {
      for (uint32_t j = 0; j < m->inputs.n; j++)
        if (m->inputs.v[j].dim == dim)
          coord = ex_subst(ctx, m->inputs.v[j].e, m->iters.n, m->iters.v,
                           iterval);
    } else {
      coord = index_of(w, id, dim);
    }
    out[i] = concrete(w, coord, e);
  }
}

/* A predicate that 0 <= c < size, ANDed into *mask; nothing when the
 * bounds prove it. */
static void bound_check(lw *w, ex_t c, int64_t size, uint32_t *mask) {
  int64_t lo, hi;
  if (ex_bounds(w->ctx, c, w->ranges, w->nranges, &lo, &hi) && lo >= 0 &&
      hi < size)
    return;
  uint32_t r = lower_expr(w, c);
  uint32_t p1 = reg(w, TY_PRED), p2 = reg(w, TY_PRED);
  emit(w, T_SETP, TY_I32, p1, r, iconst(w, 0), 0, TIR_CMP_GE);
  emit(w, T_SETP, TY_I32, p2, r, iconst(w, size), 0, TIR_CMP_LT);
  uint32_t both = op2(w, T_AND, TY_PRED, p1, p2);
  *mask = *mask ? op2(w, T_AND, TY_PRED, *mask, both) : both;
}

/* Offset (in elements) of element e of clone `id` in memory `mem`; *mask
 * gets a predicate register, or 0 when the access is provably in bounds. */
static uint32_t mem_offset(lw *w, uint32_t id, uint32_t mapping,
                           const wv_node *mem, uint32_t e, uint32_t *mask) {
  wavec_ctx *ctx = w->ctx;
  ex_t coord[WV_MAX_DIMS];
  mem_coords(w, id, mapping, mem, e, coord);
  ex_t off = ex_const(ctx, 0);
  *mask = 0;
  int64_t stride = 1;
  for (int i = (int)mem->type.n - 1; i >= 0; i--) {
    int64_t size = w->k->bind.ival[mem->type.dims[i]];
    bound_check(w, coord[i], size, mask);
    off = ex_add(ctx, off, ex_mul(ctx, coord[i], ex_const(ctx, stride)));
    stride *= size;
  }
  return lower_expr(w, ex_simplify(ctx, off, w->ranges, w->nranges));
}

/* ---- helpers for ops --------------------------------------------------------- */
static uint32_t nelem(lw *w, uint32_t id) {
  return w->ix->info[id].layout->nelem;
}

static void staged_read(lw *w, uint32_t id, struct stage *st);

/* Register of element e of operand `op` as type ty (scalars are made; a
 * staged read is loaded from shared memory into registers at its first use
 * in each scope, see lazy_scope). It may emit code: two calls in one
 * argument list would leave the order of that code to the C compiler, so
 * callers take the operands into variables, last operand first. */
static uint32_t elem(lw *w, uint32_t op, uint32_t e, tir_ty ty) {
  wv_node *n = wv_get(w->g, op);
  struct stage *st = n->op == WAVEC_OP_READ
                         ? w->stage_of[w->ix->info[op].origin]
                         : NULL;
  if (st && (!w->lazy_scope[op] || !w->scope_open[w->lazy_scope[op] - 1])) {
    wavec_loc at = w->loc; /* the loads are the read's, at its line */
    w->loc = n->loc;
    staged_read(w, op, st);
    w->loc = at;
    w->lazy_scope[op] = w->scopes.v[w->scopes.n - 1] + 1;
  }
  if (n->op == WAVEC_OP_SCALAR) {
    double v = n->sym ? (w->k->bind.is_float[n->sym]
                             ? w->k->bind.fval[n->sym]
                             : (double)w->k->bind.ival[n->sym])
                      : n->fval;
    return fconst(w, ty, v);
  }
  return w->vals[op] + e;
}

/* The register an earlier load in an open scope put the same element in,
 * or 0. */
static uint32_t loaded(lw *w, int64_t arg, uint32_t off, uint32_t mask,
                       tir_ty ty) {
  for (uint32_t i = w->loads.n; i-- > 0;) {
    load_ent *l = &w->loads.v[i];
    if (l->arg == arg && l->off == off && l->mask == mask && l->ty == ty &&
        w->scope_open[l->scope])
      return l->reg;
  }
  return 0;
}

static uint32_t new_regs(lw *w, tir_ty ty, uint32_t n) {
  uint32_t first = reg(w, ty);
  for (uint32_t i = 1; i < n; i++)
    reg(w, ty);
  return first;
}

static const tir_op unary_ops[WAVEC_OP_COUNT] = {
    [WAVEC_OP_EXP2] = T_EXP2, [WAVEC_OP_EXP] = T_EXP,
    [WAVEC_OP_LOG2] = T_LOG2, [WAVEC_OP_RECIPROCAL] = T_RCP,
    [WAVEC_OP_SQRT] = T_SQRT, [WAVEC_OP_RSQRT] = T_RSQRT,
    [WAVEC_OP_ABS] = T_ABS,   [WAVEC_OP_TANH] = T_TANH,
    [WAVEC_OP_NEG] = T_NEG,   [WAVEC_OP_ADD] = T_ADD,
    [WAVEC_OP_SUB] = T_SUB,   [WAVEC_OP_MUL] = T_MUL,
    [WAVEC_OP_DIV] = T_DIV,   [WAVEC_OP_MAXIMUM] = T_MAX,
    [WAVEC_OP_MINIMUM] = T_MIN, [WAVEC_OP_MAX] = T_MAX,
    [WAVEC_OP_SUM] = T_ADD};
static const int cmp_of[WAVEC_OP_COUNT] = {
    [WAVEC_OP_GT] = TIR_CMP_GT, [WAVEC_OP_LT] = TIR_CMP_LT,
    [WAVEC_OP_GE] = TIR_CMP_GE, [WAVEC_OP_LE] = TIR_CMP_LE,
    [WAVEC_OP_EQ] = TIR_CMP_EQ, [WAVEC_OP_NE] = TIR_CMP_NE};

/* Coordinates (relative to the vector tile) of element e of `lane` under
 * layout l, evaluated numerically; out[i] for l->d[i]. */
static void frag_at(lw *w, const wv_layout *l, int lane, uint32_t e,
                    int64_t *out) {
  wavec_ctx *ctx = w->ctx;
  uint32_t ns = ctx->sym_names.n;
  if (!w->frag_vals) { /* scratch, shared by every call */
    w->frag_vals = wv_alloc(ctx, ns * sizeof *w->frag_vals);
    w->frag_known = wv_alloc(ctx, ns * sizeof *w->frag_known);
  }
  int64_t *vals = w->frag_vals;
  bool *known = w->frag_known;
  vals[w->d->T[0]] = lane;
  known[w->d->T[0]] = true;
  vals[w->d->E] = e;
  known[w->d->E] = true;
  for (uint32_t i = 0; i < l->n; i++)
    if (!ex_eval(ctx, l->d[i].frag, vals, known, ns, &out[i]))
      wv_fail(ctx, D_INTERNAL, w->loc, "a layout depends on more than the "
              "lane and the element number");
}

/* The memo entry of layout l (one per distinct layout). */
static layout_facts *facts_of(lw *w, const wv_layout *l) {
  for (uint32_t i = 0; i < w->facts.n; i++)
    if (w->facts.v[i].l == l || wv_layout_eq(w->facts.v[i].l, l))
      return &w->facts.v[i];
  layout_facts f = {l, NULL, NULL};
  vec_push(w->ctx, &w->facts, f);
  return &w->facts.v[w->facts.n - 1];
}

/* The coordinates of every element of layout l in every lane, by
 * [lane][element][dim of l] (frag_at for all of them). Memoized. */
static const int64_t *frag_table(lw *w, const wv_layout *l) {
  layout_facts *f = facts_of(w, l);
  if (f->frag)
    return f->frag;
  int lanes = w->d->lanes;
  size_t per = (size_t)l->nelem * l->n;
  int64_t *t = wv_alloc(w->ctx, ((size_t)lanes * per + 1) * sizeof *t);
  for (int ln = 0; ln < lanes; ln++)
    for (uint32_t e = 0; e < l->nelem; e++)
      frag_at(w, l, ln, e, t + ln * per + (size_t)e * l->n);
  return f->frag = t;
}

/* For each element e of layout l, the first element with the same
 * coordinates in every lane (e itself when none comes before it): a value
 * whose type lacks a dim the layout's elements range over (a row maximum
 * in the accumulator's layout) holds each of its values several times.
 * Coordinates are compared as simplified expressions in the lane, so a
 * sharing the simplifier cannot prove is missed, never invented.
 * Memoized. */
static const uint32_t *elem_reps(lw *w, const wv_layout *l) {
  wavec_ctx *ctx = w->ctx;
  layout_facts *f = facts_of(w, l);
  if (f->rep)
    return f->rep;
  uint32_t ne = l->nelem, nd = l->n;
  uint32_t *rep = wv_alloc(ctx, (ne ? ne : 1) * sizeof *rep);
  /* the coordinates of each element, in the lane only (hash-consed: equal
   * expressions are the same handle) */
  ex_t *co = wv_alloc(ctx, ((size_t)ne * nd + 1) * sizeof *co);
  for (uint32_t e = 0; e < ne; e++)
    for (uint32_t d = 0; d < nd; d++)
      co[(size_t)e * nd + d] = concrete(w, l->d[d].frag, e);
  for (uint32_t e = 0; e < ne; e++) {
    rep[e] = e;
    for (uint32_t g = 0; g < e && rep[e] == e; g++)
      if (!memcmp(co + (size_t)g * nd, co + (size_t)e * nd, nd * sizeof *co))
        rep[e] = g;
  }
  return f->rep = rep;
}

/* ---- staging mma operands through shared memory ------------------------------
 * A read whose every use is an mma operand, inside a loop, is staged: the
 * whole workgroup tile of its memory is copied to shared memory by all
 * threads with 16-byte asynchronous copies (coalesced), then each lane
 * loads its fragment elements from there. Rows are padded by 16 bytes
 * against bank conflicts.
 *
 * A tile that moves with the loop around it streams through a ring of S
 * slots (hardware `stages`): before the loop tiles 0..S-2 are issued; at
 * the top of iteration i the thread waits for tile i's copies, a barrier
 * makes them visible (and ends every reader of iteration i-1), tile i+S-1
 * is issued into the slot iteration i-1 used, and the body computes on
 * slot i mod S. One barrier per iteration; S-1 tiles in flight. With S = 1
 * (and for tiles that do not move with their loop) the copy stands where
 * the tile is used: barrier, copy, wait, barrier. */
typedef struct stage {
  uint32_t mem;                 /* the ARG node */
  wavec_sym loopvar;            /* the loop counter its tile moves with */
  uint32_t loop;                /* ITERATE whose ring streams it, or 0 */
  int64_t base;                 /* byte offset in shared memory (slot 0) */
  int64_t bytes;                /* one tile, padded, a multiple of 16 */
  int64_t slot;                 /* bytes between the slots of its ring */
  ex_t at;                      /* byte offset of the slot in use, or 0 */
  int64_t ext[WV_MAX_DIMS];     /* tile extent per memory dim */
  int64_t sstride[WV_MAX_DIMS]; /* shared stride (elements) per memory dim */
  ex_t start[WV_MAX_DIMS];      /* the workgroup tile's first coordinate */
  uint32_t done_scope;          /* scope whose iteration copied it, +1 */
  bool swz;                     /* a wgmma operand: 128-byte rows, swizzled */
} stage;

enum { STAGE_VEC = 8, STAGE_PAD = 8 }; /* elements of 16 bits */
/* A wgmma operand tile [rows, cols] (the last two memory dims; any dims
 * before them of extent 1): column panels of 64 elements of 16 bits, each
 * panel rows x 128 bytes, one after the other; each group of 8 rows is
 * 1024 bytes and 1024-aligned, its 16-byte chunks swizzled (T_SWZ) as the
 * matrix descriptor's 128-byte mode expects. */
enum { SWZ_ROW = 64, SWZ_ALIGN = 1024 };

/* The element offset in st's tile of the element at local coordinates
 * `local` (one per memory dim). */
static ex_t stage_elem_off(wavec_ctx *ctx, const stage *st, uint32_t nd,
                           const ex_t *local) {
  if (st->swz) {
    ex_t c = local[nd - 1], r = local[nd - 2], w64 = ex_const(ctx, SWZ_ROW);
    ex_t panel = ex_mul(ctx, ex_floordiv(ctx, c, w64),
                        ex_const(ctx, st->ext[nd - 2] * SWZ_ROW));
    return ex_add(ctx, panel, ex_add(ctx, ex_mul(ctx, r, w64),
                                     ex_mod(ctx, c, w64)));
  }
  ex_t off = ex_const(ctx, 0);
  for (uint32_t i = 0; i < nd; i++)
    off = ex_add(ctx, off, ex_mul(ctx, local[i], ex_const(ctx, st->sstride[i])));
  return off;
}
/* With stages unset: the deepest ring of up to 3 slots whose staged tiles
 * fit in this many bytes (two workgroups per 228 KiB multiprocessor). */
enum { AUTO_STAGES = 3, AUTO_STAGE_BYTES = 112 * 1024 };

/* The first coordinate of the workgroup's tile along dim d: the workgroup
 * offset for split dims, the loop's for tiled ones, else 0. */
static ex_t wg_start(lw *w, wavec_sym d, int64_t *ext) {
  wavec_ctx *ctx = w->ctx;
  wv_diminfo *di = &w->d->dim[d];
  if (di->wg_axis >= 0) {
    *ext = di->wg_tile;
    return ex_mul(ctx, ex_sym(ctx, w->d->WG[di->wg_axis]),
                  ex_const(ctx, di->wg_tile));
  }
  if (di->tile) {
    *ext = di->tile;
    return ex_mul(ctx, ex_sym(ctx, di->loopvar), ex_const(ctx, di->tile));
  }
  *ext = di->size;
  return ex_const(ctx, 0);
}

/* Can read clone `id` be staged? Fills *st (without base) when it can. */
static bool stageable(lw *w, uint32_t id, stage *st) {
  wv_node *n = wv_get(w->g, id);
  if (n->op != WAVEC_OP_READ || !w->mma_only[id] ||
      (w->ctx->test_hooks & WV_HOOK_NO_STAGING))
    return false;
  wv_node *mem = wv_get(w->g, n->mem);
  if (tir_ty_bytes(tir_ty_of(mem->type.dt)) != 2)
    return false;
  if (n->mapping) {
    /* a pure permutation: every input an iterator */
    wv_mapping *m = &w->k->mappings.v[n->mapping - 1];
    for (uint32_t j = 0; j < m->inputs.n; j++)
      if (!ex_sym_of(w->ctx, m->inputs.v[j].e))
        return false;
  }
  uint32_t nd = mem->type.n;
  st->mem = n->mem;
  for (uint32_t i = 0; i < nd; i++) {
    st->start[i] = wg_start(w, mem->type.dims[i], &st->ext[i]);
    wv_diminfo *di = &w->d->dim[mem->type.dims[i]];
    if (di->tile && di->wg_axis < 0)
      st->loopvar = di->loopvar;
  }
  int64_t last = w->k->bind.ival[mem->type.dims[nd - 1]];
  if (st->ext[nd - 1] % STAGE_VEC || last % STAGE_VEC)
    return false;
  if (w->wgmma) {
    /* [.., rows, cols] in 64-column panels of 128-byte swizzled rows */
    if (nd < 2 || n->mapping || st->ext[nd - 1] % SWZ_ROW ||
        st->ext[nd - 2] % 8)
      return false;
    for (uint32_t i = 0; i + 2 < nd; i++)
      if (st->ext[i] != 1)
        return false;
    st->swz = true;
    st->bytes = st->ext[nd - 2] * st->ext[nd - 1] * 2; /* 1024 | bytes */
    return st->bytes <= 96 * 1024;
  }
  int64_t s = 1;
  for (int i = (int)nd - 1; i >= 0; i--) {
    st->sstride[i] = s;
    s *= st->ext[i] + (i == (int)nd - 1 ? STAGE_PAD : 0);
  }
  st->bytes = (s * 2 + 15) / 16 * 16;
  return s * 2 <= 96 * 1024;
}

/* Does read r give the same values in every iteration of loop `it` (the
 * loop's dim is not its, and nothing the kernel writes is read)? Such a
 * read is hoisted out of the loop. */
static bool loop_invariant(lw *w, const wv_node *r, const wv_node *it) {
  return !wv_type_has(&r->type, it->sym) && !w->written[r->mem];
}

/* The loop that streams staged read `id` through a ring: the iterate whose
 * body holds it, when the tile moves with that loop's counter and the read
 * is not hoisted out of it; else 0. */
static uint32_t ring_loop(lw *w, uint32_t id, const stage *st) {
  wv_node *n = wv_get(w->g, id);
  uint32_t owner = w->g->blocks.v[n->block].owner;
  if (!owner || !st->loopvar || (w->ctx->test_hooks & WV_HOOK_NO_PIPELINE))
    return 0;
  wv_node *it = wv_get(w->g, owner);
  if (w->d->dim[it->sym].loopvar != st->loopvar || loop_invariant(w, n, it))
    return 0;
  return owner;
}

static ex_t linear_tid(lw *w) {
  wavec_ctx *ctx = w->ctx;
  wv_dist *d = w->d;
  ex_t t = ex_sym(ctx, d->T[2]);
  t = ex_add(ctx, ex_mul(ctx, t, ex_const(ctx, d->block[1])),
             ex_sym(ctx, d->T[1]));
  return ex_add(ctx, ex_mul(ctx, t, ex_const(ctx, d->block[0])),
                ex_sym(ctx, d->T[0]));
}

/* A shared byte address: e (thread ids and constants) plus `at` (a slot
 * offset, or 0), lowered as (e's variable part + at) + e's constant so that
 * fragments of one slot share the register and the constant becomes the
 * access's immediate offset. */
static uint32_t smem_addr(lw *w, ex_t e, ex_t at) {
  wavec_ctx *ctx = w->ctx;
  int64_t c = 0;
  ex_t rest = e;
  if (ex_kind_of(ctx, e) == EX_ADD) {
    rest = ex_const(ctx, 0);
    for (uint32_t i = 0; i < ex_nargs(ctx, e); i++) {
      int64_t v;
      if (ex_is_const(ctx, ex_arg(ctx, e, i), &v))
        c += v;
      else
        rest = ex_add(ctx, rest, ex_arg(ctx, e, i));
    }
  } else if (ex_is_const(ctx, e, &c)) {
    rest = ex_const(ctx, 0);
  }
  if (at)
    rest = ex_simplify(ctx, ex_add(ctx, rest, at), w->ranges, w->nranges);
  uint32_t r = lower_expr(w, rest);
  return c ? op2(w, T_ADD, TY_I32, r, iconst(w, c)) : r;
}

/* Issues the asynchronous copies of st's workgroup tile, 16 bytes each,
 * all threads together, into the slot at byte offset `at` (0: slot 0); the
 * loop counter (if any) replaced by `shift` (0: as is), each copy also
 * predicated by `extra` (0: none). */
static void stage_issue(lw *w, stage *st, ex_t shift, ex_t at,
                        uint32_t extra) {
  wavec_ctx *ctx = w->ctx;
  wv_node *mem = wv_get(w->g, st->mem);
  tir_ty ty = tir_ty_of(mem->type.dt);
  uint32_t nd = mem->type.n;
  int64_t total = 1;
  for (uint32_t i = 0; i < nd; i++)
    total *= st->ext[i];
  int64_t nvec = total / STAGE_VEC;
  int64_t threads = w->d->block[0] * w->d->block[1] * w->d->block[2];
  int64_t iters = (nvec + threads - 1) / threads;
  ex_t tid = linear_tid(w);
  for (int64_t it = 0; it < iters; it++) {
    ex_t v = ex_add(ctx, tid, ex_const(ctx, it * threads));
    uint32_t mask = 0;
    if (nvec % threads)
      bound_check(w, concrete(w, v, 0), nvec, &mask);
    /* local coordinates of the vector's first element, row-major */
    ex_t rest = ex_mul(ctx, v, ex_const(ctx, STAGE_VEC));
    ex_t goff = ex_const(ctx, 0), local[WV_MAX_DIMS];
    int64_t gstride = 1;
    for (int i = (int)nd - 1; i >= 0; i--) {
      ex_t c = i > 0 ? ex_mod(ctx, rest, ex_const(ctx, st->ext[i])) : rest;
      rest = ex_floordiv(ctx, rest, ex_const(ctx, st->ext[i]));
      goff = ex_add(ctx, goff,
                    ex_mul(ctx, ex_add(ctx, st->start[i], c),
                           ex_const(ctx, gstride)));
      local[i] = c;
      gstride *= w->k->bind.ival[mem->type.dims[i]];
    }
    ex_t soff = stage_elem_off(ctx, st, nd, local);
    if (shift && st->loopvar)
      goff = ex_subst(ctx, goff, 1, &st->loopvar, &shift);
    soff = ex_add(ctx, ex_const(ctx, st->base),
                  ex_mul(ctx, soff, ex_const(ctx, 2)));
    uint32_t m = mask;
    if (extra)
      m = mask ? op2(w, T_AND, TY_PRED, mask, extra) : extra;
    uint32_t sa = smem_addr(w, concrete(w, soff, 0), at);
    if (st->swz)
      sa = op2(w, T_SWZ, TY_I32, sa, 0);
    emit(w, T_CPA, ty, 0, sa, lower_expr(w, concrete(w, goff, 0)), m,
         mem->index);
  }
}

/* The whole copy of n tiles, where it stands: barrier, copy, wait,
 * barrier. */
static void stage_copy(lw *w, stage *const *sts, uint32_t n) {
  emit(w, T_BAR, TY_PRED, 0, 0, 0, 0, 0);
  for (uint32_t i = 0; i < n; i++)
    stage_issue(w, sts[i], 0, 0, 0);
  emit(w, T_CPCOMMIT, TY_PRED, 0, 0, 0, 0, 0);
  emit(w, T_CPWAIT, TY_PRED, 0, 0, 0, 0, 0);
  emit(w, T_BAR, TY_PRED, 0, 0, 0, 0, 0);
}

/* The byte offset of the ring slot that holds tile `tile` of st (of S). */
static ex_t slot_at(lw *w, const stage *st, int64_t S, ex_t tile) {
  wavec_ctx *ctx = w->ctx;
  return concrete(w, ex_mul(ctx, ex_mod(ctx, tile, ex_const(ctx, S)),
                            ex_const(ctx, st->slot)), 0);
}

/* The address of every thread of the block for expression e (only thread
 * ids may appear); false if something else does. */
static bool eval_threads(lw *w, ex_t e, int64_t *out) {
  wavec_ctx *ctx = w->ctx;
  wv_dist *d = w->d;
  uint32_t ns = ctx->sym_names.n;
  int64_t *vals = wv_alloc(ctx, ns * sizeof *vals);
  bool *known = wv_alloc(ctx, ns * sizeof *known);
  for (int a = 0; a < 3; a++)
    known[d->T[a]] = true;
  int64_t n = d->block[0] * d->block[1] * d->block[2];
  for (int64_t t = 0; t < n; t++) {
    vals[d->T[0]] = t % d->block[0];
    vals[d->T[1]] = t / d->block[0] % d->block[1];
    vals[d->T[2]] = t / (d->block[0] * d->block[1]);
    if (!ex_eval(ctx, e, vals, known, ns, &out[t]))
      return false;
  }
  return true;
}

/* The address each lane supplies to a (transposed) ldmatrix that hands out
 * the elements whose addresses v[e][thread] are, or 0 when no ldmatrix
 * does. Plain: pair j of lane l is row l/4 of matrix j at columns 2(l%4),
 * +1; transposed: rows 2(l%4), +1 of matrix j at column l/4. Rows are 8
 * contiguous 16-bit elements, 16-byte aligned. The address is built in the
 * algebra and then checked against v for every thread. */
static ex_t ldmatrix_addr(lw *w, const ex_t *addr, int64_t *const *v,
                          uint32_t np, int64_t n, bool tr) {
  wavec_ctx *ctx = w->ctx;
  wv_dist *d = w->d;
  /* row r of matrix j, for the wave of thread base w0 */
#define ROW(j, r, w0)                                                          \
  (tr ? v[2 * (j) + (r) % 2][(w0) + (r) / 2] : v[2 * (j)][(w0) + 4 * (r)])
  for (int64_t t = 0; t < n; t++) {
    int64_t l = t % 32, w0 = t - l;
    for (uint32_t j = 0; j < np; j++)
      for (int h = 0; h < 2; h++) {
        int64_t row = tr ? ROW(j, 2 * (l % 4) + h, w0) : ROW(j, l / 4, w0);
        int64_t col = tr ? 2 * (l / 4) : 4 * (l % 4) + 2 * h;
        if (row % 16 || v[2 * j + h][t] != row + col)
          return 0;
      }
  }
  /* matrix j's rows sit at a constant offset from matrix 0's */
  int64_t delta[4] = {0};
  for (uint32_t j = 1; j < np; j++) {
    delta[j] = ROW(j, 0, 0) - ROW(0, 0, 0);
    for (int64_t w0 = 0; w0 < n; w0 += 32)
      for (int r = 0; r < 8; r++)
        if (ROW(j, r, w0) - ROW(0, r, w0) != delta[j])
          return 0;
  }
  if (np == 4 && delta[3] != delta[1] + delta[2])
    return 0;
  /* lane l supplies row l%8 of matrix l/8 */
  ex_t t0 = ex_sym(ctx, d->T[0]);
  ex_t wave0 = ex_sub(ctx, t0, ex_mod(ctx, t0, ex_const(ctx, 32)));
  ex_t r = ex_mod(ctx, t0, ex_const(ctx, 8));
  ex_t e;
  if (!tr) {
    ex_t lane = ex_add(ctx, wave0, ex_mul(ctx, ex_const(ctx, 4), r));
    e = ex_subst(ctx, addr[0], 1, &d->T[0], &lane);
  } else {
    /* row r = element r%2 of the lane r/2: addr[0] there, plus the pitch
     * between the pair's elements for odd rows */
    ex_t lane = ex_add(ctx, wave0, ex_floordiv(ctx, r, ex_const(ctx, 2)));
    int64_t pitch = v[1][0] - v[0][0];
    e = ex_add(ctx, ex_subst(ctx, addr[0], 1, &d->T[0], &lane),
               ex_mul(ctx, ex_const(ctx, pitch),
                      ex_mod(ctx, t0, ex_const(ctx, 2))));
  }
  ex_t m8 = ex_mod(ctx, ex_floordiv(ctx, t0, ex_const(ctx, 8)), ex_const(ctx, 2));
  ex_t m16 = ex_mod(ctx, ex_floordiv(ctx, t0, ex_const(ctx, 16)), ex_const(ctx, 2));
  if (np >= 2)
    e = ex_add(ctx, e, ex_mul(ctx, ex_const(ctx, delta[1]), m8));
  if (np == 4)
    e = ex_add(ctx, e, ex_mul(ctx, ex_const(ctx, delta[2]), m16));
  e = ex_simplify(ctx, e, w->ranges, w->nranges);
  int64_t *sup = wv_alloc(ctx, (size_t)n * sizeof *sup);
  if (!eval_threads(w, e, sup))
    return 0;
  /* lane l must supply row l%8 of matrix l/8 (lanes past the last matrix
   * supply nothing that is read) */
  for (int64_t t = 0; t < n; t++) {
    int64_t l = t % 32, w0 = t - l;
    uint32_t j = (uint32_t)(l / 8);
    if (j < np && sup[t] != ROW(j, l % 8, w0))
      return 0;
  }
#undef ROW
  return e;
}

/* Fragment loads as one ldmatrix when the elements are pairs of 8x8 16-bit
 * matrices whose rows lie 16-byte aligned in shared memory, in exactly the
 * order ldmatrix hands them out. Decided by evaluating every thread; the
 * address each lane supplies is built in the algebra and checked the same
 * way. */
static bool try_ldmatrix(lw *w, uint32_t id, const ex_t *addr, uint32_t ne,
                         tir_ty ty, ex_t at) {
  wavec_ctx *ctx = w->ctx;
  wv_dist *d = w->d;
  uint32_t np = ne / 2;
  if (d->lanes != 32 || ne % 2 || np < 1 || np > 4 || np == 3 ||
      tir_ty_bytes(ty) != 2 || (ctx->test_hooks & WV_HOOK_NO_LDMATRIX))
    return false;
  /* the same fragment addresses (a loop lowered in parts) decide the same */
  ldsm_memo *memo = NULL;
  for (uint32_t i = 0; i < w->ldsm_memos.n && !memo; i++) {
    ldsm_memo *m = &w->ldsm_memos.v[i];
    if (m->ne == ne && !memcmp(m->addr, addr, ne * sizeof *addr))
      memo = m;
  }
  if (!memo) {
    ldsm_memo m = {.ne = ne};
    memcpy(m.addr, addr, ne * sizeof *addr);
    int64_t n = d->block[0] * d->block[1] * d->block[2];
    int64_t *v[8];
    bool ok = true;
    for (uint32_t e = 0; e < ne && ok; e++) {
      v[e] = wv_alloc(ctx, (size_t)n * sizeof *v[e]);
      ok = eval_threads(w, addr[e], v[e]);
    }
    for (int tr = 0; tr < 2 && ok && !m.e; tr++) {
      m.e = ldmatrix_addr(w, addr, v, np, n, tr != 0);
      m.tr = tr != 0;
    }
    vec_push(ctx, &w->ldsm_memos, m);
    memo = &w->ldsm_memos.v[w->ldsm_memos.n - 1];
  }
  if (!memo->e)
    return false;
  uint32_t *regs = wv_alloc(ctx, ne * sizeof *regs);
  for (uint32_t k = 0; k < ne; k++)
    regs[k] = w->vals[id] + k;
  tir_instr *in = emit(w, memo->tr ? T_LDSMT : T_LDSM, ty, 0,
                       smem_addr(w, memo->e, at), 0, 0, np);
  in->list = regs;
  in->nlist = ne;
  return true;
}

/* The shared byte address (before any swizzle, without the ring slot's
 * offset) of element e of clone `id` in its staged tile st. */
static ex_t staged_addr(lw *w, uint32_t id, const stage *st, uint32_t e) {
  wavec_ctx *ctx = w->ctx;
  wv_node *n = wv_get(w->g, id);
  wv_node *mem = wv_get(w->g, n->mem);
  ex_t coord[WV_MAX_DIMS];
  mem_coords(w, id, n->mapping, mem, e, coord);
  for (uint32_t i = 0; i < mem->type.n; i++)
    coord[i] = ex_sub(ctx, coord[i], concrete(w, st->start[i], 0));
  ex_t off = stage_elem_off(ctx, st, mem->type.n, coord);
  off = ex_add(ctx, ex_const(ctx, st->base),
               ex_mul(ctx, off, ex_const(ctx, 2)));
  return ex_simplify(ctx, off, w->ranges, w->nranges);
}

/* Loads clone `id`'s elements from its staged tile. Runs of elements at
 * consecutive, suitably aligned addresses (a fragment's pairs along k) are
 * loaded with one vector access. */
static void staged_read(lw *w, uint32_t id, stage *st) {
  wavec_ctx *ctx = w->ctx;
  wv_node *n = wv_get(w->g, id);
  wv_node *mem = wv_get(w->g, n->mem);
  tir_ty ty = tir_ty_of(mem->type.dt);
  int64_t esize = tir_ty_bytes(ty);
  uint32_t ne = nelem(w, id);
  wv_assert(ctx, !st->swz); /* wgmma operands are read by the wgmma */
  w->vals[id] = new_regs(w, ty, ne);
  ex_t *addr = wv_alloc(ctx, ne * sizeof *addr);
  for (uint32_t e = 0; e < ne; e++)
    addr[e] = staged_addr(w, id, st, e);
  if (try_ldmatrix(w, id, addr, ne, ty, st->at))
    return;
  for (uint32_t e = 0; e < ne;) {
    /* the longest run of 4 or 2 that is contiguous and aligned */
    uint32_t run = 1;
    for (uint32_t len = 4; len >= 2 && run == 1; len /= 2) {
      if (e % len || e + len > ne)
        continue;
      bool ok = true;
      for (uint32_t j = 1; j < len && ok; j++) {
        int64_t d;
        ok = ex_is_const(ctx, ex_sub(ctx, addr[e + j], addr[e]), &d) &&
             d == (int64_t)j * esize;
      }
      int64_t m;
      ok = ok && ex_is_const(ctx,
                             ex_simplify(ctx, ex_mod(ctx, addr[e],
                                                     ex_const(ctx, len * esize)),
                                         w->ranges, w->nranges),
                             &m) &&
           m == 0;
      if (ok)
        run = len;
    }
    uint32_t a = smem_addr(w, addr[e], st->at);
    if (run == 1) {
      emit(w, T_LDS, ty, w->vals[id] + e, a, 0, 0, 0);
    } else {
      uint32_t *regs = wv_alloc(ctx, run * sizeof *regs);
      for (uint32_t j = 0; j < run; j++)
        regs[j] = w->vals[id] + e + j;
      tir_instr *in = emit(w, T_LDSV, ty, 0, a, 0, 0, 0);
      in->list = regs;
      in->nlist = run;
    }
    e += run;
  }
}

/* The linear id of this thread's wave in its workgroup. */
static ex_t wave_id(lw *w) {
  wavec_ctx *ctx = w->ctx;
  wv_dist *d = w->d;
  ex_t t0 = ex_floordiv(ctx, ex_sym(ctx, d->T[0]), ex_const(ctx, d->lanes));
  ex_t t1 = ex_mul(ctx, ex_sym(ctx, d->T[1]), ex_const(ctx, d->waves[0]));
  ex_t t2 = ex_mul(ctx, ex_sym(ctx, d->T[2]),
                   ex_const(ctx, d->waves[0] * d->waves[1]));
  return ex_add(ctx, ex_add(ctx, t0, t1), t2);
}

/* ---- reductions ------------------------------------------------------------ */
static void lower_reduce(lw *w, uint32_t id) {
  wv_node *n = wv_get(w->g, id);
  uint32_t x = n->ops[0];
  const wv_layout *lx = w->ix->info[x].layout;
  tir_ty ty = tir_ty_of(n->type.dt);
  tir_op op = unary_ops[n->op];
  uint32_t ne = lx->nelem;
  int lanes = w->d->lanes;
  int di = -1;
  for (uint32_t i = 0; i < lx->n; i++)
    if (lx->d[i].dim == n->sym)
      di = (int)i;
  wv_assert(w->ctx, di >= 0);
  wv_diminfo *dinfo = &w->d->dim[n->sym];
  if (dinfo->wg_axis >= 0 && w->d->grid[dinfo->wg_axis] > 1)
    wv_fail(w->ctx, D_HARDWARE, n->loc,
            "reducing '%s', which is split over workgroups, is not supported "
            "yet (it needs a second kernel or atomics); keep it in one "
            "workgroup's tile",
            wavec_symbol_name(w->ctx, n->sym));
  /* coordinates of every (lane, element) */
  int64_t(*co)[WV_MAX_DIMS] = wv_alloc(w->ctx, (size_t)lanes * ne *
                                                   sizeof *co);
  for (int l = 0; l < lanes; l++)
    for (uint32_t e = 0; e < ne; e++)
      frag_at(w, lx, l, e, co[(size_t)l * ne + e]);
#define CO(l, e) co[(size_t)(l) * ne + (e)]
  /* Elements of one row (the same coordinates but along D, in every lane)
   * share one result: it is computed for the row's first element, its
   * representative, and copied to the others at the end. */
  uint32_t *rep = wv_alloc(w->ctx, ne * sizeof *rep);
  for (uint32_t e = 0; e < ne; e++) {
    rep[e] = e;
    for (uint32_t f = 0; f < e; f++) {
      bool row_all = true, row_any = false;
      for (int l = 0; l < lanes; l++) {
        bool row = true;
        for (uint32_t i = 0; i < lx->n; i++)
          if ((int)i != di && CO(l, e)[i] != CO(l, f)[i])
            row = false;
        row_all &= row;
        row_any |= row;
      }
      if (row_any != row_all)
        wv_fail(w->ctx, D_INTERNAL, n->loc,
                "reduction: the element rows differ between lanes");
      if (row_all && rep[e] == e)
        rep[e] = rep[f];
    }
  }
  /* A link followed by another one only reduces within the thread; the
   * next link folds in its partials, and the last one goes across lanes
   * and waves and then folds in the chain's initial value. */
  uint32_t init = n->nops > 1 ? n->ops[1] : 0, prev = 0;
  if (init && w->red_more[init]) {
    prev = init;
    init = w->red_init[prev];
  }
  uint32_t first = new_regs(w, ty, ne);
  for (uint32_t e = 0; e < ne; e++) {
    if (rep[e] != e)
      continue;
    /* within the thread: elements of the same row with other D coords */
    uint32_t acc = elem(w, x, e, ty);
    if (prev)
      acc = op2(w, op, ty, w->vals[prev] + e, acc);
    for (uint32_t f = 0; f < ne; f++) {
      if (f == e || rep[f] != e)
        continue;
      /* f counts once per distinct D coordinate: the first such f */
      bool newd_all = true;
      for (int l = 0; l < lanes; l++) {
        bool dup = CO(l, f)[di] == CO(l, e)[di];
        for (uint32_t g = 0; g < f && !dup; g++)
          dup = g != e && rep[g] == e && CO(l, g)[di] == CO(l, f)[di];
        newd_all &= !dup;
      }
      if (newd_all)
        acc = op2(w, op, ty, acc, elem(w, x, f, ty));
    }
    emit(w, T_MOV, ty, first + e, acc, 0, 0, 0);
  }
  if (w->red_more[id]) {
    w->red_init[id] = init;
    w->vals[id] = first;
    return;
  }
  /* across lanes: each lane bit that changes only D */
  for (int bit = 1; bit < lanes; bit <<= 1) {
    int kind = -1; /* 0: other rows, 1: reduce, 2: copies */
    for (int l = 0; l < lanes; l++) {
      for (uint32_t e = 0; e < ne; e++) {
        bool row = true;
        for (uint32_t i = 0; i < lx->n; i++)
          if ((int)i != di && CO(l, e)[i] != CO(l ^ bit, e)[i])
            row = false;
        int kk = !row ? 0 : CO(l, e)[di] != CO(l ^ bit, e)[di] ? 1 : 2;
        if (kind >= 0 && kind != kk)
          wv_fail(w->ctx, D_INTERNAL, n->loc,
                  "reduction: lane bit %d mixes rows and reduced coordinates",
                  bit);
        kind = kk;
      }
    }
    if (kind != 1)
      continue;
    for (uint32_t e = 0; e < ne; e++) {
      if (rep[e] != e)
        continue;
      uint32_t s = reg(w, ty);
      emit(w, T_SHFL, ty, s, first + e, 0, 0, bit);
      emit(w, op, ty, first + e, first + e, s, 0, 0);
    }
  }
#undef CO
  /* across waves: when the waves of the workgroup split D, each stores its
   * partials, and every wave combines all of them in wave order (so every
   * wave gets the same bits) */
  int axis = dinfo->wg_axis;
  if (axis >= 0 && w->d->waves[axis] > 1) {
    wavec_ctx *ctx = w->ctx;
    wv_dist *d = w->d;
    int64_t nw = d->waves[0] * d->waves[1] * d->waves[2];
    int64_t esize = tir_ty_bytes(ty);
    int64_t bytes = (nw * lanes * ne * esize + 15) / 16 * 16;
    if (bytes > w->convert_bytes)
      w->convert_bytes = bytes;
    int64_t stride = axis == 0 ? 1 : axis == 1 ? d->waves[0]
                                               : d->waves[0] * d->waves[1];
    ex_t wid = wave_id(w);
    ex_t coord = axis == 0 ? ex_floordiv(ctx, ex_sym(ctx, d->T[0]),
                                         ex_const(ctx, lanes))
                           : ex_sym(ctx, d->T[axis]);
    ex_t others = ex_sub(ctx, wid, ex_mul(ctx, coord, ex_const(ctx, stride)));
    /* slot of (wave, element, lane), in bytes after the staged tiles */
    ex_t lane = d->lane;
    emit(w, T_BAR, TY_PRED, 0, 0, 0, 0, 0);
    for (uint32_t e = 0; e < ne; e++) {
      if (rep[e] != e)
        continue;
      ex_t slot = ex_add(ctx, ex_mul(ctx, wid, ex_const(ctx, lanes * ne)),
                         ex_add(ctx, ex_const(ctx, e * lanes), lane));
      ex_t addr = ex_add(ctx, ex_const(ctx, w->stage_bytes),
                         ex_mul(ctx, slot, ex_const(ctx, esize)));
      emit(w, T_STS, ty, 0, lower_expr(w, concrete(w, addr, e)), first + e, 0,
           0);
    }
    emit(w, T_BAR, TY_PRED, 0, 0, 0, 0, 0);
    for (uint32_t e = 0; e < ne; e++) {
      if (rep[e] != e)
        continue;
      uint32_t acc = 0;
      for (int64_t j = 0; j < d->waves[axis]; j++) {
        ex_t wj = ex_add(ctx, others, ex_const(ctx, j * stride));
        ex_t slot = ex_add(ctx, ex_mul(ctx, wj, ex_const(ctx, lanes * ne)),
                           ex_add(ctx, ex_const(ctx, e * lanes), lane));
        ex_t addr = ex_add(ctx, ex_const(ctx, w->stage_bytes),
                           ex_mul(ctx, slot, ex_const(ctx, esize)));
        uint32_t v = reg(w, ty);
        emit(w, T_LDS, ty, v, lower_expr(w, concrete(w, addr, e)), 0, 0, 0);
        acc = acc ? op2(w, op, ty, acc, v) : v;
      }
      emit(w, T_MOV, ty, first + e, acc, 0, 0, 0);
    }
  }
  if (init)
    for (uint32_t e = 0; e < ne; e++)
      if (rep[e] == e)
        emit(w, op, ty, first + e, first + e, elem(w, init, e, ty), 0, 0);
  for (uint32_t e = 0; e < ne; e++)
    if (rep[e] != e)
      emit(w, T_MOV, ty, first + e, first + rep[e], 0, 0, 0);
  w->vals[id] = first;
}

/* ---- layout conversion through shared memory -------------------------------- */

/* A conversion in which every lane already holds each element it needs in
 * some register of some operand clone (FlashAttention's reuse of two n8
 * accumulator tiles as one k16 operand is one): register moves only. Fills
 * src[e] with the register of element e; false if some element must come
 * from another lane. Decided by evaluating every lane and element. */
static bool in_register(lw *w, uint32_t id, uint32_t *src) {
  wv_node *n = wv_get(w->g, id);
  wv_nodeinfo *in = &w->ix->info[id];
  const wv_layout *lr = in->layout;
  int lanes = w->d->lanes;
  const int64_t *tw = frag_table(w, lr);
  size_t pw = (size_t)lr->nelem * lr->n;
  for (uint32_t e = 0; e < lr->nelem; e++) {
    src[e] = 0;
    for (uint32_t j = 0; j < n->nops && !src[e]; j++) {
      uint32_t o = n->ops[j];
      wv_nodeinfo *oi = &w->ix->info[o];
      wv_node *on = wv_get(w->g, o);
      const int64_t *th = frag_table(w, oi->layout);
      size_t ph = (size_t)oi->layout->nelem * oi->layout->n;
      for (uint32_t f = 0; f < oi->layout->nelem && !src[e]; f++) {
        bool all = true;
        for (int l = 0; l < lanes && all; l++) {
          const int64_t *want = tw + l * pw + (size_t)e * lr->n;
          const int64_t *have = th + l * ph + (size_t)f * oi->layout->n;
          for (uint32_t i = 0; i < n->type.n && all; i++) {
            wavec_sym dim = n->type.dims[i];
            const wv_ldim *rd = &lr->d[i];
            int64_t mine = in->coord[i] * rd->v + want[i];
            for (uint32_t t = 0; t < on->type.n; t++)
              if (on->type.dims[t] == dim) {
                const wv_ldim *od = wv_layout_dim(oi->layout, dim);
                uint32_t k = (uint32_t)(od - oi->layout->d);
                all = oi->coord[t] * od->v + have[k] == mine;
              }
          }
        }
        if (all)
          src[e] = w->vals[o] + f;
      }
    }
    if (!src[e])
      return false;
  }
  return true;
}

/* One remark per converted value: where, what, and how it moves. */
static void remark_convert(lw *w, uint32_t id, const char *how) {
  wv_nodeinfo *in = &w->ix->info[id];
  if (w->remarked[in->origin])
    return;
  w->remarked[in->origin] = true;
  wv_node *n = wv_get(w->g, id);
  wv_buf b;
  wv_remark_start(w->k, n->loc, &b);
  wv_buf_printf(&b, "layout conversion of '%s' ",
                n->name ? n->name : wv_ops[wv_get(w->g, n->ops[0])->op].name);
  wv_type_print(w->ctx, &b, &n->type);
  wv_buf_printf(&b, " %s", how);
  wv_remark_end(w->k, &b);
}

static void lower_convert(lw *w, uint32_t id) {
  wavec_ctx *ctx = w->ctx;
  wv_node *n = wv_get(w->g, id);
  wv_nodeinfo *in = &w->ix->info[id];
  const wv_layout *lr = in->layout;
  tir_ty ty = tir_ty_of(n->type.dt);
  uint32_t *src = wv_alloc(ctx, lr->nelem * sizeof *src);
  if (in_register(w, id, src)) {
    remark_convert(w, id, "in registers (each lane holds what it needs)");
    uint32_t first = new_regs(w, ty, lr->nelem);
    for (uint32_t e = 0; e < lr->nelem; e++)
      emit(w, T_MOV, ty, first + e, src[e], 0, 0, 0);
    w->vals[id] = first;
    return;
  }
  int64_t elems = 1, stride[WV_MAX_DIMS];
  for (int i = (int)n->type.n - 1; i >= 0; i--) {
    stride[i] = elems;
    elems *= wv_layout_dim(lr, n->type.dims[i])->v;
  }
  remark_convert(w, id, "through shared memory (a round trip with two "
                        "barriers)");
  int64_t nwaves = w->d->waves[0] * w->d->waves[1] * w->d->waves[2];
  int64_t esize = tir_ty_bytes(ty);
  /* one region per wave at the start of shared memory (conversions are
   * separated by barriers, so they share it) */
  int64_t bytes = (elems * nwaves * esize + 15) / 16 * 16;
  if (bytes > w->convert_bytes)
    w->convert_bytes = bytes;
  /* addresses in elements below, in bytes when lowered; the region follows
   * the staged operands */
  ex_t base = ex_add(ctx, ex_const(ctx, w->stage_bytes / esize),
                     ex_mul(ctx, wave_id(w), ex_const(ctx, elems)));
  emit(w, T_BAR, TY_PRED, 0, 0, 0, 0, 0);
  for (uint32_t j = 0; j < n->nops; j++) {
    uint32_t o = n->ops[j];
    wv_node *on = wv_get(w->g, o);
    wv_nodeinfo *oi = &w->ix->info[o];
    for (uint32_t e = 0; e < oi->layout->nelem; e++) {
      ex_t off = base;
      uint32_t mask = 0;
      for (uint32_t i = 0; i < on->type.n; i++) {
        wavec_sym dim = on->type.dims[i];
        const wv_ldim *od = wv_layout_dim(oi->layout, dim);
        const wv_ldim *rd = wv_layout_dim(lr, dim);
        int32_t rc = 0;
        uint32_t ri = 0;
        for (uint32_t t = 0; t < n->type.n; t++)
          if (n->type.dims[t] == dim)
            rc = in->coord[t], ri = t;
        ex_t local = ex_add(ctx, ex_const(ctx, oi->coord[i] * od->v - rc * rd->v),
                            od->frag);
        local = concrete(w, local, e);
        bound_check(w, local, rd->v, &mask);
        off = ex_add(ctx, off, ex_mul(ctx, local, ex_const(ctx, stride[ri])));
      }
      off = ex_mul(ctx, off, ex_const(ctx, esize));
      uint32_t a = lower_expr(w, concrete(w, off, e));
      emit(w, T_STS, ty, 0, a, elem(w, o, e, ty), mask, 0);
    }
  }
  /* planted bug for the tests: lanes read what others have not written */
  if (!(w->ctx->test_hooks & WV_HOOK_DROP_BARRIER))
    emit(w, T_BAR, TY_PRED, 0, 0, 0, 0, 0);
  uint32_t first = new_regs(w, ty, lr->nelem);
  for (uint32_t e = 0; e < lr->nelem; e++) {
    ex_t off = base;
    for (uint32_t i = 0; i < n->type.n; i++) {
      const wv_ldim *rd = wv_layout_dim(lr, n->type.dims[i]);
      off = ex_add(ctx, off, ex_mul(ctx, rd->frag, ex_const(ctx, stride[i])));
    }
    off = ex_mul(ctx, off, ex_const(ctx, esize));
    emit(w, T_LDS, ty, first + e, lower_expr(w, concrete(w, off, e)), 0, 0, 0);
  }
  w->vals[id] = first;
}

/* The tiles iterate n walks, [*first, *last): all of them, or for
 * `iterate(D REL E)` those holding a coordinate d with d REL e for some e
 * of the workgroup's tile of E, [e0, e1]: d <= e1 (<: d <= e1 - 1) ends
 * the walk at the tile holding e1, d >= e0 (>: d >= e0 + 1) starts it at
 * the tile holding e0. Clamped to [0, trips]. */
static void loop_range(lw *w, wv_node *n, ex_t *first, ex_t *last) {
  wavec_ctx *ctx = w->ctx;
  wv_diminfo *di = &w->d->dim[n->sym];
  int64_t trips = di->size / di->tile;
  *first = ex_const(ctx, 0);
  *last = ex_const(ctx, trips);
  if (!n->rel)
    return;
  wv_diminfo *ei = &w->d->dim[n->rel_dim];
  wv_assert(ctx, ei->wg_axis >= 0);
  ex_t e0 = ex_mul(ctx, ex_sym(ctx, w->d->WG[ei->wg_axis]),
                   ex_const(ctx, ei->wg_tile));
  ex_t e1 = ex_add(ctx, e0, ex_const(ctx, ei->wg_tile - 1));
  ex_t T = ex_const(ctx, di->tile), zero = ex_const(ctx, 0),
       all = ex_const(ctx, trips), one = ex_const(ctx, 1);
  switch (n->rel) {
  case WAVEC_REL_LE:
  case WAVEC_REL_LT: {
    ex_t top = n->rel == WAVEC_REL_LT ? ex_sub(ctx, e1, one) : e1;
    *last = ex_add(ctx, ex_floordiv(ctx, top, T), one);
    break;
  }
  default: {
    ex_t bot = n->rel == WAVEC_REL_GT ? ex_add(ctx, e0, one) : e0;
    *first = ex_floordiv(ctx, bot, T);
    break;
  }
  }
  *first = concrete(w, ex_max(ctx, zero, ex_min(ctx, *first, all)), 0);
  *last = concrete(w, ex_max(ctx, zero, ex_min(ctx, *last, all)), 0);
  /* what the bound saves, as a remark: the tiles each workgroup walks */
  uint32_t ns = ctx->sym_names.n;
  int64_t *vals = wv_alloc(ctx, ns * sizeof *vals);
  bool *known = wv_alloc(ctx, ns * sizeof *known);
  wavec_sym wg = w->d->WG[ei->wg_axis];
  known[wg] = true;
  int64_t lo = trips, hi = 0, sum = 0, nwg = w->d->grid[ei->wg_axis];
  for (int64_t g = 0; g < nwg; g++) {
    int64_t f, l;
    vals[wg] = g;
    if (!ex_eval(ctx, *first, vals, known, ns, &f) ||
        !ex_eval(ctx, *last, vals, known, ns, &l))
      wv_fail(ctx, D_INTERNAL, n->loc, "iterate bound depends on more than "
              "the workgroup id");
    int64_t t = l > f ? l - f : 0;
    lo = t < lo ? t : lo;
    hi = t > hi ? t : hi;
    sum += t;
  }
  wv_buf b;
  wv_remark_start(w->k, n->loc, &b);
  wv_buf_printf(&b, "iterate over '%s' %s '%s': a workgroup "
                    "walks %lld to %lld of the %lld tiles, %.1f on average "
                    "(%.0f%% of the unbounded walk)",
                wavec_symbol_name(ctx, n->sym),
                wv_rel_names[n->rel], wavec_symbol_name(ctx, n->rel_dim),
                (long long)lo, (long long)hi, (long long)trips,
                (double)sum / (double)nwg,
                100.0 * (double)sum / (double)(nwg * trips));
  wv_remark_end(w->k, &b);
}

/* ---- wgmma ------------------------------------------------------------------- */
/* The staged, swizzled tile of mma operand r of node n for a wgmma, and
 * whether it is stored N-contiguous (the rhs of p · v: memory [K, N]); an
 * error at the mma's line when the operand cannot be read by a wgmma. */
static stage *wgmma_tile(lw *w, wv_node *n, int r, bool *mn) {
  wavec_ctx *ctx = w->ctx;
  uint32_t op = n->ops[r];
  wv_node *o = wv_get(w->g, op);
  stage *st = o->op == WAVEC_OP_READ ? w->stage_of[w->ix->info[op].origin]
                                     : NULL;
  wavec_sym last = 0;
  if (st) {
    const wv_type *mt = &wv_get(w->g, st->mem)->type;
    last = mt->dims[mt->n - 1];
  }
  *mn = st && last != n->sym;
  if (!st || !st->swz || (*mn && (r == 0 || last != n->type.dims[n->type.n - 1])))
    wv_fail(ctx, D_UNSUPPORTED, n->loc,
            "wgmma reads its %s from shared memory: it must be a read of "
            "a 16-bit memory tensor whose last dimension is %s, in tiles of "
            "a multiple of %d elements (128-byte rows) and of 8 rows, "
            "without a mapping",
            r ? "rhs" : "lhs", r ? "K or N" : "K", SWZ_ROW);
  return st;
}

/* A warpgroup mma (T_WGMMA): the rhs, and the lhs when it is a read, are
 * read by the wgmma itself from their staged, swizzled tiles (their first
 * element's address is all it needs); an lhs computed in registers (p in
 * p · v) is passed as its fragment. It accumulates in place: into the
 * accumulator operand's registers when nothing else reads them, else into
 * a copy. It runs asynchronously; emit() waits for it where its registers
 * are next touched. */
static void lower_wgmma(lw *w, uint32_t id) {
  wavec_ctx *ctx = w->ctx;
  wv_node *n = wv_get(w->g, id);
  const wv_mma_info *mi = wv_mma_info_get((wavec_mma_kind)w->d->mma);
  int64_t flags = w->d->mma, lbo = 0;
  uint32_t addr[2] = {0, 0};
  uint32_t na = nelem(w, n->ops[0]);
  for (int r = 0; r < 2; r++) {
    if (r == 0 && na) {
      flags |= TIR_WG_A_REGS;
      continue;
    }
    bool mn;
    stage *st = wgmma_tile(w, n, r, &mn);
    if (mn) {
      uint32_t nd = wv_get(w->g, st->mem)->type.n;
      int64_t N = 2 * (int64_t)nelem(w, n->ops[2]);
      if (N > SWZ_ROW ? N % SWZ_ROW : SWZ_ROW % N)
        wv_fail(ctx, D_UNSUPPORTED, n->loc,
                "wgmma reads an N-contiguous rhs in 64-column panels: its N "
                "tile (%lld) must divide 64 or be a multiple of it",
                (long long)N);
      flags |= TIR_WG_B_MN;
      lbo = st->ext[nd - 2] * 2 * SWZ_ROW;
    }
    addr[r] = smem_addr(w, staged_addr(w, n->ops[r], st, 0), st->at);
  }
  uint32_t acc = n->ops[2], nc = nelem(w, acc);
  uint32_t *list = wv_alloc(ctx, (nc + na) * sizeof *list);
  bool own = w->nuses[acc] == 1 && wv_get(w->g, acc)->op != WAVEC_OP_SCALAR;
  uint32_t first = own ? 0 : new_regs(w, TY_F32, nc);
  for (uint32_t e = 0; e < nc; e++) {
    uint32_t r = elem(w, acc, e, TY_F32);
    if (!own)
      emit(w, T_MOV, TY_F32, first + e, r, 0, 0, 0);
    list[e] = own ? r : first + e;
  }
  for (uint32_t e = 0; e < na; e++)
    list[nc + e] = elem(w, n->ops[0], e, tir_ty_of(mi->in));
  tir_instr *in = emit(w, T_WGMMA, TY_F32, 0, addr[0], addr[1], 0, flags);
  in->imm2 = lbo;
  in->list = list;
  in->nlist = nc + na;
  for (uint32_t e = 0; e < nc + na; e++) {
    while (w->pend.n <= list[e])
      vec_push(ctx, &w->pend, 0);
    w->npend += !w->pend.v[list[e]];
    w->pend.v[list[e]] = 1;
  }
  w->vals[id] = list[0];
  for (uint32_t e = 1; e < nc; e++)
    wv_assert(ctx, list[e] == list[0] + e);
}

/* Can the wgmmas pending at the end of a loop body (code from `from` on,
 * after the ring's refill) stay in flight into the next iteration? Only if
 * that iteration waits for everything (a full T_WGWAIT) before it touches
 * their registers other than by a wgmma (which accumulates in order: the
 * same instructions, the same shapes) and before it copies into shared
 * memory outside the ring, whose distance protects the slots they read;
 * no nested loop either. NULL if they can, else the first instruction in
 * the way. */
static const tir_instr *carry_blocker(const lw *w, uint32_t from) {
  const tir_prog *p = w->p;
  for (uint32_t i = from; i < p->code.n; i++) {
    const tir_instr *in = &p->code.v[i];
    if (in->op == T_WGWAIT && in->imm == 0)
      return NULL;
    if (in->op == T_WGMMA)
      continue;
    if (in->op == T_LOOP || in->op == T_ENDLOOP || in->op == T_CPA)
      return in;
    if (pending(w, in->dst) || pending(w, in->a) || pending(w, in->b) ||
        pending(w, in->c))
      return in;
    for (uint32_t e = 0; e < in->nlist; e++)
      if (pending(w, in->list[e]))
        return in;
  }
  return NULL;
}

/* Does a loop streaming through a ring of S slots carry its last wgmma
 * group into the next iteration when it can (see carry_blocker)? */
static bool ring_carries(const lw *w, int64_t S) {
  return w->wgmma && S >= 3 &&
         !(w->ctx->test_hooks & WV_HOOK_WGMMA_NO_CARRY);
}

/* How many tiles a ring of S slots keeps in flight ahead of the one being
 * computed on: S-1, or S-2 when the loop carries a wgmma group (which may
 * still read the previous tile's slot). */
static int64_t ring_ahead(const lw *w, int64_t S) {
  return ring_carries(w, S) ? S - 2 : S - 1;
}

/* The registers an elementwise node may write in place: those of an
 * operand that is a loop-carried value of the same type and layout, used
 * by nothing else, in the same loop body (o_prev * corr in attention):
 * its registers are rewritten by the yield anyway, and an mma that then
 * accumulates into them in place leaves the yield nothing to copy. 0 if
 * there is none. */
static uint32_t in_place(lw *w, uint32_t id, uint32_t ne) {
  const wv_node *n = wv_get(w->g, id);
  char cls = wv_ops[n->op].cls;
  if (cls != 'U' && cls != 'B')
    return 0;
  for (uint32_t i = 0; i < n->nops; i++) {
    uint32_t o = n->ops[i];
    const wv_node *c = wv_get(w->g, o);
    if (c->op == WAVEC_OP_CARRIED && w->nuses[o] == 1 &&
        c->block == n->block && c->type.dt == n->type.dt &&
        nelem(w, o) == ne &&
        wv_layout_eq(w->ix->info[o].layout, w->ix->info[id].layout))
      return w->vals[o];
  }
  return 0;
}

/* Whether loop n carries its last group of wgmmas into the next
 * iteration, and if not, the line that stops it. */
static void remark_carry(lw *w, const wv_node *n, const tir_instr *blocker) {
  wv_buf b;
  wv_remark_start(w->k, n->loc, &b);
  wv_buf_printf(&b, "iterate over '%s': ", wavec_symbol_name(w->ctx, n->sym));
  if (!blocker)
    wv_buf_printf(&b, "the last wgmmas of an iteration run on into the next "
                      "one (waited for where their registers are next "
                      "touched)");
  else
    wv_buf_printf(&b, "the last wgmmas of an iteration are waited for at its "
                      "end: line %u touches their registers before the next "
                      "iteration waits for its own",
                  blocker->loc.line);
  wv_remark_end(w->k, &b);
}

/* ---- nodes ------------------------------------------------------------------- */
static void lower_block(lw *w, uint32_t block);

static void open_scope(lw *w) {
  uint32_t s = w->nscopes++;
  uint8_t *open = wv_alloc(w->ctx, w->nscopes);
  if (s)
    memcpy(open, w->scope_open, s);
  open[s] = 1;
  w->scope_open = open;
  vec_push(w->ctx, &w->scopes, s);
}

static void close_scope(lw *w) {
  w->scope_open[w->scopes.v[--w->scopes.n]] = 0;
}

/* The node `id` shows, through broadcasts and layout conversions. */
static const wv_node *through_views(lw *w, uint32_t id) {
  const wv_node *x = wv_get(w->g, id);
  while (x->op == WAVEC_OP_BROADCAST || x->op == WAVEC_OP_CONVERT)
    x = wv_get(w->g, x->ops[0]);
  return x;
}

/* The dim of the self index `id` stands for, or 0. */
static wavec_sym index_dim(lw *w, uint32_t id) {
  const wv_node *x = through_views(w, id);
  return x->op == WAVEC_OP_SELF_INDEX ? x->sym : 0;
}

/* A causal mask of loop n: a select whose condition compares the self
 * indices of the loop's dim D and of its bound's dim E. Returns the
 * comparison as D REL E, or WAVEC_REL_NONE. */
static wavec_rel mask_rel(lw *w, const wv_node *n, uint32_t sel) {
  static const wavec_rel rel_of[WAVEC_OP_COUNT] = {
      [WAVEC_OP_LT] = WAVEC_REL_LT, [WAVEC_OP_LE] = WAVEC_REL_LE,
      [WAVEC_OP_GT] = WAVEC_REL_GT, [WAVEC_OP_GE] = WAVEC_REL_GE};
  static const wavec_rel flip[] = {
      [WAVEC_REL_NONE] = WAVEC_REL_NONE, [WAVEC_REL_LT] = WAVEC_REL_GT,
      [WAVEC_REL_LE] = WAVEC_REL_GE, [WAVEC_REL_GT] = WAVEC_REL_LT,
      [WAVEC_REL_GE] = WAVEC_REL_LE};
  wv_node *s = wv_get(w->g, sel);
  if (s->op != WAVEC_OP_SELECT)
    return WAVEC_REL_NONE;
  const wv_node *c = through_views(w, s->ops[0]);
  wavec_rel r = rel_of[c->op];
  if (!r)
    return WAVEC_REL_NONE;
  wavec_sym a = index_dim(w, c->ops[0]), b = index_dim(w, c->ops[1]);
  if (a == n->sym && b == n->rel_dim)
    return r;
  if (a == n->rel_dim && b == n->sym)
    return flip[r];
  return WAVEC_REL_NONE;
}

/* Loop n (a bounded walk [first, last) over the tiles of D, T wide, for the
 * workgroup's tile [e0, e1] of E) whose body masks with one relation
 * D REL E: the tiles where the mask holds for every d and e, which are a
 * prefix of the walk for < and <= (tiles below floor((e0+1)/T) for <=,
 * floor(e0/T) for <) and a suffix for > and >= (from ceil((e1+1)/T),
 * ceil(e1/T)). Sets *mid to where the whole tiles end (or begin), clamped
 * to the walk, marks the masks (unmask_cand) and returns the relation;
 * WAVEC_REL_NONE (nothing to split) otherwise. */
static wavec_rel mask_split(lw *w, const wv_node *n, ex_t first, ex_t last,
                            ex_t *mid) {
  wavec_ctx *ctx = w->ctx;
  if (!n->rel || (ctx->test_hooks & WV_HOOK_NO_MASK_SPLIT))
    return WAVEC_REL_NONE;
  wv_block *body = &w->g->blocks.v[n->body];
  wavec_rel rel = WAVEC_REL_NONE;
  for (uint32_t i = 0; i < body->nodes.n; i++) {
    wavec_rel r = mask_rel(w, n, body->nodes.v[i]);
    if (r && rel && r != rel)
      return WAVEC_REL_NONE; /* (the marks stay unread: no split) */
    w->unmask_cand[body->nodes.v[i]] = r != WAVEC_REL_NONE;
    rel = r ? r : rel;
  }
  if (!rel)
    return WAVEC_REL_NONE;
  wv_diminfo *di = &w->d->dim[n->sym], *ei = &w->d->dim[n->rel_dim];
  ex_t T = ex_const(ctx, di->tile);
  ex_t e0 = ex_mul(ctx, ex_sym(ctx, w->d->WG[ei->wg_axis]),
                   ex_const(ctx, ei->wg_tile));
  ex_t e1 = ex_add(ctx, e0, ex_const(ctx, ei->wg_tile - 1));
  int64_t add[] = {[WAVEC_REL_LT] = 0, [WAVEC_REL_LE] = 1,
                   [WAVEC_REL_GT] = di->tile, [WAVEC_REL_GE] = di->tile - 1};
  ex_t base = rel == WAVEC_REL_LT || rel == WAVEC_REL_LE ? e0 : e1;
  ex_t m = ex_floordiv(ctx, ex_add(ctx, base, ex_const(ctx, add[rel])), T);
  *mid = concrete(w, ex_max(ctx, first, ex_min(ctx, m, last)), 0);
  wv_buf b;
  wv_remark_start(w->k, n->loc, &b);
  wv_buf_printf(&b, "iterate over '%s': the mask compares '%s' with '%s'; "
                    "the tiles it leaves whole are walked %s, without it",
                wavec_symbol_name(ctx, n->sym), wavec_symbol_name(ctx, n->sym),
                wavec_symbol_name(ctx, n->rel_dim),
                rel == WAVEC_REL_LT || rel == WAVEC_REL_LE ? "first" : "last");
  wv_remark_end(w->k, &b);
  return rel;
}

/* What the parts of one loop's walk share (see lower_loop_part). */
typedef struct loop_part {
  uint32_t id;       /* the ITERATE */
  stage **piped;     /* the tiles its ring streams */
  uint32_t npiped;
  int64_t S, ahead_n; /* ring slots, tiles issued ahead */
  bool carry;        /* may carry its last wgmma group into the next */
  int64_t trips;     /* the most tiles */
  uint32_t last;     /* register: the end of the whole walk (0: trips) */
} loop_part;

/* One loop over tiles [rfirst, rlast) of the walk (registers; 0: 0 and
 * all trips) with the ring already primed: each iteration waits for its
 * tile, refills the ring, runs the body. `unmasked`: the tiles a causal
 * mask leaves whole, whose masks (see mask_split) take their value. */
static void lower_loop_part(lw *w, const loop_part *lp, uint32_t rfirst,
                            uint32_t rlast, bool unmasked) {
  wavec_ctx *ctx = w->ctx;
  wv_node *n = wv_get(w->g, lp->id);
  wv_diminfo *di = &w->d->dim[n->sym];
  ex_t lv = ex_sym(ctx, di->loopvar);
  stage **piped_v = lp->piped;
  uint32_t piped_n = lp->npiped;
  int64_t S = lp->S, ahead_n = lp->ahead_n, trips = lp->trips;
  bool carry = lp->carry;
  uint32_t counter = reg(w, TY_I32);
  w->loopreg[di->loopvar] = counter;
  bool was_unmasking = w->unmasking;
  w->unmasking = unmasked;
  tir_instr *li = emit(w, T_LOOP, TY_I32, counter, rfirst, rlast, 0, trips);
  uint32_t start = (uint32_t)(li - w->p->code.v);
  open_scope(w);
  if (piped_n && S > 1) {
    /* tile i has landed; everyone is done with the slot that receives
     * tile i+ahead_n (of tile i-1, or i-2 when a group is carried) */
    /* planted bugs for the tests: a wait that leaves tile i in flight,
     * a missing barrier */
    bool early = ctx->test_hooks & WV_HOOK_RING_EARLY_READ;
    emit(w, T_CPWAIT, TY_PRED, 0, 0, 0, 0, ahead_n - 1 + early);
    if (!(ctx->test_hooks & WV_HOOK_RING_NO_BARRIER))
      emit(w, T_BAR, TY_PRED, 0, 0, 0, 0, 0);
    if (trips > ahead_n) {
      ex_t ahead = ex_add(ctx, lv, ex_const(ctx, ahead_n));
      uint32_t more = reg(w, TY_PRED);
      /* one statement each: the order of the code they emit must not be
       * left to the C compiler's order of evaluating arguments */
      uint32_t end = lp->last ? lp->last : iconst(w, trips);
      uint32_t at = lower_expr(w, ahead);
      emit(w, T_SETP, TY_I32, more, at, end, 0, TIR_CMP_LT);
      for (uint32_t i = 0; i < piped_n; i++)
        stage_issue(w, piped_v[i], ahead, slot_at(w, piped_v[i], S, ahead),
                    more);
    }
    emit(w, T_CPCOMMIT, TY_PRED, 0, 0, 0, 0, 0);
  } else if (piped_n) {
    stage_copy(w, piped_v, piped_n);
  }
  for (uint32_t i = 0; i < piped_n && S > 1; i++)
    piped_v[i]->at = slot_at(w, piped_v[i], S, lv);
  uint32_t body_from = w->p->code.n;
  lower_block(w, n->body);
  w->loc = n->loc;
  for (uint32_t i = 0; i < piped_n; i++)
    piped_v[i]->at = 0;
  close_scope(w);
  /* the last group stays in flight: wait for all but it */
  if (carry && w->npend) {
    const tir_instr *blocker = carry_blocker(w, body_from);
    remark_carry(w, n, blocker);
    w->carry_group = !blocker;
  }
  if (w->carry_group)
    emit(w, T_WGWAIT, TY_PRED, 0, 0, 0, 0, 1);
  tir_instr *ei = emit(w, T_ENDLOOP, TY_I32, counter, rfirst, rlast, 0, trips);
  uint32_t end = (uint32_t)(ei - w->p->code.v);
  w->carry_group = false;
  w->p->code.v[start].match = end;
  w->p->code.v[end].match = start;
  w->loopreg[di->loopvar] = 0;
  w->unmasking = was_unmasking;
}


static void lower_node(lw *w, uint32_t id) {
  wavec_ctx *ctx = w->ctx;
  wv_node *n = wv_get(w->g, id);
  w->loc = n->loc;
  tir_ty ty = n->type.n || n->op == WAVEC_OP_REGISTER ? tir_ty_of(n->type.dt)
                                                      : TY_F32;
  switch (n->op) {
  case WAVEC_OP_ARG:
  case WAVEC_OP_SCALAR:
  case WAVEC_OP_CARRIED: /* made by its loop */
    return;
  case WAVEC_OP_REGISTER: {
    uint32_t ne = nelem(w, id);
    w->vals[id] = new_regs(w, ty, ne);
    wv_node *s = wv_get(w->g, n->ops[0]);
    double v = s->sym ? (w->k->bind.is_float[s->sym] ? w->k->bind.fval[s->sym]
                                                     : (double)w->k->bind.ival[s->sym])
                      : s->fval;
    for (uint32_t e = 0; e < ne; e++)
      const_into(w, ty, w->vals[id] + e, v);
    return;
  }
  case WAVEC_OP_READ: {
    stage *st = w->stage_of[w->ix->info[id].origin];
    if (st) {
      /* streamed by its loop's ring, or copied here; either way its
       * fragments are loaded where they are used */
      uint32_t scope = w->scopes.v[w->scopes.n - 1] + 1;
      if (!st->loop && st->done_scope != scope) {
        stage_copy(w, &st, 1);
        st->done_scope = scope;
      }
      return;
    }
    uint32_t ne = nelem(w, id);
    w->vals[id] = new_regs(w, ty, ne);
    wv_node *mem = wv_get(w->g, n->mem);
    for (uint32_t e = 0; e < ne; e++) {
      uint32_t mask;
      uint32_t off = mem_offset(w, id, n->mapping, mem, e, &mask);
      uint32_t seen = w->written[n->mem] ? 0 : loaded(w, mem->index, off,
                                                      mask, ty);
      if (seen) {
        emit(w, T_MOV, ty, w->vals[id] + e, seen, 0, 0, 0);
        continue;
      }
      emit(w, T_LDG, ty, w->vals[id] + e, off, mask, 0, mem->index);
      load_ent le = {mem->index, off, mask, ty, w->vals[id] + e,
                     w->scopes.v[w->scopes.n - 1]};
      vec_push(ctx, &w->loads, le);
    }
    return;
  }
  case WAVEC_OP_WRITE: {
    uint32_t v = n->ops[0];
    wv_node *mem = wv_get(w->g, n->mem);
    tir_ty vt = tir_ty_of(wv_get(w->g, v)->type.dt);
    w->p->args.v[mem->index].written = true;
    for (uint32_t e = 0; e < nelem(w, v); e++) {
      uint32_t mask;
      uint32_t off = mem_offset(w, v, n->mapping, mem, e, &mask);
      if ((ctx->test_hooks & WV_HOOK_SHIFT_LANE) && e == 0) {
        /* planted bug: lane 5 writes one element further */
        uint32_t lane = lower_expr(w, concrete(w, w->d->lane, 0));
        uint32_t is5 = reg(w, TY_PRED);
        emit(w, T_SETP, TY_PRED, is5, lane, iconst(w, 5), 0, TIR_CMP_EQ);
        uint32_t sh = reg(w, TY_I32);
        uint32_t zero = iconst(w, 0), one = iconst(w, 1);
        emit(w, T_SELP, TY_I32, sh, is5, one, zero, 0);
        off = op2(w, T_ADD, TY_I32, off, sh);
      }
      emit(w, T_STG, vt, 0, off, w->vals[v] + e, mask, mem->index);
    }
    return;
  }
  case WAVEC_OP_PERMUTE:
  case WAVEC_OP_BROADCAST:
    /* same elements in the same registers: a layout is by dimension name,
     * and a broadcast operand's layout is the projection of its user's */
    w->vals[id] = w->vals[n->ops[0]];
    return;
  case WAVEC_OP_CAST: {
    uint32_t ne = nelem(w, id);
    w->vals[id] = new_regs(w, ty, ne);
    tir_ty from = tir_ty_of(wv_get(w->g, n->ops[0])->type.dt);
    for (uint32_t e = 0; e < ne; e++)
      emit(w, from == ty ? T_MOV : T_CVT, ty, w->vals[id] + e,
           elem(w, n->ops[0], e, from), 0, 0, 0);
    return;
  }
  case WAVEC_OP_SELECT: {
    uint32_t ne = nelem(w, id);
    wv_node *x = wv_get(w->g, n->ops[1]);
    if (w->unmasking && w->unmask_cand[id] && x->op != WAVEC_OP_SCALAR &&
        x->op != WAVEC_OP_READ) {
      w->vals[id] = w->vals[n->ops[1]]; /* a whole tile: the value itself */
      return;
    }
    w->vals[id] = new_regs(w, ty, ne);
    for (uint32_t e = 0; e < ne; e++) { /* operands last to first */
      uint32_t b = elem(w, n->ops[2], e, ty), a = elem(w, n->ops[1], e, ty);
      emit(w, T_SELP, ty, w->vals[id] + e, elem(w, n->ops[0], e, TY_PRED), a,
           b, 0);
    }
    return;
  }
  case WAVEC_OP_SELF_INDEX: {
    uint32_t ne = nelem(w, id);
    w->vals[id] = new_regs(w, ty, ne);
    for (uint32_t e = 0; e < ne; e++) {
      uint32_t r = lower_expr(w, concrete(w, index_of(w, id, n->sym), e));
      emit(w, ty == TY_I32 ? T_MOV : T_CVT, ty, w->vals[id] + e, r, 0, 0, 0);
    }
    return;
  }
  case WAVEC_OP_MMA: {
    if (w->wgmma) {
      lower_wgmma(w, id);
      return;
    }
    const wv_mma_info *mi = wv_mma_info_get((wavec_mma_kind)w->d->mma);
    uint32_t na = nelem(w, n->ops[0]), nb = nelem(w, n->ops[1]),
             nc = nelem(w, n->ops[2]);
    w->vals[id] = new_regs(w, TY_F32, nc);
    uint32_t *list = wv_alloc(ctx, (nc * 2 + na + nb) * sizeof *list);
    uint32_t t = 0;
    for (uint32_t e = 0; e < nc; e++)
      list[t++] = w->vals[id] + e;
    for (uint32_t e = 0; e < na; e++)
      list[t++] = elem(w, n->ops[0], e, tir_ty_of(mi->in));
    for (uint32_t e = 0; e < nb; e++)
      list[t++] = elem(w, n->ops[1], e, tir_ty_of(mi->in));
    for (uint32_t e = 0; e < nc; e++)
      list[t++] = elem(w, n->ops[2], e, TY_F32);
    tir_instr *in = emit(w, T_MMA, TY_F32, 0, 0, 0, 0, w->d->mma);
    in->list = list;
    in->nlist = t;
    return;
  }
  case WAVEC_OP_MAX:
  case WAVEC_OP_SUM:
    lower_reduce(w, id);
    return;
  case WAVEC_OP_CONVERT:
    lower_convert(w, id);
    return;
  case WAVEC_OP_ITERATE: {
    wv_block *body = &w->g->blocks.v[n->body];
    /* Reads that do not change from one iteration to the next happen
     * once, before the loop (a staged one: its copy; see lazy_scope). */
    for (uint32_t i = 0; i < body->nodes.n; i++) {
      uint32_t rid = body->nodes.v[i];
      wv_node *r = wv_get(w->g, rid);
      if (r->op != WAVEC_OP_READ || !loop_invariant(w, r, n))
        continue;
      lower_node(w, rid);
      w->hoisted[rid] = true;
    }
    w->loc = n->loc;
    /* carried registers, initialised from the inits */
    for (uint32_t i = 0; i < n->nops; i++) {
      uint32_t cid = body->nodes.v[i];
      uint32_t ne = nelem(w, cid);
      tir_ty ct = tir_ty_of(wv_get(w->g, cid)->type.dt);
      w->vals[cid] = new_regs(w, ct, ne);
      for (uint32_t e = 0; e < ne; e++)
        emit(w, T_MOV, ct, w->vals[cid] + e, elem(w, n->ops[i], e, ct), 0, 0,
             0);
    }
    wv_diminfo *di = &w->d->dim[n->sym];
    int64_t trips = di->size / di->tile;
    /* the staged tiles this loop streams through its ring (see stage) */
    VEC(stage *) piped = {0};
    for (uint32_t i = 0; i < w->stages_all.n; i++)
      if (w->stages_all.v[i]->loop == id)
        vec_push(ctx, &piped, w->stages_all.v[i]);
    /* the tiles walked: [first, last) (expressions in the workgroup ids
     * for a bounded iterate, else 0 and trips) */
    ex_t first, last;
    loop_range(w, n, &first, &last);
    bool bounded = !ex_is_const(ctx, first, NULL) ||
                   !ex_is_const(ctx, last, NULL);
    uint32_t rfirst = bounded ? lower_expr(w, first) : 0;
    uint32_t rlast = bounded ? lower_expr(w, last) : 0;
    int64_t S = w->stages;
    /* A wgmma loop with a ring of 3 or more slots may carry the last group
     * of wgmmas of an iteration, in flight, into the next one (see
     * carry_blocker); the group of iteration i-1 may then still read the slot
     * of tile i-1 when iteration i refills a slot, so the ring runs one
     * tile less ahead: tile i+S-2 goes into the slot of tile i-2. */
    bool carry = piped.n && ring_carries(w, S);
    int64_t ahead_n = ring_ahead(w, S);
    if (ctx->test_hooks & WV_HOOK_WGMMA_CARRY_NEAR)
      ahead_n = S - 1; /* planted bug for the tests: refill a read slot */
    if (piped.n && S > 1) {
      /* tiles first .. first+ahead_n-1 in flight before the first
       * iteration */
      emit(w, T_BAR, TY_PRED, 0, 0, 0, 0, 0);
      for (int64_t t = 0; t < ahead_n; t++) {
        ex_t tile = ex_add(ctx, first, ex_const(ctx, t));
        uint32_t in_range = 0;
        if (bounded) {
          in_range = reg(w, TY_PRED);
          emit(w, T_SETP, TY_I32, in_range, lower_expr(w, tile), rlast, 0,
               TIR_CMP_LT);
        }
        for (uint32_t i = 0; i < piped.n && t < trips; i++)
          stage_issue(w, piped.v[i], tile, slot_at(w, piped.v[i], S, tile),
                      in_range);
        emit(w, T_CPCOMMIT, TY_PRED, 0, 0, 0, 0, 0);
      }
    }
    loop_part lp = {id, piped.v, piped.n, S, ahead_n, carry, trips,
                    rlast};
    /* a causal mask splits the walk: the tiles it leaves whole first (or
     * last), without it */
    ex_t mid;
    int mrel = mask_split(w, n, first, last, &mid);
    if (!mrel) {
      lower_loop_part(w, &lp, rfirst, rlast, false);
      return;
    }
    uint32_t rmid = lower_expr(w, mid);
    uint32_t ra = bounded ? rfirst : iconst(w, 0);
    if (!bounded)
      lp.last = iconst(w, trips);
    bool whole_first = mrel == WAVEC_REL_LE || mrel == WAVEC_REL_LT;
    lower_loop_part(w, &lp, ra, rmid, whole_first);
    lower_loop_part(w, &lp, rmid, lp.last, !whole_first);
    return;
  }
  case WAVEC_OP_YIELD: {
    wv_node *it = wv_get(w->g, n->loop);
    wv_block *body = &w->g->blocks.v[it->body];
    /* parallel copy: yielded values may be other carried registers; a
     * value already in its carried registers (an mma accumulated in
     * place) is not copied */
    VEC(uint32_t) tmp = {0};
    bool *same = wv_alloc(ctx, (n->nops ? n->nops : 1) * sizeof *same);
    for (uint32_t i = 0; i < n->nops; i++) {
      uint32_t cid = body->nodes.v[i];
      tir_ty ct = tir_ty_of(wv_get(w->g, cid)->type.dt);
      same[i] = wv_get(w->g, n->ops[i])->op != WAVEC_OP_SCALAR;
      for (uint32_t e = 0; e < nelem(w, cid) && same[i]; e++)
        same[i] = elem(w, n->ops[i], e, ct) == w->vals[cid] + e;
      for (uint32_t e = 0; e < nelem(w, cid) && !same[i]; e++) {
        uint32_t t = reg(w, ct);
        emit(w, T_MOV, ct, t, elem(w, n->ops[i], e, ct), 0, 0, 0);
        vec_push(ctx, &tmp, t);
      }
    }
    uint32_t t = 0;
    for (uint32_t i = 0; i < n->nops; i++) {
      uint32_t cid = body->nodes.v[i];
      tir_ty ct = tir_ty_of(wv_get(w->g, cid)->type.dt);
      for (uint32_t e = 0; e < nelem(w, cid) && !same[i]; e++)
        emit(w, T_MOV, ct, w->vals[cid] + e, tmp.v[t++], 0, 0, 0);
    }
    return;
  }
  case WAVEC_OP_RESULT: {
    wv_node *it = wv_get(w->g, n->loop);
    w->vals[id] = w->vals[w->g->blocks.v[it->body].nodes.v[n->index]];
    return;
  }
  default:
    break;
  }
  char cls = wv_ops[n->op].cls;
  uint32_t ne = nelem(w, id);
  uint32_t into = in_place(w, id, ne);
  w->vals[id] = into ? into : new_regs(w, ty, ne);
  /* each distinct element is computed once, its repeats copied */
  const uint32_t *rep = cls == 'U' || cls == 'B' || cls == 'C'
                            ? elem_reps(w, w->ix->info[id].layout)
                            : NULL;
  if (!rep)
    wv_fail(ctx, D_INTERNAL, n->loc, "no lowering for %s", wv_ops[n->op].name);
  uint32_t d0 = w->vals[id];
  for (uint32_t e = 0; e < ne; e++) {
    if (rep[e] != e) { /* a repeat (a compare's result is a predicate) */
      emit(w, T_MOV, ty, d0 + e, d0 + rep[e], 0, 0, 0);
      continue;
    }
    switch (cls) {
    case 'U':
      emit(w, unary_ops[n->op], ty, d0 + e, elem(w, n->ops[0], e, ty), 0, 0,
           0);
      break;
    case 'B': { /* operands last to first */
      uint32_t b = elem(w, n->ops[1], e, ty);
      emit(w, unary_ops[n->op], ty, d0 + e, elem(w, n->ops[0], e, ty), b, 0,
           0);
      break;
    }
    default: { /* 'C' */
      wv_node *a = wv_get(w->g, n->ops[0]), *b = wv_get(w->g, n->ops[1]);
      tir_ty ot = tir_ty_of((a->op == WAVEC_OP_SCALAR ? b : a)->type.dt);
      uint32_t rb = elem(w, n->ops[1], e, ot); /* operands last to first */
      emit(w, T_SETP, ot, d0 + e, elem(w, n->ops[0], e, ot), rb, 0,
           cmp_of[n->op]);
    }
    }
  }
}

static void lower_block(lw *w, uint32_t block) {
  wv_block *b = &w->g->blocks.v[block];
  for (uint32_t i = 0; i < b->nodes.n; i++)
    if (!w->hoisted[b->nodes.v[i]])
      lower_node(w, b->nodes.v[i]);
}

/* One remark per ring: which loop, how many slots, what streams. */
static void remark_ring(lw *w, uint32_t loop, int64_t S, int64_t slot) {
  wv_node *n = wv_get(w->g, loop);
  wv_buf b;
  wv_remark_start(w->k, n->loc, &b);
  wv_buf_printf(&b, "iterate over '%s' streams",
                wavec_symbol_name(w->ctx, n->sym));
  const char *sep = " ";
  for (uint32_t i = 0; i < w->stages_all.n; i++) {
    stage *st = w->stages_all.v[i];
    if (st->loop == loop) {
      wv_buf_printf(&b, "%s'%s'", sep, wv_get(w->g, st->mem)->name);
      sep = ", ";
    }
  }
  int64_t ahead = ring_ahead(w, S);
  if (S > 1)
    wv_buf_printf(&b, " through shared memory in %lld stages of %lld bytes "
                      "(asynchronous copies, %lld tile%s ahead)",
                  (long long)S, (long long)slot, (long long)ahead,
                  ahead == 1 ? "" : "s");
  else
    wv_buf_printf(&b, " through shared memory, one tile of %lld bytes "
                      "copied at the top of each iteration (stages = 1)",
                  (long long)slot);
  wv_remark_end(w->k, &b);
}

/* Decides which reads are staged and which loops stream them through a
 * ring, picks the number of slots, and places every tile in shared memory:
 * tiles copied where they stand first, then each loop's ring, slot by
 * slot (a slot holds one tile of each read the loop streams). */
static void place_stages(lw *w) {
  wavec_ctx *ctx = w->ctx;
  uint32_t nn = w->g->nodes.n;
  for (uint32_t id = 1; id < nn; id++) {
    uint32_t o = w->ix->info[id].origin;
    stage st = {0};
    if (w->stage_of[o] || !stageable(w, id, &st))
      continue;
    st.loop = ring_loop(w, id, &st);
    /* reads of the same tile of one memory share its copy, whatever
     * their mappings: a mapping only changes which elements a lane takes
     * from the tile (attention's backward reads q and do both ways) */
    for (uint32_t i = 0; i < w->stages_all.n && !w->stage_of[o]; i++) {
      stage *s = w->stages_all.v[i];
      bool same = s->mem == st.mem && s->loop == st.loop &&
                  s->loopvar == st.loopvar;
      uint32_t nd = wv_get(w->g, st.mem)->type.n;
      for (uint32_t d = 0; d < nd && same; d++)
        same = s->ext[d] == st.ext[d] && s->start[d] == st.start[d];
      if (same)
        w->stage_of[o] = s;
    }
    if (w->stage_of[o])
      continue;
    w->stage_of[o] = wv_dup(ctx, &st, sizeof st);
    vec_push(ctx, &w->stages_all, w->stage_of[o]);
  }
  stage *const *all = w->stages_all.v;
  uint32_t n = w->stages_all.n;
  int64_t fixed = 0, ring = 0;
  for (uint32_t i = 0; i < n; i++) {
    if (all[i]->loop)
      ring += all[i]->bytes;
    else
      all[i]->base = fixed, fixed += all[i]->bytes;
  }
  int64_t S = w->d->hw[WAVEC_HW_STAGES];
  if (!S)
    for (S = AUTO_STAGES; S > 2 && fixed + S * ring > AUTO_STAGE_BYTES; S--)
      ;
  w->stages = S;
  w->stage_bytes = fixed;
  for (uint32_t i = 0; i < n; i++) /* swizzled rows need 1024-byte groups */
    wv_assert(ctx, !all[i]->swz || (all[i]->base % SWZ_ALIGN == 0 &&
                                     all[i]->bytes % SWZ_ALIGN == 0));
  /* rings, in the order of their loops */
  for (uint32_t i = 0; i < n; i++) {
    uint32_t loop = all[i]->loop;
    if (!loop || all[i]->slot)
      continue;
    int64_t slot = 0;
    for (uint32_t j = i; j < n; j++)
      if (all[j]->loop == loop)
        all[j]->base = w->stage_bytes + slot, slot += all[j]->bytes;
    for (uint32_t j = i; j < n; j++)
      if (all[j]->loop == loop)
        all[j]->slot = slot;
    w->stage_bytes += S * slot;
    remark_ring(w, loop, S, slot);
  }
}

tir_prog *wv_kernel_tir(wv_kernel *k) { return k->tir; }

wavec_status wv_pass_lower(wv_kernel *k) {
  wavec_ctx *ctx = k->ctx;
  lw w = {0};
  w.k = k;
  w.ctx = ctx;
  w.d = k->dist;
  w.ix = k->index;
  w.g = k->g;
  w.p = wv_alloc(ctx, sizeof *w.p);
  w.vals = wv_alloc(ctx, k->g->nodes.n * sizeof *w.vals);
  w.loopreg = wv_alloc(ctx, w.d->nsyms * sizeof *w.loopreg);
  tir_prog *p = w.p;
  vec_push(ctx, &p->regs, TY_PRED); /* register 0: none */
  for (int a = 0; a < 3; a++) {
    p->grid[a] = w.d->grid[a];
    p->block[a] = w.d->block[a];
  }
  p->lanes = w.d->lanes;
  p->wgs_per_sm = w.d->hw[WAVEC_HW_WORKGROUPS_PER_SM];
  p->mma = w.d->mma;
  for (uint32_t i = 0; i < k->args.n; i++) {
    wv_node *a = wv_get(k->g, k->args.v[i]);
    tir_arg ta = {.name = a->name, .dt = a->type.dt, .ndims = a->type.n,
                  .elems = 1};
    for (uint32_t j = 0; j < a->type.n; j++) {
      ta.shape[j] = k->bind.ival[a->type.dims[j]];
      ta.elems *= ta.shape[j];
    }
    vec_push(ctx, &p->args, ta);
  }
  /* bound user symbols become constants; ids get their ranges */
  for (wavec_sym s = 1; s < k->bind.n; s++) {
    if (k->bind.known[s] && !k->bind.is_float[s]) {
      vec_push(ctx, &w.bsyms, s);
      vec_push(ctx, &w.bvals, ex_const(ctx, k->bind.ival[s]));
    }
  }
  w.nranges = ctx->sym_names.n;
  w.ranges = wv_alloc(ctx, w.nranges * sizeof *w.ranges);
  for (int a = 0; a < 3; a++) {
    w.ranges[w.d->T[a]] = (ex_range){0, w.d->block[a] - 1, true};
    w.ranges[w.d->WG[a]] = (ex_range){0, w.d->grid[a] - 1, true};
  }
  for (wavec_sym s = 1; s < w.d->nsyms; s++) {
    wv_diminfo *di = &w.d->dim[s];
    if (di->used && di->tile)
      w.ranges[di->loopvar] = (ex_range){0, di->size / di->tile - 1, true};
  }
  /* which reads feed only mma operands, and which of those are staged */
  uint32_t nn = k->g->nodes.n, norigin = 1;
  w.mma_only = wv_alloc(ctx, nn * sizeof *w.mma_only);
  w.written = wv_alloc(ctx, nn * sizeof *w.written);
  w.hoisted = wv_alloc(ctx, nn * sizeof *w.hoisted);
  w.unmask_cand = wv_alloc(ctx, nn * sizeof *w.unmask_cand);
  w.lazy_scope = wv_alloc(ctx, nn * sizeof *w.lazy_scope);
  for (uint32_t id = 1; id < nn; id++) {
    w.mma_only[id] = true;
    if (w.ix->info[id].origin >= norigin)
      norigin = w.ix->info[id].origin + 1;
  }
  for (uint32_t id = 1; id < nn; id++) {
    wv_node *n = wv_get(k->g, id);
    for (uint32_t i = 0; i < n->nops; i++)
      if (!(n->op == WAVEC_OP_MMA && i < 2))
        w.mma_only[n->ops[i]] = false;
    if (n->op == WAVEC_OP_WRITE)
      w.written[n->mem] = true;
  }
  w.stage_of = wv_alloc(ctx, norigin * sizeof *w.stage_of);
  /* reduction chains: a link whose accumulator is the previous link */
  w.red_more = wv_alloc(ctx, nn * sizeof *w.red_more);
  w.red_init = wv_alloc(ctx, nn * sizeof *w.red_init);
  for (uint32_t id = 1; id < nn; id++) {
    wv_node *n = wv_get(k->g, id);
    if ((n->op == WAVEC_OP_MAX || n->op == WAVEC_OP_SUM) && n->nops > 1) {
      wv_node *a = wv_get(k->g, n->ops[1]);
      if (a->op == n->op && a->sym == n->sym &&
          w.ix->info[n->ops[1]].origin == w.ix->info[id].origin)
        w.red_more[n->ops[1]] = true;
    }
  }
  w.remarked = wv_alloc(ctx, norigin * sizeof *w.remarked);
  w.nuses = wv_alloc(ctx, nn * sizeof *w.nuses);
  for (uint32_t id = 1; id < nn; id++) {
    wv_node *n = wv_get(k->g, id);
    for (uint32_t i = 0; i < n->nops; i++)
      w.nuses[n->ops[i]]++;
  }
  w.wgmma = wv_mma_is_warpgroup((wavec_mma_kind)w.d->mma);
  place_stages(&w);
  open_scope(&w);
  lower_block(&w, 0);
  if (w.npend && !(ctx->test_hooks & WV_HOOK_WGMMA_NO_WAIT))
    emit(&w, T_WGWAIT, TY_PRED, 0, 0, 0, 0, 0);
  p->smem_bytes = w.convert_bytes + w.stage_bytes;
  k->tir = p;
  return tir_verify(ctx, p);
}
