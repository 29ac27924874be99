/* The CUDA driver API through dlopen, and wavec_gpu_run: PTX from the
 * printer, assembled by the toolkit's ptxas where one is found that the
 * driver covers, else JIT-compiled by the driver (both with line
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
typedef struct CUlinkState_st *CUlinkState;

enum {
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
  CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8,
  CU_JIT_ERROR_LOG_BUFFER = 5,
  CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6,
  CU_JIT_GENERATE_LINE_INFO = 13,
  CU_JIT_INPUT_PTX = 1,
};

/* name in the library, C name, parameters */
#define CU_FUNCS(X)                                                            \
  X("cuInit", Init, (unsigned))                                                \
  X("cuGetErrorName", GetErrorName, (CUresult, const char **))                 \
  X("cuGetErrorString", GetErrorString, (CUresult, const char **))             \
  X("cuDriverGetVersion", DriverGetVersion, (int *))                           \
  X("cuDeviceGetCount", DeviceGetCount, (int *))                               \
  X("cuDeviceGet", DeviceGet, (CUdevice *, int))                               \
  X("cuDeviceGetAttribute", DeviceGetAttribute, (int *, int, CUdevice))        \
  X("cuDevicePrimaryCtxRetain", PrimaryCtxRetain, (CUcontext *, CUdevice))     \
  X("cuDevicePrimaryCtxRelease_v2", PrimaryCtxRelease, (CUdevice))             \
  X("cuCtxSetCurrent", CtxSetCurrent, (CUcontext))                             \
  X("cuCtxSynchronize", CtxSynchronize, (void))                                \
  X("cuCtxGetCurrent", CtxGetCurrent, (CUcontext *))                           \
  X("cuCtxGetDevice", CtxGetDevice, (CUdevice *))                              \
  X("cuModuleLoadData", ModuleLoadData, (CUmodule *, const void *))            \
  X("cuLinkCreate_v2", LinkCreate, (unsigned, int *, void **, CUlinkState *))  \
  X("cuLinkAddData_v2", LinkAddData,                                           \
    (CUlinkState, int, void *, size_t, const char *, unsigned, int *, void **)) \
  X("cuLinkComplete", LinkComplete, (CUlinkState, void **, size_t *))          \
  X("cuLinkDestroy", LinkDestroy, (CUlinkState))                               \
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
  bool owns_ctx; /* retained the primary context (and made it current) */
  int sm;
  int driver_version; /* 12080 for CUDA 12.8 */
  /* the toolkit's ptxas the default load assembles with (auto_ptxas):
   * its path, or NULL where there is none or it is newer than the driver;
   * looked for once */
  const char *ptxas;
  bool ptxas_known;
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

/* "cuXxx: CUDA_ERROR_NAME (description)" as diagnostic id */
static wavec_status cu_error_as(wv_cuda *cu, wv_diag_id id, wavec_loc loc,
                                const char *what, CUresult r,
                                const char *detail) {
  const char *name = NULL, *desc = NULL;
  if (cu->GetErrorName)
    cu->GetErrorName(r, &name);
  if (cu->GetErrorString)
    cu->GetErrorString(r, &desc);
  return wv_error(cu->ctx, id, loc, "%s failed: %s (%s)%s%s", what,
                  name ? name : "unknown error", desc ? desc : "no description",
                  detail && *detail ? "\n" : "", detail ? detail : "");
}

static wavec_status cu_error(wv_cuda *cu, wavec_loc loc, const char *what,
                             CUresult r, const char *detail) {
  return cu_error_as(cu, D_GPU, loc, what, r, detail);
}

static void *sym(void *lib, const char *name) {
  return lib ? dlsym(lib, name) : NULL;
}

wv_cuda *wv_cuda_open(wavec_ctx *ctx, wavec_loc loc) {
  /* what fails here is the machine's, not the kernel's: no source place */
  loc = (wavec_loc){0};
  wv_cuda *cu = wv_alloc(ctx, sizeof *cu); /* before dlopen: may unwind */
  void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char *why = dlerror();
    wv_error(ctx, D_MACHINE, loc, "no CUDA driver (libcuda.so.1 not found)%s%s",
             why ? ": " : "", why ? why : "");
    return NULL;
  }
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
    wv_error(ctx, D_MACHINE, loc, "the CUDA driver (libcuda.so.1) has no %s",
             missing);
    dlclose(lib);
    return NULL;
  }
  CUresult r;
  int n = 0, major = 0, minor = 0;
  CUcontext cur = NULL;
  if ((r = cu->Init(0)) != 0) {
    cu_error_as(cu, D_MACHINE, loc, "cuInit", r, NULL);
  } else if ((r = cu->DriverGetVersion(&cu->driver_version)) != 0) {
    cu_error_as(cu, D_MACHINE, loc, "cuDriverGetVersion", r, NULL);
  } else if ((r = cu->CtxGetCurrent(&cur)) != 0) {
    cu_error_as(cu, D_MACHINE, loc, "cuCtxGetCurrent", r, NULL);
  } else if (cur) {
    cu->cuctx = cur;
    if ((r = cu->CtxGetDevice(&cu->dev)) != 0)
      cu_error_as(cu, D_MACHINE, loc, "cuCtxGetDevice", r, NULL);
  } else if ((r = cu->DeviceGetCount(&n)) != 0) {
    cu_error_as(cu, D_MACHINE, loc, "cuDeviceGetCount", r, NULL);
  } else if (n == 0) {
    wv_error(ctx, D_MACHINE, loc, "no CUDA device");
    r = -1;
  } else if ((r = cu->DeviceGet(&cu->dev, 0)) != 0) {
    cu_error_as(cu, D_MACHINE, loc, "cuDeviceGet", r, NULL);
  } else if ((r = cu->PrimaryCtxRetain(&cu->cuctx, cu->dev)) != 0) {
    cu_error_as(cu, D_MACHINE, loc, "cuDevicePrimaryCtxRetain", r, NULL);
  } else if ((r = cu->CtxSetCurrent(cu->cuctx)) != 0) {
    cu_error_as(cu, D_MACHINE, loc, "cuCtxSetCurrent", r, NULL);
    cu->PrimaryCtxRelease(cu->dev);
    cu->cuctx = NULL;
  } else {
    cu->owns_ctx = true;
  }
  if (r == 0 &&
      ((r = cu->DeviceGetAttribute(
            &major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, cu->dev)) !=
           0 ||
       (r = cu->DeviceGetAttribute(
            &minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, cu->dev)) !=
           0)) {
    cu_error_as(cu, D_MACHINE, loc, "cuDeviceGetAttribute", r, NULL);
    if (cu->owns_ctx) {
      cu->CtxSetCurrent(NULL);
      cu->PrimaryCtxRelease(cu->dev);
    }
  }
  if (r != 0) {
    dlclose(lib);
    return NULL;
  }
  cu->sm = major * 10 + minor;
  return cu;
}

