#!/usr/bin/env bash
# A short device call (eighth session, after run oo): clusters re-measured
# with the remote releases in the default semantics (bench.py --only
# cluster --quick), and wider key tiles for the D = 64 one-pass backward
# (192 keys on three warpgroups, 3 ring stages). Logs only under $OUT.
set -u
export PATH=$PATH:/usr/local/cuda/bin
OUT=${OUT:-build/out}; mkdir -p "$OUT"; TMPO=$(mktemp -d)
make -s MODE=release -j16 all lib >"$OUT/build.txt" 2>&1 || { tail -30 "$OUT/build.txt"; exit 1; }
timeout ${CLUSTER_S:-200} python3 bench/bench.py --only cluster --quick --out "$TMPO/c" >"$OUT/log-cluster-q.txt" 2>&1
echo "bench cluster rc=$?"; grep -E "^cluster|^bwd1|FAIL" "$OUT/log-cluster-q.txt" | cut -c1-200
WV_BWD1_D=64 timeout ${BWD_S:-150} python3 -c "
import sys; sys.path.insert(0, 'bench'); import bench
bench.bwd_one_pass(True, [(128, 64, 2, {}), (192, 64, 2, {}), (192, 64, 3, {}), (128, 64, 3, {})])" \
  >"$OUT/log-bwd64.txt" 2>&1
echo "bwd64 rc=$?"; grep -E "^bwd1|FAIL" "$OUT/log-bwd64.txt" | cut -c1-200
