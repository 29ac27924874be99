/* The PTX printer. require: lower. The thread program becomes one PTX
 * module with one `.entry` named after the kernel; every instruction means
 * on the GPU what it means in the simulator (sim.c is the specification):
 *
 *  - Registers: one PTX virtual register per TIR register, by type: %p
 *    (pred), %r (i32, .b32), %h (f16 and bf16, .b16), %f (f32), %x (i64,
 *    .b64). Temporaries of one TIR instruction are %tp, %tr, %th, %tf and
 *    %rd (.b64).
 *  - Arguments: one `.param .u64` per argument, in declaration order,
 *    pointers to device memory. LDG/STG offsets are in elements of the
 *    argument's type (mul.wide.s32 by its size, or for an i64 offset
 *    mul.lo.s64); arguments the kernel never writes are read through the
 *    non-coherent cache (ld.global.nc). A masked load sets its register to
 *    0 first, as the simulator does.
 *  - Integers are 32-bit, and index arithmetic that the lowering did not
 *    prove within 32 bits is 64-bit (i64: add.s64, mul.lo.s64, cvt.s64.s32
 *    ...; tir.h); the printer refuses an i32 constant beyond 32 bits.
 *    Truncating division and remainder (the kernel's `/` and `%`)
 *    are div.s32 and rem.s32. Floor division and modulus (indices): by a
 *    power of two, shr.s32 and
 *    and.b32 (.s64, .b64 in 64 bits), which are floor semantics for
 *    negative values too; otherwise
 *    div.u32/rem.u32 where the dividend is proven non-negative (a small
 *    fixpoint analysis below), else div.s32/rem.s32 with the floor
 *    correction.
 *  - f16 and bf16 arithmetic is done in f32 and rounded once with cvt.rn:
 *    widening is exact, and f32 has more than 2p + 2 bits for both formats,
 *    so add, sub, mul, div and sqrt rounded to f32 and then to f16/bf16 give
 *    the correctly rounded result the simulator computes ("compute exactly,
 *    round once"). f32 arithmetic uses the .rn forms, which ptxas never
 *    contracts into fma, so every operation rounds as the simulator's does.
 *  - Transcendentals, where the simulator is exact and the GPU is within a
 *    few ulp of f32: exp2 is ex2.approx.ftz.f32 (at most 2 ulp, PTX ISA;
 *    results below 2^-126 are 0, as the simulator's are — without .ftz,
 *    ptxas scales every argument and result to keep subnormals);
 *    log2 splits off the exponent and sums the atanh series of the
 *    mantissa (about 3 ulp; lg2.approx alone is only absolutely accurate,
 *    which near 1 is no relative bound); exp reduces the argument by ln 2
 *    in two parts (Cody-Waite) and takes ex2.approx of the remainder (about
 *    2 ulp); tanh is an odd Taylor polynomial below |x| = 0.6 and
 *    1 - 2/(exp(2|x|) + 1) above (about 3 ulp); rsqrt is sqrt.rn then
 *    rcp.rn (two roundings, at most 1 ulp); reciprocal, sqrt and division
 *    are the IEEE .rn forms. In f16 and bf16 all of these round to within
 *    an ulp of the exact result.
 *    min and max propagate NaN (min.NaN / max.NaN), as the simulator does.
 *  - Shared memory is one `.shared .align 16 .b8` array of smem_bytes,
 *    addressed in bytes like the simulator's; values keep their bit
 *    patterns there (a predicate is one byte). Above 48 KiB it is declared
 *    `.extern` (dynamic) and the launch passes its size. Vector accesses
 *    (T_LDGV, T_LDSV, T_STSV, T_STGV) become v2/v4.b32 loads and stores of 16
 *    bytes at most, 16-bit elements packed in pairs. T_CPA, T_CPCOMMIT and
 *    T_CPWAIT are cp.async.cg (16 bytes; .ca for 8 and 4),
 *    cp.async.commit_group and cp.async.wait_group: the simulator's groups
 *    are PTX's.
 *  - Tensor maps are `.param .align 64 .b8 NAME_tmap_I[128]` after the
 *    pointers, their generic addresses (cvta.param) in %tm. T_MBINIT,
 *    T_MBARRIVE are mbarrier.init / arrive(.expect_tx) on the barrier's
 *    shared bytes; T_MBWAIT loops on mbarrier.try_wait.parity; T_TMA is
 *    cp.async.bulk.tensor.Nd ... .mbarrier::complete_tx::bytes with the
 *    coordinates innermost first; T_FENCE is fence.mbarrier_init and
 *    fence.proxy.async (sm_90 and later). T_TMAST is
 *    cp.async.bulk.tensor.Nd.global.shared::cta ... .bulk_group, T_FENCEPX
 *    fence.proxy.async.shared::cta, T_BULKCOMMIT / T_BULKWAIT(R)
 *    cp.async.bulk.commit_group / wait_group(.read): the simulator's bulk
 *    groups are PTX's.
 *  - T_SHFL is shfl.sync.bfly.b32 over the whole warp; T_BAR is bar.sync 0,
 *    or bar.sync ID, COUNT (a named barrier of COUNT threads); a role
 *    region (T_IF) is a uniform branch past it; T_REGINC / T_REGDEC are
 *    setmaxnreg, with .maxnreg giving the registers at entry;
 *    T_MMA is mma.sync (m16n8k16, m16n8k32), its fragment elements packed
 *    into .b32 registers low first (16-bit pairs with mov.b32 {lo, hi},
 *    8-bit quads with prmt), in the fragment order of target.c. Loops are a counter, a label and a uniform branch (bra.uni:
 *    control flow in the thread program is uniform by construction).
 *  - Every instruction is preceded by .loc of its source line when that
 *    changes, with .file for each source, so that profilers and ptxas
 *    -lineinfo map SASS back to .wave lines.
 * Ops whose PTX is a fixed pattern are printed from the format strings of
 * the op table (tir.h, TIR_OPS; put_form), the others by a function each
 * (emit_code, f32_routine, emit_divmod).
 * The output depends on nothing but the program, the name and the target,
 * so it is deterministic. */
#include <math.h>
#include <stdio.h>

#include "support/half.h"
#include "tir/ptx.h"

static const char *const class_decl[C_COUNT] = {".pred", ".b32", ".b16",
                                                ".f32", ".b64"};

static nm F32(float f) {
  nm n;
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  snprintf(n.s, sizeof n.s, "0f%08X", u);
  return n;
}



/* The PTX name of an 8-bit float type in cvt's pairs. */
static const char *fp8_pair(px *x, tir_ty t) {
  if (x->t->sm < 89) /* cvt with .e4m3x2 / .e5m2x2: sm_89 and newer */
    unsupported(x, "8-bit float conversions need sm_89 or newer (sm_90)");
  return t == TY_E4M3 ? "e4m3x2" : "e5m2x2";
}

/* ---- formats -------------------------------------------------------------------- */
/* The PTX of each op as format strings (tir.h, TIR_OPS). */
static const struct {
  const char *ptx, *fptx;
} forms[T__COUNT] = {
#define X(e, name, n, ptx, fptx) [e] = {ptx, fptx},
    TIR_OPS(X)
#undef X
};

static const char *const sreg_ptx[] = {"%tid.x",   "%tid.y",   "%tid.z",
                                       "%ctaid.x", "%ctaid.y", "%ctaid.z"};
/* The type of a move (and of a register-to-register copy) per type. */
static const char *const move_type[TY_COUNT] = {
    "pred", "b32", "b16", "b16", "f32", "b16", "b16", "b32", "b64"};

/* Appends the instructions of format f (tir.h) for `in`: dst, a, b, c are
 * the names in f32[0..3] (a float form) or, without f32, in's registers;
 * the temporary %t is taken at its first use, an .f32 for a float form,
 * else a .b32. */
static void put_form(px *x, const tir_instr *in, const char *f,
                     const nm *f32) {
  wv_buf *b = &x->body;
  const uint32_t regs[4] = {in->dst, in->a, in->b, in->c};
  nm t = {{0}};
  wv_buf_puts(b, "\t");
  for (;;) {
    size_t n = strcspn(f, "%;");
    wv_buf_add(b, f, n);
    f += n;
    if (!*f)
      break;
    if (*f == ';') { /* "; " between instructions */
      wv_buf_puts(b, ";\n\t");
      f += f[1] == ' ' ? 2 : 1;
      continue;
    }
    char e = f[1];
    f += 2;
    switch (e) {
    case '=':
    case '0':
    case '1':
    case '2': {
      int i = e == '=' ? 0 : e - '0' + 1;
      wv_buf_puts(b, f32 ? f32[i].s : R(x, regs[i]).s);
      break;
    }
    case 'i': wv_buf_printf(b, "%lld", (long long)in->imm); break;
    case 'm': /* T_SWZ's mask */
      wv_buf_printf(b, "0x%llx", (unsigned long long)tir_swz_mask(in->imm));
      break;
    case 't':
      if (!t.s[0])
        t = T(x, f32 ? C_F32 : C_B32);
      wv_buf_puts(b, t.s);
      break;
    case 's': wv_buf_puts(b, sreg_ptx[in->imm]); break;
    case 'T': wv_buf_puts(b, move_type[in->ty]); break;
    case '%': wv_buf_puts(b, "%"); break;
    default: wv_assert(x->ctx, 0);
    }
  }
  wv_buf_puts(b, ";\n");
}

/* ---- analyses ----------------------------------------------------------------- */
/* Constants: registers written once, by T_CONST. Non-negative i32 and i64
 * registers: the greatest fixpoint of "every instruction that writes it
 * yields a non-negative value when its operands are non-negative" — sound
 * by induction over any execution, since nothing is read before it is
 * written (the simulator checks that). Index values are proved within the
 * width of their registers (lower_expr.c), so the additions and products
 * below do not wrap; the floor division and modulus that use the result
 * take index values only. */
static bool pos_const(px *x, uint32_t r) {
  return r && x->isconst[r] && x->cval[r] > 0;
}