void wv_cuda_close(wv_cuda *cu) {
  if (!cu || !cu->lib)
    return;
  if (cu->owns_ctx) {
    CUcontext cur = NULL;
    if (cu->CtxGetCurrent(&cur) == 0 && cur == cu->cuctx)
      cu->CtxSetCurrent(NULL);
    cu->PrimaryCtxRelease(cu->dev);
  }
  dlclose(cu->lib);
  cu->lib = NULL;
}

static void close_ctx_cuda(void *ud) {
  wavec_ctx *ctx = ud;
  wv_cuda_close(ctx->cuda);
  ctx->cuda = NULL;
}

wv_cuda *wv_ctx_cuda(wavec_ctx *ctx, wavec_loc loc) {
  if (!ctx->cuda) {
    /* the closing is registered before anything is opened: a failed
     * registration (out of memory) leaves nothing open */
    bool registered = false;
    for (uint32_t i = 0; i < ctx->cleanups.n; i++)
      registered |= ctx->cleanups.v[i].fn == close_ctx_cuda;
    if (!registered)
      wv_on_free(ctx, close_ctx_cuda, ctx);
    ctx->cuda = wv_cuda_open(ctx, loc);
    if (!ctx->cuda)
      wv_throw(ctx);
  }
  return ctx->cuda;
}

int wv_cuda_sm(const wv_cuda *cu) { return cu->sm; }

const char *wv_cuda_ptx_target(int sm, bool needs_90a) {
  if (needs_90a)
    return sm == 90 ? "sm_90a" : NULL;
  return sm >= 90 ? "sm_90" : sm >= 89 ? "sm_89" : sm >= 80 ? "sm_80" : NULL;
}

/* ---- binaries -------------------------------------------------------------------- */
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
  /* CUtensorMapDataType: FLOAT16 6, FLOAT32 7, BFLOAT16 9, INT32 3, UINT8
   * 0 (the 8-bit types: copies move their bytes) */
  static const int cu_dtype[WAVEC_DTYPE_COUNT] = {
      [WAVEC_F16] = 6,    [WAVEC_BF16] = 9,    [WAVEC_F32] = 7,
      [WAVEC_I32] = 3,    [WAVEC_I1] = 0,      [WAVEC_F8E4M3] = 0,
      [WAVEC_F8E5M2] = 0, [WAVEC_I8] = 0};
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
  /* no interleave; the swizzle (tir_swz_code: CU_TENSOR_MAP_SWIZZLE_*); L2
   * promotion 256B (3); out of bounds elements are zeros (fill none) */
  return cu->TensorMapEncodeTiled(out, cu_dtype[a->dtype], (unsigned)r,
                                  (void *)(uintptr_t)dptr, dim, stride, box,
                                  estride, 0, tir_swz_code(m->swizzle), 3, 0);
}

wavec_status wv_cuda_tensor_map(wv_cuda *cu, wavec_loc loc,
                                const wavec_tensor_map_info *m,
                                const wavec_arg_info *a,
                                unsigned long long dptr, void *out) {
  if (!cu->TensorMapEncodeTiled)
    return wv_error(cu->ctx, D_MACHINE, (wavec_loc){0},
                    "the CUDA driver (libcuda.so.1) has "
                    "no cuTensorMapEncodeTiled, which tensor copies need");
  CUresult r = encode_tmap(cu, m, a, dptr, out);
  return r ? cu_error(cu, loc, "cuTensorMapEncodeTiled", r, NULL) : WAVEC_OK;
}

static bool known_target(const char *t) {
  static const char *const names[] = {"sm_80", "sm_89", "sm_90", "sm_90a",
                                      "auto"};
  for (size_t i = 0; i < WV_ARRAY_LEN(names); i++)
    if (t && strcmp(t, names[i]) == 0)
      return true;
  return false;
}

/* The PTX target for kernel k on cu's device: `target`, or for "auto" the
 * one wv_cuda_ptx_target picks; unwinds when the device cannot run k. */
