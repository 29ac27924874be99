/* Pass `overlap`. require: lower. Within one warpgroup, the work between
 * an iteration's first and last groups of wgmmas runs while the previous
 * iteration's last group does.
 *
 * A loop that carries its last group of wgmmas into the next iteration
 * (TIR_WAIT_CARRY: attention's p . v) has the shape
 *     X (the tile's wait, addresses)  G (the first group: q kᵀ)
 *     M (the softmax)  D (the last group)  Y (yields, the slot's release)
 * and each iteration's M waits for its G with the tensor cores idle, as
 * far as this warpgroup goes. Rotated, iteration j issues D of iteration
 * j - 1 right after its own G, in a group of its own (T_WGCOMMIT between
 * them):
 *     X  G  commit  D(j - 1)  M  (copies for D(j))  Y
 * so that the waits pass waits for G alone (all but the newest group)
 * before M, and M runs while D(j - 1) does; M's first touch of D's
 * accumulator waits for it. After the loop, D of the last iteration,
 * where the loop ran at all. The first iteration's D(j - 1) is D of that
 * same iteration with a zero lhs (registers zeroed before the loop): it
 * reads the tile the iteration waited for and adds exact zeros (the tile
 * holds finite numbers; a non-finite one gives NaN here as it does in p .
 * v), so that the body needs no branch, which would make ptxas serialize
 * the wgmmas.
 *
 * D is the run of instructions that ends with the iteration's last wgmma
 * and holds only wgmmas and integer arithmetic nothing else reads. The
 * registers D reads that X, G or Y write (the slot's address) are
 * renamed: copied where D was, and in the first iteration taken from this
 * iteration (a select on the counter). It applies where D's lhs is in
 * registers, M and Y leave D's other operands alone, X, G and Y do not
 * touch D's registers, and the loop has no loop, region or barrier of its
 * own; the ring then holds the slot of iteration j - 1 until iteration j
 * has waited for D (the carry's release, lower_loop.c, already does).
 *
 * Asked for with hardware(overlap = 1) (E0408 where no loop qualifies);
 * not given, a remark says where it would apply. One remark a loop. */
#include "tir/lower.h"

typedef struct overlap_site {
  uint32_t loop, end;    /* T_LOOP, T_ENDLOOP */
  uint32_t g_end;        /* G's last wgmma */
  uint32_t d_from, d_to; /* D, d_to its last wgmma */
  uint32_t carry;        /* the carry wait */
} overlap_site;

/* Integer arithmetic without side effects (an address's). */
static bool int_arith(const tir_prog *p, const tir_instr *in) {
  switch (in->op) {
  case T_CONST: case T_MOV: case T_ADD: case T_SUB: case T_MUL: case T_DIV:
  case T_MOD: case T_TDIV: case T_TREM: case T_SHR: case T_MIN: case T_MAX:
  case T_SWZ:
    return in->dst && (p->regs.v[in->dst] == TY_I32 ||
                       p->regs.v[in->dst] == TY_I64) && !in->nlist;
  default: return false;
  }
}


/* The lhs registers of a wgmma (TIR_WG_A_REGS), from *n of them. */
static const uint32_t *lhs_regs(const tir_instr *in, uint32_t *n) {
  wavec_mma_kind kind = (wavec_mma_kind)(in->imm & TIR_WG_KIND);
  *n = (in->imm & TIR_WG_A_REGS) ? (uint32_t)wv_mma_elems(kind, WV_LHS, 8)
                                 : 0;
  return in->list + in->nlist - *n;
}

static bool is_int(const tir_prog *p, uint32_t r) {
  return p->regs.v[r] == TY_I32 || p->regs.v[r] == TY_I64;
}

/* May `in` belong to D: a wgmma, integer arithmetic, or an operation that
 * gives zero from zeros (a move, a conversion between floats, a select, a
 * zero)? */
static bool d_op(const tir_prog *p, const tir_instr *in) {
  if (in->op == T_WGMMA || int_arith(p, in))
    return true;
  if (!in->dst || in->nlist || is_int(p, in->dst) ||
      p->regs.v[in->dst] == TY_PRED)
    return false;
  switch (in->op) {
  case T_MOV: case T_SELP: return true;
  case T_CVT: return !is_int(p, in->a) && p->regs.v[in->a] != TY_PRED;
  case T_CONST: return in->fimm == 0 && in->imm == 0;
  default: return false;
  }
}

