# wavec cache: prints the folder, lists entries (a damaged one marked),
# clears entries and writers' leftovers, and leaves other files alone.
. tests/cli/lib.bash
export WAVEC_CACHE_DIR=$T/c
run 0 cache
has "$T/out" "$T/c"
run 0 cache --list
has "$T/out" "0 entries, 0 bytes in $T/c"
mkdir -p "$T/c"
printf 'not an entry' >"$T/c/0123456789abcdef0123456789abcdef.wvbin"
: >"$T/c/.0123456789abcdef0123456789abcdef.wvbin.a1B2c3"
: >"$T/c/keep.txt"
run 0 cache --list
has "$T/out" "corrupt or of another format: $T/c/0123456789abcdef0123456789abcdef.wvbin"
has "$T/out" "1 entry, 12 bytes in $T/c"
run 0 cache --clear
has "$T/out" "removed 2 files from $T/c"
[ -e "$T/c/keep.txt" ] || fail "cache --clear removed a file that is not the cache's"
run 0 cache --list
has "$T/out" "0 entries"
run 2 cache --list --clear
run 2 cache --bogus
has "$T/err" "unknown argument '--bogus'"
unset WAVEC_CACHE_DIR XDG_CACHE_HOME
HOME=$T/home run 0 cache
has "$T/out" "$T/home/.cache/wavec"
XDG_CACHE_HOME=$T/xdg run 0 cache
has "$T/out" "$T/xdg/wavec"
