/* Pass `release`. require: waits. A tensor-copy ring's slot goes back to
 * its producer as soon as the wgmmas that read it have retired, not at the
 * end of the iteration where the lowering put its release.
 *
 * The lowering releases each ring stage's slot at the end of the
 * iteration (lower_loop.c): the iteration's own tile, or the previous
 * one's where the carried group reads the stage. Each release and each
 * wgmma that reads a ring's slot carries a tag (tir.h: the stages, and
 * whether the tile is the previous iteration's). Here a tagged release R
 * in a loop's body (not in a loop or region of its own) moves up to right
 * after W, the first full wait (T_WGWAIT 0) of the body that comes after
 * every wgmma of R's stages and tile between the body's top and R (for a
 * release of the previous tile, with none, the body's first full wait:
 * the wgmmas of the previous iteration all retire there), provided no
 * instruction between W and R reads shared memory. The integer arithmetic
 * that computes R's operands between W and R (its barrier's address and
 * its predicate) is copied, on registers of its own, to W; the copies it
 * leaves behind with nothing to read them go.
 *
 * In attention's forward, k's slot goes back right after q kᵀ has
 * retired (before the softmax rather than after p v), v's previous slot
 * at the same wait: the producer refills each a softmax earlier. */
#include "tir/lower.h"

static bool reads_shared(const tir_instr *in) {
  return in->op == T_LDS || in->op == T_LDSV || in->op == T_LDSM ||
         in->op == T_LDSMT;
}

/* One release's move: R to right after W, with the arithmetic `slice`
 * (instruction indexes, in order) copied there. */
typedef struct move {
  uint32_t r, w;
  VEC(uint32_t) slice;
} move;

/* Where release r of the loop body (top, r) moves: W, or 0 if nowhere. */
static uint32_t target(const tir_prog *p, uint32_t top, uint32_t r,
                       uint64_t ctx_hooks) {
  uint32_t tag = p->code.v[r].tag;
  uint32_t stages = tag & ~TIR_TAG_PREV, lag = tag & TIR_TAG_PREV;
  uint32_t last = top;
  for (uint32_t j = top + 1; j < r; j++) {
    const tir_instr *in = &p->code.v[j];
    if (in->op == T_WGMMA && (in->tag & stages) &&
        (in->tag & TIR_TAG_PREV) == lag)
      last = j;
  }
  if (!lag && last == top)
    return 0; /* (no reader of its own tile: leave it) */
  /* planted bug for the tests: give the slot back at the body's top,
   * before any wait */
  if (ctx_hooks & WV_HOOK_RELEASE_EARLY)
    return top;
  uint32_t depth = 0, w = 0;
  for (uint32_t j = top + 1; j < r && !w; j++) {
    const tir_instr *in = &p->code.v[j];
    if (in->op == T_LOOP || in->op == T_IF)
      depth++;
    else if (in->op == T_ENDLOOP || in->op == T_ENDIF)
      depth--;
    else if (j > last && !depth && in->op == T_WGWAIT && in->imm == 0)
      w = j;
  }
  for (uint32_t j = w + 1; w && j < r; j++)
    if (reads_shared(&p->code.v[j]))
      return 0;
  return w;
}

/* The arithmetic in (w, r) that R's operands come from, into m->slice;
 * false if some of it cannot move (not arithmetic, in a nested loop or
 * region, or a register written twice there). */
