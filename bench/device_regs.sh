#!/usr/bin/env bash
# One short device call after the producer/consumer register split moved
# from 40/232 to 24/240: bench.py --only pers --quick (N = 4096, D = 128 and
# 64: the plain kernels, unaffected, beside the specialized ones with turns
# and persistent tiles). Everything under $OUT.
set -u
export PATH=$PATH:/usr/local/cuda/bin
OUT=${OUT:-build/out}; mkdir -p "$OUT"
make -s MODE=release -j16 all lib >"$OUT/build.txt" 2>&1 || { tail -30 "$OUT/build.txt"; exit 1; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
timeout ${PERS_S:-200} python3 bench/bench.py --only pers --quick --out "$OUT" >"$OUT/log-pers.txt" 2>&1; echo "bench pers rc=$?"
grep -E "^pers|FAIL" "$OUT/log-pers.txt" | sed 's/attn fwd f16 //' | cut -c1-170
