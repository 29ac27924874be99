/* Pass `lower`. require: expand. The expanded graph becomes the thread
 * program (tir.h): each clone's elements become registers, node by node
 * through the table lower_op (one file per op family, see lower.h);
 * indices become integer code (lower_expr.c). This file is the driver: the
 * pass, the node dispatch, registers, scopes and lw_emit, through which
 * every instruction goes. */
#include <math.h>

#include "tir/lower.h"

const char *const tir_ty_names[TY_COUNT] = {
    "pred", "i32", "f16", "bf16", "f32", "e4m3", "e5m2", "i8", "i64"};

int tir_ty_bytes(tir_ty ty) {
  static const int bytes[TY_COUNT] = {1, 4, 2, 2, 4, 1, 1, 1, 8};
  return bytes[ty];
}

bool tir_ty_is_float(tir_ty ty) {
  return ty == TY_F16 || ty == TY_BF16 || ty == TY_F32 || ty == TY_E4M3 ||
         ty == TY_E5M2;
}

tir_ty tir_ty_of(wavec_dtype dt) {
  static const tir_ty map[WAVEC_DTYPE_COUNT] = {
      [WAVEC_F16] = TY_F16,       [WAVEC_BF16] = TY_BF16,
      [WAVEC_F32] = TY_F32,       [WAVEC_I32] = TY_I32,
      [WAVEC_I1] = TY_PRED,       [WAVEC_F8E4M3] = TY_E4M3,
      [WAVEC_F8E5M2] = TY_E5M2,   [WAVEC_I8] = TY_I8};
  return map[dt];
}

uint32_t lw_reg(lw *w, tir_ty ty) {
  vec_push(w->ctx, &w->p->regs, ty);
  return w->p->regs.n - 1;
}

/* Every instruction goes through here (the wgmma waits are the pass
 * `waits`'s, after the lowering). */
tir_instr *lw_emit(lw *w, tir_op op, tir_ty ty, uint32_t dst, uint32_t a,
                   uint32_t b, uint32_t c, int64_t imm) {
  tir_instr in = {.op = op, .ty = ty, .dst = dst, .a = a, .b = b, .c = c,
                  .imm = imm, .loc = w->loc};
  vec_push(w->ctx, &w->p->code, in);
  return &w->p->code.v[w->p->code.n - 1];
}

uint32_t lw_group_tag(lw *w) {
  return (w->scopes.v[w->scopes.n - 1] + 1) << 2;
}

uint32_t lw_clones_from(lw *w, uint32_t id, uint32_t *out) {
  const wv_node *n = wv_get(w->g, id);
  const wv_block *b = &w->g->blocks.v[n->block];
  uint32_t origin = w->ix->info[id].origin, cnt = 0;
  bool seen = false;
  for (uint32_t i = 0; i < b->nodes.n; i++) {
    uint32_t x = b->nodes.v[i];
    seen |= x == id;
    if (seen && wv_get(w->g, x)->op == n->op &&
        w->ix->info[x].origin == origin)
      out[cnt++] = x;
  }
  return cnt;
}

uint32_t lw_clones_of(lw *w, uint32_t id, uint32_t *out) {
  const wv_block *b = &w->g->blocks.v[wv_get(w->g, id)->block];
  for (uint32_t i = 0; i < b->nodes.n; i++) {
    uint32_t x = b->nodes.v[i];
    if (wv_get(w->g, x)->op == wv_get(w->g, id)->op &&
        w->ix->info[x].origin == w->ix->info[id].origin)
      return lw_clones_from(w, x, out);
  }
  return 0;
}

/* A barrier among the threads of the role being lowered: the workgroup's,
 * or in the consumers' region of a specialized kernel their named one
 * (the producer never reaches it). */
tir_instr *lw_barrier(lw *w) {
  tir_instr *in = lw_emit(w, T_BAR, TY_PRED, 0, 0, 0, 0, w->bar_id);
  in->imm2 = w->bar_threads;
  return in;
}

