/* The thread program: printer and verifier. */
#include "tir/tir.h"

#include <math.h>

#include "target/target.h"

static const struct {
  const char *name;
  int nops;
} tir_ops[T__COUNT] = {
#define X(e, name, n, ptx, fptx) [e] = {name, n},
    TIR_OPS(X)
#undef X
};

static const char *const sreg_names[] = {"tid.x",   "tid.y",   "tid.z",
                                         "ctaid.x", "ctaid.y", "ctaid.z"};
static const char *const cmp_names[] = {"gt", "lt", "ge", "le", "eq", "ne"};

void tir_print(wavec_ctx *ctx, const tir_prog *p, wv_buf *b) {
  (void)ctx;
  wv_buf_printf(b, "tir grid [%lld, %lld, %lld] block [%lld, %lld, %lld] "
                   "lanes %d shared %lld bytes, %u registers, %u "
                   "instructions\n",
                (long long)p->grid[0], (long long)p->grid[1],
                (long long)p->grid[2], (long long)p->block[0],
                (long long)p->block[1], (long long)p->block[2], p->lanes,
                (long long)p->smem_bytes, p->regs.n - 1, p->code.n);
  for (uint32_t i = 0; i < p->args.n; i++)
    wv_buf_printf(b, "  arg %u %s %s %lld elements%s\n", i, p->args.v[i].name,
                  wv_dtypes[p->args.v[i].dt].name,
                  (long long)p->args.v[i].elems,
                  p->args.v[i].written ? " (written)" : "");
  for (uint32_t i = 0; i < p->sizes.n; i++)
    wv_buf_printf(b, "  size %u %s (dynamic, a multiple of %lld)\n", i,
                  p->sizes.v[i].name, (long long)p->sizes.v[i].multiple);
  for (int a = 0; a < 3; a++)
    if (p->grid_size[a])
      wv_buf_printf(b, "  %s axis %d: ceil(%s / %lld)\n",
                    p->persistent ? "tiles" : "grid", a,
                    p->sizes.v[p->grid_size[a] - 1].name,
                    (long long)p->grid_tile[a]);
  if (p->persistent)
    wv_buf_printf(b, "  persistent: tiles [%lld, %lld, %lld], at most %lld "
                     "workgroups\n",
                  (long long)p->tiles[0], (long long)p->tiles[1],
                  (long long)p->tiles[2], (long long)p->persistent);
  for (uint32_t i = 0; i < p->tmaps.n; i++) {
    const tir_tmap *m = &p->tmaps.v[i];
    wv_buf_printf(b, "  tmap %u %s box [", i, p->args.v[m->arg].name);
    for (uint32_t d = 0; d < m->rank; d++)
      wv_buf_printf(b, "%s%lld", d ? ", " : "", (long long)m->box[d]);
    if (m->swz)
      wv_buf_printf(b, "] swizzle %lld\n", (long long)m->swz);
    else
      wv_buf_puts(b, "]\n");
  }
  if (p->maxnreg)
    wv_buf_printf(b, "  registers: %lld per thread at entry\n",
                  (long long)p->maxnreg);
  int depth = 1;
  for (uint32_t i = 0; i < p->code.n; i++) {
    const tir_instr *in = &p->code.v[i];
    if (in->op == T_ENDLOOP || in->op == T_ENDIF)
      depth--;
    uint32_t start = b->n;
    for (int d = 0; d < depth; d++)
      wv_buf_puts(b, "  ");
    if (in->dst)
      wv_buf_printf(b, "r%u = ", in->dst);
    wv_buf_printf(b, "%s.%s", tir_ops[in->op].name, tir_ty_names[in->ty]);
    switch (in->op) {
    case T_CONST:
      if (in->ty == TY_I32 || in->ty == TY_I64 || in->ty == TY_PRED)
        wv_buf_printf(b, " %lld", (long long)in->imm);
      else
        wv_buf_printf(b, " %.9g", in->fimm);
      break;
    case T_SREG:
      wv_buf_printf(b, " %s", sreg_names[in->imm]);
      break;
    case T_PARAM:
      wv_buf_printf(b, " %s", p->sizes.v[in->imm].name);
      break;
    case T_SETP:
      wv_buf_printf(b, " %s", cmp_names[in->imm]);
      break;
    case T_LDG:
    case T_STG:
    case T_REDG:
    case T_LDGV:
    case T_STGV:
      wv_buf_printf(b, " %s", p->args.v[in->imm].name);
      break;
    case T_CPA:
      wv_buf_printf(b, " %s", p->args.v[in->imm].name);
      if (in->imm2 != 16)
        wv_buf_printf(b, " %lldB", (long long)in->imm2);
      break;
    case T_CPWAIT:
    case T_BULKWAIT:
    case T_BULKWAITR:
    case T_WGWAIT:
    case T_MBINIT:
    case T_REGINC:
    case T_REGDEC:
      wv_buf_printf(b, " %lld", (long long)in->imm);
      break;
    case T_TURNWAIT:
    case T_TURNPASS:
      wv_buf_printf(b, " of %lld threads", (long long)in->imm2);
      break;
    case T_BAR:
      if (in->imm2)
        wv_buf_printf(b, " %lld of %lld threads", (long long)in->imm,
                      (long long)in->imm2);
      break;
    case T_MBARRIVE:
      if (in->imm)
        wv_buf_printf(b, " expect %lld", (long long)in->imm);
      if (in->imm2 == TIR_ARRIVE_CLUSTER)
        wv_buf_puts(b, " cluster");
      break;
    case T_TMA:
    case T_TMAST:
      wv_buf_printf(b, " %s%s map %lld%s",
                    in->op == T_TMAST && in->imm2 == TIR_TMAST_ADD ? "add " : "",
                    p->args.v[p->tmaps.v[in->imm].arg].name,
                    (long long)in->imm,
                    in->op == T_TMA && in->imm2 == TIR_TMA_MULTICAST
                        ? " multicast" : "");
      break;
    case T_SHFL:
      wv_buf_printf(b, " xor %lld", (long long)in->imm);
      break;
    case T_SWZ:
      wv_buf_printf(b, " %lld", (long long)in->imm);
      break;
    case T_LOOP:
    case T_ENDLOOP:
      wv_buf_printf(b, " %lld trips", (long long)in->imm);
      break;
    default:
      break;
    }
    uint32_t ops[3] = {in->a, in->b, in->c};
    for (int j = 0; j < 3; j++)
      if (ops[j])
        wv_buf_printf(b, " r%u", ops[j]);
    for (uint32_t j = 0; j < in->nlist; j++)
      wv_buf_printf(b, "%sr%u", j ? "," : " ", in->list[j]);
    if (in->loc.line) {
      for (uint32_t c = b->n - start; c < 48; c++)
        wv_buf_puts(b, " ");
      wv_buf_printf(b, "  # %u:%u", in->loc.line, in->loc.col);
    }
    wv_buf_puts(b, "\n");
    if (in->op == T_LOOP || in->op == T_IF)
      depth++;
  }
}

