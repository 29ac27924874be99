/* The CUDA driver API through dlopen, and wavec_gpu_run: PTX from the
 * printer, JIT-compiled by the driver (cuModuleLoadDataEx, with line
 * information so that profilers map back to .wave lines), launched with the
 * grid and block of the thread program on device copies of the host
 * buffers.
 *
 * Only the few driver types and constants used are declared here, with the
 * values of CUDA's cuda.h (stable ABI); the versioned entry points
 * (cuMemAlloc_v2, ...) are the ones cuda.h maps the plain names to. */
#include <dlfcn.h>
#include <stdio.h>

#include "runtime/runtime.h"
#include "target/target.h"
#include "tir/tir.h"

typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUstream_st *CUstream;
typedef struct CUevent_st *CUevent;

enum {
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
  CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8,
  CU_JIT_ERROR_LOG_BUFFER = 5,
  CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6,
  CU_JIT_GENERATE_LINE_INFO = 13,
};

/* name in the library, C name, parameters */
#define CU_FUNCS(X)                                                            \
  X("cuInit", Init, (unsigned))                                                \
  X("cuGetErrorName", GetErrorName, (CUresult, const char **))                 \
  X("cuGetErrorString", GetErrorString, (CUresult, const char **))             \
  X("cuDeviceGetCount", DeviceGetCount, (int *))                               \
  X("cuDeviceGet", DeviceGet, (CUdevice *, int))                               \
  X("cuDeviceGetAttribute", DeviceGetAttribute, (int *, int, CUdevice))        \
  X("cuDevicePrimaryCtxRetain", PrimaryCtxRetain, (CUcontext *, CUdevice))     \
  X("cuDevicePrimaryCtxRelease_v2", PrimaryCtxRelease, (CUdevice))             \
  X("cuCtxSetCurrent", CtxSetCurrent, (CUcontext))                             \
  X("cuCtxSynchronize", CtxSynchronize, (void))                                \
  X("cuModuleLoadDataEx", ModuleLoadDataEx,                                    \
    (CUmodule *, const void *, unsigned, int *, void **))                      \
  X("cuModuleUnload", ModuleUnload, (CUmodule))                                \
  X("cuModuleGetFunction", ModuleGetFunction,                                  \
    (CUfunction *, CUmodule, const char *))                                    \
  X("cuFuncSetAttribute", FuncSetAttribute, (CUfunction, int, int))            \
  X("cuMemAlloc_v2", MemAlloc, (CUdeviceptr *, size_t))                        \
  X("cuMemFree_v2", MemFree, (CUdeviceptr))                                    \
  X("cuMemcpyHtoD_v2", MemcpyHtoD, (CUdeviceptr, const void *, size_t))        \
  X("cuMemcpyDtoH_v2", MemcpyDtoH, (void *, CUdeviceptr, size_t))              \
  X("cuLaunchKernel", LaunchKernel,                                            \
    (CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,   \
     unsigned, CUstream, void **, void **))                                    \
  X("cuEventCreate", EventCreate, (CUevent *, unsigned))                       \
  X("cuEventRecord", EventRecord, (CUevent, CUstream))                         \
  X("cuEventSynchronize", EventSynchronize, (CUevent))                         \
  X("cuEventDestroy_v2", EventDestroy, (CUevent))

struct wv_cuda {
  wavec_ctx *ctx;
  void *lib;
  CUdevice dev;
  CUcontext cuctx;
  int sm;
#define X(sym, name, params) CUresult (*name) params;
  CU_FUNCS(X)
#undef X
  /* cuEventElapsedTime_v2 where the driver has it (CUDA 12.8 and later),
   * else cuEventElapsedTime: the same signature */
  CUresult (*EventElapsedTime)(float *, CUevent, CUevent);
  /* cuTensorMapEncodeTiled (CUDA 12.0 and later), NULL where the driver
   * lacks it: needed only by kernels with tensor maps */
  CUresult (*TensorMapEncodeTiled)(void *, int, unsigned, void *,
                                   const unsigned long long *,
                                   const unsigned long long *,
                                   const unsigned *, const unsigned *, int,
                                   int, int, int);
};

/* "cuXxx: CUDA_ERROR_NAME (description)" */
static wavec_status cu_error(wv_cuda *cu, wavec_loc loc, const char *what,
                             CUresult r, const char *detail) {
  const char *name = NULL, *desc = NULL;
  if (cu->GetErrorName)
    cu->GetErrorName(r, &name);
  if (cu->GetErrorString)
    cu->GetErrorString(r, &desc);
  return wv_error(cu->ctx, D_GPU, loc, "%s failed: %s (%s)%s%s", what,
                  name ? name : "unknown error", desc ? desc : "no description",
                  detail && *detail ? "\n" : "", detail ? detail : "");
}

