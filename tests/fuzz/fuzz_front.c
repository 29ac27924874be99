/* Fuzz target for the front end and the passes that exist: any byte string
 * must give either a compiled kernel or a diagnostic, never a crash, a leak
 * or a sanitizer report. Built for libFuzzer (clang -fsanitize=fuzzer), or
 * with -DWV_FUZZ_MAIN as a standalone random mutator over seed files when
 * libFuzzer is not available. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "wavec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  wavec_ctx *ctx = wavec_ctx_new(NULL, NULL);
  if (!ctx)
    return 0;
  static const char *const dims[] = {"M", "N", "K", "B", "K1", "K2"};
  for (size_t i = 0; i < sizeof dims / sizeof dims[0]; i++)
    wavec_define_int(ctx, dims[i], 64);
  if (wavec_parse(ctx, "fuzz.wave", (const char *)data, size) == WAVEC_OK) {
    wavec_options opt = WAVEC_OPTIONS_INIT;
    for (size_t i = 0; i < wavec_kernel_count(ctx); i++)
      if (wavec_compile(wavec_kernel_get(ctx, i), &opt) != WAVEC_OK)
        break;
  }
  /* The message must always be formattable. */
  if (strlen(wavec_errmsg(ctx)) > (1u << 20))
    abort();
  wavec_ctx_free(ctx);
  return 0;
}

#ifdef WV_FUZZ_MAIN
/* Standalone mutator: argv[1] seconds, argv[2..] seed files. */
static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t next(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return rng;
}

int main(int argc, char **argv) {
  if (argc < 3)
    return 2;
  double secs = atof(argv[1]);
  int nseeds = argc - 2;
  char **seeds = calloc((size_t)nseeds, sizeof *seeds);
  size_t *lens = calloc((size_t)nseeds, sizeof *lens);
  for (int i = 0; i < nseeds; i++) {
    FILE *f = fopen(argv[i + 2], "rb");
    if (!f)
      return 2;
    seeds[i] = malloc(1 << 16);
    lens[i] = fread(seeds[i], 1, 1 << 16, f);
    fclose(f);
  }
  static const char *const tokens[] = {"(", ")", "[", "]", "{", "}", ",",
                                       "=", "\n", "mma", "iterate", "-inf",
                                       "1e309", "Memory[", "//", "%", "yield",
                                       "0", "-1", "99999999999999999999"};
  clock_t end = clock() + (clock_t)(secs * CLOCKS_PER_SEC);
  long runs = 0;
  char buf[1 << 17];
  while (clock() < end) {
    int s = (int)(next() % (uint64_t)nseeds);
    size_t n = lens[s];
    memcpy(buf, seeds[s], n);
    int muts = 1 + (int)(next() % 8);
    for (int m = 0; m < muts; m++) {
      size_t at = n ? next() % n : 0;
      switch (next() % 5) {
      case 0: /* flip a byte */
        if (n) buf[at] = (char)next();
        break;
      case 1: /* delete a span */
        if (n) {
          size_t len = next() % 16;
          if (at + len > n) len = n - at;
          memmove(buf + at, buf + at + len, n - at - len);
          n -= len;
        }
        break;
      case 2: { /* insert a token */
        const char *t = tokens[next() % (sizeof tokens / sizeof tokens[0])];
        size_t len = strlen(t);
        if (n + len < sizeof buf) {
          memmove(buf + at + len, buf + at, n - at);
          memcpy(buf + at, t, len);
          n += len;
        }
        break;
      }
      case 3: /* truncate */
        n = at;
        break;
      default: { /* duplicate a span */
        size_t len = next() % 64;
        if (at + len > n) len = n - at;
        if (n + len < sizeof buf) {
          memmove(buf + at + len, buf + at, n - at);
          n += len;
        }
        break;
      }
      }
    }
    LLVMFuzzerTestOneInput((const uint8_t *)buf, n);
    runs++;
  }
  printf("%ld runs, no crash\n", runs);
  for (int i = 0; i < nseeds; i++)
    free(seeds[i]);
  free(seeds);
  free(lens);
  return 0;
}
#endif
