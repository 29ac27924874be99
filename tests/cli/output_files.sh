# -o, --out and --svg write through to what is not a regular file (a FIFO,
# /dev/null, /dev/stdout), follow symbolic links, replace a regular file
# whole through a unique temporary beside it (no FILE.tmp clobbered, none
# left behind, its permission bits kept) and leave no partial file.
. tests/cli/lib.bash
gemm=(examples/gemm.wave -D M=64 -D N=64 -D K=32)
ptx=(compile "${gemm[@]}" --emit=ptx --kernel gemm)
only() { # only FILE...: the directory $T/d holds exactly these names
  local got want
  got=$(cd "$T/d" && ls -A | sort | tr '\n' ' ')
  want=$(printf '%s\n' "$@" | sort | tr '\n' ' ')
  [ "$got" = "$want" ] || fail "$T/d holds '$got', want '$want'"
}
mkdir "$T/d"

# a regular file: replaced whole, mode kept, a same-named .tmp untouched
echo old >"$T/d/g.ptx"
chmod 640 "$T/d/g.ptx"
echo keep >"$T/d/g.ptx.tmp"
run 0 "${ptx[@]}" -o "$T/d/g.ptx"
has "$T/d/g.ptx" ".entry gemm"
[ "$(stat -c %a "$T/d/g.ptx")" = 640 ] || fail "mode $(stat -c %a "$T/d/g.ptx"), want 640"
has "$T/d/g.ptx.tmp" keep
only g.ptx g.ptx.tmp

# a failing compile leaves the old file as it was
cp "$T/d/g.ptx" "$T/want"
run 1 "${ptx[@]}" -D BLOCK_M=48 -o "$T/d/g.ptx"
cmp -s "$T/want" "$T/d/g.ptx" || fail "a failed compile changed g.ptx"
only g.ptx g.ptx.tmp

# symbolic links are followed, relative ones from their own directory;
# a dangling one makes its target
mkdir "$T/d/sub"
ln -s sub/real.ptx "$T/d/link.ptx"
echo old >"$T/d/sub/real.ptx"
run 0 "${ptx[@]}" -o "$T/d/link.ptx"
[ -L "$T/d/link.ptx" ] || fail "link.ptx is no longer a link"
has "$T/d/sub/real.ptx" ".entry gemm"
ln -s sub/new.ptx "$T/d/dangling.ptx"
run 0 "${ptx[@]}" -o "$T/d/dangling.ptx"
[ -L "$T/d/dangling.ptx" ] || fail "dangling.ptx is no longer a link"
has "$T/d/sub/new.ptx" ".entry gemm"
[ "$(ls -A "$T/d/sub" | tr '\n' ' ')" = "new.ptx real.ptx " ] || fail "sub holds $(ls -A "$T/d/sub")"

# a FIFO is written through, for each of the three writers
mkfifo "$T/d/fifo"
for w in ptx npy svg; do
  timeout 60 cat "$T/d/fifo" >"$T/got" &
  reader=$!
  case $w in
  ptx) run 0 "${ptx[@]}" -o "$T/d/fifo" ;;
  npy) run 0 run "${gemm[@]}" --out "c=$T/d/fifo" ;;
  svg) run 0 layout F32_16x8x16_F16 acc --svg "$T/d/fifo" ;;
  esac
  wait $reader || fail "$w: the reader of the FIFO failed"
  [ -p "$T/d/fifo" ] || fail "$w: the FIFO was replaced"
  case $w in
  ptx) has "$T/got" ".entry gemm" ;;
  npy) head -c 6 "$T/got" | grep -q NUMPY || fail "npy: no .npy through the FIFO" ;;
  svg) has "$T/got" "<svg" ;;
  esac
done

# devices and /dev/stdout
[ -c /dev/null ] || fail "/dev/null was not a character device before the test (replaced by something else)"
run 0 "${ptx[@]}" -o /dev/null
[ -c /dev/null ] || fail "/dev/null is no longer a character device"
"$WAVEC" "${ptx[@]}" -o /dev/stdout 2>"$T/err" | cat >"$T/got" || fail "-o /dev/stdout failed"
has "$T/got" ".entry gemm"
# a new file under /dev/shm (a file system for files, unlike the rest of
# /dev, where a new name is refused rather than made a regular file)
if [ -d /dev/shm ] && [ -w /dev/shm ]; then
  shm=/dev/shm/wavec-test-$$.npy
  run 0 run "${gemm[@]}" --out "c=$shm"
  head -c 6 "$shm" | grep -q NUMPY || { rm -f "$shm"; fail "no .npy in $shm"; }
  rm -f "$shm"
fi
run 3 "${ptx[@]}" -o /dev/wavec-no-such-device
[ ! -e /dev/wavec-no-such-device ] || fail "made /dev/wavec-no-such-device"

# --out and --svg to regular files and links: whole files, no leftovers
echo keep >"$T/d/c.npy.tmp"
run 0 run "${gemm[@]}" --out "c=$T/d/c.npy"
has "$T/d/c.npy.tmp" keep
ln -s c.npy "$T/d/c_link.npy"
run 0 run "${gemm[@]}" --out "c=$T/d/c_link.npy"
[ -L "$T/d/c_link.npy" ] || fail "c_link.npy is no longer a link"
run 0 layout F32_16x8x16_F16 acc --svg "$T/d/acc.svg"
has "$T/d/acc.svg" "</svg>"
only g.ptx g.ptx.tmp sub link.ptx dangling.ptx fifo c.npy c.npy.tmp c_link.npy acc.svg

# what cannot be written: a directory, a missing directory
run 3 "${ptx[@]}" -o "$T/d/sub"
has "$T/err" "sub: cannot write: Is a directory"
run 3 run "${gemm[@]}" --out "c=$T/d/none/c.npy"
has "$T/err" "cannot write"
[ ! -e "$T/d/none" ] || fail "made $T/d/none"
only g.ptx g.ptx.tmp sub link.ptx dangling.ptx fifo c.npy c.npy.tmp c_link.npy acc.svg
