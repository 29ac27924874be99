/* The simulator's tensor cores (tir.h): mma.sync (T_MMA) on the lanes'
 * fragments, the warpgroup mma (T_WGMMA) on registers and swizzled shared
 * tiles, and the wgmma groups that commits close and waits retire. */
#include "tir/sim.h"

/* A register's value as a number (integers are exact in a double). */
static double num(tir_ty ty, val v) {
  return is_float(ty) ? v.f : (double)v.i;
}

/* One mma's sum, acc + the K products, into the accumulator's type: f32
 * rounds the sum once (the products of f16, bf16 and 8-bit floats are
 * exact, their order of summation is the hardware's own: the tests allow
 * for it); s32 wraps (no .satfinite), which makes it the exact sum modulo
 * 2^32 whatever the order, so bit-exact. Integer sums stay below 2^53. */
static val mma_sum(tir_ty aty, double acc, const double *a, const double *b,
                   int K) {
  for (int k = 0; k < K; k++)
    acc += a[k] * b[k];
  if (aty == TY_I32)
    return (val){.i = (int32_t)(uint32_t)(uint64_t)(int64_t)acc};
  return (val){.f = (double)(float)acc};
}

void sim_mma(sim *s, const tir_instr *in, uint32_t w) {
  const wv_mma_info *mi = wv_mma_info_get((wavec_mma_kind)in->imm);
  int nc = s->mma_elems[WV_ACC], na = s->mma_elems[WV_LHS],
      nb = s->mma_elems[WV_RHS];
  int N = mi->n, K = mi->k;
  tir_ty ity = tir_ty_of(mi->in), aty = tir_ty_of(mi->acc);
  double *A = s->A, *B = s->B, *C = s->C;
  const uint32_t *lst = in->list;
  for (int l = 0; l < s->lanes; l++) {
    for (int e = 0; e < na; e++) {
      int *rc = s->mma_map[WV_LHS][l * na + e];
      A[rc[0] * K + rc[1]] = num(ity, sim_rd(s, in, w, lst[nc + e], l));
    }
    for (int e = 0; e < nb; e++) {
      int *rc = s->mma_map[WV_RHS][l * nb + e];
      B[rc[0] * K + rc[1]] = num(ity, sim_rd(s, in, w, lst[nc + na + e], l));
    }
    for (int e = 0; e < nc; e++) {
      int *rc = s->mma_map[WV_ACC][l * nc + e];
      C[rc[0] * N + rc[1]] = num(aty, sim_rd(s, in, w, lst[nc + na + nb + e], l));
    }
  }
  for (int l = 0; l < s->lanes; l++)
    for (int e = 0; e < nc; e++) {
      int *rc = s->mma_map[WV_ACC][l * nc + e];
      sim_wr(s, w, lst[e], l,
         mma_sum(aty, C[rc[0] * N + rc[1]], A + rc[0] * K, B + rc[1] * K, K));
    }
}

/* The maps of the mma's roles held in registers for a tile of N columns,
 * from the layout table (kept until another N is asked for). */
void sim_mma_maps(sim *s, wavec_mma_kind kind, int N) {
  if (s->map_n == N)
    return;
  wavec_ctx *ctx = s->ctx;
  wavec_sym ls = wavec_symbol(ctx, "$lane"), es = wavec_symbol(ctx, "$E");
  uint32_t ns = ctx->sym_names.n;
  int64_t *vals = wv_alloc(ctx, ns * sizeof *vals);
  for (int r = 0; r < WV_ROLE_COUNT; r++) {
    if (wv_mma_role_in_shared(kind, (wv_role)r))
      continue;
    int ne = wv_mma_elems(kind, (wv_role)r, N);
    s->mma_elems[r] = ne;
    int(*map)[2] = wv_alloc(ctx, (size_t)s->lanes * ne * sizeof *map);
    ex_t co[2];
    wv_mma_layout(ctx, kind, (wv_role)r, N, ex_sym(ctx, ls), ex_sym(ctx, es),
                  co);
    for (int l = 0; l < s->lanes; l++)
      for (int e = 0; e < ne; e++) {
        vals[ls] = l;
        vals[es] = e;
        for (int j = 0; j < 2; j++) {
          int64_t v;
          wv_assert(ctx, ex_eval(ctx, co[j], vals, NULL, ns, &v));
          map[l * ne + e][j] = (int)v;
        }
      }
    s->mma_map[r] = map;
  }
  s->map_n = N;
}

static const char *const WGMMA_ADDR =
    "a wgmma operand address differs between the lanes of the warpgroup";

/* An element a wgmma of wave w reads from shared memory (for lane l's
 * race check); its bytes stay marked read until the wgmma retires. */
static val wgmma_read(sim *s, const tir_instr *in, uint32_t w, int l,
                      tir_ty ty, int64_t addr) {
  val v = sim_shared_access(s, in, w, l, ty, addr, NULL);
  int32_t me = (int32_t)((int64_t)w * s->lanes + l);
  for (int64_t g = addr; g < addr + tir_ty_bytes(ty); g++) {
    /* the wgmma reads through the async proxy: bytes a thread wrote (a
     * store, or a cp.async, which lands through the generic proxy) need
     * its proxy fence first; a tensor copy's need none */
    const sshared *m = &s->smem[g];
    if (m->init && m->wepoch && !sim_proxy_fenced(s, m, me))
      sim_report(s, in, w, l, D_SIM_RACE,
                 "wgmma reads shared byte %lld, which thread %d wrote with "
                 "no proxy fence (fence.proxy.async) after the write and a "
                 "barrier after the fence: the async proxy may not see the "
                 "write",
                 (long long)g, m->writer);
    s->smem[g].wgread++;
    spend p = {g, s->wgroups[w], true};
    vec_push(s->ctx, &s->wpend[w], p);
  }
  return v;
}

