/* `wavec run`: fills the arguments (from .npy files or seeded random data),
 * runs the compiled kernel in the simulator or on the GPU (and, with
 * --compare sim, in both, comparing every output), writes the requested
 * outputs. `wavec compile --emit=ptx|cubin`: writes the PTX or the cubin. */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "runtime/runtime.h"
#include "support/half.h"
#include "support/npy.h"
#include "support/outfile.h"

static const char *npy_descr(wavec_dtype dt) {
  switch (dt) {
  case WAVEC_F16: return "<f2";
  case WAVEC_BF16: return "<u2";
  case WAVEC_F32: return "<f4";
  case WAVEC_I32: return "<i4";
  case WAVEC_F8E4M3: /* the raw bytes (NumPy has no 8-bit float) */
  case WAVEC_F8E5M2: return "|u1";
  case WAVEC_I8: return "|i1";
  default: return "|b1";
  }
}

static uint64_t next(uint64_t *s) {
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return *s;
}

static void fill_random(const wavec_arg_info *a, void *buf, uint64_t *rng) {
  for (size_t i = 0; i < a->elems; i++) {
    double u = (double)(next(rng) >> 11) / 9007199254740992.0 * 2.0 - 1.0;
    switch (a->dtype) {
    case WAVEC_F16: ((uint16_t *)buf)[i] = wv_f64_to_f16(u); break;
    case WAVEC_BF16: ((uint16_t *)buf)[i] = wv_f64_to_bf16(u); break;
    case WAVEC_F32: ((float *)buf)[i] = (float)u; break;
    case WAVEC_I32: ((int32_t *)buf)[i] = (int32_t)(next(rng) % 8); break;
    case WAVEC_F8E4M3: ((uint8_t *)buf)[i] = wv_f64_to_e4m3(u); break;
    case WAVEC_F8E5M2: ((uint8_t *)buf)[i] = wv_f64_to_e5m2(u); break;
    case WAVEC_I8: ((int8_t *)buf)[i] = (int8_t)(next(rng) % 17 - 8); break;
    default: ((uint8_t *)buf)[i] = (uint8_t)(next(rng) & 1); break;
    }
  }
}

static const char *find_kv(const cli_kv *kv, size_t n, const char *name) {
  for (size_t i = 0; i < n; i++)
    if (strcmp(kv[i].key, name) == 0)
      return kv[i].value;
  return NULL;
}

static void shape_str(char *out, size_t len, size_t ndims,
                      const int64_t *shape) {
  size_t o = (size_t)snprintf(out, len, "[");
  for (size_t i = 0; i < ndims && o < len; i++)
    o += (size_t)snprintf(out + o, len - o, "%s%lld", i ? ", " : "",
                          (long long)shape[i]);
  if (o < len)
    snprintf(out + o, len - o, "]");
}

/* Compares an output of the GPU run (g) with the simulator's (s): the
 * largest absolute difference, the largest relative one among elements
 * whose magnitude is at least 1e-3 of the largest (smaller ones are
 * compared by the absolute difference), the normwise relative error
 * ||g - s|| / ||s||, and NaNs that only one of them has (an element the
 * GPU left unwritten stays NaN: outputs are poisoned). Passes when no NaN
 * differs and the normwise error is at most tol; 0 ok, 1 not. */