static bool yields_nonneg(px *x, const tir_instr *in) {
  const uint8_t *nn = x->nonneg;
  switch (in->op) {
  case T_CONST: return in->imm >= 0;
  case T_LOOP: return !in->a || nn[in->a]; /* counts up from its start */
  case T_ENDLOOP: return nn[in->dst];
  case T_SREG:
  case T_PARAM: /* a size: positive */
  case T_ABS: return true;
  case T_MOV:
  case T_SWZ: /* flips bits 4..6 at most */
  case T_SHFL: return nn[in->a];
  case T_ADD:
  case T_MUL:
  case T_MIN: return nn[in->a] && nn[in->b];
  case T_MAX: return nn[in->a] || nn[in->b];
  case T_DIV: return nn[in->a] && pos_const(x, in->b);
  case T_MOD: return pos_const(x, in->b); /* floor mod lies in [0, b) */
  case T_SELP: return nn[in->b] && nn[in->c];
  case T_CVT: /* a predicate is 0 or 1; i32 <-> i64 keeps the value */
    return ty(x, in->a) == TY_PRED ||
           ((in->ty == TY_I64 || ty(x, in->a) == TY_I64) && nn[in->a]);
  default: return false;
  }
}

static void analyse(px *x) {
  const tir_prog *p = x->p;
  ptx_wgmma_analyse(x);
  uint32_t n = p->regs.n;
  uint32_t *ndef = wv_alloc(x->ctx, n * sizeof *ndef);
  x->isconst = wv_alloc(x->ctx, n);
  x->nonneg = wv_alloc(x->ctx, n);
  x->cval = wv_alloc(x->ctx, n * sizeof *x->cval);
  x->argread = wv_alloc(x->ctx, (p->args.n + 1) * sizeof *x->argread);
  x->argwritten = wv_alloc(x->ctx, (p->args.n + 1) * sizeof *x->argwritten);
  for (uint32_t i = 0; i < p->code.n; i++) {
    const tir_instr *in = &p->code.v[i];
    /* a loop counter's increment belongs to its definition by T_LOOP */
    if (writes_dst(in) && in->op != T_ENDLOOP)
      ndef[in->dst]++;
    if (in->op == T_LDGV || in->op == T_LDSV || in->op == T_MMA ||
        in->op == T_LDSM || in->op == T_LDSMT) {
      uint32_t nw = in->op == T_MMA
                        ? (uint32_t)wv_mma_elems((wavec_mma_kind)in->imm,
                                                 WV_ACC, 0)
                        : in->nlist;
      for (uint32_t j = 0; j < nw && j < in->nlist; j++)
        ndef[in->list[j]] += 2; /* never a constant, never known >= 0 */
    }
    if (in->op == T_LDG || in->op == T_LDGV || in->op == T_CPA)
      x->argread[in->imm] = true;
    if (in->op == T_STG || in->op == T_STGV || in->op == T_REDG)
      x->argwritten[in->imm] = true;
  }
  for (uint32_t i = 0; i < p->code.n; i++) {
    const tir_instr *in = &p->code.v[i];
    if (in->op == T_CONST && (in->ty == TY_I32 || in->ty == TY_I64) &&
        ndef[in->dst] == 1) {
      x->isconst[in->dst] = 1;
      x->cval[in->dst] = in->imm;
    }
  }
  for (uint32_t r = 1; r < n; r++)
    x->nonneg[r] = (p->regs.v[r] == TY_I32 || p->regs.v[r] == TY_I64) &&
                   ndef[r] < 2;
  for (bool changed = true; changed;) {
    changed = false;
    for (uint32_t i = 0; i < p->code.n; i++) {
      const tir_instr *in = &p->code.v[i];
      if (writes_dst(in) && x->nonneg[in->dst] && !yields_nonneg(x, in)) {
        x->nonneg[in->dst] = 0;
        changed = true;
      }
    }
  }
}

/* ---- values in f32 ------------------------------------------------------------ */
/* An f32 register holding the value of register r (exact for every type;
 * for i32 exact up to 2^24, which every index is). */
static nm as_f32(px *x, uint32_t r) {
  nm t;
  switch (ty(x, r)) {
  case TY_F32: return R(x, r);
  case TY_F16:
    t = T(x, C_F32);
    ins(x, "cvt.f32.f16 %s, %s", t.s, R(x, r).s);
    return t;
  case TY_BF16: /* a bf16 is the high half of the f32 with its bits */
    t = T(x, C_F32);
    x->need_hz = true;
    ins(x, "mov.b32 %s, {%%hz, %s}", t.s, R(x, r).s);
    return t;
  case TY_I32:
  case TY_I8: /* held sign-extended */
    t = T(x, C_F32);
    ins(x, "cvt.rn.f32.s32 %s, %s", t.s, R(x, r).s);
    return t;
  case TY_E4M3:
  case TY_E5M2: { /* exact in f16: the pair's low half, widened */
    nm p = T(x, C_B32), lo = T(x, C_B16), hi = T(x, C_B16);
    t = T(x, C_F32);
    ins(x, "cvt.rn.f16x2.%s %s, %s", fp8_pair(x, ty(x, r)), p.s, R(x, r).s);
    ins(x, "mov.b32 {%s, %s}, %s", lo.s, hi.s, p.s);
    ins(x, "cvt.f32.f16 %s, %s", t.s, lo.s);
    return t;
  }
  default:
    t = T(x, C_F32);
    ins(x, "selp.f32 %s, 0f3F800000, 0f00000000, %s", t.s, R(x, r).s);
    return t;
  }
}

/* Where an f32 result for float register d is computed: d itself, or a
 * temporary that fin() rounds into d. */
static nm fdst(px *x, uint32_t d) {
  return ty(x, d) == TY_F32 ? R(x, d) : T(x, C_F32);
}

static void fin(px *x, uint32_t d, nm v) {
  switch (ty(x, d)) {
  case TY_F32:
    if (strcmp(v.s, R(x, d).s) != 0)
      ins(x, "mov.f32 %s, %s", R(x, d).s, v.s);
    break;
  case TY_F16: ins(x, "cvt.rn.f16.f32 %s, %s", R(x, d).s, v.s); break;
  case TY_BF16: ins(x, "cvt.rn.bf16.f32 %s, %s", R(x, d).s, v.s); break;
  case TY_E4M3:
  case TY_E5M2: { /* the pair (0, v): the low byte is v's, the high 0 */
    nm z = T(x, C_F32);
    ins(x, "mov.f32 %s, 0f00000000", z.s);
    ins(x, "cvt.rn.satfinite.%s.f32 %s, %s, %s", fp8_pair(x, ty(x, d)),
        R(x, d).s, z.s, v.s);
    break;
  }
  default: wv_assert(x->ctx, 0);
  }
}

/* An i32 register holding 1 or 0 for a predicate. */
static nm pred_as_i32(px *x, uint32_t r) {
  nm t = T(x, C_B32);
  ins(x, "selp.u32 %s, 1, 0, %s", t.s, R(x, r).s);
  return t;
}

/* ---- float operations ------------------------------------------------------------ */
/* o = e^v, about 2 ulp: v = n ln2 + r with ln 2 in two parts (the high part
 * has trailing zeros, so n * hi is exact), e^r = 2^(r log2 e), and 2^n
 * applied in two halves so that e^88.7 does not overflow on the way. The
 * clamp keeps -inf and +inf out of the reduction (NaN passes through). */
static void emit_exp(px *x, nm o, nm v) {
  nm c = T(x, C_F32), n = T(x, C_F32), r = T(x, C_F32), h = T(x, C_F32);
  ins(x, "max.NaN.f32 %s, %s, 0fC2D00000", c.s, v.s); /* -104 */
  ins(x, "min.NaN.f32 %s, %s, 0f42B20000", c.s, c.s); /* 89 */
  ins(x, "mul.rn.f32 %s, %s, 0f3FB8AA3B", n.s, c.s); /* log2 e */
  ins(x, "cvt.rni.f32.f32 %s, %s", n.s, n.s);
  ins(x, "fma.rn.f32 %s, %s, 0fBF317200, %s", r.s, n.s, c.s); /* -ln2 hi */
  ins(x, "fma.rn.f32 %s, %s, 0fB5BFBE8E, %s", r.s, n.s, r.s); /* -ln2 lo */
  ins(x, "mul.rn.f32 %s, %s, 0f3FB8AA3B", r.s, r.s);
  ins(x, "ex2.approx.f32 %s, %s", r.s, r.s);
  ins(x, "mul.rn.f32 %s, %s, 0f3F000000", h.s, n.s);
  ins(x, "cvt.rmi.f32.f32 %s, %s", h.s, h.s);
  ins(x, "sub.rn.f32 %s, %s, %s", n.s, n.s, h.s);
  ins(x, "ex2.approx.f32 %s, %s", h.s, h.s);
  ins(x, "ex2.approx.f32 %s, %s", n.s, n.s);
  ins(x, "mul.rn.f32 %s, %s, %s", r.s, r.s, h.s);
  ins(x, "mul.rn.f32 %s, %s, %s", o.s, r.s, n.s);
}

/* o = tanh(v), about 3 ulp: below |v| = 0.6 the odd Taylor series to
 * x^17 (its next term is under 2^-26 relative there), above it
 * 1 - 2 / (e^(2|v|) + 1), whose cancellation is mild for tanh > 0.53. */
