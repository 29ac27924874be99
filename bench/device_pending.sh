#!/usr/bin/env bash
# One device call for what the seventh session (2026-12-07) could not run:
# build; the GPU cases of its changes against the simulator with
# memcheck, racecheck and synccheck (grouped-query attention, sums over
# lanes holding copies, the causal forward in reverse and in order, the
# reduce = add of an mma at a run-time size, the persistent causal
# forward); the ops table (shr.b32); bench.py --only gqa --quick (GQA
# against SDPA enable_gqa and cuDNN on repeated heads); bench.py --only
# wide with WIDE_D=order128,order64 (longest walks first against in
# order, N = 4096 and 8192). Each step's output under $OUT as it ends, so
# a call cut short still brings back what ran.
set -u
export PATH=$PATH:/usr/local/cuda/bin
OUT=${OUT:-build/out}; mkdir -p "$OUT"
make -s MODE=release -j16 all lib >"$OUT/build.txt" 2>&1 || { tail -30 "$OUT/build.txt"; exit 1; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for p in gqa copies "in order" gemm_add "sched wgmma fwd_causal"; do
  f="$OUT/gpu-$(echo "$p" | tr ' ' _).txt"
  GPU_SKIP="ragged fp8 large" timeout ${GPU_S:-100} bash tests/gpu/run.sh "$p" >"$f" 2>&1
  echo "[$p] rc=$?"; grep -E "^(ok|FAIL)|passed|failed" "$f" | tail -6
done
./build/release/gpu_ops >"$OUT/ops.txt" 2>&1; echo "ops rc=$?"
grep -E "shr|^FAIL" "$OUT/ops.txt" | head -4; tail -1 "$OUT/ops.txt"
timeout ${GQA_S:-120} python3 bench/bench.py --only gqa --quick --out "$OUT/gqa" >"$OUT/log-gqa.txt" 2>&1
echo "bench gqa rc=$?"; grep -E "^gqa|FAIL" "$OUT/log-gqa.txt" | cut -c1-190
WIDE_D=order128,order64 WV_FWD_N=4096,8192 timeout ${WIDE_S:-200} python3 bench/bench.py --only wide --out "$OUT/wide" \
  >"$OUT/log-wide.txt" 2>&1
echo "bench wide rc=$?"; grep -E "^wide|FAIL" "$OUT/log-wide.txt" | sed 's/attn fwd f16 //' | cut -c1-170