bool tir_int_pure(const tir_prog *p, const tir_instr *in) {
  static const bool ops[T__COUNT] = {
      [T_CONST] = 1, [T_MOV] = 1,  [T_ADD] = 1,  [T_SUB] = 1,  [T_MUL] = 1,
      [T_DIV] = 1,   [T_MOD] = 1,  [T_TDIV] = 1, [T_TREM] = 1, [T_SHR] = 1,
      [T_MIN] = 1,   [T_MAX] = 1,  [T_SETP] = 1, [T_AND] = 1,  [T_SELP] = 1,
      [T_SWZ] = 1};
  if (!ops[in->op] || !in->dst || in->nlist)
    return false;
  tir_ty t = p->regs.v[in->dst];
  return t == TY_I32 || t == TY_I64 || t == TY_PRED;
}

int64_t tir_tmap_bytes(const tir_prog *p, const tir_tmap *m) {
  int64_t n = tir_ty_bytes(tir_ty_of(p->args.v[m->arg].dt));
  for (uint32_t d = 0; d < m->rank; d++)
    n *= m->box[d];
  return n;
}

/* Is tensor map m one the PTX and the driver can take (tir.h)? */
static bool tmap_ok(const tir_prog *p, const tir_tmap *m) {
  if (m->arg >= p->args.n || m->rank != p->args.v[m->arg].ndims ||
      m->rank < 1 || m->rank > 5 || p->args.v[m->arg].dt == WAVEC_I1)
    return false;
  int64_t es = tir_ty_bytes(tir_ty_of(p->args.v[m->arg].dt));
  for (uint32_t d = 0; d < m->rank; d++)
    if (m->box[d] < 1 || m->box[d] > 256)
      return false;
  /* rows of 16-byte multiples; a swizzled row is the swizzle's bytes */
  int64_t row = m->box[m->rank - 1] * es;
  return m->swz ? tir_swz_ok(m->swz) && row == m->swz : row % 16 == 0;
}

