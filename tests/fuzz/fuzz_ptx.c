/* Fuzz target for the PTX printer: parse, compile and print the PTX of
 * every kernel, at the sizes, target and hardware entries the input's first
 * line chooses (harness.h). Any input must give PTX or a located
 * diagnostic; the PTX must be one NUL-terminated module with an entry per
 * kernel. Prints at exit how many inputs reached the printer. The inputs
 * are edited as .wave text (wvf_mutate_wave). */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const int64_t sizes[] = {64, 128, 32, 256, 16, 48, 100, 1, 8, 4096};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  wavec_ctx *ctx = wavec_ctx_new(NULL, NULL);
  if (!ctx)
    return 0;
  wvf_choice c;
  wvf_choose(ctx, data, size, sizes, sizeof sizes / sizeof sizes[0], &c);
  wvf_reach(0, "inputs");
  bool compiled = false, printed = false;
  if (wavec_parse(ctx, "fuzz.wave", (const char *)data, size) == WAVEC_OK) {
    wvf_reach(1, "parsed");
    for (size_t i = 0; i < wavec_kernel_count(ctx); i++) {
      wavec_kernel *k = wavec_kernel_get(ctx, i);
      if (wavec_compile(k, NULL) != WAVEC_OK) {
        wvf_require_located(ctx, "wavec_compile");
        break;
      }
      compiled = true;
      const char *ptx;
      size_t len;
      if (wavec_emit_ptx(k, c.target, &ptx, &len) != WAVEC_OK) {
        wvf_require_located(ctx, "wavec_emit_ptx");
        break;
      }
      printed = true;
      char entry[512];
      snprintf(entry, sizeof entry, ".entry %s(", wavec_kernel_name(k));
      if (strlen(ptx) != len || !strstr(ptx, ".version ") ||
          !strstr(ptx, entry) || ptx[len - 1] != '\n') {
        fprintf(stderr, "malformed PTX for %s (%zu bytes):\n%.2000s\n",
                wavec_kernel_name(k), len, ptx);
        abort();
      }
    }
  }
  if (compiled)
    wvf_reach(2, "compiled");
  if (printed)
    wvf_reach(3, "printed PTX");
  if (strlen(wavec_errmsg(ctx)) > (1u << 20))
    abort();
  wavec_ctx_free(ctx);
  /* -1: libFuzzer keeps no input that stops short of the printer in its
   * corpus (the front harness covers those), so that it does not drift to
   * inputs that do not parse */
  return compiled ? 0 : -1;
}

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size,
                               unsigned int seed);
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
