#!/usr/bin/env bash
# Fourteenth session's device call, most important first:
#  1. the GPU cases of this session and the cp.async rings the proxy fence
#     changed ("narrow": operand rows copied 8 or 4 bytes at a time;
#     "whole": rows padded up to the lanes; "copies=1" and "stages=1": the
#     cp.async rings and the copies where a tile stands, now fenced), each
#     against the simulator, then under compute-sanitizer (memcheck,
#     racecheck, synccheck);
#  2. the forward at D = 128 and 64, N = 4096, beside SDPA-cuDNN (q's copy
#     now ends in a proxy fence: one a workgroup);
#  3. bench.py's narrow (GEMM at K = n - 2 and n - 4, now with a fence an
#     iteration) at 4096.
# Knobs: GPU_CASES (comma-separated patterns), GPU_S, FWD_S, NARROW_S.
. bench/device_env.sh
build_release
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
gpu_cases "${GPU_CASES-narrow,whole,copies=1,stages=1}" "${GPU_S:-200}" 16
WAVEC_LIB=build/release/libwavec.so WV_FWD_N=4096 timeout ${FWD_S:-90} python3 -c "
import sys; sys.path.insert(0, 'bench'); import bench
bench.fwd_sched(True, [(128, 64, 2, {})], Ds=(128, 64), tag='fwd')" >"$OUT/log-fwd.txt" 2>&1
echo "fwd rc=$?"; grep -E "^fwd|FAIL|Error" "$OUT/log-fwd.txt" | cut -c1-230 | sed -E 's/^fwd attn fwd f16 //'
WAVEC_LIB=build/release/libwavec.so timeout ${NARROW_S:-90} python3 -c "
import sys; sys.path.insert(0, 'bench'); import bench
bench.narrow(True)" >"$OUT/log-narrow.txt" 2>&1
echo "narrow rc=$?"; cat "$OUT/log-narrow.txt" | cut -c1-200
