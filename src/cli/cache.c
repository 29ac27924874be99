/* `wavec cache`: the disk cache of GPU modules (wavec_cache_* in wavec.h).
 *   wavec cache            its folder
 *   wavec cache --list     one line per entry: bytes, kernel, target, and
 *                          what it was built from (or "corrupt")
 *   wavec cache --clear    removes every entry */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "wavec.h"

int wv_cli_cache(int argc, char **argv);

static const char usage[] =
    "usage: wavec cache [--list | --clear]\n"
    "The compile cache of GPU modules: $WAVEC_CACHE_DIR, else\n"
    "$XDG_CACHE_HOME/wavec, else ~/.cache/wavec. Without an option, prints\n"
    "its folder.\n";

int wv_cli_cache(int argc, char **argv) {
  int list = 0, clear = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--list"))
      list = 1;
    else if (!strcmp(argv[i], "--clear"))
      clear = 1;
    else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
      fputs(usage, stdout);
      return 0;
    } else {
      fprintf(stderr, "wavec cache: unknown argument '%s'\n%s", argv[i], usage);
      return 2;
    }
  }
  if (list && clear) {
    fprintf(stderr, "wavec cache: --list or --clear, not both\n");
    return 2;
  }
  wavec_ctx *ctx = wavec_ctx_new(NULL, NULL);
  if (!ctx) {
    fprintf(stderr, "wavec: out of memory\n");
    return CLI_MACHINE;
  }
  int rc = 0;
  const char *dir = wavec_cache_dir(ctx);
  if (!dir) {
    fprintf(stderr,
            "wavec cache: no cache folder (set WAVEC_CACHE_DIR or HOME)\n");
    rc = CLI_MACHINE;
  } else if (clear) {
    size_t n = 0;
    if (wavec_cache_clear(ctx, &n) != WAVEC_OK) {
      fprintf(stderr, "wavec cache: %s", wavec_errmsg(ctx));
      rc = CLI_FILE;
    } else {
      printf("removed %zu file%s from %s\n", n, n == 1 ? "" : "s", dir);
    }
  } else if (list) {
    const wavec_cache_entry *es;
    size_t n = 0;
    if (wavec_cache_list(ctx, &es, &n) != WAVEC_OK) {
      fprintf(stderr, "wavec cache: %s", wavec_errmsg(ctx));
      rc = CLI_FILE;
    } else {
      unsigned long long total = 0;
      for (size_t i = 0; i < n; i++) {
        total += es[i].bytes;
        if (es[i].valid)
          printf("%10llu  %s\n", (unsigned long long)es[i].bytes, es[i].desc);
        else
          printf("%10llu  corrupt or of another format: %s\n",
                 (unsigned long long)es[i].bytes, es[i].file);
      }
      printf("%zu entr%s, %llu bytes in %s\n", n, n == 1 ? "y" : "ies", total,
             dir);
    }
  } else {
    printf("%s\n", dir);
  }
  wavec_ctx_free(ctx);
  return rc;
}
