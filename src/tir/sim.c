/* The simulator: runs a thread program on every thread of every workgroup,
 * a wave at a time in lockstep, waves interleaved at barriers. Besides
 * computing, it checks what a GPU would not tell you, each report naming the
 * source line of the instruction:
 *  - out-of-bounds global and shared accesses;
 *  - reads of memory or registers nothing wrote (outputs start unwritten);
 *  - shared-memory races: a location written by one thread and touched by
 *    another with no barrier between (same-value writes of copies excepted);
 *  - conflicting global writes: two threads storing different values to one
 *    element in one launch;
 *  - barriers not reached by every wave;
 *  - asynchronous copies: their bytes touched before a wait retires them,
 *    or never waited for;
 *  - wgmmas: their accumulator registers touched, or a barrier reached,
 *    before a wait retires them; a wgmma never waited for;
 *  - clusters (tir_prog.cluster): the workgroups of a cluster run together
 *    (run_cluster), and their arrivals and multicast tensor copies at each
 *    other's mbarriers and shared memory are checked as sim_async.c says;
 *  - outputs not fully written when the kernel ends.
 * Its memories and their checks are sim_mem.c's; mbarriers, tensor copies
 * and clusters' sim_async.c's; the mma arithmetic sim_mma.c's. */
#include <math.h>

#include "support/half.h"
#include "target/target.h"
#include "tir/sim.h"

/* Fails with diagnostic id at the instruction's source line, naming the
 * thread and workgroup. */
_Noreturn void sim_report(sim *s, const tir_instr *in, uint32_t w, int l,
                          wv_diag_id id, const char *fmt, ...) {
  wv_buf m;
  wv_buf_init(&m, s->ctx);
  va_list ap;
  va_start(ap, fmt);
  wv_buf_vprintf(&m, fmt, ap);
  va_end(ap);
  int64_t t = (int64_t)w * s->lanes + l;
  wv_buf_printf(&m, " (thread %lld of workgroup (%lld, %lld, %lld))",
                (long long)t, (long long)s->wg[0], (long long)s->wg[1],
                (long long)s->wg[2]);
  wv_fail(s->ctx, id, in->loc, "%s", wv_buf_str(&m));
}

static int64_t floordiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

static val rd(sim *s, const tir_instr *in, uint32_t w, uint32_t r, int l) {
  if (RSET(s, w, r, l) != REG_SET) {
    if (RSET(s, w, r, l) == REG_UNSET)
      sim_report(s, in, w, l, D_SIM_UNINIT,
             "register r%u is read before it is written", r);
    sim_report(s, in, w, l, D_SIM_ASYNC,
           "register r%u is read while a wgmma writing it is in flight (no "
           "wait retired it)",
           r);
  }
  return R(s, w, r, l);
}

val sim_rd(sim *s, const tir_instr *in, uint32_t w, uint32_t r, int l) {
  return rd(s, in, w, r, l);
}

static void wr(sim *s, uint32_t w, uint32_t r, int l, val v) {
  R(s, w, r, l) = v;
  RSET(s, w, r, l) = REG_SET;
}

void sim_wr(sim *s, uint32_t w, uint32_t r, int l, val v) {
  wr(s, w, r, l, v);
}

static int64_t sreg(sim *s, uint32_t w, int l, int64_t which) {
  int64_t t = (int64_t)w * s->lanes + l;
  const int64_t *b = s->p->block;
  switch (which) {
  case TIR_SREG_TID_X: return t % b[0];
  case TIR_SREG_TID_Y: return (t / b[0]) % b[1];
  case TIR_SREG_TID_Z: return t / (b[0] * b[1]);
  default: return s->wg[which - TIR_SREG_CTAID_X];
  }
}

static double fop(tir_op op, double a, double b) {
  switch (op) {
  case T_ADD: return a + b;
  case T_SUB: return a - b;
  case T_MUL: return a * b;
  case T_DIV: return a / b;
  case T_MIN: return isnan(a) || isnan(b) ? NAN : a < b ? a : b;
  case T_MAX: return isnan(a) || isnan(b) ? NAN : a > b ? a : b;
  case T_NEG: return -a;
  case T_ABS: return fabs(a);
  case T_EXP2: { /* results below the least normal f32 flush to zero */
    double r = exp2(a);
    return r < 0x1p-126 ? 0.0 : r;
  }
  case T_EXP: return exp(a);
  case T_LOG2: return log2(a);
  case T_RCP: return 1.0 / a;
  case T_SQRT: return sqrt(a);
  case T_RSQRT: return 1.0 / sqrt(a);
  case T_TANH: return tanh(a);
  default: return NAN;
  }
}

static bool cmp(int64_t c, double a, double b) {
  switch (c) {
  case TIR_CMP_GT: return a > b;
  case TIR_CMP_LT: return a < b;
  case TIR_CMP_GE: return a >= b;
  case TIR_CMP_LE: return a <= b;
  case TIR_CMP_EQ: return a == b;
  default: return a != b;
  }
}

/* cmp on integers, exactly (i64 values past 2^53 included). */
static bool icmp(int64_t c, int64_t a, int64_t b) {
  switch (c) {
  case TIR_CMP_GT: return a > b;
  case TIR_CMP_LT: return a < b;
  case TIR_CMP_GE: return a >= b;
  case TIR_CMP_LE: return a <= b;
  case TIR_CMP_EQ: return a == b;
  default: return a != b;
  }
}

/* Register r of wave w, which tir.h has the same in every lane; where it
 * is not, an internal error saying `differs`. */
int64_t sim_uniform(sim *s, const tir_instr *in, uint32_t w, uint32_t r,
                    const char *differs) {
  int64_t v = rd(s, in, w, r, 0).i;
  for (int l = 1; l < s->lanes; l++)
    if (rd(s, in, w, r, l).i != v)
      sim_report(s, in, w, l, D_INTERNAL, "%s", differs);
  return v;
}

/* A loop bound in register r: the same in every lane (control flow is
 * uniform), within [0, imm] (the most trips). */
static int64_t loop_bound(sim *s, const tir_instr *in, uint32_t w, uint32_t r) {
  int64_t v = rd(s, in, w, r, 0).i;
  for (int l = 1; l < s->lanes; l++)
    if (rd(s, in, w, r, l).i != v)
      wv_fail(s->ctx, D_INTERNAL, in->loc, "simulator: a loop bound differs "
              "between the lanes of a wave");
  if (v < 0 || v > in->imm)
    wv_fail(s->ctx, D_INTERNAL, in->loc, "simulator: loop bound %lld is "
            "outside [0, %lld]", (long long)v, (long long)in->imm);
  return v;
}

/* No instruction but a wgmma writes a register a wgmma in flight holds
 * (reads are checked by rd). */
static void check_not_in_flight(sim *s, const tir_instr *in, uint32_t w) {
  for (uint32_t e = 0; e <= in->nlist; e++) {
    uint32_t r = e < in->nlist ? in->list[e] : in->dst;
    if (r && RSET(s, w, r, 0) == REG_WGMMA)
      sim_report(s, in, w, 0, D_SIM_ASYNC,
             "register r%u is written while a wgmma that uses it is in "
             "flight (no wait retired it)",
             r);
  }
}

/* ---- one instruction ---------------------------------------------------------
 *
 * Values: an op that computes one value per lane from that lane's registers
 * is a lane function (lane_value); exec_value runs it for every lane, in
 * lane order, and writes dst. Every other op runs for the whole wave at
 * once (exec), its lanes in order too, so that the first error found is
 * the same whatever the op. */

typedef val lane_fn(sim *s, const tir_instr *in, uint32_t w, int l);

static val lane_const(sim *s, const tir_instr *in, uint32_t w, int l) {
  val r = {0};
  if (is_float(in->ty))
    r.f = sim_round_to(in->ty, in->fimm);
  else
    r.i = in->imm;
  return r;
}