/* T_WGMMA of wave w (a warpgroup), as tir.h says: the operands come from
 * registers or from shared memory through its swizzle (each lhs
 * row read by the first lane of the warp whose accumulator rows it feeds,
 * the rhs by lane 0). The accumulator is updated now; its registers and
 * the lhs fragment stay marked in flight until a wait. */
void sim_wgmma(sim *s, const tir_instr *in, uint32_t w) {
  wavec_mma_kind kind = (wavec_mma_kind)(in->imm & TIR_WG_KIND);
  const wv_mma_info *mi = wv_mma_info_get(kind);
  tir_ty ity = tir_ty_of(mi->in), aty = tir_ty_of(mi->acc);
  int64_t es = tir_ty_bytes(ity); /* a row of K is es * K bytes */
  bool areg = in->imm & TIR_WG_A_REGS, bmn = in->imm & TIR_WG_B_MN,
       amn = in->imm & TIR_WG_A_MN;
  int na = areg ? wv_mma_elems(kind, WV_LHS, 8) : 0, ne = (int)in->nlist - na;
  int M = mi->m, K = mi->k, N = 2 * ne;
  sim_mma_maps(s, kind, N);
  int64_t b = sim_uniform(s, in, w, in->b, WGMMA_ADDR);
  double *A = s->A, *B = s->B;
  if (areg) {
    for (int l = 0; l < s->lanes; l++)
      for (int e = 0; e < na; e++) {
        int *mk = s->mma_map[WV_LHS][l * na + e];
        A[mk[0] * K + mk[1]] = num(ity, sim_rd(s, in, w, in->list[ne + e], l));
      }
  } else {
    int64_t a = sim_uniform(s, in, w, in->a, WGMMA_ADDR),
            W = tir_wg_swz(in->imm, 0);
    for (int m = 0; m < M; m++)
      for (int k = 0; k < K; k++)
        A[m * K + k] = num(
            ity, wgmma_read(s, in, w, 32 * (m / 16), ity,
                            tir_swz(amn ? a + W * k + es * m
                                        : a + W * m + es * k, W)));
  }
  int64_t W = tir_wg_swz(in->imm, 1), pn = W / es; /* a panel's columns */
  for (int n = 0; n < N; n++)
    for (int k = 0; k < K; k++) {
      int64_t at = bmn ? b + W * k + es * (n % pn) + in->imm2 * (n / pn)
                       : b + W * n + es * k;
      B[n * K + k] = num(ity, wgmma_read(s, in, w, 0, ity, tir_swz(at, W)));
    }
  for (int l = 0; l < s->lanes; l++) {
    for (int e = 0; e < ne; e++) {
      uint32_t r = in->list[e];
      if (RSET(s, w, r, l) == REG_UNSET)
        sim_report(s, in, w, l, D_SIM_UNINIT,
               "register r%u is read before it is written", r);
      int *mn = s->mma_map[WV_ACC][l * ne + e];
      R(s, w, r, l) = mma_sum(aty, num(aty, R(s, w, r, l)), A + mn[0] * K,
                              B + mn[1] * K, K);
      RSET(s, w, r, l) = REG_WGMMA;
    }
    for (int e = 0; e < na; e++)
      RSET(s, w, in->list[ne + e], l) = REG_WGMMA;
  }
  for (uint32_t e = 0; e < in->nlist; e++) {
    spend p = {in->list[e], s->wgroups[w], false};
    vec_push(s->ctx, &s->wpend[w], p);
  }
}

/* Closes wave w's group of wgmmas issued since the last close (a wait or
 * a commit), if it issued any (an empty group is no group). */
void sim_wgmma_close(sim *s, uint32_t w) {
  bool open = false;
  for (uint32_t i = 0; i < s->wpend[w].n && !open; i++)
    open = s->wpend[w].v[i].group == s->wgroups[w];
  s->wgroups[w] += open;
}

/* Wave w's wgmma wait: closes the open group; all but the `keep` newest
 * groups retire (their registers become readable, the shared bytes they
 * read writable). */
void sim_wgmma_wait(sim *s, uint32_t w, int64_t keep) {
  sim_wgmma_close(s, w);
  uint32_t kept = 0;
  for (uint32_t i = 0; i < s->wpend[w].n; i++) {
    spend *p = &s->wpend[w].v[i];
    if ((int64_t)p->group + keep >= (int64_t)s->wgroups[w]) {
      s->wpend[w].v[kept++] = *p;
    } else if (p->smem) {
      s->smem[p->at].wgread--;
      if (s->as)
        sim_async_retired(s, w, p->at);
    } else {
      for (int l = 0; l < s->lanes; l++)
        RSET(s, w, (uint32_t)p->at, l) = REG_SET;
    }
  }
  s->wpend[w].n = kept;
  /* a register an older group shared with a kept one stays in flight */
  for (uint32_t i = 0; i < kept; i++)
    if (!s->wpend[w].v[i].smem)
      for (int l = 0; l < s->lanes; l++)
        RSET(s, w, (uint32_t)s->wpend[w].v[i].at, l) = REG_WGMMA;
}
