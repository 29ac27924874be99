/* Pass `bind`. require: check. Every symbol the kernel uses gets its value:
 * a -D override (wavec_define_*) wins over the kernel's defaults. Then every
 * size-like expression is evaluated and checked: dimensions and tiles are
 * positive integers, every tensor's bytes fit (wv_tensor_elems), a wave
 * tile divides its workgroup tile, `/` divides exactly. A workgroup or loop
 * tile need not divide its dimension: the last tile then runs past the
 * edge (a ragged dimension, see dist.h). */
#include <stdio.h>

#include "passes/passes.h"

typedef struct bctx {
  wv_kernel *k;
  wv_binding *b;
} bctx;

static const char *name(wv_kernel *k, wavec_sym s) {
  return wavec_symbol_name(k->ctx, s);
}

/* Symbol s's -D definition, or NULL. */
static const wv_define *define_of(wv_kernel *k, wavec_sym s) {
  const char *nm = name(k, s);
  for (uint32_t i = 0; i < k->ctx->defines.n; i++)
    if (strcmp(k->ctx->defines.v[i].name, nm) == 0)
      return &k->ctx->defines.v[i];
  return NULL;
}

/* Symbol s's entry in the kernel's defaults { }, or NULL. */
static const wv_default *default_of(wv_kernel *k, wavec_sym s) {
  for (uint32_t i = 0; i < k->defaults.n; i++)
    if (k->defaults.v[i].sym == s)
      return &k->defaults.v[i];
  return NULL;
}

/* Looks the symbol up: a definition, else a literal default (an
 * expression waits for bind_expr_defaults, once its symbols have values);
 * nothing when it has no value. */
static void lookup(wv_kernel *k, wv_binding *b, wavec_sym s) {
  const wv_define *def = define_of(k, s);
  const wv_default *d = def ? NULL : default_of(k, s);
  if (!def && (!d || d->e))
    return;
  b->known[s] = true;
  b->is_float[s] = def ? def->is_float : d->is_float;
  b->ival[s] = def ? def->i : d->i;
  b->fval[s] = def ? def->f : d->f;
}

typedef struct symcheck {
  wv_kernel *k;
  wavec_loc loc;
  const char *what;
} symcheck;

static void need_int(void *ud, wavec_sym s) {
  symcheck *sc = ud;
  wv_binding *b = &sc->k->bind;
  if (b->dynamic[s])
    wv_fail(sc->k->ctx, D_UNBOUND, sc->loc,
            "'%s' is dynamic (known only at run time), but %s needs its "
            "value when the kernel is compiled",
            name(sc->k, s), sc->what);
  if (!b->known[s])
    wv_fail(sc->k->ctx, D_UNBOUND, sc->loc,
            "'%s' in %s has no value; give it in defaults { } or with -D "
            "%s=VALUE",
            name(sc->k, s), sc->what, name(sc->k, s));
  if (b->is_float[s]) {
    /* print a float as one: 32.0, not 32 */
    char num[64];
    snprintf(num, sizeof num, "%.17g", b->fval[s]);
    if (!strpbrk(num, ".eEn"))
      strcat(num, ".0");
    wv_fail(sc->k->ctx, D_FLOAT_SHAPE, sc->loc,
            "'%s' = %s is a float but %s needs an integer", name(sc->k, s),
            num, sc->what);
  }
}

/* Evaluates e (every symbol must be a bound integer). */
static int64_t eval(wv_kernel *k, ex_t e, wavec_loc loc, const char *what) {
  symcheck sc = {k, loc, what};
  ex_syms(k->ctx, e, need_int, &sc);
  int64_t v;
  bool over;
  if (!ex_eval_ck(k->ctx, e, k->bind.ival, k->bind.known, k->bind.n, &v,
                  &over)) {
    if (over)
      wv_fail(k->ctx, D_OVERFLOW, loc,
              "integer overflow: the value of %s does not fit in 64 bits", what);
    wv_fail(k->ctx, D_DIV_ZERO, loc, "%s divides by zero", what);
  }
  return v;
}

/* A value of the source for the rules below: its value (bound; lit:
 * only where it is a constant, else false). */
static bool value(wv_kernel *k, bool lit, ex_t e, wavec_loc loc,
                  const char *what, int64_t *v) {
  if (lit)
    return ex_is_const(k->ctx, e, v);
  *v = eval(k, e, loc, what);
  return true;
}

