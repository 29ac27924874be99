# On success check and run say so on stderr in one line: what was checked
# or run, where, and how long it took (and run the files it wrote); with
# stderr not a terminal that line is all (no progress). stdout is as before.
. tests/cli/lib.bash
run 0 check examples/gemm.wave
[ ! -s "$T/out" ] || fail "check printed on stdout"
[ "$(wc -l <"$T/err")" -eq 1 ] || fail "check printed more than one line"
grep -qE '^wavec: checked gemm in examples/gemm\.wave: no errors \([0-9.]+ (ms|s)\)$' "$T/err" ||
  fail "no check summary"
run 0 check examples/attention_bwd.wave
grep -qE '^wavec: checked 6 kernels in examples/attention_bwd\.wave \(attention_bwd_D, attention_bwd_dkdv, .*\): no errors \([0-9.]+ (ms|s)\)$' "$T/err" ||
  fail "no check summary for several kernels"
run 0 check examples/attention_bwd.wave --kernel attention_bwd_dq
grep -qE '^wavec: checked attention_bwd_dq in examples/attention_bwd\.wave: no errors' "$T/err" ||
  fail "no check summary for --kernel"
# a failed check says nothing of success
run 1 check tests/diag/dim_unknown.wave
lacks "$T/err" "no errors"

gemm=(examples/gemm.wave -D M=256 -D N=128 -D K=64)
run 0 run "${gemm[@]}" --out c="$T/c.npy"
[ ! -s "$T/out" ] || fail "run printed on stdout"
[ "$(wc -l <"$T/err")" -eq 1 ] || fail "run printed more than one line (progress without a terminal?)"
grep -qE "^wavec: ran gemm in the simulator: 8 workgroups in [0-9.]+ (ms|s); wrote $T/c\.npy \(c\)$" "$T/err" ||
  fail "no run summary"
! grep -q $'\r' "$T/err" || fail "a carriage return (progress) on stderr that is no terminal"
run 0 run "${gemm[@]}"
grep -qE '^wavec: ran gemm in the simulator: 8 workgroups in [0-9.]+ (ms|s)$' "$T/err" ||
  fail "no run summary without --out"
run 1 run tests/diag/sim_step_budget.wave --max-steps 1000
lacks "$T/err" "wavec: ran"
