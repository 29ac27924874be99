/* `wavec layout`: prints or draws which lane holds which element of an mma
 * operand, or of a value of a kernel after expansion. A thin user of
 * wavec_layout_render() and wavec_layout_render_node(). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "support/outfile.h"
#include "wavec.h"

int wv_cli_layout(int argc, char **argv);

static const char layout_usage[] =
    "usage: wavec layout MMA_TYPE [lhs|rhs|acc] [--n N] [--svg FILE]\n"
    "       wavec layout FILE.wave NODE [-D SYM=V]... [--hardware K=V,...]\n"
    "                    [--kernel NAME] [--svg FILE]\n"
    "\n"
    "The first argument decides. An mma type: shows which lane holds which\n"
    "element of one operand of it: lhs is M x K, rhs is N x K, acc (the\n"
    "default) is M x N; each cell is lane:elem. A .wave file: compiles it and\n"
    "shows one wave's tile of the value NODE (a source variable: its last\n"
    "assignment, or NAME@LINE for the one on that line) over its last two\n"
    "dims, the other dims at 0; each cell is clone:lane:elem, clone being\n"
    "the vector tile in coordinate order, and * marks a cell that several\n"
    "lanes or elements hold (replication). The picture is evaluated from the\n"
    "compiler's own layout tables.\n"
    "\n"
    "mma types: F32_16x8x16_F16, F32_16x8x16_BF16 (NVIDIA mma.sync),\n"
    "  F32_16x16x16_F16, F32_32x32x8_F16 (AMD MFMA, simulator only),\n"
    "  F32_64xNx16_F16, F32_64xNx16_BF16 (NVIDIA wgmma, sm_90a)\n"
    "  F32_16x8x32_F8E4M3, F32_16x8x32_F8E5M2 (NVIDIA mma.sync, sm_89),\n"
    "  S32_16x8x32_S8 (NVIDIA mma.sync), F32_64xNx32_F8E4M3,\n"
    "  F32_64xNx32_F8E5M2, S32_64xNx32_S8 (NVIDIA wgmma, sm_90a)\n"
    "\n"
    "options (a value as --opt VALUE or --opt=VALUE, -D VALUE or -DVALUE):\n"
    "  --n N              mma: the N of a wgmma type: 8, 16, ..., 256\n"
    "                     (default 16)\n"
    "  -D SYM=VALUE       .wave: bind a hyperparameter (overrides defaults)\n"
    "  --hardware K=V,... .wave: override threads_per_wave=N, mma=NAME,\n"
    "                     stages=N, copies=N, ...\n"
    "  --kernel NAME      .wave: the kernel (needed when the file has several)\n"
    "  --svg FILE         write an SVG picture to FILE instead of printing text\n"
    "  -h, --help         this text\n"
    "\n"
    "Exit status as for wavec (wavec --help): 0 success, 1 an error in the\n"
    "kernel, or an unknown NODE (mma: an internal error), 2 a bad command\n"
    "line, 3 a file that cannot be read or written, 4 out of memory.\n";

static int layout_usage_error(const char *fmt, const char *arg) {
  fprintf(stderr, "wavec layout: ");
  fprintf(stderr, fmt, arg);
  fprintf(stderr, "\n(see wavec layout --help)\n");
  return 2;
}

/* Writes text to path (support/outfile.h: never a partial file). */
static int write_out(const char *path, const char *text) {
  char err[512];
  wv_span part = {text, strlen(text)};
  if (wv_write_file(path, &part, 1, err, sizeof err) != 0) {
    fprintf(stderr, "wavec layout: %s\n", err);
    return CLI_FILE;
  }
  return 0;
}

/* The text of a file (malloc'ed, NUL-terminated); NULL with errno set. */
static char *slurp(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  size_t cap = 1 << 16, n = 0;
  char *buf = malloc(cap + 1);
  while (buf) {
    n += fread(buf + n, 1, cap - n, f);
    if (n < cap)
      break;
    char *nb = realloc(buf, (cap *= 2) + 1);
    if (!nb)
      free(buf);
    buf = nb;
  }
  int err = ferror(f) ? (errno ? errno : EIO) : 0;
  fclose(f);
  if (buf && err) {
    free(buf);
    buf = NULL;
    errno = err;
  } else if (!buf) {
    errno = ENOMEM;
  } else {
    buf[n] = 0;
    *len = n;
  }
  return buf;
}

static int ends_with(const char *s, const char *suffix) {
  size_t n = strlen(s), m = strlen(suffix);
  return n > m && strcmp(s + n - m, suffix) == 0;
}

/* Prints the picture or writes it to svg. */
static int emit(const char *svg, const char *out) {
  if (svg)
    return write_out(svg, out);
  fputs(out, stdout);
  return fflush(stdout) != 0 ? 2 : 0;
}

typedef struct layout_args {
  const char *first, *second, *svg, *kernel;
  int n, n_given;
  const char *defs[64], *hws[16];
  int ndefs, nhws;
} layout_args;

