/* wavec: the command-line driver. A thin user of the library: it reads
 * files, passes options, prints what the library returns. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "wavec.h"

int wv_cli_layout(int argc, char **argv);
int wv_cli_cache(int argc, char **argv);

static const char usage[] =
    "usage: wavec COMMAND [OPTIONS] FILE.wave\n"
    "\n"
    "commands:\n"
    "  check FILE.wave        parse and type-check every kernel\n"
    "  compile FILE.wave      compile and print the thread program (or the\n"
    "                         graph after the passes named by --print-after)\n"
    "  run FILE.wave          compile and run in the simulator (--target sim),\n"
    "                         with its progress when stderr is a terminal\n"
    "  layout MMA [lhs|rhs|acc] [--n N] [--svg FILE]\n"
    "                         draw which lane and register hold each element\n"
    "                         of an mma operand\n"
    "  layout FILE.wave NODE [-D ..] [--hardware ..] [--kernel K] [--svg F]\n"
    "                         the same for a value of a kernel after expansion\n"
    "  cache [--list|--clear] the compile cache of GPU modules: its folder,\n"
    "                         its entries, or empty it\n"
    "\n"
    "options (each that takes a value takes it as --opt VALUE or\n"
    "--opt=VALUE, -D and -o as -D VALUE or -DVALUE):\n"
    "  -D SYM=VALUE           bind a hyperparameter (integer or float);\n"
    "                         overrides the kernel's defaults { }\n"
    "  --hardware K=V,...     override hardware entries:\n"
    "                         " CLI_HW_KEYS "\n"
    "  --kernel NAME          compile only the named kernel (default: all)\n"
    "  --print-after=PASS     print the graph, the analysis or the thread\n"
    "                         program after PASS (the passes are below)\n"
    "  --print-after-all      print it after every pass\n"
    "  --time                 print per-pass compile times (to stderr)\n"
    "  --remarks              print performance remarks, e.g. each layout\n"
    "                         conversion and the line that caused it\n"
    "  --arg NAME=FILE.npy    run: the input for argument NAME (else seeded\n"
    "                         random data: floats in [-1, 1), i32 0 to 7,\n"
    "                         i8 -8 to 8, i1 0 or 1)\n"
    "  --out NAME=FILE.npy    run: write argument NAME after the run\n"
    "  --seed N               run: seed of the random inputs (default 1)\n"
    "  --target T             run: sim (the simulator, default) or sm_80,\n"
    "                         sm_89, sm_90, sm_90a (the GPU, through the CUDA\n"
    "                         driver);\n"
    "                         compile --emit=ptx: the PTX target (sm_90)\n"
    "  --compare sim          run on the GPU: also simulate, compare outputs\n"
    "  --tolerance X          run --compare sim: the normwise relative error\n"
    "                         ||gpu - sim|| / ||sim|| an output may have\n"
    "                         (default 1e-3; Hopper's fp8 wgmma accumulates\n"
    "                         in fewer bits than f32 and needs more)\n"
    "  --max-steps N          run: stop the simulator with an error at the\n"
    "                         loop it is in after N instructions of a wave\n"
    "                         (default 2^32 = 4294967296)\n"
    "  --emit=ptx             compile: print PTX instead of the thread program\n"
    "  --emit=cubin           compile: PTX assembled by ptxas (on PATH or in\n"
    "                         $CUDA_HOME/bin) into -o FILE, with its resource\n"
    "                         report (registers, spills, shared memory)\n"
    "  --emit=c               compile: -o FILE.c, a C file holding the PTX\n"
    "                         (and the cubin, when ptxas is found) and a typed\n"
    "                         launcher KERNEL_launch(CUstream, CUdeviceptr ...),\n"
    "                         declared in FILE.h; needs cuda.h and -lcuda\n"
    "                         only; both files are replaced, or neither\n"
    "  -o FILE                compile --emit=...: write to FILE ('-': stdout,\n"
    "                         for ptx); a device, FIFO or link is written\n"
    "                         through (not for --emit=c: a regular file), a\n"
    "                         regular file replaced whole\n"
    "  -h, --help             this text\n"
    "  --version              the compiler version\n"
    "\n"
    "-D takes an integer (decimal or 0x hex) or a decimal float; repeated,\n"
    "the last one counts (with a warning). --arg and --out name an argument\n"
    "once each.\n"
    "\n"
    ".npy element types: f16 as <f2, f32 as <f4, i32 as <i4, i8 as |i1, i1\n"
    "as |b1, bf16 as <u2 and f8e4m3, f8e5m2 as |u1, holding the raw bit\n"
    "patterns (NumPy has no bfloat16 or 8-bit floats).\n"
    "\n"
    "Exit status, one meaning each:\n"
    "  0  success\n"
    "  1  an error in the kernel: a diagnostic at its source (compiling it,\n"
    "     or an error the simulator or the GPU found running it)\n"
    "  2  a bad command line\n"
    "  3  a file that cannot be read or written, or a .npy that does not fit\n"
    "     its argument\n"
    "  4  this machine lacks something: memory, a GPU or its driver, ptxas\n"
    "  5  run --compare sim: the GPU's results differ from the simulator's\n";

typedef struct cli {
  const char *cmd;
  const char *file;
  const char *kernel;
  uint32_t print_after;
  int time;
  int remarks;
  const char *emit; /* "ptx" or NULL */
  const char *out;  /* -o */
  uint64_t max_steps; /* --max-steps, 0: the library's default */
  const char *defs[256]; /* -D, in order */
  size_t ndefs;
  cli_run_opts run;
} cli;

