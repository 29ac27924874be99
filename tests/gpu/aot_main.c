/* The --emit=c launchers on the GPU (tests/gpu/emit_c.sh builds this with
 * gemm.c (examples/gemm.wave, sm_90) and wg.c (examples/gemm_wgmma.wave,
 * sm_90a), both at M = N = 256, K = 128, and dyn.c (tests/kernels/
 * dynamic.wave's gemm_dyn_wgmma, sizes at launch: 256 x 256 x 128 and
 * 200 x 72 x 128): each computes c = a b^T on random f16 inputs, compared
 * with a double-precision product on the host; the dynamic launcher
 * refuses K = 100 (not a multiple of 64) and M = 2^31 (past the 2^31-1 a
 * run-time size may be). Exit 0 when all match
 * (normwise relative error below 1e-5). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dyn.h"
#include "gemm.h"
#include "wg.h"

enum { M = 256, N = 256, K = 128 };

static unsigned short to_f16(float f) { /* exact for the values used */
  unsigned int x;
  memcpy(&x, &f, 4);
  unsigned int sign = (x >> 16) & 0x8000, e = (x >> 23) & 0xff,
               man = x & 0x7fffff;
  if (e == 0)
    return (unsigned short)sign;
  int ne = (int)e - 127 + 15;
  return (unsigned short)(sign | (unsigned)ne << 10 | man >> 13);
}

#define CK(x)                                                                  \
  do {                                                                         \
    CUresult r_ = (x);                                                         \
    if (r_ != CUDA_SUCCESS) {                                                  \
      printf("FAIL %s: CUDA error %d\n", #x, (int)r_);                         \
      return 1;                                                                \
    }                                                                          \
  } while (0)

int main(void) {
  static unsigned short a[M * K], b[N * K];
  static float av[M * K], bv[N * K], c[M * N];
  srand(1);
  for (int i = 0; i < M * K;
       i++) /* multiples of 1/64 in [-1, 1): exact in f16 */
    av[i] = (float)(rand() % 128 - 64) / 64, a[i] = to_f16(av[i]);
  for (int i = 0; i < N * K; i++)
    bv[i] = (float)(rand() % 128 - 64) / 64, b[i] = to_f16(bv[i]);
  CUdevice dev;
  CUcontext ctx;
  CK(cuInit(0));
  CK(cuDeviceGet(&dev, 0));
  CK(cuDevicePrimaryCtxRetain(&ctx, dev));
  CK(cuCtxSetCurrent(ctx));
  CUdeviceptr da, db, dc;
  CK(cuMemAlloc(&da, sizeof a));
  CK(cuMemAlloc(&db, sizeof b));
  CK(cuMemAlloc(&dc, sizeof c));
  CK(cuMemcpyHtoD(da, a, sizeof a));
  CK(cuMemcpyHtoD(db, b, sizeof b));
  int bad = 0;
  static const char *const names[] = {"gemm", "gemm_wgmma", "gemm_dyn_wgmma",
                                      "gemm_dyn_wgmma"};
  for (int which = 0; which < 4; which++) {
    /* the last: a and b's first 200 and 72 rows, c dense 200 x 72 */
    int m = which == 3 ? 200 : M, n = which == 3 ? 72 : N;
    CK(cuMemsetD8(dc, 0xff, sizeof c));
    wavec_status st =
        which == 0   ? gemm_launch(0, da, db, dc)
        : which == 1 ? gemm_wgmma_launch(0, da, db, dc)
                     : gemm_dyn_wgmma_launch(0, da, db, dc, (uint32_t)m,
                                             (uint32_t)n, K);
    if (st != WAVEC_OK) {
      printf("FAIL %s_launch: status %d, CUDA %d\n", names[which], (int)st,
             (int)(which == 0   ? gemm_cu_result()
                   : which == 1 ? gemm_wgmma_cu_result()
                                : gemm_dyn_wgmma_cu_result()));
      return 1;
    }
    CK(cuCtxSynchronize());
    CK(cuMemcpyDtoH(c, dc, sizeof c));
    double d2 = 0, r2 = 0;
    for (int i = 0; i < m; i++)
      for (int j = 0; j < n; j++) {
        double ref = 0;
        for (int k = 0; k < K; k++)
          ref += (double)av[i * K + k] * bv[j * K + k];
        double d = c[i * n + j] - ref;
        d2 += d * d;
        r2 += ref * ref;
      }
    double rel = sqrt(d2 / r2);
    printf("%s %s_launch %d x %d x %d: relative error %.3g\n",
           rel < 1e-5 ? "ok" : "FAIL", names[which], m, n, K, rel);
    bad |= !(rel < 1e-5);
  }
  /* a size the kernel's dynamic(K, multiple_of = 64) refuses */
  wavec_status st = gemm_dyn_wgmma_launch(0, da, db, dc, M, N, 100);
  printf("%s gemm_dyn_wgmma_launch K = 100: status %d\n",
         st == WAVEC_ERR_INVALID ? "ok" : "FAIL", (int)st);
  bad |= st != WAVEC_ERR_INVALID;
  /* and a size past 2^31-1 (a multiple of 64: only the range refuses it) */
  st = gemm_dyn_wgmma_launch(0, da, db, dc, 2147483648u, N, K);
  printf("%s gemm_dyn_wgmma_launch M = 2^31: status %d\n",
         st == WAVEC_ERR_INVALID ? "ok" : "FAIL", (int)st);
  bad |= st != WAVEC_ERR_INVALID;
  return bad;
}