/* The operand checks of the mbarrier and tensor copy ops. */
static bool async_ok(const tir_prog *p, const tir_instr *in) {
  const tir_ty *rt = p->regs.v;
  bool a32 = in->a && rt[in->a] == TY_I32;
  switch (in->op) {
  case T_MBINIT:
    return a32 && (!in->b || rt[in->b] == TY_PRED) && in->imm >= 1 &&
           in->imm < (1 << 20);
  case T_MBARRIVE:
    /* (an arrival at every workgroup's barrier announces no bytes) */
    return a32 && (!in->b || rt[in->b] == TY_PRED) && in->imm >= 0 &&
           in->imm < (1 << 20) &&
           (in->imm2 == 0 ||
            (in->imm2 == TIR_ARRIVE_CLUSTER && !in->imm && p->cluster > 1));
  case T_CLUSTERBAR:
    return p->cluster > 1;
  case T_TURNWAIT:
  case T_TURNPASS:
    return a32 && (in->op == T_TURNPASS || !in->b) &&
           (!in->b || rt[in->b] == TY_PRED) && in->imm2 > 0 &&
           in->imm2 % p->lanes == 0 && in->imm2 % 32 == 0 &&
           in->imm2 <= p->block[0] * p->block[1] * p->block[2];
  case T_MBWAIT:
    return a32 && in->b && rt[in->b] == TY_I32 &&
           (!in->c || rt[in->c] == TY_PRED);
  case T_TMA:
  case T_TMAST: {
    /* a load completes on an mbarrier (b); a store has none */
    bool bar = in->op == T_TMA ? in->b && rt[in->b] == TY_I32 : !in->b;
    if (!a32 || !bar || (in->c && rt[in->c] != TY_PRED) || in->imm < 0 ||
        in->imm >= p->tmaps.n)
      return false;
    const tir_tmap *m = &p->tmaps.v[in->imm];
    if (in->nlist != m->rank ||
        in->ty != tir_ty_of(p->args.v[m->arg].dt))
      return false;
    if (in->op == T_TMA && in->imm2 &&
        (in->imm2 != TIR_TMA_MULTICAST || p->cluster < 2))
      return false;
    /* (a store that adds: into f32 only) */
    if (in->op == T_TMAST && in->imm2 &&
        (in->imm2 != TIR_TMAST_ADD || in->ty != TY_F32))
      return false;
    for (uint32_t j = 0; j < in->nlist; j++)
      if (rt[in->list[j]] != TY_I32)
        return false;
    return true;
  }
  default:
    return true;
  }
}

/* i64 registers are index arithmetic's only (tir.h): the ops that may
 * touch one, and how. */
static bool i64_ok(const tir_prog *p, const tir_instr *in) {
  const tir_ty *rt = p->regs.v;
  const tir_ty I = TY_I64;
  bool any = in->ty == I || (in->dst && rt[in->dst] == I) ||
             (in->a && rt[in->a] == I) || (in->b && rt[in->b] == I) ||
             (in->c && rt[in->c] == I);
  for (uint32_t j = 0; j < in->nlist; j++)
    any |= rt[in->list[j]] == I;
  if (!any)
    return true;
  switch (in->op) {
  case T_CONST: return in->nlist == 0;
  case T_MOV: return rt[in->a] == I;
  case T_ADD:
  case T_SUB:
  case T_MUL:
  case T_DIV:
  case T_MOD:
  case T_MIN:
  case T_MAX: return in->ty == I && rt[in->a] == I && rt[in->b] == I;
  case T_SELP:
    return in->ty == I && rt[in->a] == TY_PRED && rt[in->b] == I &&
           rt[in->c] == I;
  case T_SETP: return in->ty == I && rt[in->a] == I && rt[in->b] == I;
  case T_CVT:
    return (in->ty == I && rt[in->a] == TY_I32) ||
           (in->ty == TY_I32 && rt[in->a] == I);
  case T_LDG: /* the offset only */
    return in->ty != I && rt[in->a] == I && (!in->b || rt[in->b] == TY_PRED);
  case T_STG:
    return in->ty != I && rt[in->a] == I && rt[in->b] != I &&
           (!in->c || rt[in->c] == TY_PRED);
  case T_REDG: /* (a pair or four from the list, b unused) */
    return in->ty == TY_F32 && rt[in->a] == I &&
           (in->nlist ? !in->b : rt[in->b] == TY_F32) &&
           (!in->c || rt[in->c] == TY_PRED);
  case T_LDGV:
  case T_STGV:
    return in->ty != I && rt[in->a] == I && (!in->b || rt[in->b] == TY_PRED);
  case T_CPA: return in->ty != I && rt[in->a] != I && rt[in->b] == I;
  default: return false;
  }
}

