#!/usr/bin/env bash
# Ninth session: the one-pass backward with dk running under the staging of
# dq's reduces and a barrier fewer (v0.6.7) against the commits before
# (their libraries built on the CPU machine and carried as
# build/base/libwavec.so and build/base1/libwavec.so): D = 128 and 64,
# N = 4096, causal and not, each beside SDPA-cuDNN in its own process;
# then the GPU cases of the one-pass backward with memcheck, racecheck and
# synccheck; then the profile (device_s9.sh's first part).
# Before the call, on the CPU machine (build/ is not committed):
#   git worktree add /tmp/wv-base 03fb21d && make -C /tmp/wv-base -s MODE=release lib
#   mkdir -p build/base && cp /tmp/wv-base/build/release/libwavec.so build/base/
#   (build/base1 likewise from 05470ac; run with carry ["build/base", "build/base1"])
set -u
export PATH=$PATH:/usr/local/cuda/bin
OUT=${OUT:-build/out}; mkdir -p "$OUT"
TMPO=$(mktemp -d)
make -s MODE=release -j16 all lib >"$OUT/build.txt" 2>&1 || { tail -30 "$OUT/build.txt"; exit 1; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
CFGS=${CFGS:-"[(128, 64, 2, {})]"}
# base: the commit before this session's changes (03fb21d); base1: dk
# under the staging alone (05470ac); new: the working tree; spec: the
# tree at D = 64 with specialize = 1; xchg: the tree at D = 64 with
# exchange = 1 (the descriptor inside a panel)
bwd() { for lib in "$@"; do
  L=build/release/libwavec.so; D=${BWD_D:-128,64}
  [ $lib != new ] && L=build/$lib/libwavec.so
  C=$CFGS
  [ $lib = base1 ] && D=128
  [ $lib = spec ] && L=build/release/libwavec.so D=64 C="[(128, 64, 2, dict(specialize=1))]"
  [ $lib = xchg ] && L=build/release/libwavec.so D=64 C="[(128, 64, 2, dict(exchange=1))]"
  WAVEC_LIB=$L WV_BWD1_D=$D timeout ${BWD_S:-150} python3 -c "
import sys; sys.path.insert(0, 'bench'); import bench
bench.bwd_one_pass(True, $C)" >"$OUT/log-bwd1-$lib.txt" 2>&1
  echo "bwd1 $lib rc=$?"; grep -E "^bwd1|FAIL|Error" "$OUT/log-bwd1-$lib.txt" | cut -c1-220
done; }
bwd base new spec xchg
f="$OUT/gpu-bwd1.txt"
GPU_SKIP="ragged fp8 large" timeout ${GPU_S:-200} bash tests/gpu/run.sh "${GPU_CASES:-bwd1 wgmma fused}" >"$f" 2>&1
echo "[gpu bwd1] rc=$?"; grep -E "^(ok|FAIL)|passed|failed" "$f" | tail -12
if [ -n "${PROF:-}" ]; then
WV_PROFILE_ONLY=$PROF timeout ${PROF_S:-150} python3 bench/profile_bwd1.py "$TMPO/prof" >"$OUT/prof-bwd1.txt" 2>&1
echo "profile rc=$?"; grep -E "^===|^by opcode" "$OUT/prof-bwd1.txt" | cut -c1-400
for f in "$TMPO"/prof/src-*.csv; do [ -f "$f" ] && gzip -c "$f" >"$OUT/$(basename "$f").gz"; done
fi
bwd ${AFTER-base1}