static void emit_tanh(px *x, nm o, nm v) {
  static const uint32_t taylor[8] = {/* -1/3, 2/15, ..., 6404582/10854718875 */
                                     0xBEAAAAAB, 0x3E088889, 0xBD5D0DD1,
                                     0x3CB327A4, 0xBC11371B, 0x3B6B69E8,
                                     0xBABED1B2, 0x3A1AAC12};
  nm a = T(x, C_F32), e = T(x, C_F32), s = T(x, C_F32), q = T(x, C_F32);
  nm small = T(x, C_PRED);
  ins(x, "abs.f32 %s, %s", a.s, v.s);
  ins(x, "add.rn.f32 %s, %s, %s", e.s, a.s, a.s);
  emit_exp(x, e, e);
  ins(x, "add.rn.f32 %s, %s, 0f3F800000", e.s, e.s);
  ins(x, "div.rn.f32 %s, 0f40000000, %s", e.s, e.s);
  ins(x, "sub.rn.f32 %s, 0f3F800000, %s", e.s, e.s);
  ins(x, "mul.rn.f32 %s, %s, %s", s.s, a.s, a.s);
  ins(x, "mov.b32 %s, 0f%08X", q.s, taylor[7]);
  for (int i = 6; i >= 0; i--)
    ins(x, "fma.rn.f32 %s, %s, %s, 0f%08X", q.s, q.s, s.s, taylor[i]);
  ins(x, "mul.rn.f32 %s, %s, %s", q.s, q.s, s.s);
  ins(x, "fma.rn.f32 %s, %s, %s, %s", q.s, q.s, a.s, a.s);
  ins(x, "setp.lt.f32 %s, %s, 0f3F19999A", small.s, a.s); /* 0.6 */
  ins(x, "selp.f32 %s, %s, %s, %s", e.s, q.s, e.s, small.s);
  ins(x, "copysign.f32 %s, %s, %s", o.s, v.s, e.s);
}

/* o = log2(v), within 3 ulp (lg2.approx.f32 has an absolute error bound,
 * which near v = 1 is no relative bound at all): v = m 2^e with m in
 * [sqrt(1/2), sqrt(2)) (subnormals scaled by 2^24 first), log m =
 * 2 atanh(s) = 2 (s + s^3/3 + ... + s^13/13) with s = (m - 1)/(m + 1),
 * |s| < 0.172. Zero, negative, infinite and NaN inputs take lg2.approx,
 * which is exact for them (-inf, NaN, inf, NaN). */
static void emit_log2(px *x, nm o, nm v) {
  static const uint32_t inv_odd[6] = {/* 1/13, 1/11, ..., 1/3 */
                                      0x3D9D89D9, 0x3DBA2E8C, 0x3DE38E39,
                                      0x3E124925, 0x3E4CCCCD, 0x3EAAAAAB};
  nm sub = T(x, C_PRED), big = T(x, C_PRED), ok = T(x, C_PRED),
     fin_ = T(x, C_PRED);
  nm sc = T(x, C_F32), fe = T(x, C_F32), m = T(x, C_F32), r = T(x, C_F32),
     s = T(x, C_F32), s2 = T(x, C_F32), p = T(x, C_F32), sp = T(x, C_F32);
  nm bits = T(x, C_B32), e = T(x, C_B32);
  ins(x, "setp.lt.f32 %s, %s, 0f00800000", sub.s, v.s);
  ins(x, "mul.rn.f32 %s, %s, 0f4B800000", sc.s, v.s);
  ins(x, "selp.f32 %s, %s, %s, %s", sc.s, sc.s, v.s, sub.s);
  ins(x, "mov.b32 %s, %s", bits.s, sc.s);
  ins(x, "bfe.u32 %s, %s, 23, 8", e.s, bits.s);
  ins(x, "sub.s32 %s, %s, 127", e.s, e.s);
  ins(x, "and.b32 %s, %s, 0x007FFFFF", bits.s, bits.s);
  ins(x, "or.b32 %s, %s, 0x3F800000", bits.s, bits.s);
  ins(x, "mov.b32 %s, %s", m.s, bits.s);
  ins(x, "setp.gt.f32 %s, %s, 0f3FB504F3", big.s, m.s); /* sqrt 2 */
  ins(x, "@%s mul.rn.f32 %s, %s, 0f3F000000", big.s, m.s, m.s);
  ins(x, "@%s add.s32 %s, %s, 1", big.s, e.s, e.s);
  ins(x, "cvt.rn.f32.s32 %s, %s", fe.s, e.s);
  ins(x, "@%s add.rn.f32 %s, %s, 0fC1C00000", sub.s, fe.s, fe.s); /* -24 */
  ins(x, "sub.rn.f32 %s, %s, 0f3F800000", r.s, m.s);
  ins(x, "add.rn.f32 %s, %s, 0f3F800000", s.s, m.s);
  ins(x, "div.rn.f32 %s, %s, %s", s.s, r.s, s.s);
  ins(x, "mul.rn.f32 %s, %s, %s", s2.s, s.s, s.s);
  ins(x, "mov.b32 %s, 0f%08X", p.s, inv_odd[0]);
  for (int i = 1; i < 6; i++)
    ins(x, "fma.rn.f32 %s, %s, %s, 0f%08X", p.s, p.s, s2.s, inv_odd[i]);
  ins(x, "mul.rn.f32 %s, %s, %s", p.s, p.s, s2.s);
  ins(x, "add.rn.f32 %s, %s, %s", s.s, s.s, s.s);
  ins(x, "fma.rn.f32 %s, %s, %s, %s", s.s, s.s, p.s, s.s); /* log m */
  ins(x, "fma.rn.f32 %s, %s, 0f3FB8AA3B, %s", s.s, s.s, fe.s);
  ins(x, "setp.gt.f32 %s, %s, 0f00000000", ok.s, v.s);
  ins(x, "setp.lt.f32 %s, %s, 0f7F800000", fin_.s, v.s);
  ins(x, "and.pred %s, %s, %s", ok.s, ok.s, fin_.s);
  ins(x, "lg2.approx.f32 %s, %s", sp.s, v.s);
  ins(x, "selp.f32 %s, %s, %s, %s", o.s, s.s, sp.s, ok.s);
}

/* The float ops whose form is a routine rather than a format: o = op(v),
 * both f32. */
static void (*const f32_routine[T__COUNT])(px *, nm o, nm v) = {
    [T_EXP] = emit_exp, [T_LOG2] = emit_log2, [T_TANH] = emit_tanh};

static void emit_float_op(px *x, const tir_instr *in) {
  nm v[4] = {{{0}}}; /* dst, a, b, c in f32 */
  v[1] = as_f32(x, in->a);
  v[2] = in->b ? as_f32(x, in->b) : v[1];
  v[3] = in->c ? as_f32(x, in->c) : v[1];
  v[0] = fdst(x, in->dst);
  if (forms[in->op].fptx)
    put_form(x, in, forms[in->op].fptx, v);
  else if (f32_routine[in->op])
    f32_routine[in->op](x, v[0], v[1]);
  else
    unsupported(x, "a float operation the printer does not know");
  fin(x, in->dst, v[0]);
}

/* ---- integer operations ------------------------------------------------------------ */
/* Floor division and modulus (tir.h), of i32 or i64 registers. */
static void emit_divmod(px *x, const tir_instr *in) {
  bool mod = in->op == T_MOD;
  const char *w = in->ty == TY_I64 ? "64" : "32";
  int cls = in->ty == TY_I64 ? C_B64 : C_B32;
  nm d = R(x, in->dst), a = R(x, in->a);
  if (pos_const(x, in->b)) {
    int64_t c = x->cval[in->b];
    if ((c & (c - 1)) == 0) {
      int k = 0;
      while ((INT64_C(1) << k) < c)
        k++;
      if (mod)
        ins(x, "and.b%s %s, %s, %lld", w, d.s, a.s, (long long)(c - 1));
      else
        ins(x, "shr.s%s %s, %s, %d", w, d.s, a.s, k);
    } else if (x->nonneg[in->a]) {
      ins(x, "%s.u%s %s, %s, %lld", mod ? "rem" : "div", w, d.s, a.s,
          (long long)c);
    } else {
      /* truncated quotient q and remainder r; r < 0 means a < 0 with a
       * remainder: floor is q - 1, and the floor modulus r + c */
      nm q = T(x, cls), r = T(x, cls), neg = T(x, C_PRED);
      ins(x, "div.s%s %s, %s, %lld", w, q.s, a.s, (long long)c);
      ins(x, "rem.s%s %s, %s, %lld", w, r.s, a.s, (long long)c);
      ins(x, "setp.lt.s%s %s, %s, 0", w, neg.s, r.s);
      if (mod)
        ins(x, "@%s add.s%s %s, %s, %lld", neg.s, w, r.s, r.s, (long long)c);
      else
        ins(x, "@%s sub.s%s %s, %s, 1", neg.s, w, q.s, q.s);
      ins(x, "mov.b%s %s, %s", w, d.s, mod ? r.s : q.s);
    }
    return;
  }
  /* any divisor: correct when the remainder is non-zero and its sign
   * differs from the divisor's */
  nm b = R(x, in->b);
  nm q = T(x, cls), r = T(x, cls), s = T(x, cls);
  nm p1 = T(x, C_PRED), p2 = T(x, C_PRED);
  ins(x, "div.s%s %s, %s, %s", w, q.s, a.s, b.s);
  ins(x, "rem.s%s %s, %s, %s", w, r.s, a.s, b.s);
  ins(x, "xor.b%s %s, %s, %s", w, s.s, r.s, b.s);
  ins(x, "setp.ne.s%s %s, %s, 0", w, p1.s, r.s);
  ins(x, "setp.lt.s%s %s, %s, 0", w, p2.s, s.s);
  ins(x, "and.pred %s, %s, %s", p1.s, p1.s, p2.s);
  if (mod)
    ins(x, "@%s add.s%s %s, %s, %s", p1.s, w, r.s, r.s, b.s);
  else
    ins(x, "@%s sub.s%s %s, %s, 1", p1.s, w, q.s, q.s);
  ins(x, "mov.b%s %s, %s", w, d.s, mod ? r.s : q.s);
}

/* The other integer ops on i64 registers (index arithmetic, tir.h); on
 * i32 ones they take their format (TIR_OPS). */
static const char *const i64_form[T__COUNT] = {
    [T_ADD] = "add.s64", [T_SUB] = "sub.s64", [T_MUL] = "mul.lo.s64",
    [T_MIN] = "min.s64", [T_MAX] = "max.s64"};

static void emit_int_op(px *x, const tir_instr *in) {
  if (in->op == T_DIV || in->op == T_MOD)
    emit_divmod(x, in);
  else if (in->ty == TY_I64 && i64_form[in->op])
    ins(x, "%s %s, %s, %s", i64_form[in->op], R(x, in->dst).s,
        R(x, in->a).s, R(x, in->b).s);
  else if (in->ty == TY_I64)
    unsupported(x, "a 64-bit integer operation the printer does not know");
  else if (forms[in->op].ptx)
    put_form(x, in, forms[in->op].ptx, NULL);
  else
    unsupported(x, "an integer operation the printer does not know");
}