static const char *ptx_target(wv_cuda *cu, wv_kernel *k, const char *target) {
  bool wg = wv_mma_is_warpgroup((wavec_mma_kind)k->tir->mma);
  if (strcmp(target, "auto") != 0)
    return target;
  const char *t = wv_cuda_ptx_target(cu->sm, wg);
  if (!t)
    wv_fail(k->ctx, D_MACHINE, (wavec_loc){0},
            "the GPU has compute capability %d.%d; %s",
            cu->sm / 10, cu->sm % 10,
            wg ? "wgmma needs exactly 9.0 (sm_90a: H100, H200)"
               : "wavec's PTX needs 8.0 or newer (mma.sync m16n8k16)");
  return t;
}

/* The driver's compilation of PTX into a cubin for the device of the
 * current context, with line information (profilers map the machine code
 * back to .wave lines); the cubin is copied into the arena. */
static void jit(wv_cuda *cu, wv_kernel *k, const char *ptx, size_t len,
                const void **code, size_t *code_len) {
  wavec_ctx *ctx = k->ctx;
  char log[8192] = "";
  int opt[3] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
                CU_JIT_GENERATE_LINE_INFO};
  void *val[3] = {log, (void *)(uintptr_t)sizeof log, (void *)(uintptr_t)1};
  CUlinkState *ls = wv_alloc(ctx, sizeof *ls); /* read after an unwind */
  CUresult r = cu->LinkCreate(3, opt, val, ls);
  if (r != 0) {
    cu_error(cu, k->loc, "cuLinkCreate", r, NULL);
    wv_throw(ctx);
  }
  /* the link state is destroyed on every path, an unwind too */
  wv_guard g;
  g.prev = ctx->guard;
  ctx->guard = &g;
  if (setjmp(g.jb)) {
    ctx->guard = g.prev;
    cu->LinkDestroy(*ls);
    wv_throw(ctx);
  }
  void *out = NULL;
  size_t n = 0;
  r = cu->LinkAddData(*ls, CU_JIT_INPUT_PTX, (void *)ptx, len + 1, k->name, 0,
                      NULL, NULL);
  if (r != 0) {
    cu_error(cu, k->loc, "cuLinkAddData (JIT of the PTX)", r, log);
    wv_throw(ctx);
  }
  r = cu->LinkComplete(*ls, &out, &n);
  if (r != 0) {
    cu_error(cu, k->loc, "cuLinkComplete (JIT of the PTX)", r, log);
    wv_throw(ctx);
  }
  *code = wv_dup(ctx, out, n); /* the link state owns out */
  *code_len = n;
  ctx->guard = g.prev;
  cu->LinkDestroy(*ls);
}

wavec_module *wv_module_of(wavec_ctx *ctx, wv_kernel *k, const char *target) {
  const tir_prog *p = k->tir;
  wavec_module *b = wv_alloc(ctx, sizeof *b);
  b->ctx = ctx;
  b->kernel = k->name;
  b->target = target;
  wv_buf ename;
  wv_buf_init(&ename, ctx);
  tir_ptx_entry_name(k->name, &ename);
  b->entry = wv_buf_str(&ename);
  for (int d = 0; d < 3; d++) {
    b->grid[d] = (uint32_t)p->grid[d];
    b->block[d] = (uint32_t)p->block[d];
  }
  b->smem = (uint64_t)p->smem_bytes;
  b->nargs = p->args.n;
  b->args = wv_alloc(ctx, (b->nargs + 1) * sizeof *b->args);
  for (uint32_t i = 0; i < b->nargs; i++)
    wavec_arg_info_get((wavec_kernel *)k, i, &b->args[i]);
  b->align = wv_alloc(ctx, (b->nargs + 1) * sizeof *b->align);
  for (uint32_t i = 0; i < b->nargs; i++)
    b->align[i] = (uint32_t)tir_arg_align(p, i);
  b->nsizes = p->sizes.n;
  if (b->nsizes > WV_MAX_SIZES)
    wv_fail(ctx, D_UNSUPPORTED, k->loc,
            "kernel '%s' has %u run-time sizes; a launch passes at most %d",
            k->name, b->nsizes, WV_MAX_SIZES);
  /* how a launch's sizes, shapes and grid follow from its arguments */
  b->sizes = wv_alloc(ctx, (b->nsizes + 1) * sizeof *b->sizes);
  for (uint32_t i = 0; i < b->nsizes; i++) {
    b->sizes[i].name = p->sizes.v[i].name;
    b->sizes[i].multiple = p->sizes.v[i].multiple;
    b->sizes[i].most = p->sizes.v[i].most;
    b->sizes[i].now = k->run_size[i];
  }
  b->dyn = wv_alloc(ctx, (b->nargs + 1) * sizeof *b->dyn);
  for (uint32_t i = 0; i < b->nargs; i++)
    for (uint32_t j = 0; j < p->args.v[i].ndims && j < WAVEC_MAX_DIMS; j++)
      b->dyn[i][j] = p->args.v[i].dyn[j];
  for (int d = 0; d < 3; d++) {
    b->grid_size[d] = p->grid_size[d];
    b->grid_tile[d] = p->grid_tile[d];
    b->tiles[d] = p->tiles[d];
  }
  b->persistent = p->persistent;
  b->ntmaps = (uint32_t)wavec_tensor_map_count((wavec_kernel *)k);
  if (b->ntmaps > WV_MAX_TMAPS)
    wv_fail(ctx, D_UNSUPPORTED, k->loc,
            "kernel '%s' has %u tensor maps; a launch passes at most %d",
            k->name, b->ntmaps, WV_MAX_TMAPS);
  b->tmaps = wv_alloc(ctx, (b->ntmaps + 1) * sizeof *b->tmaps);
  for (uint32_t i = 0; i < b->ntmaps; i++)
    wavec_tensor_map_info_get((wavec_kernel *)k, i, &b->tmaps[i]);
  return b;
}

