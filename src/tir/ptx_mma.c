/* The PTX printer's mma instructions (ptx.h): mma.sync with its fragments
 * packed into .b32 registers, and the warpgroup mma (wgmma) with its matrix
 * descriptors, register lhs, fences, group commits and waits. The facts
 * about fragments and descriptors are the PTX ISA's, as src/target/target.c
 * lists them. */
#include <math.h>
#include <string.h>

#include "tir/ptx.h"

/* Elements regs[0..) of a fragment packed into the .b32 register `into`,
 * low first: two 16-bit elements (mov.b32 {lo, hi}), or four 8-bit ones
 * (an 8-bit float is the low byte of a .b16, an i8 the low byte of a
 * sign-extended .b32: pairs made, then their bytes picked with prmt). */
void ptx_pack32(px *x, const uint32_t *regs, tir_ty t, const char *into) {
  if (tir_ty_bytes(t) == 2) {
    ins(x, "mov.b32 %s, {%s, %s}", into, R(x, regs[0]).s, R(x, regs[1]).s);
    return;
  }
  nm lo = T(x, C_B32), hi = T(x, C_B32);
  if (t == TY_I8) { /* bytes 0 of a and b, then 0 of each pair */
    ins(x, "prmt.b32 %s, %s, %s, 0x0040", lo.s, R(x, regs[0]).s,
        R(x, regs[1]).s);
    ins(x, "prmt.b32 %s, %s, %s, 0x0040", hi.s, R(x, regs[2]).s,
        R(x, regs[3]).s);
    ins(x, "prmt.b32 %s, %s, %s, 0x5410", into, lo.s, hi.s);
    return;
  }
  ins(x, "mov.b32 %s, {%s, %s}", lo.s, R(x, regs[0]).s, R(x, regs[1]).s);
  ins(x, "mov.b32 %s, {%s, %s}", hi.s, R(x, regs[2]).s, R(x, regs[3]).s);
  ins(x, "prmt.b32 %s, %s, %s, 0x6420", into, lo.s, hi.s); /* bytes 0, 2 */
}

/* Which wgmma waits (and turn passes, turns.c) close a group. A wait
 * commits the open group first (wgmma.commit_group) only when a wgmma may
 * have been issued since the last commit on some path to it: an empty
 * commit does nothing to the program but makes ptxas serialize every wgmma
 * of the kernel (its warning C7514). The
 * paths are those of the structured loops and regions: a loop's head joins
 * its entry and its back edge, its exit its entry (no trips) and its end, a
 * region's end its entry (skipped) and its last instruction; a back edge that
 * opens a group its head did not see runs the scan again (at most once per
 * loop). */
static void open_groups(px *x) {
  const tir_prog *p = x->p;
  uint32_t n = p->code.n;
  x->commits = wv_alloc(x->ctx, (n + 1) * sizeof *x->commits);
  bool *back = wv_alloc(x->ctx, (n + 1) * sizeof *back);  /* by T_LOOP */
  uint32_t *head = wv_alloc(x->ctx, (n + 1) * sizeof *head); /* loop stack */
  bool *entry = wv_alloc(x->ctx, (n + 1) * sizeof *entry);
  for (bool changed = true; changed;) {
    changed = false;
    bool open = false;
    uint32_t depth = 0;
    for (uint32_t i = 0; i < n; i++) {
      switch (p->code.v[i].op) {
      case T_LOOP:
        head[depth] = i;
        entry[depth++] = open;
        open = open || back[i];
        break;
      case T_ENDLOOP:
        if (!depth)
          break; /* the verifier refuses it; nothing to join */
        depth--;
        if (open && !back[head[depth]])
          changed = back[head[depth]] = true;
        open = open || entry[depth];
        break;
      case T_IF: /* a region: its end joins its entry (skipped) */
        head[depth] = i;
        entry[depth++] = open;
        break;
      case T_ENDIF:
        if (depth)
          open = open || entry[--depth];
        break;
      case T_WGMMA: open = true; break;
      case T_WGCOMMIT: /* (one with nothing to close is left out) */
      case T_WGWAIT:
      case T_TURNPASS: /* a turn passes once its section is committed */
        x->commits[i] = open;
        open = false;
        break;
      default: break;
      }
    }
  }
}

