/* Every thread-program operation on the GPU against the simulator, which is
 * its specification (tir.h, sim.c). A hand-built thread program applies
 * each op, for each register type it takes, to fresh random inputs with
 * the awkward values mixed in (negative dividends and divisors, NaN, ±inf,
 * ±0, subnormals, f16 overflow, ties), and stores every result in its own
 * output row; the program runs in the simulator and through the PTX
 * printer on the GPU, and each row is compared:
 *  - exactly (as values: NaN equals NaN, -0 equals +0) for integer ops,
 *    conversions, comparisons, selection, shuffles, memory, loops and the
 *    correctly rounded float ops (+ - * / sqrt rcp min max neg abs, and
 *    f32 fma: the error of a product, x y - round(x y), is exact only if
 *    the fma rounds once);
 *  - within a few ulp of the row's type for the transcendentals, which the
 *    simulator computes exactly and the GPU approximates (ptx.c).
 * Prints one line per failing row and a summary; exit status 0 when every
 * row matches, 1 when some row does not, 2 when the GPU run could not be
 * made (no driver or device: the message says which).
 *
 * Built and run by tests/gpu/run.sh: cc tests/gpu/ops.c wavec-internal.a
 * (the build's archive of every object, internal names included).
 * `ops --ptx FILE` also writes the program's PTX (for ptxas). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "ir/ir.h"
#include "support/half.h"
#include "tir/tir.h"

enum { G = 4, BLOCK = 128, N = G * BLOCK, MAXROWS = 256 };
enum { A_XI, A_YI, A_XF, A_YF, A_CF, A_OF, A_OI, NARGS };

typedef struct row {
  const char *what;
  int is_int;
  tir_ty ty;   /* the type the result was rounded to */
  double ulps; /* 0: exact */
} row;

typedef struct pb {
  wavec_ctx *ctx;
  tir_prog *p;
  uint32_t g;          /* global thread index */
  row rows[2][MAXROWS]; /* [0] float rows, [1] int rows */
  int nrows[2];
} pb;

static uint32_t reg(pb *b, tir_ty ty) {
  vec_push(b->ctx, &b->p->regs, ty);
  return b->p->regs.n - 1;
}

static tir_instr *emit(pb *b, tir_op op, tir_ty ty, uint32_t dst, uint32_t a,
                       uint32_t bb, uint32_t c, int64_t imm) {
  tir_instr in = {.op = op, .ty = ty, .dst = dst, .a = a, .b = bb, .c = c,
                  .imm = imm,
                  .loc = {"ops", (uint32_t)(b->nrows[0] + b->nrows[1] + 1), 1}};
  vec_push(b->ctx, &b->p->code, in);
  return &b->p->code.v[b->p->code.n - 1];
}

static uint32_t op(pb *b, tir_op o, tir_ty ty, uint32_t a, uint32_t bb) {
  uint32_t d = reg(b, o == T_SETP ? TY_PRED : ty);
  emit(b, o, ty, d, a, bb, 0, 0);
  return d;
}

static uint32_t icst(pb *b, int64_t v) {
  uint32_t d = reg(b, TY_I32);
  emit(b, T_CONST, TY_I32, d, 0, 0, 0, v);
  return d;
}

static uint32_t fcst(pb *b, tir_ty ty, double v) {
  uint32_t d = reg(b, ty);
  emit(b, T_CONST, ty, d, 0, 0, 0, 0)->fimm = v;
  return d;
}

static uint32_t cvt(pb *b, tir_ty to, uint32_t a) {
  uint32_t d = reg(b, to);
  emit(b, T_CVT, to, d, a, 0, 0, 0);
  return d;
}

static uint32_t setp(pb *b, tir_ty ty, int cmp, uint32_t a, uint32_t c) {
  uint32_t d = reg(b, TY_PRED);
  emit(b, T_SETP, ty, d, a, c, 0, cmp);
  return d;
}

