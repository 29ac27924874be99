/* Commands of the wavec CLI beyond check/compile. */
#ifndef WV_CLI_H
#define WV_CLI_H
#include <stdint.h>

#include "wavec.h"

typedef struct cli_kv {
  const char *key, *value;
} cli_kv;

typedef struct cli_run_opts {
  cli_kv args[64], outs[64];
  size_t nargs, nouts;
  uint64_t seed;
  const char *target; /* NULL or "sim": the simulator; sm_*: the GPU */
  int compare_sim;    /* --compare sim: run both, compare the outputs */
} cli_run_opts;

/* -D SYM=VALUE and --hardware KEY=VALUE,...: 0, or 2 after a message that
 * starts with `prog`. */
int cli_define(wavec_ctx *ctx, const char *prog, const char *arg);
int cli_hardware(wavec_ctx *ctx, const char *prog, const char *arg);
/* The --hardware keys with their values, from the library's table. */
#define CLI_HW_INT_TEXT(e, v, name, lo, hi) ", " name "=" #lo ".." #hi
#define CLI_HW_KEYS                                                            \
  "threads_per_wave=32|64|128, mma=NAME" WAVEC_HW_INTS(CLI_HW_INT_TEXT)

/* Runs a compiled kernel in the simulator; 0 ok, 1 a kernel or data error,
 * 2 usage or I/O. */
int cli_run_kernel(wavec_kernel *k, const cli_run_opts *o);

/* `compile --emit=ptx`: writes the kernel's PTX for target to `out`
 * (support/outfile.h; NULL or "-": stdout). 0 ok, 1 a kernel error, 2 I/O. */
int cli_emit_ptx(wavec_kernel *k, const char *target, const char *out);
/* The PTX assembled by ptxas into `out` (required), printing ptxas's
 * resource report; 2 when ptxas is missing or fails. */
int cli_emit_cubin(wavec_kernel *k, const char *target, const char *out);
/* `compile --emit=c -o FILE.c`: the kernel as C source (wavec_emit_c) in
 * FILE.c and its header in FILE.h; 1 a kernel error, 2 usage or I/O. */
int cli_emit_c(wavec_kernel *k, const char *target, const char *out);

#endif
