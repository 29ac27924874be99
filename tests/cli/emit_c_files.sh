# compile --emit=c -o FILE.c writes FILE.c and FILE.h all or none: both
# go to temporaries beside them first, so when either cannot be written
# (a directory in its place, a link into a folder that does not exist) or
# the compile fails, both keep what they held and no temporary is left.
# A device, FIFO or /dev/stdout as FILE.c is a usage error (its FILE.h
# would be /dev/stdout.h).
. tests/cli/lib.bash
export WAVEC_CACHE_DIR=$T/cache
export WAVEC_PTXAS=$T/no-ptxas # the PTX alone: no ptxas needed
emit=(compile examples/gemm.wave -D M=64 -D N=64 -D K=32 --target sm_80 --emit=c)
only() { # only FILE...: the directory $T/d holds exactly these names
  local got want
  got=$(cd "$T/d" && ls -A | sort | tr '\n' ' ')
  want=$(printf '%s\n' "$@" | sort | tr '\n' ' ')
  [ "$got" = "$want" ] || fail "$T/d holds '$got', want '$want'"
}
mkdir "$T/d"

# both new, then both replaced, their modes kept
run 0 "${emit[@]}" -o "$T/d/k.c"
has "$T/d/k.h" "gemm_launch("
has "$T/d/k.c" '#include "k.h"'
only k.c k.h
echo "/* old c */" >"$T/d/k.c"
echo "/* old h */" >"$T/d/k.h"
chmod 640 "$T/d/k.h"
run 0 "${emit[@]}" -o "$T/d/k.c"
has "$T/d/k.h" "gemm_launch("
has "$T/d/k.c" "gemm_launch("
[ "$(stat -c %a "$T/d/k.h")" = 640 ] || fail "k.h: mode $(stat -c %a "$T/d/k.h"), want 640"
only k.c k.h

# FILE.c cannot be written: FILE.h is not replaced
olds() {
  echo "/* my old c */" >"$T/d/$1.c"
  echo "/* my old h */" >"$T/d/$1.h"
}
kept() { # NAME: NAME.c and NAME.h (those that are files) hold what olds wrote
  [ ! -f "$T/d/$1.c" ] || [ "$(cat "$T/d/$1.c")" = "/* my old c */" ] || fail "$1.c was replaced"
  [ ! -f "$T/d/$1.h" ] || [ "$(cat "$T/d/$1.h")" = "/* my old h */" ] || fail "$1.h was replaced"
}
rm "$T/d"/*
echo "/* my old h */" >"$T/d/dir.h"
mkdir "$T/d/dir.c"
run 3 "${emit[@]}" -o "$T/d/dir.c"
has "$T/err" "dir.c: cannot write: Is a directory"
kept dir
only dir.c dir.h
# ... nor when its temporary cannot be made, after FILE.h's was written
echo "/* my old h */" >"$T/d/link.h"
ln -s no-such-folder/link.c "$T/d/link.c"
run 3 "${emit[@]}" -o "$T/d/link.c"
has "$T/err" "link.c: cannot write: cannot create a temporary file"
kept link
only dir.c dir.h link.c link.h
# FILE.h cannot be written: FILE.c is not replaced
olds hdir
rm "$T/d/hdir.h"
mkdir "$T/d/hdir.h"
run 3 "${emit[@]}" -o "$T/d/hdir.c"
has "$T/err" "hdir.h: cannot write: Is a directory"
kept hdir
only dir.c dir.h link.c link.h hdir.c hdir.h
# a failing compile writes neither
olds bad
run 1 "${emit[@]}" -D BLOCK_M=48 -o "$T/d/bad.c"
kept bad
only dir.c dir.h link.c link.h hdir.c hdir.h bad.c bad.h

# not a file: a usage error (status 2) before anything is written
for out in /dev/stdout /dev/null "$T/fifo"; do
  [ "$out" != "$T/fifo" ] || mkfifo "$T/fifo"
  run 2 "${emit[@]}" -o "$out"
  has "$T/err" "wavec: --emit=c -o $out: --emit=c writes two files, FILE.c and its header FILE.h beside it: -o needs the path of a regular file, not a device, FIFO or /dev/stdout"
  [ ! -s "$T/out" ] || fail "-o $out printed to stdout"
done
[ ! -e /dev/stdout.h ] && [ ! -e /dev/null.h ] && [ ! -e "$T/fifo.h" ] || fail "a header was made beside a device or FIFO"