void ptx_wgmma_analyse(px *x) {
  const tir_prog *p = x->p;
  open_groups(x);
  x->wa = wv_alloc(x->ctx, (p->code.n + 1) * sizeof *x->wa);
  x->wgreg = wv_alloc(x->ctx, p->regs.n);
  x->zero = wv_alloc(x->ctx, p->regs.n);
  x->def = wv_alloc(x->ctx, p->regs.n * sizeof *x->def);
  uint8_t *many = wv_alloc(x->ctx, p->regs.n);
  for (uint32_t i = 0; i < p->code.n; i++) {
    const tir_instr *in = &p->code.v[i];
    for (uint32_t j = 0; in->op == T_WGMMA && j < in->nlist; j++)
      x->wgreg[in->list[j]] = 1;
    if (writes_dst(in)) {
      many[in->dst] = x->def[in->dst] != 0;
      x->def[in->dst] = i + 1;
    }
    for (uint32_t j = 0; j < in->nlist && writes_list(in); j++)
      many[in->list[j]] = 1;
  }
  for (uint32_t r = 0; r < p->regs.n; r++)
    if (many[r])
      x->def[r] = 0;
}

/* A wgmma after a loop boundary, a wait, an f32 write or a write of a
 * register some wgmma takes needs a fence (and after an mbarrier wait:
 * shared memory a tensor copy wrote). Descriptor bases (desc_base) live
 * until a loop boundary or region edge, or until their offset register is
 * written. */
void ptx_wgmma_fence_rule(px *x, const tir_instr *in) {
  if (in->op == T_LOOP || in->op == T_ENDLOOP || in->op == T_IF ||
      in->op == T_ENDIF)
    x->nwdbase = 0;
  for (uint32_t k = 0; k < x->nwdbase && writes_dst(in); k++)
    if (x->wdbase[k].root == in->dst)
      x->wdbase[k--] = x->wdbase[--x->nwdbase];
  if (in->op == T_LOOP || in->op == T_ENDLOOP || in->op == T_WGWAIT ||
      in->op == T_MBWAIT || in->op == T_IF || in->op == T_ENDIF ||
      (in->op != T_WGMMA && in->dst &&
       (ty(x, in->dst) == TY_F32 || x->wgreg[in->dst])))
    x->fenced = false;
  for (uint32_t j = 0; j < in->nlist && writes_list(in); j++)
    if (x->wgreg[in->list[j]])
      x->fenced = false;
}

/* After instruction `in`: which f32 registers hold +0.0, written last by
 * a constant (or a copy of one), since the last loop boundary or region
 * edge (where paths meet, nothing is known). A wgmma whose accumulators
 * all do starts its sum from zero: scale-d false, so that the
 * accumulators need not be set (their zeroing dies), however far from the
 * wgmma they were zeroed (an mbarrier wait in between, say). */
void ptx_zero_rule(px *x, const tir_instr *in) {
  if (in->op == T_LOOP || in->op == T_ENDLOOP || in->op == T_IF ||
      in->op == T_ENDIF) {
    memset(x->zero, 0, x->p->regs.n);
    return;
  }
  if (in->dst && writes_dst(in))
    x->zero[in->dst] =
        ty(x, in->dst) == TY_F32 &&
        ((in->op == T_CONST && in->fimm == 0.0 && !signbit(in->fimm)) ||
         (in->op == T_MOV && x->zero[in->a]));
  bool list = writes_list(in) || in->op == T_WGMMA || in->op == T_MMA;
  for (uint32_t j = 0; list && j < in->nlist; j++)
    x->zero[in->list[j]] = 0;
}

/* A list of registers as PTX's vector operand "{a, b, ...}". */
static void put_list(wv_buf *b, const char *const *names, uint32_t n) {
  wv_buf_puts(b, "{");
  for (uint32_t j = 0; j < n; j++)
    wv_buf_printf(b, "%s%s", j ? ", " : "", names[j]);
  wv_buf_puts(b, "}");
}

/* T_MMA: mma.sync, the lhs and rhs fragments packed into .b32 registers
 * (ptx_pack32), in the fragment order of target.c. */
