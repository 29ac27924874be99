#!/usr/bin/env bash
# Thirteenth session's device call, most important first:
#  1. the GPU cases of the 64- and 32-byte swizzles ("swz": GEMMs with K
#     tiles of 32 and 48 and N-contiguous N tiles of 96 and 80, fp8 K tiles
#     of 32 bytes, attention at head dims 96, 80 and 48; GPU_CASES=swz,ahead
#     adds v0.7.0's pass `ahead`), each against the simulator, then under
#     compute-sanitizer (memcheck, racecheck, synccheck);
#  2. the forward at head dims 96 and 80 beside SDPA-cuDNN (N = 4096);
#  3. the one-pass backward at D = 64, N = 4096: the default against
#     hardware(mma_ahead = 2) and (mma_ahead = 1, read_ahead = 0), in one
#     process beside SDPA-cuDNN; with BWD96=1, then at D = 96, the default.
# Builds the release library on the device (about 20 s).
# Knobs: GPU_CASES (comma-separated patterns; empty: none), GPU_S, HD
# (the forward's head dims; empty: none), FWD_S, WV_BWD1_N, BWD_S.
. bench/device_env.sh
build_release
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
gpu_cases "${GPU_CASES-swz,narrow}" "${GPU_S:-220}" 16
if [ -n "${HD-96,80}" ]; then
  WAVEC_LIB=build/release/libwavec.so WV_FWD_N=4096 timeout ${FWD_S:-90} python3 -c "
import sys; sys.path.insert(0, 'bench'); import bench
bench.fwd_sched(True, [(128, 64, 2, {}), (128, 128, 2, dict(specialize=1))],
                Ds=tuple(int(x) for x in '${HD-96,80}'.split(',')), tag='hd')" >"$OUT/log-fwd-hd.txt" 2>&1
  echo "fwd hd rc=$?"; grep -E "^hd|FAIL|Error" "$OUT/log-fwd-hd.txt" | cut -c1-230 | sed -E 's/^hd attn fwd f16 //'
fi
WAVEC_LIB=build/release/libwavec.so WV_BWD1_D=64 WV_BWD1_N=${WV_BWD1_N:-4096} \
  timeout ${BWD_S:-110} python3 -c "
import sys; sys.path.insert(0, 'bench'); import bench
bench.bwd_one_pass(True, [(128, 64, 2, {}), (128, 64, 2, dict(mma_ahead=2)),
                          (128, 64, 2, dict(mma_ahead=1, read_ahead=0))])" >"$OUT/log-bwd1-ahead.txt" 2>&1
echo "bwd1 rc=$?"; grep -E "^bwd1|FAIL|Error" "$OUT/log-bwd1-ahead.txt" | cut -c1-230 |
  sed -E 's/^bwd1 attn bwd one-pass f16 //; s/ \(fused kernel alone/ (fused/'
# the one-pass backward at head dim 96 (64-byte rows), the default beside
# SDPA-cuDNN (BWD96=1)
if [ -n "${BWD96:-}" ]; then
  WAVEC_LIB=build/release/libwavec.so WV_BWD1_D=96 WV_BWD1_N=4096 timeout ${BWD_S:-110} python3 -c "
import sys; sys.path.insert(0, 'bench'); import bench
bench.bwd_one_pass(True, [(128, 64, 2, {})])" >"$OUT/log-bwd1-hd96.txt" 2>&1
  echo "bwd1 hd96 rc=$?"; grep -E "^bwd1|FAIL|Error" "$OUT/log-bwd1-hd96.txt" | cut -c1-230 |
    sed -E 's/^bwd1 attn bwd one-pass f16 //; s/ \(fused kernel alone/ (fused/'
fi
