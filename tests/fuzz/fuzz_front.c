/* Fuzz target for the front end and the passes: any byte string must give
 * either compiled kernels or a diagnostic at its source (file, line,
 * column and code), never a crash, a leak or a sanitizer report. Built by
 * `make fuzz` (tests/fuzz/README.md). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  wavec_ctx *ctx = wavec_ctx_new(NULL, NULL);
  if (!ctx)
    return 0;
  static const char *const dims[] = {"M", "N", "K", "B", "K1", "K2"};
  for (size_t i = 0; i < sizeof dims / sizeof dims[0]; i++)
    wavec_define_int(ctx, dims[i], 64);
  wvf_reach(0, "inputs");
  if (wavec_parse(ctx, "fuzz.wave", (const char *)data, size) == WAVEC_OK) {
    wvf_reach(1, "parsed");
    wavec_options opt = WAVEC_OPTIONS_INIT;
    size_t i = 0;
    while (i < wavec_kernel_count(ctx) &&
           wavec_compile(wavec_kernel_get(ctx, i), &opt) == WAVEC_OK)
      i++;
    if (i < wavec_kernel_count(ctx))
      wvf_require_located(ctx, "wavec_compile");
    else if (i)
      wvf_reach(2, "compiled");
  } else {
    wvf_require_located(ctx, "wavec_parse");
  }
  /* The message must always be formattable. */
  if (strlen(wavec_errmsg(ctx)) > (1u << 20))
    abort();
  wavec_ctx_free(ctx);
  return 0;
}
