#!/usr/bin/env bash
# One device call for the eighth session (2026-12-07), most wanted first:
# build; the GPU cases of clusters (TMA multicast) against the simulator
# with memcheck, racecheck and synccheck; bench.py --only cluster (clusters
# of 2 and 4 against none: GEMMs, the attention forward, the one-pass
# backward; peers in the same process); bench.py --only issue --quick (the
# backward's mmas issued early against program order); the GPU cases the
# seventh session could not run (the decode-shaped causal loop, GQA in the
# dense softmax form); bench.py --only gqa --quick; ncu PC sampling of the
# one-pass backward and the split form's dk/dv kernel at D = 128,
# N = 4096. Each step's output under $OUT as it ends, so a call cut short
# still brings back what ran.
set -u
export PATH=$PATH:/usr/local/cuda/bin
OUT=${OUT:-build/out}; mkdir -p "$OUT"
# (bench.py's tables and plots in a scratch folder: a call brings back a
# limited number of files, and run oo lost the profile to that)
TMPO=$(mktemp -d)
make -s MODE=release -j16 all lib >"$OUT/build.txt" 2>&1 || { tail -30 "$OUT/build.txt"; exit 1; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
cases() {
  for p in "$@"; do
    f="$OUT/gpu-$(echo "$p" | tr ' ' _).txt"
    GPU_SKIP="ragged fp8 large" timeout ${GPU_S:-150} bash tests/gpu/run.sh "$p" >"$f" 2>&1
    echo "[$p] rc=$?"; grep -E "^(ok|FAIL)|passed|failed" "$f" | tail -8
  done
}
cases ${GPU_CASES:-cluster}
timeout ${CLUSTER_S:-240} python3 bench/bench.py --only cluster --out "$TMPO/cluster" >"$OUT/log-cluster.txt" 2>&1
echo "bench cluster rc=$?"; grep -E "^cluster|^bwd1|FAIL" "$OUT/log-cluster.txt" | cut -c1-200
WV_BWD1_D=64,128 timeout ${ISSUE_S:-150} python3 bench/bench.py --only issue --quick --out "$TMPO/issue" >"$OUT/log-issue.txt" 2>&1
echo "bench issue rc=$?"; grep -E "^bwd1|FAIL" "$OUT/log-issue.txt" | cut -c1-200
cases ${GPU_CASES2:-decode gqa}
timeout ${GQA_S:-120} python3 bench/bench.py --only gqa --quick --out "$TMPO/gqa" >"$OUT/log-gqa.txt" 2>&1
echo "bench gqa rc=$?"; grep -E "^gqa|FAIL" "$OUT/log-gqa.txt" | cut -c1-190
WV_PROFILE_ONLY=${PROF:-fused-auto,dkdv-split} timeout ${PROF_S:-240} python3 bench/profile_bwd1.py "$TMPO/prof" \
  >"$OUT/prof-bwd1.txt" 2>&1
echo "profile rc=$?"; grep -E "^===|^by opcode" "$OUT/prof-bwd1.txt" | cut -c1-400
