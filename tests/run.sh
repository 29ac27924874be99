#!/usr/bin/env bash
# The whole test suite. Usage: tests/run.sh [GROUP...]
# Groups: unit golden diag cli python builder build fuzz valgrind (default: all).
# Expects `make MODE=asan all` and `make MODE=release all` to have run
# (`make test` does both). Prints one line per test, a "---- " line as a
# long group (fuzz, valgrind) starts each step, and, last,
# "N passed, N failed"; the exit status is 0 only when nothing failed.
#
#   WAVEC_UPDATE_GOLDEN=1   rewrite tests/golden/*.out and tests/diag/*.err
#                           from the compiler's output (review the diff!)
#   WAVEC_FUZZ_SECONDS=N    how long the fuzz group fuzzes (default 60, split
#                           between the harnesses: tests/fuzz/run.sh)
#   WAVEC_TEST_TIMEOUT=N    seconds one compiler run may take (default 120)
#   WAVEC_VALGRIND=CMD      the valgrind the valgrind group runs (default
#                           valgrind); when it is not installed the group is
#                           skipped, and the skip is listed before the summary
#
# Test files:
#   tests/golden/NAME.test  one line: the wavec arguments; NAME.out is the
#                           expected stdout; the exit status must be 0.
#   tests/diag/NAME.wave    first line "# RUN: COMMAND [ARGS]" (words, no
#                           quoting): wavec runs COMMAND ARGS NAME.wave;
#                           NAME.err is the expected stderr; the exit status
#                           must be 1 and stderr must start with
#                           "NAME.wave:LINE:COL: error[Ennnn]: " (a code of
#                           WV_DIAGS in src/support/base.h) and show a caret.
#   tests/cli/NAME.sh       a bash script run with WAVEC (the sanitizer
#                           build of wavec) and T (an empty directory of its
#                           own) in the environment, in the repository root;
#                           exit 0 passes, anything else fails and shows
#                           its output; a line "SKIPPED: WHY" it prints is
#                           listed with the skips.
#   tests/unit/NAME.c       a program printing "ok CASE" / "FAIL CASE"
#                           lines; a line "SKIPPED: WHY" (a part it could
#                           not run, such as ptxas missing) is listed with
#                           the skips before the summary.
#   tests/python/test_*.py  the Python package's CPU tests (unittest), run
#                           by tests/python/run.py on the release build's
#                           libwavec.so (`make lib`) with NumPy; a case
#                           that cannot run here (torch absent) is a SKIP.
# The compile cache of every test is a temporary folder (WAVEC_CACHE_DIR).
set -u
cd "$(dirname "$0")/.."
ASAN=build/asan
REL=build/release
WAVEC=$ASAN/wavec
# A sanitizer report exits 86, never 1: a diagnostic test cannot pass by
# crashing with the status of a user error.
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:halt_on_error=1:exitcode=86
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1:exitcode=86
export LSAN_OPTIONS=exitcode=86
TIMEOUT=${WAVEC_TEST_TIMEOUT:-120}
UPDATE=${WAVEC_UPDATE_GOLDEN:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export WAVEC_CACHE_DIR=$tmp/cache

pass=0
fail=0
failed=()
skipped=()

ok() { pass=$((pass + 1)); echo "ok   $1"; }
bad() {
  fail=$((fail + 1)); failed+=("$1"); echo "FAIL $1"
  [ -n "${2:-}" ] && printf '%s\n' "$2" | head -n 40 | sed 's/^/     /'
  return 0
}

# A group that cannot run here: said at once and again before the summary.
skip() { skipped+=("$1"); echo "SKIP $1"; }

# What a long group is doing, as it starts it.
note() { echo "---- $*"; }

# Runs a command with a time limit (exit 124 when it runs out).
if command -v timeout >/dev/null; then
  limit() { timeout -k 10 "$TIMEOUT" "$@"; }
else
  limit() { "$@"; }
fi

ALL_GROUPS=(unit golden diag cli python builder build fuzz valgrind)
GROUPS_=("$@")
[ ${#GROUPS_[@]} -eq 0 ] && GROUPS_=("${ALL_GROUPS[@]}")
for g in "${GROUPS_[@]}"; do
  case " ${ALL_GROUPS[*]} " in
  *" $g "*) ;;
  *) bad "unknown group '$g' (groups: ${ALL_GROUPS[*]})" ;;
  esac
done
want() { for g in "${GROUPS_[@]}"; do [ "$g" = "$1" ] && return 0; done; return 1; }

# The binaries a group needs; reports and returns 1 when one is missing.
have() {
  local b
  for b in "$@"; do
    if [ ! -x "$b" ]; then
      bad "$b is not built (run make test, or make MODE=asan all and make MODE=release all)"
      return 1
    fi
  done
}

# A diagnostic test's arguments: the words of its first line after "# RUN: ".
run_line() { sed -n '1s/^# RUN: //p' "$1"; }

# The summary of the first line of a diagnostic, or "" when it is not
# "FILE:LINE:COL: error[Ennnn]: ..." with FILE the test file and a code of
# WV_DIAGS.
diag_shape() {
  local file=$1 first=$2 num
  [[ $first == "$file:"* ]] || { echo "first line does not start with '$file:'"; return; }
  [[ $first =~ ^[^:]+:[0-9]+:[0-9]+:\ error\[E([0-9]{4})\]:\ . ]] ||
    { echo "first line is not FILE:LINE:COL: error[Ennnn]: MESSAGE"; return; }
  num=$((10#${BASH_REMATCH[1]}))
  grep -Eq "X\(D_[A-Z0-9_]+, *$num," src/support/base.h ||
    echo "code E${BASH_REMATCH[1]} is not in WV_DIAGS (src/support/base.h)"
}

# ---- unit tests: each binary prints "ok NAME" / "FAIL NAME" lines --------------
if want unit; then
  n=0
  for src in tests/unit/*.c; do
    [ -e "$src" ] || continue
    n=$((n + 1))
    name=unit/$(basename "$src" .c)
    t=$ASAN/tests/$(basename "$src" .c)
    have "$t" || continue
    limit "$t" >"$tmp/out" 2>&1; rc=$?
    np=$(grep -c '^ok ' "$tmp/out")
    nf=$(grep -c '^FAIL ' "$tmp/out")
    if [ $rc -eq 0 ] && [ "$nf" -eq 0 ] && [ "$np" -gt 0 ]; then
      ok "$name ($np cases)"
      # a part it could not run says "SKIPPED: why" (test_ptx without ptxas)
      while IFS= read -r line; do
        skip "$name: ${line#SKIPPED: }"
      done < <(grep '^SKIPPED: ' "$tmp/out")
    else
      bad "$name (exit $rc, $np passed, $nf failed)" "$(grep -v '^ok ' "$tmp/out")"
    fi
  done
  [ $n -eq 0 ] && bad "unit (no tests in tests/unit)"
fi

# ---- golden dumps: tests/golden/NAME.test holds the arguments, NAME.out the
# expected stdout --------------------------------------------------------------
if want golden && have "$WAVEC"; then
  n=0
  for t in tests/golden/*.test; do
    [ -e "$t" ] || continue
    n=$((n + 1))
    name=golden/$(basename "$t" .test)
    exp=${t%.test}.out
    read -ra args <"$t"
    limit "$WAVEC" "${args[@]}" >"$tmp/out" 2>"$tmp/err"; rc=$?
    if [ $rc -ne 0 ]; then bad "$name (exit $rc, want 0)" "$(cat "$tmp/err")"; continue; fi
    [ -n "$UPDATE" ] && cp "$tmp/out" "$exp"
    if [ ! -e "$exp" ]; then bad "$name (no $exp; make it with WAVEC_UPDATE_GOLDEN=1)"
    elif d=$(diff -u "$exp" "$tmp/out"); then ok "$name"
    else bad "$name (stdout differs from $exp)" "$d"; fi
  done
  [ $n -eq 0 ] && bad "golden (no tests in tests/golden)"
fi

# ---- diagnostics: tests/diag/NAME.wave, NAME.err ------------------------------
if want diag && have "$WAVEC"; then
  n=0
  for t in tests/diag/*.wave; do
    [ -e "$t" ] || continue
    n=$((n + 1))
    name=diag/$(basename "$t" .wave)
    exp=${t%.wave}.err
    line=$(run_line "$t")
    if [ -z "$line" ]; then bad "$name (first line is not '# RUN: COMMAND [ARGS]')"; continue; fi
    read -ra args <<<"$line"
    limit "$WAVEC" "${args[@]}" "$t" >/dev/null 2>"$tmp/err"; rc=$?
    if [ $rc -ne 1 ]; then bad "$name (exit $rc, want 1)" "$(cat "$tmp/err")"; continue; fi
    [ -n "$UPDATE" ] && cp "$tmp/err" "$exp"
    shape=$(diag_shape "$t" "$(head -n 1 "$tmp/err")")
    if [ -n "$shape" ]; then bad "$name ($shape)" "$(cat "$tmp/err")"
    elif ! grep -Eq '^ +\| [[:space:]]*\^' "$tmp/err"; then bad "$name (no caret line)" "$(cat "$tmp/err")"
    elif [ ! -e "$exp" ]; then bad "$name (no $exp; make it with WAVEC_UPDATE_GOLDEN=1)"
    elif d=$(diff -u "$exp" "$tmp/err"); then ok "$name"
    else bad "$name (stderr differs from $exp)" "$d"; fi
  done
  [ $n -eq 0 ] && bad "diag (no tests in tests/diag)"
fi

# ---- the command line: tests/cli/NAME.sh ------------------------------------
if want cli && have "$WAVEC"; then
  n=0
  for t in tests/cli/*.sh; do
    [ -e "$t" ] || continue
    n=$((n + 1))
    name=cli/$(basename "$t" .sh)
    rm -rf "$tmp/cli" && mkdir "$tmp/cli"
    WAVEC=$WAVEC T=$tmp/cli limit bash "$t" >"$tmp/out" 2>&1; rc=$?
    if [ $rc -eq 0 ]; then
      ok "$name"
      # a part it could not run says "SKIPPED: why" (no cuda.h)
      while IFS= read -r line; do
        skip "$name: ${line#SKIPPED: }"
      done < <(grep '^SKIPPED: ' "$tmp/out")
    else bad "$name (exit $rc)" "$(cat "$tmp/out")"; fi
  done
  [ $n -eq 0 ] && bad "cli (no tests in tests/cli)"
fi

# ---- the Python package: tests/python/test_*.py ------------------------------
if want python; then
  so=$REL/libwavec.so
  if ! command -v python3 >/dev/null; then
    bad "python (python3 is not installed)"
  elif ! python3 -c 'import numpy' 2>/dev/null; then
    bad "python (NumPy is not installed: python3 -m pip install numpy)"
  elif have "$so"; then
    n=0
    for t in tests/python/test_*.py; do
      [ -e "$t" ] || continue
      n=$((n + 1))
      name=python/$(basename "$t" .py)
      WAVEC_LIB=$so limit python3 tests/python/run.py "$(basename "$t" .py)" >"$tmp/out" 2>&1; rc=$?
      np=$(grep -c '^ok ' "$tmp/out")
      nf=$(grep -c '^FAIL ' "$tmp/out")
      while IFS= read -r line; do skip "$name: ${line#SKIP }"; done < <(grep '^SKIP ' "$tmp/out")
      if [ $rc -eq 0 ] && [ "$nf" -eq 0 ] && [ "$np" -gt 0 ]; then
        ok "$name ($np cases)"
      else
        bad "$name (exit $rc, $np passed, $nf failed)" "$(grep -v '^ok ' "$tmp/out")"
      fi
    done
    [ $n -eq 0 ] && bad "python (no tests in tests/python)"
  fi
fi

# ---- the builder examples build the same graph as the parser ----------------
if want builder && have "$WAVEC"; then
  n=0
  strip() { sed -E 's/ +# [0-9]+:[0-9]+$//; s/ +$//'; }
  for src in examples/*_builder.c; do
    [ -e "$src" ] || continue
    n=$((n + 1))
    base=$(basename "$src" _builder.c)
    ex=$ASAN/examples/${base}_builder
    have "$ex" || continue
    limit "$ex" >"$tmp/a" 2>&1; rc1=$?
    # stdout only: check says on stderr that it succeeded
    limit "$WAVEC" check --print-after=check --kernel "$base" "examples/$base.wave" >"$tmp/b" 2>"$tmp/berr"; rc2=$?
    if [ $rc1 -ne 0 ] || [ $rc2 -ne 0 ]; then
      bad "builder/$base (exit $rc1/$rc2)" "$(cat "$tmp/a" "$tmp/b" "$tmp/berr")"
    elif d=$(diff -u <(grep -v '^// ----' "$tmp/b" | strip) <(strip <"$tmp/a")); then
      ok "builder/$base"
    else bad "builder/$base (the builder's graph differs from the parser's)" "$d"; fi
  done
  [ $n -eq 0 ] && bad "builder (no examples/*_builder.c)"
fi

# ---- the build itself: the other compiler, header dependencies, the
# libraries' exported names, make install --------------------------------------
# make runs here without the make that may have started this script.
mk() { env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make "$@"; }
if want build; then
  # clang builds everything with the project's flags (-Werror) too; its
  # release wavec gives the golden output (a different compiler's code for
  # the same source).
  if ! command -v clang >/dev/null; then
    skip "build/clang (clang is not installed; the group builds with it: apt-get install clang)"
  elif ! mk -j"$(nproc 2>/dev/null || echo 2)" CC=clang BUILD=build/clang MODE=release all >"$tmp/out" 2>&1; then
    bad "build/clang (make CC=clang failed)" "$(grep -E 'error|warning' "$tmp/out" | head -n 20)"
  else
    n=0; nbad=0; gout=""
    for t in tests/golden/*.test; do
      [ -e "$t" ] || continue
      n=$((n + 1))
      read -ra args <"$t"
      if ! limit build/clang/release/wavec "${args[@]}" 2>/dev/null | cmp -s - "${t%.test}.out"; then
        nbad=$((nbad + 1)); gout+="$t"$'\n'
      fi
    done
    if [ $nbad -eq 0 ]; then ok "build/clang (make CC=clang all; $n golden outputs the same)"
    else bad "build/clang ($nbad of $n golden outputs differ)" "$gout"; fi
  fi
  # Every file that includes a header is rebuilt when the header changes:
  # `make -n -W HEADER` (as if HEADER were edited) must rebuild each object
  # or program whose source includes it, directly.
  if have "$WAVEC"; then
    n=0; miss=""
    for h in src/*/*.h include/wavec.h tests/unit/check.h; do
      case $h in
      src/*) inc=${h#src/} ;;
      *) inc=$(basename "$h") ;;
      esac
      plan=$(mk -n -W "$h" MODE=asan all 2>/dev/null)
      for f in $(grep -l -F "#include \"$inc\"" src/*/*.c tests/unit/*.c tools/*.c examples/*.c 2>/dev/null); do
        case $f in
        src/*) prod=$ASAN/${f%.c}.o ;;
        tests/unit/*) prod=$ASAN/tests/$(basename "$f" .c) ;;
        *) prod=$ASAN/${f%.c} ;;
        esac
        n=$((n + 1))
        grep -qF -- "-o $prod" <<<"$plan" || miss+="$h: $prod is not rebuilt"$'\n'
      done
    done
    if [ $n -eq 0 ]; then bad "build/depend (no includes found)"
    elif [ -z "$miss" ]; then ok "build/depend ($n header inclusions tracked)"
    else bad "build/depend (a header change rebuilds too little)" "$miss"; fi
  fi
  # The libraries export the API and nothing else: the defined global
  # symbols of libwavec.so and libwavec.a are exactly the functions
  # include/wavec.h declares with WAVEC_API.
  api=$(sed -nE 's/^WAVEC_API .*[ *](wavec_[a-z0-9_]+)\(.*/\1/p' include/wavec.h | sort)
  if [ ! -e "$REL/libwavec.so" ] || [ ! -e "$REL/libwavec.a" ]; then
    bad "build/lib ($REL/libwavec.so or .a is not built: run make test, or make MODE=release all)"
  else
    so=$(nm -D --defined-only "$REL/libwavec.so" | awk 'NF == 3 {print $3}' | sort)
    ar=$(nm -g --defined-only "$REL/libwavec.a" | awk 'NF == 3 {print $3}' | sort)
    n=$(grep -c . <<<"$api")
    if [ "$n" -lt 50 ]; then bad "build/lib (only $n WAVEC_API functions found in include/wavec.h)"
    elif [ "$so" != "$api" ]; then bad "build/lib (libwavec.so exports other names than WAVEC_API)" "$(diff <(echo "$api") <(echo "$so"))"
    elif [ "$ar" != "$api" ]; then bad "build/lib (libwavec.a defines other global names than WAVEC_API)" "$(diff <(echo "$api") <(echo "$ar"))"
    else ok "build/lib (libwavec.so and libwavec.a: the $n WAVEC_API functions only)"; fi
  fi
  # make install into a fresh prefix; a user's program (tests/install)
  # built against the installed header with -lwavec (shared) and against
  # libwavec.a (static) runs; the header also compiles as C99 -pedantic.
  pre=$tmp/prefix
  if ! mk MODE=release install PREFIX="$pre" >"$tmp/out" 2>&1; then
    bad "build/install (make install failed)" "$(tail -n 20 "$tmp/out")"
  else
    why=""
    for f in bin/wavec include/wavec.h lib/libwavec.a lib/libwavec.so; do
      [ -e "$pre/$f" ] || why+="$f is not installed; "
    done
    use=tests/install/use_wavec.c
    if [ -n "$why" ]; then :
    elif ! cc -std=c99 -pedantic -Wall -Wextra -Werror -I"$pre/include" "$use" \
           -L"$pre/lib" -lwavec -o "$tmp/use_so" >"$tmp/out" 2>&1; then
      why="linking against the installed libwavec.so failed: $(head -n 5 "$tmp/out")"
    elif ! LD_LIBRARY_PATH=$pre/lib limit "$tmp/use_so" >"$tmp/out" 2>&1; then
      why="the program linked against libwavec.so: $(cat "$tmp/out")"
    elif ! LD_LIBRARY_PATH=$pre/lib ldd "$tmp/use_so" | grep -qF "$pre/lib/libwavec.so"; then
      why="the program did not load the installed libwavec.so"
    elif ! cc -std=c99 -I"$pre/include" "$use" "$pre/lib/libwavec.a" -lm -ldl \
           -o "$tmp/use_a" >"$tmp/out" 2>&1; then
      why="linking against the installed libwavec.a failed: $(head -n 5 "$tmp/out")"
    elif ! limit "$tmp/use_a" >"$tmp/out" 2>&1; then
      why="the program linked against libwavec.a: $(cat "$tmp/out")"
    elif ! "$pre/bin/wavec" check examples/gemm.wave >"$tmp/out" 2>&1; then
      why="the installed wavec: $(head -n 5 "$tmp/out")"
    fi
    if [ -z "$why" ]; then ok "build/install (make install; a program against the installed header, .so and .a)"
    else bad "build/install ($why)"; fi
  fi
fi

# ---- fuzzing: every harness of tests/fuzz for its share of the time ----------
if want fuzz; then
  secs=${WAVEC_FUZZ_SECONDS:-60}
  note "fuzz: make fuzz (the first time: builds the library again), then" \
    "$(tests/fuzz/run.sh --plan "$secs" | awk '{printf "%s%s %s s", (NR > 1 ? ", " : ""), $1, $2}')"
  while read -r h t; do
    note "fuzz/$h: fuzzing for $t s$([ -d "tests/fuzz/regress/$h" ] && echo ", after replaying tests/fuzz/regress/$h/")"
    # the time limit leaves room for building the harnesses
    if out=$(timeout -k 10 $((t + 900)) tests/fuzz/run.sh "$t" "$h" 2>&1); then
      ok "fuzz/$h (${out#fuzz/$h: })"
    else
      bad "fuzz/$h (exit $?)" "$(printf '%s\n' "$out" | tail -n 40)"
    fi
  done < <(tests/fuzz/run.sh --plan "$secs")
fi

# ---- valgrind: the release build (no sanitizers) over every diagnostic and
# golden case: no memory error, no leak, and the same exit status and output
# as the tests expect --------------------------------------------------------
if want valgrind; then
  VALGRIND=${WAVEC_VALGRIND:-valgrind}
  if ! command -v "$VALGRIND" >/dev/null; then
    skip "valgrind ('$VALGRIND' is not installed; the group needs it: apt-get install valgrind)"
  elif have "$REL/wavec"; then
    n=0; nbad=0; vout=""
    cases=(tests/diag/*.wave tests/golden/*.test)
    note "valgrind: ${#cases[@]} runs of $REL/wavec (the diagnostic and golden cases)"
    for t in "${cases[@]}"; do
      [ -e "$t" ] || continue
      [ $n -gt 0 ] && [ $((n % 50)) -eq 0 ] && note "valgrind: $n of ${#cases[@]} runs done"
      case $t in
      *.wave) read -ra args <<<"$(run_line "$t")"; args+=("$t"); want_rc=1; exp=${t%.wave}.err ;;
      *) read -ra args <"$t"; want_rc=0; exp=${t%.test}.out ;;
      esac
      n=$((n + 1))
      limit "$VALGRIND" -q --error-exitcode=99 --leak-check=full --show-leak-kinds=all \
        --errors-for-leak-kinds=all "$REL/wavec" "${args[@]}" >"$tmp/out" 2>"$tmp/err"
      rc=$?
      why=""
      if [ $rc -eq 99 ]; then why="valgrind found errors"
      elif [ $rc -ne $want_rc ]; then why="exit $rc, want $want_rc"
      elif [ $want_rc -eq 1 ] && ! cmp -s "$exp" "$tmp/err"; then why="stderr differs from $exp"
      elif [ $want_rc -eq 0 ] && ! cmp -s "$exp" "$tmp/out"; then why="stdout differs from $exp"
      fi
      if [ -n "$why" ]; then
        nbad=$((nbad + 1))
        vout+="$t: $why"$'\n'"$(head -n 20 "$tmp/err")"$'\n'
      fi
    done
    if [ $n -eq 0 ]; then bad "valgrind (no diagnostic or golden cases to run)"
    elif [ $nbad -eq 0 ]; then ok "valgrind ($n runs of $REL/wavec clean)"
    else bad "valgrind ($nbad of $n runs failed)" "$vout"; fi
  fi
fi

[ $((pass + fail + ${#skipped[@]})) -eq 0 ] && bad "no tests ran"
echo
[ $fail -gt 0 ] && printf 'failed: %s\n' "${failed[@]}"
[ ${#skipped[@]} -gt 0 ] && printf 'SKIPPED, not run: %s\n' "${skipped[@]}"
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
