/* The pipeline: one flat table of passes, run in order, the verifier after
 * each, timed, dumped on request. */
#include <stdlib.h>

#include "passes/passes.h"

static const struct {
  wavec_pass pass;
  const char *name;
  wavec_status (*run)(wv_kernel *k);
} pipeline[] = {
    {WAVEC_PASS_CHECK, "check", wv_pass_check},
    {WAVEC_PASS_BIND, "bind", wv_pass_bind},
};

const char *wavec_pass_name(wavec_pass p) {
  return (unsigned)p < WV_ARRAY_LEN(pipeline) ? pipeline[p].name : "?";
}

int wavec_pass_lookup(const char *name) {
  for (size_t i = 0; i < WV_ARRAY_LEN(pipeline); i++)
    if (strcmp(pipeline[i].name, name) == 0)
      return (int)pipeline[i].pass;
  return -1;
}

static void dump(wv_kernel *k) {
  wv_buf_init(&k->dump, k->ctx);
  wv_print_kernel(k, &k->dump);
}

static wavec_status compile(wv_kernel *k, const wavec_options *opt) {
  wavec_ctx *ctx = k->ctx;
  if (!k->ended)
    wv_fail(ctx, D_INVALID, k->loc, "kernel '%s' was not ended", k->name);
  if (ctx->hw_threads)
    k->hw.threads_per_wave = ex_const(ctx, ctx->hw_threads);
  if (ctx->hw_mma >= 0)
    k->hw.mma = ctx->hw_mma;
  for (size_t i = 0; i < WV_ARRAY_LEN(pipeline); i++) {
    uint64_t t0 = wv_now_ns();
    wavec_status st = pipeline[i].run(k);
    if (st == WAVEC_OK)
      st = wv_verify(k, pipeline[i].name);
    wv_time t = {pipeline[i].name, wv_now_ns() - t0};
    vec_push(ctx, &ctx->times, t);
    if (st != WAVEC_OK)
      return st;
    bool want = opt && (opt->print_after >> pipeline[i].pass) & 1u;
    bool last = i + 1 == WV_ARRAY_LEN(pipeline) ||
                (opt && opt->check_only && pipeline[i].pass == WAVEC_PASS_CHECK);
    if (want || last)
      dump(k);
    if (want && opt->dump)
      opt->dump(opt->dump_ud, pipeline[i].pass, k->dump.s ? k->dump.s : "",
                k->dump.n);
    if (last)
      break;
  }
  return WAVEC_OK;
}

wavec_status wavec_compile(wavec_kernel *pk, const wavec_options *opt) {
  if (!pk)
    return WAVEC_ERR_INVALID;
  wv_kernel *k = &pk->k;
  wavec_ctx *ctx = k->ctx;
  if (ctx->status != WAVEC_OK)
    return ctx->status;
  WV_GUARD(ctx, ctx->status);
  wavec_status st = compile(k, opt);
  WV_UNGUARD(ctx);
  return st;
}

const char *wavec_kernel_dump(wavec_kernel *pk) {
  return pk->k.dump.s ? pk->k.dump.s : "";
}

wavec_status wavec_hardware_override(wavec_ctx *ctx, const char *key,
                                     const char *value) {
  if (strcmp(key, "threads_per_wave") == 0) {
    char *end;
    long v = strtol(value, &end, 10);
    if (*value && !*end && (v == 32 || v == 64)) {
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
  return WAVEC_ERR_INVALID;
}