/* The passes, in the order they run, with their contracts. */
static void print_passes(void) {
  printf("\npasses (--print-after, --time), in the order they run:\n");
  for (size_t i = 0; wavec_pass_at(i) >= 0; i++) {
    wavec_pass p = (wavec_pass)wavec_pass_at(i);
    printf("  %-12s %s\n", wavec_pass_name(p), wavec_pass_about(p));
  }
}

static int usage_error(const char *fmt, const char *arg) {
  fprintf(stderr, "wavec: ");
  fprintf(stderr, fmt, arg);
  fprintf(stderr, "\n(see wavec --help)\n");
  return CLI_USAGE;
}

static char *read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  size_t cap = 1 << 16, n = 0;
  char *buf = malloc(cap);
  while (buf) {
    size_t got = fread(buf + n, 1, cap - n, f);
    n += got;
    if (n < cap)
      break;
    char *nb = realloc(buf, cap *= 2);
    if (!nb) {
      free(buf);
      buf = NULL;
    }
    buf = nb;
  }
  int err = ferror(f);
  fclose(f);
  if (err) {
    free(buf);
    return NULL;
  }
  *len = n;
  return buf;
}

static void on_dump(void *ud, wavec_pass pass, const char *text, size_t len) {
  (void)ud;
  printf("// ---- after %s\n", wavec_pass_name(pass));
  fwrite(text, 1, len, stdout);
}

static void print_times(wavec_ctx *ctx) {
  uint64_t total = 0;
  for (size_t i = 0; i < wavec_time_count(ctx); i++) {
    const char *name;
    uint64_t ns;
    wavec_time_get(ctx, i, &name, &ns);
    fprintf(stderr, "time %-10s %9.3f ms\n", name, ns / 1e6);
    total += ns;
  }
  fprintf(stderr, "time %-10s %9.3f ms\n", "total", total / 1e6);
}

/* `check`'s line on success: what was checked, and how long it took. */
static void check_summary(wavec_ctx *ctx, const cli *c, double secs) {
  char took[32];
  size_t n = 0;
  for (size_t i = 0; i < wavec_kernel_count(ctx); i++)
    n += !c->kernel ||
         !strcmp(wavec_kernel_name(wavec_kernel_get(ctx, i)), c->kernel);
  if (n == 1) {
    const char *name = c->kernel ? c->kernel
                                 : wavec_kernel_name(wavec_kernel_get(ctx, 0));
    fprintf(stderr, "wavec: checked %s in %s: no errors (%s)\n", name,
            c->file, cli_duration(took, sizeof took, secs));
    return;
  }
  fprintf(stderr, "wavec: checked %zu kernels in %s (", n, c->file);
  for (size_t i = 0; i < wavec_kernel_count(ctx); i++)
    fprintf(stderr, "%s%s", i ? ", " : "",
            wavec_kernel_name(wavec_kernel_get(ctx, i)));
  fprintf(stderr, "): no errors (%s)\n",
          cli_duration(took, sizeof took, secs));
}

