#!/usr/bin/env bash
# One device call of a session, by stage, every step under its own limit and
# all output under $OUT (the device machine's output folder):
#   check  build; every GPU test without sanitizers (tests/gpu/run.sh
#          --quick: the cases against the simulator, ragged.c, fp8mma.c,
#          large.c); the sanitizers on the schedule cases and memcheck on
#          ragged.c and fp8mma.c at small sizes; the --emit=c launchers; the
#          Python package on the GPU
#   perf   bench.py's GEMM and attention forward (peers in the same run)
#   sched  bench.py --only schedule, then fp8 and ragged
#   final  every GPU test without sanitizers but large.c (the cases against
#          the simulator, ragged.c, fp8mma.c) and ops.c (QUICK=0: not), the
#          sanitizers on the cases of each pattern FINAL_SAN names (default:
#          store), then the bench.py parts
#          FINAL_PARTS names (default: gemm fwd schedule ragged fp8), then
#          large.c under memcheck in what is left of FINAL_S seconds
#          (FP8_SAN=0: without fp8mma.c's memcheck; QUICK_PAT: only the
#          cases whose name has it, without sanitizers)
#   fix    the GPU cases of a fix (FIX_CASES: run.sh's pattern, default fp8),
#          tests/gpu/ops.c, then bench.py's launch overhead, GEMM and forward
# Usage (device machine, repo root): bash bench/device_session.sh STAGE
set -u
export PATH=$PATH:/usr/local/cuda/bin
mkdir -p build; OUT=${OUT:-build/out}; mkdir -p "$OUT"
t0=$(date +%s)
lap() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
make -s MODE=release -j16 all lib >build/device-build.txt 2>&1 || { tail -20 build/device-build.txt; exit 1; }
lap built
SAN=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
case ${1:-check} in
check)
  timeout 270 bash tests/gpu/run.sh --quick >"$OUT/gpu-quick.txt" 2>&1; echo "rc=$?" >>"$OUT/gpu-quick.txt"
  lap "quick tests"; tail -25 "$OUT/gpu-quick.txt"
  { timeout 100 bash tests/gpu/run.sh sched; echo "rc=$?"
    timeout 50 "$SAN" --tool memcheck --error-exitcode 99 ./build/release/gpu_ragged --max 100 | tail -3; echo "ragged memcheck rc=${PIPESTATUS[0]}"
    timeout 50 "$SAN" --tool memcheck --error-exitcode 99 ./build/release/gpu_fp8mma --max 256 | tail -3; echo "fp8mma memcheck rc=${PIPESTATUS[0]}"
  } >"$OUT/gpu-sanitizers.txt" 2>&1
  lap sanitizers; grep -E "rc=|FAIL|sched" "$OUT/gpu-sanitizers.txt" | tail -12
  { timeout 40 bash tests/gpu/emit_c.sh; echo "emit_c rc=$?"
    WAVEC_LIB=build/release/libwavec.so timeout 60 python3 tests/gpu/test_python.py; echo "python rc=$?"
  } >"$OUT/gpu-emitc-python.txt" 2>&1
  lap "emit_c, python"; grep -E "rc=|FAIL|passed" "$OUT/gpu-emitc-python.txt"
  ;;
perf)
  mkdir -p "$OUT/gemm" "$OUT/fwd"
  timeout 300 python3 bench/bench.py --out "$OUT/gemm" --only gemm >"$OUT/gemm/log.txt" 2>&1; lap "gemm rc=$?"
  timeout 240 python3 bench/bench.py --out "$OUT/fwd" --only fwd >"$OUT/fwd/log.txt" 2>&1; lap "fwd rc=$?"
  tail -30 "$OUT/gemm/log.txt"; tail -30 "$OUT/fwd/log.txt"
  ;;
sched)
  mkdir -p "$OUT/sched" "$OUT/fp8" "$OUT/ragged"
  timeout 330 python3 bench/bench.py --out "$OUT/sched" --only schedule >"$OUT/sched/log.txt" 2>&1; lap "schedule rc=$?"
  timeout 90 python3 bench/bench.py --out "$OUT/fp8" --only fp8 >"$OUT/fp8/log.txt" 2>&1; lap "fp8 rc=$?"
  timeout 120 python3 bench/bench.py --out "$OUT/ragged" --only ragged >"$OUT/ragged/log.txt" 2>&1; lap "ragged rc=$?"
  grep -E "^\|" "$OUT/sched/log.txt" | tail -60; tail -12 "$OUT/fp8/log.txt"; tail -20 "$OUT/ragged/log.txt"
  ;;
