/* A CUDA driver without a GPU, for the launch path's tests and its host
 * benchmark on a CPU machine (tests/python/test_launch.py,
 * bench/launch_host.py): built as a shared library with the soname
 * libcuda.so.1 and loaded (RTLD_GLOBAL) before wavec opens the driver, it
 * is the driver wavec's dlopen finds. One device (sm_90), one context,
 * modules that load anything; cuLaunchKernel only records what it was
 * given, in the fake_* variables below (read through ctypes).
 *
 * The launch's parameters are recorded as the test states their layout:
 * fake_nptrs pointers (8 bytes each), then fake_ntmaps tensor maps, then
 * fake_nsizes run-time sizes (4 bytes each). A tensor map this driver
 * encodes holds the address and the product of the dims in its first 16
 * bytes, which are what a launch records of it (fake_tmaps). */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define API __attribute__((visibility("default")))

API unsigned long long fake_launches;     /* cuLaunchKernel calls */
API unsigned long long fake_encodes;      /* cuTensorMapEncodeTiled calls */
API void *fake_stream;                    /* of the last launch */
API unsigned fake_grid[3];
API int fake_nptrs, fake_ntmaps, fake_nsizes;
API unsigned long long fake_ptrs[16];
API unsigned fake_sizes[8];
API unsigned long long fake_tmaps[16][2];
API int fake_launch_result;               /* what cuLaunchKernel returns */
/* per cuTensorMapEncodeTiled call (the last 16): the address, the swizzle
 * (CU_TENSOR_MAP_SWIZZLE_*) and the bytes of the box's innermost dim */
API unsigned long long fake_encoded[16][3];

static int ctx_object;
static void *current;

API int cuInit(unsigned flags) { (void)flags; return 0; }
API int cuGetErrorName(int r, const char **s) { (void)r; *s = "CUDA_ERROR_FAKE"; return 0; }
API int cuGetErrorString(int r, const char **s) { (void)r; *s = "the fake driver's error"; return 0; }
API int cuDriverGetVersion(int *v) { *v = 12080; return 0; }
API int cuDeviceGetCount(int *n) { *n = 1; return 0; }
API int cuDeviceGet(int *d, int i) { *d = i; return 0; }
API int cuDeviceGetAttribute(int *v, int attr, int d) {
  (void)d;
  *v = attr == 75 ? 9 : 0; /* compute capability 9.0 */
  return 0;
}
API int cuDevicePrimaryCtxRetain(void **c, int d) { (void)d; *c = &ctx_object; return 0; }
API int cuDevicePrimaryCtxRelease_v2(int d) { (void)d; return 0; }
API int cuCtxSetCurrent(void *c) { current = c; return 0; }
API int cuCtxSynchronize(void) { return 0; }
API int cuCtxGetCurrent(void **c) { *c = current; return 0; }
API int cuCtxGetDevice(int *d) { *d = 0; return 0; }
API int cuModuleLoadData(void **m, const void *image) { (void)image; *m = &ctx_object; return 0; }
API int cuLinkCreate_v2(void) { return 1; }
API int cuLinkAddData_v2(void) { return 1; }
API int cuLinkComplete(void) { return 1; }
API int cuLinkDestroy(void) { return 0; }
API int cuModuleLoadDataEx(void) { return 1; }
API int cuModuleUnload(void *m) { (void)m; return 0; }
API int cuModuleGetFunction(void **f, void *m, const char *name) {
  (void)m, (void)name;
  *f = &ctx_object;
  return 0;
}
API int cuFuncSetAttribute(void *f, int a, int v) { (void)f, (void)a, (void)v; return 0; }
API int cuMemAlloc_v2(void) { return 1; }
API int cuMemFree_v2(void) { return 0; }
API int cuMemcpyHtoD_v2(void) { return 1; }
API int cuMemcpyDtoH_v2(void) { return 1; }
API int cuEventCreate(void) { return 1; }
API int cuEventRecord(void) { return 1; }
API int cuEventSynchronize(void) { return 1; }
API int cuEventDestroy_v2(void) { return 0; }
API int cuEventElapsedTime(void) { return 1; }

API int cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                       unsigned bz, unsigned smem, void *stream, void **params, void **extra) {
  (void)f, (void)bx, (void)by, (void)bz, (void)smem, (void)extra;
  fake_launches++;
  fake_stream = stream;
  fake_grid[0] = gx, fake_grid[1] = gy, fake_grid[2] = gz;
  for (int i = 0; i < fake_nptrs && i < 16; i++)
    memcpy(&fake_ptrs[i], params[i], 8);
  for (int i = 0; i < fake_ntmaps && i < 16; i++)
    memcpy(fake_tmaps[i], params[fake_nptrs + i], 16);
  for (int i = 0; i < fake_nsizes && i < 8; i++)
    memcpy(&fake_sizes[i], params[fake_nptrs + fake_ntmaps + i], 4);
  return fake_launch_result;
}

API int cuTensorMapEncodeTiled(void *out, int dtype, unsigned rank, void *addr,
                               const unsigned long long *dim, const unsigned long long *stride,
                               const unsigned *box, const unsigned *estride, int il, int sw,
                               int l2, int fill) {
  (void)stride, (void)estride, (void)il, (void)l2, (void)fill;
  unsigned long long held[2] = {(unsigned long long)(uintptr_t)addr, 1};
  for (unsigned j = 0; j < rank; j++)
    held[1] *= dim[j];
  /* CU_TENSOR_MAP_DATA_TYPE_FLOAT16 6, BFLOAT16 9, FLOAT32 7: 2 or 4
   * bytes; the rest (8-bit types) 1 */
  unsigned es = dtype == 6 || dtype == 9 ? 2 : dtype == 7 ? 4 : 1;
  unsigned long long *e = fake_encoded[fake_encodes % 16];
  e[0] = (unsigned long long)(uintptr_t)addr;
  e[1] = (unsigned long long)sw;
  e[2] = (unsigned long long)box[0] * es;
  fake_encodes++;
  memset(out, 0, 128);
  memcpy(out, held, sizeof held);
  return 0;
}