static val lane_sreg(sim *s, const tir_instr *in, uint32_t w, int l) {
  return (val){.i = sreg(s, w, l, in->imm)};
}

/* a run-time size (the instance's) */
static val lane_param(sim *s, const tir_instr *in, uint32_t w, int l) {
  return (val){.i = s->p->size_vals[in->imm]};
}

static val lane_mov(sim *s, const tir_instr *in, uint32_t w, int l) {
  return rd(s, in, w, in->a, l);
}

static val lane_setp(sim *s, const tir_instr *in, uint32_t w, int l) {
  tir_ty at = s->p->regs.v[in->a];
  val a = rd(s, in, w, in->a, l), b = rd(s, in, w, in->b, l);
  return (val){.i = is_float(at) ? cmp(in->imm, a.f, b.f)
                                 : icmp(in->imm, a.i, b.i)};
}

static val lane_and(sim *s, const tir_instr *in, uint32_t w, int l) {
  return (val){.i = rd(s, in, w, in->a, l).i && rd(s, in, w, in->b, l).i};
}

static val lane_selp(sim *s, const tir_instr *in, uint32_t w, int l) {
  return rd(s, in, w, in->a, l).i ? rd(s, in, w, in->b, l)
                                  : rd(s, in, w, in->c, l);
}

/* An integer register's value: the low `bits` bits of x, two's complement
 * (as the GPU's registers hold it). */
static int64_t wrap_to(int bits, int64_t x) {
  return bits == 32 ? (int64_t)(int32_t)(uint32_t)x : x;
}

static val lane_cvt(sim *s, const tir_instr *in, uint32_t w, int l) {
  tir_ty at = s->p->regs.v[in->a], ty = in->ty;
  val a = rd(s, in, w, in->a, l), r = {0};
  if (ty == TY_I64 || at == TY_I64) /* i32 <-> i64: extends, truncates */
    return (val){.i = wrap_to(ty == TY_I64 ? 64 : 32, a.i)};
  double x = is_float(at) ? a.f : (double)a.i;
  if (is_float(ty))
    r.f = sim_round_to(ty, x);
  else
    r.i = tir_int_of(ty, x);
  return r;
}

static val lane_ldg(sim *s, const tir_instr *in, uint32_t w, int l) {
  if (in->b && !rd(s, in, w, in->b, l).i) { /* the fill */
    if (is_float(in->ty))
      return (val){.f = sim_round_to(in->ty, in->fimm)};
    return (val){.i = in->ty == TY_PRED ? in->fimm != 0 : (int64_t)in->fimm};
  }
  return sim_ldg(s, in, w, l, in->ty, rd(s, in, w, in->a, l).i);
}

static val lane_lds(sim *s, const tir_instr *in, uint32_t w, int l) {
  return sim_shared_access(s, in, w, l, in->ty, rd(s, in, w, in->a, l).i, NULL);
}

/* Integer arithmetic (floor division and modulus, tir.h), modulo 2^64;
 * lane_arith keeps the low 32 bits of an i32 result. */
static int64_t int_op(sim *s, const tir_instr *in, uint32_t w, int l,
                      int64_t a, int64_t b) {
  uint64_t ua = (uint64_t)a, ub = (uint64_t)b;
  switch (in->op) {
  case T_ADD: return (int64_t)(ua + ub);
  case T_SUB: return (int64_t)(ua - ub);
  case T_MUL: return (int64_t)(ua * ub);
  case T_DIV:
  case T_MOD:
  case T_TDIV:
  case T_TREM:
    if (b == 0)
      sim_report(s, in, w, l, D_SIM_OOB, "integer division by zero");
    if (b == -1) /* a / -1 is -a (wrapping), the remainder 0 */
      return in->op == T_DIV || in->op == T_TDIV ? (int64_t)(0 - ua) : 0;
    if (in->op == T_DIV || in->op == T_MOD)
      return in->op == T_DIV ? floordiv(a, b) : a - floordiv(a, b) * b;
    return in->op == T_TDIV ? a / b : a % b; /* C truncates */
  case T_MIN: return a < b ? a : b;
  case T_MAX: return a > b ? a : b;
  case T_SHR:
    if (b < 0 || b > 31)
      sim_report(s, in, w, l, D_SIM_OOB, "a shift by %lld", (long long)b);
    return (int64_t)((uint32_t)ua >> (b & 31));
  case T_NEG: return (int64_t)(0 - ua);
  case T_ABS: return a < 0 ? (int64_t)(0 - ua) : a;
  case T_SWZ: return tir_swz(a, in->imm);
  default:
    wv_fail(s->ctx, D_INTERNAL, in->loc, "simulator: no integer %s", "op");
  }
}

/* Arithmetic: floats computed exactly (fop) and rounded once to the
 * register's type; everything else as integers, an i32 result wrapped to
 * 32 bits as PTX's .s32 ops leave it, an i64 one modulo 2^64 as .s64 ops
 * (int_op computes modulo 2^64). */
static val lane_arith(sim *s, const tir_instr *in, uint32_t w, int l) {
  val a = in->a ? rd(s, in, w, in->a, l) : (val){0};
  val b = in->b ? rd(s, in, w, in->b, l) : (val){0};
  if (is_float(in->ty))
    return (val){.f = sim_round_to(in->ty, fop(in->op, a.f, b.f))};
  int64_t r = int_op(s, in, w, l, a.i, b.i);
  return (val){.i = in->ty == TY_I32 ? wrap_to(32, r) : r};
}

/* a * b + c rounded once (f32 registers only: tir_verify) */
static val lane_fma(sim *s, const tir_instr *in, uint32_t w, int l) {
  float a = (float)rd(s, in, w, in->a, l).f, b = (float)rd(s, in, w, in->b, l).f;
  return (val){.f = fmaf(a, b, (float)rd(s, in, w, in->c, l).f)};
}

static lane_fn *const lane_value[T__COUNT] = {
    [T_CONST] = lane_const, [T_SREG] = lane_sreg,   [T_MOV] = lane_mov,
    [T_PARAM] = lane_param,
    [T_ADD] = lane_arith,   [T_SUB] = lane_arith,   [T_MUL] = lane_arith,
    [T_FMA] = lane_fma,
    [T_DIV] = lane_arith,   [T_MOD] = lane_arith,   [T_TDIV] = lane_arith,
    [T_TREM] = lane_arith,  [T_SHR] = lane_arith,   [T_MIN] = lane_arith,   [T_MAX] = lane_arith,
    [T_NEG] = lane_arith,   [T_ABS] = lane_arith,   [T_EXP2] = lane_arith,
    [T_EXP] = lane_arith,   [T_LOG2] = lane_arith,  [T_RCP] = lane_arith,
    [T_SQRT] = lane_arith,  [T_RSQRT] = lane_arith, [T_TANH] = lane_arith,
    [T_SWZ] = lane_arith,   [T_SETP] = lane_setp,   [T_AND] = lane_and,
    [T_SELP] = lane_selp,   [T_CVT] = lane_cvt,     [T_LDG] = lane_ldg,
    [T_LDS] = lane_lds};

/* An op run for the whole wave; false when the wave stops before the next
 * instruction (a barrier, or an mbarrier wait whose phase has not
 * completed). */
typedef bool exec_fn(sim *s, const tir_instr *in, uint32_t w);

static bool exec_value(sim *s, const tir_instr *in, uint32_t w) {
  lane_fn *f = lane_value[in->op];
  for (int l = 0; l < s->lanes; l++)
    wr(s, w, in->dst, l, f(s, in, w, l));
  return true;
}

static bool exec_stg(sim *s, const tir_instr *in, uint32_t w) {
  for (int l = 0; l < s->lanes; l++)
    if (!in->c || rd(s, in, w, in->c, l).i)
      sim_stg(s, in, w, l, in->ty, rd(s, in, w, in->a, l).i,
          rd(s, in, w, in->b, l));
  return true;
}