final)
  { [ "${QUICK:-1}" = 1 ] && { GPU_SKIP=large timeout ${QUICK_S:-260} bash tests/gpu/run.sh --quick ${QUICK_PAT:-}; echo "cases rc=$?"; }
    if [ "${FP8_SAN:-1}" = 1 ]; then
      timeout 45 "$SAN" --tool memcheck --error-exitcode 99 ./build/release/gpu_fp8mma --max 256 | tail -2
      echo "fp8mma memcheck rc=${PIPESTATUS[0]}"
    fi
  } >"$OUT/gpu-quick.txt" 2>&1
  lap "quick tests"; grep -E "rc=|FAIL|MISMATCH|ERROR|passed" "$OUT/gpu-quick.txt" | tail -20
  # the sanitizers on the tensor-store cases (FINAL_SAN: run.sh's pattern)
  for pat in ${FINAL_SAN-store}; do
    { timeout 200 bash tests/gpu/run.sh "$pat"; echo "$pat rc=$?"; } >>"$OUT/gpu-sanitizers.txt" 2>&1
    lap "sanitizers $pat"
  done
  [ -e "$OUT/gpu-sanitizers.txt" ] && grep -E "rc=|FAIL|MISMATCH|sanitizers|^case [0-9]+ [^s]" "$OUT/gpu-sanitizers.txt" | tail -40
  for part in ${FINAL_PARTS:-gemm fwd schedule ragged fp8}; do
    mkdir -p "$OUT/$part"
    timeout ${PART_S:-90} python3 bench/bench.py --out "$OUT/$part" --only $part >"$OUT/$part/log.txt" 2>&1; lap "$part rc=$?"
  done
  grep -h -E "overhead|timed" "$OUT"/gemm/log.txt
  for part in ${FINAL_PARTS:-gemm fwd schedule ragged fp8}; do
    case $part in
    schedule) grep -h -E "^\|" "$OUT"/schedule/log.txt | grep -E "4096x4096x4096|8192x8192x8192|attn" ;;
    *) grep -h -E "^\|" "$OUT/$part/log.txt" | grep -v flash; grep -h FAIL "$OUT/$part/log.txt" | head -5 ;;
    esac
  done
  # tensors past 2^31 elements under memcheck, in what time is left
  left=$(( ${FINAL_S:-570} - ($(date +%s) - t0) ))
  if [ $left -gt 30 ]; then
    timeout $left "$SAN" --tool memcheck --error-exitcode 99 ./build/release/gpu_large >"$OUT/gpu-large-memcheck.txt" 2>&1
    echo "large memcheck rc=$? (limit $left s)" >>"$OUT/gpu-large-memcheck.txt"
    tail -4 "$OUT/gpu-large-memcheck.txt"
  fi
  ;;
fix)
  {
    timeout 150 bash tests/gpu/run.sh --quick "${FIX_CASES:-fp8}" | tail -30; echo "cases rc=${PIPESTATUS[0]}"
  } >"$OUT/gpu-fix.txt" 2>&1
  lap "fix cases"; cat "$OUT/gpu-fix.txt" | tail -34
  mkdir -p "$OUT/gemm" "$OUT/fwd"
  timeout 300 python3 bench/bench.py --out "$OUT/gemm" --only gemm >"$OUT/gemm/log.txt" 2>&1; lap "gemm rc=$?"
  timeout 200 python3 bench/bench.py --out "$OUT/fwd" --only fwd >"$OUT/fwd/log.txt" 2>&1; lap "fwd rc=$?"
  grep -E "overhead|timed|^\|" "$OUT/gemm/log.txt" | tail -30; grep -E "^\|" "$OUT/fwd/log.txt" | grep -v flash | tail -20
  ;;
esac
rm -f "$OUT"/*/results.png "$OUT"/*/results.json  # 8 files come back at most
[ "${1:-}" = final ] && { cd "$OUT" && tar czf bench.tgz */ && rm -rf */; }
lap done
