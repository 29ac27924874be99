# Line ends and a byte-order mark: a file with CRLF or CR-only (old Mac)
# line ends, or a UTF-8 byte-order mark at its start, compiles to the same
# kernel, with the same lines and columns, as the plain one; a diagnostic
# in it names the same line and column and shows the source line without
# its '\r'. (Written here with printf and tr: such files in git are
# fragile.)
. tests/cli/lib.bash
gemm=(-D M=64 -D N=64 -D K=64)
crlf() { sed 's/$/\r/' "$1"; }
cr() { tr '\n' '\r' <"$1"; }
bom() { printf '\357\273\277'; cat "$1"; }

run 0 compile examples/gemm.wave "${gemm[@]}" --print-after=expand
mv "$T/out" "$T/lf.out"
for f in crlf cr bom; do
  $f examples/gemm.wave >"$T/$f.wave"
  run 0 compile "$T/$f.wave" "${gemm[@]}" --print-after=expand
  cmp -s "$T/lf.out" "$T/out" || fail "$f: not the kernel of the LF file"
done

# an error in the middle of a line, and at the end of one
sed 's/read(a)/raed(a)/' examples/gemm.wave >"$T/raed.wave"
printf 'kernel k(a: Memory[M, f32]) {\n  x = \n}\n' >"$T/eol.wave"
for f in crlf cr; do
  $f "$T/raed.wave" >"$T/raed_$f.wave"
  run 1 check "$T/raed_$f.wave"
  has "$T/err" "raed_$f.wave:15:17: error[E0104]: unknown operation 'raed'"
  has "$T/err" "   15 |         a_reg = raed(a)"
  ! grep -q $'\r' "$T/err" || fail "$f: a '\\r' in the message"
  [ "$(wc -l <"$T/err")" -eq 3 ] || fail "$f: not the three lines of one message"
  $f "$T/eol.wave" >"$T/eol_$f.wave"
  run 1 check "$T/eol_$f.wave"
  has "$T/err" "eol_$f.wave:2:7: error[E0103]: expected an expression but found end of line"
  ! grep -q $'\r' "$T/err" || fail "$f: a '\\r' in the message"
done

# an error on the first line after a byte-order mark: columns count from
# after it, and the line is shown without it
printf '\357\273\277kernel k(a: Memory[M, f32]) { x = $ }\n' >"$T/bom1.wave"
run 1 check "$T/bom1.wave"
printf '%s\n' "$T/bom1.wave:1:35: error[E0101]: invalid character '\$'" \
  '    1 | kernel k(a: Memory[M, f32]) { x = $ }' \
  '      |                                   ^' >"$T/want"
cmp -s "$T/want" "$T/err" || fail "bom: $(diff "$T/want" "$T/err")"
# a byte-order mark elsewhere is still an invalid character
printf 'kernel k(a: Memory[M, f32]) {\n\357\273\277}\n' >"$T/bom2.wave"
run 1 check "$T/bom2.wave"
has "$T/err" "bom2.wave:2:1: error[E0101]: invalid character"