static bool exec_redg(sim *s, const tir_instr *in, uint32_t w) {
  for (int l = 0; l < s->lanes; l++) {
    if (in->c && !rd(s, in, w, in->c, l).i)
      continue;
    int64_t a = rd(s, in, w, in->a, l).i;
    if (!in->nlist) {
      sim_redg(s, in, w, l, a, rd(s, in, w, in->b, l).f);
      continue;
    }
    if (a % in->nlist)
      sim_report(s, in, w, l, D_SIM_OOB,
                 "misaligned vector add to '%s': element %lld is not a "
                 "multiple of %u",
                 s->p->args.v[in->imm].name, (long long)a, in->nlist);
    for (uint32_t j = 0; j < in->nlist; j++)
      sim_redg(s, in, w, l, a + j, rd(s, in, w, in->list[j], l).f);
  }
  return true;
}

static bool exec_sts(sim *s, const tir_instr *in, uint32_t w) {
  for (int l = 0; l < s->lanes; l++) {
    if (in->c && !rd(s, in, w, in->c, l).i)
      continue;
    val v = rd(s, in, w, in->b, l);
    sim_shared_access(s, in, w, l, in->ty, rd(s, in, w, in->a, l).i, &v);
  }
  return true;
}

static bool exec_cpa(sim *s, const tir_instr *in, uint32_t w) {
  for (int l = 0; l < s->lanes; l++)
    if (!in->c || rd(s, in, w, in->c, l).i)
      sim_copy_issue(s, in, w, l, rd(s, in, w, in->a, l).i,
                 rd(s, in, w, in->b, l).i,
                 in->nlist && !rd(s, in, w, in->list[0], l).i);
  return true;
}

/* T_LDGV, T_LDSV, T_STSV, T_STGV: n consecutive elements, the whole vector
 * aligned to its size. */
static bool exec_vector(sim *s, const tir_instr *in, uint32_t w) {
  tir_ty ty = in->ty;
  int64_t size = tir_ty_bytes(ty), n = in->nlist;
  bool global = in->op == T_LDGV || in->op == T_STGV;
  for (int l = 0; l < s->lanes; l++) {
    int64_t a = rd(s, in, w, in->a, l).i;
    int64_t bytes = global ? a * size : a;
    bool on = in->op == T_LDSV || !in->b || rd(s, in, w, in->b, l).i;
    if (!on && in->op != T_LDGV)
      continue;
    if (bytes % (size * n) != 0)
      sim_report(s, in, w, l, D_SIM_OOB,
                 "misaligned %lld-byte vector access at byte %lld",
                 (long long)(size * n), (long long)bytes);
    for (int64_t j = 0; j < n; j++) {
      if (in->op == T_LDGV) {
        wr(s, w, in->list[j], l, on ? sim_ldg(s, in, w, l, ty, a + j) : (val){0});
      } else if (in->op == T_LDSV) {
        wr(s, w, in->list[j], l,
           sim_shared_access(s, in, w, l, ty, a + j * size, NULL));
      } else if (in->op == T_STGV) {
        sim_stg(s, in, w, l, ty, a + j, rd(s, in, w, in->list[j], l));
      } else {
        val v = rd(s, in, w, in->list[j], l);
        sim_shared_access(s, in, w, l, ty, a + j * size, &v);
      }
    }
  }
  return true;
}

/* T_LDSM, T_LDSMT: per warp of the wave, each lane reads two elements of
 * each matrix from row addresses other lanes of its warp supply (read all
 * before writing any): plain, its row l/4 at columns 2(l%4), +1;
 * transposed, rows 2(l%4), +1 at column l/4 (l its lane in the warp). */
static bool exec_ldsm(sim *s, const tir_instr *in, uint32_t w) {
  int L = s->lanes;
  bool tr = in->op == T_LDSMT;
  for (int lw = 0; lw < L; lw++)
    for (int64_t j = 0; j < in->imm; j++)
      for (int h = 0; h < 2; h++) {
        int l = lw % 32;
        int src = lw - l + (int)(8 * j + (tr ? 2 * (l % 4) + h : l / 4));
        int64_t row = rd(s, in, w, in->a, src).i;
        int64_t col = tr ? 2 * (l / 4) : 4 * (l % 4) + 2 * h;
        s->tmp[(2 * j + h) * L + lw] =
            sim_shared_access(s, in, w, lw, in->ty, row + col, NULL);
      }
  for (int l = 0; l < L; l++)
    for (uint32_t k = 0; k < in->nlist; k++)
      wr(s, w, in->list[k], l, s->tmp[k * L + l]);
  return true;
}

static bool exec_shfl(sim *s, const tir_instr *in, uint32_t w) {
  for (int l = 0; l < s->lanes; l++)
    s->tmp[l] = rd(s, in, w, in->a, l ^ (int)in->imm);
  for (int l = 0; l < s->lanes; l++)
    wr(s, w, in->dst, l, s->tmp[l]);
  return true;
}

static bool exec_mma(sim *s, const tir_instr *in, uint32_t w) {
  sim_mma(s, in, w);
  return true;
}

static bool exec_wgmma(sim *s, const tir_instr *in, uint32_t w) {
  sim_wgmma(s, in, w);
  return true;
}

static bool exec_wgwait(sim *s, const tir_instr *in, uint32_t w) {
  sim_wgmma_wait(s, w, in->imm);
  return true;
}

static bool exec_wgcommit(sim *s, const tir_instr *in, uint32_t w) {
  sim_wgmma_close(s, w);
  return true;
}

static bool exec_cpcommit(sim *s, const tir_instr *in, uint32_t w) {
  s->groups[w]++;
  return true;
}

static bool exec_cpwait(sim *s, const tir_instr *in, uint32_t w) {
  sim_copy_wait(s, w, in->imm);
  return true;
}

static bool exec_async(sim *s, const tir_instr *in, uint32_t w) {
  sim_async_exec(s, in, w);
  return true;
}

static bool exec_mbwait(sim *s, const tir_instr *in, uint32_t w) {
  if (sim_async_wait(s, in, w))
    return true;
  swave *wv = &s->waves[w];
  wv->pc--; /* tried again when another wave has moved */
  wv->steps--;
  wv->blocked = true;
  return false;
}

static bool exec_bar(sim *s, const tir_instr *in, uint32_t w) {
  s->waves[w].at_barrier = true;
  return false;
}

/* T_CLUSTERBAR: the wave waits until every wave of the cluster is there
 * (release_cluster). */
static bool exec_clusterbar(sim *s, const tir_instr *in, uint32_t w) {
  s->waves[w].at_cluster = true;
  return false;
}

/* A branch's predicate: the same in every lane of the wave (tir.h). */
static bool exec_if(sim *s, const tir_instr *in, uint32_t w) {
  int64_t v = sim_uniform(s, in, w, in->a, "a branch's predicate "
                      "differs between the lanes of a wave");
  if (!v)
    s->waves[w].pc = in->match + 1;
  return true;
}

static bool exec_endif(sim *s, const tir_instr *in, uint32_t w) {
  return true;
}

/* A turn's barrier id (tir.h: uniform across the wave, 2 to 15). */
static int turn_id(sim *s, const tir_instr *in, uint32_t w) {
  int64_t id = sim_uniform(s, in, w, in->a, "a turn's barrier differs "
                       "between the lanes of a wave");
  if (id < 2 || id > 15)
    sim_report(s, in, w, 0, D_INTERNAL, "a turn at barrier %lld: turns take "
               "the named barriers 2 to 15", (long long)id);
  return (int)id;
}

/* T_TURNWAIT: the wave waits until the barrier's thread count is made up
 * (release_turns); nothing about memory follows from it. */
static bool exec_turnwait(sim *s, const tir_instr *in, uint32_t w) {
  s->waves[w].turn_bar = turn_id(s, in, w);
  s->waves[w].at_turn = s->waves[w].turns = true;
  return false;
}

