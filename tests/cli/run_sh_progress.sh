# tests/run.sh says what a long group is doing as it goes: the valgrind
# group (run here through a stand-in that runs the program without
# valgrind) announces its runs, then every 50 done, before its result.
. tests/cli/lib.bash
cat >"$T/valgrind" <<'SH'
#!/usr/bin/env bash
while [ "${1#-}" != "$1" ]; do shift; done
exec "$@"
SH
chmod +x "$T/valgrind"
n=$(ls tests/diag/*.wave tests/golden/*.test | wc -l)
WAVEC_VALGRIND=$T/valgrind tests/run.sh valgrind >"$T/out" 2>"$T/err" ||
  fail "tests/run.sh valgrind exited $?"
has "$T/out" "---- valgrind: $n runs of build/release/wavec"
has "$T/out" "---- valgrind: 50 of $n runs done"
grep -n . "$T/out" | grep -E -- '---- valgrind: [0-9]+ runs|^[0-9]+:ok   valgrind' |
  cut -d: -f1 | tr '\n' ' ' | awk '{ exit !($1 < $2) }' ||
  fail "the announcement does not come before the result"