/* Arithmetic ops take the form of their register type: a float form, an
 * i32 one; none on predicates. */
static bool arithmetic(tir_op op) {
  return forms[op].fptx || f32_routine[op] || op == T_DIV || op == T_MOD;
}

/* ---- comparisons, selection, conversion ------------------------------------------- */
static const char *const fcmp[] = {"gt", "lt", "ge", "le", "eq", "neu"};
static const char *const icmp[] = {"gt", "lt", "ge", "le", "eq", "ne"};

static void emit_setp(px *x, const tir_instr *in) {
  tir_ty ta = ty(x, in->a), tb = ty(x, in->b);
  nm d = R(x, in->dst);
  if (tir_ty_is_float(ta) || tir_ty_is_float(tb)) {
    nm a = as_f32(x, in->a), b = as_f32(x, in->b);
    ins(x, "setp.%s.f32 %s, %s, %s", fcmp[in->imm], d.s, a.s, b.s);
  } else if (ta == TY_I64) { /* (and tb: the verifier) */
    ins(x, "setp.%s.s64 %s, %s, %s", icmp[in->imm], d.s, R(x, in->a).s,
        R(x, in->b).s);
  } else {
    nm a = ta == TY_PRED ? pred_as_i32(x, in->a) : R(x, in->a);
    nm b = tb == TY_PRED ? pred_as_i32(x, in->b) : R(x, in->b);
    ins(x, "setp.%s.s32 %s, %s, %s", icmp[in->imm], d.s, a.s, b.s);
  }
}

static void emit_selp(px *x, const tir_instr *in) {
  nm d = R(x, in->dst), c = R(x, in->a), a = R(x, in->b), b = R(x, in->c);
  switch (in->ty) {
  case TY_PRED: {
    nm t = T(x, C_PRED), u = T(x, C_PRED);
    ins(x, "not.pred %s, %s", t.s, c.s);
    ins(x, "and.pred %s, %s, %s", t.s, t.s, b.s);
    ins(x, "and.pred %s, %s, %s", u.s, c.s, a.s);
    ins(x, "or.pred %s, %s, %s", d.s, t.s, u.s);
    break;
  }
  default: { /* the width of the type's register class (an i8 is a .b32) */
    static const char *const selp_type[C_COUNT] = {
        [C_B32] = "b32", [C_B16] = "b16", [C_F32] = "f32", [C_B64] = "b64"};
    ins(x, "selp.%s %s, %s, %s, %s", selp_type[ty_class[in->ty]], d.s, a.s,
        b.s, c.s);
    break;
  }
  }
}

/* dst = a converted: floats round to nearest even (cvt.rn), floats to
 * integers round to nearest even (cvt.rni), anything to a predicate is
 * "non-zero after that rounding", a predicate is 1 or 0. */
static void emit_cvt(px *x, const tir_instr *in) {
  tir_ty from = ty(x, in->a), to = in->ty;
  nm d = R(x, in->dst);
  if (to == TY_I64 || from == TY_I64) { /* i32 <-> i64 (the verifier) */
    ins(x, to == TY_I64 ? "cvt.s64.s32 %s, %s" : "cvt.u32.u64 %s, %s", d.s,
        R(x, in->a).s);
    return;
  }
  if (tir_ty_is_float(to)) {
    if (from == TY_I32 && (to == TY_F16 || to == TY_F32)) /* rounded once */
      ins(x, "cvt.rn.%s.s32 %s, %s", to == TY_F16 ? "f16" : "f32", d.s,
          R(x, in->a).s);
    else /* through f32: exact for |a| <= 2^24, so bf16 rounds once too */
      fin(x, in->dst, as_f32(x, in->a));
    return;
  }
  nm i;
  if (from == TY_PRED) {
    i = pred_as_i32(x, in->a);
  } else if (tir_ty_is_float(from) && to == TY_PRED) {
    /* a float is true when it is not zero; NaN is true (as in C, NumPy and
     * PyTorch): an unordered compare */
    ins(x, "setp.neu.f32 %s, %s, 0f00000000", d.s, as_f32(x, in->a).s);
    return;
  } else if (tir_ty_is_float(from)) {
    nm v = as_f32(x, in->a);
    if (to == TY_I8) { /* nearest even, saturated, NaN 0 */
      ins(x, "cvt.rni.sat.s8.f32 %s, %s", d.s, v.s);
      return;
    }
    i = to == TY_I32 ? d : T(x, C_B32);
    ins(x, "cvt.rni.s32.f32 %s, %s", i.s, v.s);
    if (to == TY_I32)
      return;
  } else {
    i = R(x, in->a);
  }
  if (to == TY_I32)
    ins(x, "mov.b32 %s, %s", d.s, i.s);
  else if (to == TY_I8) /* saturated */
    ins(x, "cvt.sat.s8.s32 %s, %s", d.s, i.s);
  else
    ins(x, "setp.ne.s32 %s, %s, 0", d.s, i.s);
}

/* ---- memory ------------------------------------------------------------------------ */
/* The register class and PTX type an argument's elements load as. */
static tir_ty mem_ty(wavec_dtype dt) {
  return dt == WAVEC_I1 ? TY_I32 : tir_ty_of(dt);
}

static const char *mem_suffix(wavec_dtype dt) {
  switch (dt) {
  case WAVEC_F16:
  case WAVEC_BF16: return "b16";
  case WAVEC_F32: return "f32";
  case WAVEC_I32: return "s32";
  case WAVEC_I8: return "s8";
  default: return "u8"; /* i1, the 8-bit floats */
  }
}

/* The global address of element `off` (a .b32 name, or a .b64 one when
 * wide) of argument `arg` (offsets count elements of the argument,
 * tir.h). */
static nm global_addr_at(px *x, int64_t arg, nm off, bool wide) {
  const tir_arg *a = &x->p->args.v[arg];
  nm addr = T(x, C_B64);
  ins(x, wide ? "mul.lo.s64 %s, %s, %d" : "mul.wide.s32 %s, %s, %d", addr.s,
      off.s, (wv_dtypes[a->dt].bits + 7) / 8);
  ins(x, "add.s64 %s, %%ga%lld, %s", addr.s, (long long)arg, addr.s);
  return addr;
}

static nm global_addr(px *x, int64_t arg, uint32_t off) {
  return global_addr_at(x, arg, R(x, off), ty(x, off) == TY_I64);
}

/* A masked load's value (T_LDG's fimm) as an immediate of the element
 * type dt, loaded as register type t (mem_ty). */
static nm fill_of(wavec_dtype dt, tir_ty t, double v) {
  nm n;
  switch (dt) {
  case WAVEC_F16: snprintf(n.s, sizeof n.s, "0x%04X", wv_f64_to_f16(v)); break;
  case WAVEC_BF16: snprintf(n.s, sizeof n.s, "0x%04X", wv_f64_to_bf16(v)); break;
  case WAVEC_F32: n = F32((float)v); break;
  case WAVEC_F8E4M3: snprintf(n.s, sizeof n.s, "0x%02X", wv_f64_to_e4m3(v)); break;
  case WAVEC_F8E5M2: snprintf(n.s, sizeof n.s, "0x%02X", wv_f64_to_e5m2(v)); break;
  default:
    snprintf(n.s, sizeof n.s, "%lld",
             dt == WAVEC_I1 || t == TY_PRED ? (long long)(v != 0)
                                            : (long long)v);
    break;
  }
  return n;
}

/* Moves a value of type `from` held in `v` into register d (the load and
 * store paths when the register and element types differ). */
static void convert_into(px *x, uint32_t d, tir_ty from, nm v) {
  tir_ty to = ty(x, d);
  nm dn = R(x, d);
  if (from == to) {
    ins(x, "mov.%s %s, %s", move_type[to], dn.s, v.s);
  } else if (tir_ty_is_float(to)) {
    nm f = v;
    if (from == TY_F16) {
      f = T(x, C_F32);
      ins(x, "cvt.f32.f16 %s, %s", f.s, v.s);
    } else if (from == TY_BF16) {
      f = T(x, C_F32);
      x->need_hz = true;
      ins(x, "mov.b32 %s, {%%hz, %s}", f.s, v.s);
    } else if (from == TY_I32) {
      f = T(x, C_F32);
      ins(x, "cvt.rn.f32.s32 %s, %s", f.s, v.s);
    }
    fin(x, d, f);
  } else if (to == TY_PRED && from == TY_I32) {
    ins(x, "setp.ne.s32 %s, %s, 0", dn.s, v.s);
  } else if (to == TY_I32 && from == TY_F32) {
    ins(x, "cvt.rzi.s32.f32 %s, %s", dn.s, v.s);
  } else {
    unsupported(x, "a load into a register of another type");
  }
}

static void emit_ldg(px *x, const tir_instr *in) {
  const tir_arg *a = &x->p->args.v[in->imm];
  tir_ty mt = mem_ty(a->dt);
  bool direct = mt == in->ty && a->dt != WAVEC_I1;
  nm v = direct ? R(x, in->dst) : T(x, ty_class[mt]);
  nm addr = global_addr(x, in->imm, in->a);
  char guard[32] = "";
  if (in->b) {
    ins(x, "mov.%s %s, %s", move_type[mt], v.s,
        fill_of(a->dt, mt, in->fimm).s);
    snprintf(guard, sizeof guard, "@%s ", R(x, in->b).s);
  }
  ins(x, "%sld.global%s.%s %s, [%s]", guard,
      x->argwritten[in->imm] ? "" : ".nc", mem_suffix(a->dt), v.s, addr.s);
  if (!direct)
    convert_into(x, in->dst, mt, v);
}

