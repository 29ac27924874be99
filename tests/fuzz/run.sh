#!/usr/bin/env bash
# Runs the fuzz harnesses for SECS seconds in all (default 60), split
# between them by the weights below. Usage:
#   tests/fuzz/run.sh [SECS [HARNESS...]]     (harnesses: front ptx sim npy)
#   tests/fuzz/run.sh --plan SECS             (each harness and its seconds)
# Builds them first (make fuzz: libFuzzer when clang can link it, else the
# standalone mutator, both under ASan+UBSan). Each harness first replays
# tests/fuzz/regress/NAME/ (inputs that once failed), then fuzzes; its
# corpus grows in build/fuzz/corpus/NAME (libFuzzer keeps what reaches new
# code), its seeds are in the repository. Prints one line per harness:
# runs, and how far inputs got. On a crash, a sanitizer report or an input
# running past the timeout, prints the report and the reproducer's path,
# and exits 1 (2 when the harnesses do not build).
set -u
shopt -s nullglob
cd "$(dirname "$0")/../.."
declare -A weight=([front]=15 [ptx]=15 [sim]=20 [npy]=10)
all=(front ptx sim npy)
if [ "${1:-}" = --plan ]; then
  for h in "${all[@]}"; do echo "$h $((${2:-60} * weight[$h] / 60))"; done
  exit 0
fi
secs=${1:-60}
shift || true
out=build/fuzz
# fuzz_npy's scratch files: in memory where there is a /dev/shm
[ -z "${TMPDIR:-}" ] && [ -d /dev/shm ] && [ -w /dev/shm ] && export TMPDIR=/dev/shm
harnesses=("$@")
[ ${#harnesses[@]} -eq 0 ] && harnesses=("${all[@]}")

if ! make --no-print-directory fuzz >"$out.make.log" 2>&1; then
  echo "make fuzz failed:"
  tail -n 30 "$out.make.log"
  exit 2
fi
engine=$(sed -n 's/^make fuzz: .*(\(.*\))$/\1/p' "$out.make.log" | tail -n 1)

total=0
for h in "${harnesses[@]}"; do
  [ -n "${weight[$h]:-}" ] || { echo "unknown harness '$h' (${all[*]})"; exit 2; }
  total=$((total + weight[$h]))
done

rc=0
for h in "${harnesses[@]}"; do
  t=$((secs * weight[$h] / total))
  [ $t -lt 1 ] && t=1
  corpus=$out/corpus/$h
  mkdir -p "$corpus"
  case $h in
  front) # garbage in: the examples, the diagnostic tests and the kernels
    cp examples/*.wave tests/diag/*.wave "$corpus/"
    seeds=(tests/fuzz/seeds/wave); args=(-dict=tests/fuzz/wave.dict -max_len=16384) ;;
  ptx | sim) seeds=(tests/fuzz/seeds/wave); args=(-max_len=16384) ;;
  npy) seeds=(tests/fuzz/seeds/npy); args=(-dict=tests/fuzz/npy.dict -max_len=4096) ;;
  esac
  log=$out/$h.log
  rm -f "$out/$h"-crash-* "$out/$h"-timeout-* "$out/$h"-oom-* "$out/$h"-leak-*
  old=(tests/fuzz/regress/"$h"/*)
  if [ ${#old[@]} -gt 0 ] && ! "$out/fuzz_$h" -timeout=20 -rss_limit_mb=2048 \
      -artifact_prefix="$out/$h-" "${old[@]}" >"$log" 2>&1; then
    rc=1
    echo "fuzz/$h: FAILED replaying tests/fuzz/regress/$h/:"
    grep -vE '^(INFO:|Running:|Executed)' "$log" | tail -n 40
    continue
  fi
  "$out/fuzz_$h" -max_total_time="$t" -timeout=20 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$out/$h-" "${args[@]}" \
    "$corpus" "${seeds[@]}" >"$log" 2>&1
  r=$?
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
  reach=$(sed -n 's/^reach: //p' "$log" | tail -n 1)
  if [ $r -eq 0 ] && [ -n "$runs" ]; then
    echo "fuzz/$h: $runs runs in $t s ($engine), no crash$([ ${#old[@]} -gt 0 ] && echo " (and ${#old[@]} old inputs)")${reach:+; $reach}"
  else
    rc=1
    echo "fuzz/$h: FAILED (exit $r) after ${runs:-?} runs; the end of $log:"
    grep -vE '^(#[0-9]|INFO:|	NEW_FUNC)' "$log" | tail -n 40
    unit=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -n 1)
    [ -n "$unit" ] && echo "fuzz/$h: reproducer: $unit (run it: $out/fuzz_$h $unit)"
  fi
done
exit $rc
