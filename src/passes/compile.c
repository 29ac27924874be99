/* The pipeline: one flat table of passes, run in order, the verifier after
 * each, timed, dumped on request. */
#include <stdlib.h>
#include <string.h>

#include "passes/dist.h"
#include "passes/passes.h"
#include "tir/tir.h"

/* The verifiers run after a pass: the graph always; the index once it
 * exists (expanded or broadcast layouts once broadcast has run); the thread
 * program once it exists. */
static wavec_status verify_graph(wv_kernel *k, const char *pass) {
  return wv_verify(k, pass);
}

static wavec_status verify_index(wv_kernel *k, const char *pass) {
  wavec_status st = wv_verify(k, pass);
  return st == WAVEC_OK ? wv_verify_index(k, false) : st;
}

static wavec_status verify_views(wv_kernel *k, const char *pass) {
  wavec_status st = wv_verify(k, pass);
  return st == WAVEC_OK ? wv_verify_index(k, true) : st;
}

static wavec_status verify_tir(wv_kernel *k, const char *pass) {
  wavec_status st = wv_verify(k, pass);
  return st == WAVEC_OK ? tir_verify(k->ctx, k->tir) : st;
}

/* The analyses before lower: the graph, and what each promises. */
#define VERIFY_PLAN(name)                                                     \
  static wavec_status verify_##name(wv_kernel *k, const char *pass) {        \
    wavec_status st = wv_verify(k, pass);                                     \
    return st == WAVEC_OK ? wv_verify_##name(k) : st;                         \
  }
VERIFY_PLAN(promote)
VERIFY_PLAN(pipeline)
VERIFY_PLAN(walks)
VERIFY_PLAN(masksplit)
VERIFY_PLAN(schedule)
#undef VERIFY_PLAN

static wavec_status verify_waits(wv_kernel *k, const char *pass) {
  wavec_status st = verify_tir(k, pass);
  return st == WAVEC_OK ? tir_verify_waits(k->ctx, k->tir) : st;
}

static wavec_status verify_barriers(wv_kernel *k, const char *pass) {
  wavec_status st = verify_tir(k, pass);
  return st == WAVEC_OK ? tir_verify_barriers(k->ctx, k->tir) : st;
}

static wavec_status verify_release(wv_kernel *k, const char *pass) {
  wavec_status st = verify_waits(k, pass);
  return st == WAVEC_OK ? wv_verify_release(k) : st;
}

static wavec_status verify_turns(wv_kernel *k, const char *pass) {
  wavec_status st = verify_waits(k, pass);
  return st == WAVEC_OK ? wv_verify_turns(k) : st;
}

/* What --print-after shows: the graph, or the thread program. */
static void print_graph(wv_kernel *k, wv_buf *b) { wv_print_kernel(k, b); }

static void print_tir(wv_kernel *k, wv_buf *b) {
  tir_print(k->ctx, k->tir, b);
}

/* The pipeline, in the order it runs: each pass, its contract, the verifier
 * after it and what --print-after prints. */