uint32_t lw_first_part(lw *w, const wv_node *n) {
  wavec_ctx *ctx = w->ctx;
  wv_dist *d = w->d;
  unsigned parts = wv_partial(d, n);
  if (!parts)
    return 0;
  int a = d->dim[n->sym].wg_axis;
  ex_t at = ex_const(ctx, 0);
  if (parts & WV_PARTS_GROUPS)
    at = ex_add(ctx, at, ex_sym(ctx, d->WG[a]));
  if (parts & WV_PARTS_WAVES)
    at = ex_add(ctx, at, wv_wave_coord(ctx, d, a));
  at = ex_simplify(ctx, at, w->ranges, w->nranges);
  uint32_t zero = lw_iconst(w, 0), p = lw_reg(w, TY_PRED);
  uint32_t r = lw_expr(w, at);
  lw_emit(w, T_SETP, TY_PRED, p, r, zero, 0, TIR_CMP_EQ);
  return p;
}

uint32_t lw_from_first_part(lw *w, uint32_t first, uint32_t v, tir_ty ty) {
  if (!first)
    return v;
  uint32_t z = lw_reg(w, ty), d = lw_reg(w, ty);
  lw_const_into(w, ty, z, 0.0);
  lw_emit(w, T_SELP, ty, d, first, v, z, 0);
  return d;
}

void lw_reuse_barrier(lw *w, uint32_t r) {
  lw_barrier(w)->tag = r | TIR_BAR_REUSE;
}

void lw_region_barrier(lw *w, uint32_t r) { lw_barrier(w)->tag = r; }

void lw_tag_region(lw *w, uint32_t from, uint32_t r) {
  for (uint32_t i = from; i < w->p->code.n; i++) {
    tir_instr *in = &w->p->code.v[i];
    if (tir_shared_access(in->op))
      in->tag = r;
  }
}

uint32_t lw_op2(lw *w, tir_op op, tir_ty ty, uint32_t a, uint32_t b) {
  uint32_t d = lw_reg(w, ty);
  lw_emit(w, op, ty, d, a, b, 0, 0);
  return d;
}

uint32_t lw_pred_and(lw *w, uint32_t a, uint32_t b) {
  return !a ? b : !b ? a : lw_op2(w, T_AND, TY_PRED, a, b);
}

uint32_t lw_swz(lw *w, uint32_t a, int64_t bytes) {
  uint32_t d = lw_reg(w, TY_I32);
  lw_emit(w, T_SWZ, TY_I32, d, a, 0, 0, bytes);
  return d;
}

uint32_t lw_iconst(lw *w, int64_t v) {
  uint32_t d = lw_reg(w, TY_I32);
  lw_emit(w, T_CONST, TY_I32, d, 0, 0, 0, v);
  return d;
}

/* A constant of any type into register d: floats keep v, integers and
 * predicates take it as cast() converts it (tir_int_of). */
void lw_const_into(lw *w, tir_ty ty, uint32_t d, double v) {
  int64_t i = tir_ty_is_float(ty) ? 0 : tir_int_of(ty, v);
  lw_emit(w, T_CONST, ty, d, 0, 0, 0, i)->fimm =
      tir_ty_is_float(ty) ? v : (double)i;
}

static uint32_t fconst(lw *w, tir_ty ty, double v) {
  uint32_t d = lw_reg(w, ty);
  lw_const_into(w, ty, d, v);
  return d;
}

uint32_t lw_nelem(lw *w, uint32_t id) {
  return w->ix->info[id].layout->nelem;
}

/* Register of element e of operand `op` as type ty (scalars are made; a
 * staged read is loaded from shared memory into registers at its first use
 * in each scope, see lazy_scope). It may emit code: two calls in one
 * argument list would leave the order of that code to the C compiler, so
 * callers take the operands into variables, last operand first. */
