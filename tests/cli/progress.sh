# wavec run draws the simulator's progress on a terminal (workgroups done
# of all, redrawn at most every 100 ms) and clears it before the summary;
# `script` gives it a terminal. Without one (tests/cli/summary.sh) nothing
# is drawn; tests/unit/test_progress.c checks the library's callback.
. tests/cli/lib.bash
if ! script -qec true /dev/null >/dev/null 2>&1; then
  echo "script (util-linux) is not installed: the terminal is not tested here"
  exit 0
fi
# a run of about a second under the sanitizers: 64 workgroups
cmd="$WAVEC run examples/gemm.wave -D M=512 -D N=512 -D K=256"
script -qec "$cmd" "$T/typescript" >/dev/null 2>&1 || fail "$cmd on a terminal failed"
tr -d '\n' <"$T/typescript" | tr '\r' '\n' >"$T/lines"
grep -qE '^wavec: simulating gemm: [0-9]+ of 64 workgroups \([0-9]+%\)' "$T/lines" ||
  fail "no progress on a terminal: $(head -c 600 "$T/typescript")"
# cleared: the summary follows an erase to the end of the line
grep -q $'\r\033\\[Kwavec: ran gemm in the simulator: 64 workgroups' "$T/typescript" ||
  fail "the progress line is not cleared before the summary"
n=$(grep -c '^wavec: simulating gemm' "$T/lines")
[ "$n" -le 200 ] || fail "the progress was redrawn $n times"
