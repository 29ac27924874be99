/* `wavec layout`: prints or draws which lane holds which element of an mma
 * operand. A thin user of wavec_layout_render(). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wavec.h"

int wv_cli_layout(int argc, char **argv);

static const char layout_usage[] =
    "usage: wavec layout MMA_TYPE [lhs|rhs|acc] [--n N] [--svg FILE]\n"
    "\n"
    "Shows which lane holds which element of one operand of an mma type:\n"
    "lhs is M x K, rhs is N x K, acc (the default) is M x N; each cell is\n"
    "lane:elem. The picture is evaluated from the compiler's own layout\n"
    "table.\n"
    "\n"
    "mma types: F32_16x8x16_F16, F32_16x8x16_BF16 (NVIDIA mma.sync),\n"
    "  F32_16x16x16_F16, F32_32x32x8_F16 (AMD MFMA, simulator only),\n"
    "  F32_64xNx16_F16, F32_64xNx16_BF16 (NVIDIA wgmma, sm_90a)\n"
    "\n"
    "options:\n"
    "  --n N        the N of a wgmma type: 8, 16, ..., 256 (default 16)\n"
    "  --svg FILE   write an SVG picture to FILE instead of printing text\n"
    "  -h, --help   this text\n"
    "\n"
    "Exit status: 0 success, 1 an internal error, 2 bad usage or an\n"
    "unwritable file.\n";

static int layout_usage_error(const char *fmt, const char *arg) {
  fprintf(stderr, "wavec layout: ");
  fprintf(stderr, fmt, arg);
  fprintf(stderr, "\n(see wavec layout --help)\n");
  return 2;
}

/* Writes text to path through path.tmp and a rename, so that a reader never
 * sees a half-written file and a failure leaves none behind. */
static int write_atomic(const char *path, const char *text) {
  size_t n = strlen(path);
  char *tmp = malloc(n + 5);
  if (!tmp) {
    fprintf(stderr, "wavec layout: out of memory\n");
    return 2;
  }
  memcpy(tmp, path, n);
  memcpy(tmp + n, ".tmp", 5);
  FILE *f = fopen(tmp, "wb");
  if (!f) {
    fprintf(stderr, "wavec layout: cannot write '%s': %s\n", tmp,
            strerror(errno));
    free(tmp);
    return 2;
  }
  size_t len = strlen(text);
  int bad = fwrite(text, 1, len, f) != len;
  int err = errno;
  if (fclose(f) != 0 && !bad) {
    bad = 1;
    err = errno;
  }
  if (!bad && rename(tmp, path) != 0) {
    bad = 1;
    err = errno;
  }
  if (bad) {
    fprintf(stderr, "wavec layout: cannot write '%s': %s\n", path,
            strerror(err));
    remove(tmp);
    free(tmp);
    return 2;
  }
  free(tmp);
  return 0;
}

/* argv[0] is the command name ("layout"); the arguments follow. */
int wv_cli_layout(int argc, char **argv) {
  const char *mma = NULL, *role = NULL, *svg = NULL;
  int n = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
      fputs(layout_usage, stdout);
      return 0;
    } else if (!strcmp(a, "--n") || !strncmp(a, "--n=", 4)) {
      const char *v = a[3] ? a + 4 : (i + 1 < argc ? argv[++i] : NULL);
      if (!v)
        return layout_usage_error("%s needs a value", "--n");
      char *end;
      errno = 0;
      long x = strtol(v, &end, 10);
      if (errno || end == v || *end || x <= 0 || x > 4096)
        return layout_usage_error("--n: '%s' is not a positive integer", v);
      n = (int)x;
    } else if (!strcmp(a, "--svg") || !strncmp(a, "--svg=", 6)) {
      const char *v = a[5] ? a + 6 : (i + 1 < argc ? argv[++i] : NULL);
      if (!v || !*v)
        return layout_usage_error("%s needs a file name", "--svg");
      svg = v;
    } else if (a[0] == '-' && a[1]) {
      return layout_usage_error("unknown option '%s'", a);
    } else if (!mma) {
      mma = a;
    } else if (!role) {
      role = a;
    } else {
      return layout_usage_error("unexpected argument '%s'", a);
    }
  }
  if (!mma)
    return layout_usage_error("%s", "missing MMA_TYPE");

  wavec_ctx *ctx = wavec_ctx_new(NULL, NULL);
  if (!ctx) {
    fprintf(stderr, "wavec layout: out of memory\n");
    return 2;
  }
  const char *out = NULL;
  wavec_status st = wavec_layout_render(ctx, mma, role, n, svg != NULL, &out);
  int rc = 0;
  if (st != WAVEC_OK) {
    fprintf(stderr, "wavec layout: %s", wavec_errmsg(ctx));
    if (st == WAVEC_ERR_INVALID)
      fprintf(stderr, "(see wavec layout --help)\n");
    rc = st == WAVEC_ERR_INVALID ? 2 : 1;
  } else if (svg) {
    rc = write_atomic(svg, out);
  } else {
    fputs(out, stdout);
    if (fflush(stdout) != 0)
      rc = 2;
  }
  wavec_ctx_free(ctx);
  return rc;
}