void ptx_emit_mma(px *x, const tir_instr *in) {
  wavec_mma_kind kind = (wavec_mma_kind)in->imm;
  const wv_mma_info *mi = wv_mma_info_get(kind);
  if (!mi || !wv_target_has_mma(x->t, kind) || mi->lanes != 32)
    unsupported(x, "this mma type (only the warp-level mma.sync is "
                   "printed)");
  tir_ty ity = tir_ty_of(mi->in);
  uint32_t nc = (uint32_t)wv_mma_elems(kind, WV_ACC, 0),
           na = (uint32_t)wv_mma_elems(kind, WV_LHS, 0),
           nb = (uint32_t)wv_mma_elems(kind, WV_RHS, 0),
           per = 4 / (uint32_t)tir_ty_bytes(ity); /* elements a register */
  wv_assert(x->ctx, nc == 4 && in->nlist == 2 * nc + na + nb &&
                        na % per == 0 && nb % per == 0);
  const uint32_t *l = in->list;
  nm pk[6]; /* a0..a3, b0..b1 */
  const char *pn[6];
  uint32_t npk = (na + nb) / per;
  wv_assert(x->ctx, npk == 6);
  for (uint32_t i = 0; i < npk; i++) {
    pk[i] = T(x, C_B32);
    pn[i] = pk[i].s;
    ptx_pack32(x, l + nc + per * i, ity, pk[i].s);
  }
  nm d[4], c[4];
  const char *dn[4], *cn[4];
  for (uint32_t i = 0; i < nc; i++) {
    d[i] = R(x, l[i]);
    c[i] = R(x, l[nc + na + nb + i]);
    dn[i] = d[i].s;
    cn[i] = c[i].s;
  }
  wv_buf b;
  wv_buf_init(&b, x->ctx);
  wv_buf_printf(&b, "%s ", mi->instr);
  put_list(&b, dn, nc);
  wv_buf_puts(&b, ", ");
  put_list(&b, pn, na / per);
  wv_buf_puts(&b, ", ");
  put_list(&b, pn + na / per, nb / per);
  wv_buf_puts(&b, ", ");
  put_list(&b, cn, nc);
  ins(x, "%s", wv_buf_str(&b));
}

/* T_WGMMA: a shared-memory matrix descriptor per operand in shared memory
 * (start address >> 4 in bits 0-13; leading byte offset >> 4 in 16-29:
 * unused for K-major swizzled tiles (1), the panel stride for N-contiguous
 * ones; stride byte offset 8 W >> 4 between groups of 8 rows of W bytes in
 * 32-45; the swizzle mode in 62-63, 1, 2, 3 for W = 128, 64, 32: PTX ISA,
 * "Matrix Descriptor Format"),
 * an lhs in registers packed into .b32 registers of its own (pack_lhs)
 * that stay untouched until the wait; then wgmma.mma_async with the
 * accumulator in place, scale-d true (accumulate; false where every
 * accumulator holds a constant zero, ptx_zero_rule), and by operand type:
 * 16-bit, no negation (imm-scale-a, imm-scale-b 1), the lhs transposed
 * when M-contiguous and the rhs when N-contiguous; 8-bit floats, no negation and no transpose immediates
 * (they are K-major only); integers, neither. A wgmma.fence first when
 * anything else touched its registers since the last one. */
/* A wgmma with its lhs in registers reads it packed into .b32 registers
 * (%wa; pack32: pairs of 16-bit elements, quads of 8-bit ones). They are
 * packed before the wgmma.fence that orders them for the wgmma: a register
 * written between the fence and its wgmma makes ptxas put in a fence of
 * its own (its remark C7519). */
static void pack_lhs(px *x, const tir_instr *in) {
  wavec_mma_kind kind = (wavec_mma_kind)(in->imm & TIR_WG_KIND);
  tir_ty ity = tir_ty_of(wv_mma_info_get(kind)->in);
  uint32_t na = (uint32_t)wv_mma_elems(kind, WV_LHS, 8), nc = in->nlist - na,
           per = 4 / (uint32_t)tir_ty_bytes(ity);
  x->wa[in - x->p->code.v] = 1 + x->nwa;
  for (uint32_t j = 0; j < na / per; j++, x->nwa++) {
    char wa[24];
    snprintf(wa, sizeof wa, "%%wa%u", x->nwa);
    ptx_pack32(x, in->list + nc + per * j, ity, wa);
  }
}