uint32_t lw_elem(lw *w, uint32_t op, uint32_t e, tir_ty ty) {
  wv_node *n = wv_get(w->g, op);
  struct stage *st =
      n->op == WAVEC_OP_READ ? w->stage_of[w->ix->info[op].origin] : NULL;
  if (st && (!w->lazy_scope[op] || !w->scope_open[w->lazy_scope[op] - 1])) {
    wavec_loc at = w->loc; /* the loads are the read's, at its line */
    w->loc = n->loc;
    lw_staged_read(w, op, st);
    w->loc = at;
    w->lazy_scope[op] = w->scopes.v[w->scopes.n - 1] + 1;
  }
  if (n->op == WAVEC_OP_SCALAR && n->sym && w->k->bind.dynamic[n->sym]) {
    /* a size known at run time: the kernel's parameter, as ty */
    uint32_t size = lw_expr(w, ex_sym(w->ctx, n->sym));
    if (ty == TY_I32)
      return size;
    uint32_t d = lw_reg(w, ty);
    lw_emit(w, T_CVT, ty, d, size, 0, 0, 0);
    return d;
  }
  if (n->op == WAVEC_OP_SCALAR)
    return fconst(w, ty, lw_scalar_value(w, n));
  return w->vals[op] + e;
}

/* The value of a SCALAR node: its literal or its hyperparameter's (a
 * compile-time constant: a run-time size is one only in arithmetic,
 * lw_elem; check refuses it where a constant is needed). */
double lw_scalar_value(lw *w, const wv_node *s) {
  if (s->sym && w->k->bind.dynamic[s->sym])
    wv_fail(w->ctx, D_INTERNAL, s->loc,
            "a run-time size as a constant (check refuses it)");
  if (!s->sym)
    return s->fval;
  return w->k->bind.is_float[s->sym] ? w->k->bind.fval[s->sym]
                                     : (double)w->k->bind.ival[s->sym];
}

/* What a READ gives past the edge of its memory: its fill (as its type
 * holds it: tir_int_of for integers), or 0. */
double lw_read_fill(lw *w, const wv_node *read) {
  double v = read->nops > 1 ? lw_scalar_value(w, wv_get(w->g, read->ops[1])) : 0;
  tir_ty ty = lw_node_ty(read);
  return tir_ty_is_float(ty) ? v : (double)tir_int_of(ty, v);
}

uint32_t lw_new_regs(lw *w, tir_ty ty, uint32_t n) {
  uint32_t first = lw_reg(w, ty);
  for (uint32_t i = 1; i < n; i++)
    lw_reg(w, ty);
  return first;
}

void lw_open_scope(lw *w) {
  uint32_t s = w->nscopes++;
  uint8_t *open = wv_alloc(w->ctx, w->nscopes);
  if (s)
    memcpy(open, w->scope_open, s);
  open[s] = 1;
  w->scope_open = open;
  vec_push(w->ctx, &w->scopes, s);
}

void lw_close_scope(lw *w) {
  w->scope_open[w->scopes.v[--w->scopes.n]] = 0;
}

/* The registers of node n's elements have this type: its dtype's (a
 * node without dims too: a cast of a hyperparameter expression to i32 is
 * an i32; it was taken for f32, and the add that used it read an f32
 * register as an integer). */
tir_ty lw_node_ty(const wv_node *n) { return tir_ty_of(n->type.dt); }

/* Args and scalars need no code (a scalar is made at each use); a carried
 * value is made by its loop. */
static void lower_nothing(lw *w, uint32_t id) {}

/* Permute and broadcast: the same elements in the same registers (a layout
 * is by dimension name, and a broadcast operand's layout is the projection
 * of its user's). */
static void lower_view(lw *w, uint32_t id) {
  w->vals[id] = w->vals[wv_get(w->g, id)->ops[0]];
}

/* A loop's result: the registers of its carried value. */
static void lower_result(lw *w, uint32_t id) {
  wv_node *n = wv_get(w->g, id);
  wv_node *it = wv_get(w->g, n->loop);
  w->vals[id] = w->vals[w->g->blocks.v[it->body].nodes.v[n->index]];
}

/* Each op's lowering; the elementwise ops (classes U, B, C) have none here
 * and go to lw_elementwise. */