static int compare(const char *kname, const wavec_arg_info *a, const void *g,
                   const void *s, double tol) {
  double smax = 0, maxabs = 0, maxrel = 0, d2 = 0, s2 = 0;
  size_t nan = 0;
  for (size_t i = 0; i < a->elems; i++) {
    double v = fabs(wv_elem_load((int)a->dtype, s, i));
    if (v > smax && !isinf(v))
      smax = v;
  }
  for (size_t i = 0; i < a->elems; i++) {
    double gv = wv_elem_load((int)a->dtype, g, i),
           sv = wv_elem_load((int)a->dtype, s, i);
    if (isnan(gv) || isnan(sv)) {
      nan += isnan(gv) != isnan(sv);
      continue;
    }
    if (isinf(gv) || isinf(sv)) {
      nan += gv != sv;
      continue;
    }
    double d = fabs(gv - sv);
    maxabs = d > maxabs ? d : maxabs;
    if (fabs(sv) >= 1e-3 * smax && sv != 0 && d / fabs(sv) > maxrel)
      maxrel = d / fabs(sv);
    d2 += d * d;
    s2 += sv * sv;
  }
  double rel = s2 > 0 ? sqrt(d2 / s2) : sqrt(d2);
  bool ok = nan == 0 && rel <= tol;
  char shape[128];
  shape_str(shape, sizeof shape, a->ndims, a->shape);
  printf("compare %s.%s %s %s: max abs %.3g, max rel %.3g, rel l2 %.3g", kname,
         a->name, wavec_dtype_name(a->dtype), shape, maxabs, maxrel, rel);
  if (nan)
    printf(", %zu NaN/inf differ", nan);
  printf(": %s\n", ok ? "ok" : "MISMATCH");
  return ok ? 0 : 1;
}

double cli_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

const char *cli_duration(char *buf, size_t len, double secs) {
  if (secs < 1)
    snprintf(buf, len, "%.1f ms", secs * 1e3);
  else
    snprintf(buf, len, "%.2f s", secs);
  return buf;
}

void cli_progress_fn(void *ud, uint64_t done, uint64_t total) {
  cli_progress *p = ud;
  double now = cli_now();
  if (now - p->last < 0.1 && done < total)
    return;
  if (!p->shown && now - p->start < 0.1)
    return; /* a short run shows nothing */
  p->last = now;
  p->shown = 1;
  fprintf(stderr, "\rwavec: simulating %s: %llu of %llu workgroups (%.0f%%)\033[K",
          p->kernel, (unsigned long long)done, (unsigned long long)total,
          100.0 * (double)done / (double)(total ? total : 1));
  fflush(stderr);
}

/* Runs the kernel in the simulator, drawing its progress on a terminal. */
static wavec_status simulate(wavec_kernel *k, void **bufs, cli_progress *p) {
  if (p)
    *p = (cli_progress){.kernel = wavec_kernel_name(k), .start = cli_now(),
                        .last = cli_now()};
  wavec_status st = wavec_simulate(k, bufs);
  if (p && p->shown) {
    fputs("\r\033[K", stderr); /* the line goes: what follows takes it */
    p->shown = 0;
  }
  return st;
}

int cli_fail(wavec_ctx *ctx) {
  fputs(wavec_errmsg(ctx), stderr);
  wavec_diag_info d;
  if (wavec_errcode(ctx) == WAVEC_ERR_NOMEM ||
      (wavec_diag(ctx, 0, &d) == WAVEC_OK && d.code == CLI_E_MACHINE))
    return CLI_MACHINE;
  return CLI_KERNEL;
}

/* Writes len bytes to out (support/outfile.h: never a partial file); 0, or
 * CLI_FILE after a message. */
static int write_out(const char *out, const void *p, size_t len) {
  char err[512];
  wv_span part = {p, len};
  if (wv_write_file(out, &part, 1, err, sizeof err) != 0) {
    fprintf(stderr, "wavec: %s\n", err);
    return CLI_FILE;
  }
  return CLI_OK;
}

int cli_emit_ptx(wavec_kernel *k, const char *target, const char *out) {
  const char *ptx;
  size_t len;
  if (wavec_emit_ptx(k, target, &ptx, &len) != WAVEC_OK)
    return cli_fail(wavec_kernel_ctx(k));
  if (!out || strcmp(out, "-") == 0)
    return fwrite(ptx, 1, len, stdout) == len && fflush(stdout) == 0
               ? CLI_OK
               : CLI_FILE;
  return write_out(out, ptx, len);
}

