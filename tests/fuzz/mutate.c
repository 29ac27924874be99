/* A standalone random mutator: the `main` of a fuzz harness where clang's
 * libFuzzer cannot be linked (`make fuzz` decides). The harness provides the
 * entry point libFuzzer calls, LLVMFuzzerTestOneInput, and optionally
 * LLVMFuzzerInitialize; this file feeds it mutated copies of seed inputs.
 * It takes the subset of libFuzzer's command line that tests/fuzz/run.sh
 * uses, and prints what run.sh reads back, so either engine runs the same:
 *
 *   HARNESS [-max_total_time=S] [-runs=N] [-seed=N] [-dict=FILE]
 *           [-timeout=S] [-max_len=N] [-artifact_prefix=P] DIR|FILE...
 *
 * Seeds: every file in each DIR and each FILE. Without -max_total_time and
 * -runs, and with files only, each file runs once (a reproducer). A crash
 * (a sanitizer report or abort) or an input running past -timeout writes
 * the input to P{crash,timeout}-HASH and prints "Test unit written to
 * PATH". A harness's LLVMFuzzerCustomMutator replaces the edits below,
 * which it can call as LLVMFuzzerMutate, as under libFuzzer. No coverage
 * feedback: it finds what random edits of the seeds
 * reach, more slowly than libFuzzer. */
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size,
                               unsigned int seed) __attribute__((weak));
size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size);
/* From the sanitizer runtime the harness is linked with (weak: run
 * without it, a crash just leaves no artifact). */
void __sanitizer_set_death_callback(void (*cb)(void)) __attribute__((weak));

typedef struct blob {
  uint8_t *p;
  size_t n;
} blob;

typedef struct blobs {
  blob *v;
  size_t n, cap;
} blobs;

static void die(const char *what, const char *arg) {
  fprintf(stderr, "mutate: %s%s%s\n", what, arg ? ": " : "", arg ? arg : "");
  exit(2);
}

static void push(blobs *b, blob x) {
  if (b->n == b->cap) {
    b->cap = b->cap ? 2 * b->cap : 64;
    b->v = realloc(b->v, b->cap * sizeof *b->v);
    if (!b->v)
      die("out of memory", NULL);
  }
  b->v[b->n++] = x;
}

static blob read_file(const char *path, size_t max_len) {
  FILE *f = fopen(path, "rb");
  if (!f)
    die("cannot read", path);
  blob b = {malloc(max_len ? max_len : 1), 0};
  if (!b.p)
    die("out of memory", NULL);
  b.n = fread(b.p, 1, max_len, f);
  fclose(f);
  return b;
}

/* ---- the input being run, for the crash and timeout reports -------------- */
static const uint8_t *cur_data;
static size_t cur_size;
static volatile sig_atomic_t cur_running;
static struct timespec cur_start;
static long timeout_s = 1200;
static char prefix[1024] = "./";

static uint64_t hash(const uint8_t *p, size_t n) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < n; i++)
    h = (h ^ p[i]) * 0x100000001b3ull;
  return h;
}

/* Async-signal-safe: writes the current input to PREFIX KIND-HASH and says
 * where. */
static void write_artifact(const char *kind) {
  static volatile sig_atomic_t written;
  if (!cur_data || written)
    return;
  written = 1;
  char path[1200], msg[1300];
  uint64_t h = hash(cur_data, cur_size);
  size_t o = 0;
  for (const char *s = prefix; *s && o < 1100; s++)
    path[o++] = *s;
  for (const char *s = kind; *s; s++)
    path[o++] = *s;
  path[o++] = '-';
  for (int i = 15; i >= 0; i--)
    path[o++] = "0123456789abcdef"[(h >> (4 * i)) & 15];
  path[o] = 0;
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd >= 0) {
    for (size_t done = 0; done < cur_size;) {
      ssize_t w = write(fd, cur_data + done, cur_size - done);
      if (w <= 0)
        break;
      done += (size_t)w;
    }
    close(fd);
  }
  o = 0;
  for (const char *s = "Test unit written to "; *s; s++)
    msg[o++] = *s;
  for (const char *s = path; *s; s++)
    msg[o++] = *s;
  msg[o++] = '\n';
  if (write(2, msg, o) < 0)
    return;
}

static void on_death(void) { write_artifact("crash"); }

static void on_signal(int sig) {
  write_artifact("crash");
  struct sigaction dfl = {0};
  dfl.sa_handler = SIG_DFL;
  sigaction(sig, &dfl, NULL);
  raise(sig);
}

/* Once a second: is the current input past the timeout? */
static void on_alarm(int sig) {
  (void)sig;
  if (!cur_running)
    return;
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  if (now.tv_sec - cur_start.tv_sec <= timeout_s)
    return;
  static const char m[] = "ALARM: an input ran past -timeout\n";
  if (write(2, m, sizeof m - 1) < 0)
    _exit(70);
  write_artifact("timeout");
  _exit(70);
}

static void run_one(const uint8_t *p, size_t n) {
  cur_data = p;
  cur_size = n;
  clock_gettime(CLOCK_MONOTONIC, &cur_start);
  cur_running = 1;
  LLVMFuzzerTestOneInput(p, n);
  cur_running = 0;
}