static void *sym(void *lib, const char *name) {
  return lib ? dlsym(lib, name) : NULL;
}

wv_cuda *wv_cuda_open(wavec_ctx *ctx, wavec_loc loc) {
  void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char *why = dlerror();
    wv_error(ctx, D_GPU, loc, "no CUDA driver (libcuda.so.1 not found)%s%s",
             why ? ": " : "", why ? why : "");
    return NULL;
  }
  wv_cuda *cu = wv_alloc(ctx, sizeof *cu);
  cu->ctx = ctx;
  cu->lib = lib;
  const char *missing = NULL;
  /* dlsym gives an object pointer; POSIX guarantees it converts to the
   * function pointer it names (copied bytewise, which ISO C allows) */
#define X(symname, name, params)                                               \
  {                                                                            \
    void *f = sym(lib, symname);                                               \
    if (!f && !missing)                                                        \
      missing = symname;                                                       \
    memcpy(&cu->name, &f, sizeof f);                                           \
  }
  CU_FUNCS(X)
#undef X
  void *et = sym(lib, "cuEventElapsedTime_v2");
  if (!et)
    et = sym(lib, "cuEventElapsedTime");
  if (!et && !missing)
    missing = "cuEventElapsedTime";
  memcpy(&cu->EventElapsedTime, &et, sizeof et);
  void *tm = sym(lib, "cuTensorMapEncodeTiled");
  memcpy(&cu->TensorMapEncodeTiled, &tm, sizeof tm);
  if (missing) {
    wv_error(ctx, D_GPU, loc, "the CUDA driver (libcuda.so.1) has no %s",
             missing);
    dlclose(lib);
    return NULL;
  }
  CUresult r;
  int n = 0, major = 0, minor = 0;
  if ((r = cu->Init(0)) != 0) {
    cu_error(cu, loc, "cuInit", r, NULL);
  } else if ((r = cu->DeviceGetCount(&n)) != 0) {
    cu_error(cu, loc, "cuDeviceGetCount", r, NULL);
  } else if (n == 0) {
    wv_error(ctx, D_GPU, loc, "no CUDA device");
    r = -1;
  } else if ((r = cu->DeviceGet(&cu->dev, 0)) != 0 ||
             (r = cu->DeviceGetAttribute(
                  &major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                  cu->dev)) != 0 ||
             (r = cu->DeviceGetAttribute(
                  &minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
                  cu->dev)) != 0) {
    cu_error(cu, loc, "cuDeviceGet", r, NULL);
  } else if ((r = cu->PrimaryCtxRetain(&cu->cuctx, cu->dev)) != 0) {
    cu_error(cu, loc, "cuDevicePrimaryCtxRetain", r, NULL);
  } else if ((r = cu->CtxSetCurrent(cu->cuctx)) != 0) {
    cu_error(cu, loc, "cuCtxSetCurrent", r, NULL);
    cu->PrimaryCtxRelease(cu->dev);
    cu->cuctx = NULL;
  }
  if (r != 0) {
    dlclose(lib);
    return NULL;
  }
  cu->sm = major * 10 + minor;
  return cu;
}

void wv_cuda_close(wv_cuda *cu) {
  if (!cu)
    return;
  if (cu->cuctx) {
    cu->CtxSetCurrent(NULL);
    cu->PrimaryCtxRelease(cu->dev);
  }
  dlclose(cu->lib);
  cu->lib = NULL;
}

int wv_cuda_sm(const wv_cuda *cu) { return cu->sm; }

const char *wv_cuda_ptx_target(int sm, bool needs_90a) {
  if (needs_90a)
    return sm == 90 ? "sm_90a" : NULL;
  return sm >= 90 ? "sm_90" : sm >= 80 ? "sm_80" : NULL;
}

/* ---- wavec_gpu_run ------------------------------------------------------------ */
/* The PTX, or false with the printer's diagnostic recorded. */
static bool emit(wv_kernel *k, const wv_target *t, wv_buf *out) {
  wavec_ctx *ctx = k->ctx;
  WV_GUARD(ctx, false);
  tir_emit_ptx(ctx, k->tir, k->name, k->loc, t, out);
  WV_UNGUARD(ctx);
  return true;
}

/* The CUtensorMap of tensor map m over argument a (wavec.h,
 * wavec_tensor_map_info) at device address dptr, into out (128 bytes,
 * 64-aligned). */
