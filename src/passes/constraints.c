/* Pass `constraints`. require: bind. Derives the distribution (dist.h): per
 * dimension its workgroup axis and tile, wave tile, loop tile, the span one
 * wave covers and the index of the wave tile's first coordinate; the grid,
 * the waves per block, threads per wave and the mma type. Checks that every
 * mma's M, N and K fit the tiles of their dimensions. */
#include <stdio.h>

#include "passes/dist.h"

static wavec_sym named(wavec_ctx *ctx, const char *prefix, const char *name) {
  wv_buf b;
  wv_buf_init(&b, ctx);
  wv_buf_printf(&b, "%s%s", prefix, name);
  return wavec_symbol(ctx, wv_buf_str(&b));
}

static int64_t value(wv_kernel *k, ex_t e) {
  int64_t v = 0;
  bool ok = ex_eval(k->ctx, e, k->bind.ival, k->bind.known, k->bind.n, &v);
  wv_assert(k->ctx, ok); /* bind checked every size */
  return v;
}

wv_dist *wv_kernel_dist(wv_kernel *k) { return k->dist; }

/* The tiles of `tile` that cover dim di, and whether the last runs past its
 * edge; for a dynamic dim, unknown (-1), and ragged unless the tile
 * divides what every size is a multiple of. */
static void split_tiles(wv_diminfo *di, int64_t tile) {
  if (di->dynamic) {
    di->tiles = -1;
    di->ragged = di->multiple % tile != 0;
    return;
  }
  di->tiles = (di->size + tile - 1) / tile;
  di->ragged = di->size % tile != 0;
}

/* Is s an mma's M, N or K (laid out by the mma's fragments, not spread
 * over the lanes whole)? */
static bool mma_dim(wv_kernel *k, wavec_sym s) {
  for (uint32_t id = 1; id < k->g->nodes.n; id++) {
    const wv_node *n = wv_get(k->g, id);
    if (n->op == WAVEC_OP_MMA &&
        (n->sym == s || n->type.dims[n->type.n - 1] == s ||
         n->type.dims[n->type.n - 2] == s))
      return true;
  }
  return false;
}

/* The mma's K where s is some mma's reduction dim, else 0. */
static int64_t reduction_k(wv_kernel *k, const wv_dist *d, wavec_sym s) {
  for (uint32_t id = 1; id < k->g->nodes.n && d->mma >= 0; id++) {
    const wv_node *n = wv_get(k->g, id);
    if (n->op == WAVEC_OP_MMA && n->sym == s)
      return wv_mma_info_get((wavec_mma_kind)d->mma)->k;
  }
  return 0;
}

/* The elements of the narrowest swizzled row (32 bytes) where s is a
 * warpgroup mma's M or N dim that an operand read from memory has last
 * (an MN-major operand, such as attention's v along N), else 0. */
static int64_t mn_major_row(wv_kernel *k, const wv_dist *d, wavec_sym s) {
  if (d->mma < 0 || !wv_mma_is_warpgroup((wavec_mma_kind)d->mma))
    return 0;
  for (uint32_t id = 1; id < k->g->nodes.n; id++) {
    const wv_node *n = wv_get(k->g, id);
    for (int r = 0; r < 2 && n->op == WAVEC_OP_MMA && n->sym != s; r++) {
      const wv_node *o = wv_get(k->g, n->ops[r]);
      const wv_node *mem = o->op == WAVEC_OP_READ ? wv_get(k->g, o->mem) : NULL;
      if (mem && mem->type.dims[mem->type.n - 1] == s)
        return 32 / ((wv_dtypes[mem->type.dt].bits + 7) / 8);
    }
  }
  return 0;
}

/* A warpgroup mma's M, N or K dim that an operand read from memory has
 * in its rows (not last): staged in swizzled rows, whose groups of 1024
 * bytes take a multiple of 32 rows at the narrowest (32-byte) swizzle. */
static bool wgmma_row_dim(wv_kernel *k, const wv_dist *d, wavec_sym s) {
  if (d->mma < 0 || !wv_mma_is_warpgroup((wavec_mma_kind)d->mma))
    return false;
  for (uint32_t id = 1; id < k->g->nodes.n; id++) {
    const wv_node *n = wv_get(k->g, id);
    for (int r = 0; r < 2 && n->op == WAVEC_OP_MMA; r++) {
      const wv_node *o = wv_get(k->g, n->ops[r]);
      const wv_node *mem = o->op == WAVEC_OP_READ ? wv_get(k->g, o->mem) : NULL;
      if (mem && mem->type.dims[mem->type.n - 1] != s &&
          wv_type_has(&mem->type, s))
        return true;
    }
  }
  return false;
}