void wv_value_rules(wv_kernel *k, bool lit) {
  wavec_ctx *ctx = k->ctx;
  for (uint32_t i = 0; i < k->dynamics.n; i++) {
    wv_dynamic *dy = &k->dynamics.v[i];
    int64_t m;
    if (dy->multiple &&
        value(k, lit, dy->multiple, dy->loc, "multiple_of", &m) && m <= 0)
      wv_fail(ctx, D_TILE_POSITIVE, dy->loc, "multiple_of = %lld is not "
              "positive", (long long)m);
  }
  static const char *const kinds[] = {"workgroup", "wave", "tiling"};
  for (uint32_t i = 0; i < k->constraints.n; i++) {
    wv_constraint *c = &k->constraints.v[i];
    int64_t t;
    if (!value(k, lit, c->tile, c->tile_loc, "a constraint tile", &t))
      continue;
    if (t <= 0)
      wv_fail(ctx, D_TILE_POSITIVE, c->tile_loc, "%s tile of '%s' is %lld",
              kinds[c->kind], name(k, c->dim), (long long)t);
    /* A wave tile splits its workgroup tile (the others may run past the
     * edge of their dimension). */
    if (c->kind != WV_WAVE)
      continue;
    for (uint32_t j = 0; j < k->constraints.n; j++) {
      wv_constraint *w = &k->constraints.v[j];
      if (w->kind != WV_WORKGROUP || w->dim != c->dim)
        continue;
      int64_t whole;
      if (value(k, lit, w->tile, w->tile_loc, "a constraint tile", &whole) &&
          whole % t != 0)
        wv_fail(ctx, D_TILE_DIVIDE, c->tile_loc,
                "wave tile %lld does not divide the workgroup tile %lld of "
                "'%s'",
                (long long)t, (long long)whole, name(k, c->dim));
    }
  }
  int64_t t;
  if (k->hw.threads_per_wave &&
      value(k, lit, k->hw.threads_per_wave, k->hw.threads_loc,
            "threads_per_wave", &t)) {
    if (t != 32 && t != 64 && t != 128)
      wv_fail(ctx, D_HARDWARE, k->hw.threads_loc,
              "threads_per_wave = %lld; it must be 32, 64 or 128 (a "
              "warpgroup, for wgmma)",
              (long long)t);
  }
  for (int i = 0; i < WAVEC_HW_INT_COUNT; i++) {
    const wv_hwint_info *hi = &wv_hwints[i];
    if (!k->hw.ints[i])
      continue;
    int64_t s;
    if (value(k, lit, k->hw.ints[i], k->hw.ints_loc[i], hi->name, &s) &&
        (s < hi->lo || s > hi->hi))
      wv_fail(ctx, D_HARDWARE, k->hw.ints_loc[i],
              "%s = %lld; it must be %lld to %lld", hi->name, (long long)s,
              (long long)hi->lo, (long long)hi->hi);
  }
  for (uint32_t i = 0; i < k->hw.vector_shapes.n; i++) {
    wv_dimval *v = &k->hw.vector_shapes.v[i];
    int64_t e;
    if (value(k, lit, v->e, v->loc, "a vector shape", &e) && e < 0)
      wv_fail(ctx, D_HARDWARE, v->loc, "vector shape of '%s' is negative",
              name(k, v->dim));
  }
}

/* The defaults that are expressions (not overridden by -D) and still
 * without a value: done[i] false for entry i. */
typedef struct pending {
  wv_kernel *k;
  const bool *done;
  bool ready;     /* every symbol has an integer value */
  wavec_sym bad;  /* the first without one that is no pending default */
  wavec_sym wait; /* the first that is a pending default */
} pending;

/* ex_syms over a bounded iterate's offset: the first symbol that is no
 * integer of bind's, nor a run-time size. */
typedef struct offset_check {
  wv_kernel *k;
  wavec_sym bad;
} offset_check;

static void offset_sym(void *ud, wavec_sym s) {
  offset_check *oc = ud;
  const wv_binding *b = &oc->k->bind;
  if (!oc->bad && !b->dynamic[s] && (!b->known[s] || b->is_float[s]))
    oc->bad = s;
}

/* The index of the pending expression default of s, or -1. */
static int32_t pending_index(wv_kernel *k, const bool *done, wavec_sym s) {
  for (uint32_t i = 0; i < k->defaults.n; i++)
    if (k->defaults.v[i].sym == s && k->defaults.v[i].e && !done[i])
      return (int32_t)i;
  return -1;
}

static void scan(void *ud, wavec_sym s) {
  pending *pd = ud;
  bool has = pd->k->bind.known[s] && !pd->k->bind.is_float[s];
  pd->ready &= has;
  if (has)
    return;
  if (pending_index(pd->k, pd->done, s) >= 0) {
    if (!pd->wait)
      pd->wait = s;
  } else if (!pd->bad) {
    pd->bad = s;
  }
}