int cli_emit_c(wavec_kernel *k, const char *target, const char *out) {
  size_t n = out ? strlen(out) : 0;
  if (!n || strcmp(out, "-") == 0) {
    fprintf(stderr, "wavec: --emit=c needs -o FILE.c (its header goes beside "
                    "it, FILE.h)\n");
    return CLI_USAGE;
  }
  /* two files, the second named after the first: not through a device, a
   * FIFO or /dev/stdout (whose FILE.h would be /dev/stdout.h) */
  struct stat st;
  bool dev = (!strncmp(out, "/dev/", 5) && strncmp(out, "/dev/shm/", 9)) ||
             !strncmp(out, "/proc/", 6);
  if (dev ||
      (stat(out, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))) {
    fprintf(stderr,
            "wavec: --emit=c -o %s: --emit=c writes two files, "
            "FILE.c and its header FILE.h beside it: -o needs the "
            "path of a regular file, not a device, FIFO or "
            "/dev/stdout\n(see wavec --help)\n",
            out);
    return CLI_USAGE;
  }
  /* FILE.c -> FILE.h; any other name gets .h appended */
  char *hpath = malloc(n + 3);
  if (!hpath)
    return CLI_MACHINE;
  bool dotc = n > 2 && strcmp(out + n - 2, ".c") == 0;
  snprintf(hpath, n + 3, "%.*s.h", (int)(dotc ? n - 2 : n), out);
  const char *slash = strrchr(hpath, '/');
  const char *csrc, *hsrc;
  int cubin = 0, rc = 0;
  if (wavec_emit_c(k, target, 0, slash ? slash + 1 : hpath, &csrc, &hsrc,
                   &cubin) != WAVEC_OK) {
    rc = cli_fail(wavec_kernel_ctx(k));
  } else {
    /* both or neither: on any error FILE.c and FILE.h stay as they were */
    wv_span h = {hsrc, strlen(hsrc)}, c = {csrc, strlen(csrc)};
    wv_outfile files[2] = {{hpath, &h, 1}, {out, &c, 1}};
    char err[512];
    if (wv_write_files(files, 2, err, sizeof err) != 0) {
      fprintf(stderr, "wavec: %s\n", err);
      rc = CLI_FILE;
    }
    if (rc == 0 && !cubin)
      fprintf(stderr, "wavec: note: no ptxas found (CUDA_HOME, PATH): %s holds "
                      "the PTX only, compiled by the driver at the first "
                      "launch\n", out);
  }
  free(hpath);
  return rc;
}

/* The whole file at path (malloc'ed), or NULL. */
static char *read_all(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  size_t cap = 1 << 16, n = 0;
  char *buf = malloc(cap);
  while (buf) {
    n += fread(buf + n, 1, cap - n, f);
    if (n < cap)
      break;
    char *nb = realloc(buf, cap *= 2);
    if (!nb)
      free(buf);
    buf = nb;
  }
  if (buf && ferror(f)) {
    free(buf);
    buf = NULL;
  }
  fclose(f);
  *len = n;
  return buf;
}

/* ptxas reads the PTX from and writes the cubin into a private directory;
 * the cubin then goes to out like every output file. */
