/* Fuzz target for the simulator: parse, compile at small sizes (the input's
 * first line chooses them, harness.h) and run every kernel in the
 * simulator on random inputs with a small step budget. Any input must give
 * results or a diagnostic at its source (file, line and column): the
 * simulator's checks (bounds, unwritten memory, races, barriers, waits,
 * the budget) and every other error point into the kernel. Prints at exit
 * how many inputs were simulated. The inputs are edited as .wave text
 * (wvf_mutate_wave). */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size,
                               unsigned int seed);

static const int64_t sizes[] = {16, 32, 64, 8, 48, 1, 24, 128, 2, 40};

/* Steps of one run: a few milliseconds of simulation. */
#define MAX_STEPS 200000
/* Bytes of all the arguments of one kernel. */
#define MAX_BYTES (16u << 20)

static uint64_t next(uint64_t *s) {
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return *s;
}

/* Random bits, except where a value has a meaning: i1 is 0 or 1, and most
 * floats are small (f32 and f16 NaN and infinity come in now and then). */
static void fill(const wavec_arg_info *a, uint8_t *buf, uint64_t *rng) {
  for (size_t i = 0; i < a->bytes; i++)
    buf[i] = (uint8_t)next(rng);
  if (a->dtype == WAVEC_I1)
    for (size_t i = 0; i < a->bytes; i++)
      buf[i] &= 1;
  if (a->dtype == WAVEC_F32 && next(rng) % 4)
    for (size_t i = 0; i < a->elems; i++)
      ((float *)buf)[i] = (float)((int)(next(rng) % 2001) - 1000) / 500.0f;
}

/* Simulates compiled kernel k; true when it ran to the end. */
static bool simulate(wavec_kernel *k, uint64_t *rng) {
  size_t n = wavec_arg_count(k), total = 0;
  void **bufs = calloc(n ? n : 1, sizeof *bufs);
  bool ok = bufs != NULL;
  for (size_t i = 0; ok && i < n; i++) {
    wavec_arg_info a;
    wavec_arg_info_get(k, i, &a);
    total += a.bytes;
    ok = total <= MAX_BYTES && (bufs[i] = malloc(a.bytes ? a.bytes : 1));
    if (ok && !a.is_output)
      fill(&a, bufs[i], rng);
    else if (ok)
      memset(bufs[i], 0xff, a.bytes);
  }
  wavec_status st = ok ? wavec_simulate(k, bufs) : WAVEC_ERR_NOMEM;
  if (ok && st != WAVEC_OK)
    wvf_require_located(wavec_kernel_ctx(k), "wavec_simulate");
  for (size_t i = 0; bufs && i < n; i++)
    free(bufs[i]);
  free(bufs);
  return ok && st == WAVEC_OK;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  wavec_ctx *ctx = wavec_ctx_new(NULL, NULL);
  if (!ctx)
    return 0;
  wvf_choice c;
  wvf_choose(ctx, data, size, sizes, sizeof sizes / sizeof sizes[0], &c);
  wvf_reach(0, "inputs");
  bool compiled = false, ran = false, passed = false;
  if (wavec_parse(ctx, "fuzz.wave", (const char *)data, size) == WAVEC_OK) {
    wvf_reach(1, "parsed");
    wavec_options opt = WAVEC_OPTIONS_INIT;
    opt.max_steps = MAX_STEPS;
    for (size_t i = 0; i < wavec_kernel_count(ctx); i++) {
      wavec_kernel *k = wavec_kernel_get(ctx, i);
      if (wavec_compile(k, &opt) != WAVEC_OK) {
        wvf_require_located(ctx, "wavec_compile");
        break;
      }
      compiled = ran = true;
      if (!simulate(k, &c.seed))
        break; /* the context holds an error: no more calls on it */
      passed = true;
    }
  }
  if (compiled)
    wvf_reach(2, "compiled");
  if (ran)
    wvf_reach(3, "simulated");
  if (passed)
    wvf_reach(4, "simulated without error");
  if (strlen(wavec_errmsg(ctx)) > (1u << 20))
    abort();
  wavec_ctx_free(ctx);
  /* -1: libFuzzer keeps no input that stops short of the simulator in its
   * corpus (as fuzz_ptx) */
  return compiled ? 0 : -1;
}

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size,
                               unsigned int seed) {
  return wvf_mutate_wave(data, size, max_size, seed);
}

size_t LLVMFuzzerCustomCrossOver(const uint8_t *d1, size_t s1,
                                 const uint8_t *d2, size_t s2, uint8_t *out,
                                 size_t max_out, unsigned int seed);
size_t LLVMFuzzerCustomCrossOver(const uint8_t *d1, size_t s1,
                                 const uint8_t *d2, size_t s2, uint8_t *out,
                                 size_t max_out, unsigned int seed) {
  return wvf_cross_wave(d1, s1, d2, s2, out, max_out, seed);
}
