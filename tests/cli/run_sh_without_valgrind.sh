# tests/run.sh without valgrind: the valgrind group is skipped, loudly (a
# SKIP line at once and again beside the summary), not failed, and the
# README says what `make test` needs.
. tests/cli/lib.bash
WAVEC_VALGRIND=$T/no-such-valgrind tests/run.sh valgrind >"$T/out" 2>"$T/err" ||
  fail "tests/run.sh valgrind without valgrind exited $?"
has "$T/out" "SKIP valgrind ('$T/no-such-valgrind' is not installed"
has "$T/out" "SKIPPED, not run: valgrind"
has "$T/out" "0 passed, 0 failed"
has README.md "valgrind"