static void (*const lower_op[WV_OP_COUNT])(lw *w, uint32_t id) = {
    [WAVEC_OP_ARG] = lower_nothing,
    [WAVEC_OP_SCALAR] = lower_nothing,
    [WAVEC_OP_CARRIED] = lower_nothing,
    [WAVEC_OP_REGISTER] = lw_register,
    [WAVEC_OP_READ] = lw_read,
    [WAVEC_OP_WRITE] = lw_write,
    [WAVEC_OP_PERMUTE] = lower_view,
    [WAVEC_OP_BROADCAST] = lower_view,
    [WAVEC_OP_CAST] = lw_cast,
    [WAVEC_OP_SELECT] = lw_select,
    [WAVEC_OP_SELF_INDEX] = lw_self_index,
    [WAVEC_OP_MMA] = lw_mma,
    [WAVEC_OP_MAX] = lw_reduce,
    [WAVEC_OP_SUM] = lw_reduce,
    [WV_OP_CONVERT] = lw_convert,
    [WAVEC_OP_ITERATE] = lw_iterate,
    [WAVEC_OP_YIELD] = lw_yield,
    [WAVEC_OP_RESULT] = lower_result,
};

/* The barrier before an access of a tensor the kernel wrote earlier
 * (plan.c's ordered_accesses), and its remark. */
static void order_access(lw *w, const wv_node *n) {
  /* planted bug for the tests: the access unordered */
  if (!(w->ctx->test_hooks & WV_HOOK_NO_ORDER_BARRIER))
    lw_barrier(w);
  wv_buf b;
  wv_remark_start(w->k, n->loc, &b);
  wv_buf_printf(&b,
                "%s of '%s' after an earlier access of it that other threads "
                "of the workgroup may have made: a barrier of the workgroup "
                "orders the two (workgroups are not ordered: each reads back "
                "or writes again only what it touched itself)",
                n->op == WAVEC_OP_READ ? "read" : "write",
                wv_get(w->g, n->mem)->name);
  wv_remark_end(w->k, &b);
}

void lw_node(lw *w, uint32_t id) {
  wv_node *n = wv_get(w->g, id);
  w->loc = w->ctx->at = n->loc;
  if (w->order_before[id])
    order_access(w, n);
  if (lower_op[n->op])
    lower_op[n->op](w, id);
  else
    lw_elementwise(w, id);
}

/* Issue order (warpgroup kernels): a block's nodes are lowered in program
 * order, except that each mma is lowered as soon as the block holds what
 * it reads: it and its operands' cone are pulled up to the first point
 * where every node of the cone is lowered or cheap to move (a constant, a
 * register's initial value, an index, a broadcast of them, a read of a
 * tensor the kernel never writes). A warpgroup mma is asynchronous: issued
 * early, it runs on the tensor cores while the waves compute what comes
 * before its use (the backward's dp = v doᵀ during the exponentials of p),
 * and the pass `waits` retires each mma's group only where its result is
 * first touched. The scan for mmas to pull runs at the block's top and
 * after each node that is neither cheap nor an mma's operand (an mma right
 * after its operand is already where it would go), and never past a
 * write, a loop or a read of a written tensor; nothing else moves.
 * Registers: an mma pulled early keeps its accumulators live (in flight)
 * longer, beside the ones the loop carries; a chain is pulled only where
 * the carried accumulators, those of the chains placed so far in the
 * block and its own leave ISSUE_SPARE of the thread's registers. Measured
 * with ptxas over the snapshot's kernels: with 64, no program spills more
 * or has its wgmmas serialized than in program order; with 56, four do
 * (C7512, or a spill: the split dq and the one-pass backward at 64-key
 * tiles, D = 128). The one-pass backward at D = 128 with s and dp in
 * flight beside dk and dv (192 accumulators) needs 250 registers: in the
 * plain schedule's 255 it compiles clean, in the specialized consumers'
 * 240 ptxas serializes every wgmma; the rule keeps program order in both,
 * and hardware(early_mma = 1) asks for the early order regardless of it.
 * hardware(early_mma = 0), or not given where hardware(pingpong = 1) is:
 * program order. */