static void emit_stg(px *x, const tir_instr *in) {
  const tir_arg *a = &x->p->args.v[in->imm];
  tir_ty vt = ty(x, in->b), mt = mem_ty(a->dt);
  nm v = R(x, in->b);
  if (a->dt == WAVEC_I1) {
    nm t = T(x, C_B32);
    if (vt == TY_PRED)
      ins(x, "selp.u32 %s, 1, 0, %s", t.s, v.s);
    else {
      nm p = T(x, C_PRED);
      if (tir_ty_is_float(vt))
        ins(x, "setp.neu.f32 %s, %s, 0f00000000", p.s, as_f32(x, in->b).s);
      else
        ins(x, "setp.ne.s32 %s, %s, 0", p.s, v.s);
      ins(x, "selp.u32 %s, 1, 0, %s", t.s, p.s);
    }
    v = t;
  } else if (vt != mt) {
    /* the simulator stores the value rounded to the element type, and an
     * i32 element from a float truncates */
    nm t = T(x, ty_class[mt]);
    if (tir_ty_is_float(mt)) {
      nm f = as_f32(x, in->b);
      if (mt == TY_F32)
        ins(x, "mov.f32 %s, %s", t.s, f.s);
      else
        ins(x, "cvt.rn.%s.f32 %s, %s", mt == TY_F16 ? "f16" : "bf16", t.s,
            f.s);
    } else if (vt == TY_PRED) {
      ins(x, "selp.u32 %s, 1, 0, %s", t.s, v.s);
    } else {
      ins(x, "cvt.rzi.s32.f32 %s, %s", t.s, as_f32(x, in->b).s);
    }
    v = t;
  }
  nm addr = global_addr(x, in->imm, in->a);
  char guard[32] = "";
  if (in->c)
    snprintf(guard, sizeof guard, "@%s ", R(x, in->c).s);
  ins(x, "%sst.global.%s [%s], %s", guard, mem_suffix(a->dt), addr.s, v.s);
}

/* T_REDG: atomic f32 adds that return nothing (red, not atom); a vector
 * of them as one red of 8 or 16 bytes from sm_90 (PTX ISA 8.1), else one
 * each. */
static void emit_redg(px *x, const tir_instr *in) {
  nm addr = global_addr(x, in->imm, in->a);
  char guard[32] = "";
  if (in->c)
    snprintf(guard, sizeof guard, "@%s ", R(x, in->c).s);
  if (!in->nlist) {
    ins(x, "%sred.global.add.f32 [%s], %s", guard, addr.s, R(x, in->b).s);
    return;
  }
  if (x->t->sm < 90) {
    for (uint32_t j = 0; j < in->nlist; j++)
      ins(x, "%sred.global.add.f32 [%s+%u], %s", guard, addr.s, 4 * j,
          R(x, in->list[j]).s);
    return;
  }
  wv_buf ops;
  wv_buf_init(&ops, x->ctx);
  for (uint32_t j = 0; j < in->nlist; j++)
    wv_buf_printf(&ops, "%s%s", j ? ", " : "", R(x, in->list[j]).s);
  ins(x, "%sred.global.add.v%u.f32 [%s], {%s}", guard, in->nlist, addr.s,
      wv_buf_str(&ops));
  x->isa = x->isa > 81 ? x->isa : 81;
}

/* Shared memory is addressed in bytes (tir.h); the window address of the
 * array plus the byte address fits in 32 bits. */
nm ptx_shared_addr(px *x, uint32_t byte) {
  nm addr = T(x, C_B32);
  ins(x, "add.u32 %s, %s, %%smem", addr.s, R(x, byte).s);
  return addr;
}

static const char *const shared_suffix[TY_COUNT] = {
    "u8", "u32", "b16", "b16", "f32", "u8", "u8", "s8"};

static void emit_lds(px *x, const tir_instr *in) {
  nm addr = ptx_shared_addr(x, in->a);
  if (in->ty == TY_PRED) {
    nm t = T(x, C_B32);
    ins(x, "ld.shared.u8 %s, [%s]", t.s, addr.s);
    ins(x, "setp.ne.s32 %s, %s, 0", R(x, in->dst).s, t.s);
  } else {
    ins(x, "ld.shared.%s %s, [%s]", shared_suffix[in->ty], R(x, in->dst).s,
        addr.s);
  }
}

static void emit_sts(px *x, const tir_instr *in) {
  nm v = ty(x, in->b) == TY_PRED ? pred_as_i32(x, in->b) : R(x, in->b);
  nm addr = ptx_shared_addr(x, in->a);
  char guard[32] = "";
  if (in->c)
    snprintf(guard, sizeof guard, "@%s ", R(x, in->c).s);
  ins(x, "%sst.shared.%s [%s], %s", guard, shared_suffix[ty(x, in->b)],
      addr.s, v.s);
}

/* T_LDGV, T_LDSV, T_STSV, T_STGV: n consecutive elements, the whole vector
 * aligned to its size (tir.h), moved as 4-byte words (16-bit elements packed in
 * pairs, 8-bit ones in quads, low first: the element at the lower address)
 * in accesses of at most 16 bytes (v4.b32). A masked-off load leaves
 * zeros. */
static void emit_vector(px *x, const tir_instr *in) {
  tir_ty t = in->ty;
  int size = tir_ty_bytes(t);
  int64_t bytes = (int64_t)size * in->nlist;
  if (t == TY_PRED || bytes < 2 || (bytes & (bytes - 1)))
    unsupported(x, "a vector access of this type or length");
  if (size == 1 && bytes < 4)
    unsupported(x, "a vector access of 8-bit elements shorter than 4 bytes");
  bool load = in->op == T_LDGV || in->op == T_LDSV,
       global = in->op == T_LDGV || in->op == T_STGV;
  const char *space = global ? (x->argwritten[in->imm] ? "global" : "global.nc")
                             : "shared";
  nm base = global ? global_addr(x, in->imm, in->a)
                    : ptx_shared_addr(x, in->a);
  char guard[32] = "";
  if (in->op != T_LDSV && in->b)
    snprintf(guard, sizeof guard, "@%s ", R(x, in->b).s);
  const uint32_t *l = in->list;
  for (int64_t off = 0; off < bytes; off += 16) {
    int64_t cb = bytes - off < 16 ? bytes - off : 16;
    uint32_t e0 = (uint32_t)(off / size);
    if (cb == 2) { /* one 16-bit element */
      if (load && *guard)
        ins(x, "mov.b16 %s, 0", R(x, l[e0]).s);
      if (load)
        ins(x, "%sld.%s.b16 %s, [%s+%lld]", guard, space, R(x, l[e0]).s,
            base.s, (long long)off);
      else
        ins(x, "%sst.%s.b16 [%s+%lld], %s", guard, space, base.s,
            (long long)off, R(x, l[e0]).s);
      continue;
    }
    int nw = (int)(cb / 4);
    nm w[4];
    for (int k = 0; k < nw; k++) {
      if (size == 4) {
        w[k] = R(x, l[e0 + k]);
      } else {
        w[k] = T(x, C_B32);
        if (!load)
          ptx_pack32(x, l + e0 + (4 / size) * k, t, w[k].s);
      }
      if (load && *guard)
        ins(x, "mov.b32 %s, 0", w[k].s);
    }
    wv_buf ops;
    wv_buf_init(&ops, x->ctx);
    for (int k = 0; k < nw; k++)
      wv_buf_printf(&ops, "%s%s", k ? ", " : "", w[k].s);
    char vec[16] = "";
    if (nw > 1)
      snprintf(vec, sizeof vec, ".v%d", nw);
    const char *open = nw > 1 ? "{" : "", *close = nw > 1 ? "}" : "";
    if (load)
      ins(x, "%sld.%s%s.b32 %s%s%s, [%s+%lld]", guard, space, vec, open,
          wv_buf_str(&ops), close, base.s, (long long)off);
    else
      ins(x, "%sst.%s%s.b32 [%s+%lld], %s%s%s", guard, space, vec, base.s,
          (long long)off, open, wv_buf_str(&ops), close);
    if (load && size == 2)
      for (int k = 0; k < nw; k++)
        ins(x, "mov.b32 {%s, %s}, %s", R(x, l[e0 + 2 * k]).s,
            R(x, l[e0 + 2 * k + 1]).s, w[k].s);
    /* 8-bit elements: byte j of each word, an i8 sign-extended into its
     * .b32, an 8-bit float zero-extended into its .b16 */
    for (int k = 0; load && size == 1 && k < nw; k++)
      for (int j = 0; j < 4; j++) {
        nm d = R(x, l[e0 + 4 * k + j]);
        if (t == TY_I8) {
          ins(x, "bfe.s32 %s, %s, %d, 8", d.s, w[k].s, 8 * j);
        } else {
          nm b = T(x, C_B32);
          ins(x, "bfe.u32 %s, %s, %d, 8", b.s, w[k].s, 8 * j);
          ins(x, "cvt.u16.u32 %s, %s", d.s, b.s);
        }
      }
  }
}

/* T_CPA: cp.async of 16 bytes, bypassing L1 (.cg), or of 8 or 4 through
 * L1 (.ca, the only form of those sizes); a masked-off copy is not issued.
 * A copy past an edge (its list predicate false) reads 0 bytes (the
 * src-size operand), which zero-fills them all, from the argument's first
 * element (an address that exists, for memory checkers). */
static void emit_cpa(px *x, const tir_instr *in) {
  nm off = R(x, in->b), size = {""};
  bool wide = ty(x, in->b) == TY_I64;
  if (in->nlist) {
    nm inside = R(x, in->list[0]);
    off = T(x, wide ? C_B64 : C_B32);
    size = T(x, C_B32);
    ins(x, "selp.b%s %s, %s, 0, %s", wide ? "64" : "32", off.s,
        R(x, in->b).s, inside.s);
    ins(x, "selp.b32 %s, %lld, 0, %s", size.s, (long long)in->imm2,
        inside.s);
  }
  nm src = global_addr_at(x, in->imm, off, wide);
  nm dst = ptx_shared_addr(x, in->a);
  char guard[32] = "";
  if (in->c)
    snprintf(guard, sizeof guard, "@%s ", R(x, in->c).s);
  ins(x, "%scp.async.%s.shared.global [%s], [%s], %lld%s%s", guard,
      in->imm2 == 16 ? "cg" : "ca", dst.s, src.s, (long long)in->imm2,
      in->nlist ? ", " : "", size.s);
}

/* T_LDSM: ldmatrix; each b32 result holds a lane's two 16-bit elements of
 * one matrix, low half first. */
