# compile --emit=c: one C file (PTX, the cubin when ptxas is there) and its
# header, whose launcher compiles with cuda.h alone (-std=c11 -pedantic
# -Werror) and links with -lcuda alone (the toolkit's stub library here:
# running it needs the GPU, tests/gpu/emit_c.sh). The cubin comes through
# the disk cache; the output is deterministic.
. tests/cli/lib.bash
CUDA=${CUDA_HOME:-/usr/local/cuda}
[ -e "$CUDA/include/cuda.h" ] || fail "no $CUDA/include/cuda.h (the CUDA toolkit; set CUDA_HOME)"
export WAVEC_CACHE_DIR=$T/cache
# a ptxas that counts its runs
real=$(command -v ptxas || echo "$CUDA/bin/ptxas")
printf '#!/bin/sh\necho run >> "%s/ptxas.log"\nexec "%s" "$@"\n' "$T" "$real" >"$T/ptxas"
chmod +x "$T/ptxas"
export WAVEC_PTXAS=$T/ptxas
CC=${CC:-cc}
cflags=(-std=c11 -Wall -Wextra -Werror -pedantic -I"$CUDA/include")

run 0 compile examples/gemm.wave -D M=128 -D N=128 -D K=64 --emit=c -o "$T/gemm.c"
has "$T/gemm.h" "wavec_status gemm_launch(CUstream stream, CUdeviceptr a, CUdeviceptr b, CUdeviceptr c);"
has "$T/gemm.h" " *   c          f32 [128, 128], written"
has "$T/gemm.c" '#include "gemm.h"'
has "$T/gemm.c" "gemm_cubin["
[ "$(wc -l <"$T/ptxas.log")" -eq 1 ] || fail "ptxas ran $(wc -l <"$T/ptxas.log") times, want 1"
cp "$T/gemm.c" "$T/gemm.first.c"
run 0 compile examples/gemm.wave -D M=128 -D N=128 -D K=64 --emit=c -o "$T/gemm.c"
cmp -s "$T/gemm.c" "$T/gemm.first.c" || fail "a second --emit=c wrote other bytes"
[ "$(wc -l <"$T/ptxas.log")" -eq 1 ] || fail "the second --emit=c ran ptxas again (cache miss)"

# a C keyword as an argument name, and dynamic shared memory
run 0 compile examples/attention_bwd.wave --kernel attention_bwd_dkdv -D B=1 -D M=64 -D K2=64 -D N=32 -D K1=32 \
  --emit=c -o "$T/dkdv.c"
has "$T/dkdv.h" "CUdeviceptr do_, CUdeviceptr lse"
run 0 compile examples/gemm_wgmma.wave -D M=256 -D N=256 -D K=256 --hardware stages=4 --target sm_90a \
  --emit=c -o "$T/wg.c"
has "$T/wg.c" "CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES"
has "$T/wg.h" "for sm_90a"
has "$T/wg.c" "cuTensorMapEncodeTiled(&tmap[1]"  # tensor copies: maps built per launch
has "$T/wg.c" "CU_TENSOR_MAP_SWIZZLE_128B"
# a head dim of 80: k, v and o in 32-byte swizzled rows
run 0 compile examples/attention_fwd_wgmma.wave --kernel attention_fwd_wgmma -D B=1 -D M=256 -D K2=256 \
  -D K1=80 -D N=80 --target sm_90a --emit=c -o "$T/hd80.c"
has "$T/hd80.c" "CU_TENSOR_MAP_SWIZZLE_32B"
lacks "$T/hd80.c" "CU_TENSOR_MAP_SWIZZLE_128B"
# run-time sizes: the launcher takes them after the pointers, checks them
# (below 2^31, the stated multiple), and computes the grid and the tensor
# maps from them
run 0 compile tests/kernels/dynamic.wave --kernel gemm_dyn_wgmma --target sm_90a --emit=c -o "$T/dyn.c"
has "$T/dyn.h" "wavec_status gemm_dyn_wgmma_launch(CUstream stream, CUdeviceptr a, CUdeviceptr b, CUdeviceptr c, uint32_t M, uint32_t N, uint32_t K);"
has "$T/dyn.h" " *   c          f32 [M, N], written"
has "$T/dyn.h" "grid [ceil(M / 128), ceil(N / 128), 1]"
has "$T/dyn.c" "if (K == 0 || K > 2147483647u || K % 64u) {"
has "$T/dyn.c" "if (M == 0 || M > 2147483647u) {"
has "$T/dyn.c" "const cuuint64_t dim[] = {(cuuint64_t)K, (cuuint64_t)M}, stride[] = {(cuuint64_t)2u * K};"
has "$T/dyn.c" "&tmap[1], &M, &N, &K};"
has "$T/dyn.c" "cuLaunchKernel(f, (unsigned)((M + 128ull - 1) / 128ull), (unsigned)((N + 128ull - 1) / 128ull), 1u,"
# without ptxas: the PTX alone, and a note
WAVEC_PTXAS=$T/no-ptxas run 0 compile examples/gemm.wave -D M=64 -D N=64 -D K=32 --emit=c -o "$T/ptxonly.c"
lacks "$T/ptxonly.c" "_cubin["
has "$T/err" "no ptxas found"

cat >"$T/main.c" <<'C'
#include <stdio.h>
#include "gemm.h"
#include "dkdv.h"
#include "wg.h"
#include "dyn.h"
#include "ptxonly.h"
int main(void) {
  CUdeviceptr p = 0;
  if (cuInit(0) != CUDA_SUCCESS || cuMemAlloc(&p, 1) != CUDA_SUCCESS)
    return 3;
  wavec_status s = gemm_launch(0, p, p, p);
  s |= attention_bwd_dkdv_launch(0, p, p, p, p, p, p, p, p);
  s |= gemm_wgmma_load();
  s |= gemm_dyn_wgmma_launch(0, p, p, p, 64, 64, 100);
  printf("%d %d\n", (int)s, (int)gemm_cu_result());
  return 0;
}
C
for f in gemm dkdv wg dyn ptxonly; do
  "$CC" "${cflags[@]}" -c "$T/$f.c" -o "$T/$f.o" 2>"$T/err" || fail "cc -c $f.c failed"
done
# two emitted kernels of one name would clash: ptxonly holds gemm too
rm "$T/ptxonly.o"
sed -i 's/"ptxonly.h"/"gemm.h"/' "$T/main.c"
"$CC" "${cflags[@]}" -c "$T/main.c" -o "$T/main.o" 2>"$T/err" || fail "cc -c main.c failed"
"$CC" "$T/main.o" "$T/gemm.o" "$T/dkdv.o" "$T/wg.o" "$T/dyn.o" -L"$CUDA/lib64/stubs" -lcuda -o "$T/main" 2>"$T/err" ||
  fail "linking with -lcuda failed"
und=$(nm -u "$T/main" | grep -v -E ' (cu[A-Z][A-Za-z_0-9]*|sched_yield|printf|puts|__libc_start_main|__gmon_start__|_ITM_.*|__cxa_finalize|__stack_chk_fail)(@.*)?$' || true)
[ -z "$und" ] || fail "the launcher needs more than the driver: $und"

run 2 compile examples/gemm.wave -D M=64 -D N=64 -D K=32 --emit=c
has "$T/err" "--emit=c needs -o FILE.c"