static const struct {
  wavec_pass pass;
  const char *name;
  wavec_status (*run)(wv_kernel *k);
  wavec_status (*verify)(wv_kernel *k, const char *pass);
  void (*print)(wv_kernel *k, wv_buf *b);
  const char *about;
} pipeline[] = {
    {WAVEC_PASS_CHECK, "check", wv_pass_check, verify_graph, print_graph,
     "whole-kernel rules: constraint dims, tilings, mma operand types"},
    {WAVEC_PASS_BIND, "bind", wv_pass_bind, verify_graph, print_graph,
     "symbol values (-D over defaults), tile divisibility"},
    {WAVEC_PASS_CONSTRAINTS, "constraints", wv_pass_constraints, verify_graph,
     print_graph, "the distribution: grid, waves, spans, loops, mma roles"},
    {WAVEC_PASS_INDEX, "index", wv_pass_index, verify_index, print_graph,
     "a layout for every value"},
    {WAVEC_PASS_BROADCAST, "broadcast", wv_pass_broadcast, verify_views,
     print_graph, "explicit broadcasts and layout conversions"},
    {WAVEC_PASS_EXPAND, "expand", wv_pass_expand, verify_views, print_graph,
     "one node per vector tile; mma and reductions become chains"},
    {WAVEC_PASS_PROMOTE, "promote", wv_pass_promote, verify_promote,
     wv_print_promote,
     "which mma operands are staged in shared memory, ring depth, where"},
    {WAVEC_PASS_PIPELINE, "pipeline", wv_pass_pipeline, verify_pipeline,
     wv_print_pipeline,
     "each ring: tiles in flight, wgmma carry, cp.async or tensor copies"},
    {WAVEC_PASS_SCHEDULE, "schedule", wv_pass_schedule, verify_schedule,
     wv_print_schedule,
     "warp specialization (producer, consumers, registers); persistent tiles"},
    {WAVEC_PASS_WALKS, "walks", wv_pass_walks, verify_walks, wv_print_walks,
     "the tiles each iterate walks (bounded iterates: per workgroup)"},
    {WAVEC_PASS_MASKSPLIT, "masksplit", wv_pass_masksplit, verify_masksplit,
     wv_print_masksplit,
     "where a causal mask splits a walk into whole and masked tiles"},
    {WAVEC_PASS_LOWER, "lower", wv_pass_lower, verify_tir, print_tir,
     "the thread program (TIR); wgmma waits are the next pass's"},
    {WAVEC_PASS_BARRIERS, "barriers", wv_pass_barriers, verify_barriers,
     print_tir, "barriers before a scratch region's reuse that another "
     "barrier already covers, dropped"},
    {WAVEC_PASS_CONTRACT, "contract", wv_pass_contract, verify_tir, print_tir,
     "a float product used once by a sum: one fused multiply-add"},
    {WAVEC_PASS_OVERLAP, "overlap", wv_pass_overlap, verify_tir, print_tir,
     "a loop's last wgmmas issued after the next iteration's first"},
    {WAVEC_PASS_AHEAD, "ahead", wv_pass_ahead, verify_tir, print_tir,
     "a loop's first wgmmas issued at the end of the iteration before"},
    {WAVEC_PASS_WAITS, "waits", wv_pass_waits, verify_waits, print_tir,
     "wgmma waits where a wgmma's registers or tiles are next touched"},
    {WAVEC_PASS_RELEASE, "release", wv_pass_release, verify_release,
     print_tir, "each ring slot given back at the wait that retires its "
     "readers"},
    {WAVEC_PASS_TURNS, "turns", wv_pass_turns, verify_turns, print_tir,
     "ping-pong: specialized consumers take turns issuing their wgmmas"},
};

static int row_of(wavec_pass p) {
  for (size_t i = 0; i < WV_ARRAY_LEN(pipeline); i++)
    if (pipeline[i].pass == p)
      return (int)i;
  return -1;
}

int wavec_pass_at(size_t i) {
  return i < WV_ARRAY_LEN(pipeline) ? (int)pipeline[i].pass : -1;
}

const char *wavec_pass_name(wavec_pass p) {
  int r = row_of(p);
  return r < 0 ? "?" : pipeline[r].name;
}

const char *wavec_pass_about(wavec_pass p) {
  int r = row_of(p);
  return r < 0 ? "" : pipeline[r].about;
}

int wavec_pass_lookup(const char *name) {
  for (size_t i = 0; name && i < WV_ARRAY_LEN(pipeline); i++)
    if (strcmp(pipeline[i].name, name) == 0)
      return (int)pipeline[i].pass;
  return -1;
}