static void emit_ldsm(px *x, const tir_instr *in) {
  nm addr = ptx_shared_addr(x, in->a);
  nm w[4];
  wv_buf ops;
  wv_buf_init(&ops, x->ctx);
  for (int64_t j = 0; j < in->imm; j++) {
    w[j] = T(x, C_B32);
    wv_buf_printf(&ops, "%s%s", j ? ", " : "", w[j].s);
  }
  ins(x, "ldmatrix.sync.aligned.m8n8.x%lld%s.shared.b16 {%s}, [%s]",
      (long long)in->imm, in->op == T_LDSMT ? ".trans" : "", wv_buf_str(&ops),
      addr.s);
  for (int64_t j = 0; j < in->imm; j++)
    ins(x, "mov.b32 {%s, %s}, %s", R(x, in->list[2 * j]).s,
        R(x, in->list[2 * j + 1]).s, w[j].s);
}

/* ---- mbarriers and tensor copies ------------------------------------------------------ */
static void guard_of(px *x, uint32_t pred, char guard[32]) {
  guard[0] = 0;
  if (pred)
    snprintf(guard, 32, "@%s ", R(x, pred).s);
}

/* T_MBINIT, T_MBARRIVE: mbarrier.init / arrive (.expect_tx) on the
 * barrier's 8 bytes; the arrival's state result is not kept (_). */
static void emit_mbar(px *x, const tir_instr *in) {
  if (!x->t->has_tma)
    unsupported(x, "mbarriers with transaction bytes (sm_90 and later)");
  char guard[32];
  guard_of(x, in->b, guard);
  nm addr = ptx_shared_addr(x, in->a);
  if (in->op == T_MBINIT)
    ins(x, "%smbarrier.init.shared::cta.b64 [%s], %lld", guard, addr.s,
        (long long)in->imm);
  else if (in->imm)
    ins(x, "%smbarrier.arrive.expect_tx.shared::cta.b64 _, [%s], %lld", guard,
        addr.s, (long long)in->imm);
  else if (in->imm2 == TIR_ARRIVE_CLUSTER) /* every workgroup's: mapa */
    for (int64_t r = 0; r < x->p->cluster; r++) {
      /* (the default semantics, release at the CTA's scope: measured on
       * the H100, .release.cluster on each arrival halved a 2-workgroup
       * cluster's GEMM and took a 4-workgroup one to a sixth, run oo) */
      nm at = T(x, C_B32);
      ins(x, "mapa.shared::cluster.u32 %s, %s, %lld", at.s, addr.s,
          (long long)r);
      ins(x, "%smbarrier.arrive.shared::cluster.b64 _, [%s]", guard, at.s);
    }
  else
    ins(x, "%smbarrier.arrive.shared::cta.b64 _, [%s]", guard, addr.s);
}

/* T_MBWAIT: try_wait.parity until the phase has completed (try_wait
 * suspends the thread for a while before it answers false). The retry
 * branch is not .uni: each thread reads its own answer. */
static void emit_mbwait(px *x, const tir_instr *in) {
  uint32_t idx = (uint32_t)(in - x->p->code.v);
  if (!x->t->has_tma)
    unsupported(x, "mbarrier waits by parity (sm_90 and later)");
  nm addr = ptx_shared_addr(x, in->a), done = T(x, C_PRED);
  if (in->c)
    ins(x, "@!%s bra.uni $Lwv_mbdone%u", R(x, in->c).s, idx);
  wv_buf_printf(&x->body, "$Lwv_mbwait%u:\n", idx);
  ins(x, "mbarrier.try_wait.parity.shared::cta.b64 %s, [%s], %s", done.s,
      addr.s, R(x, in->b).s);
  ins(x, "@!%s bra $Lwv_mbwait%u", done.s, idx);
  if (in->c)
    wv_buf_printf(&x->body, "$Lwv_mbdone%u:\n", idx);
}

/* T_TMA: cp.async.bulk.tensor from the tensor map parameter (its generic
 * address, %tm) at the coordinates, innermost first as PTX counts them,
 * completing its bytes on the mbarrier. */
static void emit_tma(px *x, const tir_instr *in) {
  if (!x->t->has_tma)
    unsupported(x, "tensor copies (cp.async.bulk.tensor: sm_90 and later)");
  char guard[32];
  guard_of(x, in->c, guard);
  nm dst = ptx_shared_addr(x, in->a), bar = ptx_shared_addr(x, in->b);
  wv_buf c;
  wv_buf_init(&c, x->ctx);
  for (uint32_t j = in->nlist; j-- > 0;)
    wv_buf_printf(&c, "%s%s", j + 1 < in->nlist ? ", " : "",
                  R(x, in->list[j]).s);
  if (in->imm2 == TIR_TMA_MULTICAST) /* to every workgroup of the cluster */
    ins(x,
        "%scp.async.bulk.tensor.%ud.shared::cluster.global.tile.mbarrier::"
        "complete_tx::bytes.multicast::cluster [%s], [%%tm%lld, {%s}], [%s], "
        "%lld",
        guard, in->nlist, dst.s, (long long)in->imm, wv_buf_str(&c), bar.s,
        (long long)((1 << x->p->cluster) - 1));
  else
    ins(x,
        "%scp.async.bulk.tensor.%ud.shared::cluster.global.tile.mbarrier::"
        "complete_tx::bytes [%s], [%%tm%lld, {%s}], [%s]",
        guard, in->nlist, dst.s, (long long)in->imm, wv_buf_str(&c), bar.s);
}

/* T_CLUSTERBAR: every thread of the cluster, arrive (release) then wait
 * (acquire). */
static void emit_clusterbar(px *x, const tir_instr *in) {
  (void)in;
  if (!x->t->has_tma)
    unsupported(x, "clusters (sm_90 and later)");
  ins(x, "barrier.cluster.arrive.release.aligned");
  ins(x, "barrier.cluster.wait.acquire.aligned");
}

/* T_TMAST: cp.async.bulk.tensor from shared memory to the tensor map's
 * tensor (its generic address, %tm) at the coordinates, innermost first,
 * in the thread's bulk group; one that adds, cp.reduce.async.bulk.tensor
 * with .add. */
static void emit_tmast(px *x, const tir_instr *in) {
  if (!x->t->has_tma)
    unsupported(x, "tensor stores (cp.async.bulk.tensor: sm_90 and later)");
  char guard[32];
  guard_of(x, in->c, guard);
  nm src = ptx_shared_addr(x, in->a);
  wv_buf c;
  wv_buf_init(&c, x->ctx);
  for (uint32_t j = in->nlist; j-- > 0;)
    wv_buf_printf(&c, "%s%s", j + 1 < in->nlist ? ", " : "",
                  R(x, in->list[j]).s);
  bool add = in->imm2 == TIR_TMAST_ADD;
  ins(x,
      "%scp%s.async.bulk.tensor.%ud.global.shared::cta%s.tile.bulk_group "
      "[%%tm%lld, {%s}], [%s]",
      guard, add ? ".reduce" : "", in->nlist, add ? ".add" : "",
      (long long)in->imm, wv_buf_str(&c), src.s);
}

/* T_FENCE, T_FENCEPX and the tensor stores' groups (T_BULKCOMMIT,
 * T_BULKWAIT, T_BULKWAITR): their formats (tir.h), on targets that have
 * the async proxy. */
static void emit_fence(px *x, const tir_instr *in) {
  if (!x->t->has_tma)
    unsupported(x, "proxy fences (sm_90 and later)");
  put_form(x, in, forms[in->op].ptx, NULL);
}

/* ---- warp-collective operations ------------------------------------------------------ */
static void emit_shfl(px *x, const tir_instr *in) {
  nm d = R(x, in->dst), a = R(x, in->a);
  const char *shfl = "shfl.sync.bfly.b32 %s, %s, %lld, 0x1f, 0xffffffff";
  switch (in->ty) {
  case TY_I32:
  case TY_F32: ins(x, shfl, d.s, a.s, (long long)in->imm); break;
  case TY_PRED: {
    nm t = pred_as_i32(x, in->a);
    ins(x, shfl, t.s, t.s, (long long)in->imm);
    ins(x, "setp.ne.s32 %s, %s, 0", d.s, t.s);
    break;
  }
  default: {
    nm t = T(x, C_B32), hi = T(x, C_B16);
    ins(x, "mov.b32 %s, {%s, %s}", t.s, a.s, a.s);
    ins(x, shfl, t.s, t.s, (long long)in->imm);
    ins(x, "mov.b32 {%s, %s}, %s", d.s, hi.s, t.s);
    break;
  }
  }
}

/* ---- instructions ------------------------------------------------------------------- */
static void emit_const(px *x, const tir_instr *in) {
  nm d = R(x, in->dst);
  switch (in->ty) {
  case TY_PRED: ins(x, "mov.pred %s, %d", d.s, in->imm != 0); break;
  case TY_I32:
    if (in->imm < INT32_MIN || in->imm > INT32_MAX)
      unsupported(x, "an integer constant beyond 32 bits");
    ins(x, "mov.b32 %s, %lld", d.s, (long long)in->imm);
    break;
  case TY_I64: ins(x, "mov.b64 %s, %lld", d.s, (long long)in->imm); break;
  case TY_F16:
    ins(x, "mov.b16 %s, 0x%04X", d.s, (unsigned)wv_f64_to_f16(in->fimm));
    break;
  case TY_BF16:
    ins(x, "mov.b16 %s, 0x%04X", d.s, (unsigned)wv_f64_to_bf16(in->fimm));
    break;
  case TY_E4M3:
    ins(x, "mov.b16 %s, 0x%04X", d.s, (unsigned)wv_f64_to_e4m3(in->fimm));
    break;
  case TY_E5M2:
    ins(x, "mov.b16 %s, 0x%04X", d.s, (unsigned)wv_f64_to_e5m2(in->fimm));
    break;
  case TY_I8: ins(x, "mov.b32 %s, %lld", d.s, (long long)in->imm); break;
  default: ins(x, "mov.b32 %s, %s", d.s, F32((float)in->fimm).s); break;
  }
}