static int run(wavec_ctx *ctx, cli *c) {
  double t0 = cli_now();
  size_t len;
  char *src = read_file(c->file, &len);
  if (!src) {
    fprintf(stderr, "wavec: cannot read '%s': %s\n", c->file, strerror(errno));
    return CLI_FILE;
  }
  /* --kernel: that kernel alone (an error in another does not stop it) */
  wavec_status st = wavec_parse_kernel(ctx, c->file, src, len, c->kernel);
  free(src);
  if (st == WAVEC_OK && c->kernel && !wavec_kernel_find(ctx, c->kernel)) {
    fprintf(stderr, "wavec: no kernel '%s' in %s\n", c->kernel, c->file);
    return CLI_USAGE;
  }
  wavec_options opt = WAVEC_OPTIONS_INIT;
  opt.print_after = c->print_after;
  opt.dump = on_dump;
  opt.check_only = strcmp(c->cmd, "check") == 0;
  opt.max_steps = c->max_steps;
  cli_progress progress = {0};
  if (!strcmp(c->cmd, "run") && isatty(STDERR_FILENO)) {
    opt.progress = cli_progress_fn;
    opt.progress_ud = &progress;
    c->run.progress = &progress;
  }
  size_t nsel = 0;
  for (size_t i = 0; st == WAVEC_OK && i < wavec_kernel_count(ctx); i++)
    nsel += !c->kernel ||
            !strcmp(wavec_kernel_name(wavec_kernel_get(ctx, i)), c->kernel);
  bool files = !strcmp(c->cmd, "run") && (c->run.nouts || c->run.nargs);
  if ((c->emit || files) && nsel > 1) {
    if (c->emit)
      fprintf(stderr, "wavec: %s has %zu kernels; --emit=%s writes one: "
              "choose it with --kernel (", c->file, nsel, c->emit);
    else
      fprintf(stderr, "wavec: %s has %zu kernels; --%s names one's "
              "arguments: choose it with --kernel (", c->file, nsel,
              c->run.nouts ? "out" : "arg");
    for (size_t i = 0; i < wavec_kernel_count(ctx); i++)
      fprintf(stderr, "%s%s", i ? ", " : "",
              wavec_kernel_name(wavec_kernel_get(ctx, i)));
    fputs(")\n", stderr);
    return CLI_USAGE;
  }
  for (size_t i = 0; st == WAVEC_OK && i < wavec_kernel_count(ctx); i++) {
    wavec_kernel *k = wavec_kernel_get(ctx, i);
    if (c->kernel && strcmp(wavec_kernel_name(k), c->kernel) != 0)
      continue;
    st = wavec_compile(k, &opt);
    bool is_run = strcmp(c->cmd, "run") == 0;
    if (st == WAVEC_OK && c->emit && !opt.check_only && !is_run) {
      const char *tgt = c->run.target ? c->run.target : "sm_90";
      int rc = strcmp(c->emit, "cubin") == 0 ? cli_emit_cubin(k, tgt, c->out)
               : strcmp(c->emit, "c") == 0   ? cli_emit_c(k, tgt, c->out)
                                             : cli_emit_ptx(k, tgt, c->out);
      if (rc)
        return rc;
    } else if (st == WAVEC_OK && !opt.check_only && !c->print_after &&
               !is_run)
      fputs(wavec_kernel_dump(k), stdout);
    if (st == WAVEC_OK && is_run) {
      int rc = cli_run_kernel(k, &c->run);
      if (rc) {
        if (c->time)
          print_times(ctx);
        return rc;
      }
    }
    for (size_t r = 0; c->remarks && r < wavec_remark_count(k); r++)
      fprintf(stderr, "%s\n", wavec_remark(k, r));
  }
  if (c->time)
    print_times(ctx);
  if (st != WAVEC_OK)
    return cli_fail(ctx);
  /* a definition no kernel can take is likely a misspelling */
  for (size_t i = 0; wavec_unused_define(ctx, i); i++)
    if (c->kernel)
      fprintf(stderr, "wavec: warning: -D %s: kernel %s of %s has no symbol "
              "of that name\n", wavec_unused_define(ctx, i), c->kernel,
              c->file);
    else
      fprintf(stderr, "wavec: warning: -D %s: no kernel in %s has a symbol "
              "of that name\n", wavec_unused_define(ctx, i), c->file);
  if (opt.check_only)
    check_summary(ctx, c, cli_now() - t0);
  return 0;
}