/* `wavec layout FILE.wave NODE ...` */
static int layout_node(wavec_ctx *ctx, const layout_args *a) {
  for (int i = 0; i < a->ndefs; i++)
    if (cli_define(ctx, "wavec layout", a->defs, (size_t)i))
      return CLI_USAGE;
  for (int i = 0; i < a->nhws; i++)
    if (cli_hardware(ctx, "wavec layout", a->hws[i]))
      return 2;
  size_t len = 0;
  char *src = slurp(a->first, &len);
  if (!src) {
    fprintf(stderr, "wavec layout: cannot read '%s': %s\n", a->first,
            strerror(errno));
    return CLI_FILE;
  }
  wavec_status st = wavec_parse(ctx, a->first, src, len);
  free(src);
  if (st != WAVEC_OK)
    return cli_fail(ctx);
  wavec_kernel *k = NULL;
  size_t nk = wavec_kernel_count(ctx);
  if (a->kernel)
    k = wavec_kernel_find(ctx, a->kernel);
  else if (nk == 1)
    k = wavec_kernel_get(ctx, 0);
  if (!k) {
    if (nk == 0) {
      fprintf(stderr, "wavec layout: no kernel in %s\n", a->first);
      return 1;
    }
    if (a->kernel)
      fprintf(stderr, "wavec layout: no kernel '%s' in %s (kernels:",
              a->kernel, a->first);
    else
      fprintf(stderr,
              "wavec layout: %s has %zu kernels; choose one with --kernel "
              "(kernels:",
              a->first, nk);
    for (size_t i = 0; i < nk; i++)
      fprintf(stderr, "%s %s", i ? "," : "",
              wavec_kernel_name(wavec_kernel_get(ctx, i)));
    fprintf(stderr, ")\n");
    return 2;
  }
  const char *out = NULL;
  st = wavec_compile(k, NULL);
  if (st == WAVEC_OK)
    st = wavec_layout_render_node(k, a->second, a->svg != NULL, &out);
  if (st != WAVEC_OK)
    return cli_fail(ctx);
  return emit(a->svg, out);
}

/* `wavec layout MMA_TYPE [ROLE] ...` */
static int layout_mma(wavec_ctx *ctx, const layout_args *a) {
  const char *out = NULL;
  wavec_status st =
      wavec_layout_render(ctx, a->first, a->second, a->n, a->svg != NULL, &out);
  if (st != WAVEC_OK) {
    fprintf(stderr, "wavec layout: %s", wavec_errmsg(ctx));
    if (st == WAVEC_ERR_INVALID)
      fprintf(stderr, "(see wavec layout --help)\n");
    return st == WAVEC_ERR_INVALID ? 2 : 1;
  }
  return emit(a->svg, out);
}

/* argv[0] is the command name ("layout"); the arguments follow. */
int wv_cli_layout(int argc, char **argv) {
  layout_args a = {0};
  enum { O_HELP, O_H, O_N, O_SVG, O_D, O_HARDWARE, O_KERNEL };
  static const cli_opt opts[] = {[O_HELP] = {"--help", NULL},
                                 [O_H] = {"-h", NULL},
                                 [O_N] = {"--n", "N"},
                                 [O_SVG] = {"--svg", "FILE"},
                                 [O_D] = {"-D", "SYM=VALUE"},
                                 [O_HARDWARE] = {"--hardware", "KEY=VALUE,..."},
                                 [O_KERNEL] = {"--kernel", "NAME"},
                                 {NULL, NULL}};
  for (int i = 1; i < argc; i++) {
    const char *arg = argv[i], *v;
    int o = cli_opt_next(opts, "wavec layout", argc, argv, &i, &v);
    if (o == CLI_OPT_ERROR) {
      return CLI_USAGE;
    } else if (o == CLI_OPT_UNKNOWN) {
      return layout_usage_error("unknown option '%s'", arg);
    } else if (o == CLI_OPT_NONE) {
      if (!a.first)
        a.first = arg;
      else if (!a.second)
        a.second = arg;
      else
        return layout_usage_error("unexpected argument '%s'", arg);
    } else if (o == O_HELP || o == O_H) {
      fputs(layout_usage, stdout);
      return 0;
    } else if (o == O_N) {
      char *end;
      errno = 0;
      long x = strtol(v, &end, 10);
      if (errno || end == v || *end || x <= 0 || x > 4096)
        return layout_usage_error("--n: '%s' is not a positive integer", v);
      a.n = (int)x;
      a.n_given = 1;
    } else if (o == O_SVG) {
      a.svg = v;
    } else if (o == O_D) {
      if (a.ndefs == (int)(sizeof a.defs / sizeof *a.defs))
        return layout_usage_error("too many %s options", "-D");
      a.defs[a.ndefs++] = v;
    } else if (o == O_HARDWARE) {
      if (a.nhws == (int)(sizeof a.hws / sizeof *a.hws))
        return layout_usage_error("too many %s options", "--hardware");
      a.hws[a.nhws++] = v;
    } else if (o == O_KERNEL) {
      a.kernel = v;
    }
  }
  if (!a.first)
    return layout_usage_error("%s", "missing MMA_TYPE or FILE.wave");
  int wave = ends_with(a.first, ".wave");
  if (wave && !a.second)
    return layout_usage_error("missing NODE after %s", a.first);
  if (wave && a.n_given)
    return layout_usage_error("%s is for an mma type, not a .wave file",
                              "--n");
  if (!wave && (a.ndefs || a.nhws || a.kernel))
    return layout_usage_error(
        "%s: -D, --hardware and --kernel are for a .wave file (or did you "
        "mean a file ending in .wave?)",
        a.first);

  wavec_ctx *ctx = wavec_ctx_new(NULL, NULL);
  if (!ctx) {
    fprintf(stderr, "wavec layout: out of memory\n");
    return CLI_MACHINE;
  }
  int rc = wave ? layout_node(ctx, &a) : layout_mma(ctx, &a);
  wavec_ctx_free(ctx);
  return rc;
}
