/* A tiny unit-test harness. Each test binary prints one line per case,
 * "ok NAME" or "FAIL NAME: why", and exits non-zero if any case failed.
 * tests/run.sh counts the lines. */
#ifndef WV_CHECK_H
#define WV_CHECK_H
#include <stdio.h>
#include <stdlib.h>

static int check_failed_ = 0, check_case_failed_ = 0;

#define CHECK(cond)                                                            \
  do {                                                                         \
    if (!(cond)) {                                                             \
      if (!check_case_failed_)                                                 \
        printf("  %s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);     \
      check_case_failed_ = 1;                                                  \
    }                                                                          \
  } while (0)

#define CHECKF(cond, ...)                                                      \
  do {                                                                         \
    if (!(cond)) {                                                             \
      if (!check_case_failed_) {                                               \
        printf("  %s:%d: check failed: %s: ", __FILE__, __LINE__, #cond);      \
        printf(__VA_ARGS__);                                                   \
        printf("\n");                                                          \
      }                                                                        \
      check_case_failed_ = 1;                                                  \
    }                                                                          \
  } while (0)

#define RUN(fn)                                                                \
  do {                                                                         \
    check_case_failed_ = 0;                                                    \
    fn();                                                                      \
    printf("%s %s\n", check_case_failed_ ? "FAIL" : "ok", #fn);               \
    fflush(stdout);                                                            \
    check_failed_ |= check_case_failed_;                                       \
  } while (0)

#define CHECK_EXIT() return check_failed_ ? 1 : 0

/* A whole file (up to 1 MiB) in a malloc'd buffer, or NULL; *len is set. */
static inline char *slurp(const char *path, size_t *len) {
  *len = 0;
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  char *buf = malloc(1 << 20);
  if (buf)
    *len = fread(buf, 1, 1 << 20, f);
  fclose(f);
  return buf;
}
#endif