/* ---- mutations ------------------------------------------------------------ */
static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t next(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return rng;
}
static size_t below(size_t n) { return n ? (size_t)(next() % n) : 0; }

/* Dictionary entries: libFuzzer's format, one "..." per line (optionally
 * NAME=), with \\, \" and \xNN escapes; # comments. */
static void read_dict(const char *path, blobs *out) {
  FILE *f = fopen(path, "r");
  if (!f)
    die("cannot read the dictionary", path);
  char line[4096];
  while (fgets(line, sizeof line, f)) {
    char *q = strchr(line, '"');
    if (!q || line[strspn(line, " \t")] == '#')
      continue;
    uint8_t tok[4096];
    size_t n = 0;
    for (char *s = q + 1; *s && *s != '"'; s++) {
      if (*s == '\\' && s[1] == 'x' && s[2] && s[3]) {
        char hex[3] = {s[2], s[3], 0};
        tok[n++] = (uint8_t)strtol(hex, NULL, 16);
        s += 3;
      } else if (*s == '\\' && s[1]) {
        tok[n++] = (uint8_t)*++s;
      } else {
        tok[n++] = (uint8_t)*s;
      }
    }
    blob b = {malloc(n ? n : 1), n};
    if (!b.p)
      die("out of memory", NULL);
    memcpy(b.p, tok, n);
    push(out, b);
  }
  fclose(f);
}

static const char *const numbers[] = {
    "0", "1", "-1", "2", "3", "7", "8", "16", "31", "32", "33", "64", "128",
    "255", "256", "1024", "4096", "65536", "2147483647", "2147483648",
    "4294967296", "9223372036854775807", "-9223372036854775808", "1e309",
    "0.5", "-0.0", "inf", "-inf", "nan"};

/* Inserts len bytes at `at` (buf holds n of cap). */
static size_t insert(uint8_t *buf, size_t n, size_t cap, size_t at,
                     const uint8_t *src, size_t len) {
  if (n + len > cap)
    len = cap - n;
  memmove(buf + at + len, buf + at, n - at);
  memcpy(buf + at, src, len);
  return n + len;
}

static blobs seeds, dict;

/* One random edit of buf[0..n) (capacity cap); the new length. */
size_t LLVMFuzzerMutate(uint8_t *buf, size_t n, size_t cap) {
  size_t at = below(n + 1);
  switch (next() % 10) {
  case 0: /* flip a bit */
    if (n)
      buf[below(n)] ^= (uint8_t)(1u << (next() % 8));
    return n;
  case 1: { /* an interesting byte */
    static const uint8_t v[] = {0, 1, 0x7f, 0x80, 0xff, '\n', ' ', '(', ')',
                                ',', '=', '0', '9', '\'', '"', '{', '}'};
    if (n)
      buf[below(n)] = v[below(sizeof v)];
    return n;
  }
  case 2: { /* delete a span */
    if (at >= n)
      return n;
    size_t len = 1 + below(16);
    if (len > n - at)
      len = n - at;
    memmove(buf + at, buf + at + len, n - at - len);
    return n - len;
  }
  case 3:
  case 4: /* a dictionary token */
    if (dict.n) {
      const blob *t = &dict.v[below(dict.n)];
      return insert(buf, n, cap, at, t->p, t->n);
    }
    /* fall through */
  case 5: { /* a number where a number is, or anywhere */
    const char *num = numbers[below(sizeof numbers / sizeof *numbers)];
    size_t s = at, e = at;
    while (s > 0 && buf[s - 1] >= '0' && buf[s - 1] <= '9')
      s--;
    while (e < n && buf[e] >= '0' && buf[e] <= '9')
      e++;
    memmove(buf + s, buf + e, n - e);
    n -= e - s;
    return insert(buf, n, cap, s, (const uint8_t *)num, strlen(num));
  }
  case 6: { /* copy a span of itself to elsewhere */
    if (!n)
      return n;
    size_t from = below(n), len = 1 + below(64);
    if (len > n - from)
      len = n - from;
    uint8_t tmp[64];
    memcpy(tmp, buf + from, len);
    return insert(buf, n, cap, at, tmp, len);
  }
  case 7: { /* splice: a span of another seed */
    const blob *o = seeds.n ? &seeds.v[below(seeds.n)] : NULL;
    if (!o || !o->n)
      return n;
    size_t from = below(o->n), len = 1 + below(256);
    if (len > o->n - from)
      len = o->n - from;
    return insert(buf, n, cap, at, o->p + from, len);
  }
  case 8: /* truncate */
    return at;
  default: { /* random bytes */
    uint8_t r[4];
    size_t len = 1 + below(4);
    for (size_t i = 0; i < len; i++)
      r[i] = (uint8_t)next();
    return insert(buf, n, cap, at, r, len);
  }
  }
}

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + t.tv_nsec / 1e9;
}