/* Which instructions touch each register (result, operands, list), in
 * program order: those of r are at[start[r] .. start[r + 1]). */
typedef struct touch_index {
  uint32_t *start, *at;
} touch_index;

static touch_index touches_of(wavec_ctx *ctx, const tir_prog *p) {
  uint32_t nr = p->regs.n;
  touch_index t = {wv_alloc(ctx, (nr + 1) * sizeof *t.start), NULL};
  for (int fill = 0; fill < 2; fill++) {
    uint32_t *next = fill ? wv_alloc(ctx, (nr + 1) * sizeof *next) : NULL;
    if (fill) {
      for (uint32_t r = 0; r < nr; r++) /* counts to offsets */
        t.start[r + 1] += t.start[r];
      memcpy(next, t.start, (nr + 1) * sizeof *next);
      t.at = wv_alloc(ctx, (t.start[nr] ? t.start[nr] : 1) * sizeof *t.at);
    }
    for (uint32_t k = 0; k < p->code.n; k++) {
      const tir_instr *in = &p->code.v[k];
      uint32_t ops[4] = {in->dst, in->a, in->b, in->c};
      for (uint32_t e = 0; e < 4 + in->nlist; e++) {
        uint32_t r = e < 4 ? ops[e] : in->list[e - 4];
        if (!r)
          continue;
        if (fill)
          t.at[next[r]++] = k;
        else
          t.start[r + 1]++;
      }
    }
  }
  return t;
}

/* Is register r touched by an instruction outside [from, to]? (Its
 * touches are in program order: the first and the last say.) */
static bool used_outside(const touch_index *ti, uint32_t r, uint32_t from,
                         uint32_t to) {
  uint32_t a = ti->start[r], b = ti->start[r + 1];
  return r && a < b && (ti->at[a] < from || ti->at[b - 1] > to);
}

/* Is register r written by an instruction in [from, to]? */
static bool written_in(const tir_prog *p, const touch_index *ti, uint32_t r,
                       uint32_t from, uint32_t to) {
  for (uint32_t t = ti->start[r]; t < ti->start[r + 1]; t++) {
    uint32_t k = ti->at[t];
    if (k >= from && k <= to && writes_reg(&p->code.v[k], r))
      return true;
  }
  return false;
}

/* What D reads from outside itself, by where it is written: integers
 * that X, G or Y write are renamed (copied); values M writes are zeroed
 * before the loop (the first iteration's D then adds zeros). */
typedef struct d_inputs {
  VEC(uint32_t) rename, zero;
  VEC(uint32_t) one; /* M's factors of the rescales that move (rescales) */
} d_inputs;

static void add_once(wavec_ctx *ctx, void *vec, uint32_t r) {
  VEC(uint32_t) *v = vec;
  for (uint32_t k = 0; k < v->n; k++)
    if (v->v[k] == r)
      return;
  vec_push(ctx, v, r);
}

/* Sorts D's inputs (in, if not NULL), or says why D cannot move. */
static const char *d_inputs_of(wavec_ctx *ctx, const tir_prog *p,
                               const overlap_site *s, const touch_index *ti,
                               d_inputs *in) {
  for (uint32_t j = s->d_from; j <= s->d_to; j++) {
    const tir_instr *di = &p->code.v[j];
    uint32_t ops[3 + 64], n = 0, nc = di->nlist;
    ops[n++] = di->a;
    ops[n++] = di->b;
    ops[n++] = di->c;
    if (di->op == T_WGMMA) {
      uint32_t na;
      const uint32_t *l = lhs_regs(di, &na);
      if (!na)
        return "its last group reads its lhs from shared memory";
      nc = di->nlist - na;
      for (uint32_t e = 0; e < na && n < WV_ARRAY_LEN(ops); e++)
        ops[n++] = l[e];
      /* X, G and Y leave its accumulator alone (M's touches wait) */
      for (uint32_t e = 0; e < nc; e++) {
        uint32_t r = di->list[e];
        for (uint32_t t = ti->start[r]; t < ti->start[r + 1]; t++) {
          uint32_t k = ti->at[t];
          if (k > s->loop && k < s->end &&
              (k <= s->g_end || (k > s->d_to && k != s->carry)))
            return "the rest of the iteration touches the accumulator of "
                   "its last wgmmas";
        }
      }
    }
    for (uint32_t o = 0; o < n; o++) {
      uint32_t r = ops[o];
      if (!r || (j > s->d_from && written_in(p, ti, r, s->d_from, j - 1)))
        continue; /* (D's own, or none) */
      bool xgy = written_in(p, ti, r, s->loop, s->g_end) ||
                 written_in(p, ti, r, s->d_to + 1, s->end);
      bool m = written_in(p, ti, r, s->g_end + 1, s->d_from - 1);
      if (is_int(p, r)) {
        if (m)
          return "the work between its groups writes an address its last "
                 "wgmmas read";
        if (xgy && in)
          add_once(ctx, &in->rename, r);
      } else {
        if (xgy || (!m && p->code.v[j].op == T_WGMMA))
          return "the lhs of its last wgmmas does not come from the work "
                 "between its groups";
        /* zeroed before the loop: nothing else in it reads the value
         * before M writes it */
        for (uint32_t t = ti->start[r]; t < ti->start[r + 1] && m; t++) {
          uint32_t k = ti->at[t];
          if (k > s->loop && k < s->end && (k < s->d_from || k > s->d_to) &&
              reads_reg(&p->code.v[k], r) &&
              (k <= s->g_end || k > s->d_to ||
               !written_in(p, ti, r, s->g_end + 1, k - 1)))
            return "the work between its groups reads what it gives its "
                   "last wgmmas before it writes it";
        }
        if (m && in)
          add_once(ctx, &in->zero, r);
      }
    }
  }
  return NULL;
}