static CUresult encode_tmap(wv_cuda *cu, const wavec_tensor_map_info *m,
                            const wavec_arg_info *a, unsigned long long dptr,
                            void *out) {
  /* CUtensorMapDataType: FLOAT16 6, FLOAT32 7, BFLOAT16 9, INT32 3 */
  static const int cu_dtype[WAVEC_DTYPE_COUNT] = {
      [WAVEC_F16] = 6, [WAVEC_BF16] = 9, [WAVEC_F32] = 7, [WAVEC_I32] = 3};
  unsigned long long dim[5], stride[4];
  unsigned box[5], estride[5];
  unsigned long long bytes = (unsigned long long)tir_ty_bytes(tir_ty_of(a->dtype));
  size_t r = m->ndims;
  for (size_t j = 0; j < r; j++) { /* innermost first */
    dim[j] = (unsigned long long)a->shape[r - 1 - j];
    box[j] = m->box[r - 1 - j];
    estride[j] = 1;
    if (j)
      stride[j - 1] = bytes;
    bytes *= dim[j];
  }
  /* no interleave; swizzle 128B (3) or none; L2 promotion 256B (3); out of
   * bounds elements are zeros (fill none) */
  return cu->TensorMapEncodeTiled(out, cu_dtype[a->dtype], (unsigned)r,
                                  (void *)(uintptr_t)dptr, dim, stride, box,
                                  estride, 0, m->swizzle_128b ? 3 : 0, 3, 0);
}

wavec_status wv_cuda_tensor_map(wv_cuda *cu, wavec_loc loc,
                                const wavec_tensor_map_info *m,
                                const wavec_arg_info *a,
                                unsigned long long dptr, void *out) {
  if (!cu->TensorMapEncodeTiled)
    return wv_error(cu->ctx, D_GPU, loc, "the CUDA driver (libcuda.so.1) has "
                    "no cuTensorMapEncodeTiled, which tensor copies need");
  CUresult r = encode_tmap(cu, m, a, dptr, out);
  return r ? cu_error(cu, loc, "cuTensorMapEncodeTiled", r, NULL) : WAVEC_OK;
}

#define CU(call, what)                                                         \
  do {                                                                         \
    CUresult r_ = (call);                                                      \
    if (r_ != 0) {                                                             \
      st = cu_error(cu, k->loc, what, r_, NULL);                               \
      goto done;                                                               \
    }                                                                          \
  } while (0)

static wavec_status gpu_run(wavec_kernel *pk, void *const *host, double *ms) {
  wv_kernel *k = &pk->k;
  wavec_ctx *ctx = k->ctx;
  const tir_prog *p = k->tir;
  wavec_status st = WAVEC_OK;
  for (uint32_t i = 0; i < p->args.n; i++)
    if (!host[i])
      return wv_error(ctx, D_INVALID, k->loc, "no buffer for argument '%s'",
                      p->args.v[i].name);
  wv_cuda *cu = wv_cuda_open(ctx, k->loc);
  if (!cu)
    return ctx->status;
  CUmodule mod = NULL;
  CUevent ev[2] = {NULL, NULL};
  uint32_t n = p->args.n;
  CUdeviceptr *dptr = wv_alloc(ctx, (n + 1) * sizeof *dptr);
  void **params = wv_alloc(ctx, (n + p->tmaps.n + 1) * sizeof *params);
  size_t *bytes = wv_alloc(ctx, (n + 1) * sizeof *bytes);

  bool wg = wv_mma_is_warpgroup((wavec_mma_kind)p->mma);
  const char *tname = wv_cuda_ptx_target(cu->sm, wg);
  if (!tname) {
    st = wv_error(ctx, D_GPU, k->loc,
                  "the GPU has compute capability %d.%d; %s", cu->sm / 10,
                  cu->sm % 10,
                  wg ? "wgmma needs exactly 9.0 (sm_90a: H100, H200)"
                     : "wavec's PTX needs 8.0 or newer (mma.sync m16n8k16)");
    goto done;
  }
  wv_buf ptx;
  wv_buf_init(&ptx, ctx);
  if (!emit(k, wv_target_get(tname), &ptx)) {
    st = ctx->status;
    goto done;
  }
  char log[8192] = "";
  int opt[3] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
                CU_JIT_GENERATE_LINE_INFO};
  void *val[3] = {log, (void *)(uintptr_t)sizeof log, (void *)(uintptr_t)1};
  CUresult r = cu->ModuleLoadDataEx(&mod, wv_buf_str(&ptx), 3, opt, val);
  if (r != 0) {
    mod = NULL;
    st = cu_error(cu, k->loc, "cuModuleLoadDataEx (JIT of the PTX)", r, log);
    goto done;
  }
  CUfunction fn;
  wv_buf ename;
  wv_buf_init(&ename, ctx);
  tir_ptx_entry_name(k->name, &ename);
  CU(cu->ModuleGetFunction(&fn, mod, wv_buf_str(&ename)),
     "cuModuleGetFunction");
  unsigned dyn = 0;
  if (p->smem_bytes > TIR_PTX_STATIC_SMEM_MAX) {
    dyn = (unsigned)p->smem_bytes;
    CU(cu->FuncSetAttribute(fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                            (int)dyn),
       "cuFuncSetAttribute (dynamic shared memory)");
  }
  for (uint32_t i = 0; i < n; i++) {
    const tir_arg *a = &p->args.v[i];
    bytes[i] = (size_t)a->elems * (size_t)((wv_dtypes[a->dt].bits + 7) / 8);
    CU(cu->MemAlloc(&dptr[i], bytes[i] ? bytes[i] : 16), "cuMemAlloc");
    params[i] = &dptr[i];
    CU(cu->MemcpyHtoD(dptr[i], host[i], bytes[i]), "cuMemcpyHtoD");
  }
  if (p->tmaps.n) {
    /* CUtensorMap is 128 bytes, 64-aligned */
    char *maps = wv_alloc(ctx, p->tmaps.n * 128 + 128);
    maps += (128 - (uintptr_t)maps % 128) % 128;
    for (uint32_t i = 0; i < p->tmaps.n; i++) {
      wavec_tensor_map_info m;
      wavec_arg_info ai;
      wavec_tensor_map_info_get(pk, i, &m);
      wavec_arg_info_get(pk, m.arg, &ai);
      if ((st = wv_cuda_tensor_map(cu, k->loc, &m, &ai, dptr[m.arg],
                                   maps + 128 * i)) != WAVEC_OK)
        goto done;
      params[n + i] = maps + 128 * i;
    }
  }
  unsigned g[3], b[3];
  for (int d = 0; d < 3; d++) {
    g[d] = (unsigned)p->grid[d];
    b[d] = (unsigned)p->block[d];
  }
