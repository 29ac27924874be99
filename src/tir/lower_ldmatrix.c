/* The lowering: fragment loads from shared memory as ldmatrix, where the
 * layout allows. */
#include "tir/lower.h"

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
  if (!lw_eval_threads(w, e, sup))
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

/* Fragment loads as one ldmatrix (each warp of the wave its own) when the
 * elements are pairs of 8x8 16-bit matrices whose rows lie 16-byte aligned
 * in shared memory, in exactly the order ldmatrix hands them out. Decided by evaluating every thread; the
 * address each lane supplies is built in the algebra and checked the same
 * way. */
bool lw_try_ldmatrix(lw *w, uint32_t id, const ex_t *addr, uint32_t ne,
                     tir_ty ty, ex_t at) {
  wavec_ctx *ctx = w->ctx;
  wv_dist *d = w->d;
  uint32_t np = ne / 2;
  if (d->lanes % 32 || ne % 2 || np < 1 || np > 4 || np == 3 ||
      tir_ty_bytes(ty) != 2 || (ctx->test_hooks & WV_HOOK_NO_LDMATRIX))
    return false;
  /* the same fragment addresses (a loop lowered in parts) decide the
   * same, and so do addresses that differ from them by a multiple of 16
   * bytes (the next k-step's fragments, another tile of the same layout):
   * decided for the addresses less addr[0]'s constant */
  int64_t c = 0;
  ex_t key[8];
  lw_split_const(w, addr[0], &c);
  if (c % 16)
    c = 0;
  for (uint32_t e = 0; e < ne; e++)
    key[e] = c ? ex_add(ctx, addr[e], ex_const(ctx, -c)) : addr[e];
  addr = key;
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
      ok = lw_eval_threads(w, addr[e], v[e]);
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
  ex_t lane = c ? ex_add(ctx, memo->e, ex_const(ctx, c)) : memo->e;
  tir_instr *in = lw_emit(w, memo->tr ? T_LDSMT : T_LDSM, ty, 0,
                          lw_smem_addr(w, lane, at), 0, 0, np);
  in->list = regs;
  in->nlist = ne;
  return true;
}
