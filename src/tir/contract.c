/* Pass `contract`. require: lower. A float product used once, by an
 * addition or a subtraction, becomes one fused multiply-add:
 *     m = a * b;  d = m + c     ->  d = fma(a, b, c)
 *     m = a * b;  d = m - c     ->  t = -c;  d = fma(a, b, t)
 *     m = a * b;  d = c - m     ->  t = -a;  d = fma(t, b, c)
 * (T_FMA rounds a * b + c once, as PTX's fma.rn.f32 and the simulator's
 * fmaf do; a negation is exact, and ptxas folds it into the FFMA). The
 * printer writes every other float op with its own rounding (.rn), which
 * ptxas never fuses, so this pass is where products and sums fuse: the
 * simulator runs the same program and gets the same bits as the GPU.
 *
 * It applies where every register is f32 (an f16 sum would round twice),
 * m is written by that product alone and read by that sum alone, and
 * between the two there is no loop, region or exit boundary and nothing
 * writes a or b (the fma reads them where the sum was). A product with
 * two uses (the scaled scores a softmax takes the maximum of, then
 * exponentiates) stays as it is.
 *
 * Contract (verify_tir after it): the program computes the same values but
 * for the single rounding of each fused pair; its instructions keep their
 * order, less the fused products. */
#include "tir/lower.h"

/* Does instruction i end or start a straight-line run? */
static bool boundary(const tir_instr *in) {
  switch (in->op) {
  case T_LOOP: case T_ENDLOOP: case T_IF: case T_ENDIF: case T_EXIT:
    return true;
  default: return false;
  }
}

static bool f32_reg(const tir_prog *p, uint32_t r) {
  return r && p->regs.v[r] == TY_F32;
}

/* Per register: how many instructions write it and read it, and the last
 * writer. */
typedef struct uses {
  uint32_t *ndef, *nuse, *def;
} uses;

static uses count_uses(wavec_ctx *ctx, const tir_prog *p) {
  uint32_t n = p->regs.n;
  uses u = {wv_alloc(ctx, n * sizeof *u.ndef), wv_alloc(ctx, n * sizeof *u.nuse),
            wv_alloc(ctx, n * sizeof *u.def)};
  for (uint32_t i = 0; i < p->code.n; i++) {
    const tir_instr *in = &p->code.v[i];
    uint32_t regs[3] = {in->a, in->b, in->c};
    for (int j = 0; j < 3; j++)
      if (regs[j] && (j == 0 || regs[j] != regs[0]) &&
          (j < 2 || regs[j] != regs[1]))
        u.nuse[regs[j]]++;
    for (uint32_t e = 0; e < in->nlist; e++)
      u.nuse[in->list[e]]++; /* (a list's writes count too: conservative) */
    if (in->dst) {
      u.ndef[in->dst]++;
      u.def[in->dst] = i;
    }
  }
  return u;
}

/* The product instruction register m comes from, if the sum at i may take
 * its place; else UINT32_MAX. */
static uint32_t fusable(const tir_prog *p, const uses *u, uint32_t m,
                        uint32_t i) {
  if (!f32_reg(p, m) || u->ndef[m] != 1 || u->nuse[m] != 1)
    return UINT32_MAX;
  uint32_t d = u->def[m];
  const tir_instr *mul = &p->code.v[d];
  if (d >= i || mul->op != T_MUL || mul->ty != TY_F32 || mul->nlist ||
      !f32_reg(p, mul->a) || !f32_reg(p, mul->b))
    return UINT32_MAX;
  for (uint32_t j = d + 1; j < i; j++) {
    const tir_instr *in = &p->code.v[j];
    if (boundary(in) || writes_reg(in, mul->a) || writes_reg(in, mul->b))
      return UINT32_MAX;
  }
  return d;
}

wavec_status wv_pass_contract(wv_kernel *k) {
  wavec_ctx *ctx = k->ctx;
  tir_prog *p = k->tir;
  uses u = count_uses(ctx, p);
  uint32_t n = p->code.n;
  /* for each sum that fuses: its product's index and which side it was */
  uint32_t *prod = wv_alloc(ctx, n * sizeof *prod);
  bool *gone = wv_alloc(ctx, n * sizeof *gone);
  uint32_t fused = 0;
  for (uint32_t i = 0; i < n; i++) {
    const tir_instr *in = &p->code.v[i];
    prod[i] = UINT32_MAX;
    if ((in->op != T_ADD && in->op != T_SUB) || in->ty != TY_F32 ||
        in->nlist || !f32_reg(p, in->a) || !f32_reg(p, in->b) ||
        in->a == in->b)
      continue;
    uint32_t d = fusable(p, &u, in->a, i);
    if (d == UINT32_MAX)
      d = fusable(p, &u, in->b, i);
    if (d == UINT32_MAX)
      continue;
    prod[i] = d;
    gone[d] = true;
    fused++;
  }
  if (!fused)
    return WAVEC_OK;
  VEC(tir_instr) code = {0};
  for (uint32_t i = 0; i < n; i++) {
    tir_instr in = p->code.v[i];
    if (gone[i])
      continue;
    if (prod[i] == UINT32_MAX) {
      vec_push(ctx, &code, in);
      continue;
    }
    const tir_instr *mul = &p->code.v[prod[i]];
    bool left = in.a == mul->dst; /* m + c, m - c; else c + m, c - m */
    uint32_t a = mul->a, b = mul->b, c = left ? in.b : in.a;
    if (in.op == T_SUB) { /* negate c (m - c) or the product (c - m) */
      uint32_t t = tir_new_reg(ctx, p, TY_F32);
      tir_instr neg = {.op = T_NEG, .ty = TY_F32, .dst = t,
                       .a = left ? c : a, .loc = in.loc};
      vec_push(ctx, &code, neg);
      if (left)
        c = t;
      else
        a = t;
    }
    tir_instr fma = {.op = T_FMA, .ty = TY_F32, .dst = in.dst,
                     .a = a, .b = b, .c = c, .loc = in.loc};
    vec_push(ctx, &code, fma);
  }
  tir_install_code(ctx, p, code);
  return WAVEC_OK;
}
