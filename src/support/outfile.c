/* Output files (see outfile.h). */
#include "support/outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef PATH_MAX
#define PATH_MAX 4096
#endif

/* "PATH: cannot write: " and the reason. */
__attribute__((format(printf, 4, 5))) static int fail(char *err, size_t errlen,
                                                      const char *path,
                                                      const char *fmt, ...) {
  if (err && errlen) {
    int n = snprintf(err, errlen, "%s: cannot write: ", path);
    if (n >= 0 && (size_t)n < errlen) {
      va_list ap;
      va_start(ap, fmt);
      vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
      va_end(ap);
    }
  }
  return -1;
}

/* 0, or the errno of the first failing write. */
static int write_all(int fd, const wv_span *parts, size_t nparts) {
  for (size_t i = 0; i < nparts; i++) {
    const char *p = parts[i].p;
    size_t left = parts[i].n;
    while (left > 0) {
      ssize_t w = write(fd, p, left);
      if (w < 0 && errno == EINTR)
        continue;
      if (w <= 0)
        return w < 0 ? errno : EIO;
      p += w;
      left -= (size_t)w;
    }
  }
  return 0;
}

/* The end of the chain of symbolic links that starts at path, into
 * out[PATH_MAX]: a regular file, or where a new one goes. 0 or an errno. */
static int resolve(const char *path, char *out) {
  if (strlen(path) >= PATH_MAX)
    return ENAMETOOLONG;
  strcpy(out, path);
  for (int hops = 0; hops < 40; hops++) {
    struct stat st;
    if (lstat(out, &st) != 0)
      return errno == ENOENT ? 0 : errno;
    if (!S_ISLNK(st.st_mode))
      return 0;
    char link[PATH_MAX];
    ssize_t n = readlink(out, link, sizeof link - 1);
    if (n < 0)
      return errno;
    link[n] = 0;
    /* a relative link is relative to the directory that holds it */
    char *slash = strrchr(out, '/');
    size_t dir = link[0] == '/' || !slash ? 0 : (size_t)(slash - out) + 1;
    if (dir + (size_t)n >= PATH_MAX)
      return ENAMETOOLONG;
    memcpy(out + dir, link, (size_t)n + 1);
  }
  return ELOOP;
}

/* The process's umask, without changing it where /proc says it. */
static mode_t current_umask(void) {
  FILE *f = fopen("/proc/self/status", "r");
  if (f) {
    char line[256];
    unsigned m;
    while (fgets(line, sizeof line, f)) {
      if (strncmp(line, "Umask:", 6) == 0 && sscanf(line + 6, "%o", &m) == 1) {
        fclose(f);
        return (mode_t)m;
      }
    }
    fclose(f);
  }
  mode_t m = umask(022);
  umask(m);
  return m;
}

/* Devices, FIFOs, /dev/stdout: written in place. */
static int write_through(const char *path, const struct stat *st,
                         const wv_span *parts, size_t nparts, char *err,
                         size_t errlen) {
  int flags = O_WRONLY | O_NOCTTY | O_CLOEXEC;
  if (S_ISREG(st->st_mode))
    flags |= O_TRUNC; /* /dev/stdout redirected to a file */
  int fd;
  do
    fd = open(path, flags);
  while (fd < 0 && errno == EINTR);
  if (fd < 0)
    return fail(err, errlen, path, "%s", strerror(errno));
  int e = write_all(fd, parts, nparts);
  if (close(fd) != 0 && !e && errno != EINTR)
    e = errno;
  return e ? fail(err, errlen, path, "%s", strerror(e)) : 0;
}

int wv_write_file(const char *path, const wv_span *parts, size_t nparts,
                  char *err, size_t errlen) {
  if (!path || !*path)
    return fail(err, errlen, path ? path : "(null)", "empty file name");
  struct stat st;
  bool have = stat(path, &st) == 0;
  if (!have && errno != ENOENT)
    return fail(err, errlen, path, "%s", strerror(errno));
  if (have && S_ISDIR(st.st_mode))
    return fail(err, errlen, path, "%s", strerror(EISDIR));
  /* /dev and /proc hold devices (a new name there is a typo, not a file to
   * make), except /dev/shm, a file system for files */
  bool special =
      (!strncmp(path, "/dev/", 5) && strncmp(path, "/dev/shm/", 9)) ||
      !strncmp(path, "/proc/", 6);
  if (special && !have)
    return fail(err, errlen, path, "%s", strerror(ENOENT));
  if (special || (have && !S_ISREG(st.st_mode)))
    return write_through(path, &st, parts, nparts, err, errlen);

  char target[PATH_MAX], tmp[PATH_MAX];
  int e = resolve(path, target);
  if (e)
    return fail(err, errlen, path, "%s", strerror(e));
  /* DIR/.NAME.XXXXXX beside the target: rename() stays in one file system */
  const char *slash = strrchr(target, '/');
  size_t dir = slash ? (size_t)(slash - target) + 1 : 0;
  if (snprintf(tmp, sizeof tmp, "%.*s.%s.XXXXXX", (int)dir, target,
               target + dir) >= (int)sizeof tmp)
    return fail(err, errlen, path, "%s", strerror(ENAMETOOLONG));
  int fd = mkstemp(tmp);
  if (fd < 0) {
    e = errno;
    return fail(err, errlen, path, "cannot create a temporary file in '%.*s': %s",
                dir ? (int)dir : 1, dir ? target : ".", strerror(e));
  }
  e = write_all(fd, parts, nparts);
  mode_t mode = have ? st.st_mode & 0777 : 0666 & ~current_umask();
  if (!e && fchmod(fd, mode) != 0)
    e = errno;
  if (close(fd) != 0 && !e && errno != EINTR)
    e = errno;
  if (!e && rename(tmp, target) != 0)
    e = errno;
  if (e) {
    unlink(tmp);
    return fail(err, errlen, path, "%s", strerror(e));
  }
  return 0;
}