/* Builds the module of compiled kernel k: PTX for `target` (a PTX
 * target, resolved), assembled by ptxas when `ptxas` names it, else by the
 * driver of cu. */
static wavec_module *build(wv_cuda *cu, const char *ptxas, wv_kernel *k,
                           const char *target) {
  wavec_ctx *ctx = k->ctx;
  wavec_module *b = wv_module_of(ctx, k, target);
  wv_buf ptx;
  wv_buf_init(&ptx, ctx);
  if (!emit(k, wv_target_get(b->target), &ptx))
    wv_throw(ctx);
  if (ptxas)
    wv_ptxas(ctx, k->loc, ptxas, target, wv_buf_str(&ptx), ptx.n, &b->code,
             &b->code_len);
  else
    jit(cu, k, wv_buf_str(&ptx), ptx.n, &b->code, &b->code_len);
  return b;
}

/* The assembler of a load that names none (neither WAVEC_LOAD_PTXAS nor
 * WAVEC_LOAD_DRIVER): the toolkit's ptxas where one is found whose CUDA
 * version the driver runs (its cubins load) and of the driver's major
 * version (an older toolkit's is not known to do better), else the
 * driver's own compiler. Measured on the H100 (bench/NOTES.md, v0.5.11), the driver's
 * compiler of CUDA 13.0 serialized every wgmma of kernels that ptxas 13.0
 * compiles unserialized (ping-pong's, attention's with two ring barriers),
 * and gave the attention forward 4-7% less. */
static const char *auto_ptxas(wv_cuda *cu) {
  if (!cu->ptxas_known) {
    cu->ptxas_known = true;
    const char *p = wv_ptxas_path(cu->ctx);
    int v = p ? wv_ptxas_version(p) : 0;
    cu->ptxas = v && v <= cu->driver_version &&
                        v / 1000 == cu->driver_version / 1000
                    ? p
                    : NULL;
  }
  return cu->ptxas;
}

static wv_kernel *find_kernel(wavec_ctx *ctx, const char *name) {
  if (!name) {
    if (ctx->kernels.n != 1)
      wv_fail(ctx, D_INVALID, (wavec_loc){0},
              "%u kernels parsed: name the one to load",
              (unsigned)ctx->kernels.n);
    return ctx->kernels.v[0];
  }
  wavec_kernel *k = wavec_kernel_find(ctx, name);
  if (!k) {
    wv_buf names;
    wv_buf_init(&names, ctx);
    for (uint32_t i = 0; i < ctx->kernels.n; i++)
      wv_buf_printf(&names, "%s%s", i ? ", " : "", ctx->kernels.v[i]->name);
    wv_fail(ctx, D_INVALID, (wavec_loc){0}, "no kernel '%s' (kernels: %s)",
            name, ctx->kernels.n ? wv_buf_str(&names) : "none");
  }
  return &k->k;
}

wavec_module *wv_load(wavec_ctx *ctx, wv_kernel *k, const char *name,
                      const char *target, unsigned flags) {
  if (!known_target(target))
    wv_fail(ctx, D_INVALID, k ? k->loc : (wavec_loc){0},
            "unknown GPU target '%s' (choose sm_80, sm_89, sm_90, sm_90a or "
            "auto)",
            target ? target : "(null)");
  if (!k)
    k = find_kernel(ctx, name);
  /* the assembler, and what of it the key holds */
  wv_cuda *cu = NULL;
  const char *ptxas = NULL, *tool;
  if (flags & WAVEC_LOAD_PTXAS) {
    if (strcmp(target, "auto") == 0)
      wv_fail(ctx, D_INVALID, k->loc, "target 'auto' needs a GPU to ask; "
              "with ptxas name it (sm_80, sm_89, sm_90 or sm_90a)");
    ptxas = wv_ptxas_path(ctx);
    if (!ptxas)
      wv_fail(ctx, D_MACHINE, (wavec_loc){0}, "ptxas not found (set WAVEC_PTXAS or "
              "CUDA_HOME, or put the CUDA toolkit's bin on PATH)");
    tool = wv_ptxas_identity(ctx, ptxas);
  } else {
    cu = wv_ctx_cuda(ctx, k->loc);
    if (!(flags & WAVEC_LOAD_DRIVER))
      ptxas = auto_ptxas(cu);
    wv_buf b;
    wv_buf_init(&b, ctx);
    wv_buf_printf(&b, "%s%scuda-driver %d sm_%d",
                  ptxas ? wv_ptxas_identity(ctx, ptxas) : "",
                  ptxas ? " " : "", cu->driver_version, cu->sm);
    tool = wv_buf_str(&b);
  }
  uint64_t key[2] = {0, 0};
  const char *desc = NULL;
  bool keyed = tool && !(flags & WAVEC_LOAD_NO_CACHE) &&
               wv_cache_key(ctx, k->name, target, tool, key, &desc);
  const void *data;
  size_t len;
  if (keyed && wv_cache_get(ctx, key, &data, &len)) {
    wavec_module *b = wv_module_read(ctx, data, len, key);
    if (b && strcmp(b->kernel, k->name) == 0) {
      b->cached = true;
      return b;
    }
  }
  if (!k->tir && wavec_compile((wavec_kernel *)k, NULL) != WAVEC_OK)
    wv_throw(ctx);
  wavec_module *b =
      build(cu, ptxas, k, cu ? ptx_target(cu, k, target) : target);
  if (keyed) {
    b->key[0] = key[0];
    b->key[1] = key[1];
    b->desc = desc;
    wv_buf bytes;
    wv_buf_init(&bytes, ctx);
    wv_module_write(b, &bytes);
    wv_cache_put(ctx, key, bytes.s, bytes.n);
  }
  return b;
}

