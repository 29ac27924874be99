#!/usr/bin/env bash
# Everything one device call does, each step under its own time limit, all
# output under $OUT: build; the GPU tests (quick: no sanitizers; `full`
# adds memcheck and racecheck); SASS loop histograms of the GEMM and the
# forward; an ncu profile of the GEMM; the benchmarks.
# Usage (device machine, repo root): bash bench/device_run.sh [full] [noprof]
# (BENCH_ARGS="--only tma" for the tensor-copy A/B alone; BENCH_S the limit)
set -u
export PATH=$PATH:/usr/local/cuda/bin
OUT=${OUT:-build/out}; mkdir -p "$OUT"
full=0; prof=1
for a in "$@"; do [ "$a" = full ] && full=1; [ "$a" = noprof ] && prof=0; done
make -s MODE=release -j16 all >build/device-build.txt 2>&1 || { tail -20 build/device-build.txt; exit 1; }
if [ $full = 1 ]; then
  timeout 480 bash tests/gpu/run.sh >"$OUT/gpu-tests.txt" 2>&1; echo "gpu tests rc=$?" >>"$OUT/gpu-tests.txt"
else
  timeout 150 bash tests/gpu/run.sh --quick >"$OUT/gpu-tests.txt" 2>&1; echo "gpu tests rc=$?" >>"$OUT/gpu-tests.txt"
fi
tail -28 "$OUT/gpu-tests.txt"
G="-D M=8192 -D N=8192 -D K=8192 -D BLOCK_M=128 -D BLOCK_N=128 -D BLOCK_K=64 -D WAVES_M=2 -D WAVES_N=2"
F="-D B=16 -D M=8192 -D K2=8192 -D K1=128 -D N=128"
{ echo "== gemm_bf16 128x128x64 2x2"; bash bench/sass_hist.sh bench/gemm.wave gemm_bf16 $G
  echo "== attention_fwd D=128 defaults"; bash bench/sass_hist.sh examples/attention_fwd.wave attention_fwd $F
  GW="-D M=8192 -D N=8192 -D K=8192 -D BLOCK_M=128 -D BLOCK_N=256"
  for c in 2 1; do
    echo "== gemm_wgmma_bf16 128x256 4 stages copies=$c (2: TMA + mbarriers, 1: cp.async)"
    ARCH=sm_90a bash bench/sass_hist.sh bench/gemm.wave gemm_wgmma_bf16 $GW --hardware stages=4,copies=$c
    echo "== attention_fwd_wgmma D=128 128x64 2 stages copies=$c"
    ARCH=sm_90a bash bench/sass_hist.sh examples/attention_fwd_wgmma.wave attention_fwd_wgmma $F -D BLOCK_M=128 -D BLOCK_K2=64 --hardware stages=2,copies=$c
  done
} >"$OUT/sass.txt" 2>&1
if [ $prof = 1 ]; then
  timeout 120 python3 bench/profile_gemm.py >"$OUT/ncu.txt" 2>&1
fi
timeout ${BENCH_S:-360} python3 bench/bench.py --out "$OUT" ${BENCH_ARGS:-} >"$OUT/log.txt" 2>&1; echo "bench rc=$?"
tail -40 "$OUT/log.txt"