/* T_TURNPASS: the wave's threads count at the barrier and it goes on. Its
 * passes making up the count alone would complete the barrier with no
 * wave waiting: the turns no longer alternate. */
static bool exec_turnpass(sim *s, const tir_instr *in, uint32_t w) {
  s->waves[w].turns = true;
  if (in->b && !sim_uniform(s, in, w, in->b, "a turn's predicate differs "
                               "between the lanes of a wave"))
    return true;
  int id = turn_id(s, in, w);
  s->turn_passed[id] += s->lanes;
  s->turn_last[id] = in;
  if (s->turn_passed[id] >= in->imm2)
    sim_report(s, in, w, 0, D_SIM_BARRIER, "turn barrier %d of %lld threads "
               "is passed by %lld threads with none waiting: a wave passed "
               "the turn again before the wave waiting for it took it",
               id, (long long)in->imm2, (long long)s->turn_passed[id]);
  return true;
}

/* The wave ends (run_wave checks what it leaves in flight). */
static bool exec_exit(sim *s, const tir_instr *in, uint32_t w) {
  s->waves[w].pc = s->p->code.n;
  return true;
}

/* setmaxnreg (tir.h, T_REGINC / T_REGDEC), as the PTX ISA states it: a
 * count of 24 to 256 in steps of 8, above (inc) or below (dec) what the
 * wave holds, the same sequence in every warp of a warpgroup; the
 * registers come from and go back to the workgroup's pool, which holds
 * what the launch gave it (tir_prog.maxnreg per thread) and nothing more:
 * an inc waits until the pool can serve it (a wait that may never end). */
static bool exec_setmaxnreg(sim *s, const tir_instr *in, uint32_t w) {
  swave *wv = &s->waves[w];
  bool inc = in->op == T_REGINC;
  int64_t want = in->imm, have = wv->regs;
  if (!s->p->maxnreg)
    sim_report(s, in, w, 0, D_SIM_REGS, "setmaxnreg in a kernel whose "
               "registers per thread at entry are not fixed (.maxnreg): "
               "ptxas ignores it");
  if (want % 8 || want < 24 || want > 256)
    sim_report(s, in, w, 0, D_SIM_REGS, "setmaxnreg to %lld registers: the "
               "count must be a multiple of 8 from 24 to 256",
               (long long)want);
  if (inc ? want < have : want > have)
    sim_report(s, in, w, 0, D_SIM_REGS, "setmaxnreg.%s to %lld registers "
               "per thread, which this warp %s (it holds %lld)",
               inc ? "inc" : "dec", (long long)want,
               inc ? "exceeds already" : "does not reach",
               (long long)have);
  int64_t need = (want - have) * s->lanes;
  if (inc && need > s->reg_free) {
    wv->pc--; /* tried again when another wave has given some back */
    wv->steps--;
    wv->regs_blocked = true;
    return false;
  }
  /* every warp of the warpgroup runs the same sequence */
  uint32_t per = s->lanes < 128 ? (uint32_t)(128 / s->lanes) : 1;
  for (uint32_t v = w - w % per; v < w - w % per + per && v < s->nwaves; v++) {
    const swave *o = &s->waves[v];
    if (v != w && o->regops.n > wv->regops.n &&
        o->regops.v[wv->regops.n] != (inc ? want : -want))
      sim_report(s, in, w, 0, D_SIM_REGS, "setmaxnreg differs between the "
                 "warps of a warpgroup (wave %u ran another)", v);
  }
  vec_push(s->ctx, &wv->regops, inc ? want : -want);
  s->reg_free -= need;
  wv->regs = want;
  return true;
}

/* Sets the loop counter dst to c in every lane; then T_LOOP (`enter`)
 * skips the body when c is not below the bound, and T_ENDLOOP goes back to
 * the body's first instruction while c is below it. */
static void loop_step(sim *s, const tir_instr *in, uint32_t w, int64_t c,
                      bool enter) {
  for (int l = 0; l < s->lanes; l++)
    wr(s, w, in->dst, l, (val){.i = c});
  int64_t bound = in->b ? loop_bound(s, in, w, in->b) : in->imm;
  if (enter ? c >= bound : c < bound)
    s->waves[w].pc = in->match + 1;
}

static bool exec_loop(sim *s, const tir_instr *in, uint32_t w) {
  loop_step(s, in, w, in->a ? loop_bound(s, in, w, in->a) : 0, true);
  return true;
}

static bool exec_endloop(sim *s, const tir_instr *in, uint32_t w) {
  loop_step(s, in, w, R(s, w, in->dst, 0).i + 1, false);
  return true;
}

static exec_fn *const exec[T__COUNT] = {
    [T_CONST] = exec_value,     [T_SREG] = exec_value,
    [T_PARAM] = exec_value,
    [T_MOV] = exec_value,       [T_ADD] = exec_value,
    [T_SUB] = exec_value,       [T_MUL] = exec_value,
    [T_FMA] = exec_value,
    [T_DIV] = exec_value,       [T_MOD] = exec_value,
    [T_TDIV] = exec_value,      [T_TREM] = exec_value,
    [T_SHR] = exec_value,
    [T_MIN] = exec_value,       [T_MAX] = exec_value,
    [T_NEG] = exec_value,       [T_ABS] = exec_value,
    [T_EXP2] = exec_value,      [T_EXP] = exec_value,
    [T_LOG2] = exec_value,      [T_RCP] = exec_value,
    [T_SQRT] = exec_value,      [T_RSQRT] = exec_value,
    [T_TANH] = exec_value,      [T_SETP] = exec_value,
    [T_AND] = exec_value,       [T_SELP] = exec_value,
    [T_CVT] = exec_value,       [T_LDG] = exec_value,
    [T_STG] = exec_stg,         [T_LDS] = exec_value,
    [T_STS] = exec_sts,         [T_LDGV] = exec_vector,
    [T_LDSV] = exec_vector,     [T_STSV] = exec_vector,
    [T_STGV] = exec_vector,     [T_REDG] = exec_redg,
    [T_LDSM] = exec_ldsm,       [T_LDSMT] = exec_ldsm,
    [T_CPA] = exec_cpa,         [T_CPCOMMIT] = exec_cpcommit,
    [T_CPWAIT] = exec_cpwait,   [T_SWZ] = exec_value,
    [T_WGMMA] = exec_wgmma,     [T_WGWAIT] = exec_wgwait,
    [T_WGCOMMIT] = exec_wgcommit,
    [T_BAR] = exec_bar,         [T_IF] = exec_if,
    [T_CLUSTERBAR] = exec_clusterbar,
    [T_TURNWAIT] = exec_turnwait, [T_TURNPASS] = exec_turnpass,
    [T_ENDIF] = exec_endif,     [T_EXIT] = exec_exit,
    [T_REGINC] = exec_setmaxnreg,
    [T_REGDEC] = exec_setmaxnreg, [T_MBINIT] = exec_async,
    [T_MBARRIVE] = exec_async,  [T_MBWAIT] = exec_mbwait,
    [T_TMA] = exec_async,       [T_FENCE] = exec_async,
    [T_TMAST] = exec_async,     [T_BULKCOMMIT] = exec_async,
    [T_BULKWAIT] = exec_async,  [T_BULKWAITR] = exec_async,
    [T_FENCEPX] = exec_async,
    [T_SHFL] = exec_shfl,       [T_MMA] = exec_mma,
    [T_LOOP] = exec_loop,       [T_ENDLOOP] = exec_endloop};

/* The step budget ran out at instruction pc of wave w: fails at the
 * innermost loop around it (a loop that runs too long is the likely
 * cause), else at the instruction. */