enum { ISSUE_SPARE = 64 };

typedef struct issue {
  lw *w;
  const wv_block *b;
  uint32_t *pos;  /* node id -> index in the block + 1 (0: not in it) */
  bool *done;     /* by index: placed */
  uint32_t *out, nout;
  int64_t room;   /* accumulator registers a thread may still hold */
} issue;

static bool cheap(const lw *w, const wv_node *n) {
  switch (n->op) {
  case WAVEC_OP_SCALAR:
  case WAVEC_OP_REGISTER:
  case WAVEC_OP_SELF_INDEX:
  case WAVEC_OP_BROADCAST:
  case WAVEC_OP_CARRIED:
  case WAVEC_OP_MMA:
    return true;
  case WAVEC_OP_READ:
    return !w->written[n->mem];
  default:
    return false;
  }
}

/* The accumulator registers a thread holds for mma `id` if it starts a
 * chain (its accumulator is not another mma's result), else 0. */
static int64_t chain_regs(const lw *w, uint32_t id) {
  const wv_node *n = wv_get(w->g, id);
  if (n->op != WAVEC_OP_MMA || wv_get(w->g, n->ops[2])->op == WAVEC_OP_MMA)
    return 0;
  const wv_layout *l = w->ix->info[n->ops[2]].layout;
  return l ? l->nelem : 0;
}

/* Can node `at` (an index in the block) be lowered now with its cone
 * (every unlowered node of it cheap, the chains it starts within room)? */
static bool pullable(const issue *is, uint32_t at, int64_t *regs) {
  if (is->done[at])
    return true;
  uint32_t id = is->b->nodes.v[at];
  const wv_node *n = wv_get(is->w->g, id);
  if (!cheap(is->w, n))
    return false;
  *regs += chain_regs(is->w, id);
  if (*regs > is->room)
    return false;
  for (uint32_t o = 0; o < n->nops; o++) {
    uint32_t j = is->pos[n->ops[o]];
    if (j && !pullable(is, j - 1, regs))
      return false;
  }
  return true;
}

static void pull(issue *is, uint32_t at) {
  if (is->done[at])
    return;
  uint32_t id = is->b->nodes.v[at];
  const wv_node *n = wv_get(is->w->g, id);
  for (uint32_t o = 0; o < n->nops; o++)
    if (is->pos[n->ops[o]])
      pull(is, is->pos[n->ops[o]] - 1);
  is->done[at] = true;
  is->room -= chain_regs(is->w, id);
  is->out[is->nout++] = id;
}

/* The registers a thread of the kernel's waves has: the consumers' with
 * warp specialization, else what the launch gives (floor8(min(255, 65536
 * / (workgroups_per_sm x threads)))). */
static int64_t thread_regs(const lw *w) {
  if (w->sched.specialize)
    return w->sched.consumer_regs;
  int64_t wps = w->d->hw[WAVEC_HW_WORKGROUPS_PER_SM]
                    ? w->d->hw[WAVEC_HW_WORKGROUPS_PER_SM]
                    : 1;
  int64_t r = 65536 / (wps * lw_block_threads(w)) / 8 * 8;
  return r > 255 ? 255 : r;
}

