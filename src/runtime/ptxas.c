/* The CUDA toolkit's ptxas as the library's assembler (runtime.h): PTX in a
 * private temporary folder, ptxas spawned with its output captured (the
 * library never prints), the cubin read back, the folder removed. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runtime/runtime.h"

extern char **environ;

static bool executable(const char *p) {
  struct stat st;
  return stat(p, &st) == 0 && S_ISREG(st.st_mode) && access(p, X_OK) == 0;
}

const char *wv_ptxas_path(wavec_ctx *ctx) {
  wv_buf b;
  const char *env = getenv("WAVEC_PTXAS");
  if (env && *env)
    return executable(env) ? wv_strdup(ctx, env) : NULL;
  const char *home = getenv("CUDA_HOME");
  const char *dirs[] = {home && *home ? home : NULL, "/usr/local/cuda"};
  for (size_t i = 0; i < WV_ARRAY_LEN(dirs); i++) {
    if (!dirs[i])
      continue;
    wv_buf_init(&b, ctx);
    wv_buf_printf(&b, "%s/bin/ptxas", dirs[i]);
    if (executable(wv_buf_str(&b)))
      return wv_buf_str(&b);
  }
  const char *path = getenv("PATH");
  while (path && *path) {
    const char *end = strchr(path, ':');
    size_t n = end ? (size_t)(end - path) : strlen(path);
    if (n) {
      wv_buf_init(&b, ctx);
      wv_buf_printf(&b, "%.*s/ptxas", (int)n, path);
      if (executable(wv_buf_str(&b)))
        return wv_buf_str(&b);
    }
    path = end ? end + 1 : NULL;
  }
  return NULL;
}

const char *wv_ptxas_identity(wavec_ctx *ctx, const char *ptxas) {
  struct stat st;
  wv_buf b;
  wv_buf_init(&b, ctx);
  if (stat(ptxas, &st) != 0)
    return NULL;
  wv_buf_printf(&b, "ptxas %s %lld %lld.%09ld", ptxas, (long long)st.st_size,
                (long long)st.st_mtim.tv_sec, (long)st.st_mtim.tv_nsec);
  return wv_buf_str(&b);
}

/* Runs argv[0] (a path) with argv, stdin from /dev/null, stdout and stderr
 * into the file `log` (made or emptied); its wait status, or -1 with errno
 * where it could not be started. */
static int run_logged(char *const argv[], const char *log) {
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, log, O_WRONLY | O_CREAT | O_TRUNC,
                                   0600);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  pid_t pid;
  int rc = posix_spawn(&pid, argv[0], &fa, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) {
    errno = rc;
    return -1;
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
    ;
  return status;
}

/* What `ptxas --version` says, once a process for each ptxas binary (a
 * GPU load asks it every time: a process spawned each would cost a cache
 * hit milliseconds): the last one asked, by path, size and time. */
static struct {
  pthread_mutex_t lock;
  char path[512];
  long long size, sec, nsec;
  int version;
} asked = {.lock = PTHREAD_MUTEX_INITIALIZER};

static int ask_version(const char *ptxas);

int wv_ptxas_version(const char *ptxas) {
  struct stat st;
  if (stat(ptxas, &st) != 0 || strlen(ptxas) >= sizeof asked.path)
    return 0;
  pthread_mutex_lock(&asked.lock);
  bool known = !strcmp(asked.path, ptxas) && asked.size == st.st_size &&
               asked.sec == st.st_mtim.tv_sec &&
               asked.nsec == st.st_mtim.tv_nsec;
  int v = known ? asked.version : ask_version(ptxas);
  if (!known) {
    strcpy(asked.path, ptxas);
    asked.size = st.st_size;
    asked.sec = st.st_mtim.tv_sec;
    asked.nsec = st.st_mtim.tv_nsec;
    asked.version = v;
  }
  pthread_mutex_unlock(&asked.lock);
  return v;
}

static int ask_version(const char *ptxas) {
  const char *base = getenv("TMPDIR");
  char log[64];
  if (!base || !*base || strlen(base) > 32)
    base = "/tmp";
  snprintf(log, sizeof log, "%s/wavec-ptxas-XXXXXX", base);
  int fd = mkstemp(log);
  if (fd < 0)
    return 0;
  close(fd);
  char *argv[] = {(char *)ptxas, "--version", NULL};
  int status = run_logged(argv, log);
  char text[1024] = "";
  FILE *f = status != -1 ? fopen(log, "rb") : NULL;
  if (f) {
    size_t n = fread(text, 1, sizeof text - 1, f);
    text[n] = 0;
    fclose(f);
  }
  unlink(log);
  int major = 0, minor = 0;
  const char *at = strstr(text, "release ");
  if (status == -1 || !WIFEXITED(status) || WEXITSTATUS(status) != 0 || !at ||
      sscanf(at, "release %d.%d", &major, &minor) != 2)
    return 0;
  return major * 1000 + minor * 10;
}

