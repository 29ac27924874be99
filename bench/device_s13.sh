#!/usr/bin/env bash
# Thirteenth session's measurement of v0.7.0 (pass `ahead`): the one-pass
# backward at D = 64 (N = 4096 and 8192, causal and not), the default
# against hardware(mma_ahead = 2) and (mma_ahead = 1, read_ahead = 0), in
# one process beside SDPA-cuDNN; then the four GPU cases with "ahead" in
# their names and the ten "swz" ones (64- and 32-byte swizzles: GEMMs and
# attention at head dims 96, 80, 48) under compute-sanitizer (memcheck,
# racecheck, synccheck).
# Builds the release library on the device (about 10 s).
# Knobs: WV_BWD1_N, BWD_D, BWD_S, GPU_CASES (comma-separated patterns;
# empty: none), GPU_S.
. bench/device_env.sh
build_release
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
WAVEC_LIB=build/release/libwavec.so WV_BWD1_D=${BWD_D:-64} WV_BWD1_N=${WV_BWD1_N:-4096,8192} \
  timeout ${BWD_S:-330} python3 -c "
import sys; sys.path.insert(0, 'bench'); import bench
bench.bwd_one_pass(True, [(128, 64, 2, {}), (128, 64, 2, dict(mma_ahead=2)),
                          (128, 64, 2, dict(mma_ahead=1, read_ahead=0))])" >"$OUT/log-bwd1-ahead.txt" 2>&1
echo "bwd1 rc=$?"; grep -E "^bwd1|FAIL|Error" "$OUT/log-bwd1-ahead.txt" | cut -c1-230 |
  sed -E 's/^bwd1 attn bwd one-pass f16 //; s/ \(fused kernel alone/ (fused/'
IFS=, read -ra pats <<<"${GPU_CASES-ahead,swz}"
for p in "${pats[@]}"; do
  f="$OUT/gpu-$(echo "$p" | tr ' ' '-').txt"
  GPU_SKIP="ragged fp8 large" timeout ${GPU_S:-200} bash tests/gpu/run.sh "$p" >"$f" 2>&1
  echo "[gpu $p] rc=$?"; grep -E "^(ok|FAIL)|passed|failed" "$f" | tail -12
done
