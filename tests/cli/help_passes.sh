# --help lists every pass of the pipeline, in the order they run, each with
# its contract; each name it lists is accepted by --print-after and prints.
. tests/cli/lib.bash
run 0 --help
passes=$(sed -n '/^passes (--print-after/,$p' "$T/out" | sed -n 's/^  \([a-z]*\)  .*/\1/p')
n=$(printf '%s\n' "$passes" | grep -c .)
[ "$n" -ge 9 ] || fail "--help lists $n passes"
[ "$(printf '%s\n' "$passes" | head -n 1)" = check ] || fail "the first pass listed is not check"
gemm=(examples/gemm.wave -D M=64 -D N=64 -D K=64)
for p in $passes; do
  run 0 compile "${gemm[@]}" --print-after="$p"
  has "$T/out" "// ---- after $p"
done
run 2 compile "${gemm[@]}" --print-after=nope
has "$T/err" "unknown pass 'nope'"