/* Stores v in the next row of the float (f32) or int (i32) output. */
static void out(pb *b, uint32_t v, const char *what, tir_ty rounded,
                double ulps) {
  tir_ty vt = b->p->regs.v[v];
  int is_int = vt == TY_I32 || vt == TY_PRED;
  if (vt == TY_PRED) { /* selp: a predicate from a cvt may hold any
                        * non-zero value in the simulator */
    uint32_t i = reg(b, TY_I32);
    emit(b, T_SELP, TY_I32, i, v, icst(b, 1), icst(b, 0), 0);
    v = i;
  }
  int r = b->nrows[is_int]++;
  if (r >= MAXROWS)
    abort();
  b->rows[is_int][r] = (row){what, is_int, rounded, ulps};
  uint32_t off = op(b, T_ADD, TY_I32, b->g, icst(b, (int64_t)r * N));
  emit(b, T_STG, vt, 0, off, v, 0, is_int ? A_OI : A_OF);
}

static const char *const fop_names[] = {"add", "sub", "mul", "div", "min",
                                        "max"};
static const tir_op fops[] = {T_ADD, T_SUB, T_MUL, T_DIV, T_MIN, T_MAX};
static const char *const un_names[] = {"neg",  "abs",   "rcp",  "sqrt",
                                       "exp2", "exp",   "log2", "rsqrt",
                                       "tanh"};
static const tir_op uns[] = {T_NEG,  T_ABS,  T_RCP,   T_SQRT, T_EXP2,
                             T_EXP,  T_LOG2, T_RSQRT, T_TANH};
enum { FIRST_APPROX = 4 }; /* uns[i] for i >= this are approximations */

static char *name(pb *b, const char *a, const char *c, const char *d) {
  wv_buf s;
  wv_buf_init(&s, b->ctx);
  wv_buf_printf(&s, "%s %s%s%s", a, c, d ? " " : "", d ? d : "");
  return (char *)wv_buf_str(&s);
}

static void float_ops(pb *b, tir_ty ty, uint32_t x, uint32_t y) {
  const char *tn = tir_ty_names[ty];
  double approx = ty == TY_F32 ? 4 : 1;
  for (size_t i = 0; i < 6; i++) {
    uint32_t r = op(b, fops[i], ty, x, y);
    out(b, ty == TY_F32 ? r : cvt(b, TY_F32, r), name(b, tn, fop_names[i], 0),
        ty, 0);
  }
  for (size_t i = 0; i < 9; i++) {
    uint32_t r = op(b, uns[i], ty, x, 0);
    out(b, ty == TY_F32 ? r : cvt(b, TY_F32, r), name(b, tn, un_names[i], 0),
        ty, i >= FIRST_APPROX ? approx : 0);
  }
  if (ty == TY_F32) { /* fma (pass contract): rounded once, so x y - the
                       * rounded product is its rounding error, exactly */
    uint32_t f = reg(b, ty), e = reg(b, ty);
    emit(b, T_FMA, ty, f, x, y, x, 0);
    out(b, f, "f32 fma", ty, 0);
    emit(b, T_FMA, ty, e, x, y,
         op(b, T_NEG, ty, op(b, T_MUL, ty, x, y), 0), 0);
    out(b, e, "f32 fma product error", ty, 0);
  }
  static const char *const cmps[] = {"gt", "lt", "ge", "le", "eq", "ne"};
  for (int c = 0; c < 6; c++)
    out(b, setp(b, ty, c, x, y), name(b, tn, "setp", cmps[c]), TY_I32, 0);
  uint32_t p = setp(b, ty, TIR_CMP_LT, x, y);
  uint32_t s = reg(b, ty);
  emit(b, T_SELP, ty, s, p, x, y, 0);
  out(b, ty == TY_F32 ? s : cvt(b, TY_F32, s), name(b, tn, "selp", 0), ty, 0);
  for (int m = 1; m < 32; m *= 3) {
    uint32_t d = reg(b, ty);
    emit(b, T_SHFL, ty, d, x, 0, 0, m);
    out(b, ty == TY_F32 ? d : cvt(b, TY_F32, d), name(b, tn, "shfl", 0), ty,
        0);
  }
}