/* NULL and *s where loop `i` qualifies; else why not. */
static const char *qualifies(wavec_ctx *ctx, const tir_prog *p, uint32_t i,
                             overlap_site *s) {
  uint32_t e = p->code.v[i].match, first = 0, carry = 0, last = 0;
  for (uint32_t j = i + 1; j < e; j++) {
    const tir_instr *in = &p->code.v[j];
    if (in->op == T_BAR || in->op == T_LOOP || in->op == T_IF ||
        in->op == T_TURNWAIT || in->op == T_TURNPASS ||
        in->op == T_WGCOMMIT)
      return "its body has a loop, a region or a barrier of its own";
    if (in->op == T_WGMMA) {
      first = first ? first : j;
      last = j;
    }
    if (in->op == T_WGWAIT && in->imm2 == TIR_WAIT_CARRY)
      carry = j;
  }
  if (!first)
    return "it issues no wgmma";
  if (!carry || carry < last)
    return "its last wgmmas do not run on into the next iteration (that "
           "takes a ring of 3 or more stages and nothing touching them "
           "before the next iteration waits)";
  /* G: the first run of wgmmas and integer arithmetic */
  uint32_t g_end = first;
  for (uint32_t j = first; j < e; j++) {
    const tir_instr *in = &p->code.v[j];
    if (in->op == T_WGMMA)
      g_end = j;
    else if (!int_arith(p, in))
      break;
  }
  /* D: back from the last wgmma over what only D reads */
  touch_index ti = touches_of(ctx, p);
  uint32_t d_from = last;
  while (d_from > g_end + 1) {
    const tir_instr *in = &p->code.v[d_from - 1];
    if (!d_op(p, in) ||
        (in->op != T_WGMMA && used_outside(&ti, in->dst, d_from - 1, last)))
      break;
    d_from--;
  }
  if (d_from <= g_end + 1)
    return "it issues one group of wgmmas an iteration, with nothing to "
           "overlap";
  *s = (overlap_site){.loop = i, .end = e, .g_end = g_end, .d_from = d_from,
                      .d_to = last, .carry = carry};
  return d_inputs_of(ctx, p, s, &ti, NULL);
}

/* What the loop body writes, by register: how many of its instructions,
 * the first and the last (one pass; the checks below are then O(1)). */
typedef struct body_defs {
  uint32_t *n, *first, *last;
} body_defs;

static void note_def(body_defs *d, uint32_t r, uint32_t k) {
  if (!r)
    return;
  if (!d->n[r]++)
    d->first[r] = k;
  d->last[r] = k;
}

