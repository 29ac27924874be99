#!/usr/bin/env bash
# The whole test suite. Usage: tests/run.sh [GROUP...]
# Groups: unit golden diag builder fuzz valgrind (default: all).
# Expects `make MODE=asan all` and `make MODE=release all` to have run
# (`make test` does both). Prints one line per test and, last,
# "N passed, N failed". WAVEC_UPDATE_GOLDEN=1 rewrites golden files.
set -u
cd "$(dirname "$0")/.."
ASAN=build/asan
REL=build/release
WAVEC=$ASAN/wavec
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:halt_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
pass=0
fail=0
failed=()

ok() { pass=$((pass + 1)); echo "ok   $1"; }
bad() {
  fail=$((fail + 1)); failed+=("$1"); echo "FAIL $1"
  [ -n "${2:-}" ] && printf '%s\n' "$2" | head -n 40 | sed 's/^/     /'
  return 0
}

want() { [ $# -eq 0 ] && return 0; for g in "${GROUPS_[@]}"; do [ "$g" = "$1" ] && return 0; done; return 1; }
GROUPS_=("$@")
[ ${#GROUPS_[@]} -eq 0 ] && GROUPS_=(unit golden diag builder fuzz valgrind)

# A test file's command: its first line "# RUN: ARGS" (words, no quoting).
run_line() { sed -n '1s/^# RUN: //p' "$1"; }

# ---- unit tests: each binary prints "ok NAME" / "FAIL NAME" lines --------------
if want unit; then
  for t in $ASAN/tests/*; do
    [ -x "$t" ] || continue
    name=unit/$(basename "$t")
    out=$("$t" 2>&1); rc=$?
    np=$(printf '%s\n' "$out" | grep -c '^ok ' || true)
    nf=$(printf '%s\n' "$out" | grep -c '^FAIL ' || true)
    if [ $rc -eq 0 ] && [ "$nf" -eq 0 ] && [ "$np" -gt 0 ]; then
      ok "$name ($np cases)"
    else
      bad "$name (exit $rc, $nf failed)" "$(printf '%s\n' "$out" | grep -v '^ok ')"
    fi
  done
fi

# ---- golden dumps: tests/golden/NAME.test holds the arguments, NAME.out the
# expected stdout --------------------------------------------------------------
if want golden; then
  for t in tests/golden/*.test; do
    [ -e "$t" ] || continue
    exp=${t%.test}.out
    # shellcheck disable=SC2046
    got=$($WAVEC $(cat "$t") 2>&1); rc=$?
    if [ -n "${WAVEC_UPDATE_GOLDEN:-}" ]; then printf '%s\n' "$got" > "$exp"; fi
    if [ $rc -ne 0 ]; then bad "golden/$(basename "$t" .test) (exit $rc)" "$got"
    elif d=$(diff -u "$exp" <(printf '%s\n' "$got")); then ok "golden/$(basename "$t" .test)"
    else bad "golden/$(basename "$t" .test)" "$d"; fi
  done
fi

# ---- diagnostics: tests/diag/NAME.wave starts with "# RUN: COMMAND [ARGS]";
# NAME.err is the expected stderr; the exit status must be 1 ------------------
if want diag; then
  for t in tests/diag/*.wave; do
    [ -e "$t" ] || continue
    exp=${t%.wave}.err
    # shellcheck disable=SC2046
    got=$($WAVEC $(run_line "$t") "$t" 2>&1 >/dev/null); rc=$?
    if [ -n "${WAVEC_UPDATE_GOLDEN:-}" ]; then printf '%s\n' "$got" > "$exp"; fi
    name=diag/$(basename "$t" .wave)
    if [ $rc -ne 1 ]; then bad "$name (exit $rc, want 1)" "$got"
    elif ! printf '%s\n' "$got" | head -1 | grep -Eq '^[^:]+:[0-9]+:[0-9]+: error\[E[0-9]{4}\]: '; then
      bad "$name (no file:line:col: error[Ennnn])" "$got"
    elif d=$(diff -u "$exp" <(printf '%s\n' "$got")); then ok "$name"
    else bad "$name" "$d"; fi
  done
fi

# ---- the builder example builds the same graph as the parser ----------------
if want builder; then
  strip() { sed -E 's/ +# [0-9]+:[0-9]+$//; s/ +$//'; }
  for ex in $ASAN/examples/*_builder; do
    [ -x "$ex" ] || continue
    base=$(basename "$ex" _builder)
    a=$("$ex" 2>&1); rc1=$?
    b=$($WAVEC check --print-after=check --kernel "$base" "examples/$base.wave" 2>&1 | grep -v '^// ----'); rc2=$?
    if [ $rc1 -ne 0 ] || [ $rc2 -ne 0 ]; then bad "builder/$base (exit $rc1/$rc2)" "$a$b"
    elif d=$(diff -u <(printf '%s\n' "$b" | strip) <(printf '%s\n' "$a" | strip)); then ok "builder/$base"
    else bad "builder/$base" "$d"; fi
  done
fi

# ---- fuzzing the front end for a bounded time -------------------------------
if want fuzz; then
  secs=${WAVEC_FUZZ_SECONDS:-60}
  if out=$(tests/fuzz/run.sh "$secs" 2>&1); then ok "fuzz/front ($secs s: $(printf '%s\n' "$out" | tail -1))"
  else bad "fuzz/front" "$(printf '%s\n' "$out" | tail -40)"; fi
fi

# ---- valgrind: every diagnostic and example path is leak- and error-free in a
# build without sanitizers -----------------------------------------------------
if want valgrind; then
  if command -v valgrind >/dev/null; then
    vfail=0; n=0; vout=""
    for t in tests/diag/*.wave tests/golden/*.test; do
      [ -e "$t" ] || continue
      case $t in *.wave) args="$(run_line "$t") $t" ;; *) args=$(cat "$t") ;; esac
      n=$((n + 1))
      # shellcheck disable=SC2086
      if ! o=$(valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=all $REL/wavec $args 2>&1 >/dev/null); then
        [ $? -eq 99 ] && { vfail=1; vout+="$t: $o"$'\n'; }
      fi
    done
    if [ $vfail -eq 0 ]; then ok "valgrind ($n runs clean)"; else bad "valgrind" "$vout"; fi
  else
    bad "valgrind (not installed)"
  fi
fi

echo
[ $fail -gt 0 ] && printf 'failed: %s\n' "${failed[@]}"
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