static void int_ops(pb *b, uint32_t x, uint32_t y) {
  static const int64_t divisors[] = {1, 2, 8, 64, 3, 7, 12, -1, -7, -8};
  uint32_t ax = op(b, T_ABS, TY_I32, x, 0); /* proven non-negative */
  for (size_t i = 0; i < sizeof divisors / sizeof *divisors; i++) {
    uint32_t c = icst(b, divisors[i]);
    out(b, op(b, T_DIV, TY_I32, x, c), "i32 div by constant", TY_I32, 0);
    out(b, op(b, T_MOD, TY_I32, x, c), "i32 mod by constant", TY_I32, 0);
    out(b, op(b, T_DIV, TY_I32, ax, c), "i32 div of |x|", TY_I32, 0);
    out(b, op(b, T_MOD, TY_I32, ax, c), "i32 mod of |x|", TY_I32, 0);
  }
  out(b, op(b, T_DIV, TY_I32, x, y), "i32 div by register", TY_I32, 0);
  out(b, op(b, T_MOD, TY_I32, x, y), "i32 mod by register", TY_I32, 0);
  /* the kernel's own / and %: truncated, as C */
  for (size_t i = 0; i < sizeof divisors / sizeof *divisors; i++) {
    uint32_t c = icst(b, divisors[i]);
    out(b, op(b, T_TDIV, TY_I32, x, c), "i32 tdiv by constant", TY_I32, 0);
    out(b, op(b, T_TREM, TY_I32, x, c), "i32 trem by constant", TY_I32, 0);
  }
  out(b, op(b, T_TDIV, TY_I32, x, y), "i32 tdiv by register", TY_I32, 0);
  out(b, op(b, T_TREM, TY_I32, x, y), "i32 trem by register", TY_I32, 0);
  /* logical shifts (a sum's lane masks), by constants and a register in
   * [0, 31] */
  static const int64_t shifts[] = {0, 1, 5, 31};
  for (size_t i = 0; i < sizeof shifts / sizeof *shifts; i++)
    out(b, op(b, T_SHR, TY_I32, x, icst(b, shifts[i])), "i32 shr by constant",
        TY_I32, 0);
  out(b, op(b, T_SHR, TY_I32, x, op(b, T_MOD, TY_I32, y, icst(b, 32))),
      "i32 shr by register", TY_I32, 0);
  static const tir_op iops[] = {T_ADD, T_SUB, T_MUL, T_MIN, T_MAX};
  for (size_t i = 0; i < 5; i++)
    out(b, op(b, iops[i], TY_I32, x, y), "i32 binary", TY_I32, 0);
  out(b, op(b, T_NEG, TY_I32, x, 0), "i32 neg", TY_I32, 0);
  out(b, ax, "i32 abs", TY_I32, 0);
  for (int c = 0; c < 6; c++)
    out(b, setp(b, TY_I32, c, x, y), "i32 setp", TY_I32, 0);
  uint32_t p = setp(b, TY_I32, TIR_CMP_GT, x, y),
           q = setp(b, TY_I32, TIR_CMP_GT, x, icst(b, 0));
  uint32_t s = reg(b, TY_I32);
  emit(b, T_SELP, TY_I32, s, p, x, y, 0);
  out(b, s, "i32 selp", TY_I32, 0);
  out(b, op(b, T_AND, TY_PRED, p, q), "pred and", TY_I32, 0);
  uint32_t ps = reg(b, TY_PRED);
  emit(b, T_SELP, TY_PRED, ps, p, q, setp(b, TY_I32, TIR_CMP_LT, y,
                                          icst(b, 0)), 0);
  out(b, ps, "pred selp", TY_I32, 0);
  uint32_t psh = reg(b, TY_PRED);
  emit(b, T_SHFL, TY_PRED, psh, p, 0, 0, 3);
  out(b, psh, "pred shfl", TY_I32, 0);
  for (int m = 1; m < 32; m *= 2) {
    uint32_t d = reg(b, TY_I32);
    emit(b, T_SHFL, TY_I32, d, x, 0, 0, m);
    out(b, d, "i32 shfl", TY_I32, 0);
  }
}