static body_defs defs_of(wavec_ctx *ctx, const tir_prog *p,
                         const overlap_site *s) {
  uint32_t nr = p->regs.n;
  body_defs d = {wv_alloc(ctx, nr * sizeof *d.n),
                 wv_alloc(ctx, nr * sizeof *d.first),
                 wv_alloc(ctx, nr * sizeof *d.last)};
  for (uint32_t k = s->loop + 1; k < s->end; k++) {
    const tir_instr *in = &p->code.v[k];
    if (writes_dst(in))
      note_def(&d, in->dst, k);
    if (writes_list(in) || in->op == T_WGMMA || in->op == T_MMA)
      for (uint32_t e = 0; e < in->nlist; e++)
        note_def(&d, in->list[e], k);
  }
  return d;
}

/* f as the value it copies at the end of M: through the moves that are
 * its only write in the loop, made in M, from registers nothing writes
 * after them in the iteration (the online softmax's per-row factor,
 * copied to every element of o's rows, is one register again). */
static uint32_t copy_root(const tir_prog *p, const overlap_site *s,
                          const body_defs *d, uint32_t f) {
  for (int hop = 0; hop < 16; hop++) {
    uint32_t def = d->last[f];
    const tir_instr *mv = &p->code.v[def];
    if (d->n[f] != 1 || mv->op != T_MOV || def <= s->g_end ||
        def >= s->d_from || !mv->a || p->regs.v[mv->a] != p->regs.v[f] ||
        (d->n[mv->a] && d->last[mv->a] > def))
      return f;
    f = mv->a;
  }
  return f;
}

/* May a rescale of M at j take factor f at the top of the next iteration?
 * Every write of f in the loop is M's, before j (*m: there is one; none:
 * the loop's constant), and where M writes it, nothing else in the loop
 * reads it before (X, G and Y not at all). */
static bool factor_ok(const tir_prog *p, const overlap_site *s,
                      const body_defs *d, uint32_t j, uint32_t f, bool *m) {
  uint32_t from = s->g_end + 1;
  *m = d->n[f] != 0;
  if (!*m)
    return true;
  if (d->first[f] < from || d->last[f] >= j)
    return false;
  for (uint32_t k = s->loop + 1; k < s->end; k++) {
    if (k == d->first[f])
      k = s->d_to; /* (M from its write on, and D, read it after it) */
    else if (reads_reg(&p->code.v[k], f))
      return false;
  }
  return true;
}

/* D of the previous iteration runs while M works; what makes M wait for
 * it early is M touching D's registers: the rescale of D's accumulator
 * (acc = acc * f in place: the online softmax's correction of o) where f
 * is known, and M's new lhs for D (p converted to f16) written into the
 * registers D in flight reads. ptxas hoists such a wait with the first
 * touch it schedules, to just after the row maximum, and the exponentials
 * no longer overlap D. So, where it can:
 *  - the rescales move to the top of the next iteration, before X (D of
 *    the previous iteration retires there first, after M has run under
 *    it); f must be M's (written before the rescale and not after; X, G
 *    and Y neither read nor write it) or the loop's constant, and M's f
 *    starts at 1 before the loop (the first iteration's rescale leaves
 *    the accumulator as it is);
 *  - D reads a copy of the lhs M writes, taken at the top too, after the
 *    rescales: M writes the next lhs while D reads the last.
 * It can where every touch of D's accumulator in M is such a product and
 * M issues no wgmma of its own (whose waits retire D anyway).
 * Returns, by index from g_end + 1, the factor each instruction of M that
 * moves takes there (0: it stays; none may move), M's factors in in->one;
 * NULL where it cannot. */
static uint32_t *rescales(wavec_ctx *ctx, const tir_prog *p,
                          const overlap_site *s, d_inputs *in) {
  uint32_t from = s->g_end + 1, n = s->d_from - from;
  uint32_t *r = wv_alloc(ctx, (n ? n : 1) * sizeof *r);
  for (uint32_t j = from; j < s->d_from; j++) /* (its own waits retire D) */
    if (p->code.v[j].op == T_WGMMA)
      return NULL;
  bool *acc = wv_alloc(ctx, p->regs.n * sizeof *acc);
  for (uint32_t j = s->d_from; j <= s->d_to; j++) {
    const tir_instr *w = &p->code.v[j];
    uint32_t na = 0;
    if (w->op != T_WGMMA)
      continue;
    lhs_regs(w, &na);
    for (uint32_t e = 0; e + na < w->nlist; e++)
      acc[w->list[e]] = true;
  }
  body_defs d = defs_of(ctx, p, s);
  for (uint32_t j = from; j < s->d_from; j++) {
    const tir_instr *mi = &p->code.v[j];
    bool touch = acc[mi->dst] || acc[mi->a] || acc[mi->b] || acc[mi->c];
    for (uint32_t e = 0; e < mi->nlist && !touch; e++)
      touch = acc[mi->list[e]];
    if (!touch)
      continue;
    if (mi->op != T_MUL || mi->ty != TY_F32 || mi->nlist ||
        (mi->a == mi->dst) == (mi->b == mi->dst))
      return NULL;
    uint32_t f = mi->a == mi->dst ? mi->b : mi->a;
    uint32_t root = copy_root(p, s, &d, f);
    bool m;
    if (root != f && factor_ok(p, s, &d, j, root, &m))
      f = root;
    else if (!factor_ok(p, s, &d, j, f, &m))
      return NULL;
    if (m)
      add_once(ctx, &in->one, f);
    r[j - from] = f;
  }
  return r;
}