#define LAUNCH()                                                               \
  CU(cu->LaunchKernel(fn, g[0], g[1], g[2], b[0], b[1], b[2], dyn, NULL,       \
                      params, NULL),                                           \
     "cuLaunchKernel")
  if (ms) {
    /* warm-up, then the written arguments as they were, then one timed
     * launch: the results are those of one launch */
    LAUNCH();
    CU(cu->CtxSynchronize(), "the kernel (cuCtxSynchronize after launch)");
    for (uint32_t i = 0; i < n; i++)
      if (p->args.v[i].written)
        CU(cu->MemcpyHtoD(dptr[i], host[i], bytes[i]), "cuMemcpyHtoD");
    CU(cu->EventCreate(&ev[0], 0), "cuEventCreate");
    CU(cu->EventCreate(&ev[1], 0), "cuEventCreate");
    CU(cu->EventRecord(ev[0], NULL), "cuEventRecord");
    LAUNCH();
    CU(cu->EventRecord(ev[1], NULL), "cuEventRecord");
    CU(cu->EventSynchronize(ev[1]), "the kernel (cuEventSynchronize)");
    float t = 0;
    CU(cu->EventElapsedTime(&t, ev[0], ev[1]), "cuEventElapsedTime");
    *ms = t;
  } else {
    LAUNCH();
  }
#undef LAUNCH
  CU(cu->CtxSynchronize(), "the kernel (cuCtxSynchronize after launch)");
  for (uint32_t i = 0; i < n; i++)
    if (p->args.v[i].written)
      CU(cu->MemcpyDtoH(host[i], dptr[i], bytes[i]), "cuMemcpyDtoH");
done:
  /* after a fault the context is unusable and these fail: their results
   * are ignored, and releasing the primary context resets it */
  for (int i = 0; i < 2; i++)
    if (ev[i])
      cu->EventDestroy(ev[i]);
  for (uint32_t i = 0; i < n; i++)
    if (dptr[i])
      cu->MemFree(dptr[i]);
  if (mod)
    cu->ModuleUnload(mod);
  wv_cuda_close(cu);
  return st;
}
#undef CU

wavec_status wavec_gpu_run(wavec_kernel *pk, void *const *host_args,
                           double *ms) {
  if (!pk || !host_args)
    return WAVEC_ERR_INVALID;
  wv_kernel *k = &pk->k;
  wavec_ctx *ctx = k->ctx;
  if (ctx->status != WAVEC_OK)
    return ctx->status;
  WV_GUARD(ctx, ctx->status);
  if (!k->tir)
    wv_fail(ctx, D_INVALID, k->loc,
            "kernel '%s' is not compiled (call wavec_compile first)",
            k->name);
  wavec_status st = gpu_run(pk, host_args, ms);
  WV_UNGUARD(ctx);
  return st;
}
