# 8-bit tensors in .npy files: fp8 as their raw bytes ('|u1'), i8 as '|i1'.
# run writes them (--out) and reads them back (--arg): a second run on the
# first one's inputs, with another seed, gives the same product byte for
# byte; the headers name the dtypes.
. tests/cli/lib.bash
for k in "examples/gemm_fp8.wave gemm_fp8_sync |u1 scale_a scale_b" \
         "examples/gemm_i8.wave gemm_i8_sync |i1"; do
  set -- $k
  sz=(-D M=32 -D N=40 -D K=64)
  outs=() args=()
  for x in a b "${@:4}"; do
    outs+=(--out "$x=$T/$x.npy")
    args+=(--arg "$x=$T/$x.npy")
  done
  run 0 run "$1" --kernel "$2" "${sz[@]}" "${outs[@]}" --out c="$T/c.npy"
  head -c 128 "$T/a.npy" | grep -qaF "'descr': '$3'" || fail "$2: a.npy is not '$3'"
  run 0 run "$1" --kernel "$2" "${sz[@]}" --seed 99 "${args[@]}" --out c="$T/c2.npy"
  cmp -s "$T/c.npy" "$T/c2.npy" || fail "$2: the inputs read back gave another product"
  run 0 run "$1" --kernel "$2" "${sz[@]}" --seed 99 --out c="$T/c3.npy"
  ! cmp -s "$T/c.npy" "$T/c3.npy" || fail "$2: another seed gave the same product"
done