typedef VEC(tir_instr) code_vec;

static void emit(wavec_ctx *ctx, code_vec *c, tir_instr in) {
  vec_push(ctx, c, in);
}

/* The renaming of one rotation: D's operands that X, G or Y write, each
 * with its copy. */
typedef struct renames {
  VEC(uint32_t) from, to;
} renames;

static uint32_t renamed(const renames *rn, uint32_t r) {
  for (uint32_t k = 0; k < rn->from.n; k++)
    if (rn->from.v[k] == r)
      return rn->to.v[k];
  return r;
}

/* D's instructions with operands renamed; `fresh`: its own results in new
 * registers too (the copy after the loop). */
static void put_d(wavec_ctx *ctx, tir_prog *p, code_vec *c,
                  const overlap_site *s, const renames *rn, bool fresh) {
  renames own = {0};
  for (uint32_t j = s->d_from; j <= s->d_to; j++) {
    tir_instr in = p->code.v[j];
    in.a = renamed(&own, renamed(rn, in.a));
    in.b = renamed(&own, renamed(rn, in.b));
    in.c = renamed(&own, renamed(rn, in.c));
    if (in.nlist) { /* (its own copy: the program owns one per instruction) */
      uint32_t *l = wv_alloc(ctx, in.nlist * sizeof *l);
      for (uint32_t e = 0; e < in.nlist; e++)
        l[e] = renamed(&own, in.list[e]);
      in.list = l;
    }
    if (!fresh && in.op == T_WGMMA && in.tag) /* (the previous tile's) */
      in.tag |= TIR_TAG_PREV;
    if (fresh && in.op != T_WGMMA && in.dst) {
      uint32_t d = tir_new_reg(ctx, p, p->regs.v[in.dst]);
      vec_push(ctx, &own.from, in.dst);
      vec_push(ctx, &own.to, d);
      in.dst = d;
    }
    emit(ctx, c, in);
  }
}

/* The rescales of M that move with D (rescales), in their order. */
static void put_rescales(wavec_ctx *ctx, const tir_prog *p, code_vec *c,
                         const overlap_site *s, const uint32_t *resc) {
  for (uint32_t j = s->g_end + 1; resc && j < s->d_from; j++)
    if (resc[j - s->g_end - 1]) {
      tir_instr in = p->code.v[j];
      *(in.a == in.dst ? &in.b : &in.a) = resc[j - s->g_end - 1];
      emit(ctx, c, in);
    }
}

static void remark(wv_kernel *k, const tir_prog *p, const overlap_site *s,
                   bool done) {
  wv_buf b;
  wv_remark_start(k, p->code.v[s->loop].loc, &b);
  if (done)
    wv_buf_printf(&b, "overlap: each iteration issues the previous one's last "
                      "wgmmas (line %u) right after its own first (line %u), "
                      "so that the work between them runs while they do; "
                      "the last iteration's follow the loop",
                  p->code.v[s->d_to].loc.line, p->code.v[s->g_end].loc.line);
  else
    wv_buf_printf(&b, "overlap: not chosen: the previous iteration's last "
                      "wgmmas (line %u) could run while this one works "
                      "between its first and last; measured, that gains "
                      "with 64-key attention tiles and loses with 128-key "
                      "ones at D = 128 and in the backward "
                      "(hardware(overlap = 1) asks for it)",
                  p->code.v[s->d_to].loc.line);
  wv_remark_end(k, &b);
}