/* The defaults that are expressions (and not overridden by -D), evaluated
 * in the order their symbols get values: sizes and literal hyperparameters
 * first, then each expression whose symbols all have integer values. A
 * dynamic dim's entry gives only its run-time default, as a literal one
 * does. What is left names a symbol with no integer value (unknown,
 * dynamic or a float: need_int says which), or waits on another entry
 * left: then following each one's first such wait from any of them comes
 * round to a cycle within as many steps as there are entries. */
static void bind_expr_defaults(wv_kernel *k) {
  wv_binding *b = &k->bind;
  uint32_t n = k->defaults.n;
  bool *done = wv_alloc(k->ctx, (n + 1) * sizeof *done);
  for (uint32_t i = 0; i < n; i++)
    done[i] = !k->defaults.v[i].e || define_of(k, k->defaults.v[i].sym);
  bool progress = true;
  while (progress) {
    progress = false;
    for (uint32_t i = 0; i < n; i++) {
      wv_default *d = &k->defaults.v[i];
      pending pd = {k, done, true, 0, 0};
      if (done[i] || (ex_syms(k->ctx, d->e, scan, &pd), !pd.ready))
        continue;
      b->ival[d->sym] = eval(k, d->e, d->loc, "a default");
      b->fval[d->sym] = (double)b->ival[d->sym];
      b->known[d->sym] = !b->dynamic[d->sym];
      done[i] = progress = true;
    }
  }
  int32_t at = -1;
  for (uint32_t i = 0; i < n; i++) {
    if (done[i])
      continue;
    wv_default *d = &k->defaults.v[i];
    pending pd = {k, done, true, 0, 0};
    ex_syms(k->ctx, d->e, scan, &pd);
    if (pd.bad) {
      symcheck sc = {k, d->loc, "a default"};
      need_int(&sc, pd.bad);
    }
    at = (int32_t)i;
  }
  if (at < 0)
    return;
  for (uint32_t step = 0; step < n; step++) {
    pending pd = {k, done, true, 0, 0};
    ex_syms(k->ctx, k->defaults.v[at].e, scan, &pd);
    at = pending_index(k, done, pd.wait);
  }
  wv_default *d = &k->defaults.v[at];
  pending pd = {k, done, true, 0, 0};
  ex_syms(k->ctx, d->e, scan, &pd);
  if (pd.wait == d->sym)
    wv_fail(k->ctx, D_UNBOUND, d->loc,
            "the default of '%s' depends on itself; give it a value (a "
            "literal, or -D %s=VALUE)",
            name(k, d->sym), name(k, d->sym));
  wv_fail(k->ctx, D_UNBOUND, d->loc,
          "the default of '%s' depends, through '%s', on itself; give one "
          "of them a value (a literal, or -D)",
          name(k, d->sym), name(k, pd.wait));
}

