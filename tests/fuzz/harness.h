/* What the fuzz harnesses share (tests/fuzz/README.md): the choices an
 * input makes in its first line, and a count of how far inputs get.
 *
 * An input whose first line starts with "#@" (a comment to the parser, so a
 * reproducer is an ordinary .wave file) chooses with each following byte c
 * the entry (c - '0') mod n of one table: the sizes of the dimensions
 * M, N, K, B, K1 and K2, then the target, threads_per_wave, the mma type,
 * stages, copies, workgroups_per_sm, specialize, persistent, sms and
 * group_m (entry 0: the kernel's own choice).
 * Missing bytes choose entry 0; an input without the line takes entry 0
 * of everything. */
#ifndef WV_FUZZ_HARNESS_H
#define WV_FUZZ_HARNESS_H

#include <stddef.h>
#include <stdint.h>

#include "wavec.h"

#define WVF_DIMS 6 /* M, N, K, B, K1, K2 */

typedef struct wvf_choice {
  int64_t size[WVF_DIMS];
  const char *target;  /* "sm_90a", "sm_90" or "sm_80" */
  uint64_t seed;       /* for the harness's random data */
} wvf_choice;

/* Reads the choices of data[0..size) with the dimension sizes from
 * sizes[0..nsizes) and applies them to ctx (wavec_define_int,
 * wavec_hardware_override). */
void wvf_choose(wavec_ctx *ctx, const uint8_t *data, size_t size,
                const int64_t *sizes, size_t nsizes, wvf_choice *out);

/* Aborts, printing the message, when ctx's first diagnostic has no source
 * location (file, line and column) or no code: every error a kernel can
 * cause must point into it. Running out of memory is exempt. */
void wvf_require_located(wavec_ctx *ctx, const char *what);

/* Counts of how far inputs got, printed to stderr when the harness exits
 * ("reach: NAME a of inputs (p%), ..."). Stage 0 is "inputs". */
void wvf_reach(int stage, const char *name);

#endif

/* A mutator for .wave text, so that most edits still parse: numbers become
 * other numbers, names other names (of the input or of the language),
 * lines are deleted, copied or moved, snippets inserted, the "#@" line's
 * choices changed; one edit in ten is libFuzzer's byte-level
 * LLVMFuzzerMutate (mutate.c has one too). A harness that defines
 * LLVMFuzzerCustomMutator with it gets it under either engine. The new
 * size; never more than max_size. */
size_t wvf_mutate_wave(uint8_t *data, size_t size, size_t max_size,
                       unsigned seed);
/* Crossover for .wave text (LLVMFuzzerCustomCrossOver): 1 to 6 lines of
 * d2 inserted between two lines of d1, tried up to 8 times until the text
 * parses; the size written to out (at most max), or 0 when none parsed. */
size_t wvf_cross_wave(const uint8_t *d1, size_t s1, const uint8_t *d2,
                      size_t s2, uint8_t *out, size_t max, unsigned seed);
/* libFuzzer's own mutator (or mutate.c's, standalone). */
size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size);