/* Which instructions of M to move to its end (by index from g_end + 1):
 * those computing only what D reads (p converted to f16 and moved into
 * the wgmma's fragment), from operands nothing after them in M writes.
 * Written late, after M's wait for D of the previous iteration, they give
 * ptxas no reason to wait for that D early: it may put them in the
 * registers that D's packed lhs still occupies, which it can only do
 * after the wait, and then hoists the wait above the softmax. */
static bool *sink(wavec_ctx *ctx, const tir_prog *p, const overlap_site *s) {
  uint32_t from = s->g_end + 1, n = s->d_from - from;
  bool *late = wv_alloc(ctx, (n ? n : 1) * sizeof *late);
  touch_index t = touches_of(ctx, p);
  for (uint32_t j = s->d_from; j-- > from;) {
    const tir_instr *in = &p->code.v[j];
    if (!d_op(p, in) || in->op == T_WGMMA || int_arith(p, in))
      continue;
    bool ok = true;
    /* its result read only by D and by what moves with it */
    for (uint32_t e = t.start[in->dst]; e < t.start[in->dst + 1] && ok; e++) {
      uint32_t k = t.at[e];
      if (k != j && (k < s->d_from || k > s->d_to) &&
          !(k > j && k < s->d_from && late[k - from]))
        ok = false;
    }
    /* its operands not written by what stays after it */
    uint32_t ops[3] = {in->a, in->b, in->c};
    for (int o = 0; o < 3 && ok; o++)
      for (uint32_t e = ops[o] ? t.start[ops[o]] : 0;
           ops[o] && e < t.start[ops[o] + 1] && ok; e++) {
        uint32_t k = t.at[e];
        if (k > j && k < s->d_from && !late[k - from] &&
            writes_reg(&p->code.v[k], ops[o]))
          ok = false;
      }
    late[j - from] = ok;
  }
  return late;
}

/* Rotates the loop of site s: appends the new code of [s->loop, s->end]
 * and what must follow the loop to c. */