static wavec_status compile(wv_kernel *k, const wavec_options *opt) {
  wavec_ctx *ctx = k->ctx;
  if (!k->ended)
    wv_fail(ctx, D_INVALID, k->loc, "kernel '%s' was not ended", k->name);
  if (k->dist)
    wv_fail(ctx, D_INVALID, k->loc, "kernel '%s' is already compiled",
            k->name);
  /* --hardware overrides: their errors have no place in the source */
  if (ctx->hw_threads) {
    k->hw.threads_per_wave = ex_const(ctx, ctx->hw_threads);
    k->hw.threads_loc = (wavec_loc){0};
  }
  if (ctx->hw_mma >= 0) {
    k->hw.mma = ctx->hw_mma;
    k->hw.mma_loc = (wavec_loc){0};
  }
  for (int i = 0; i < WAVEC_HW_INT_COUNT; i++) {
    if (ctx->hw_ints[i] >= 0) {
      k->hw.ints[i] = ex_const(ctx, ctx->hw_ints[i]);
      k->hw.ints_loc[i] = (wavec_loc){0};
    }
  }
  /* where a ring whose depth promote chose leaves lower more shared
   * memory than a workgroup can have, promote runs again with a shallower
   * one (wv_lower_refit): the remarks and dumps of the passes from promote
   * to lower are the last try's (their dumps wait for lower), their times
   * every try's */
  int from = row_of(WAVEC_PASS_PROMOTE), to = row_of(WAVEC_PASS_LOWER);
  uint32_t nremarks = 0, ntimes = 0;
  bool again = false;
  wv_buf held[WV_ARRAY_LEN(pipeline)] = {{0}};
  for (size_t i = 0; i < WV_ARRAY_LEN(pipeline); i++) {
    bool trying = (int)i >= from && (int)i <= to;
    if ((int)i == from && !again)
      nremarks = k->remarks.n, ntimes = ctx->times.n;
    ctx->at = k->loc; /* until the pass says which node it is at */
    uint64_t t0 = wv_now_ns();
    wavec_status st = pipeline[i].run(k);
    if (st == WAVEC_OK)
      st = pipeline[i].verify(k, pipeline[i].name);
    wv_time t = {pipeline[i].name, wv_now_ns() - t0};
    if (again && trying)
      ctx->times.v[ntimes + (uint32_t)(i - (size_t)from)].ns += t.ns;
    else
      vec_push(ctx, &ctx->times, t);
    if (st == WAVEC_OK && (int)i == to &&
        (k->stages_cap = wv_lower_refit(k)) > 0) {
      k->remarks.n = nremarks;
      memset(held, 0, sizeof held);
      again = true;
      i = (size_t)from - 1;
      continue;
    }
    if (trying && (st != WAVEC_OK || (int)i == to))
      for (int j = from; j < (int)i; j++) /* what waited, in order */
        if (held[j].s && opt->dump)
          opt->dump(opt->dump_ud, pipeline[j].pass, held[j].s, held[j].n);
    if (st != WAVEC_OK)
      return st;
    bool want = opt && (opt->print_after >> pipeline[i].pass) & 1u;
    if (want && trying && (int)i < to) { /* until lower keeps this try */
      wv_buf_init(&held[i], k->ctx);
      pipeline[i].print(k, &held[i]);
      continue;
    }
    bool last = i + 1 == WV_ARRAY_LEN(pipeline) ||
                (opt && opt->check_only && pipeline[i].pass == WAVEC_PASS_CHECK);
    if (want) {
      wv_buf_init(&k->dump, k->ctx);
      pipeline[i].print(k, &k->dump);
    }
    /* the final dump is printed only when asked for (wavec_kernel_dump):
     * for a large kernel it is larger than the program */
    k->dump_due = last && !want ? pipeline[i].print : NULL;
    if (want && opt->dump)
      opt->dump(opt->dump_ud, pipeline[i].pass, k->dump.s ? k->dump.s : "",
                k->dump.n);
    if (last)
      break;
  }
  return WAVEC_OK;
}

/* The caller's options as this library's wavec_options: the fields within
 * opt->size, the others 0 (wavec.h). */
static wavec_options read_options(wv_kernel *k, const wavec_options *opt) {
  wavec_options o = {.size = sizeof o};
  if (!opt)
    return o;
  if (opt->size < sizeof opt->size)
    wv_fail(k->ctx, D_INVALID, k->loc,
            "wavec_options.size is %zu: set it to sizeof(wavec_options) "
            "(WAVEC_OPTIONS_INIT does)", opt->size);
  const unsigned char *tail = (const unsigned char *)opt + sizeof o;
  for (size_t i = 0; i + sizeof o < opt->size; i++)
    if (tail[i])
      wv_fail(k->ctx, D_INVALID, k->loc,
              "wavec_options.size is %zu, this library's options end at "
              "byte %zu and a field past them is set", opt->size, sizeof o);
  memcpy(&o, opt, opt->size < sizeof o ? opt->size : sizeof o);
  o.size = sizeof o;
  return o;
}

wavec_status wavec_compile(wavec_kernel *pk, const wavec_options *opt) {
  if (!pk)
    return WAVEC_ERR_INVALID;
  wv_kernel *k = &pk->k;
  wavec_ctx *ctx = k->ctx;
  if (ctx->status != WAVEC_OK)
    return ctx->status;
  WV_GUARD(ctx, ctx->status);
  wavec_options o = read_options(k, opt);
  k->max_steps = o.max_steps ? o.max_steps : WAVEC_DEFAULT_MAX_STEPS;
  k->progress = o.progress;
  k->progress_ud = o.progress_ud;
  wavec_status st = compile(k, &o);
  ctx->at = (wavec_loc){0};
  WV_UNGUARD(ctx);
  return st;
}

const char *wavec_kernel_dump(wavec_kernel *pk) {
  if (!pk)
    return "";
  wv_kernel *k = &pk->k;
  if (k->dump_due) {
    WV_GUARD(k->ctx, "");
    wv_buf_init(&k->dump, k->ctx);
    k->dump_due(k, &k->dump);
    k->dump_due = NULL;
    WV_UNGUARD(k->ctx);
  }
  return k->dump.s ? k->dump.s : "";
}