static void emit_loc(px *x, const tir_instr *in) {
  if (!in->loc.line || !in->loc.file)
    return;
  if (x->lfile == in->loc.file && x->lline == in->loc.line &&
      x->lcol == in->loc.col)
    return;
  uint32_t f = 0;
  while (f < x->files.n && strcmp(x->files.v[f], in->loc.file) != 0)
    f++;
  if (f == x->files.n)
    vec_push(x->ctx, &x->files, in->loc.file);
  wv_buf_printf(&x->body, "\t.loc %u %u %u\n", f + 1, in->loc.line,
                in->loc.col);
  x->lfile = in->loc.file;
  x->lline = in->loc.line;
  x->lcol = in->loc.col;
}

static void emit_and(px *x, const tir_instr *in) {
  if (in->ty != TY_PRED)
    unsupported(x, "'and' of non-predicates");
  put_form(x, in, forms[T_AND].ptx, NULL);
}

/* T_BAR: the workgroup's barrier, or a named one of its thread count. */
static void emit_bar(px *x, const tir_instr *in) {
  if (in->imm2)
    ins(x, "bar.sync %lld, %lld", (long long)in->imm, (long long)in->imm2);
  else
    ins(x, "bar.sync %lld", (long long)in->imm);
}

/* Turns: bar.sync / bar.arrive on the barrier id in a register; a pass
 * first commits the wgmmas its section issued (ptx_mma.c's open_groups),
 * so that they are queued whole before the next consumer's. */
static void emit_turn(px *x, const tir_instr *in) {
  if (in->op == T_TURNPASS && x->commits && x->commits[in - x->p->code.v])
    ins(x, "wgmma.commit_group.sync.aligned");
  char guard[32];
  guard_of(x, in->op == T_TURNPASS ? in->b : 0, guard);
  ins(x, "%sbar.%s %s, %lld", guard,
      in->op == T_TURNWAIT ? "sync" : "arrive", R(x, in->a).s,
      (long long)in->imm2);
}

/* A role region: a uniform branch past it (the predicate is uniform
 * across each warp, tir.h). Labels are numbered by the T_ENDIF. */
static void emit_if(px *x, const tir_instr *in) {
  ins(x, "@!%s bra.uni $Lwv_endif%u", R(x, in->a).s, in->match);
}

static void emit_endif(px *x, const tir_instr *in) {
  wv_buf_printf(&x->body, "$Lwv_endif%u:\n", (uint32_t)(in - x->p->code.v));
}

/* setmaxnreg: sm_90a (and later 'a' targets) only. */
static void emit_setmaxnreg(px *x, const tir_instr *in) {
  if (!x->t->has_wgmma)
    unsupported(x, "setmaxnreg (warp specialization needs sm_90a)");
  put_form(x, in, forms[in->op].ptx, NULL);
}

/* Loops: a counter, a label and a uniform branch; bounds in registers are
 * uniform across the workgroup (tir.h). Labels are numbered by the
 * instruction. */
static void emit_loop(px *x, const tir_instr *in) {
  nm c = R(x, in->dst);
  if (in->a)
    ins(x, "mov.b32 %s, %s", c.s, R(x, in->a).s);
  else
    ins(x, "mov.b32 %s, 0", c.s);
  if (in->b) {
    nm p = T(x, C_PRED);
    ins(x, "setp.ge.s32 %s, %s, %s", p.s, c.s, R(x, in->b).s);
    ins(x, "@%s bra.uni $Lwv_end%u", p.s, in->match);
  } else if (in->imm <= 0) {
    ins(x, "bra.uni $Lwv_end%u", in->match);
  }
  wv_buf_printf(&x->body, "$Lwv_loop%u:\n", (uint32_t)(in - x->p->code.v));
}

static void emit_endloop(px *x, const tir_instr *in) {
  nm p = T(x, C_PRED), c = R(x, in->dst);
  ins(x, "add.s32 %s, %s, 1", c.s, c.s);
  if (in->b)
    ins(x, "setp.lt.s32 %s, %s, %s", p.s, c.s, R(x, in->b).s);
  else
    ins(x, "setp.lt.s32 %s, %s, %lld", p.s, c.s, (long long)in->imm);
  ins(x, "@%s bra.uni $Lwv_loop%u", p.s, in->match);
  wv_buf_printf(&x->body, "$Lwv_end%u:\n", (uint32_t)(in - x->p->code.v));
}

/* The ops printed by code of their own; the others by their format
 * (tir.h), arithmetic ones by register type (emit_float_op, emit_int_op). */
static void (*const emit_code[T__COUNT])(px *, const tir_instr *) = {
    [T_CONST] = emit_const,   [T_SETP] = emit_setp,   [T_AND] = emit_and,
    [T_SELP] = emit_selp,     [T_CVT] = emit_cvt,     [T_LDG] = emit_ldg,
    [T_STG] = emit_stg,       [T_LDS] = emit_lds,     [T_STS] = emit_sts,
    [T_LDSM] = emit_ldsm,     [T_LDSMT] = emit_ldsm,  [T_LDGV] = emit_vector,
    [T_LDSV] = emit_vector,   [T_STSV] = emit_vector, [T_CPA] = emit_cpa,
    [T_STGV] = emit_vector,   [T_REDG] = emit_redg,
    [T_SHFL] = emit_shfl,     [T_MMA] = ptx_emit_mma, [T_WGMMA] = ptx_emit_wgmma,
    [T_LOOP] = emit_loop,     [T_ENDLOOP] = emit_endloop,
    [T_MBINIT] = emit_mbar,   [T_MBARRIVE] = emit_mbar, [T_MBWAIT] = emit_mbwait,
    [T_TMA] = emit_tma,       [T_FENCE] = emit_fence,   [T_BAR] = emit_bar,
    [T_CLUSTERBAR] = emit_clusterbar,
    [T_TURNWAIT] = emit_turn, [T_TURNPASS] = emit_turn,
    [T_TMAST] = emit_tmast,   [T_FENCEPX] = emit_fence, [T_BULKCOMMIT] = emit_fence,
    [T_BULKWAIT] = emit_fence, [T_BULKWAITR] = emit_fence,
    [T_WGWAIT] = ptx_emit_wgwait, [T_WGCOMMIT] = ptx_emit_wgcommit, [T_IF] = emit_if,     [T_ENDIF] = emit_endif,
    [T_REGINC] = emit_setmaxnreg, [T_REGDEC] = emit_setmaxnreg};

static void emit_instr(px *x, const tir_instr *in) {
  x->in = in;
  memset(x->ntmp, 0, sizeof x->ntmp);
  emit_loc(x, in);
  ptx_wgmma_fence_rule(x, in);
  if (emit_code[in->op])
    emit_code[in->op](x, in);
  else if (!arithmetic(in->op))
    put_form(x, in, forms[in->op].ptx, NULL);
  else if (tir_ty_is_float(in->ty))
    emit_float_op(x, in);
  else if (in->ty == TY_I32 || in->ty == TY_I64)
    emit_int_op(x, in);
  else
    unsupported(x, "an operation on predicates");
  if (x->zero)
    ptx_zero_rule(x, in);
}

/* ---- the module --------------------------------------------------------------------- */
/* A PTX identifier for a kernel's name: a letter first, else '_' and at
 * least one more character; not WARP_SZ, the one predefined identifier
 * without '%' (ptxas refuses `.entry WARP_SZ` and `.entry _`; opcodes and
 * directive words are fine). Such names get a '_' more. */
static void put_ident(wv_buf *b, const char *s) {
  const char *s0 = s;
  if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || *s == '_'))
    wv_buf_puts(b, "_");
  for (; *s; s++) {
    char c = *s;
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
              (c >= '0' && c <= '9') || c == '_' || c == '$';
    wv_buf_add(b, ok ? &c : "_", 1);
  }
  if (!strcmp(s0, "WARP_SZ") || !strcmp(s0, "_") || !*s0)
    wv_buf_puts(b, "_");
}

void tir_ptx_entry_name(const char *name, wv_buf *out) {
  put_ident(out, name);
}

static void put_string(wv_buf *b, const char *s) {
  wv_buf_puts(b, "\"");
  for (; *s; s++) {
    if (*s == '"' || *s == '\\')
      wv_buf_puts(b, "\\");
    if ((unsigned char)*s >= 0x20)
      wv_buf_add(b, s, 1);
  }
  wv_buf_puts(b, "\"");
}