static void rotate(wavec_ctx *ctx, tir_prog *p, code_vec *c,
                   const overlap_site *s) {
  const tir_instr *lp = &p->code.v[s->loop];
  wavec_loc at = p->code.v[s->d_from].loc;
  d_inputs di = {0};
  touch_index ti = touches_of(ctx, p);
  const char *no = d_inputs_of(ctx, p, s, &ti, &di);
  wv_assert(ctx, !no);
  /* planted bugs for the tests: nothing zeroed (the first iteration's D
   * reads registers nothing wrote), nothing copied (D reads the addresses
   * of the iteration it runs in) */
  if (ctx->test_hooks & WV_HOOK_OVERLAP_NO_ZERO)
    di.zero.n = 0;
  if (ctx->test_hooks & WV_HOOK_OVERLAP_NO_COPY)
    di.rename.n = 0;
  renames rn = {0};
  for (uint32_t k = 0; k < di.rename.n; k++) {
    uint32_t r = di.rename.v[k];
    vec_push(ctx, &rn.from, r);
    vec_push(ctx, &rn.to, tir_new_reg(ctx, p, p->regs.v[r]));
  }
  /* before the loop: the copies defined, what M gives D zero */
  for (uint32_t k = 0; k < rn.to.n; k++)
    emit(ctx, c, (tir_instr){.op = T_CONST, .ty = p->regs.v[rn.to.v[k]],
                             .dst = rn.to.v[k], .loc = at});
  for (uint32_t k = 0; k < di.zero.n; k++)
    emit(ctx, c, (tir_instr){.op = T_CONST, .ty = p->regs.v[di.zero.v[k]],
                             .dst = di.zero.v[k], .loc = at});
  uint32_t *resc = rescales(ctx, p, s, &di);
  for (uint32_t k = 0; k < di.one.n; k++)
    emit(ctx, c, (tir_instr){.op = T_CONST, .ty = TY_F32, .dst = di.one.v[k],
                             .fimm = 1.0, .loc = at});
  /* the releases of Y (mbarrier arrivals: the slot D of the previous
   * iteration read), moved with the rescales to the top of the next
   * iteration, on registers Y copies: before the loop none is due */
  VEC(uint32_t) arr = {0}, ca = {0}, cb = {0};
  for (uint32_t j = s->d_to + 1; resc && j < s->end; j++)
    if (p->code.v[j].op == T_MBARRIVE && p->code.v[j].imm == 0) {
      vec_push(ctx, &arr, j);
      vec_push(ctx, &ca, tir_new_reg(ctx, p, p->regs.v[p->code.v[j].a]));
      vec_push(ctx, &cb, tir_new_reg(ctx, p, TY_PRED));
      emit(ctx, c, (tir_instr){.op = T_CONST, .ty = p->regs.v[ca.v[ca.n - 1]],
                               .dst = ca.v[ca.n - 1], .loc = at});
      emit(ctx, c, (tir_instr){.op = T_CONST, .ty = TY_PRED,
                               .dst = cb.v[cb.n - 1], .loc = at});
    }
  /* what D reads from M, copied (resc): D reads the copy */
  renames lhs = {0};
  for (uint32_t k = 0; resc && k < di.zero.n; k++) {
    uint32_t r = di.zero.v[k];
    vec_push(ctx, &lhs.from, r);
    vec_push(ctx, &lhs.to, tir_new_reg(ctx, p, p->regs.v[r]));
  }
  /* the loop: the rescales of D(j - 1) and its lhs copied, X G, commit,
   * the first iteration's select, D(j - 1) */
  emit(ctx, c, p->code.v[s->loop]);
  if (resc) /* D of the previous iteration retires (none: the first) */
    emit(ctx, c, (tir_instr){.op = T_WGWAIT, .ty = TY_PRED, .loc = at});
  for (uint32_t k = 0; k < arr.n; k++) {
    tir_instr a = p->code.v[arr.v[k]];
    a.a = ca.v[k];
    a.b = cb.v[k];
    a.tag |= a.tag ? TIR_TAG_PREV : 0; /* (an earlier iteration's tile) */
    emit(ctx, c, a);
  }
  put_rescales(ctx, p, c, s, resc);
  for (uint32_t k = 0; k < lhs.from.n; k++)
    emit(ctx, c, (tir_instr){.op = T_MOV, .ty = p->regs.v[lhs.to.v[k]],
                             .dst = lhs.to.v[k], .a = lhs.from.v[k],
                             .loc = at});
  for (uint32_t j = s->loop + 1; j <= s->g_end; j++)
    emit(ctx, c, p->code.v[j]);
  emit(ctx, c, (tir_instr){.op = T_WGCOMMIT, .ty = TY_PRED, .loc = at});
  if (rn.from.n) {
    uint32_t start = lp->a;
    if (!start) {
      start = tir_new_reg(ctx, p, TY_I32);
      emit(ctx, c, (tir_instr){.op = T_CONST, .ty = TY_I32, .dst = start,
                               .loc = at});
    }
    uint32_t isfirst = tir_new_reg(ctx, p, TY_PRED);
    emit(ctx, c, (tir_instr){.op = T_SETP, .ty = TY_I32, .dst = isfirst,
                             .a = lp->dst, .b = start, .imm = TIR_CMP_EQ,
                             .loc = at});
    for (uint32_t k = 0; k < rn.from.n; k++)
      emit(ctx, c, (tir_instr){.op = T_SELP, .ty = p->regs.v[rn.to.v[k]],
                               .dst = rn.to.v[k], .a = isfirst,
                               .b = rn.from.v[k], .c = rn.to.v[k],
                               .loc = at});
  }
  for (uint32_t k = 0; k < lhs.from.n; k++) {
    vec_push(ctx, &rn.from, lhs.from.v[k]);
    vec_push(ctx, &rn.to, lhs.to.v[k]);
  }
  put_d(ctx, p, c, s, &rn, false);
  rn.from.n -= lhs.from.n; /* (the copies where D was: X's, G's, Y's) */
  rn.to.n -= lhs.from.n;
  /* M (what only D reads last), then the copies where D was, then Y
   * without the carry wait */
  bool *late = sink(ctx, p, s);
  for (int pass = 0; pass < 2; pass++)
    for (uint32_t j = s->g_end + 1; j < s->d_from; j++)
      if (late[j - s->g_end - 1] == pass &&
          !(resc && resc[j - s->g_end - 1]))
        emit(ctx, c, p->code.v[j]);
  for (uint32_t k = 0; k < rn.from.n; k++)
    emit(ctx, c, (tir_instr){.op = T_MOV, .ty = p->regs.v[rn.to.v[k]],
                             .dst = rn.to.v[k], .a = rn.from.v[k],
                             .loc = at});
  for (uint32_t j = s->d_to + 1; j < s->end; j++) {
    bool moved = false;
    for (uint32_t k = 0; k < arr.n; k++)
      moved |= arr.v[k] == j;
    if (j != s->carry && !moved)
      emit(ctx, c, p->code.v[j]);
  }
  /* (resc) the moved releases' operands, and D of this iteration carried
   * into the next (the wait at its top retires it) */
  for (uint32_t k = 0; k < arr.n; k++) {
    const tir_instr *a = &p->code.v[arr.v[k]];
    emit(ctx, c, (tir_instr){.op = T_MOV, .ty = p->regs.v[ca.v[k]],
                             .dst = ca.v[k], .a = a->a, .loc = a->loc});
    if (a->b)
      emit(ctx, c, (tir_instr){.op = T_MOV, .ty = TY_PRED, .dst = cb.v[k],
                               .a = a->b, .loc = a->loc});
    else
      emit(ctx, c, (tir_instr){.op = T_CONST, .ty = TY_PRED, .dst = cb.v[k],
                               .imm = 1, .loc = a->loc});
  }
  if (resc)
    emit(ctx, c, (tir_instr){.op = T_WGWAIT, .ty = TY_PRED, .imm = 1,
                             .imm2 = TIR_WAIT_CARRY, .loc = at});
  emit(ctx, c, p->code.v[s->end]);
  for (uint32_t k = 0; k < arr.n; k++) { /* the last iteration's */
    tir_instr a = p->code.v[arr.v[k]];
    a.a = ca.v[k];
    a.b = cb.v[k];
    emit(ctx, c, a);
  }
  /* after it: the last iteration's D, if there was one */
  uint32_t any = 0;
  if (lp->a || lp->b) {
    uint32_t lo = lp->a, hi = lp->b;
    if (!lo) {
      lo = tir_new_reg(ctx, p, TY_I32);
      emit(ctx, c, (tir_instr){.op = T_CONST, .ty = TY_I32, .dst = lo,
                               .loc = at});
    }
    if (!hi) {
      hi = tir_new_reg(ctx, p, TY_I32);
      emit(ctx, c, (tir_instr){.op = T_CONST, .ty = TY_I32, .dst = hi,
                               .imm = lp->imm, .loc = at});
    }
    any = tir_new_reg(ctx, p, TY_PRED);
    emit(ctx, c, (tir_instr){.op = T_SETP, .ty = TY_I32, .dst = any, .a = hi,
                             .b = lo, .imm = TIR_CMP_GT, .loc = at});
    emit(ctx, c, (tir_instr){.op = T_IF, .ty = TY_PRED, .a = any, .loc = at});
  }
  put_rescales(ctx, p, c, s, resc);
  put_d(ctx, p, c, s, &rn, true);
  if (any)
    emit(ctx, c, (tir_instr){.op = T_ENDIF, .ty = TY_PRED, .loc = at});
}

