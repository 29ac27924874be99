# --kernel NAME parses that kernel alone: an error in another kernel of the
# file (a type error, a syntax error, brackets left open) does not stop it,
# and the whole file still reports the error without --kernel; a name the
# file lacks is a usage error (status 2) that names it.
. tests/cli/lib.bash
good='kernel copy(x: Memory[N, f32], y: Memory[N, f32]) {
    constraints { workgroup(N, 32, 0)
                  wave(N, 32)
                  hardware(threads_per_wave = 32) }
    write(read(x), y)
}'
printf '%s\n' 'kernel typed(x: Memory[N, f32], y: Memory[N, i32]) {' \
  '    constraints { workgroup(N, 32, 0)' '                  wave(N, 32)' \
  '                  hardware(threads_per_wave = 32) }' '    write(read(x), y)' '}' \
  "$good" >"$T/typed.wave"
printf '%s\n' 'kernel syntax(x: Memory[N, f32]) {' '    y = = 3' '}' "$good" >"$T/syntax.wave"
printf '%s\n' 'kernel open(x: Memory[N, f32] {' '    junk { {' "$good" >"$T/open.wave"
for f in typed syntax open; do
  run 1 check "$T/$f.wave" -D N=64
  has "$T/err" "$f.wave:"
  run 0 run "$T/$f.wave" --kernel copy -D N=100
  has "$T/err" "ran copy in the simulator"
done
run 2 check "$T/typed.wave" --kernel nope -D N=64
has "$T/err" "no kernel 'nope'"
# the kernel itself still gets its errors, at its lines
sed 's/write(read(x), y)/write(raed(x), y)/' "$T/typed.wave" >"$T/both.wave"
run 1 check "$T/both.wave" --kernel copy -D N=64
has "$T/err" "both.wave:11:11: error[E0104]: unknown operation 'raed'"
