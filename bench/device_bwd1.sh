#!/usr/bin/env bash
# One device call for the one-pass backward: build; bench.py --only bwd1
# --quick (its A/B rows: default, specialize=0, sum_parts=0, adds=2, ...,
# beside SDPA-cuDNN); the GPU cases bwd1 and reduce (against the
# simulator, memcheck, racecheck, synccheck); the ops table; with PERS_S=N
# bench.py --only pers --quick; with WIDE_S=N bench.py --only wide (the
# forward's wider tiles, N = 8192 and 4096); with LAYOUTS_S=N bench.py
# --only layouts --quick (transposed GEMM operands); with PROFILE=1 ncu's PC sampling
# (bench/profile_bwd1.py). Each step's output under $OUT as it ends, so a
# call cut short still brings back what ran.
set -u
export PATH=$PATH:/usr/local/cuda/bin
OUT=${OUT:-build/out}; mkdir -p "$OUT"
make -s MODE=release -j16 all lib >"$OUT/build.txt" 2>&1 || { tail -30 "$OUT/build.txt"; exit 1; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
timeout ${BWD1_S:-240} python3 bench/bench.py --only bwd1 --quick --out "$OUT" >"$OUT/log-bwd1.txt" 2>&1; echo "bench bwd1 rc=$?"
grep -E "^bwd1|FAIL" "$OUT/log-bwd1.txt" | sed 's/attn bwd one-pass f16 //' | cut -c1-200
GPU_SKIP="ragged fp8 large" timeout ${GPU_S:-150} bash tests/gpu/run.sh ${GPU_PAT:-bwd1} >"$OUT/gpu-bwd1.txt" 2>&1; echo "gpu cases rc=$?" >>"$OUT/gpu-bwd1.txt"
tail -9 "$OUT/gpu-bwd1.txt"
if [ -n "${GPU_PAT2:-}" ]; then
  GPU_SKIP="ragged fp8 large" timeout 90 bash tests/gpu/run.sh "$GPU_PAT2" >"$OUT/gpu-pat2.txt" 2>&1; echo "gpu $GPU_PAT2 cases rc=$?" >>"$OUT/gpu-pat2.txt"
  tail -4 "$OUT/gpu-pat2.txt"
fi
[ "${REDUCE:-1}" = 1 ] && GPU_SKIP="ragged fp8 large" timeout 60 bash tests/gpu/run.sh reduce >"$OUT/gpu-reduce.txt" 2>&1; echo "gpu reduce cases rc=$?" >>"$OUT/gpu-reduce.txt"
tail -4 "$OUT/gpu-reduce.txt"
./build/release/gpu_ops >"$OUT/ops.txt" 2>&1; echo "ops rc=$?"; grep -E "redg|^FAIL" "$OUT/ops.txt" | head -5; tail -1 "$OUT/ops.txt"
if [ "${PERS_S:-0}" -gt 0 ]; then
  timeout "$PERS_S" python3 bench/bench.py --only pers --quick --out "$OUT/pers" >"$OUT/log-pers.txt" 2>&1; echo "bench pers rc=$?"
  grep -E "^pers" "$OUT/log-pers.txt" | cut -c1-160
fi
if [ "${WIDE_S:-0}" -gt 0 ]; then
  timeout "$WIDE_S" python3 bench/bench.py --only wide --out "$OUT/wide" >"$OUT/log-wide.txt" 2>&1; echo "bench wide rc=$?"
  grep -E "^wide|FAIL" "$OUT/log-wide.txt" | sed 's/attn fwd f16 //' | cut -c1-160
fi
if [ "${LAYOUTS_S:-0}" -gt 0 ]; then
  timeout "$LAYOUTS_S" python3 bench/bench.py --only layouts --quick --out "$OUT/layouts" >"$OUT/log-layouts.txt" 2>&1; echo "bench layouts rc=$?"
  grep -E "^layouts|FAIL" "$OUT/log-layouts.txt" | cut -c1-160
fi
if [ "${PROFILE:-0}" = 1 ]; then
  timeout ${PROFILE_S:-150} python3 bench/profile_bwd1.py "$OUT/src" >"$OUT/profile-bwd1.txt" 2>&1; echo "profile rc=$?"
  grep -E "^===|^by opcode" "$OUT/profile-bwd1.txt" | cut -c1-300
fi