int cli_emit_cubin(wavec_kernel *k, const char *target, const char *out) {
  if (!out || strcmp(out, "-") == 0) {
    fprintf(stderr, "wavec: --emit=cubin needs -o FILE\n");
    return CLI_USAGE;
  }
  const char *ptx_text;
  size_t ptx_len;
  if (wavec_emit_ptx(k, target, &ptx_text, &ptx_len) != WAVEC_OK)
    return cli_fail(wavec_kernel_ctx(k));
  const char *tmpdir = getenv("TMPDIR");
  char dir[4096], ptx[4200], cubin[4200];
  snprintf(dir, sizeof dir, "%s/wavec-XXXXXX",
           tmpdir && *tmpdir ? tmpdir : "/tmp");
  if (!mkdtemp(dir)) {
    fprintf(stderr, "wavec: cannot make a temporary directory '%s': %s\n",
            dir, strerror(errno));
    return CLI_FILE;
  }
  snprintf(ptx, sizeof ptx, "%s/kernel.ptx", dir);
  snprintf(cubin, sizeof cubin, "%s/kernel.cubin", dir);
  int rc = write_out(ptx, ptx_text, ptx_len);
  if (rc == 0) {
    /* the library's ptxas ($WAVEC_PTXAS, $CUDA_HOME, /usr/local/cuda,
     * $PATH), as --emit=c and the GPU loads find it */
    const char *ptxas = wv_ptxas_path(wavec_kernel_ctx(k));
    fflush(stdout);
    pid_t pid = ptxas ? fork() : -1;
    if (pid == 0) {
      char arch[32];
      snprintf(arch, sizeof arch, "-arch=%s", target);
      execl(ptxas, ptxas, arch, "-O3", "-v", "-lineinfo", ptx, "-o", cubin,
            (char *)NULL);
      _exit(127);
    }
    int status = 0;
    size_t len = 0;
    char *bin = NULL;
    if (pid < 0 || waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) ||
        WEXITSTATUS(status) != 0) {
      bool missing = pid < 0 || !WIFEXITED(status) ||
                     WEXITSTATUS(status) == 127;
      if (missing)
        fprintf(stderr, "wavec: ptxas failed (not found: set WAVEC_PTXAS "
                        "or CUDA_HOME, or put the CUDA toolkit's bin on "
                        "PATH)\n");
      else /* (ptxas said why above) */
        fprintf(stderr, "wavec: ptxas refused the PTX wavec made for '%s' "
                        "(%s): a bug in wavec, not in the kernel; --emit=ptx "
                        "writes the module for a report\n",
                wavec_kernel_name(k), target);
      rc = missing ? CLI_MACHINE : CLI_KERNEL;
    } else if (!(bin = read_all(cubin, &len))) {
      fprintf(stderr, "wavec: cannot read ptxas's output '%s': %s\n", cubin,
              strerror(errno));
      rc = CLI_FILE;
    } else {
      rc = write_out(out, bin, len);
    }
    free(bin);
  }
  remove(ptx);
  remove(cubin);
  rmdir(dir);
  return rc;
}

/* The one line that says what a successful run did. */
static void summary(wavec_kernel *k, const cli_run_opts *o, bool gpu,
                    double secs) {
  char took[32], wg[48] = "";
  uint32_t g[3], b[3];
  wavec_ctx *ctx = wavec_kernel_ctx(k);
  if (wavec_errcode(ctx) == WAVEC_OK &&
      wavec_launch_dims(k, g, b, NULL) == WAVEC_OK) {
    unsigned long long n = (unsigned long long)g[0] * g[1] * g[2];
    snprintf(wg, sizeof wg, "%llu workgroup%s in ", n, n == 1 ? "" : "s");
  }
  fprintf(stderr, "wavec: ran %s %s%s%s%s: %s%s", wavec_kernel_name(k),
          gpu ? "on the GPU (" : "in the simulator", gpu ? o->target : "",
          gpu ? ")" : "",
          o->compare_sim ? " and in the simulator, outputs agree" : "", wg,
          cli_duration(took, sizeof took, secs));
  for (size_t i = 0; i < o->nouts; i++)
    fprintf(stderr, "%s%s (%s)", i ? ", " : "; wrote ", o->outs[i].value,
            o->outs[i].key);
  fputc('\n', stderr);
}