static const uint32_t *issue_order(lw *w, uint32_t block, bool asked) {
  wavec_ctx *ctx = w->ctx;
  const wv_block *b = &w->g->blocks.v[block];
  size_t nb = b->nodes.n ? b->nodes.n : 1;
  issue is = {.w = w, .b = b,
              .pos = wv_alloc(ctx, w->g->nodes.n * sizeof *is.pos),
              .done = wv_alloc(ctx, nb),
              .out = wv_alloc(ctx, nb * sizeof *is.out),
              .room = asked ? INT32_MAX : thread_regs(w) - ISSUE_SPARE};
  bool *feeds = wv_alloc(ctx, nb);
  for (uint32_t i = 0; i < b->nodes.n; i++) {
    is.pos[b->nodes.v[i]] = i + 1;
    is.done[i] = w->hoisted[b->nodes.v[i]]; /* (lowered before the loop) */
  }
  for (uint32_t i = 0; i < b->nodes.n; i++) {
    const wv_node *n = wv_get(w->g, b->nodes.v[i]);
    for (uint32_t o = 0; n->op == WAVEC_OP_MMA && o < n->nops; o++)
      if (is.pos[n->ops[o]])
        feeds[is.pos[n->ops[o]] - 1] = true;
    /* (the accumulators the loop carries are live throughout) */
    if (n->op == WAVEC_OP_MMA &&
        wv_get(w->g, n->ops[2])->op == WAVEC_OP_CARRIED)
      is.room -= chain_regs(w, b->nodes.v[i]);
  }
  for (uint32_t i = 0; i < b->nodes.n; i++) {
    const wv_node *n = wv_get(w->g, b->nodes.v[i]);
    if (!is.done[i])
      pull(&is, i);
    /* (a cheap node unblocks nothing that was not pullable before; an
     * mma's operand, only that mma, which follows in program order) */
    if (i && (cheap(w, n) || feeds[i]))
      continue;
    for (uint32_t j = i + 1; j < b->nodes.n; j++) {
      const wv_node *m = wv_get(w->g, b->nodes.v[j]);
      if (m->op == WAVEC_OP_WRITE || m->op == WAVEC_OP_ITERATE ||
          (m->op == WAVEC_OP_READ && w->written[m->mem]))
        break;
      int64_t regs = 0;
      if (m->op == WAVEC_OP_MMA && !is.done[j] && pullable(&is, j, &regs))
        pull(&is, j);
    }
  }
  return is.out; /* (zeros after nout: the hoisted nodes) */
}

void lw_block(lw *w, uint32_t block) {
  wv_block *b = &w->g->blocks.v[block];
  wavec_loc at;
  const uint32_t *order = NULL;
  /* (not given, program order where turns are asked for: the pass turns
   * takes the groups as the program order makes them) */
  int64_t early = lw_knob(w->k, WAVEC_HW_EARLY_MMA, &at);
  if (early < 0 && w->d->hw[WAVEC_HW_PINGPONG] == 1)
    early = 0;
  if (w->wgmma && early != 0)
    order = issue_order(w, block, early == 1);
  for (uint32_t i = 0; i < b->nodes.n; i++) {
    uint32_t id = order ? order[i] : b->nodes.v[i];
    if (id && !w->hoisted[id])
      lw_node(w, id);
  }
}

tir_prog *wv_kernel_tir(wv_kernel *k) { return k->tir; }