static _Noreturn void over_budget(sim *s, uint32_t w, uint32_t pc) {
  const tir_instr *at = &s->p->code.v[pc];
  for (uint32_t i = 0; i < pc; i++) {
    const tir_instr *in = &s->p->code.v[i];
    if (in->op == T_LOOP && in->match >= pc)
      at = in; /* later loops that hold pc are nested in earlier ones */
  }
  sim_report(s, at, w, 0, D_SIM_BUDGET,
             "the simulation ran past its budget of %llu steps (instructions "
             "of a wave) %s; raise it with --max-steps N "
             "(wavec_options.max_steps)",
             (unsigned long long)s->max_steps,
             at->op == T_LOOP ? "in this loop" : "here");
}

/* Runs wave w until a barrier, an mbarrier wait that cannot complete yet,
 * or its end. */
static void run_wave(sim *s, uint32_t w) {
  const tir_prog *p = s->p;
  swave *wv = &s->waves[w];
  while (wv->pc < p->code.n) {
    if (++s->steps > s->max_steps)
      over_budget(s, w, wv->pc);
    const tir_instr *in = &p->code.v[wv->pc++];
    wv->steps++;
    if (s->wpend[w].n && in->op != T_WGMMA)
      check_not_in_flight(s, in, w);
    wv_assert(s->ctx, exec[in->op]);
    if (!exec[in->op](s, in, w))
      return;
  }
  wv_assert(s->ctx, wv->pc == p->code.n);
  if (s->wpend[w].n)
    sim_report(s, &p->code.v[p->code.n - 1], w, 0, D_SIM_ASYNC,
               "a wgmma is never waited for");
  wv->done = true;
}

/* At the end of a workgroup: every warp of a warpgroup ran as many
 * setmaxnreg as the others (exec_setmaxnreg compared their counts). */
static void check_regops(sim *s) {
  uint32_t per = s->lanes < 128 ? (uint32_t)(128 / s->lanes) : 1;
  for (uint32_t w = 0; w < s->nwaves; w++) {
    const swave *o = &s->waves[w - w % per];
    if (s->waves[w].regops.n != o->regops.n)
      sim_report(s, &s->p->code.v[s->p->code.n - 1], w, 0, D_SIM_REGS,
                 "setmaxnreg: wave %u ran %u of them, wave %u of its "
                 "warpgroup %u", w, s->waves[w].regops.n, w - w % per,
                 o->regops.n);
  }
}

/* The waves barrier instruction `in` waits for: those of its thread
 * count, or every wave. */
static uint32_t bar_waves(const sim *s, const tir_instr *in) {
  return in->imm2 ? (uint32_t)(in->imm2 / s->lanes) : s->nwaves;
}

/* Lets the waves through every barrier all its waves have reached (a new
 * epoch for the race checks; their mbarrier clocks joined); true if any
 * went through. The epoch is the workgroup's: a named barrier that some
 * waves do not reach orders only those that do, so the waves outside it
 * must make no ordinary shared-memory access (a producer warpgroup makes
 * none), which is checked. */
static bool release_barriers(sim *s) {
  bool any = false;
  bool *who = wv_alloc(s->ctx, s->nwaves * sizeof *who);
  for (uint32_t w = 0; w < s->nwaves; w++) {
    if (!s->waves[w].at_barrier)
      continue;
    const tir_instr *in = &s->p->code.v[s->waves[w].pc - 1];
    uint32_t want = bar_waves(s, in), have = 0;
    for (uint32_t v = 0; v < s->nwaves; v++) {
      const swave *o = &s->waves[v];
      const tir_instr *at = o->at_barrier ? &s->p->code.v[o->pc - 1] : NULL;
      who[v] = at && at->imm == in->imm;
      if (who[v] && at->imm2 != in->imm2)
        sim_report(s, at, v, 0, D_SIM_BARRIER, "barrier %lld counts %lld "
                   "threads here and %lld at wave %u",
                   (long long)in->imm, (long long)at->imm2,
                   (long long)in->imm2, w);
      have += who[v];
    }
    if (have < want)
      continue;
    if (have > want)
      sim_report(s, in, w, 0, D_SIM_BARRIER, "barrier %lld reached by %u "
                 "waves, more than the %u its thread count admits",
                 (long long)in->imm, have, want);
    for (uint32_t v = 0; v < s->nwaves; v++)
      if (!who[v] && s->waves[v].smem_touched && want < s->nwaves)
        sim_report(s, in, w, 0, D_INTERNAL, "simulator: wave %u touches "
                   "shared memory and is not at named barrier %lld: the race "
                   "checks cannot order it", v, (long long)in->imm);
    s->epoch++;
    for (uint32_t v = 0; v < s->nwaves; v++)
      if (who[v])
        s->pfence_pub[v] = s->pfences[v];
    if (s->as)
      sim_async_barrier(s, who);
    for (uint32_t v = 0; v < s->nwaves; v++)
      if (who[v])
        s->waves[v].at_barrier = false;
    any = true;
  }
  return any;
}

/* Lets the waves through every turn whose thread count the waiting waves
 * and the passes make up; true if any went through. */
static bool release_turns(sim *s) {
  bool any = false;
  for (int id = 2; id < 16; id++) {
    int64_t waiting = 0, want = 0;
    for (uint32_t w = 0; w < s->nwaves; w++) {
      const swave *wv = &s->waves[w];
      if (!wv->at_turn || wv->turn_bar != id)
        continue;
      const tir_instr *at = &s->p->code.v[wv->pc - 1];
      if (want && at->imm2 != want)
        sim_report(s, at, w, 0, D_SIM_BARRIER, "turn barrier %d counts %lld "
                   "threads here and %lld elsewhere", id, (long long)at->imm2,
                   (long long)want);
      want = at->imm2;
      waiting += s->lanes;
    }
    if (!waiting || waiting + s->turn_passed[id] < want)
      continue;
    if (waiting > want)
      sim_report(s, s->turn_last[id] ? s->turn_last[id] : s->p->code.v, 0, 0,
                 D_SIM_BARRIER, "turn barrier %d: %lld threads wait at it, "
                 "more than its count of %lld", id, (long long)waiting,
                 (long long)want);
    s->turn_passed[id] -= want - waiting;
    for (uint32_t w = 0; w < s->nwaves; w++)
      if (s->waves[w].at_turn && s->waves[w].turn_bar == id)
        s->waves[w].at_turn = false;
    any = true;
  }
  return any;
}

/* A wave waits for a turn that can never come: every wave that takes
 * turns and has not ended waits at one (a wave blocked elsewhere, at an
 * mbarrier, is the cause instead). */
static void stuck_turns(sim *s) {
  const swave *first = NULL;
  uint32_t at = 0;
  for (uint32_t w = 0; w < s->nwaves; w++) {
    const swave *wv = &s->waves[w];
    if (!wv->turns || wv->done)
      continue;
    if (!wv->at_turn)
      return;
    if (!first) {
      first = wv;
      at = w;
    }
  }
  if (!first)
    return;
  const tir_instr *in = &s->p->code.v[first->pc - 1];
  int id = first->turn_bar;
  sim_report(s, in, at, 0, D_SIM_DEADLOCK, "this wave waits for its turn at "
             "barrier %d of %lld threads, which no wave can pass to it (every "
             "wave that takes turns waits for one; %lld threads passed it)",
             id, (long long)in->imm2, (long long)s->turn_passed[id]);
}

/* The workgroup ended: every pass was taken by a wait. */
static void turns_end(sim *s) {
  for (int id = 2; id < 16; id++)
    if (s->turn_passed[id])
      sim_report(s, s->turn_last[id], 0, 0, D_SIM_BARRIER, "turn barrier %d "
                 "is passed by %lld threads that no wave waits for by the "
                 "end: the turns do not balance", id,
                 (long long)s->turn_passed[id]);
}

/* No wave can go on: a wave that can never get its registers (first:
 * the others may wait for it). */
