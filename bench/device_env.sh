# Sourced by the device scripts (device_s10.sh on): strict mode, the CUDA
# tools on PATH, $OUT (what comes back), $TMPO (a scratch folder for what
# should not: a call brings back a limited number of files), and
# build_release (the release library and tools, its log under $OUT), and
# gpu_cases (tests/gpu/run.sh by pattern).
set -u
export PATH=$PATH:/usr/local/cuda/bin
OUT=${OUT:-build/out}; mkdir -p "$OUT"
TMPO=$(mktemp -d)
build_release() {
  make -s MODE=release -j16 all lib >"$OUT/build.txt" 2>&1 || { tail -30 "$OUT/build.txt"; exit 1; }
}
# gpu_cases PATTERNS [SECONDS [LINES]]: tests/gpu/run.sh for each of the
# comma-separated patterns (the ragged, fp8 and large steps left out), at
# most SECONDS each (default 200), its log in $OUT/gpu-PATTERN.txt, the
# last LINES (default 16) of its result lines shown.
gpu_cases() {
  local pats p f
  IFS=, read -ra pats <<<"$1"
  for p in "${pats[@]}"; do
    f="$OUT/gpu-$(echo "$p" | tr ' =' '--').txt"
    GPU_SKIP="ragged fp8 large" timeout "${2:-200}" bash tests/gpu/run.sh "$p" >"$f" 2>&1
    echo "[gpu $p] rc=$?"; grep -E "^(ok|FAIL)|passed|failed" "$f" | tail -"${3:-16}"
  done
}