const tir_prog *tir_instance(wavec_ctx *ctx, const tir_prog *p,
                             const int64_t *vals, wavec_loc loc) {
  for (uint32_t i = 0; i < p->sizes.n; i++) {
    const tir_size *z = &p->sizes.v[i];
    wavec_loc at = z->loc.line ? z->loc : loc; /* its dynamic(...) */
    if (vals[i] <= 0)
      wv_fail(ctx, D_INVALID, at,
              "the size of dynamic dimension '%s' is %s; give the shape of "
              "an argument with it (wavec_arg_shape, or --arg) or define "
              "it (-D %s=N)",
              z->name, vals[i] ? "not positive" : "not given", z->name);
    if (vals[i] % z->multiple)
      wv_fail(ctx, D_INVALID, at,
              "'%s' = %lld is not a multiple of %lld, as "
              "dynamic(%s, multiple_of = %lld) states",
              z->name, (long long)vals[i], (long long)z->multiple, z->name,
              (long long)z->multiple);
  }
  int64_t grid[3];
  const char *why = tir_grid(ctx, p, vals, grid);
  if (why)
    wv_fail(ctx, D_UNSUPPORTED, loc, "the sizes give %s", why);
  if (!p->sizes.n)
    return p;
  tir_prog *q = wv_dup(ctx, p, sizeof *p);
  q->args.v = wv_dup(ctx, p->args.v, p->args.n * sizeof *p->args.v);
  q->size_vals = wv_dup(ctx, vals, p->sizes.n * sizeof *vals);
  for (uint32_t i = 0; i < q->args.n; i++) {
    tir_arg *a = &q->args.v[i];
    a->elems = 1;
    for (uint32_t j = 0; j < a->ndims; j++) {
      if (a->dyn[j])
        a->shape[j] = vals[a->dyn[j] - 1];
      a->elems *= a->shape[j];
    }
  }
  memcpy(q->grid, grid, sizeof grid);
  return q;
}

int64_t tir_arg_align(const tir_prog *p, uint32_t a) {
  int64_t al = (wv_dtypes[p->args.v[a].dt].bits + 7) / 8;
  for (uint32_t i = 0; i < p->code.n; i++) {
    const tir_instr *in = &p->code.v[i];
    int64_t b = 0;
    /* (a vector of adds too: one red of 8 or 16 bytes from sm_90) */
    if ((in->op == T_LDGV || in->op == T_STGV ||
         (in->op == T_REDG && in->nlist)) &&
        in->imm == (int64_t)a)
      b = tir_ty_bytes(in->ty) * (int64_t)in->nlist;
    else if (in->op == T_CPA && in->imm == (int64_t)a)
      b = in->imm2;
    al = b > al ? b : al;
  }
  for (uint32_t i = 0; i < p->tmaps.n; i++)
    if (p->tmaps.v[i].arg == a && al < 16)
      al = 16;
  return al;
}

const char *tir_launch_grid(wavec_ctx *ctx, const int64_t tiles[3],
                            int64_t persistent, int64_t grid[3]) {
  static const int64_t most[3] = {INT32_MAX, 65535, 65535};
  wv_buf b;
  wv_buf_init(&b, ctx);
  if (!persistent) {
    for (int a = 0; a < 3; a++)
      grid[a] = tiles[a];
    for (int a = 0; a < 3; a++)
      if (tiles[a] > most[a]) {
        wv_buf_printf(&b, "a grid of [%lld, %lld, %lld] workgroups, more "
                          "than a launch allows (2^31-1 along x, 65535 "
                          "along y and z)",
                      (long long)tiles[0], (long long)tiles[1],
                      (long long)tiles[2]);
        return wv_buf_str(&b);
      }
    return NULL;
  }
  /* all the tiles, or INT32_MAX + 1 once past 2^31-1 (no overflow) */
  int64_t all = 1;
  for (int a = 0; a < 3; a++)
    all = tiles[a] && all > INT32_MAX / tiles[a] ? (int64_t)INT32_MAX + 1
                                                 : all * tiles[a];
  grid[0] = all < persistent ? all : persistent;
  grid[1] = grid[2] = 1;
  if (all <= INT32_MAX)
    return NULL;
  wv_buf_printf(&b, "persistent tiles [%lld, %lld, %lld], more than 2^31-1 "
                    "in all (a tile's index is 32-bit)",
                (long long)tiles[0], (long long)tiles[1], (long long)tiles[2]);
  return wv_buf_str(&b);
}

