# --max-steps N: the simulator's step budget. A run past it fails (exit 1,
# E0614) at the loop it was in; a budget it fits in changes nothing; the
# value must be a positive number, and only run takes it.
. tests/cli/lib.bash
spin=tests/diag/sim_step_budget.wave
run 1 run "$spin" --max-steps 5000
head -n 1 "$T/err" | grep -q "^$spin:28:38: error\[E0614\]: .*budget of 5000 steps" ||
  fail "the budget error is not at the innermost loop"
gemm=(examples/gemm.wave -D M=64 -D N=64 -D K=64)
run 0 run "${gemm[@]}" --out c="$T/c.npy"
cp "$T/c.npy" "$T/c_default.npy"
run 0 run "${gemm[@]}" --max-steps 1000000 --out c="$T/c.npy"
cmp -s "$T/c.npy" "$T/c_default.npy" || fail "a budget that fits changed the result"
run 1 run "${gemm[@]}" --max-steps 100 --out c="$T/small.npy"
has "$T/err" "error[E0614]"
[ ! -e "$T/small.npy" ] || fail "a run past its budget wrote its output"
for bad in 0 -1 1e6 12x 99999999999999999999999; do
  run 2 run "${gemm[@]}" --max-steps "$bad"
  has "$T/err" "--max-steps wants a positive number"
done
run 2 run "${gemm[@]}" --max-steps ""
has "$T/err" "--max-steps wants a value (--max-steps N or --max-steps=N)"
run 2 compile "${gemm[@]}" --max-steps 100
has "$T/err" "--max-steps is for run"
run 0 --help
has "$T/out" "--max-steps N"
# --tolerance X: the limit of run --compare sim (which needs a GPU: here
# only what is refused before any run)
for bad in 0 1 -1e-3 x 1e-3x; do
  run 2 run "${gemm[@]}" --target sm_90 --compare sim --tolerance "$bad"
  has "$T/err" "--tolerance wants a number between 0 and 1"
done
run 2 run "${gemm[@]}" --target sm_90 --compare sim --tolerance ""
has "$T/err" "--tolerance wants a value (--tolerance X or --tolerance=X)"
run 2 run "${gemm[@]}" --tolerance 1e-2
has "$T/err" "--tolerance is for run --compare sim"
run 0 --help
has "$T/out" "--tolerance X"