wavec_status wv_pass_lower(wv_kernel *k) {
  wavec_ctx *ctx = k->ctx;
  lw *w = k->lw;
  uint32_t nn = k->g->nodes.n;
  w->p = wv_alloc(ctx, sizeof *w->p);
  w->vals = wv_alloc(ctx, nn * sizeof *w->vals);
  /* (loop counters, and the schedule's $RING made after the dims) */
  w->nloopreg = ctx->sym_names.n;
  w->loopreg = wv_alloc(ctx, w->nloopreg * sizeof *w->loopreg);
  w->hoisted = wv_alloc(ctx, nn * sizeof *w->hoisted);
  w->pref = wv_alloc(ctx, nn * sizeof *w->pref);
  w->pref_src = wv_alloc(ctx, nn * sizeof *w->pref_src);
  w->lazy_scope = wv_alloc(ctx, nn * sizeof *w->lazy_scope);
  w->red_init = wv_alloc(ctx, nn * sizeof *w->red_init);
  w->remarked = wv_alloc(ctx, w->norigin * sizeof *w->remarked);
  w->grouped = wv_alloc(ctx, nn * sizeof *w->grouped);
  w->guarded = wv_alloc(ctx, w->norigin * sizeof *w->guarded);
  w->wide_said = wv_alloc(ctx, (k->args.n + 1) * sizeof *w->wide_said);
  tir_prog *p = w->p;
  vec_push(ctx, &p->regs, TY_PRED); /* register 0: none */
  /* dynamic dims: run-time sizes, in the order they are declared */
  w->size_index = wv_alloc(ctx, w->d->nsyms * sizeof *w->size_index);
  k->run_size = wv_alloc(ctx, (k->dynamics.n + 1) * sizeof *k->run_size);
  k->run_from = wv_alloc(ctx, (k->dynamics.n + 1) * sizeof *k->run_from);
  for (uint32_t i = 0; i < k->dynamics.n; i++) {
    wavec_sym s = k->dynamics.v[i].dim;
    if (!w->d->dim[s].used)
      continue;
    tir_size z = {wavec_symbol_name(ctx, s), s, w->d->dim[s].multiple,
                  w->d->dim[s].most, k->dynamics.v[i].loc};
    k->run_size[p->sizes.n] = k->bind.ival[s]; /* a definition, or 0 */
    vec_push(ctx, &p->sizes, z);
    w->size_index[s] = p->sizes.n;
  }
  for (int a = 0; a < 3; a++) {
    p->grid[a] = w->d->grid[a];
    p->block[a] = w->d->block[a];
    wavec_sym g = w->d->grid_dim[a];
    if (g && w->d->dim[g].dynamic) {
      p->grid[a] = 0;
      p->grid_size[a] = w->size_index[g];
      p->grid_tile[a] = w->d->dim[g].wg_tile;
    }
  }
  p->lanes = w->d->lanes;
  p->wgs_per_sm = w->d->hw[WAVEC_HW_WORKGROUPS_PER_SM];
  p->mma = w->d->mma;
  p->lanes_loc = k->hw.threads_loc;
  p->mma_loc = k->hw.mma_loc;
  for (uint32_t i = 0; i < k->args.n; i++) {
    wv_node *a = wv_get(k->g, k->args.v[i]);
    tir_arg ta = {.name = a->name, .dt = a->type.dt, .ndims = a->type.n,
                  .elems = wv_tensor_elems(k, a, NULL)};
    for (uint32_t j = 0; j < a->type.n; j++) {
      wavec_sym d = a->type.dims[j];
      ta.dyn[j] = w->size_index[d];
      ta.shape[j] = ta.dyn[j] ? 0 : k->bind.ival[d];
      if (ta.dyn[j])
        ta.elems = 0;
    }
    vec_push(ctx, &p->args, ta);
  }
  lw_exchange_plan(w);
  lw_store_plan(w);
  lw_parts_plan(w);
  for (uint32_t i = 0; i < w->tmaps.n; i++) /* the pipeline's, the store's */
    vec_push(ctx, &p->tmaps, w->tmaps.v[i]);
  lw_open_scope(w);
  lw_tma_prologue(w);
  lw_sched_begin(w);
  lw_block(w, 0);
  lw_sched_end(w);
  p->smem_bytes = w->convert_bytes + w->stage_bytes;
  k->tir = p;
  return WAVEC_OK;
}

int64_t wv_lower_refit(wv_kernel *k) {
  const lw *w = k->lw;
  const tir_prog *p = k->tir;
  if (p->smem_bytes <= SMEM_OPTIN)
    return 0;
  bool streams = false;
  for (uint32_t i = 0; i < w->stages_all.n; i++)
    streams |= w->stages_all.v[i]->loop != 0;
  if (streams && !w->d->hw[WAVEC_HW_STAGES] && w->stages > 1)
    return w->stages - 1;
  if (w->wgmma) {
    wavec_loc at = k->loc;
    for (uint32_t i = 0; i < w->stages_all.n; i++)
      if (w->stages_all.v[i]->loop) {
        at = wv_get(w->g, w->stages_all.v[i]->loop)->loc;
        break;
      }
    wv_fail(k->ctx, D_UNSUPPORTED, at,
            "more shared memory than a workgroup can have: %lld bytes, where "
            "sm_90a allows %lld (%ssmaller tiles)",
            (long long)p->smem_bytes, (long long)SMEM_OPTIN,
            streams && w->stages > 1 ? "fewer stages, hardware(stages), or "
                                     : "");
  }
  return 0;
}
