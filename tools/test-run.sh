#!/usr/bin/env bash
# `make test`: runs the command it is given (cargo test --workspace), then says at the end what
# did not run, so that a skip cannot pass for a pass:
#   - every test libtest reports as ignored, with its reason (`#[ignore = "..."]`, and the
#     libtest-mimic harness's runtime skips, such as an API without a device);
#   - every standard-harness test that returned early and noted why in $BLOCKSWEEP_SKIP_LOG
#     (blocksweep_conformance::note_skip; libtest prints those as "ok").
# Exits with the command's status. The test output is on stdout as always (tee keeps a copy);
# the summary goes to stdout after it. TEST_NOTES is where both copies go.
set -uo pipefail
notes=${TEST_NOTES:-target/test-notes}
mkdir -p "$notes"
notes=$(cd "$notes" && pwd)
: > "$notes/skips.txt"
export BLOCKSWEEP_SKIP_LOG=$notes/skips.txt
"$@" | tee "$notes/output.txt"
status=${PIPESTATUS[0]}

# One line per skipped test: its reason. libtest: "test NAME ... ignored[, REASON]";
# libtest-mimic pads NAME and writes "ignored (REASON)"; the skip log: "BIN TEST: REASON".
# A child trial (child_*, ignored) is no skip: its parent test runs it in a process of its own.
ignored_lines() { grep -E '^test .* \.\.\. ignored' "$notes/output.txt"; }
{
  ignored_lines | grep -Ev '^test child_[^ ]* +\.\.\. ignored$' \
    | sed -E 's/^test .* \.\.\. ignored(, (.*)| \((.*)\))?$/\2\3/; s/^$/(no reason given)/'
  sed -E 's/^[^ ]+ [^:]+: //' "$notes/skips.txt"
} > "$notes/reasons.txt"
children=$(ignored_lines | grep -cE '^test child_[^ ]* +\.\.\. ignored$')
n=$(wc -l < "$notes/reasons.txt")
case $n in
  0) echo "make test: no test skipped" ;;
  1) echo "make test: 1 test skipped:" ;;
  *) echo "make test: $n tests skipped:" ;;
esac
sort "$notes/reasons.txt" | uniq -c | sort -rn | sed -E 's/^ *([0-9]+) /  \1 × /'
[ "$children" = 0 ] || echo "  ($children child trials listed as ignored ran inside their parent tests)"
[ "$n" = 0 ] || echo "  (each test's name: $notes/skips.txt and the ignored lines above;" \
  "BLOCKSWEEP_REQUIRE=<api>,slurm,browser makes a missing driver or tool fail instead)"
exit "$status"