wavec_status wv_pass_overlap(wv_kernel *k) {
  wavec_ctx *ctx = k->ctx;
  tir_prog *p = k->tir;
  wavec_loc at;
  int64_t knob = lw_knob(k, WAVEC_HW_OVERLAP, &at);
  if (knob == 0)
    return WAVEC_OK;
  bool asked = knob > 0;
  VEC(overlap_site) sites = {0};
  const char *why = "it has no loop";
  for (uint32_t i = 0; i < p->code.n; i++) {
    if (p->code.v[i].op != T_LOOP)
      continue;
    overlap_site s;
    const char *no = qualifies(ctx, p, i, &s);
    if (no)
      why = no;
    else
      vec_push(ctx, &sites, s);
  }
  if (!sites.n) {
    if (asked)
      wv_fail(ctx, D_SCHEDULE, at, "%s: no loop has a "
              "last group of wgmmas to overlap with the next iteration: %s",
              lw_knob_text(k, WAVEC_HW_OVERLAP, 1), why);
    return WAVEC_OK;
  }
  if (!asked) {
    remark(k, p, &sites.v[0], false);
    return WAVEC_OK;
  }
  code_vec code = {0};
  uint32_t next = 0;
  for (uint32_t i = 0; i < p->code.n; i++) {
    if (next < sites.n && i == sites.v[next].loop) {
      remark(k, p, &sites.v[next], true);
      rotate(ctx, p, &code, &sites.v[next]);
      i = sites.v[next++].end;
      continue;
    }
    vec_push(ctx, &code, p->code.v[i]);
  }
  tir_install_code(ctx, p, code);
  return WAVEC_OK;
}