static bool slice_of(wavec_ctx *ctx, const tir_prog *p, move *m) {
  VEC(uint32_t) need = {0};
  const tir_instr *rel = &p->code.v[m->r];
  if (rel->a)
    vec_push(ctx, &need, rel->a);
  if (rel->b)
    vec_push(ctx, &need, rel->b);
  uint32_t depth = 0;
  for (uint32_t j = m->r; j-- > m->w + 1;) {
    const tir_instr *in = &p->code.v[j];
    depth += in->op == T_ENDLOOP || in->op == T_ENDIF;
    depth -= in->op == T_LOOP || in->op == T_IF;
    for (uint32_t k = 0; k < need.n; k++) {
      if (!writes_reg(in, need.v[k]))
        continue;
      if (depth || !tir_int_pure(p, in))
        return false;
      vec_push(ctx, &m->slice, j);
      need.v[k] = need.v[--need.n];
      uint32_t src[3] = {in->a, in->b, in->c};
      for (int e = 0; e < 3; e++)
        if (src[e])
          vec_push(ctx, &need, src[e]);
      break;
    }
  }
  /* a register the slice writes, written again in the window: its value
   * at W is not the one R read */
  for (uint32_t s = 0; s < m->slice.n; s++) {
    uint32_t d = p->code.v[m->slice.v[s]].dst, writes = 0;
    for (uint32_t j = m->w + 1; j < m->r; j++)
      writes += writes_reg(&p->code.v[j], d);
    if (writes != 1)
      return false;
  }
  /* the registers it reads from before W: nothing in the window writes
   * them (else the slice would hold that write) */
  for (uint32_t k = 0; k < need.n; k++)
    for (uint32_t j = m->w + 1; j < m->r; j++)
      if (writes_reg(&p->code.v[j], need.v[k]))
        return false;
  /* program order */
  for (uint32_t a = 0; a < m->slice.n / 2; a++) {
    uint32_t t = m->slice.v[a];
    m->slice.v[a] = m->slice.v[m->slice.n - 1 - a];
    m->slice.v[m->slice.n - 1 - a] = t;
  }
  return true;
}

/* The loop whose body holds instruction i at its own level: its T_LOOP, or
 * 0 if i is in a region, or in none. */
static uint32_t body_of(const tir_prog *p, uint32_t i) {
  uint32_t depth = 0;
  for (uint32_t j = i; j-- > 0;) {
    const tir_instr *in = &p->code.v[j];
    if (in->op == T_ENDLOOP || in->op == T_ENDIF)
      depth++;
    else if (in->op == T_LOOP || in->op == T_IF) {
      if (!depth)
        return in->op == T_LOOP ? j : 0;
      depth--;
    }
  }
  return 0;
}

static bool is_release(const tir_instr *in) {
  return in->op == T_MBARRIVE && in->imm == 0 && in->tag;
}

typedef VEC(tir_instr) code_vec;

wavec_status wv_pass_release(wv_kernel *k) {
  wavec_ctx *ctx = k->ctx;
  tir_prog *p = k->tir;
  VEC(move) moves = {0};
  for (uint32_t i = 0; i < p->code.n; i++) {
    if (!is_release(&p->code.v[i]))
      continue;
    uint32_t top = body_of(p, i);
    move m = {.r = i, .w = top ? target(p, top, i, ctx->test_hooks) : 0};
    if (m.w && slice_of(ctx, p, &m))
      vec_push(ctx, &moves, m);
  }
  if (!moves.n)
    return WAVEC_OK;
  /* what moves or is copied, and the reads left of each register */
  bool *gone = wv_alloc(ctx, p->code.n * sizeof *gone);
  uint32_t *reads = wv_alloc(ctx, p->regs.n * sizeof *reads);
  for (uint32_t i = 0; i < moves.n; i++)
    gone[moves.v[i].r] = true;
  for (uint32_t i = 0; i < p->code.n; i++) {
    const tir_instr *in = &p->code.v[i];
    if (gone[i])
      continue;
    uint32_t src[3] = {in->a, in->b, in->c};
    for (int e = 0; e < 3; e++)
      reads[src[e]]++;
    for (uint32_t e = 0; e < in->nlist; e++)
      reads[in->list[e]] +=
          !writes_reg(in, in->list[e]) || in->op == T_WGMMA || in->op == T_MMA;
  }
  /* the originals nothing reads any more, last first (a chain goes whole) */
  for (uint32_t i = moves.n; i-- > 0;) {
    const move *m = &moves.v[i];
    for (uint32_t s = m->slice.n; s-- > 0;) {
      const tir_instr *in = &p->code.v[m->slice.v[s]];
      if (gone[m->slice.v[s]] || reads[in->dst])
        continue;
      gone[m->slice.v[s]] = true;
      uint32_t src[3] = {in->a, in->b, in->c};
      for (int e = 0; e < 3; e++)
        reads[src[e]] -= reads[src[e]] > 0;
    }
  }
  code_vec code = {0};
  for (uint32_t i = 0; i < p->code.n; i++) {
    if (!gone[i])
      vec_push(ctx, &code, p->code.v[i]);
    for (uint32_t j = 0; j < moves.n; j++) {
      const move *m = &moves.v[j];
      if (m->w != i)
        continue;
      /* the slice on registers of its own, then the release */
      VEC(uint32_t) from = {0}, to = {0};
      for (uint32_t s = 0; s <= m->slice.n; s++) {
        tir_instr in = p->code.v[s < m->slice.n ? m->slice.v[s] : m->r];
        uint32_t *ops[3] = {&in.a, &in.b, &in.c};
        for (int e = 0; e < 3; e++)
          for (uint32_t f = 0; f < from.n; f++)
            if (*ops[e] == from.v[f])
              *ops[e] = to.v[f];
        if (s < m->slice.n) {
          vec_push(ctx, &from, in.dst);
          in.dst = tir_new_reg(ctx, p, p->regs.v[in.dst]);
          vec_push(ctx, &to, in.dst);
        }
        vec_push(ctx, &code, in);
      }
    }
  }
  tir_install_code(ctx, p, code);
  return WAVEC_OK;
}

