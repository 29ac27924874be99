# Helpers for tests/cli/*.sh (sourced; not a test itself).
# run WANT ARGS...: runs $WAVEC ARGS with stdout in $T/out and stderr in
# $T/err; fails the test unless the exit status is WANT.
set -u
fail() {
  echo "FAIL: $*"
  for f in "$T/out" "$T/err"; do
    [ -s "$f" ] && { echo "--- $(basename "$f"):"; head -c 2000 "$f"; echo; }
  done
  exit 1
}
run() {
  local want=$1
  shift
  "$WAVEC" "$@" >"$T/out" 2>"$T/err"
  local rc=$?
  [ "$rc" -eq "$want" ] || fail "wavec $* exited $rc, want $want"
}
# has FILE TEXT: FILE contains the fixed string TEXT
has() { grep -qF -- "$2" "$1" || fail "$(basename "$1") lacks '$2'"; }
lacks() { ! grep -qF -- "$2" "$1" || fail "$(basename "$1") has '$2'"; }