static void stuck_regs(sim *s) {
  for (uint32_t w = 0; w < s->nwaves; w++) {
    const swave *wv = &s->waves[w];
    if (wv->regs_blocked)
      sim_report(s, &s->p->code.v[wv->pc], w, 0, D_SIM_DEADLOCK,
                 "this setmaxnreg.inc can never get its registers: the "
                 "workgroup's pool has %lld free, it asks for %lld more per "
                 "thread, and no other wave gives any back",
                 (long long)s->reg_free,
                 (long long)(s->p->code.v[wv->pc].imm - wv->regs));
  }
}

/* No wave can go on: a wave at an mbarrier wait. */
static void stuck_mbar(sim *s) {
  for (uint32_t w = 0; w < s->nwaves; w++)
    if (s->waves[w].blocked)
      sim_async_deadlock(s);
}

/* No wave can go on: a wave at a barrier of the workgroup that not all
 * its waves reach. */
static void stuck_bar(sim *s) {
  uint32_t w = 0;
  while (w < s->nwaves && !s->waves[w].at_barrier)
    w++;
  if (w == s->nwaves)
    return;
  const tir_instr *in = &s->p->code.v[s->waves[w].pc - 1];
  if (!in->imm2)
    sim_report(s, in, w, 0, D_SIM_BARRIER,
               "barrier reached by wave %u but not by all %u waves", w,
               s->nwaves);
  sim_report(s, in, w, 0, D_SIM_BARRIER,
             "barrier %lld reached by wave %u but not by all %u waves its "
             "%lld threads count", (long long)in->imm, w, bar_waves(s, in),
             (long long)in->imm2);
}

/* No wave can go on and some have not ended: reports why, at the
 * instruction one of them waits at. */
_Noreturn static void stuck(sim *s) {
  stuck_regs(s);
  stuck_turns(s);
  stuck_mbar(s);
  /* (waves only at turns are stuck_turns's: every one that takes turns
   * and has not ended waits at one) */
  stuck_bar(s);
  wv_internal(s->ctx, __FILE__, __LINE__, "no wave waits at a barrier");
}

/* Workgroup s (its ids in s->wg) starts. */
static void wg_begin(sim *s) {
  memset(s->rset, 0, (size_t)s->nwaves * s->p->regs.n * s->lanes);
  for (int64_t i = 0; i < s->ngran; i++)
    s->smem[i] = (sshared){0};
  s->epoch = 0;
  s->copies.n = 0;
  s->reg_free = 0; /* the launch gives every wave its share */
  memset(s->turn_passed, 0, sizeof s->turn_passed);
  s->cbar_ep = 0;
  s->ended = false;
  for (uint32_t w = 0; w < s->nwaves; w++) {
    s->waves[w] = (swave){.regs = s->p->maxnreg,
                          .regops = {.v = s->waves[w].regops.v,
                                     .cap = s->waves[w].regops.cap}};
    s->groups[w] = 0;
    s->pfences[w] = s->pfence_pub[w] = 0;
    s->wpend[w].n = 0;
    s->wgroups[w] = 0;
  }
  if (s->as)
    sim_async_reset(s);
}

/* One round of workgroup s: every wave that can go on runs until it
 * stops, then the barriers and turns its waves all reached let them
 * through. True if anything moved; *done, the waves that have ended. */
static bool wg_round(sim *s, uint32_t *done) {
  bool moved = false;
  *done = 0;
  for (uint32_t w = 0; w < s->nwaves; w++) {
    swave *wv = &s->waves[w];
    if (!wv->done && !wv->at_barrier && !wv->at_turn && !wv->at_cluster) {
      uint64_t steps = wv->steps;
      wv->blocked = wv->regs_blocked = false;
      run_wave(s, w);
      moved |= wv->steps != steps || !(wv->blocked || wv->regs_blocked);
    }
    *done += wv->done;
  }
  moved |= release_barriers(s);
  moved |= release_turns(s);
  return moved;
}

/* Every wave of workgroup s has ended: what it leaves behind. */
static void wg_end(sim *s) {
  if (s->as)
    sim_async_end(s);
  if (s->copies.n) {
    scopy *c = &s->copies.v[0];
    sim_report(s, c->in, c->wave, c->lane, D_SIM_ASYNC,
           "asynchronous copy to shared byte %lld is never waited for",
           (long long)c->addr);
  }
  check_regops(s);
  turns_end(s);
  s->ended = true;
}

static void run_workgroup(sim *s) {
  wg_begin(s);
  for (;;) {
    uint32_t done;
    bool moved = wg_round(s, &done);
    if (done == s->nwaves) {
      wg_end(s);
      return;
    }
    if (!moved)
      stuck(s);
  }
}

/* ---- clusters ---------------------------------------------------------------
 *
 * The workgroups of a cluster run together, a round of each in turn (the
 * waves of each as a workgroup's alone), the launch's step count carried
 * from one to the next; a workgroup ends (wg_end) as soon as its waves
 * have. Nothing moving in a round, tensor copies may land in the next
 * (sim_async_wait); nothing moving then either, the cluster is stuck. */

/* Lets every wave of cluster cl through the cluster barrier once all have
 * reached it: a barrier of each workgroup (a new epoch, its clocks and
 * phases seen joined) whose clocks then join across the cluster. */
static bool release_cluster(scluster *cl) {
  for (uint32_t r = 0; r < cl->n; r++)
    for (uint32_t w = 0; w < cl->wg[r].nwaves; w++)
      if (!cl->wg[r].waves[w].at_cluster)
        return false;
  sim *s0 = &cl->wg[0];
  bool *all = wv_alloc(s0->ctx, s0->nwaves * sizeof *all);
  memset(all, 1, s0->nwaves * sizeof *all);
  for (uint32_t r = 0; r < cl->n; r++) {
    sim *s = &cl->wg[r];
    s->epoch++;
    s->cbar_ep = s->epoch; /* (the epoch + 1 it was released in) */
    for (uint32_t w = 0; w < s->nwaves; w++)
      s->pfence_pub[w] = s->pfences[w];
    if (s->as)
      sim_async_barrier(s, all);
    for (uint32_t w = 0; w < s->nwaves; w++)
      s->waves[w].at_cluster = false;
  }
  if (s0->as)
    sim_async_cluster_barrier(cl);
  return true;
}

/* No wave of cluster cl can go on, and some have not ended: reports why,
 * as stuck does, the cluster barrier last. */
_Noreturn static void cluster_stuck(scluster *cl) {
  for (uint32_t r = 0; r < cl->n; r++)
    if (!cl->wg[r].ended)
      stuck_regs(&cl->wg[r]);
  for (uint32_t r = 0; r < cl->n; r++)
    if (!cl->wg[r].ended)
      stuck_turns(&cl->wg[r]);
  for (uint32_t r = 0; r < cl->n; r++)
    if (!cl->wg[r].ended)
      stuck_mbar(&cl->wg[r]);
  for (uint32_t r = 0; r < cl->n; r++)
    if (!cl->wg[r].ended)
      stuck_bar(&cl->wg[r]);
  uint32_t at = 0, all = 0;
  for (uint32_t r = 0; r < cl->n; r++)
    for (uint32_t w = 0; w < cl->wg[r].nwaves; w++, all++)
      at += cl->wg[r].waves[w].at_cluster;
  for (uint32_t r = 0; r < cl->n; r++) {
    sim *s = &cl->wg[r];
    for (uint32_t w = 0; w < s->nwaves && !s->ended; w++)
      if (s->waves[w].at_cluster)
        sim_report(s, &s->p->code.v[s->waves[w].pc - 1], w, 0, D_SIM_BARRIER,
                   "cluster barrier reached by wave %u but not by all %u "
                   "waves of the %u workgroups of its cluster (%u of them "
                   "reached it; the others ended or wait elsewhere)",
                   w, all, cl->n, at);
  }
  wv_internal(cl->wg[0].ctx, __FILE__, __LINE__,
              "no wave of the cluster waits");
}