wavec_status wavec_gpu_load(wavec_ctx *ctx, const char *kernel,
                            const char *target, unsigned flags,
                            wavec_module **out) {
  if (!ctx || !out)
    return wv_null_param(ctx, "wavec_gpu_load", "out");
  *out = NULL;
  if (ctx->status != WAVEC_OK)
    return ctx->status;
  WV_GUARD(ctx, ctx->status);
  wavec_module *b = wv_load(ctx, NULL, kernel, target, flags);
  WV_UNGUARD(ctx);
  *out = b;
  return WAVEC_OK;
}

const char *wavec_module_kernel(const wavec_module *b) {
  return b ? b->kernel : "";
}
const char *wavec_module_target(const wavec_module *b) {
  return b ? b->target : "";
}
int wavec_module_cached(const wavec_module *b) { return b ? b->cached : 0; }
size_t wavec_module_arg_count(const wavec_module *b) {
  return b ? b->nargs : 0;
}

/* The grid for the sizes given so far (0 along a dynamic axis whose size
 * is not given yet); NULL, or why no launch can take it (tir_launch_grid). */
static const char *module_grid(const wavec_module *b, int64_t grid[3]) {
  int64_t tiles[3];
  for (int d = 0; d < 3; d++) {
    int64_t n = b->grid_size[d] ? b->sizes[b->grid_size[d] - 1].now : 0;
    tiles[d] = !b->grid_size[d] ? (b->persistent ? b->tiles[d] : b->grid[d])
               : n > 0 ? (n + b->grid_tile[d] - 1) / b->grid_tile[d]
                       : 0;
  }
  return tir_launch_grid(b->ctx, tiles, b->persistent, grid);
}

void wavec_module_launch_dims(const wavec_module *b, uint32_t grid[3],
                              uint32_t block[3], size_t *smem_bytes) {
  int64_t g[3];
  bool fits = b && !module_grid(b, g);
  for (int d = 0; d < 3; d++) {
    if (grid)
      grid[d] = fits ? (uint32_t)g[d] : 0;
    if (block)
      block[d] = b ? b->block[d] : 0;
  }
  if (smem_bytes)
    *smem_bytes = b ? (size_t)b->smem : 0;
}

int wavec_module_arg(const wavec_module *b, size_t i, wavec_arg_info *out) {
  if (!b || !out || i >= b->nargs)
    return -1;
  *out = b->args[i];
  /* its dynamic dims: the sizes given so far */
  bool dyn = false;
  for (size_t j = 0; j < out->ndims; j++)
    if (b->dyn[i][j]) {
      out->shape[j] = b->sizes[b->dyn[i][j] - 1].now;
      dyn = true;
    }
  if (dyn) {
    out->elems = 1;
    for (size_t j = 0; j < out->ndims; j++)
      out->elems *= (size_t)out->shape[j];
    out->bytes = out->elems * (size_t)((wv_dtypes[out->dtype].bits + 7) / 8);
  }
  return 0;
}

const char *wavec_module_dim_name(const wavec_module *b, size_t i, size_t d) {
  return b && i < b->nargs && d < b->args[i].ndims && b->dyn[i][d]
             ? b->sizes[b->dyn[i][d] - 1].name
             : NULL;
}

