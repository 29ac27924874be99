#!/usr/bin/env bash
# Fifteenth session's device call, most important first:
#  1. the GPU cases "defaults": the forward at its head-dim tiles (192x128
#     specialized at 2048 keys, never yet run under the sanitizers), the
#     GEMM at the ring depth the compiler now picks (4 slots, ragged,
#     persistent), head dims 40 and 72 (padded), the bottom-right causal
#     walk with an offset, and the backward at D = 256 in one ring slot,
#     each against the simulator, then under compute-sanitizer;
#  2. bench.py gemm_defaults: bench/gemm.wave's warpgroup GEMM as shipped
#     (no hardware override) against 2 and 3 stages and cuBLAS;
#  3. bench.py fwd_defaults at lengths no tile divides (2000, 3000, 5000).
# Knobs: GPU_CASES, GPU_S, GD_S, FD_S, GD_SHAPES_ENV.
. bench/device_env.sh
build_release
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
gpu_cases "${GPU_CASES-defaults}" "${GPU_S:-240}" 20
WAVEC_LIB=build/release/libwavec.so timeout ${GD_S:-200} python3 -c "
import sys; sys.path.insert(0, 'bench'); import bench
bench.gemm_defaults()" >"$OUT/log-gemm-defaults.txt" 2>&1
echo "gemm_defaults rc=$?"; grep -E "^gemm_defaults|FAIL|Error" "$OUT/log-gemm-defaults.txt" | cut -c1-200 |
  sed -E 's/^gemm_defaults //; s/ TFLOP\/s//g'
WAVEC_LIB=build/release/libwavec.so timeout ${FD_S:-100} python3 -c "
import sys; sys.path.insert(0, 'bench'); import bench
bench.fwd_defaults(False, Ds=(64, 128), Ns=(2000, 3000, 5000))" >"$OUT/log-fwd-defaults.txt" 2>&1
echo "fwd_defaults rc=$?"; grep -E "^defaults|FAIL|Error" "$OUT/log-fwd-defaults.txt" | cut -c1-200 |
  sed -E 's/^defaults attn fwd f16 //; s/ TFLOP\/s//g'
