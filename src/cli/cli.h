/* Commands of the wavec CLI beyond check/compile. */
#ifndef WV_CLI_H
#define WV_CLI_H
#include <stdint.h>

#include "wavec.h"

typedef struct cli_kv {
  const char *key, *value;
} cli_kv;

/* The simulator's progress on a terminal: one line of stderr, redrawn at
 * most every 100 ms while a run lasts and cleared when it ends (shorter
 * runs show nothing). */
typedef struct cli_progress {
  const char *kernel; /* the kernel being simulated */
  double start, last; /* cli_now() of the run's start and the last redraw */
  int shown;          /* the line is on the screen */
} cli_progress;
/* wavec_options.progress; ud is a cli_progress. */
void cli_progress_fn(void *ud, uint64_t done, uint64_t total);

/* Seconds of a monotonic clock; "12.3 ms" or "4.56 s" into buf. */
double cli_now(void);
const char *cli_duration(char *buf, size_t len, double secs);

typedef struct cli_run_opts {
  cli_kv args[64], outs[64];
  size_t nargs, nouts;
  uint64_t seed;
  const char *target; /* NULL or "sim": the simulator; sm_*: the GPU */
  int compare_sim;    /* --compare sim: run both, compare the outputs */
  double tolerance;   /* --tolerance: the normwise error compare allows */
  cli_progress *progress; /* what the compile options' callback draws, or
                             NULL (stderr is no terminal) */
  const char *const *defs; /* the -D definitions (SYM=VALUE), ndefs */
  size_t ndefs;
} cli_run_opts;

/* The exit status of wavec, one meaning each (README, --help). */
enum {
  CLI_OK = 0,
  CLI_KERNEL = 1,   /* an error in the kernel: a diagnostic at its source */
  CLI_USAGE = 2,    /* a bad command line */
  CLI_FILE = 3,     /* a file cannot be read or written, or does not fit */
  CLI_MACHINE = 4,  /* this machine lacks something: memory, a GPU or its
                       driver, ptxas */
  CLI_MISMATCH = 5  /* --compare: the GPU's results differ from the
                       simulator's */
};

/* -D defs[i] (SYM=VALUE; defs[0..i) are the earlier ones, for a warning
 * when SYM repeats) and --hardware KEY=VALUE,...: 0, or CLI_USAGE after a
 * message that starts with `prog`. */
int cli_define(wavec_ctx *ctx, const char *prog, const char *const *defs,
               size_t i);
int cli_hardware(wavec_ctx *ctx, const char *prog, const char *arg);
/* An option of a command: its name ("--seed", "-o") and, for one that
 * takes a value, what the value is ("N", "NAME=FILE.npy"; NULL: a flag).
 * A table of them ends with a NULL name. */
typedef struct cli_opt {
  const char *name;
  const char *what;
} cli_opt;
enum {
  CLI_OPT_NONE = -1,    /* argv[*i] is no option: an operand */
  CLI_OPT_UNKNOWN = -2, /* an option the table lacks */
  CLI_OPT_ERROR = -3    /* a missing value, or a flag given one: said on
                           stderr, starting with prog */
};
/* Matches argv[*i] against the table: the index of its option, with
 * *value its value, or a CLI_OPT_*. Every option with a value takes it as
 * `--opt VALUE` or `--opt=VALUE` (a short one as `-o VALUE` or
 * `-oVALUE`); the word after it is not taken when it starts with "--"
 * (the value is missing). *i moves past a value in its own word. */
int cli_opt_next(const cli_opt *opts, const char *prog, int argc, char **argv,
                 int *i, const char **value);

/* The --hardware keys with their values, from the library's table. */
#define CLI_HW_INT_TEXT(e, v, name, lo, hi) ", " name "=" #lo ".." #hi
#define CLI_HW_KEYS                                                            \
  "threads_per_wave=32|64|128, mma=NAME" WAVEC_HW_INTS(CLI_HW_INT_TEXT)

/* The number of the library's diagnostic that means "not on this machine"
 * (D_MACHINE in src/support/base.h): exit status CLI_MACHINE. */
#define CLI_E_MACHINE 613
/* The library's "invalid hardware override" (D_HW_OVERRIDE). */
#define CLI_E_HW_OVERRIDE 410
/* Prints ctx's error; its exit status: CLI_MACHINE when memory ran out or
 * the machine lacks what the call needs, else CLI_KERNEL. */
int cli_fail(wavec_ctx *ctx);

/* Runs a compiled kernel in the simulator or on the GPU; an exit status.
 * On success says on stderr in one line what ran where, how long it took
 * and which files it wrote. */
int cli_run_kernel(wavec_kernel *k, const cli_run_opts *o);

/* `compile --emit=ptx`: writes the kernel's PTX for target to `out`
 * (support/outfile.h; NULL or "-": stdout). An exit status. */
int cli_emit_ptx(wavec_kernel *k, const char *target, const char *out);
/* The PTX assembled by ptxas into `out` (required), printing ptxas's
 * resource report; CLI_MACHINE when ptxas is missing or fails. */
int cli_emit_cubin(wavec_kernel *k, const char *target, const char *out);
/* `compile --emit=c -o FILE.c`: the kernel as C source (wavec_emit_c) in
 * FILE.c and its header in FILE.h; an exit status. */
int cli_emit_c(wavec_kernel *k, const char *target, const char *out);

#endif