int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "layout") == 0)
    return wv_cli_layout(argc - 1, argv + 1);
  if (argc > 1 && strcmp(argv[1], "cache") == 0)
    return wv_cli_cache(argc - 1, argv + 1);
  cli c = {0};
  c.run.seed = 1;
  bool seeded = false; /* --seed given */
  wavec_ctx *ctx = wavec_ctx_new(NULL, NULL);
  if (!ctx) {
    fprintf(stderr, "wavec: out of memory\n");
    return CLI_MACHINE;
  }
  /* every option, with what its value is (NULL: none); each takes it as
   * --opt VALUE or --opt=VALUE (cli_opt_next) */
  enum {
    O_HELP, O_H, O_VERSION, O_D, O_HARDWARE, O_KERNEL, O_PRINT_AFTER,
    O_PRINT_AFTER_ALL, O_TIME, O_REMARKS, O_ARG, O_OUT, O_SEED, O_MAX_STEPS,
    O_TARGET, O_COMPARE, O_TOLERANCE, O_EMIT, O_O
  };
  static const cli_opt opts[] = {
      [O_HELP] = {"--help", NULL},
      [O_H] = {"-h", NULL},
      [O_VERSION] = {"--version", NULL},
      [O_D] = {"-D", "SYM=VALUE"},
      [O_HARDWARE] = {"--hardware", "KEY=VALUE,..."},
      [O_KERNEL] = {"--kernel", "NAME"},
      [O_PRINT_AFTER] = {"--print-after", "PASS"},
      [O_PRINT_AFTER_ALL] = {"--print-after-all", NULL},
      [O_TIME] = {"--time", NULL},
      [O_REMARKS] = {"--remarks", NULL},
      [O_ARG] = {"--arg", "NAME=FILE.npy"},
      [O_OUT] = {"--out", "NAME=FILE.npy"},
      [O_SEED] = {"--seed", "N"},
      [O_MAX_STEPS] = {"--max-steps", "N"},
      [O_TARGET] = {"--target", "T"},
      [O_COMPARE] = {"--compare", "sim"},
      [O_TOLERANCE] = {"--tolerance", "X"},
      [O_EMIT] = {"--emit", "ptx|cubin|c"},
      [O_O] = {"-o", "FILE"},
      {NULL, NULL}};
  int rc = 0;
  for (int i = 1; i < argc && rc == 0; i++) {
    const char *a = argv[i], *v;
    int o = cli_opt_next(opts, "wavec", argc, argv, &i, &v);
    if (o == CLI_OPT_ERROR) {
      rc = CLI_USAGE;
    } else if (o == CLI_OPT_UNKNOWN) {
      rc = usage_error("unknown option '%s'", a);
    } else if (o == CLI_OPT_NONE) {
      if (!c.cmd)
        c.cmd = a;
      else if (!c.file)
        c.file = a;
      else
        rc = usage_error("unexpected argument '%s'", a);
    } else if (o == O_HELP || o == O_H) {
      fputs(usage, stdout);
      print_passes();
      wavec_ctx_free(ctx);
      return 0;
    } else if (o == O_VERSION) {
      printf("wavec %s\n", wavec_version());
      wavec_ctx_free(ctx);
      return 0;
    } else if (o == O_D) {
      if (c.ndefs == sizeof c.defs / sizeof *c.defs)
        rc = usage_error("more than %s -D options", "256");
      else
        c.defs[c.ndefs++] = v;
    } else if (o == O_HARDWARE) {
      rc = cli_hardware(ctx, "wavec", v);
    } else if (o == O_KERNEL) {
      c.kernel = v;
    } else if (o == O_PRINT_AFTER) {
      int p = wavec_pass_lookup(v);
      if (p < 0)
        rc = usage_error("unknown pass '%s'", v);
      else
        c.print_after |= 1u << p;
    } else if (o == O_PRINT_AFTER_ALL) {
      c.print_after = ~0u;
    } else if (o == O_TIME) {
      c.time = 1;
    } else if (o == O_REMARKS) {
      c.remarks = 1;
    } else if (o == O_ARG || o == O_OUT) {
      const char *name = opts[o].name;
      cli_kv *kv = o == O_ARG ? c.run.args : c.run.outs;
      size_t *nkv = o == O_ARG ? &c.run.nargs : &c.run.nouts;
      const char *eq = strchr(v, '=');
      if (!eq || eq == v || !eq[1])
        rc = usage_error("%s wants NAME=FILE.npy", name);
      else if (*nkv == 64)
        rc = usage_error("too many %s options", name);
      else {
        /* the name: argv's own bytes, cut at the '=' */
        char *key = (char *)v;
        key[eq - v] = 0;
        for (size_t j = 0; j < *nkv && rc == 0; j++)
          if (!strcmp(kv[j].key, key)) {
            fprintf(stderr, "wavec: %s %s given twice (%s and %s)\n(see "
                    "wavec --help)\n", name, key, kv[j].value, eq + 1);
            rc = CLI_USAGE;
          }
        kv[(*nkv)++] = (cli_kv){key, eq + 1};
      }
    } else if (o == O_SEED) {
      char *end = NULL;
      errno = 0;
      c.run.seed = strtoull(v, &end, 10);
      seeded = true;
      if (*v < '0' || *v > '9' || *end || errno == ERANGE)
        rc = usage_error("--seed wants a number from 0 to 2^64 - 1, not '%s'",
                         v);
    } else if (o == O_MAX_STEPS) {
      char *end = NULL;
      errno = 0;
      c.max_steps = strtoull(v, &end, 10);
      if (*v < '1' || *v > '9' || *end || errno == ERANGE)
        rc = usage_error("--max-steps wants a positive number, not '%s'", v);
    } else if (o == O_TARGET) {
      if (strcmp(v, "sim") && strcmp(v, "sm_80") && strcmp(v, "sm_89") &&
          strcmp(v, "sm_90") && strcmp(v, "sm_90a"))
        rc = usage_error(
            "unknown target '%s' (sim, sm_80, sm_89, sm_90, sm_90a)", v);
      c.run.target = v;
    } else if (o == O_COMPARE) {
      if (strcmp(v, "sim") != 0)
        rc = usage_error("--compare compares with 'sim', not '%s'", v);
      c.run.compare_sim = 1;
    } else if (o == O_TOLERANCE) {
      char *end = NULL;
      double t = strtod(v, &end);
      if (*end || !(t > 0 && t < 1))
        rc = usage_error("--tolerance wants a number between 0 and 1, not "
                         "'%s'", v);
      c.run.tolerance = t;
    } else if (o == O_EMIT) {
      if (strcmp(v, "ptx") != 0 && strcmp(v, "cubin") != 0 &&
          strcmp(v, "c") != 0)
        rc = usage_error("unknown --emit '%s' (ptx, cubin, c)", v);
      c.emit = v;
    } else if (o == O_O) {
      c.out = v;
    }
  }
  if (rc == 0) {
    if (!c.cmd)
      rc = usage_error("%s", "no command given");
    else if (strcmp(c.cmd, "check") && strcmp(c.cmd, "compile") &&
             strcmp(c.cmd, "run"))
      rc = usage_error("unknown command '%s'", c.cmd);
    else if (!c.file)
      rc = usage_error("%s", "no input file");
    else if (c.emit && strcmp(c.cmd, "compile") != 0)
      rc = usage_error("--emit is for compile, not %s", c.cmd);
    else if (!strcmp(c.cmd, "check") && c.print_after != ~0u &&
             (c.print_after & ~(1u << WAVEC_PASS_CHECK)))
      rc = usage_error("%s", "check stops after pass check: --print-after "
                             "a later pass is for compile");
    else if (c.max_steps && strcmp(c.cmd, "run") != 0)
      rc = usage_error("--max-steps is for run (the simulator), not %s",
                       c.cmd);
    else if ((c.run.nargs || c.run.nouts || seeded) &&
             strcmp(c.cmd, "run") != 0)
      rc = usage_error(c.run.nargs   ? "--arg is for run (its inputs), not %s"
                       : c.run.nouts ? "--out is for run (its outputs), not %s"
                                     : "--seed is for run (its inputs), not %s",
                       c.cmd);
    else if (c.run.tolerance > 0 && !c.run.compare_sim)
      rc = usage_error("%s", "--tolerance is for run --compare sim");
    else if (c.emit && c.run.target && !strcmp(c.run.target, "sim"))
      rc = usage_error("--emit=%s makes code for a GPU: --target sm_80, "
                       "sm_89, sm_90 or sm_90a, not sim (run --target sim "
                       "runs in the simulator)", c.emit);
    else if (c.out && !c.emit)
      rc = usage_error("-o %s: -o writes what --emit=ptx|cubin|c makes; give "
                       "--emit (without it compile prints the thread program "
                       "to stdout)", c.out);
  }
  for (size_t i = 0; rc == 0 && i < c.ndefs; i++)
    rc = cli_define(ctx, "wavec", c.defs, i);
  c.run.defs = c.defs;
  c.run.ndefs = c.ndefs;
  if (rc == 0)
    rc = run(ctx, &c);
  wavec_ctx_free(ctx);
  return rc;
}
