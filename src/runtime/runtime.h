/* The GPU runtime: the CUDA driver API, loaded at run time with
 * dlopen("libcuda.so.1") so that nothing links against CUDA and the library
 * builds, and its CPU tests run, on machines without a GPU or a driver.
 * wavec_gpu_run (wavec.h) is built on this. */
#ifndef WV_RUNTIME_H
#define WV_RUNTIME_H

#include "support/base.h"

/* The driver and its first device, current on the calling thread. */
typedef struct wv_cuda wv_cuda;

/* Loads the driver, initialises it and makes the first device's primary
 * context current. NULL with a D_GPU diagnostic (WAVEC_ERR_RUNTIME) in ctx
 * at loc when there is no driver ("no CUDA driver (libcuda.so.1 not
 * found)"), it lacks an entry point, or there is no device. */
wv_cuda *wv_cuda_open(wavec_ctx *ctx, wavec_loc loc);
/* Releases the context and unloads the driver; cu may be NULL. */
void wv_cuda_close(wv_cuda *cu);
/* The device's compute capability times ten (90 for an H100 or H200). */
int wv_cuda_sm(const wv_cuda *cu);
/* The PTX target wavec prints for a device of compute capability sm (x10):
 * "sm_90" from 9.0 on (the driver compiles the PTX for the actual device),
 * "sm_80" for 8.x, NULL below 8.0 (mma.sync m16n8k16 needs sm_80). A
 * kernel that needs sm_90a's own instructions (wgmma) gets "sm_90a" on a
 * 9.0 device and NULL elsewhere (architecture-specific PTX runs on that
 * architecture only). */
const char *wv_cuda_ptx_target(int sm, bool needs_90a);
/* Builds tensor map m (wavec_tensor_map_info) of argument a (its
 * wavec_arg_info) over device memory at dptr into out, 128 bytes aligned
 * to 64, through cuTensorMapEncodeTiled; a D_GPU diagnostic at loc when the
 * driver lacks it or refuses. Every launcher of a kernel with tensor maps
 * passes them after the argument pointers. */
wavec_status wv_cuda_tensor_map(wv_cuda *cu, wavec_loc loc,
                                const wavec_tensor_map_info *m,
                                const wavec_arg_info *a,
                                unsigned long long dptr, void *out);

#endif