/* Packs the lhs of every register-lhs wgmma from `in` up to where the next
 * fence will be needed (emit_instr): a loop boundary, a wait, or anything
 * writing a register other than an integer or a predicate — so that every
 * pair packed here is the value its wgmma reads. */
static void pack_window(px *x, const tir_instr *in) {
  const tir_instr *end = x->p->code.v + x->p->code.n;
  for (const tir_instr *j = in; j < end; j++) {
    if (j->op == T_WGMMA) {
      if ((j->imm & TIR_WG_A_REGS) && !x->wa[j - x->p->code.v])
        pack_lhs(x, j);
      continue;
    }
    if (j->op == T_LOOP || j->op == T_ENDLOOP || j->op == T_WGWAIT ||
        j->op == T_MBWAIT || j->op == T_IF || j->op == T_ENDIF || j->nlist ||
        (writes_dst(j) && ty(x, j->dst) != TY_I32 &&
         ty(x, j->dst) != TY_I64 && ty(x, j->dst) != TY_PRED))
      break;
  }
}

/* The descriptor of the tile at shared offset `byte` with leading byte
 * offset lbo and rows of W swizzled bytes, in the .b64 `d`. The wgmmas of
 * one mma read tiles at constant distances from one offset (the stage's,
 * the k-step's multiple of 16 bytes added), so the descriptor of that offset, its base, is built
 * once in a straight-line run (%wd) and each wgmma's is the base plus the
 * distance >> 4: one add, where a descriptor of its own costs ptxas five
 * uniform instructions before every HGMMA. The sum stays in the 14-bit
 * address field: both offsets are >= 0 and their sum, a shared address,
 * is below 256 KiB. */
static void desc_of(px *x, uint32_t byte, int64_t lbo, int64_t W,
                    const char *d) {
  uint32_t root = byte;
  int64_t dist = 0;
  const tir_instr *def = x->def[byte] ? &x->p->code.v[x->def[byte] - 1] : NULL;
  if (def && def->op == T_ADD && def->ty == TY_I32)
    for (int k = 0; k < 2; k++) {
      uint32_t c = k ? def->a : def->b, r = k ? def->b : def->a;
      if (x->isconst[c] && x->cval[c] >= 0 && x->cval[c] % 16 == 0 &&
          x->cval[c] < (1 << 18) && x->nonneg[r]) {
        root = r;
        dist = x->cval[c];
        break;
      }
    }
  uint32_t k = 0;
  while (k < x->nwdbase && !(x->wdbase[k].root == root &&
                             x->wdbase[k].lbo == lbo && x->wdbase[k].W == W))
    k++;
  if (k == x->nwdbase) {
    if (k == sizeof x->wdbase / sizeof *x->wdbase)
      k = --x->nwdbase; /* full: the last one makes room */
    x->wdbase[k].root = root;
    x->wdbase[k].lbo = lbo;
    x->wdbase[k].W = W;
    x->wdbase[k].wd = x->nwd++;
    x->nwdbase++;
    nm lo = ptx_shared_addr(x, root);
    ins(x, "bfe.u32 %s, %s, 4, 14", lo.s, lo.s);
    ins(x, "or.b32 %s, %s, 0x%llx", lo.s, lo.s,
        (unsigned long long)((lbo >> 4) << 16));
    /* the high word: swizzle mode << 30 | stride byte offset 8 W >> 4 */
    int64_t mode = 4 - tir_swz_code(W);
    ins(x, "mov.b64 %%wd%u, {%s, 0x%llx}", x->wdbase[k].wd, lo.s,
        (unsigned long long)(mode << 30 | (8 * W) >> 4));
  }
  if (dist)
    ins(x, "add.s64 %s, %%wd%u, %lld", d, x->wdbase[k].wd,
        (long long)(dist >> 4));
  else
    ins(x, "mov.b64 %s, %%wd%u", d, x->wdbase[k].wd);
}

