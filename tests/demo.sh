#!/usr/bin/env bash
# The main job: compile every acceptance kernel and report, per kernel, its
# size and compile time. (Running them comes with the simulator and the GPU
# back end.)
set -eu
cd "$(dirname "$0")/.."
W=build/release/wavec
run() {
  local file=$1; shift
  printf '%-36s %s\n' "$file" "$*"
  if ! out=$($W compile --time "$@" "$file" 2>&1 >/dev/null); then
    printf '%s\n' "$out"; exit 1
  fi
  printf '%s\n' "$out" | sed 's/^/    /'
}
run examples/gemm.wave -D M=4096 -D N=4096 -D K=4096
for hw in "threads_per_wave=64,mma=F32_16x16x16_F16" "threads_per_wave=32,mma=F32_16x8x16_F16"; do
  for nk in 16 32 64; do
    run examples/attention_bwd_dkdv.wave --hardware "$hw" -D B=2 -D M=64 -D K2=64 -D N=$nk -D K1=$nk
  done
done
