#!/usr/bin/env bash
# Fourteenth session, second call: the forward's GPU cases under its new
# defaults (tiles from the head dim and key length, 2 stages): every
# "wgmma fwd" case and the three "defaults" cases at 2048 keys, against
# the simulator and under compute-sanitizer.
. bench/device_env.sh
build_release
IFS=, read -ra pats <<<"${GPU_CASES-defaults,wgmma fwd}"
for p in "${pats[@]}"; do
  f="$OUT/gpu-$(echo "$p" | tr ' =' '--').txt"
  GPU_SKIP="ragged fp8 large" timeout ${GPU_S:-200} bash tests/gpu/run.sh "$p" >"$f" 2>&1
  echo "[gpu $p] rc=$?"; grep -E "^(ok|FAIL)|passed|failed" "$f" | tail -30
done
