/* Options that several wavec commands take: -D and --hardware. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

static int usage(const char *prog, const char *fmt, const char *arg) {
  fprintf(stderr, "%s: ", prog);
  fprintf(stderr, fmt, arg);
  fprintf(stderr, "\n(see %s --help)\n", prog);
  return 2;
}

int cli_define(wavec_ctx *ctx, const char *prog, const char *arg) {
  const char *eq = strchr(arg, '=');
  if (!eq || eq == arg)
    return usage(prog, "-D wants SYM=VALUE, not '%s'", arg);
  char name[256];
  size_t n = (size_t)(eq - arg);
  if (n >= sizeof name)
    return usage(prog, "-D name too long: '%s'", arg);
  memcpy(name, arg, n);
  name[n] = 0;
  const char *v = eq + 1;
  char *end;
  errno = 0;
  long long i = strtoll(v, &end, 10);
  wavec_status st;
  if (*v && !*end && errno == 0) {
    st = wavec_define_int(ctx, name, i);
  } else {
    errno = 0;
    double f = strtod(v, &end);
    if (!*v || *end || errno != 0)
      return usage(prog, "-D value is not a number: '%s'", arg);
    st = wavec_define_float(ctx, name, f);
  }
  if (st != WAVEC_OK) {
    fprintf(stderr, "%s: %s", prog, wavec_errmsg(ctx));
    return 2;
  }
  return 0;
}

int cli_hardware(wavec_ctx *ctx, const char *prog, const char *arg) {
  char buf[512];
  if (strlen(arg) >= sizeof buf)
    return usage(prog, "--hardware argument too long: '%s'", arg);
  strcpy(buf, arg);
  for (char *save = NULL, *kv = strtok_r(buf, ",", &save); kv;
       kv = strtok_r(NULL, ",", &save)) {
    char *eq = strchr(kv, '=');
    if (!eq)
      return usage(prog, "--hardware wants KEY=VALUE, not '%s'", kv);
    *eq = 0;
    if (wavec_hardware_override(ctx, kv, eq + 1) != WAVEC_OK) {
      *eq = '=';
      return usage(prog, "invalid --hardware entry '%s' (keys: " CLI_HW_KEYS
                   ")", kv);
    }
  }
  return 0;
}