void tir_emit_ptx(wavec_ctx *ctx, const tir_prog *p, const char *name,
                  wavec_loc loc, const wv_target *t, wv_buf *out) {
  px x = {0};
  x.ctx = ctx;
  x.kloc = loc;
  x.p = p;
  x.t = t;
  wv_buf_init(&x.body, ctx);
  wv_assert(ctx, t && t->ptx_target);
  /* errors about the mma type or the lanes: at their hardware entry */
  if (p->mma_loc.line)
    x.kloc = p->mma_loc;
  if (p->mma >= 0) {
    const wv_mma_info *mi = wv_mma_info_get((wavec_mma_kind)p->mma);
    if (mi && strcmp(mi->vendor, "nvidia") != 0) {
      wv_buf m;
      wv_buf_init(&m, ctx);
      wv_buf_printf(&m, "mma type %s is AMD MFMA (64 lanes), which NVIDIA "
                        "GPUs do not have; compile with --hardware "
                        "threads_per_wave=32,mma=F32_16x8x16_F16",
                    mi->name);
      unsupported(&x, wv_buf_str(&m));
    }
    if (mi && !wv_target_has_mma(t, (wavec_mma_kind)p->mma)) {
      if (mi->lanes == 128)
        unsupported(&x, "wgmma (a warpgroup mma) needs --target sm_90a");
      wv_buf m;
      wv_buf_init(&m, ctx);
      wv_buf_printf(&m, "mma type %s needs sm_%d or newer (--target sm_%d)",
                    mi->name, mi->sm, mi->sm);
      unsupported(&x, wv_buf_str(&m));
    }
  }
  bool warpgroup = wv_mma_is_warpgroup((wavec_mma_kind)p->mma);
  int64_t threads = p->block[0] * p->block[1] * p->block[2];
  x.kloc = p->lanes_loc.line ? p->lanes_loc : loc;
  if (p->lanes != 32 && !(p->lanes == 128 && warpgroup))
    unsupported(&x, "a wave must be a warp of 32 lanes, or a warpgroup of "
                    "128 for wgmma (64-lane waves are AMD's and run in the "
                    "simulator only)");
  x.kloc = loc;
  for (uint32_t i = 0; i < p->code.n; i++) /* shuffles stay within a warp */
    if (p->code.v[i].op == T_SHFL && p->code.v[i].imm >= 32) {
      x.in = &p->code.v[i];
      unsupported(&x, "a shuffle across the warps of a warpgroup");
    }
  x.in = NULL;
  if (threads > t->max_threads)
    unsupported(&x, "more threads per block than the target allows");
  if (p->smem_bytes > t->smem_optin_bytes) {
    wv_buf m;
    wv_buf_init(&m, ctx);
    wv_buf_printf(&m,
                  "more shared memory than a block can have: %lld bytes, "
                  "where %s allows %lld (fewer stages, hardware(stages), "
                  "or smaller tiles)",
                  (long long)p->smem_bytes, t->name,
                  (long long)t->smem_optin_bytes);
    unsupported(&x, wv_buf_str(&m));
  }
  /* the launch limits of every NVIDIA GPU since sm_30 */
  static const int64_t max_grid[3] = {INT32_MAX, 65535, 65535};
  for (int a = 0; a < 3; a++)
    if (p->grid[a] > max_grid[a])
      unsupported(&x, "a grid of more workgroups than a launch allows "
                      "(2^31-1 along x, 65535 along y and z)");
  analyse(&x);
  for (uint32_t r = 1; r < p->regs.n; r++) {
    int c = ty_class[p->regs.v[r]];
    if (r + 1 > x.maxreg[c])
      x.maxreg[c] = r + 1;
  }
  for (uint32_t i = 0; i < p->code.n; i++)
    emit_instr(&x, &p->code.v[i]);
  x.in = NULL;

  /* header: PTX ISA 8.0, or what the mma needs (fp8 mma.sync: 8.4) */
  const wv_mma_info *kmi = wv_mma_info_get((wavec_mma_kind)p->mma);
  int isa = kmi && kmi->ptx_isa > 80 ? kmi->ptx_isa : 80;
  isa = x.isa > isa ? x.isa : isa; /* what an instruction needed */
  wv_buf_printf(out,
                "//\n// Generated by wavec %s: kernel '%s' for %s\n//\n\n"
                ".version %d.%d\n.target %s\n.address_size 64\n\n",
                wavec_version(), name, t->name, isa / 10, isa % 10,
                t->ptx_target);
  for (uint32_t f = 0; f < x.files.n; f++) {
    wv_buf_printf(out, ".file %u ", f + 1);
    put_string(out, x.files.v[f]);
    wv_buf_puts(out, "\n");
  }
  if (x.files.n)
    wv_buf_puts(out, "\n");
  bool dynamic = p->smem_bytes > TIR_PTX_STATIC_SMEM_MAX;
  /* swizzled tiles (tir.h) need 1024-byte alignment */
  int align = warpgroup ? 1024 : 16;
  if (dynamic)
    wv_buf_printf(out, ".extern .shared .align %d .b8 wv_smem[];\n\n", align);
  else if (p->smem_bytes)
    wv_buf_printf(out, ".shared .align %d .b8 wv_smem[%lld];\n\n", align,
                  (long long)p->smem_bytes);
  wv_buf_puts(out, ".visible .entry ");
  put_ident(out, name);
  wv_buf_puts(out, "(");
  for (uint32_t i = 0; i < p->args.n; i++) {
    wv_buf_puts(out, i ? ",\n\t.param .u64 " : "\n\t.param .u64 ");
    put_ident(out, name);
    wv_buf_printf(out, "_param_%u", i);
  }
  /* tensor maps: 128 bytes each, 64-aligned, after the pointers */
  for (uint32_t i = 0; i < p->tmaps.n; i++) {
    wv_buf_puts(out, ",\n\t.param .align 64 .b8 ");
    put_ident(out, name);
    wv_buf_printf(out, "_tmap_%u[128]", i);
  }
  /* run-time sizes (dynamic dims), after the tensor maps */
  for (uint32_t i = 0; i < p->sizes.n; i++) {
    wv_buf_puts(out, ",\n\t.param .u32 ");
    put_ident(out, name);
    wv_buf_printf(out, "_size_%u", i);
  }
  wv_buf_printf(out, "\n)\n.reqntid %lld, %lld, %lld\n",
                (long long)p->block[0], (long long)p->block[1],
                (long long)p->block[2]);
  if (p->wgs_per_sm)
    wv_buf_printf(out, ".minnctapersm %lld\n", (long long)p->wgs_per_sm);
  if (p->cluster > 1) /* a launch takes the clusters from the kernel */
    wv_buf_printf(out, ".reqnctapercluster %lld, 1, 1\n",
                  (long long)p->cluster);
  if (p->maxnreg) /* fixed: setmaxnreg needs the count at entry */
    wv_buf_printf(out, ".maxnreg %lld\n", (long long)p->maxnreg);
  wv_buf_puts(out, "{\n");
  for (int c = 0; c < C_COUNT; c++) {
    if (x.maxreg[c])
      wv_buf_printf(out, "\t.reg %s %s<%u>;\n", class_decl[c], reg_prefix[c],
                    x.maxreg[c]);
    if (x.maxtmp[c])
      wv_buf_printf(out, "\t.reg %s %s<%u>;\n", class_decl[c], tmp_prefix[c],
                    x.maxtmp[c]);
  }
  if (p->args.n)
    wv_buf_printf(out, "\t.reg .b64 %%ga<%u>;\n", p->args.n);
  if (p->smem_bytes)
    wv_buf_puts(out, "\t.reg .b32 %smem;\n");
  if (p->tmaps.n)
    wv_buf_printf(out, "\t.reg .b64 %%tm<%u>;\n", p->tmaps.n);
  if (p->sizes.n)
    wv_buf_printf(out, "\t.reg .b32 %%sz<%u>;\n", p->sizes.n);
  if (x.need_hz)
    wv_buf_puts(out, "\t.reg .b16 %hz;\n");
  if (x.nwa)
    wv_buf_printf(out, "\t.reg .b32 %%wa<%u>;\n", x.nwa);
  if (x.nwd)
    wv_buf_printf(out, "\t.reg .b64 %%wd<%u>;\n", x.nwd);
  wv_buf_puts(out, "\n");
  for (uint32_t i = 0; i < p->args.n; i++) {
    wv_buf_printf(out, "\tld.param.u64 %%ga%u, [", i);
    put_ident(out, name);
    wv_buf_printf(out, "_param_%u];\n\tcvta.to.global.u64 %%ga%u, %%ga%u;\n",
                  i, i, i);
  }
  for (uint32_t i = 0; i < p->tmaps.n; i++) {
    wv_buf_printf(out, "\tmov.u64 %%tm%u, ", i);
    put_ident(out, name);
    wv_buf_printf(out, "_tmap_%u;\n\tcvta.param.u64 %%tm%u, %%tm%u;\n", i, i,
                  i);
  }
  for (uint32_t i = 0; i < p->sizes.n; i++) {
    wv_buf_printf(out, "\tld.param.u32 %%sz%u, [", i);
    put_ident(out, name);
    wv_buf_printf(out, "_size_%u];\n", i);
  }
  if (p->smem_bytes)
    wv_buf_puts(out, "\tmov.u32 %smem, wv_smem;\n");
  if (x.need_hz)
    wv_buf_puts(out, "\tmov.b16 %hz, 0;\n");
  wv_buf_add(out, x.body.s ? x.body.s : "", x.body.n);
  wv_buf_puts(out, "\tret;\n}\n");
}

wavec_status wavec_emit_ptx(wavec_kernel *pk, const char *target,
                            const char **ptx, size_t *len) {
  if (!pk || !ptx)
    return wv_null_param(pk ? pk->k.ctx : NULL, "wavec_emit_ptx", "ptx");
  wv_kernel *k = &pk->k;
  wavec_ctx *ctx = k->ctx;
  if (ctx->status != WAVEC_OK)
    return ctx->status;
  WV_GUARD(ctx, ctx->status);
  ctx->at = k->loc;
  const wv_target *t = wv_target_get(target);
  if (!t || !t->ptx_target)
    wv_fail(ctx, D_INVALID, k->loc,
            "unknown PTX target '%s' (choose sm_80, sm_89, sm_90 or sm_90a)",
            target ? target : "(null)");
  if (!k->tir)
    wv_fail(ctx, D_INVALID, k->loc,
            "kernel '%s' is not compiled (call wavec_compile first)",
            k->name);
  wv_buf out;
  wv_buf_init(&out, ctx);
  tir_emit_ptx(ctx, k->tir, k->name, k->loc, t, &out);
  *ptx = wv_buf_str(&out);
  if (len)
    *len = out.n;
  ctx->at = (wavec_loc){0};
  WV_UNGUARD(ctx);
  return WAVEC_OK;
}

wavec_status wavec_launch_dims(wavec_kernel *pk, uint32_t grid[3],
                               uint32_t block[3], size_t *smem_bytes) {
  if (!pk)
    return WAVEC_ERR_INVALID;
  wv_kernel *k = &pk->k;
  if (!k->tir)
    return wv_error(k->ctx, D_INVALID, k->loc,
                    "kernel '%s' is not compiled (call wavec_compile first)",
                    k->name);
  /* along a dynamic dim's axis, from its run-time size (0 until given) */
  int64_t g[3];
  const char *why = tir_grid(k->ctx, k->tir, k->run_size, g);
  if (why)
    return wv_error(k->ctx, D_UNSUPPORTED, k->loc, "the sizes give %s", why);
  for (int d = 0; d < 3; d++) {
    if (grid)
      grid[d] = (uint32_t)g[d];
    if (block)
      block[d] = (uint32_t)k->tir->block[d];
  }
  if (smem_bytes)
    *smem_bytes = (size_t)k->tir->smem_bytes;
  return WAVEC_OK;
}