/* Runs the workgroups of cluster cl (their ids in wg[r].wg) together;
 * *steps, the launch's count of steps. */
static void run_cluster(scluster *cl, uint64_t *steps) {
  for (uint32_t r = 0; r < cl->n; r++)
    wg_begin(&cl->wg[r]);
  cl->land = false;
  for (;;) {
    bool moved = false, all = true;
    for (uint32_t r = 0; r < cl->n; r++) {
      sim *s = &cl->wg[r];
      if (s->ended)
        continue;
      uint32_t done;
      s->steps = *steps;
      moved |= wg_round(s, &done);
      *steps = s->steps;
      if (done == s->nwaves) {
        wg_end(s);
        moved = true;
      } else {
        all = false;
      }
    }
    moved |= release_cluster(cl);
    if (all)
      return;
    if (!moved && cl->land)
      cluster_stuck(cl);
    cl->land = !moved;
  }
}

/* The state of one workgroup of s's launch (nwaves, ngran, nclk and cl
 * set). */
static void wg_alloc(sim *s) {
  wavec_ctx *ctx = s->ctx;
  size_t nregs = (size_t)s->nwaves * s->p->regs.n * (size_t)s->lanes;
  s->regs = wv_alloc(ctx, nregs * sizeof *s->regs);
  s->rset = wv_alloc(ctx, nregs);
  s->waves = wv_alloc(ctx, s->nwaves * sizeof *s->waves);
  s->groups = wv_alloc(ctx, s->nwaves * sizeof *s->groups);
  s->pfences = wv_alloc(ctx, s->nwaves * sizeof *s->pfences);
  s->pfence_pub = wv_alloc(ctx, s->nwaves * sizeof *s->pfence_pub);
  s->wpend = wv_alloc(ctx, s->nwaves * sizeof *s->wpend);
  s->wgroups = wv_alloc(ctx, s->nwaves * sizeof *s->wgroups);
  s->smem = wv_alloc(ctx, (size_t)(s->ngran ? s->ngran : 1) * sizeof *s->smem);
  s->as = NULL;
  sim_async_new(s);
}

/* Is `in` an op of clusters (tir.h)? */
static bool cluster_op(const tir_instr *in) {
  return in->op == T_CLUSTERBAR ||
         (in->op == T_TMA && in->imm2 == TIR_TMA_MULTICAST) ||
         (in->op == T_MBARRIVE && in->imm2 == TIR_ARRIVE_CLUSTER);
}

/* Arguments a and b of the run share a byte. */
static bool overlap(const tir_prog *p, void *const *args, uint32_t a,
                    uint32_t b) {
  uintptr_t lo[2], hi[2];
  uint32_t ab[2] = {a, b};
  for (int i = 0; i < 2; i++) {
    const tir_arg *t = &p->args.v[ab[i]];
    lo[i] = (uintptr_t)args[ab[i]];
    hi[i] = lo[i] + (uintptr_t)t->elems * (uintptr_t)((wv_dtypes[t->dt].bits + 7) / 8);
  }
  return lo[0] < hi[1] && lo[1] < hi[0];
}