wavec_status wavec_module_arg_shape(wavec_module *b, size_t i, size_t ndims,
                                    const int64_t *shape) {
  if (!b || (ndims && !shape))
    return wv_null_param(b ? b->ctx : NULL, "wavec_module_arg_shape",
                         "shape");
  wavec_ctx *ctx = b->ctx;
  wavec_loc none = {0};
  if (i >= b->nargs)
    return wv_error(ctx, D_INVALID, none, "kernel '%s' has %u arguments",
                    b->kernel, b->nargs);
  const wavec_arg_info *a = &b->args[i];
  if (ndims != a->ndims)
    return wv_error(ctx, D_INVALID, none,
                    "argument '%s' of '%s' has %zu dimensions, the shape %zu",
                    a->name, b->kernel, a->ndims, ndims);
  uint64_t me = i < 64 ? (uint64_t)1 << i : 0; /* (more cannot launch) */
  for (size_t j = 0; j < ndims; j++) {
    uint32_t z = b->dyn[i][j];
    if (shape[j] <= 0)
      return wv_error(ctx, D_INVALID, none,
                      "argument '%s' of '%s': size %lld of dimension %zu is "
                      "out of range",
                      a->name, b->kernel, (long long)shape[j], j);
    if (z && shape[j] > b->sizes[z - 1].most)
      return wv_error(ctx, D_INVALID, none,
                      "argument '%s' of '%s': size %lld of dimension %zu is "
                      "out of range: more than the %lld the kernel is "
                      "compiled for",
                      a->name, b->kernel, (long long)shape[j], j,
                      (long long)b->sizes[z - 1].most);
    if (!z && shape[j] != a->shape[j])
      return wv_error(ctx, D_INVALID, none,
                      "argument '%s' of '%s': dimension %zu is %lld, compiled "
                      "in; the shape gives %lld (declare it dynamic to vary "
                      "it)",
                      a->name, b->kernel, j, (long long)a->shape[j],
                      (long long)shape[j]);
    const wv_module_size *s = z ? &b->sizes[z - 1] : NULL;
    uint64_t others = s ? s->from & ~me : 0;
    if (others && s->now != shape[j])
      return wv_error(ctx, D_INVALID, none,
                      "argument '%s' of '%s': dimension %zu ('%s') is %lld, "
                      "the shape of '%s' gave %lld",
                      a->name, b->kernel, j, s->name, (long long)shape[j],
                      b->args[__builtin_ctzll(others)].name,
                      (long long)s->now);
  }
  for (size_t j = 0; j < ndims; j++)
    if (b->dyn[i][j]) {
      b->sizes[b->dyn[i][j] - 1].now = shape[j];
      b->sizes[b->dyn[i][j] - 1].from |= me;
    }
  return WAVEC_OK;
}

/* Before a launch of a module with run-time sizes: every size given and
 * as stated; the grid and every argument's shape (the tensor maps are
 * built over them) follow from them. The next launch's shapes may differ
 * from this one's. */
static void module_sizes(wavec_module *b) {
  wavec_ctx *ctx = b->ctx;
  for (uint32_t i = 0; i < b->nsizes; i++)
    b->sizes[i].from = 0; /* a launch, even one refused, ends the shapes */
  for (uint32_t i = 0; i < b->nsizes; i++) {
    wv_module_size *s = &b->sizes[i];
    if (s->now <= 0)
      wv_fail(ctx, D_INVALID, (wavec_loc){0},
              "kernel '%s': the size of dynamic dimension '%s' is not given; "
              "give the shape of an argument with it (wavec_module_arg_shape)",
              b->kernel, s->name);
    if (s->now % s->multiple)
      wv_fail(ctx, D_INVALID, (wavec_loc){0},
              "kernel '%s': '%s' = %lld is not a multiple of %lld, as "
              "dynamic(%s, multiple_of = %lld) states",
              b->kernel, s->name, (long long)s->now, (long long)s->multiple,
              s->name, (long long)s->multiple);
  }
  /* every argument within 2^62 bytes, as `bind` holds the sizes it knows
   * (its offsets and byte counts then fit their 64-bit types) */
  const int64_t most = INT64_C(1) << 62;
  for (uint32_t i = 0; i < b->nargs; i++) {
    const wavec_arg_info *a = &b->args[i];
    int64_t bytes = (wv_dtypes[a->dtype].bits + 7) / 8;
    for (size_t j = 0; j < a->ndims; j++) {
      int64_t n = b->dyn[i][j] ? b->sizes[b->dyn[i][j] - 1].now : a->shape[j];
      if (bytes > most / n)
        wv_fail(ctx, D_INVALID, (wavec_loc){0},
                "kernel '%s': the sizes make argument '%s' more than 2^62 "
                "bytes",
                b->kernel, a->name);
      bytes *= n;
    }
  }
  int64_t g[3];
  const char *why = module_grid(b, g);
  if (why)
    wv_fail(ctx, D_UNSUPPORTED, (wavec_loc){0}, "kernel '%s': the sizes give %s",
            b->kernel, why);
  for (int d = 0; d < 3; d++)
    b->grid[d] = (uint32_t)g[d];
  for (uint32_t i = 0; i < b->nargs; i++)
    wavec_module_arg(b, i, &b->args[i]);
}

const void *wavec_module_code(const wavec_module *b, size_t *len) {
  if (len)
    *len = b ? b->code_len : 0;
  return b ? b->code : NULL;
}

/* ---- launching ------------------------------------------------------------------- */
static void unload_cb(void *ud) {
  wavec_module *b = ud;
  wv_cuda *cu = b->ctx->cuda;
  /* the driver may be gone at process exit: results are ignored */
  for (uint32_t i = 0; cu && i < b->nmods; i++)
    cu->ModuleUnload(b->mods[i].mod);
  b->nmods = 0;
}

#define CU(call, what)                                                         \
  do {                                                                         \
    CUresult r_ = (call);                                                      \
    if (r_ != 0) {                                                             \
      cu_error(cu, loc, what, r_, NULL);                                       \
      wv_throw(ctx);                                                           \
    }                                                                          \
  } while (0)

/* b's function in the current context (made cu's when there is none),
 * loading the module there the first time. */
