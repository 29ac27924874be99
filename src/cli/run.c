/* `wavec run`: fills the arguments (from .npy files or seeded random data),
 * runs the compiled kernel, writes the requested outputs. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "support/half.h"
#include "support/npy.h"

static const char *npy_descr(wavec_dtype dt) {
  switch (dt) {
  case WAVEC_F16: return "<f2";
  case WAVEC_BF16: return "<u2";
  case WAVEC_F32: return "<f4";
  case WAVEC_I32: return "<i4";
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

int cli_run_kernel(wavec_kernel *k, const cli_run_opts *o) {
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
      rc = 2;
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
      rc = 2;
    }
  }
  for (size_t i = 0; i < n && rc == 0; i++) {
    wavec_arg_info a;
    wavec_arg_info_get(k, i, &a);
    bufs[i] = malloc(a.bytes ? a.bytes : 1);
    if (!bufs[i]) {
      fprintf(stderr, "wavec: out of memory for argument '%s'\n", a.name);
      rc = 2;
      break;
    }
    const char *file = find_kv(o->args, o->nargs, a.name);
    if (file) {
      wv_npy arr;
      char err[256];
      if (wv_npy_read(file, &arr, err, sizeof err) != 0) {
        fprintf(stderr, "wavec: %s\n", err);
        rc = 2;
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
                "wavec: %s: error[E0607]: holds %s %s but argument '%s' is "
                "%s %s (%s as %s)\n",
                file, arr.descr, got, a.name, wavec_dtype_name(a.dtype), want,
                wavec_dtype_name(a.dtype), npy_descr(a.dtype));
        wv_npy_free(&arr);
        rc = 1;
        break;
      }
      memcpy(bufs[i], arr.data, a.bytes);
      wv_npy_free(&arr);
    } else if (a.is_output) {
      memset(bufs[i], 0xff, a.bytes); /* poison: NaN for floats */
    } else {
      fill_random(&a, bufs[i], &rng);
    }
  }
  if (rc == 0) {
    wavec_status st = wavec_simulate(k, bufs);
    if (st != WAVEC_OK) {
      fputs(wavec_errmsg(wavec_kernel_ctx(k)), stderr);
      rc = 1;
    }
  }
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
      rc = 2;
    }
  }
  for (size_t i = 0; i < n; i++)
    free(bufs[i]);
  free(bufs);
  return rc;
}
