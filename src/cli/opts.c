/* Options that several wavec commands take (-D, --hardware) and the
 * parser of every command's options. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

static int usage(const char *prog, const char *fmt, const char *arg) {
  fprintf(stderr, "%s: ", prog);
  fprintf(stderr, fmt, arg);
  fprintf(stderr, "\n(see %s --help)\n", prog);
  return CLI_USAGE;
}

/* The length of the name of -D NAME=VALUE, 0 when there is no '='. */
static size_t name_len(const char *arg) {
  const char *eq = strchr(arg, '=');
  return eq ? (size_t)(eq - arg) : 0;
}

/* An integer as C writes one: [+-] digits, or [+-] 0x hex digits. */
static bool int_syntax(const char *v, int *base) {
  const char *p = v + (*v == '+' || *v == '-');
  *base = 10;
  if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
    *base = 16;
    p += 2;
  }
  if (!*p)
    return false;
  for (; *p; p++)
    if (!(*base == 16 ? (*p >= '0' && *p <= '9') ||
                            (*p >= 'a' && *p <= 'f') || (*p >= 'A' && *p <= 'F')
                      : *p >= '0' && *p <= '9'))
      return false;
  return true;
}

int cli_define(wavec_ctx *ctx, const char *prog, const char *const *defs,
               size_t i) {
  const char *arg = defs[i];
  size_t n = name_len(arg);
  if (n == 0)
    return usage(prog, "-D wants SYM=VALUE, not '%s'", arg);
  char name[256];
  if (n >= sizeof name)
    return usage(prog, "-D name too long: '%s'", arg);
  memcpy(name, arg, n);
  name[n] = 0;
  /* a repeated -D: the last one counts, as for cc, but say so */
  for (size_t j = i; j-- > 0;)
    if (name_len(defs[j]) == n && !strncmp(defs[j], arg, n)) {
      fprintf(stderr, "%s: warning: -D %s repeats -D %s; the last one counts\n",
              prog, arg, defs[j]);
      break;
    }
  const char *v = arg + n + 1;
  char *end;
  int base;
  wavec_status st;
  if (int_syntax(v, &base)) {
    errno = 0;
    long long x = strtoll(v, &end, base);
    if (errno == ERANGE) {
      fprintf(stderr, "%s: -D %s: the integer is out of range (%lld to %lld)\n"
              "(see %s --help)\n", prog, arg, (long long)INT64_MIN,
              (long long)INT64_MAX, prog);
      return CLI_USAGE;
    }
    st = wavec_define_int(ctx, name, x);
  } else {
    errno = 0;
    double f = strtod(v, &end);
    bool hex = strchr(v, 'x') || strchr(v, 'X');
    if (!*v || *end || hex)
      return usage(prog, "-D value is not a number (an integer, 0x hex "
                         "integer or decimal float): '%s'", arg);
    if (errno == ERANGE && (f > 1 || f < -1))
      return usage(prog, "-D value is out of the range of a double: '%s'",
                   arg);
    st = wavec_define_float(ctx, name, f);
  }
  if (st != WAVEC_OK) {
    fprintf(stderr, "%s: %s", prog, wavec_errmsg(ctx));
    return CLI_USAGE;
  }
  return CLI_OK;
}

int cli_hardware(wavec_ctx *ctx, const char *prog, const char *arg) {
  char buf[512];
  /* the entries given so far in this command line, KEY=VALUE each: a
   * repeated key warns, as a repeated -D does, and the last one counts */
  static char seen[32][64];
  static int nseen;
  if (strlen(arg) >= sizeof buf)
    return usage(prog, "--hardware argument too long: '%s'", arg);
  strcpy(buf, arg);
  for (char *save = NULL, *kv = strtok_r(buf, ",", &save); kv;
       kv = strtok_r(NULL, ",", &save)) {
    char *eq = strchr(kv, '=');
    if (!eq)
      return usage(prog, "--hardware wants KEY=VALUE, not '%s'", kv);
    size_t klen = (size_t)(eq - kv);
    int at = nseen < 32 ? nseen : -1;
    for (int i = 0; i < nseen; i++)
      if (!strncmp(seen[i], kv, klen) && seen[i][klen] == '=') {
        fprintf(stderr, "%s: warning: --hardware %s repeats --hardware %s; "
                "the last one counts\n", prog, kv, seen[i]);
        at = i;
      }
    if (at >= 0 && strlen(kv) < sizeof seen[0]) {
      strcpy(seen[at], kv);
      nseen += at == nseen;
    }
    *eq = 0;
    if (wavec_hardware_override(ctx, kv, eq + 1) != WAVEC_OK) {
      *eq = '=';
      /* the library says what is wrong and what is valid (E0410) */
      wavec_diag_info d;
      size_t n = wavec_diag_count(ctx);
      if (n && wavec_diag(ctx, n - 1, &d) == WAVEC_OK &&
          d.code == CLI_E_HW_OVERRIDE) {
        fprintf(stderr, "%s: invalid --hardware entry '%s': %s\n"
                "(see %s --help)\n", prog, kv, d.message, prog);
        return CLI_USAGE;
      }
      return usage(prog, "invalid --hardware entry '%s' (keys: " CLI_HW_KEYS
                   ")", kv);
    }
  }
  return CLI_OK;
}

int cli_opt_next(const cli_opt *opts, const char *prog, int argc, char **argv,
                 int *i, const char **value) {
  const char *a = argv[*i];
  *value = NULL;
  if (a[0] != '-' || !a[1])
    return CLI_OPT_NONE;
  bool longopt = a[1] == '-';
  /* --NAME=VALUE: the name before the '=' */
  const char *eq = longopt ? strchr(a, '=') : NULL;
  size_t n = eq ? (size_t)(eq - a) : strlen(a);
  for (int k = 0; opts[k].name; k++) {
    const cli_opt *o = &opts[k];
    size_t on = strlen(o->name);
    /* -DVALUE, -oFILE: a short option's value may follow it at once */
    bool attached =
        !longopt && o->what && on == 2 && n > 2 && !strncmp(a, o->name, 2);
    if (!attached && (n != on || strncmp(a, o->name, n) != 0))
      continue;
    if (!o->what) {
      if (eq) {
        fprintf(stderr, "%s: %s takes no value, not '%s'\n(see %s --help)\n",
                prog, o->name, eq + 1, prog);
        return CLI_OPT_ERROR;
      }
      return k;
    }
    const char *v = eq ? eq + 1 : attached ? a + 2 : NULL;
    /* the next word, unless it is another option */
    const char *next = !v && *i + 1 < argc ? argv[*i + 1] : NULL;
    if (next && strncmp(next, "--", 2) != 0) {
      v = next;
      next = NULL;
      ++*i;
    }
    if (!v || !*v) {
      const char *sep = o->name[1] == '-' ? "=" : "";
      fprintf(stderr, "%s: %s wants a value (%s %s or %s%s%s)", prog, o->name,
              o->name, o->what, o->name, sep, o->what);
      if (next)
        fprintf(stderr, ", not the option '%s'", next);
      fprintf(stderr, "\n(see %s --help)\n", prog);
      return CLI_OPT_ERROR;
    }
    *value = v;
    return k;
  }
  return CLI_OPT_UNKNOWN;
}
