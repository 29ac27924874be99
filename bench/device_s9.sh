#!/usr/bin/env bash
# Ninth session (2026-12-07), first call: where the one-pass backward waits,
# instruction by instruction (ncu PC sampling of attention_bwd_fused_wgmma,
# D = 128 and D = 64, N = 4096; the SASS source pages come back gzipped so
# the producer's and the consumers' address ranges can be told apart), then
# the D = 64 one-pass backward's schedules (bench/device_s8d.sh).
set -u
export PATH=$PATH:/usr/local/cuda/bin
OUT=${OUT:-build/out}; mkdir -p "$OUT"
TMPO=$(mktemp -d)
make -s MODE=release -j16 all lib >"$OUT/build.txt" 2>&1 || { tail -30 "$OUT/build.txt"; exit 1; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
WV_PROFILE_ONLY=${PROF:-fused-auto} timeout ${PROF_S:-150} python3 bench/profile_bwd1.py "$TMPO/prof" \
  >"$OUT/prof-bwd1.txt" 2>&1
echo "profile rc=$?"; grep -E "^===|^by opcode" "$OUT/prof-bwd1.txt" | cut -c1-400
for f in "$TMPO"/prof/src-*.csv; do [ -f "$f" ] && gzip -c "$f" >"$OUT/$(basename "$f").gz"; done
WV_PROF_D=64 WV_PROFILE_ONLY=fused-auto timeout ${PROF_S:-150} python3 bench/profile_bwd1.py "$TMPO/prof64" \
  >"$OUT/prof-bwd1-d64.txt" 2>&1
echo "profile d64 rc=$?"; grep -E "^===|^by opcode" "$OUT/prof-bwd1-d64.txt" | cut -c1-400
for f in "$TMPO"/prof64/src-*.csv; do [ -f "$f" ] && gzip -c "$f" >"$OUT/d64-$(basename "$f").gz"; done
bash bench/device_s8d.sh
