#!/usr/bin/env bash
# The --emit=c launchers on the GPU: emits examples/gemm.wave (sm_90) and
# examples/gemm_wgmma.wave (sm_90a) at 256 x 256 x 128 and
# tests/kernels/dynamic.wave's gemm_dyn_wgmma (sizes at launch) as C, builds
# tests/gpu/aot_main.c with them (cc, cuda.h, -lcuda only) and runs it:
# both launchers against a double-precision product. Needs an H100/H200,
# its driver and the CUDA toolkit. From the repository root, after `make`.
set -eu
cd "$(dirname "$0")/../.."
CUDA=${CUDA_HOME:-/usr/local/cuda}
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
W=build/release/wavec
$W compile examples/gemm.wave -D M=256 -D N=256 -D K=128 --target sm_90 --emit=c -o "$d/gemm.c"
$W compile examples/gemm_wgmma.wave -D M=256 -D N=256 -D K=128 --target sm_90a --emit=c -o "$d/wg.c"
$W compile tests/kernels/dynamic.wave --kernel gemm_dyn_wgmma --target sm_90a --emit=c -o "$d/dyn.c"
for f in gemm wg dyn; do cc -std=c11 -O2 -c -I"$CUDA/include" "$d/$f.c" -o "$d/$f.o"; done
cc -std=c11 -O2 -I"$CUDA/include" -I"$d" tests/gpu/aot_main.c "$d/gemm.o" "$d/wg.o" "$d/dyn.o" -L"$CUDA/lib64/stubs" -lcuda -lm -o "$d/aot"
"$d/aot"