static CUfunction function(wv_cuda *cu, wavec_module *b) {
  wavec_ctx *ctx = b->ctx;
  wavec_loc loc = {0};
  CUcontext cur = NULL;
  CU(cu->CtxGetCurrent(&cur), "cuCtxGetCurrent");
  if (!cur) {
    CU(cu->CtxSetCurrent(cu->cuctx), "cuCtxSetCurrent");
    cur = cu->cuctx;
  }
  for (uint32_t i = 0; i < b->nmods; i++)
    if (b->mods[i].cuctx == (void *)cur)
      return b->mods[i].fn;
  if (b->nmods == WV_BIN_MODS)
    wv_fail(ctx, D_GPU, loc,
            "module of '%s' launched in more than %d CUDA contexts", b->kernel,
            WV_BIN_MODS);
  if (b->nmods == 0)
    wv_on_free(ctx, unload_cb, b); /* before anything is loaded */
  CUmodule mod = NULL;
  CU(cu->ModuleLoadData(&mod, b->code), "cuModuleLoadData (the cubin)");
  CUfunction fn = NULL;
  CUresult r = cu->ModuleGetFunction(&fn, mod, b->entry);
  if (r == 0 && b->smem > TIR_PTX_STATIC_SMEM_MAX)
    r = cu->FuncSetAttribute(fn,
                             CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                             (int)b->smem);
  if (r != 0) {
    cu->ModuleUnload(mod);
    cu_error(cu, loc, "cuModuleGetFunction / cuFuncSetAttribute", r, NULL);
    wv_throw(ctx);
  }
  b->mods[b->nmods].cuctx = cur;
  b->mods[b->nmods].mod = mod;
  b->mods[b->nmods].fn = fn;
  b->nmods++;
  return fn;
}

/* Launches b with the argument pointers ptrs and, after them, the tensor
 * maps of b built over those pointers (they hold the addresses and the
 * shapes: encoded again when either changed since the last launch). */
static void launch(wv_cuda *cu, wavec_module *b, CUstream stream,
                   CUdeviceptr *ptrs) {
  wavec_ctx *ctx = b->ctx;
  wavec_loc loc = {0};
  CUfunction fn = function(cu, b);
  void *params[WV_MAX_LAUNCH_ARGS + WV_MAX_TMAPS + WV_MAX_SIZES];
  /* CUtensorMap: 128 bytes, 64-aligned */
  _Alignas(128) unsigned char maps[WV_MAX_TMAPS][128];
  for (uint32_t i = 0; i < b->nargs; i++)
    params[i] = &ptrs[i];
  if (b->ntmaps && !b->tmap_memo)
    b->tmap_memo = wv_alloc(ctx, b->ntmaps * sizeof *b->tmap_memo);
  for (uint32_t i = 0; i < b->ntmaps; i++) {
    const wavec_tensor_map_info *m = &b->tmaps[i];
    const wavec_arg_info *a = &b->args[m->arg];
    wv_tmap_memo *memo = &b->tmap_memo[i];
    size_t shape_bytes = a->ndims * sizeof *a->shape;
    if (memo->valid && memo->dptr == ptrs[m->arg] &&
        memcmp(memo->shape, a->shape, shape_bytes) == 0) {
      memcpy(maps[i], memo->map, sizeof maps[i]);
    } else {
      memo->valid = false;
      if (wv_cuda_tensor_map(cu, loc, m, a, ptrs[m->arg], maps[i]) !=
          WAVEC_OK)
        wv_throw(ctx);
      memcpy(memo->map, maps[i], sizeof memo->map);
      memo->dptr = ptrs[m->arg];
      memcpy(memo->shape, a->shape, shape_bytes);
      memo->valid = true;
    }
    params[b->nargs + i] = maps[i];
  }
  /* the run-time sizes (.param .u32), after the tensor maps */
  uint32_t sizes[WV_MAX_SIZES];
  for (uint32_t i = 0; i < b->nsizes; i++) {
    sizes[i] = (uint32_t)b->sizes[i].now;
    params[b->nargs + b->ntmaps + i] = &sizes[i];
  }
  unsigned dyn = b->smem > TIR_PTX_STATIC_SMEM_MAX ? (unsigned)b->smem : 0;
  CU(cu->LaunchKernel(fn, b->grid[0], b->grid[1], b->grid[2], b->block[0],
                      b->block[1], b->block[2], dyn, stream, params, NULL),
     "cuLaunchKernel");
}

wavec_status wavec_module_launch(wavec_module *b, void *stream,
                                 const uint64_t *dev_args) {
  if (!b || (!dev_args && b->nargs))
    return wv_null_param(b ? b->ctx : NULL, "wavec_module_launch",
                         "dev_args");
  wavec_ctx *ctx = b->ctx;
  if (ctx->status != WAVEC_OK)
    return ctx->status;
  WV_GUARD(ctx, ctx->status);
  if (b->nsizes)
    module_sizes(b);
  if (b->nargs > WV_MAX_LAUNCH_ARGS)
    wv_fail(ctx, D_INVALID, (wavec_loc){0}, "kernel '%s' has %u arguments; "
            "at most %d can be launched", b->kernel, b->nargs,
            WV_MAX_LAUNCH_ARGS);
  CUdeviceptr ptrs[WV_MAX_LAUNCH_ARGS];
  for (uint32_t i = 0; i < b->nargs; i++) {
    ptrs[i] = (CUdeviceptr)dev_args[i];
    /* a misaligned address would fault in the kernel (the context lost) */
    if (ptrs[i] % b->align[i])
      wv_fail(ctx, D_INVALID, (wavec_loc){0},
              "argument '%s' of '%s' is at 0x%llx, not a multiple of %u: "
              "the kernel accesses it %u bytes at a time (a view at an "
              "offset into its storage? pass a copy)",
              b->args[i].name, b->kernel, (unsigned long long)ptrs[i],
              b->align[i], b->align[i]);
  }
  launch(wv_ctx_cuda(ctx, (wavec_loc){0}), b, (CUstream)stream, ptrs);
  WV_UNGUARD(ctx);
  return WAVEC_OK;
}

