#!/usr/bin/env bash
# Ninth session's measurement (not run: the device did not start): the
# one-pass backward with dk running under the staging of dq's reduces and a
# barrier fewer (v0.6.7) against the libraries before it, built on the CPU
# machine and carried: D = 128 and 64, N = 4096, causal and not, each
# beside SDPA-cuDNN in its own process; D = 64 specialized and with
# exchange = 1; the GPU cases of the one-pass backward with memcheck,
# racecheck and synccheck; PROF=fused-auto: ncu's PC samples at D = 128
# (and 64 with PROF_D="128 64"), the SASS source pages gzipped.
#
# Before the call, on the CPU machine (build/ is not committed):
#   git worktree add /tmp/wv-base 03fb21d && make -C /tmp/wv-base -s MODE=release lib
#   mkdir -p build/base && cp /tmp/wv-base/build/release/libwavec.so build/base/
#   (build/base1 likewise from 05470ac, dk under the staging alone)
# and call with carry ["build/base", "build/base1"]. With little device
# time: NOBUILD=1 (the tree's library carried as build/new/libwavec.so
# too, no build on the device, no GPU cases), AFTER= (no base1 rows).
. bench/device_env.sh
NEW=build/release/libwavec.so
if [ -n "${NOBUILD:-}" ]; then NEW=build/new/libwavec.so; else build_release; fi
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
CFGS=${CFGS:-"[(128, 64, 2, {})]"}
# rows: base (03fb21d, before this session), base1 (05470ac), new (the
# tree), spec (the tree at D = 64, specialize = 1), xchg (the tree at
# D = 64, exchange = 1: the descriptor inside a panel)
bwd() { for row in "$@"; do
  L=$NEW; D=${BWD_D:-128,64}; C=$CFGS
  case $row in
    base|base1) L=build/$row/libwavec.so; [ $row = base1 ] && D=128 ;;
    spec) D=64; C="[(128, 64, 2, dict(specialize=1))]" ;;
    xchg) D=64; C="[(128, 64, 2, dict(exchange=1))]" ;;
  esac
  WAVEC_LIB=$L WV_BWD1_D=$D timeout ${BWD_S:-150} python3 -c "
import sys; sys.path.insert(0, 'bench'); import bench
bench.bwd_one_pass(True, $C)" >"$OUT/log-bwd1-$row.txt" 2>&1
  echo "bwd1 $row rc=$?"; grep -E "^bwd1|FAIL|Error" "$OUT/log-bwd1-$row.txt" | cut -c1-220
done; }
bwd base new spec xchg
if [ -z "${NOBUILD:-}" ]; then
  f="$OUT/gpu-bwd1.txt"
  GPU_SKIP="ragged fp8 large" timeout ${GPU_S:-200} bash tests/gpu/run.sh "${GPU_CASES:-bwd1 wgmma fused}" >"$f" 2>&1
  echo "[gpu bwd1] rc=$?"; grep -E "^(ok|FAIL)|passed|failed" "$f" | tail -12
fi
for d in ${PROF:+${PROF_D:-128}}; do
  WAVEC_LIB=$NEW WV_PROF_D=$d WV_PROFILE_ONLY=$PROF timeout ${PROF_S:-150} python3 bench/profile_bwd1.py "$TMPO/prof$d" \
    >"$OUT/prof-bwd1-d$d.txt" 2>&1
  echo "profile D=$d rc=$?"; grep -E "^===|^by opcode|^by role" "$OUT/prof-bwd1-d$d.txt" | cut -c1-400
  for f in "$TMPO/prof$d"/src-*.csv; do [ -f "$f" ] && gzip -c "$f" >"$OUT/d$d-$(basename "$f").gz"; done
done
bwd ${AFTER-base1}