const char *tir_grid(wavec_ctx *ctx, const tir_prog *p, const int64_t *vals,
                     int64_t grid[3]) {
  int64_t tiles[3];
  for (int a = 0; a < 3; a++) {
    int64_t v = p->grid_size[a] && vals ? vals[p->grid_size[a] - 1] : 0;
    tiles[a] = !p->grid_size[a] ? (p->persistent ? p->tiles[a] : p->grid[a])
               : v > 0 ? (v + p->grid_tile[a] - 1) / p->grid_tile[a]
                       : 0;
  }
  return tir_launch_grid(ctx, tiles, p->persistent, grid);
}

wavec_status tir_verify(wavec_ctx *ctx, const tir_prog *p) {
  for (uint32_t i = 0; i < p->tmaps.n; i++)
    if (!tmap_ok(p, &p->tmaps.v[i]))
      wv_fail(ctx, D_INTERNAL, (wavec_loc){0},
              "thread program verifier: tensor map %u is malformed", i);
  uint32_t nregs = p->regs.n;
  bool i64 = false; /* (most programs have no i64 register) */
  for (uint32_t r = 1; r < nregs && !i64; r++)
    i64 = p->regs.v[r] == TY_I64;
  VEC(uint32_t) loops = {0};
  for (uint32_t i = 0; i < p->code.n; i++) {
    const tir_instr *in = &p->code.v[i];
    uint32_t ops[3] = {in->a, in->b, in->c};
    bool bad = in->dst >= nregs;
    for (int j = 0; j < 3; j++)
      bad |= ops[j] >= nregs;
    for (uint32_t j = 0; j < in->nlist; j++)
      bad |= in->list[j] == 0 || in->list[j] >= nregs;
    /* setp: ty is the type compared; the result is a predicate */
    tir_ty want = in->op == T_SETP ? TY_PRED : in->ty;
    if (in->dst && in->op != T_LOOP && in->op != T_ENDLOOP &&
        p->regs.v[in->dst] != want)
      bad = true;
    /* two-operand arithmetic: float operands of its own type, integer
     * operands of an integer type (i32 and i64 may meet in an address) */
    static const bool arith[T__COUNT] = {[T_ADD] = 1, [T_SUB] = 1,
                                         [T_MUL] = 1, [T_DIV] = 1,
                                         [T_MIN] = 1, [T_MAX] = 1};
    for (int j = 0; arith[in->op] && !bad && j < 2; j++) {
      tir_ty t = ops[j] ? p->regs.v[ops[j]] : in->ty;
      bad |= tir_ty_is_float(in->ty) ? t != in->ty
                                     : tir_ty_is_float(t) || t == TY_PRED;
    }
    /* fma: f32 registers only (the PTX form rounds once to f32) */
    if (in->op == T_FMA &&
        (in->ty != TY_F32 || !in->a || !in->b || !in->c ||
         p->regs.v[in->a] != TY_F32 || p->regs.v[in->b] != TY_F32 ||
         p->regs.v[in->c] != TY_F32))
      bad = true;
    if ((in->op == T_LDSM || in->op == T_LDSMT) &&
        (in->imm < 1 || in->imm > 4 || in->nlist != 2 * in->imm ||
         (in->ty != TY_F16 && in->ty != TY_BF16)))
      bad = true;
    if ((in->op == T_LDG || in->op == T_STG || in->op == T_LDGV ||
         in->op == T_STGV || in->op == T_CPA || in->op == T_REDG) &&
        (in->imm < 0 || in->imm >= p->args.n))
      bad = true;
    /* vector and asynchronous global accesses move whole elements of the
     * argument's own type */
    if ((in->op == T_LDGV || in->op == T_STGV || in->op == T_CPA) && !bad &&
        (in->ty == TY_PRED || p->args.v[in->imm].dt == WAVEC_I1 ||
         tir_ty_of(p->args.v[in->imm].dt) != in->ty))
      bad = true;
    /* an atomic add: an f32 value into an f32 argument */
    if (in->op == T_REDG && !bad) {
      bad |= in->ty != TY_F32 || p->args.v[in->imm].dt != WAVEC_F32 ||
             !in->a || (in->c && p->regs.v[in->c] != TY_PRED);
      bad |= in->nlist ? (in->nlist != 2 && in->nlist != 4) || in->b
                       : !in->b || p->regs.v[in->b] != TY_F32;
      for (uint32_t j = 0; j < in->nlist && !bad; j++)
        bad |= p->regs.v[in->list[j]] != TY_F32;
    }
    /* a vector load or store: a power of 2 of registers of its type, 2 at
     * least (4 of 8-bit elements: whole words) and 16 bytes at most, a
     * predicate guard */
    if ((in->op == T_STGV || in->op == T_LDGV) && !bad) {
      int64_t bytes = (int64_t)in->nlist * tir_ty_bytes(in->ty);
      bad |= in->nlist < 2 || (in->nlist & (in->nlist - 1)) || bytes > 16 ||
             bytes < 4 || !in->a ||
             (in->b && p->regs.v[in->b] != TY_PRED);
      for (uint32_t j = 0; j < in->nlist && !bad; j++)
        bad |= p->regs.v[in->list[j]] != in->ty;
    }
    if (in->op == T_CPA &&
        (!in->a || !in->b || p->regs.v[in->a] != TY_I32 ||
         (in->imm2 != 16 && in->imm2 != 8 && in->imm2 != 4) ||
         (p->regs.v[in->b] != TY_I32 && p->regs.v[in->b] != TY_I64) ||
         (in->c && p->regs.v[in->c] != TY_PRED) ||
         in->nlist > 1 || (in->nlist && p->regs.v[in->list[0]] != TY_PRED)))
      bad = true;
    if (in->op == T_WGMMA) {
      wavec_mma_kind kind = (wavec_mma_kind)(in->imm & TIR_WG_KIND);
      const wv_mma_info *mi = wv_mma_info_get(kind);
      bool areg = in->imm & TIR_WG_A_REGS;
      uint32_t na = areg && mi ? (uint32_t)wv_mma_elems(kind, WV_LHS, 8) : 0,
               nc = in->nlist - na;
      bad |= !mi || !wv_mma_is_warpgroup(kind) || in->nlist < na ||
             (!areg && !in->a) || !in->b || in->dst ||
             (in->imm & ~(int64_t)(TIR_WG_KIND | TIR_WG_A_REGS |
                                   TIR_WG_B_MN | TIR_WG_A_MN |
                                   3 << TIR_WG_SWZ_A | 3 << TIR_WG_SWZ_B)) ||
             tir_wg_swz(in->imm, 0) < 32 || tir_wg_swz(in->imm, 1) < 32 ||
             (areg && tir_wg_swz(in->imm, 0) != 128) ||
             /* an M-contiguous lhs is one panel: a wave's 64 rows */
             ((in->imm & TIR_WG_A_MN) && tir_wg_swz(in->imm, 0) != 128) ||
             (areg && (in->imm & TIR_WG_A_MN)) ||
             (in->a && p->regs.v[in->a] != TY_I32) ||
             p->regs.v[in->b] != TY_I32 ||
             !wv_mma_n_valid(kind, 2 * (int)nc) ||
             (!(in->imm & TIR_WG_B_MN) && in->imm2) || in->imm2 % 16;
      for (uint32_t j = 0; j < in->nlist && !bad; j++)
        bad |= p->regs.v[in->list[j]] !=
               tir_ty_of(j < nc ? mi->acc : mi->in);
      bad |= !bad && in->ty != tir_ty_of(mi->acc);
    }
    /* T_MMA: list dst, a, b, c; dst and c of the accumulator's type */
    if (in->op == T_MMA) {
      const wv_mma_info *mi = wv_mma_info_get((wavec_mma_kind)in->imm);
      int nc = mi ? wv_mma_elems((wavec_mma_kind)in->imm, WV_ACC, 0) : 0,
          na = mi ? wv_mma_elems((wavec_mma_kind)in->imm, WV_LHS, 0) : 0,
          nb = mi ? wv_mma_elems((wavec_mma_kind)in->imm, WV_RHS, 0) : 0;
      bad |= !mi || wv_mma_is_warpgroup((wavec_mma_kind)in->imm) ||
             in->nlist != (uint32_t)(2 * nc + na + nb) ||
             in->ty != tir_ty_of(mi->acc);
      for (uint32_t j = 0; j < in->nlist && !bad; j++) {
        bool acc = j < (uint32_t)nc || j >= (uint32_t)(nc + na + nb);
        bad |= p->regs.v[in->list[j]] != tir_ty_of(acc ? mi->acc : mi->in);
      }
    }
    if (in->op == T_SWZ && (p->regs.v[in->a] != TY_I32 || in->ty != TY_I32 ||
                            !tir_swz_ok(in->imm)))
      bad = true;
    if (in->op == T_PARAM &&
        (in->ty != TY_I32 || in->imm < 0 || in->imm >= p->sizes.n))
      bad = true;
    if (!bad && (!async_ok(p, in) || (i64 && !i64_ok(p, in))))
      bad = true;
    if ((in->op == T_CPWAIT || in->op == T_WGWAIT) && (in->imm < 0 || in->imm > 7))
      bad = true;
    if ((in->op == T_LOOP || in->op == T_ENDLOOP) &&
        ((in->a && p->regs.v[in->a] != TY_I32) ||
         (in->b && p->regs.v[in->b] != TY_I32)))
      bad = true;
    if (in->op == T_IF && (!in->a || p->regs.v[in->a] != TY_PRED))
      bad = true;
    /* a named barrier counts whole waves (ids 1 to 15); barrier 0 is the
     * workgroup's */
    if (in->op == T_BAR &&
        (in->imm < 0 || in->imm > 15 || (in->imm == 0) != (in->imm2 == 0) ||
         in->imm2 < 0 || in->imm2 % p->lanes || in->imm2 % 32 ||
         in->imm2 > p->block[0] * p->block[1] * p->block[2]))
      bad = true;
    if ((in->op == T_REGINC || in->op == T_REGDEC) &&
        (in->imm % 8 || in->imm < 24 || in->imm > 256 || !p->maxnreg))
      bad = true;
    /* loops and role regions nest */
    if (in->op == T_LOOP || in->op == T_IF)
      vec_push(ctx, &loops, i);
    if (in->op == T_ENDLOOP || in->op == T_ENDIF) {
      const tir_instr *open = loops.n ? &p->code.v[loops.v[loops.n - 1]] : NULL;
      if (!open || open->match != i || in->match != loops.v[loops.n - 1] ||
          open->op != (in->op == T_ENDLOOP ? T_LOOP : T_IF))
        bad = true;
      else
        loops.n--;
    }
    if (bad)
      wv_fail(ctx, D_INTERNAL, in->loc,
              "thread program verifier: instruction %u (%s) is malformed", i,
              tir_ops[in->op].name);
  }
  if (loops.n)
    wv_fail(ctx, D_INTERNAL, (wavec_loc){0},
            "thread program verifier: a loop or region is not closed");
  return WAVEC_OK;
}