/* What an unsplit dim of an mma is padded up to a multiple of (0: none),
 * and why (for remarks): the mma's K where it is a reduction dim; on
 * warpgroups 16 elements (a 32-byte swizzled row) where an operand has it
 * last, and 32 rows where one has it in its rows. */
static int64_t pad_quantum(wv_kernel *k, const wv_dist *d, wavec_sym s,
                           const char **why) {
  int64_t q = reduction_k(k, d, s), row = mn_major_row(k, d, s);
  *why = q ? "a multiple of the mma's K" : NULL;
  if (row > q)
    q = row, *why = "a swizzled row of an operand";
  if (wgmma_row_dim(k, d, s) && q < 32)
    q = 32, *why = "whole swizzle groups of an operand's rows (32)";
  return q;
}

/* Is s the last dim of some value (what index.c's default_layout spreads
 * over the lanes whole)? */
static bool last_of_a_value(wv_kernel *k, wavec_sym s) {
  for (uint32_t id = 1; id < k->g->nodes.n; id++) {
    const wv_node *n = wv_get(k->g, id);
    if (n->type.n && n->type.dims[n->type.n - 1] == s)
      return true;
  }
  return false;
}

/* Partial sums. An mma whose reduction dim is split over waves or
 * workgroups, and a sum or max over a dim split over workgroups, leave each
 * wave or workgroup holding its part of the result: a sum or max is
 * reduced across the waves of a workgroup, nothing is reduced across
 * workgroups, and an mma's parts across neither. The parts are right only
 * where they are added up, by write(..., reduce = add) of the value
 * itself; any other use fails here, at the reduction (the use named). */
ex_t wv_wave_coord(wavec_ctx *ctx, const wv_dist *d, int a) {
  return a == 0 ? ex_floordiv(ctx, ex_sym(ctx, d->T[0]),
                              ex_const(ctx, d->lanes))
                : ex_sym(ctx, d->T[a]);
}

unsigned wv_partial(const wv_dist *d, const wv_node *n) {
  bool mma = n->op == WAVEC_OP_MMA;
  if (!mma && n->op != WAVEC_OP_SUM && n->op != WAVEC_OP_MAX)
    return 0;
  int a = d->dim[n->sym].wg_axis;
  if (a < 0)
    return 0;
  return (mma && d->waves[a] > 1 ? WV_PARTS_WAVES : 0) |
         (d->grid[a] != 1 ? WV_PARTS_GROUPS : 0);
}

static void partial_sums(wv_kernel *k, const wv_dist *d) {
  wavec_ctx *ctx = k->ctx;
  for (uint32_t id = 1; id < k->g->nodes.n; id++) {
    wv_node *n = wv_get(k->g, id);
    unsigned parts = wv_partial(d, n);
    if (!parts)
      continue;
    bool mma = n->op == WAVEC_OP_MMA, waves = parts & WV_PARTS_WAVES;
    const char *dn = wavec_symbol_name(ctx, n->sym);
    for (uint32_t u = 1; u < k->g->nodes.n; u++) {
      wv_node *x = wv_get(k->g, u);
      for (uint32_t i = 0; i < x->nops; i++) {
        if (x->ops[i] != id)
          continue;
        if (x->op == WAVEC_OP_WRITE && (x->flags & WV_WRITE_ADD) && i == 0 &&
            n->op != WAVEC_OP_MAX)
          continue;
        /* At the reduction, which names the dim split; a use on another
         * line is named in the message. */
        char use[64] = "";
        if (n->loc.line != x->loc.line)
          snprintf(use, sizeof use, ", which the %s at line %u uses",
                   wv_ops[x->op].name, x->loc.line);
        /* (a run-time size: its workgroups are counted at launch) */
        int a = d->dim[n->sym].wg_axis;
        const char *dyn = !waves && a >= 0 && d->grid[a] < 0
                              ? ", at run time more than one workgroup "
                                "where the size passes its tile"
                              : "";
        wv_fail(ctx, D_PARTIAL, n->loc,
                "this %s reduces over '%s', which is split over %s "
                "(%s(%s, ...)%s): each holds only its part of the "
                "result%s%s",
                mma ? "mma" : n->op == WAVEC_OP_SUM ? "sum" : "max", dn,
                waves ? "waves" : "workgroups",
                waves ? "wave" : "workgroup", dn, dyn, use,
                n->op == WAVEC_OP_MAX
                    ? ", and a max of parts cannot be written; walk that dim "
                      "with a loop (tiling) instead"
                    : "; write it with write(..., reduce = add), which adds "
                      "the parts in memory, and use it nowhere else");
      }
    }
  }
}

