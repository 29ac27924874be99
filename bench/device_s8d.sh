#!/usr/bin/env bash
# Eighth session, last call: the D = 64 one-pass backward's schedules
# (N = 4096, ratio to SDPA-cuDNN in the same process): the default (128
# keys, plain, 2 stages), specialized at 2 and 3 stages, 3 and 4 stages,
# the warpgroups leaving parts (exchange = 0), and 64-key tiles (one
# warpgroup, two workgroups a multiprocessor). Logs under $OUT.
set -u
export PATH=$PATH:/usr/local/cuda/bin
OUT=${OUT:-build/out}; mkdir -p "$OUT"
make -s MODE=release -j16 all lib >"$OUT/build.txt" 2>&1 || { tail -30 "$OUT/build.txt"; exit 1; }
WV_BWD1_D=64 timeout ${BWD_S:-150} python3 -c "
import sys; sys.path.insert(0, 'bench'); import bench
bench.bwd_one_pass(True, [(128, 64, 2, {}), (128, 64, 2, dict(specialize=1)), (128, 64, 3, dict(specialize=1)),
                          (128, 64, 3, {}), (128, 64, 4, {}), (128, 64, 2, dict(exchange=0)), (64, 64, 2, {}),
                          (64, 64, 3, {})])" >"$OUT/log-bwd64b.txt" 2>&1
echo "bwd64 rc=$?"; grep -E "^bwd1|FAIL" "$OUT/log-bwd64b.txt" | cut -c1-200