static void conversions(pb *b, uint32_t xi, uint32_t xf, uint32_t cf) {
  static const tir_ty fl[] = {TY_F16, TY_BF16, TY_F32};
  for (int i = 0; i < 3; i++) {
    const char *tn = tir_ty_names[fl[i]];
    uint32_t h = cvt(b, fl[i], xf);
    out(b, cvt(b, TY_F32, h), name(b, "cvt f32 ->", tn, 0), fl[i], 0);
    out(b, cvt(b, TY_F32, cvt(b, fl[i], xi)), name(b, "cvt i32 ->", tn, 0),
        fl[i], 0);
    out(b, cvt(b, TY_I32, cvt(b, fl[i], cf)), name(b, "cvt ->", tn, "-> i32"),
        TY_I32, 0);
    out(b, cvt(b, TY_PRED, cvt(b, fl[i], cf)),
        name(b, "cvt ->", tn, "-> pred"), TY_I32, 0);
    uint32_t p = setp(b, TY_F32, TIR_CMP_GT, cf, fcst(b, TY_F32, 0));
    out(b, cvt(b, TY_F32, cvt(b, fl[i], p)), name(b, "cvt pred ->", tn, 0),
        fl[i], 0);
    for (int j = 0; j < 3; j++)
      out(b, cvt(b, TY_F32, cvt(b, fl[j], h)),
          name(b, "cvt", tn, tir_ty_names[fl[j]]), fl[j], 0);
    out(b, fcst(b, fl[i], 0.1), name(b, "const 0.1", tn, 0), fl[i], 0);
    out(b, fcst(b, fl[i], -INFINITY), name(b, "const -inf", tn, 0), fl[i], 0);
    /* a 16-bit register stored straight into the f32 output */
    out(b, h, name(b, "store", tn, "into f32"), fl[i], 0);
  }
  out(b, cvt(b, TY_I32, cf), "cvt f32 -> i32 (nearest even)", TY_I32, 0);
  out(b, cvt(b, TY_PRED, xi), "cvt i32 -> pred", TY_I32, 0);
  /* 8-bit types (cvt.rn.satfinite.e4m3x2 / e5m2x2, cvt.rni.sat.s8):
   * exact against the simulator's bit-exact formats */
  static const tir_ty f8[] = {TY_E4M3, TY_E5M2};
  for (int i = 0; i < 2; i++) {
    const char *tn = tir_ty_names[f8[i]];
    uint32_t q = cvt(b, f8[i], xf);
    out(b, cvt(b, TY_F32, q), name(b, "cvt f32 ->", tn, "-> f32"), TY_F32, 0);
    out(b, cvt(b, TY_F32, cvt(b, f8[i], cf)), name(b, "cvt f32 ->", tn,
                                                   "(+-100)"), TY_F32, 0);
    for (int j = 0; j < 2; j++) /* from and to f16, bf16 */
      out(b, cvt(b, TY_F32, cvt(b, fl[j], cvt(b, f8[i], cvt(b, fl[j], xf)))),
          name(b, "cvt via", tir_ty_names[fl[j]], tn), TY_F32, 0);
    out(b, cvt(b, TY_I32, q), name(b, "cvt", tn, "-> i32"), TY_I32, 0);
    out(b, cvt(b, TY_F32, cvt(b, f8[i], xi)), name(b, "cvt i32 ->", tn, 0),
        TY_F32, 0);
  }
  out(b, cvt(b, TY_I32, cvt(b, TY_I8, cf)), "cvt f32 -> i8 (nearest even)",
      TY_I32, 0);
  out(b, cvt(b, TY_I32, cvt(b, TY_I8, xf)), "cvt f32 -> i8 (saturated)",
      TY_I32, 0);
  out(b, cvt(b, TY_I32, cvt(b, TY_I8, xi)), "cvt i32 -> i8 (saturated)",
      TY_I32, 0);
  out(b, cvt(b, TY_F32, cvt(b, TY_I8, cf)), "cvt f32 -> i8 -> f32", TY_F32, 0);
  /* Not compared: i32 -> pred -> i32. The simulator keeps the integer in
   * the predicate register and gives it back (-8074 -> -8074), the GPU a
   * predicate (-> 1); a predicate made by setp converts the same on both
   * (the "cvt pred ->" rows). */
}

/* Shared memory (byte addressed, scalar and vector), global vector loads
 * with a mask, masked scalar loads, and a nested loop. */
