#!/usr/bin/env bash
# Where a user's kernel's run spends its wall time against the built-in sweep's (issue 38: the
# grayscale spec through --kernel at most 1.5x the built-in sweep): each traced
# (BLOCKSWEEP_TRACE=1) and timed, in workers, in process and built-in; tools/h200/trace-summary.py
# sums the phases. Usage: OUT=dir DEV=H100 B=./target/release/blocksweep tools/h200/kernel-trace.sh
set -u
R=${OUT:?}/ktrace
mkdir -p "$R"
B=${B:-./target/release/blocksweep}
DEV=${DEV:-H200}
spec=examples/kernels/grayscale/kernel.toml
for i in 1 2; do
  { /usr/bin/time -f "%e s wall" env BLOCKSWEEP_TRACE=1 "$B" sweep --kernel $spec --device "$DEV" > "$R/spec-$i.txt"; } 2> "$R/spec-workers-trace-$i.txt"
  { /usr/bin/time -f "%e s wall" env BLOCKSWEEP_TRACE=1 "$B" sweep --kernel $spec --device "$DEV" --in-process > /dev/null; } 2> "$R/spec-inproc-trace-$i.txt"
  { /usr/bin/time -f "%e s wall" env BLOCKSWEEP_TRACE=1 "$B" sweep --device "$DEV" > "$R/builtin-$i.txt"; } 2> "$R/builtin-trace-$i.txt"
done
python3 tools/h200/trace-summary.py "$R" > "$R/summary.txt" 2>&1
tar czf "$OUT/ktrace.tgz" -C "$OUT" ktrace && rm -rf "$R"