/* ---- wavec_gpu_run ------------------------------------------------------------ */
static void free_run(wv_cuda *cu, CUevent *ev, CUdeviceptr *dptr, uint32_t n) {
  for (int i = 0; i < 2; i++)
    if (ev[i])
      cu->EventDestroy(ev[i]);
  for (uint32_t i = 0; i < n; i++)
    if (dptr[i])
      cu->MemFree(dptr[i]);
}

/* Device copies of the host buffers, a launch (timed after a warm-up when
 * ms is wanted), the written arguments copied back. */
static void gpu_run(wv_kernel *k, void *const *host, double *ms) {
  wavec_ctx *ctx = k->ctx;
  wavec_loc loc = k->loc;
  /* the program with the run-time sizes: its grid and shapes (the next
   * run's shapes may differ from this one's) */
  memset(k->run_from, 0, k->tir->sizes.n * sizeof *k->run_from);
  const tir_prog *p = tir_instance(ctx, k->tir, k->run_size, k->loc);
  for (uint32_t i = 0; i < p->args.n; i++)
    if (!host[i])
      wv_fail(ctx, D_INVALID, k->loc, "no buffer for argument '%s'",
              p->args.v[i].name);
  wavec_module *b = wv_load(ctx, k, k->name, "auto", 0);
  if (b->nsizes) {
    /* this launch's sizes, and with them its grid and shapes */
    for (uint32_t i = 0; i < b->nsizes; i++) {
      b->sizes[i].now = p->size_vals[i];
      b->sizes[i].from = 0;
    }
    module_sizes(b);
  }
  wv_cuda *cu = ctx->cuda;
  uint32_t n = p->args.n;
  CUdeviceptr *dptr = wv_alloc(ctx, (n + 1) * sizeof *dptr);
  size_t *bytes = wv_alloc(ctx, (n + 1) * sizeof *bytes);
  CUevent *ev = wv_alloc(ctx, 2 * sizeof *ev);
  /* what was allocated is freed on every path, an unwind too (after a
   * fault the context is unusable and these fail: results ignored);
   * everything the unwind reads lives in the arena */
  wv_guard g;
  g.prev = ctx->guard;
  ctx->guard = &g;
  if (setjmp(g.jb)) {
    ctx->guard = g.prev;
    free_run(cu, ev, dptr, n);
    wv_throw(ctx);
  }
  function(cu, b); /* the module is loaded before the copies */
  for (uint32_t i = 0; i < n; i++) {
    const tir_arg *a = &p->args.v[i];
    bytes[i] = (size_t)a->elems * (size_t)((wv_dtypes[a->dt].bits + 7) / 8);
    CU(cu->MemAlloc(&dptr[i], bytes[i] ? bytes[i] : 16), "cuMemAlloc");
    CU(cu->MemcpyHtoD(dptr[i], host[i], bytes[i]), "cuMemcpyHtoD");
  }
  if (ms) {
    /* warm-up, then the written arguments as they were, then one timed
     * launch: the results are those of one launch */
    launch(cu, b, NULL, dptr);
    CU(cu->CtxSynchronize(), "the kernel (cuCtxSynchronize after launch)");
    for (uint32_t i = 0; i < n; i++)
      if (p->args.v[i].written)
        CU(cu->MemcpyHtoD(dptr[i], host[i], bytes[i]), "cuMemcpyHtoD");
    CU(cu->EventCreate(&ev[0], 0), "cuEventCreate");
    CU(cu->EventCreate(&ev[1], 0), "cuEventCreate");
    CU(cu->EventRecord(ev[0], NULL), "cuEventRecord");
    launch(cu, b, NULL, dptr);
    CU(cu->EventRecord(ev[1], NULL), "cuEventRecord");
    CU(cu->EventSynchronize(ev[1]), "the kernel (cuEventSynchronize)");
    float t = 0;
    CU(cu->EventElapsedTime(&t, ev[0], ev[1]), "cuEventElapsedTime");
    *ms = t;
  } else {
    launch(cu, b, NULL, dptr);
  }
  CU(cu->CtxSynchronize(), "the kernel (cuCtxSynchronize after launch)");
  for (uint32_t i = 0; i < n; i++)
    if (p->args.v[i].written)
      CU(cu->MemcpyDtoH(host[i], dptr[i], bytes[i]), "cuMemcpyDtoH");
  ctx->guard = g.prev;
  free_run(cu, ev, dptr, n);
}
#undef CU

wavec_status wavec_gpu_run(wavec_kernel *pk, void *const *host_args,
                           double *ms) {
  if (!pk || (!host_args && pk->k.args.n))
    return wv_null_param(pk ? pk->k.ctx : NULL, "wavec_gpu_run",
                         "host_args");
  wv_kernel *k = &pk->k;
  wavec_ctx *ctx = k->ctx;
  if (ctx->status != WAVEC_OK)
    return ctx->status;
  WV_GUARD(ctx, ctx->status);
  if (!k->tir)
    wv_fail(ctx, D_INVALID, k->loc,
            "kernel '%s' is not compiled (call wavec_compile first)",
            k->name);
  gpu_run(k, host_args, ms);
  WV_UNGUARD(ctx);
  return WAVEC_OK;
}