static void memory_and_loops(pb *b, uint32_t t, uint32_t xi, uint32_t xf) {
  tir_prog *p = b->p;
  uint32_t next = op(b, T_MOD, TY_I32, op(b, T_ADD, TY_I32, t, icst(b, 1)),
                     icst(b, BLOCK));
  uint32_t h = cvt(b, TY_F16, xf);
  /* f32 at 4t, f16 at 512 + 2t, i32 at 768 + 4t, 4 x f32 at 1280 + 16t */
  uint32_t a4 = op(b, T_MUL, TY_I32, t, icst(b, 4));
  uint32_t a2 = op(b, T_ADD, TY_I32, op(b, T_MUL, TY_I32, t, icst(b, 2)),
                   icst(b, 512));
  uint32_t ai = op(b, T_ADD, TY_I32, a4, icst(b, 768));
  uint32_t a16 = op(b, T_ADD, TY_I32, op(b, T_MUL, TY_I32, t, icst(b, 16)),
                    icst(b, 1280));
  uint32_t odd = setp(b, TY_I32, TIR_CMP_EQ,
                      op(b, T_MOD, TY_I32, t, icst(b, 2)), icst(b, 1));
  /* masked global loads give their fill (T_LDG's fimm) */
  static const double fills[] = {0.0, -1.5, -INFINITY};
  for (int j = 0; j < 3; j++) {
    uint32_t lf = reg(b, TY_F32), li = reg(b, TY_I32);
    emit(b, T_LDG, TY_F32, lf, b->g, odd, 0, A_XF)->fimm = fills[j];
    out(b, lf, "ldg f32 masked: fill", TY_F32, 0);
    emit(b, T_LDG, TY_I32, li, b->g, odd, 0, A_XI)->fimm = j - 1;
    out(b, li, "ldg i32 masked: fill", TY_I32, 0);
  }
  /* an atomic add (red.global.add.f32) on what the thread stored: x, plus
   * y where the thread is odd; subnormal operands and sums flushed */
  {
    int r = b->nrows[0]++;
    if (r >= MAXROWS)
      abort();
    b->rows[0][r] = (row){"redg f32: x (+ y where odd)", 0, TY_F32, 0};
    uint32_t off = op(b, T_ADD, TY_I32, b->g, icst(b, (int64_t)r * N));
    emit(b, T_STG, TY_F32, 0, off, xf, 0, A_OF);
    uint32_t yf = reg(b, TY_F32);
    emit(b, T_LDG, TY_F32, yf, b->g, 0, 0, A_YF);
    emit(b, T_REDG, TY_F32, 0, off, yf, odd, A_OF);
  }
  emit(b, T_STS, TY_F32, 0, a4, xf, 0, 0);
  emit(b, T_STS, TY_F16, 0, a2, h, 0, 0);
  emit(b, T_STS, TY_I32, 0, ai, xi, 0, 0);
  uint32_t *v = wv_alloc(b->ctx, 4 * sizeof *v);
  for (int j = 0; j < 4; j++)
    v[j] = op(b, T_ADD, TY_F32, xf, fcst(b, TY_F32, j));
  tir_instr *sv = emit(b, T_STSV, TY_F32, 0, a16, 0, 0, 0);
  sv->list = v;
  sv->nlist = 4;
  emit(b, T_BAR, TY_PRED, 0, 0, 0, 0, 0);
  uint32_t n4 = op(b, T_MUL, TY_I32, next, icst(b, 4));
  uint32_t r = reg(b, TY_F32);
  emit(b, T_LDS, TY_F32, r, n4, 0, 0, 0);
  out(b, r, "lds f32 of the next thread", TY_F32, 0);
  uint32_t rh = reg(b, TY_F16);
  emit(b, T_LDS, TY_F16, rh,
       op(b, T_ADD, TY_I32, op(b, T_MUL, TY_I32, next, icst(b, 2)),
          icst(b, 512)),
       0, 0, 0);
  out(b, cvt(b, TY_F32, rh), "lds f16 of the next thread", TY_F16, 0);
  uint32_t ri = reg(b, TY_I32);
  emit(b, T_LDS, TY_I32, ri, op(b, T_ADD, TY_I32, n4, icst(b, 768)), 0, 0, 0);
  out(b, ri, "lds i32 of the next thread", TY_I32, 0);
  uint32_t *lv = wv_alloc(b->ctx, 4 * sizeof *lv);
  for (int j = 0; j < 4; j++)
    lv[j] = reg(b, TY_F32);
  tir_instr *lsv = emit(b, T_LDSV, TY_F32, 0,
                        op(b, T_ADD, TY_I32,
                           op(b, T_MUL, TY_I32, next, icst(b, 16)),
                           icst(b, 1280)),
                        0, 0, 0);
  lsv->list = lv;
  lsv->nlist = 4;
  for (int j = 0; j < 4; j++)
    out(b, lv[j], "lds.v4 f32 of the next thread", TY_F32, 0);
  /* 8 f16 in one 16-byte store and load (packed pairs) */
  uint32_t *hv = wv_alloc(b->ctx, 8 * sizeof *hv);
  for (int j = 0; j < 8; j++)
    hv[j] = cvt(b, TY_F16, op(b, T_MUL, TY_F32, xf, fcst(b, TY_F32, j + 1)));
  emit(b, T_BAR, TY_PRED, 0, 0, 0, 0, 0);
  tir_instr *sh = emit(b, T_STSV, TY_F16, 0, a16, odd, 0, 0);
  sh->list = hv;
  sh->nlist = 8;
  emit(b, T_BAR, TY_PRED, 0, 0, 0, 0, 0);
  uint32_t *hl = wv_alloc(b->ctx, 8 * sizeof *hl);
  for (int j = 0; j < 8; j++)
    hl[j] = reg(b, TY_F16);
  /* odd threads stored; every thread reads the nearest odd one */
  uint32_t src = op(b, T_ADD, TY_I32,
                    op(b, T_MUL, TY_I32,
                       op(b, T_ADD, TY_I32,
                          op(b, T_MUL, TY_I32,
                             op(b, T_DIV, TY_I32, t, icst(b, 2)),
                             icst(b, 2)),
                          icst(b, 1)),
                       icst(b, 16)),
                    icst(b, 1280));
  tir_instr *lh = emit(b, T_LDSV, TY_F16, 0, src, 0, 0, 0);
  lh->list = hl;
  lh->nlist = 8;
  for (int j = 0; j < 8; j++)
    out(b, cvt(b, TY_F32, hl[j]), "lds.v8 f16", TY_F16, 0);
  /* global vector load of 4 f32 (aligned: 4 * (g / 4)), masked by odd */
  uint32_t g4 = op(b, T_MUL, TY_I32, op(b, T_DIV, TY_I32, b->g, icst(b, 4)),
                   icst(b, 4));
  uint32_t *gv = wv_alloc(b->ctx, 4 * sizeof *gv);
  for (int j = 0; j < 4; j++)
    gv[j] = reg(b, TY_F32);
  tir_instr *lg = emit(b, T_LDGV, TY_F32, 0, g4, odd, 0, A_XF);
  lg->list = gv;
  lg->nlist = 4;
  for (int j = 0; j < 4; j++)
    out(b, gv[j], "ldg.v4 f32, masked", TY_F32, 0);
  uint32_t *gi = wv_alloc(b->ctx, 4 * sizeof *gi);
  for (int j = 0; j < 4; j++)
    gi[j] = reg(b, TY_I32);
  tir_instr *lgi = emit(b, T_LDGV, TY_I32, 0, g4, 0, 0, A_XI);
  lgi->list = gi;
  lgi->nlist = 4;
  for (int j = 0; j < 4; j++)
    out(b, gi[j], "ldg.v4 i32", TY_I32, 0);
  uint32_t ml = reg(b, TY_F32);
  emit(b, T_LDG, TY_F32, ml, b->g, odd, 0, A_XF);
  out(b, ml, "ldg f32, masked", TY_F32, 0);
  /* acc = sum over i < 3, j < 4 of (i * 4 + j) * x, then + i */
  uint32_t acc = reg(b, TY_I32);
  emit(b, T_MOV, TY_I32, acc, icst(b, 0), 0, 0, 0);
  uint32_t i = reg(b, TY_I32), j = reg(b, TY_I32);
  uint32_t l1 = p->code.n;
  emit(b, T_LOOP, TY_I32, i, 0, 0, 0, 3);
  uint32_t l2 = p->code.n;
  emit(b, T_LOOP, TY_I32, j, 0, 0, 0, 4);
  uint32_t k = op(b, T_ADD, TY_I32, op(b, T_MUL, TY_I32, i, icst(b, 4)), j);
  emit(b, T_ADD, TY_I32, acc, acc, op(b, T_MUL, TY_I32, k, xi), 0, 0);
  uint32_t e2 = p->code.n;
  emit(b, T_ENDLOOP, TY_I32, j, 0, 0, 0, 4);
  emit(b, T_ADD, TY_I32, acc, acc, i, 0, 0);
  uint32_t e1 = p->code.n;
  emit(b, T_ENDLOOP, TY_I32, i, 0, 0, 0, 3);
  p->code.v[l1].match = e1;
  p->code.v[e1].match = l1;
  p->code.v[l2].match = e2;
  p->code.v[e2].match = l2;
  out(b, acc, "nested loops", TY_I32, 0);
  p->smem_bytes = 1280 + 16 * BLOCK;
}

