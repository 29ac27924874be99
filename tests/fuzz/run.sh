#!/usr/bin/env bash
# Fuzzes the front end for SECS seconds (default 60): libFuzzer when clang
# supports it, else the standalone mutator under ASan/UBSan. Seeds: the
# examples and the diagnostic tests. Exit status non-zero on a crash.
set -eu
cd "$(dirname "$0")/../.."
secs=${1:-60}
out=build/fuzz
mkdir -p $out/corpus
cp examples/*.wave tests/diag/*.wave $out/corpus/ 2>/dev/null || true
srcs=$(ls src/support/*.c src/expr/*.c src/front/*.c src/ir/*.c src/passes/*.c src/target/*.c src/tir/*.c src/runtime/*.c 2>/dev/null || true)
flags="-std=c17 -D_POSIX_C_SOURCE=200809L -Iinclude -Isrc -g -O1"
if command -v clang >/dev/null && echo 'int LLVMFuzzerTestOneInput(const char*d,long n){return 0;}' |
   clang -fsanitize=fuzzer -x c - -o $out/probe 2>/dev/null; then
  # shellcheck disable=SC2086
  clang $flags -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
    tests/fuzz/fuzz_front.c $srcs -lm -ldl -o $out/fuzz_front
  # shellcheck disable=SC2086
  $out/fuzz_front -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
    -max_len=8192 -print_final_stats=1 -artifact_prefix=$out/ $out/corpus 2>$out/log || { tail -50 $out/log; exit 1; }
  grep -E 'stat::number_of_executed_units' $out/log | sed 's/.*: */libFuzzer runs: /'
else
  # shellcheck disable=SC2086
  cc $flags -DWV_FUZZ_MAIN -fsanitize=address,undefined -fno-sanitize-recover=all \
    tests/fuzz/fuzz_front.c $srcs -lm -ldl -o $out/fuzz_main
  $out/fuzz_main "$secs" $out/corpus/*
fi