/* Argument i of compiled kernel k exists: WAVEC_OK, else the error. */
static wavec_status compiled_arg(wv_kernel *k, size_t i) {
  const tir_prog *p = k->tir;
  if (!p)
    return wv_error(k->ctx, D_INVALID, k->loc,
                    "kernel '%s' is not compiled (call wavec_compile first)",
                    k->name);
  if (i >= p->args.n)
    return wv_error(k->ctx, D_INVALID, k->loc, "kernel '%s' has %u arguments",
                    k->name, p->args.n);
  return WAVEC_OK;
}

wavec_status wavec_arg_shape(wavec_kernel *pk, size_t i, size_t ndims,
                             const int64_t *shape) {
  if (!pk || (ndims && !shape))
    return wv_null_param(pk ? pk->k.ctx : NULL, "wavec_arg_shape", "shape");
  wv_kernel *k = &pk->k;
  wavec_status st = compiled_arg(k, i);
  if (st != WAVEC_OK)
    return st;
  const tir_prog *p = k->tir;
  const tir_arg *a = &p->args.v[i];
  wavec_loc at = wv_get(k->g, k->args.v[i])->loc; /* its declaration */
  if (ndims != a->ndims)
    return wv_error(k->ctx, D_INVALID, at,
                    "argument '%s' has %u dimensions, the shape %zu", a->name,
                    a->ndims, ndims);
  for (uint32_t j = 0; j < a->ndims; j++) {
    /* a run-time size is at most its `most` (the index analysis assumes
     * it: 2^31-1, or less where a tensor has several run-time dims) */
    if (shape[j] <= 0)
      return wv_error(k->ctx, D_INVALID, at,
                      "argument '%s': size %lld of dimension %u%s%s%s is out "
                      "of range (a size is positive)",
                      a->name, (long long)shape[j], j,
                      a->dyn[j] ? " ('" : "",
                      a->dyn[j] ? p->sizes.v[a->dyn[j] - 1].name : "",
                      a->dyn[j] ? "')" : "");
    if (a->dyn[j] && shape[j] > p->sizes.v[a->dyn[j] - 1].most)
      return wv_error(k->ctx, D_INVALID, at,
                      "argument '%s': size %lld of dimension %u ('%s') is "
                      "out of range: more than the %lld the kernel is "
                      "compiled for "
                      "(a tensor with several run-time dims keeps each "
                      "to the root of 2^62 elements over its other dims)",
                      a->name, (long long)shape[j], j,
                      p->sizes.v[a->dyn[j] - 1].name,
                      (long long)p->sizes.v[a->dyn[j] - 1].most);
    if (!a->dyn[j] && shape[j] != a->shape[j])
      return wv_error(k->ctx, D_INVALID, at,
                      "argument '%s': dimension %u is %lld, compiled in; "
                      "the shape gives %lld (declare it dynamic to vary it)",
                      a->name, j, (long long)a->shape[j], (long long)shape[j]);
  }
  /* the shapes given for one run agree on every dynamic dim */
  uint64_t me = i < 64 ? (uint64_t)1 << i : 0;
  for (uint32_t j = 0; j < a->ndims; j++) {
    uint32_t z = a->dyn[j] - 1;
    uint64_t others = a->dyn[j] ? k->run_from[z] & ~me : 0;
    if (others && k->run_size[z] != shape[j])
      return wv_error(k->ctx, D_INVALID, at,
                      "argument '%s': dimension %u ('%s') is %lld, the shape "
                      "of '%s' gave %lld",
                      a->name, j, p->sizes.v[z].name, (long long)shape[j],
                      p->args.v[__builtin_ctzll(others)].name,
                      (long long)k->run_size[z]);
  }
  for (uint32_t j = 0; j < a->ndims; j++)
    if (a->dyn[j]) {
      k->run_size[a->dyn[j] - 1] = shape[j];
      k->run_from[a->dyn[j] - 1] |= me;
    }
  return WAVEC_OK;
}