/* ---- inputs and comparison ---------------------------------------------------- */
static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t next(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return rng;
}
static double unit(void) { return (double)(next() >> 11) / 9007199254740992.0; }

static float special(void) {
  static const float s[] = {0.0f,      -0.0f,     INFINITY,  -INFINITY,
                            NAN,       1e-40f,    -3e-39f,   65520.0f,
                            65504.0f,  -70000.0f, 1.0f,      -1.0f,
                            0.5f,      2.5f,      -2.5f,     6e-8f,
                            3.0e38f,   1e-30f};
  return s[next() % (sizeof s / sizeof *s)];
}

static void fill(int32_t *xi, int32_t *yi, float *xf, float *yf, float *cf) {
  for (int i = 0; i < N; i++) {
    xi[i] = (int32_t)(next() % 4001) - 2000;
    if (i % 17 == 0)
      xi[i] = (int32_t)(next() % 65536) - 32768;
    do
      yi[i] = (int32_t)(next() % 41) - 20;
    while (yi[i] == 0);
    double e = (unit() - 0.5) * 40; /* magnitudes 2^-20 .. 2^20 */
    xf[i] = (float)((unit() * 2 - 1) * exp2(e));
    yf[i] = (float)((unit() * 2 - 1) * exp2((unit() - 0.5) * 40));
    if (next() % 8 == 0)
      xf[i] = special();
    if (next() % 8 == 0)
      yf[i] = special();
    cf[i] = (float)((unit() * 2 - 1) * 100);
    if (next() % 4 == 0)
      cf[i] = (float)((int)(cf[i] * 2)) / 2.0f; /* ties for rounding */
  }
  xf[3] = 1.5f; /* same pair */
  yf[3] = 1.5f;
}