static int by_name(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static void add_path(blobs *out, const char *path, size_t max_len,
                     int *dirs) {
  struct stat st;
  if (stat(path, &st) != 0)
    die("cannot read", path);
  if (!S_ISDIR(st.st_mode)) {
    push(out, read_file(path, max_len));
    return;
  }
  ++*dirs;
  DIR *d = opendir(path);
  if (!d)
    die("cannot read the folder", path);
  /* sorted, so that a seed number means the same file every run */
  char **names = NULL;
  size_t n = 0;
  for (struct dirent *e; (e = readdir(d));) {
    if (e->d_name[0] == '.')
      continue;
    names = realloc(names, (n + 1) * sizeof *names);
    size_t len = strlen(path) + strlen(e->d_name) + 2;
    if (!names || !(names[n] = malloc(len)))
      die("out of memory", NULL);
    snprintf(names[n++], len, "%s/%s", path, e->d_name);
  }
  closedir(d);
  if (n)
    qsort(names, n, sizeof *names, by_name);
  for (size_t i = 0; i < n; i++) {
    if (stat(names[i], &st) == 0 && S_ISREG(st.st_mode))
      push(out, read_file(names[i], max_len));
    free(names[i]);
  }
  free(names);
}

int main(int argc, char **argv) {
  double secs = -1;
  long long runs = -1;
  size_t max_len = 1 << 16;
  const char *dict_path = NULL;
  if (LLVMFuzzerInitialize)
    LLVMFuzzerInitialize(&argc, &argv);
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strncmp(a, "-max_total_time=", 16))
      secs = atof(a + 16);
    else if (!strncmp(a, "-runs=", 6))
      runs = atoll(a + 6);
    else if (!strncmp(a, "-seed=", 6))
      rng = strtoull(a + 6, NULL, 10) * 0x9e3779b97f4a7c15ull | 1;
    else if (!strncmp(a, "-dict=", 6))
      dict_path = a + 6;
    else if (!strncmp(a, "-timeout=", 9))
      timeout_s = atol(a + 9);
    else if (!strncmp(a, "-max_len=", 9))
      max_len = (size_t)atol(a + 9);
    else if (!strncmp(a, "-artifact_prefix=", 17))
      snprintf(prefix, sizeof prefix, "%s", a + 17);
    else if (a[0] == '-' && strncmp(a, "-rss_limit_mb=", 14) &&
             strncmp(a, "-print_final_stats=", 19))
      fprintf(stderr, "mutate: ignoring libFuzzer flag %s\n", a);
  }
  if (max_len < 1)
    max_len = 1;
  int dirs = 0;
  for (int i = 1; i < argc; i++)
    if (argv[i][0] != '-')
      add_path(&seeds, argv[i], max_len, &dirs);
  if (dict_path)
    read_dict(dict_path, &dict);
  if (__sanitizer_set_death_callback)
    __sanitizer_set_death_callback(on_death);
  /* sigaction: signal() of strict C resets the handler after one signal */
  struct sigaction sa = {0};
  sa.sa_flags = SA_RESTART;
  sa.sa_handler = on_signal;
  sigaction(SIGSEGV, &sa, NULL);
  sigaction(SIGABRT, &sa, NULL);
  sa.sa_handler = on_alarm;
  sigaction(SIGALRM, &sa, NULL);
  struct itimerval tick = {{1, 0}, {1, 0}};
  setitimer(ITIMER_REAL, &tick, NULL);

  double t0 = now_s();
  long long done = 0;
  if (secs < 0 && runs < 0 && !dirs) { /* reproduce */
    for (int i = 1; i < argc; i++) {
      if (argv[i][0] == '-')
        continue;
      fprintf(stderr, "Running: %s\n", argv[i]);
      run_one(seeds.v[done].p, seeds.v[done].n);
      done++;
    }
  } else {
    if (!seeds.n)
      push(&seeds, (blob){malloc(1), 0});
    uint8_t *buf = malloc(max_len);
    if (!buf)
      die("out of memory", NULL);
    /* every seed as it is, then edits of them */
    for (size_t i = 0; i < seeds.n && (runs < 0 || done < runs); i++, done++)
      run_one(seeds.v[i].p, seeds.v[i].n);
    while ((runs < 0 || done < runs) && (secs < 0 || now_s() - t0 < secs)) {
      const blob *s = &seeds.v[below(seeds.n)];
      size_t n = s->n;
      memcpy(buf, s->p, n);
      for (int m = 1 + (int)below(3); m > 0; m--)
        n = LLVMFuzzerCustomMutator
                ? LLVMFuzzerCustomMutator(buf, n, max_len, (unsigned)next())
                : LLVMFuzzerMutate(buf, n, max_len);
      run_one(buf, n);
      done++;
    }
    free(buf);
  }
  double t = now_s() - t0;
  fprintf(stderr, "Done %lld runs in %.0f second(s)\n", done, t);
  fprintf(stderr, "stat::number_of_executed_units: %lld\n", done);
  fprintf(stderr, "stat::average_exec_per_sec:     %.0f\n",
          t > 0 ? done / t : 0.0);
  for (size_t i = 0; i < seeds.n; i++)
    free(seeds.v[i].p);
  free(seeds.v);
  for (size_t i = 0; i < dict.n; i++)
    free(dict.v[i].p);
  free(dict.v);
  return 0;
}
