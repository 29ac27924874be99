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

/* Where a path's bytes go: written through in place (`through`), or, a
 * regular file or a new one, into a temporary `tmp` beside `target`, the
 * end of its links. plan(): 0, or -1 after fail(). */
typedef struct out_plan {
  struct stat st;
  bool have, through;
  char target[PATH_MAX], tmp[PATH_MAX];
} out_plan;

static int plan(const char *path, out_plan *o, char *err, size_t errlen) {
  if (!path || !*path)
    return fail(err, errlen, path ? path : "(null)", "empty file name");
  o->have = stat(path, &o->st) == 0;
  if (!o->have && errno != ENOENT)
    return fail(err, errlen, path, "%s", strerror(errno));
  if (o->have && S_ISDIR(o->st.st_mode))
    return fail(err, errlen, path, "%s", strerror(EISDIR));
  /* /dev and /proc hold devices (a new name there is a typo, not a file to
   * make), except /dev/shm, a file system for files */
  bool special =
      (!strncmp(path, "/dev/", 5) && strncmp(path, "/dev/shm/", 9)) ||
      !strncmp(path, "/proc/", 6);
  if (special && !o->have)
    return fail(err, errlen, path, "%s", strerror(ENOENT));
  o->through = special || (o->have && !S_ISREG(o->st.st_mode));
  return 0;
}

/* The content of a regular file (or a new one) into a new temporary file
 * DIR/.NAME.XXXXXX beside the end of its links (rename() stays in one file
 * system), its mode set. 0, or -1 after fail() with no temporary left. */
static int write_temp(const char *path, out_plan *o, const wv_span *parts,
                      size_t nparts, char *err, size_t errlen) {
  int e = resolve(path, o->target);
  if (e)
    return fail(err, errlen, path, "%s", strerror(e));
  const char *slash = strrchr(o->target, '/');
  size_t dir = slash ? (size_t)(slash - o->target) + 1 : 0;
  if (snprintf(o->tmp, sizeof o->tmp, "%.*s.%s.XXXXXX", (int)dir, o->target,
               o->target + dir) >= (int)sizeof o->tmp)
    return fail(err, errlen, path, "%s", strerror(ENAMETOOLONG));
  int fd = mkstemp(o->tmp);
  if (fd < 0) {
    e = errno;
    return fail(err, errlen, path,
                "cannot create a temporary file in '%.*s': %s",
                dir ? (int)dir : 1, dir ? o->target : ".", strerror(e));
  }
  e = write_all(fd, parts, nparts);
  mode_t mode = o->have ? o->st.st_mode & 0777 : 0666 & ~current_umask();
  if (!e && fchmod(fd, mode) != 0)
    e = errno;
  if (close(fd) != 0 && !e && errno != EINTR)
    e = errno;
  if (e) {
    unlink(o->tmp);
    return fail(err, errlen, path, "%s", strerror(e));
  }
  return 0;
}

int wv_write_file(const char *path, const wv_span *parts, size_t nparts,
                  char *err, size_t errlen) {
  out_plan o;
  if (plan(path, &o, err, errlen) != 0)
    return -1;
  if (o.through)
    return write_through(path, &o.st, parts, nparts, err, errlen);
  if (write_temp(path, &o, parts, nparts, err, errlen) != 0)
    return -1;
  if (rename(o.tmp, o.target) != 0) {
    int e = errno;
    unlink(o.tmp);
    return fail(err, errlen, path, "%s", strerror(e));
  }
  return 0;
}

int wv_write_files(const wv_outfile *files, size_t nfiles, char *err,
                   size_t errlen) {
  out_plan o[WV_WRITE_FILES_MAX];
  if (nfiles > WV_WRITE_FILES_MAX)
    return fail(err, errlen, nfiles ? files[0].path : "(none)", "%s",
                strerror(E2BIG));
  /* every check first: a path that is not for a regular file fails before
   * any temporary is made */
  for (size_t i = 0; i < nfiles; i++) {
    if (plan(files[i].path, &o[i], err, errlen) != 0)
      return -1;
    if (o[i].through)
      return fail(err, errlen, files[i].path,
                  "not a regular file (written all or none with the other "
                  "outputs)");
  }
  for (size_t i = 0; i < nfiles; i++)
    if (write_temp(files[i].path, &o[i], files[i].parts, files[i].nparts, err,
                   errlen) != 0) {
      while (i-- > 0)
        unlink(o[i].tmp);
      return -1;
    }
  /* only a rename can fail now, which on one file system is an error of
   * the file system itself: the files already renamed stay new */
  for (size_t i = 0; i < nfiles; i++)
    if (rename(o[i].tmp, o[i].target) != 0) {
      int e = errno;
      for (size_t j = i; j < nfiles; j++)
        unlink(o[j].tmp);
      return fail(err, errlen, files[i].path, "%s", strerror(e));
    }
  return 0;
}