/* The distance in units of the last place of type ty around `want`. */
static double ulp_dist(tir_ty ty, double got, double want) {
  if (got == want)
    return 0;
  if (isnan(got) || isnan(want) || isinf(got) || isinf(want))
    return INFINITY;
  int e;
  frexp(want, &e);
  int p = ty == TY_F16 ? 11 : ty == TY_BF16 ? 8 : 24;
  int emin = ty == TY_F16 ? -13 : -125; /* below: subnormal spacing */
  if (e < emin)
    e = emin;
  return fabs(got - want) / ldexp(1.0, e - p);
}

int main(int argc, char **argv) {
  wavec_ctx *ctx = wavec_ctx_new(NULL, NULL);
  wavec_kernel *pk = wavec_kernel_begin(ctx, "ops", (wavec_loc){"ops", 1, 1});
  wv_kernel *k = &pk->k;
  pb b = {0};
  b.ctx = ctx;
  b.p = wv_alloc(ctx, sizeof *b.p);
  tir_prog *p = b.p;
  vec_push(ctx, &p->regs, TY_PRED); /* register 0: none */
  p->grid[0] = G;
  p->grid[1] = p->grid[2] = 1;
  p->block[0] = BLOCK;
  p->block[1] = p->block[2] = 1;
  p->lanes = 32;
  p->mma = -1;
  static const char *const names[NARGS] = {"xi", "yi", "xf", "yf",
                                           "cf", "of", "oi"};
  static const wavec_dtype dts[NARGS] = {WAVEC_I32, WAVEC_I32, WAVEC_F32,
                                         WAVEC_F32, WAVEC_F32, WAVEC_F32,
                                         WAVEC_I32};
  for (int a = 0; a < NARGS; a++) {
    tir_arg ta = {.name = names[a], .dt = dts[a], .ndims = 1, .elems = N};
    if (a >= A_OF)
      ta.elems = (int64_t)MAXROWS * N, ta.written = true;
    ta.shape[0] = ta.elems;
    vec_push(ctx, &p->args, ta);
  }
  uint32_t t = reg(&b, TY_I32), c = reg(&b, TY_I32);
  emit(&b, T_SREG, TY_I32, t, 0, 0, 0, TIR_SREG_TID_X);
  emit(&b, T_SREG, TY_I32, c, 0, 0, 0, TIR_SREG_CTAID_X);
  b.g = op(&b, T_ADD, TY_I32, op(&b, T_MUL, TY_I32, c, icst(&b, BLOCK)), t);
  uint32_t x[5];
  for (int a = 0; a < 5; a++) {
    x[a] = reg(&b, dts[a] == WAVEC_I32 ? TY_I32 : TY_F32);
    emit(&b, T_LDG, p->regs.v[x[a]], x[a], b.g, 0, 0, a);
  }
  int_ops(&b, x[A_XI], x[A_YI]);
  float_ops(&b, TY_F32, x[A_XF], x[A_YF]);
  float_ops(&b, TY_F16, cvt(&b, TY_F16, x[A_XF]), cvt(&b, TY_F16, x[A_YF]));
  float_ops(&b, TY_BF16, cvt(&b, TY_BF16, x[A_XF]),
            cvt(&b, TY_BF16, x[A_YF]));
  conversions(&b, x[A_XI], x[A_XF], x[A_CF]);
  memory_and_loops(&b, t, x[A_XI], x[A_XF]);
  for (int kind = 0; kind < 2; kind++) { /* outputs: exactly the rows */
    tir_arg *o = &p->args.v[kind ? A_OI : A_OF];
    o->elems = o->shape[0] = (int64_t)b.nrows[kind] * N;
  }
  k->tir = p;
  if (tir_verify(ctx, p) != WAVEC_OK) {
    fprintf(stderr, "%s", wavec_errmsg(ctx));
    return 1;
  }

  /* inputs; outputs poisoned, rows never written stay so in both runs */
  void *sim[NARGS], *gpu[NARGS];
  for (int a = 0; a < NARGS; a++) {
    size_t bytes = (size_t)p->args.v[a].elems * 4;
    sim[a] = malloc(bytes);
    gpu[a] = malloc(bytes);
    memset(sim[a], 0xff, bytes);
  }
  fill(sim[A_XI], sim[A_YI], sim[A_XF], sim[A_YF], sim[A_CF]);
  for (int a = 0; a < NARGS; a++)
    memcpy(gpu[a], sim[a], (size_t)p->args.v[a].elems * 4);
  if (wavec_simulate(pk, sim) != WAVEC_OK) {
    fprintf(stderr, "simulator: %s", wavec_errmsg(ctx));
    return 1;
  }
  if (argc > 2 && strcmp(argv[1], "--ptx") == 0) { /* for ptxas */
    const char *ptx;
    size_t len;
    FILE *f = fopen(argv[2], "wb");
    if (!f || wavec_emit_ptx(pk, "sm_90", &ptx, &len) != WAVEC_OK)
      return 1;
    fwrite(ptx, 1, len, f);
    fclose(f);
  }
  double ms = 0;
  if (wavec_gpu_run(pk, gpu, &ms) != WAVEC_OK) {
    fprintf(stderr, "gpu: %s\n", wavec_errmsg(ctx));
    return 2;
  }
  int bad = 0, nrows = 0;
  for (int kind = 0; kind < 2; kind++) {
    for (int r = 0; r < b.nrows[kind]; r++) {
      const row *rw = &b.rows[kind][r];
      double worst = 0;
      int mism = 0, first = -1;
      double fg = 0, fs = 0;
      nrows++;
      for (int i = 0; i < N; i++) {
        size_t at = (size_t)r * N + i;
        double gs, ss;
        if (kind) {
          gs = ((int32_t *)gpu[A_OI])[at];
          ss = ((int32_t *)sim[A_OI])[at];
        } else {
          gs = ((float *)gpu[A_OF])[at];
          ss = ((float *)sim[A_OF])[at];
        }
        double d = isnan(gs) && isnan(ss) ? 0 : ulp_dist(rw->ty, gs, ss);
        if (!kind && !isnan(gs) && !isnan(ss) && gs == ss)
          d = 0;
        if (d > worst)
          worst = d;
        if (d > rw->ulps && mism++ == 0)
          first = i, fg = gs, fs = ss;
      }
      if (mism) {
        bad++;
        printf("FAIL %-28s %d of %d differ (worst %.3g ulp, allowed %g); "
               "first: element %d gpu %.9g sim %.9g\n",
               rw->what, mism, N, worst, rw->ulps, first, fg, fs);
      } else if (rw->ulps) {
        printf("ok   %-28s worst %.3g ulp (allowed %g)\n", rw->what, worst,
               rw->ulps);
      }
    }
  }
  printf("ops: %d rows of %d threads, %d differ from the simulator\n", nrows,
         N, bad);
  for (int a = 0; a < NARGS; a++)
    free(sim[a]), free(gpu[a]);
  wavec_ctx_free(ctx);
  return bad ? 1 : 0;
}