/* Why value is no value of hardware entry key (or key no entry), with
 * what is valid: the diagnostic of wavec_hardware_override. */
static void hw_override_error(wavec_ctx *ctx, const char *key,
                              const char *value, int hw_int) {
  wv_buf b;
  wv_buf_init(&b, ctx);
  if (strcmp(key, "threads_per_wave") == 0) {
    wv_buf_printf(&b, "hardware entry threads_per_wave takes 32, 64 or 128 "
                  "(a warpgroup, for wgmma), not '%s'", value);
  } else if (strcmp(key, "mma") == 0) {
    wv_buf_printf(&b, "hardware entry mma takes an mma type, not '%s'; the "
                  "types are", value);
    for (int m = 0; m < WAVEC_MMA_COUNT; m++)
      wv_buf_printf(&b, "%s %s", m ? "," : "", wv_mma_names[m]);
  } else if (hw_int >= 0) {
    wv_buf_printf(&b, "hardware entry %s takes an integer from %lld to "
                  "%lld, not '%s'", key, (long long)wv_hwints[hw_int].lo,
                  (long long)wv_hwints[hw_int].hi, value);
  } else {
    wv_buf_printf(&b, "unknown hardware entry '%s'; the entries are "
                  "threads_per_wave (32, 64 or 128), mma (an mma type)", key);
    for (int i = 0; i < WAVEC_HW_INT_COUNT; i++)
      wv_buf_printf(&b, ", %s (%lld to %lld)", wv_hwints[i].name,
                    (long long)wv_hwints[i].lo, (long long)wv_hwints[i].hi);
  }
  wv_error(ctx, D_HW_OVERRIDE, (wavec_loc){0}, "%s", wv_buf_str(&b));
}

wavec_status wavec_hardware_override(wavec_ctx *ctx, const char *key,
                                     const char *value) {
  if (!ctx || !key || !value)
    return wv_null_param(ctx, "wavec_hardware_override",
                         !key ? "key" : "value");
  int hw_int = -1;
  if (strcmp(key, "threads_per_wave") == 0) {
    char *end;
    long v = strtol(value, &end, 10);
    if (*value && !*end && (v == 32 || v == 64 || v == 128)) {
      ctx->hw_threads = v;
      return WAVEC_OK;
    }
  } else if (strcmp(key, "mma") == 0) {
    int m = wv_mma_lookup(value, strlen(value));
    if (m >= 0) {
      ctx->hw_mma = m;
      return WAVEC_OK;
    }
  }
  for (int i = 0; i < WAVEC_HW_INT_COUNT; i++) {
    if (strcmp(key, wv_hwints[i].name) != 0)
      continue;
    hw_int = i;
    char *end;
    long long v = strtoll(value, &end, 10);
    if (*value && !*end && v >= wv_hwints[i].lo && v <= wv_hwints[i].hi) {
      ctx->hw_ints[i] = v;
      return WAVEC_OK;
    }
  }
  WV_GUARD(ctx, WAVEC_ERR_INVALID);
  hw_override_error(ctx, key, value, hw_int);
  WV_UNGUARD(ctx);
  return WAVEC_ERR_INVALID;
}

const char *wavec_hardware_key(size_t i) {
  static const char *const named[] = {"threads_per_wave", "mma"};
  if (i < WV_ARRAY_LEN(named))
    return named[i];
  i -= WV_ARRAY_LEN(named);
  return i < WAVEC_HW_INT_COUNT ? wv_hwints[i].name : NULL;
}

size_t wavec_remark_count(wavec_kernel *pk) {
  return pk ? pk->k.remarks.n : 0;
}

const char *wavec_remark(wavec_kernel *pk, size_t i) {
  return pk && i < pk->k.remarks.n ? pk->k.remarks.v[i] : NULL;
}

wavec_status wavec_test_hook(wavec_ctx *ctx, const char *name) {
  if (!ctx || !name)
    return wv_null_param(ctx, "wavec_test_hook", "name");
  static const struct {
    uint64_t bit;
    const char *name;
  } hooks[] = {
#define X(e, nm) {e, nm},
      WV_HOOKS(X)
#undef X
  };
  for (size_t i = 0; i < WV_ARRAY_LEN(hooks); i++) {
    if (strcmp(hooks[i].name, name) == 0) {
      ctx->test_hooks |= hooks[i].bit;
      return WAVEC_OK;
    }
  }
  return WAVEC_ERR_INVALID;
}