static void simulate(wv_kernel *k, void *const *args) {
  wavec_ctx *ctx = k->ctx;
  const tir_prog *p = k->tir;
  if (!p)
    wv_fail(ctx, D_INVALID, k->loc, "kernel '%s' is not compiled", k->name);
  /* the next run's shapes may differ from this one's (also after a run
   * refused here; a program built by hand may have no sizes, nor room) */
  if (p->sizes.n)
    memset(k->run_from, 0, p->sizes.n * sizeof *k->run_from);
  p = tir_instance(ctx, p, k->run_size, k->loc); /* the run-time sizes */
  sim s = {0};
  s.ctx = ctx;
  s.k = k;
  s.p = p;
  /* 0: a kernel that no wavec_compile gave a budget (one built as a thread
   * program by hand, as tests/gpu/ops.c does) gets the default */
  s.max_steps = k->max_steps ? k->max_steps : WAVEC_DEFAULT_MAX_STEPS;
  s.args = args;
  s.lanes = p->lanes;
  s.nwaves = (uint32_t)(p->block[0] * p->block[1] * p->block[2] / p->lanes);
  /* the registers a launch gives the workgroup (setmaxnreg moves them) */
  if (p->maxnreg * (int64_t)s.nwaves * p->lanes > 65536)
    wv_fail(ctx, D_SIM_REGS, k->loc,
            "kernel '%s' asks for %lld registers per thread at entry for %lld "
            "threads: more than the 65536 of a multiprocessor",
            k->name, (long long)p->maxnreg,
            (long long)s.nwaves * p->lanes);
  s.ngran = p->smem_bytes;
  /* clusters: C workgroups along x run together (run_cluster) */
  int64_t C = p->cluster > 1 ? p->cluster : 1;
  for (uint32_t i = 0; i < p->code.n && C == 1; i++)
    if (cluster_op(&p->code.v[i]))
      wv_fail(ctx, D_INTERNAL, p->code.v[i].loc, "simulator: an op of "
              "clusters in a program without clusters");
  if (C > 16)
    wv_fail(ctx, D_INTERNAL, k->loc, "simulator: clusters of %lld "
            "workgroups, more than the 16 a GPU runs together", (long long)C);
  if (p->grid[0] % C)
    wv_fail(ctx, D_INTERNAL, k->loc, "simulator: a grid of %lld workgroups "
            "along x, not a multiple of its clusters of %lld",
            (long long)p->grid[0], (long long)C);
  scluster cl = {.n = (uint32_t)C};
  if (C > 1)
    s.cl = &cl;
  s.nclk = s.nwaves * (uint32_t)C;
  wg_alloc(&s);
  s.tmp = wv_alloc(ctx, (size_t)s.lanes * 8 * sizeof *s.tmp); /* ldsm x4 */
  s.ginit = wv_alloc(ctx, p->args.n * sizeof *s.ginit);
  s.gwriter = wv_alloc(ctx, p->args.n * sizeof *s.gwriter);
  s.gwep = wv_alloc(ctx, p->args.n * sizeof *s.gwep);
  s.grep = wv_alloc(ctx, p->args.n * sizeof *s.grep);
  s.greader = wv_alloc(ctx, p->args.n * sizeof *s.greader);
  s.gwinst = wv_alloc(ctx, p->args.n * sizeof *s.gwinst);
  s.grinst = wv_alloc(ctx, p->args.n * sizeof *s.grinst);
  /* an argument the kernel only writes starts unwritten */
  bool *read = wv_alloc(ctx, p->args.n), *loaded = wv_alloc(ctx, p->args.n);
  for (uint32_t i = 0; i < p->code.n; i++)
    if (p->code.v[i].op == T_LDG || p->code.v[i].op == T_LDGV ||
        p->code.v[i].op == T_CPA || p->code.v[i].op == T_REDG) {
      read[p->code.v[i].imm] = true; /* an add reads what it adds to */
      loaded[p->code.v[i].imm] |= p->code.v[i].op != T_REDG;
    }
  for (uint32_t i = 0; i < p->code.n; i++) /* tensor copies, and stores
                                               that add (not plain ones) */
    if (p->code.v[i].op == T_TMA ||
        (p->code.v[i].op == T_TMAST && p->code.v[i].imm2 == TIR_TMAST_ADD))
      read[p->tmaps.v[p->code.v[i].imm].arg] = true;
  /* shadows only where they tell something (NULL: none), so that a large
   * input costs nothing beyond its buffer: which elements an output the
   * kernel only writes has got (the others' are all there), and who
   * stored each element of a written argument */
  for (uint32_t a = 0; a < p->args.n; a++) {
    if (!args[a])
      wv_fail(ctx, D_INVALID, k->loc, "no buffer for argument '%s'",
              p->args.v[a].name);
    for (uint32_t b = 0; b < a; b++)
      if ((p->args.v[a].written || p->args.v[b].written) &&
          overlap(p, args, a, b))
        wv_fail(ctx, D_INVALID,
                wv_get(k->g, k->args.v[p->args.v[a].written ? a : b])->loc,
                "arguments '%s' and '%s' share memory, and the kernel "
                "writes '%s': its threads read and write in no promised "
                "order, so an output may not overlap another argument (give "
                "it a buffer of its own)",
                p->args.v[b].name, p->args.v[a].name,
                p->args.v[p->args.v[a].written ? a : b].name);
    size_t n = (size_t)p->args.v[a].elems;
    if (p->args.v[a].written && !read[a] && !(a < 64 && k->arg_keep >> a & 1))
      s.ginit[a] = wv_alloc(ctx, n);
    if (p->args.v[a].written) {
      s.gwriter[a] = wv_alloc(ctx, n * sizeof(int32_t));
      s.gwep[a] = wv_alloc(ctx, n * sizeof(uint32_t));
    }
    if (p->args.v[a].written && loaded[a]) {
      s.greader[a] = wv_alloc(ctx, n * sizeof(int32_t));
      s.grep[a] = wv_alloc(ctx, n * sizeof(uint32_t));
      s.gwinst[a] = wv_alloc(ctx, n * sizeof(uint32_t));
      s.grinst[a] = wv_alloc(ctx, n * sizeof(uint32_t));
    }
  }
  if (p->mma >= 0) {
    const wv_mma_info *mi = wv_mma_info_get((wavec_mma_kind)p->mma);
    if (mi->n) /* a wgmma's maps depend on its N: made at its first use */
      sim_mma_maps(&s, (wavec_mma_kind)p->mma, mi->n);
    s.A = wv_alloc(ctx, (size_t)mi->m * mi->k * sizeof *s.A);
    s.B = wv_alloc(ctx, (size_t)(mi->n ? mi->n : 256) * mi->k * sizeof *s.B);
    s.C = wv_alloc(ctx, (size_t)mi->m * (mi->n ? mi->n : 256) * sizeof *s.C);
  }
  uint64_t done = 0, all = (uint64_t)p->grid[0] * (uint64_t)p->grid[1] *
                           (uint64_t)p->grid[2];
  if (C > 1) {
    /* a workgroup of each rank, sharing what s holds of the launch */
    cl.wg = wv_alloc(ctx, cl.n * sizeof *cl.wg);
    for (uint32_t r = 0; r < cl.n; r++) {
      cl.wg[r] = s;
      cl.wg[r].rank = r;
      cl.wg[r].wbase = r * s.nwaves;
      if (r)
        wg_alloc(&cl.wg[r]);
    }
  }
  for (s.wg[2] = 0; s.wg[2] < p->grid[2]; s.wg[2]++)
    for (s.wg[1] = 0; s.wg[1] < p->grid[1]; s.wg[1]++)
      for (s.wg[0] = 0; s.wg[0] < p->grid[0]; s.wg[0] += C) {
        if (C == 1) {
          run_workgroup(&s);
        } else {
          for (uint32_t r = 0; r < cl.n; r++) {
            memcpy(cl.wg[r].wg, s.wg, sizeof s.wg);
            cl.wg[r].wg[0] += r;
          }
          run_cluster(&cl, &s.steps);
        }
        for (int64_t r = 0; r < C; r++)
          if (k->progress)
            k->progress(k->progress_ud, ++done, all);
      }
  for (uint32_t a = 0; a < p->args.n; a++) {
    if (!p->args.v[a].written || read[a] || !s.ginit[a])
      continue;
    int64_t missing = 0, first = -1;
    for (int64_t i = 0; i < p->args.v[a].elems; i++)
      if (!s.ginit[a][i] && missing++ == 0)
        first = i;
    if (missing) {
      /* at the line of the first store to it: that write missed elements */
      wavec_loc loc = k->loc;
      for (uint32_t i = 0; i < p->code.n; i++)
        if (((p->code.v[i].op == T_STG || p->code.v[i].op == T_STGV) &&
             p->code.v[i].imm == (int64_t)a) ||
            (p->code.v[i].op == T_TMAST &&
             p->tmaps.v[p->code.v[i].imm].arg == a)) {
          loc = p->code.v[i].loc;
          break;
        }
      const tir_arg *ta = &p->args.v[a];
      wv_buf at;
      wv_buf_init(&at, ctx);
      int64_t rest = first;
      int64_t coord[WV_MAX_DIMS];
      for (int d = (int)ta->ndims - 1; d >= 0; d--) {
        coord[d] = rest % ta->shape[d];
        rest /= ta->shape[d];
      }
      for (uint32_t d = 0; d < ta->ndims; d++)
        wv_buf_printf(&at, "%s%lld", d ? ", " : "", (long long)coord[d]);
      wv_fail(ctx, D_SIM_UNWRITTEN, loc,
              "output '%s': %lld of %lld elements were never written (first: "
              "[%s])",
              ta->name, (long long)missing, (long long)ta->elems,
              wv_buf_str(&at));
    }
  }
}

wavec_status wavec_simulate(wavec_kernel *pk, void *const *args) {
  if (!pk)
    return WAVEC_ERR_INVALID;
  wv_kernel *k = &pk->k;
  wavec_ctx *ctx = k->ctx;
  if (ctx->status != WAVEC_OK)
    return ctx->status;
  if (!args && k->args.n)
    return wv_null_param(ctx, "wavec_simulate", "args");
  for (uint32_t i = 0; i < k->args.n; i++)
    if (!args[i])
      return wv_error(ctx, D_INVALID, k->loc,
                      "wavec_simulate: the buffer of argument %u ('%s') is "
                      "NULL", i, wv_get(k->g, k->args.v[i])->name);
  WV_GUARD(ctx, ctx->status);
  ctx->at = k->loc;
  /* the simulator's scratch lives in the arena only for this call */
  simulate(k, args);
  ctx->at = (wavec_loc){0};
  WV_UNGUARD(ctx);
  return WAVEC_OK;
}

size_t wavec_arg_count(wavec_kernel *pk) { return pk ? pk->k.args.n : 0; }

wavec_status wavec_arg_info_get(wavec_kernel *pk, size_t i,
                                wavec_arg_info *out) {
  if (!pk || !out)
    return wv_null_param(pk ? pk->k.ctx : NULL, "wavec_arg_info_get", "out");
  wv_kernel *k = &pk->k;
  if (i >= k->args.n)
    return WAVEC_ERR_INVALID;
  wv_node *a = wv_get(k->g, k->args.v[i]);
  memset(out, 0, sizeof *out);
  out->name = a->name;
  out->dtype = a->type.dt;
  out->ndims = a->type.n;
  for (uint32_t j = 0; j < a->type.n; j++)
    out->shape[j] = k->bind.n ? k->bind.ival[a->type.dims[j]] : 0;
  /* sizes once `bind` has checked them (then this cannot fail) */
  if (k->dist) {
    int64_t bytes;
    out->elems = (size_t)wv_tensor_elems(k, a, &bytes);
    out->bytes = (size_t)bytes;
  }
  /* a dynamic dim: its run-time size, 0 until given */
  const tir_arg *ta = k->tir ? &k->tir->args.v[i] : NULL;
  bool dyn = false;
  for (uint32_t j = 0; ta && j < ta->ndims; j++)
    if (ta->dyn[j]) {
      out->shape[j] = k->run_size[ta->dyn[j] - 1];
      dyn = true;
    }
  if (dyn) {
    out->elems = 1;
    for (uint32_t j = 0; j < ta->ndims; j++)
      out->elems *= (size_t)out->shape[j];
    out->bytes = out->elems * (size_t)((wv_dtypes[a->type.dt].bits + 7) / 8);
  }
  out->is_output = k->tir ? k->tir->args.v[i].written : 0;
  return WAVEC_OK;
}