/* What release promises: between a tagged release in a loop's body and the
 * full wait before it (or the body's top), no wgmma reads the slot it gives
 * back; a release of the previous iteration's tile comes after a wait that
 * retires the previous iteration's wgmmas (a full one, or the carry wait
 * after this iteration's). */
wavec_status wv_verify_release(wv_kernel *k) {
  const tir_prog *p = k->tir;
  /* (the planted bug of the hook wgmma-no-wait is the simulator's to find,
   * as in tir_verify_waits) */
  if (k->ctx->test_hooks & WV_HOOK_WGMMA_NO_WAIT)
    return WAVEC_OK;
  for (uint32_t i = 0; i < p->code.n; i++) {
    const tir_instr *rel = &p->code.v[i];
    uint32_t top = is_release(rel) ? body_of(p, i) : 0;
    if (!top)
      continue;
    uint32_t stages = rel->tag & ~TIR_TAG_PREV, lag = rel->tag & TIR_TAG_PREV;
    uint32_t depth = 0;
    bool retired = false; /* the previous iterations' wgmmas, here */
    for (uint32_t j = i; j-- > top + 1 && !retired;) {
      const tir_instr *in = &p->code.v[j];
      depth += in->op == T_ENDLOOP || in->op == T_ENDIF;
      depth -= in->op == T_LOOP || in->op == T_IF;
      /* a full wait; or a carry wait after a wgmma of this iteration (the
       * one group it keeps is this iteration's) */
      bool carry = in->op == T_WGWAIT && in->imm2 == TIR_WAIT_CARRY;
      for (uint32_t g = top + 1; carry && g < j && !retired; g++)
        retired = p->code.v[g].op == T_WGMMA;
      retired |= in->op == T_WGWAIT && in->imm == 0 && !depth;
      if (retired)
        break;
      if (in->op == T_WGMMA && (in->tag & stages) &&
          (in->tag & TIR_TAG_PREV) == lag)
        wv_fail(k->ctx, D_INTERNAL, rel->loc,
                "thread program: instruction "
                "%u gives back a ring's slot that the wgmma at %u may still "
                "read",
                i, j);
    }
    if (lag && !retired)
      wv_fail(k->ctx, D_INTERNAL, rel->loc,
              "thread program: instruction %u "
              "gives back a ring's slot of the previous iteration before a "
              "wait retires the wgmmas that read it",
              i);
  }
  return WAVEC_OK;
}
