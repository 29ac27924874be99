#!/usr/bin/env bash
# Ninth session, the shortest call (little device time left): no build on
# the device; the one-pass backward (D = 128 and 64, N = 4096, causal and
# not) with the libraries built on the CPU machine and carried: base
# (03fb21d, before this session) and new (the tree), each beside
# SDPA-cuDNN in its own process, errors against cuDNN's gradients; D = 64
# specialized; then the GPU cases of the one-pass backward if time is left.
# Before the call: build/base as in device_s9b.sh, and
#   mkdir -p build/new && cp build/release/libwavec.so build/new/
# (carry ["build/base", "build/new"])
set -u
export PATH=$PATH:/usr/local/cuda/bin
OUT=${OUT:-build/out}; mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for lib in base new spec xchg; do
  L=build/$lib/libwavec.so; D=128,64; C="[(128, 64, 2, {})]"
  [ $lib = spec ] && L=build/new/libwavec.so D=64 C="[(128, 64, 2, dict(specialize=1))]"
  [ $lib = xchg ] && L=build/new/libwavec.so D=64 C="[(128, 64, 2, dict(exchange=1))]"
  WAVEC_LIB=$L WV_BWD1_D=$D timeout ${BWD_S:-100} python3 -c "
import sys; sys.path.insert(0, 'bench'); import bench
bench.bwd_one_pass(True, $C)" >"$OUT/log-bwd1-$lib.txt" 2>&1
  echo "bwd1 $lib rc=$?"; grep -E "^bwd1|FAIL|Error" "$OUT/log-bwd1-$lib.txt" | cut -c1-220
done
f="$OUT/gpu-bwd1.txt"
GPU_SKIP="ragged fp8 large" timeout ${GPU_S:-150} bash tests/gpu/run.sh "${GPU_CASES:-bwd1 wgmma fused}" >"$f" 2>&1
echo "[gpu bwd1] rc=$?"; grep -E "^(ok|FAIL)|passed|failed" "$f" | tail -12