wavec_status wv_pass_constraints(wv_kernel *k) {
  wavec_ctx *ctx = k->ctx;
  wv_dist *d = wv_alloc(ctx, sizeof *d);
  const wv_target *tgt = wv_target_get("sim");
  d->lanes = k->hw.threads_per_wave ? (int)value(k, k->hw.threads_per_wave)
                                    : tgt->lanes;
  d->mma = k->hw.mma;
  for (int i = 0; i < WAVEC_HW_INT_COUNT; i++)
    d->hw[i] = k->hw.ints[i] ? value(k, k->hw.ints[i]) : 0;
  d->nsyms = ctx->sym_names.n;
  /* Symbols made below are appended to the table: size the array for them. */
  static const char *const tn[] = {"$T0", "$T1", "$T2"},
                           *const wn[] = {"$WG0", "$WG1", "$WG2"};
  for (int a = 0; a < 3; a++) {
    d->T[a] = wavec_symbol(ctx, tn[a]);
    d->WG[a] = wavec_symbol(ctx, wn[a]);
  }
  d->E = wavec_symbol(ctx, "$E");
  for (uint32_t id = 1; id < k->g->nodes.n; id++) {
    wv_node *n = wv_get(k->g, id);
    if (n->op == WAVEC_OP_ITERATE)
      named(ctx, "$ARG", wavec_symbol_name(ctx, n->sym));
  }
  d->nsyms = ctx->sym_names.n;
  d->dim = wv_alloc(ctx, d->nsyms * sizeof *d->dim);
  for (uint32_t s = 0; s < d->nsyms; s++) {
    d->dim[s].wg_axis = -1;
    d->dim[s].vshape = -1;
  }
  for (uint32_t id = 1; id < k->g->nodes.n; id++) {
    wv_node *n = wv_get(k->g, id);
    for (uint32_t i = 0; i < n->type.n; i++) {
      wv_diminfo *di = &d->dim[n->type.dims[i]];
      wavec_sym s = n->type.dims[i];
      di->used = true;
      di->dynamic = k->bind.dynamic[s];
      di->multiple = k->bind.multiple[s];
      di->size = di->dynamic ? -1 : k->bind.ival[s];
    }
  }
  for (uint32_t i = 0; i < k->constraints.n; i++) {
    wv_constraint *c = &k->constraints.v[i];
    wv_diminfo *di = &d->dim[c->dim];
    int64_t t = value(k, c->tile);
    switch (c->kind) {
    case WV_WORKGROUP:
      di->wg_axis = c->axis;
      di->wg_tile = t;
      break;
    case WV_WAVE:
      di->wave_tile = t;
      break;
    case WV_TILING:
      di->tile = t;
      break;
    }
  }
  for (uint32_t i = 0; i < k->hw.vector_shapes.n; i++)
    d->dim[k->hw.vector_shapes.v[i].dim].vshape =
        value(k, k->hw.vector_shapes.v[i].e);
  for (int a = 0; a < 3; a++)
    d->waves[a] = d->grid[a] = 1;
  ex_t lane = ex_mod(ctx, ex_sym(ctx, d->T[0]), ex_const(ctx, d->lanes));
  d->lane = lane;
  /* (a wave split without a workgroup one, a dim both split and walked:
   * refused by check) */
  for (wavec_sym s = 1; s < d->nsyms; s++) {
    wv_diminfo *di = &d->dim[s];
    if (!di->used)
      continue;
    if (di->wg_axis >= 0) {
      if (!di->wave_tile)
        di->wave_tile = di->wg_tile;
      int a = di->wg_axis;
      split_tiles(di, di->wg_tile);
      d->grid[a] = di->tiles;
      d->grid_dim[a] = s;
      d->waves[a] = di->wg_tile / di->wave_tile;
      ex_t wave = wv_wave_coord(ctx, d, a);
      ex_t base = ex_mul(ctx, ex_sym(ctx, d->WG[a]), ex_const(ctx, di->wg_tile));
      if (d->waves[a] > 1)
        base = ex_add(ctx, base,
                      ex_mul(ctx, wave, ex_const(ctx, di->wave_tile)));
      di->base = base;
      di->span = di->wave_tile;
    } else if (di->tile) {
      split_tiles(di, di->tile);
      di->loopvar = named(ctx, "$ARG", wavec_symbol_name(ctx, s));
      di->base = ex_mul(ctx, ex_sym(ctx, di->loopvar), ex_const(ctx, di->tile));
      di->span = di->tile;
    } else {
      if (di->dynamic) {
        const wv_dynamic *dy = wv_dynamic_of(k, s);
        wv_fail(ctx, D_CONSTRAINT_DIM, dy ? dy->loc : k->loc,
                "dynamic dimension '%s' is neither split over workgroups nor "
                "walked by a loop; give it a workgroup(%s, ...) or "
                "tiling(%s, ...) constraint",
                wavec_symbol_name(ctx, s), wavec_symbol_name(ctx, s),
                wavec_symbol_name(ctx, s));
      }
      di->base = ex_const(ctx, 0);
      di->span = di->size;
      /* a dim nothing splits, larger than a wave and not a multiple of
       * its lanes, no mma's and the last of some value: one tile rounded
       * up to the lanes, masked past the size (as workgroup(D, T, a) and
       * wave(D, T) of one tile would be), so that a wave holding it whole
       * (index.c's default_layout) spreads it evenly */
      if (di->vshape < 0 && di->size > d->lanes && di->size % d->lanes &&
          !mma_dim(k, s) && last_of_a_value(k, s)) {
        di->span = (di->size + d->lanes - 1) / d->lanes * d->lanes;
        di->tiles = 1;
        di->ragged = true;
        di->pad = d->lanes == 128 ? "a multiple of its 128 lanes"
                  : d->lanes == 64 ? "a multiple of its 64 lanes"
                                   : "a multiple of its 32 lanes";
      }
      /* an mma's reduction dim nothing splits, not a multiple of the
       * mma's K (a head dim of 40 or 72 on K = 16): padded up to one and
       * masked past the size, the padding's products 0 (a reduction takes
       * the padding as its identity); a warpgroup mma's M or N dim read
       * MN-major, up to a swizzled row (its padding's results are dropped
       * by the write) */
      const char *why = NULL;
      int64_t kq = pad_quantum(k, d, s, &why);
      if (di->vshape < 0 && kq && di->size % kq) {
        di->span = (di->size + kq - 1) / kq * kq;
        di->tiles = 1;
        di->ragged = true;
        di->pad = why;
      }
    }
  }
  d->block[0] = d->lanes * d->waves[0];
  d->block[1] = d->waves[1];
  d->block[2] = d->waves[2];
  if (d->block[0] * d->block[1] * d->block[2] > 1024)
    wv_fail(ctx, D_CONSTRAINT_DIM, k->loc,
            "kernel '%s' needs %lld threads per workgroup; at most 1024",
            k->name, (long long)(d->block[0] * d->block[1] * d->block[2]));
  /* Every mma's M, N and K must tile the wave's span of their dims. */
  for (uint32_t id = 1; id < k->g->nodes.n; id++) {
    wv_node *n = wv_get(k->g, id);
    if (n->op != WAVEC_OP_MMA)
      continue;
    if (d->mma < 0)
      wv_fail(ctx, D_HARDWARE, n->loc,
              "mma needs hardware(mma = ...) in the constraints");
    const wv_mma_info *mi = wv_mma_info_get((wavec_mma_kind)d->mma);
    /* (a value --hardware gave has no place in the source: say so) */
    bool cli_mma = !k->hw.mma_loc.line, cli_lanes = !k->hw.threads_loc.line;
    if (mi->lanes != d->lanes)
      wv_fail(ctx, D_HARDWARE, k->hw.mma_loc.line ? k->hw.mma_loc : n->loc,
              "mma %s%s runs on %d lanes%s but threads_per_wave is %d%s; %s "
              "threads_per_wave%s%d",
              mi->name, cli_mma ? " (--hardware mma)" : "", mi->lanes,
              mi->lanes == 128 ? " (a warpgroup)" : "", d->lanes,
              cli_lanes ? " (--hardware threads_per_wave)" : "",
              cli_lanes ? "give --hardware" : "write",
              cli_lanes ? "=" : " = ", mi->lanes);
    wavec_sym role[3] = {n->type.dims[n->type.n - 2],
                         n->type.dims[n->type.n - 1], n->sym};
    int64_t nspan = d->dim[role[1]].span;
    int64_t need[3] = {mi->m, wv_mma_pick_n((wavec_mma_kind)d->mma, nspan),
                       mi->k};
    if (!need[1])
      wv_fail(ctx, D_TILE_DIVIDE, n->loc,
              "mma %s needs N = '%s' in tiles of 8 to 256 (a multiple of 8), "
              "but a wave holds %lld of it",
              mi->name, wavec_symbol_name(ctx, role[1]), (long long)nspan);
    static const char *const rn[] = {"M", "N", "K"};
    for (int r = 0; r < 3; r++) {
      wv_diminfo *di = &d->dim[role[r]];
      if (need[r] && di->span % need[r] != 0)
        wv_fail(ctx, D_TILE_DIVIDE, n->loc,
                "mma %s needs %s = '%s' in tiles of %lld, but a wave holds "
                "%lld of it",
                mi->name, rn[r], wavec_symbol_name(ctx, role[r]),
                (long long)need[r], (long long)di->span);
    }
  }
  partial_sums(k, d);
  k->dist = d;
  return WAVEC_OK;
}