wavec_status wavec_arg_keep(wavec_kernel *pk, size_t i, int keep) {
  if (!pk)
    return WAVEC_ERR_INVALID;
  wv_kernel *k = &pk->k;
  wavec_status st = compiled_arg(k, i);
  if (st != WAVEC_OK)
    return st;
  if (i >= 64)
    return wv_error(k->ctx, D_INVALID, k->loc,
                    "kernel '%s': wavec_arg_keep takes arguments 0 to 63, "
                    "not %zu", k->name, i);
  k->arg_keep = keep ? k->arg_keep | 1ull << i : k->arg_keep & ~(1ull << i);
  return WAVEC_OK;
}

int wavec_arg_dim_is_dynamic(wavec_kernel *pk, size_t i, size_t d) {
  const tir_prog *p = pk ? pk->k.tir : NULL;
  return p && i < p->args.n && d < p->args.v[i].ndims &&
         p->args.v[i].dyn[d] != 0;
}

const char *wavec_arg_dim_name(wavec_kernel *pk, size_t i, size_t d) {
  if (!wavec_arg_dim_is_dynamic(pk, i, d))
    return NULL;
  const tir_prog *p = pk->k.tir;
  return p->sizes.v[p->args.v[i].dyn[d] - 1].name;
}

size_t wavec_tensor_map_count(wavec_kernel *pk) {
  return pk && pk->k.tir ? pk->k.tir->tmaps.n : 0;
}

int wavec_tensor_map_info_get(wavec_kernel *pk, size_t i,
                              wavec_tensor_map_info *out) {
  if (!pk || !pk->k.tir || i >= pk->k.tir->tmaps.n || !out)
    return -1;
  const tir_tmap *m = &pk->k.tir->tmaps.v[i];
  memset(out, 0, sizeof *out);
  out->arg = m->arg;
  out->ndims = m->rank;
  for (uint32_t d = 0; d < m->rank; d++)
    out->box[d] = (uint32_t)m->box[d];
  out->swizzle = (int)m->swz;
  return 0;
}

int64_t tir_int_of(tir_ty ty, double x) {
  if (ty == TY_PRED)
    return x != 0; /* NaN too, as x != 0 holds for it */
  double lo = ty == TY_I8 ? -128 : INT32_MIN;
  double hi = ty == TY_I8 ? 127 : INT32_MAX;
  return isnan(x)  ? 0
         : x <= lo ? (int64_t)lo
         : x >= hi ? (int64_t)hi
                   : (int64_t)nearbyint(x);
}