int cli_run_kernel(wavec_kernel *k, const cli_run_opts *o) {
  double t0 = cli_now();
  size_t n = wavec_arg_count(k);
  void **bufs = calloc(n ? n : 1, sizeof *bufs);
  int rc = 0;
  uint64_t rng = o->seed * 2654435761u + 0x9e3779b97f4a7c15ull;
  for (size_t i = 0; i < o->nargs; i++) {
    size_t j = 0;
    wavec_arg_info a;
    while (j < n && (wavec_arg_info_get(k, j, &a), strcmp(a.name, o->args[i].key)))
      j++;
    if (j == n) {
      fprintf(stderr, "wavec: --arg %s: kernel '%s' has no argument '%s'\n",
              o->args[i].key, wavec_kernel_name(k), o->args[i].key);
      rc = CLI_USAGE;
    }
  }
  for (size_t i = 0; i < o->nouts; i++) {
    size_t j = 0;
    wavec_arg_info a;
    while (j < n && (wavec_arg_info_get(k, j, &a), strcmp(a.name, o->outs[i].key)))
      j++;
    if (j == n) {
      fprintf(stderr, "wavec: --out %s: kernel '%s' has no argument '%s'\n",
              o->outs[i].key, wavec_kernel_name(k), o->outs[i].key);
      rc = CLI_USAGE;
    }
  }
  /* the sizes of dynamic dimensions from the inputs' shapes (the others
   * are checked below, with the element type); warned: bit j, -D defs[j]
   * said so */
  uint64_t warned = 0;
  for (size_t i = 0; i < n && rc == 0; i++) {
    wavec_arg_info a;
    wavec_arg_info_get(k, i, &a);
    const char *file = find_kv(o->args, o->nargs, a.name);
    wv_npy arr;
    char err[256];
    if (!file || wv_npy_read(file, &arr, err, sizeof err) != 0)
      continue; /* reported below */
    if ((size_t)arr.ndim == a.ndims) {
      int64_t shape[8];
      bool fits = true;
      for (size_t d = 0; d < a.ndims; d++) {
        shape[d] = arr.shape[d];
        /* a static dim that differs is reported below, with the type */
        fits &= arr.shape[d] == a.shape[d] || wavec_arg_dim_is_dynamic(k, i, d);
      }
      /* a run-time size both defined and given by an argument: the
       * argument's is the one run, and the definition said otherwise */
      for (size_t d = 0; fits && d < a.ndims; d++) {
        const char *dn = wavec_arg_dim_name(k, i, d);
        size_t dl = dn ? strlen(dn) : 0;
        for (size_t j = 0; dn && j < o->ndefs && j < 64; j++)
          if (!strncmp(o->defs[j], dn, dl) && o->defs[j][dl] == '=' &&
              strtoll(o->defs[j] + dl + 1, NULL, 0) != shape[d] &&
              !(warned >> j & 1) && (warned |= 1ull << j))
            fprintf(stderr,
                    "wavec: warning: -D %s is not what '%s' gives (%s = "
                    "%lld, from %s): the argument's size is the one run\n",
                    o->defs[j], a.name, dn, (long long)shape[d], file);
      }
      if (fits && wavec_arg_shape(k, i, a.ndims, shape) != WAVEC_OK) {
        /* (a .npy that does not fit its argument: the exit status of one
         * whose static dims differ) */
        const char *msg = wavec_errmsg(wavec_kernel_ctx(k));
        size_t len = strlen(msg);
        fprintf(stderr, "wavec: %s: %s%s", file, msg,
                len && msg[len - 1] == '\n' ? "" : "\n");
        rc = CLI_FILE;
      }
    }
    wv_npy_free(&arr);
  }
  /* a grid no launch can take is refused before anything is allocated */
  uint32_t grid[3];
  if (rc == 0 && wavec_launch_dims(k, grid, NULL, NULL) != WAVEC_OK)
    rc = cli_fail(wavec_kernel_ctx(k));
  for (size_t i = 0; i < n && rc == 0; i++) {
    wavec_arg_info a;
    wavec_arg_info_get(k, i, &a);
    bufs[i] = malloc(a.bytes ? a.bytes : 1);
    if (!bufs[i]) {
      fprintf(stderr, "wavec: out of memory for argument '%s' (%zu bytes)\n",
              a.name, a.bytes);
      rc = CLI_MACHINE;
      break;
    }
    const char *file = find_kv(o->args, o->nargs, a.name);
    if (file) {
      wv_npy arr;
      char err[256];
      if (wv_npy_read(file, &arr, err, sizeof err) != 0) {
        /* (the reader's "FILE: why", with the code the other refusals of
         * an argument file have) */
        size_t fl = strlen(file);
        bool named = !strncmp(err, file, fl) && !strncmp(err + fl, ": ", 2);
        fprintf(stderr, "wavec: %s: error[E0612]: %s\n", file,
                named ? err + fl + 2 : err);
        rc = CLI_FILE;
        break;
      }
      bool shape_ok = (size_t)arr.ndim == a.ndims;
      for (size_t d = 0; shape_ok && d < a.ndims; d++)
        shape_ok = arr.shape[d] == a.shape[d];
      if (strcmp(arr.descr, npy_descr(a.dtype)) != 0 || !shape_ok) {
        char want[128], got[128];
        shape_str(want, sizeof want, a.ndims, a.shape);
        shape_str(got, sizeof got, (size_t)arr.ndim, arr.shape);
        fprintf(stderr,
                "wavec: %s: error[E0612]: holds %s %s but argument '%s' is "
                "%s %s (%s as %s)\n",
                file, arr.descr, got, a.name, wavec_dtype_name(a.dtype), want,
                wavec_dtype_name(a.dtype), npy_descr(a.dtype));
        wv_npy_free(&arr);
        rc = CLI_FILE;
        break;
      }
      memcpy(bufs[i], arr.data, a.bytes);
      wv_npy_free(&arr);
      /* an output given a value: what the kernel does not write keeps it */
      if (a.is_output)
        wavec_arg_keep(k, i, 1);
    } else if (a.is_output) {
      memset(bufs[i], 0xff, a.bytes); /* poison: NaN for floats */
    } else {
      fill_random(&a, bufs[i], &rng);
    }
  }
  bool gpu = o->target && strcmp(o->target, "sim") != 0;
  if (o->compare_sim && !gpu && rc == 0) {
    fprintf(stderr, "wavec: --compare sim compares a GPU run with the "
                    "simulator: give --target sm_80|sm_89|sm_90|sm_90a\n");
    rc = CLI_USAGE;
  }
  void **ref = NULL; /* the simulator's copy for --compare */
  if (rc == 0 && o->compare_sim) {
    ref = calloc(n ? n : 1, sizeof *ref);
    for (size_t i = 0; ref && i < n; i++) {
      wavec_arg_info a;
      wavec_arg_info_get(k, i, &a);
      ref[i] = malloc(a.bytes ? a.bytes : 1);
      if (!ref[i]) {
        rc = CLI_MACHINE;
        break;
      }
      memcpy(ref[i], bufs[i], a.bytes);
    }
    if (!ref)
      rc = CLI_MACHINE;
    if (rc)
      fprintf(stderr, "wavec: out of memory\n");
  }
  if (rc == 0) {
    double ms = 0;
    wavec_status st =
        gpu ? wavec_gpu_run(k, bufs, &ms) : simulate(k, bufs, o->progress);
    if (st == WAVEC_OK && gpu) {
      uint32_t g[3], b[3];
      wavec_launch_dims(k, g, b, NULL);
      printf("gpu %s: %.4f ms (grid %u x %u x %u, block %u x %u x %u)\n",
             wavec_kernel_name(k), ms, g[0], g[1], g[2], b[0], b[1], b[2]);
    }
    if (st == WAVEC_OK && ref)
      st = simulate(k, ref, o->progress);
    if (st != WAVEC_OK)
      rc = cli_fail(wavec_kernel_ctx(k));
    int bad = 0; /* every output is compared, then the verdict */
    for (size_t i = 0; rc == 0 && ref && i < n; i++) {
      wavec_arg_info a;
      wavec_arg_info_get(k, i, &a);
      if (a.is_output)
        bad |= compare(wavec_kernel_name(k), &a, bufs[i], ref[i],
                       o->tolerance > 0 ? o->tolerance : 1e-3);
    }
    if (bad)
      rc = CLI_MISMATCH;
  }
  for (size_t i = 0; ref && i < n; i++)
    free(ref[i]);
  free(ref);
  for (size_t i = 0; i < n && rc == 0; i++) {
    wavec_arg_info a;
    wavec_arg_info_get(k, i, &a);
    const char *file = find_kv(o->outs, o->nouts, a.name);
    if (!file)
      continue;
    char err[256];
    if (wv_npy_write(file, npy_descr(a.dtype), (int)a.ndims, a.shape, bufs[i],
                     err, sizeof err) != 0) {
      fprintf(stderr, "wavec: %s\n", err);
      rc = CLI_FILE;
    }
  }
  for (size_t i = 0; i < n; i++)
    free(bufs[i]);
  free(bufs);
  if (rc == 0)
    summary(k, o, gpu, cli_now() - t0);
  return rc;
}
