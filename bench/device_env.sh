# Sourced by the device scripts (device_s10.sh on): strict mode, the CUDA
# tools on PATH, $OUT (what comes back), $TMPO (a scratch folder for what
# should not: a call brings back a limited number of files), and
# build_release (the release library and tools, its log under $OUT).
set -u
export PATH=$PATH:/usr/local/cuda/bin
OUT=${OUT:-build/out}; mkdir -p "$OUT"
TMPO=$(mktemp -d)
build_release() {
  make -s MODE=release -j16 all lib >"$OUT/build.txt" 2>&1 || { tail -30 "$OUT/build.txt"; exit 1; }
}