void ptx_emit_wgmma(px *x, const tir_instr *in) {
  wavec_mma_kind kind = (wavec_mma_kind)(in->imm & TIR_WG_KIND);
  const wv_mma_info *mi = wv_mma_info_get(kind);
  if (!mi || !wv_target_has_mma(x->t, kind))
    unsupported(x, "wgmma (a warpgroup mma) needs --target sm_90a");
  tir_ty ity = tir_ty_of(mi->in);
  bool areg = in->imm & TIR_WG_A_REGS, bmn = in->imm & TIR_WG_B_MN,
       amn = in->imm & TIR_WG_A_MN;
  uint32_t na = areg ? (uint32_t)wv_mma_elems(kind, WV_LHS, 8) : 0,
           nc = in->nlist - na, per = 4 / (uint32_t)tir_ty_bytes(ity);
  nm d[2];
  uint32_t src[2] = {in->a, in->b};
  for (int i = areg ? 1 : 0; i < 2; i++) {
    d[i] = T(x, C_B64);
    desc_of(x, src[i], i == 1 && bmn ? in->imm2 : 16, tir_wg_swz(in->imm, i),
            d[i].s);
  }
  wv_buf b;
  wv_buf_init(&b, x->ctx);
  if (areg) {
    if (!x->fenced)
      pack_window(x, in);
    else if (!x->wa[in - x->p->code.v])
      pack_lhs(x, in);
    uint32_t wa = x->wa[in - x->p->code.v] - 1;
    wv_buf_puts(&b, "{");
    for (uint32_t j = 0; j < na / per; j++)
      wv_buf_printf(&b, "%s%%wa%u", j ? ", " : "", wa + j);
    wv_buf_puts(&b, "}");
  }
  /* scale-d: accumulate, or start from zero (ptx_zero_rule) */
  bool from_zero = true;
  for (uint32_t j = 0; j < nc && from_zero; j++)
    from_zero = x->zero[in->list[j]];
  nm one = T(x, C_B32), p = T(x, C_PRED);
  ins(x, "mov.b32 %s, %d", one.s, from_zero ? 0 : 1);
  ins(x, "setp.ne.b32 %s, %s, 0", p.s, one.s);
  if (!x->fenced)
    ins(x, "wgmma.fence.sync.aligned");
  x->fenced = true;
  /* the mnemonic with N written in: "m64nNk16" -> "m64n128k16" */
  const char *at = strstr(mi->instr, "nNk");
  wv_assert(x->ctx, at != NULL);
  wv_buf m;
  wv_buf_init(&m, x->ctx);
  wv_buf_add(&m, mi->instr, (size_t)(at - mi->instr));
  wv_buf_printf(&m, "n%uk%s {", 2 * nc, at + 3);
  for (uint32_t j = 0; j < nc; j++)
    wv_buf_printf(&m, "%s%s", j ? ", " : "", R(x, in->list[j]).s);
  wv_buf_printf(&m, "}, %s, %s, %s", areg ? wv_buf_str(&b) : d[0].s, d[1].s,
                p.s);
  if (mi->acc == WAVEC_F32) /* no negation of a or b */
    wv_buf_puts(&m, ", 1, 1");
  /* transposes: a when M-contiguous (none from registers), b when
   * N-contiguous */
  if (tir_ty_bytes(ity) == 2 && areg)
    wv_buf_printf(&m, ", %d", bmn);
  else if (tir_ty_bytes(ity) == 2)
    wv_buf_printf(&m, ", %d, %d", amn, bmn);
  ins(x, "%s", wv_buf_str(&m));
}

/* T_WGCOMMIT: closes the group of the wgmmas before it, where one may be
 * open (open_groups). With none, nothing is emitted: PTX counts an empty
 * group as a group, which the waits' counts (waits.c: a close closes the
 * open group, if any) do not. */
void ptx_emit_wgcommit(px *x, const tir_instr *in) {
  if (x->commits[in - x->p->code.v])
    ins(x, "wgmma.commit_group.sync.aligned");
}

/* A wgmma wait: closes the open group, if there is one (open_groups), then
 * waits until at most imm groups are in flight. */
void ptx_emit_wgwait(px *x, const tir_instr *in) {
  if (x->commits[in - x->p->code.v])
    ins(x, "wgmma.commit_group.sync.aligned");
  ins(x, "wgmma.wait_group.sync.aligned %lld", (long long)in->imm);
}