wavec_status wv_pass_bind(wv_kernel *k) {
  wavec_ctx *ctx = k->ctx;
  wv_binding *b = &k->bind;
  uint32_t n = ctx->sym_names.n;
  b->n = n;
  b->ival = wv_alloc(ctx, n * sizeof *b->ival);
  b->fval = wv_alloc(ctx, n * sizeof *b->fval);
  b->known = wv_alloc(ctx, n * sizeof *b->known);
  b->is_float = wv_alloc(ctx, n * sizeof *b->is_float);
  b->dynamic = wv_alloc(ctx, n * sizeof *b->dynamic);
  b->multiple = wv_alloc(ctx, n * sizeof *b->multiple);
  for (wavec_sym s = 1; s < n; s++) {
    lookup(k, b, s);
    b->multiple[s] = 1;
  }
  /* dynamic dimensions: a definition is only their run-time default */
  for (uint32_t i = 0; i < k->dynamics.n; i++) {
    wv_dynamic *dy = &k->dynamics.v[i];
    wavec_sym s = dy->dim;
    if (b->is_float[s])
      wv_fail(ctx, D_FLOAT_SHAPE, dy->loc, "'%s' is defined as a float",
              name(k, s));
    if (!b->known[s])
      b->ival[s] = 0;
    b->known[s] = false;
    b->dynamic[s] = true;
  }
  bind_expr_defaults(k);
  /* a run-time default (-D, or defaults { }) is a size: positive */
  for (uint32_t i = 0; i < k->dynamics.n; i++) {
    wavec_sym s = k->dynamics.v[i].dim;
    const wv_default *d = define_of(k, s) ? NULL : default_of(k, s);
    if ((d || define_of(k, s)) && b->ival[s] <= 0)
      wv_fail(ctx, D_TILE_POSITIVE, d ? d->loc : k->dynamics.v[i].loc,
              "dynamic dimension '%s' defaults to %lld at run time; a size "
              "is positive",
              name(k, s), (long long)b->ival[s]);
  }
  for (uint32_t i = 0; i < k->dynamics.n; i++) {
    wv_dynamic *dy = &k->dynamics.v[i];
    if (dy->multiple) /* (positive: wv_value_rules, below) */
      b->multiple[dy->dim] = eval(k, dy->multiple, dy->loc, "multiple_of");
    /* ... and a multiple of what the entry states, as every run's is */
    wavec_sym s = dy->dim;
    const wv_default *d = define_of(k, s) ? NULL : default_of(k, s);
    int64_t m = b->multiple[s];
    if ((d || define_of(k, s)) && m > 1 && b->ival[s] % m)
      wv_fail(ctx, D_TILE_DIVIDE, d ? d->loc : dy->loc,
              "dynamic dimension '%s' defaults to %lld at run time, not a "
              "multiple of %lld (multiple_of): every size it takes must be",
              name(k, s), (long long)b->ival[s], (long long)m);
  }

  /* A bounded iterate's offset: integer sizes and hyperparameters, or
   * run-time sizes */
  for (uint32_t id = 1; id < k->g->nodes.n; id++) {
    wv_node *nd = wv_get(k->g, id);
    offset_check oc = {k, 0};
    if (nd->op == WAVEC_OP_ITERATE && nd->rel_off)
      ex_syms(ctx, nd->rel_off, offset_sym, &oc);
    if (oc.bad)
      wv_fail(ctx, b->is_float[oc.bad] ? D_FLOAT_SHAPE : D_UNBOUND,
              nd->rel_loc, "the bound's offset uses '%s', which %s",
              name(k, oc.bad),
              b->is_float[oc.bad] ? "is a float (an offset is an integer)"
                                  : "has no value (-D, or defaults { })");
  }

  /* Dimensions of every tensor: positive integers. */
  for (uint32_t id = 1; id < k->g->nodes.n; id++) {
    wv_node *nd = wv_get(k->g, id);
    for (uint32_t i = 0; i < nd->type.n; i++) {
      wavec_sym d = nd->type.dims[i];
      wavec_loc at = d < k->ndim_loc && k->dim_loc[d].line ? k->dim_loc[d]
                                                           : nd->loc;
      if (b->dynamic[d])
        continue; /* given at run time */
      symcheck sc = {k, at, "a tensor shape"};
      need_int(&sc, d);
      if (b->ival[d] <= 0)
        wv_fail(ctx, D_TILE_POSITIVE, at,
                "dimension '%s' = %lld is not positive", name(k, d),
                (long long)b->ival[d]);
    }
    /* every size product the later passes form fits */
    if (nd->op == WAVEC_OP_ARG)
      wv_tensor_elems(k, nd, NULL);
    /* (a run-time size is a value too: the kernel's parameter) */
    if (nd->op == WAVEC_OP_SCALAR && nd->sym && !b->known[nd->sym] &&
        !b->dynamic[nd->sym])
      wv_fail(ctx, D_UNBOUND, nd->loc,
              "'%s' has no value; give it in defaults { } or with -D %s=VALUE",
              name(k, nd->sym), name(k, nd->sym));
    if (nd->ept && eval(k, nd->ept, nd->loc, "elements_per_thread") <= 0)
      wv_fail(ctx, D_EPT, nd->loc, "elements_per_thread is not positive");
  }
  for (uint32_t i = 0; i < k->exactdivs.n; i++) {
    wv_exactdiv *d = &k->exactdivs.v[i];
    int64_t x = eval(k, d->a, d->loc, "a division");
    int64_t y = eval(k, d->b, d->loc, "a division");
    if (y == 0)
      wv_fail(ctx, D_DIV_ZERO, d->loc, "division by zero");
    if (x % y != 0)
      wv_fail(ctx, D_NOT_EXACT, d->loc,
              "%lld / %lld is not exact; use // for floor division",
              (long long)x, (long long)y);
  }
  wv_value_rules(k, false);
  for (uint32_t i = 0; i < k->mappings.n; i++) {
    wv_mapping *m = &k->mappings.v[i];
    /* Iterators stay free; every other symbol must be bound. */
    for (uint32_t j = 0; j < m->inputs.n + m->outputs.n; j++) {
      wv_dimval *dv = j < m->inputs.n ? &m->inputs.v[j]
                                      : &m->outputs.v[j - m->inputs.n];
      for (wavec_sym s = 1; s < n; s++) {
        bool iter = false;
        for (uint32_t t = 0; t < m->iters.n; t++)
          iter |= m->iters.v[t] == s;
        if (!iter && ex_uses(ctx, dv->e, s)) {
          symcheck sc = {k, dv->loc, "a mapping"};
          need_int(&sc, s);
        }
      }
    }
  }
  return WAVEC_OK;
}