/* A file's bytes into the arena (at most `max`), or NULL. */
static char *slurp_file(wavec_ctx *ctx, const char *path, size_t max,
                        size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  wv_buf b;
  wv_buf_init(&b, ctx);
  char chunk[4096];
  size_t got;
  /* closed on an unwind (out of memory) too */
  wv_guard g;
  g.prev = ctx->guard;
  ctx->guard = &g;
  if (setjmp(g.jb)) {
    ctx->guard = g.prev;
    fclose(f);
    wv_throw(ctx);
  }
  while (b.n < max && (got = fread(chunk, 1, sizeof chunk, f)) > 0)
    wv_buf_add(&b, chunk, got);
  ctx->guard = g.prev;
  bool err = ferror(f) != 0;
  fclose(f);
  if (err)
    return NULL;
  *len = b.n;
  return b.s ? b.s : wv_strdup(ctx, "");
}

typedef struct tmpdir {
  char dir[64];
  char ptx[96], cubin[96], log[96];
} tmpdir;

static void tmp_remove(void *ud) {
  tmpdir *t = ud;
  if (!t->dir[0])
    return;
  unlink(t->ptx);
  unlink(t->cubin);
  unlink(t->log);
  rmdir(t->dir);
  t->dir[0] = 0;
}

void wv_ptxas(wavec_ctx *ctx, wavec_loc loc, const char *ptxas,
              const char *target, const char *ptx, size_t len,
              const void **cubin, size_t *cubin_len) {
  const char *base = getenv("TMPDIR");
  tmpdir *t = wv_alloc(ctx, sizeof *t); /* read after an unwind */
  if (!base || !*base || strlen(base) > 32)
    base = "/tmp";
  snprintf(t->dir, sizeof t->dir, "%s/wavec-ptxas-XXXXXX", base);
  if (!mkdtemp(t->dir)) {
    int e = errno;
    t->dir[0] = 0;
    wv_fail(ctx, D_MACHINE, (wavec_loc){0},
            "ptxas: cannot make a temporary folder in %s: %s",
            base, strerror(e));
  }
  snprintf(t->ptx, sizeof t->ptx, "%s/k.ptx", t->dir);
  snprintf(t->cubin, sizeof t->cubin, "%s/k.cubin", t->dir);
  snprintf(t->log, sizeof t->log, "%s/ptxas.log", t->dir);
  /* the folder goes on every path, an unwind too */
  wv_guard g;
  g.prev = ctx->guard;
  ctx->guard = &g;
  if (setjmp(g.jb)) {
    ctx->guard = g.prev;
    tmp_remove(t);
    wv_throw(ctx);
  }
  FILE *f = fopen(t->ptx, "wb");
  bool wrote = f && fwrite(ptx, 1, len, f) == len;
  if (f && fclose(f) != 0)
    wrote = false;
  if (!wrote)
    wv_fail(ctx, D_GPU, loc, "ptxas: cannot write '%s': %s", t->ptx,
            strerror(errno));
  char arch[32];
  snprintf(arch, sizeof arch, "-arch=%s", target);
  char *argv[] = {(char *)ptxas, arch, "-O3",    "-lineinfo",
                  t->ptx,        "-o", t->cubin, NULL};
  int status = run_logged(argv, t->log);
  if (status == -1)
    wv_fail(ctx, D_MACHINE, (wavec_loc){0}, "cannot run ptxas (%s): %s",
            ptxas, strerror(errno));
  size_t n = 0;
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    const char *log = slurp_file(ctx, t->log, 16384, &n);
    /* its register allocation failing is the one a kernel's tiles cause */
    bool regs = log && strstr(log, "C7600");
    wv_fail(ctx, D_GPU, loc, "ptxas (%s %s) failed%s%s%s", ptxas, arch,
            regs ? " to fit the kernel's registers (its tiles hold more "
                   "values a thread than the registers a thread gets: fewer "
                   "waves, narrower tiles, or hardware(specialize = 0))"
                 : "",
            log && n ? ":\n" : "", log && n ? log : "");
  }
  const char *code = slurp_file(ctx, t->cubin, (size_t)1 << 30, &n);
  if (!code)
    wv_fail(ctx, D_GPU, loc, "ptxas (%s) wrote no cubin", ptxas);
  ctx->guard = g.prev;
  tmp_remove(t);
  *cubin = code;
  *cubin_len = n;
}
