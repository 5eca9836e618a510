#!/usr/bin/env bash
# How soon a kernel past the deadline (BLOCKSWEEP_DEADLINE_S, 0.5 s in the tests) returns its
# error, and how soon its backend drops: a timing, so a benchmark run by hand on an idle
# machine, not a test (the tests check only that the deadline fired, by its words).
# Fails when an error came later than LIMIT_S (default 1.5) seconds.
set -euo pipefail
cd "$(dirname "$0")/../.."
limit="${LIMIT_S:-1.5}"
out=$(mktemp)
trap 'rm -f "$out"' EXIT
# Each deadline trial runs in a child process with the deadline set (its parent captures its
# output): run the children directly, their output shown.
export BLOCKSWEEP_DEADLINE_S=0.5
cargo test -q -p blocksweep-opencl --test program -- --exact child_deadline --ignored \
    --nocapture --test-threads=1 2>&1 | tee -a "$out" | grep -E "error after|dropped in" || true
BLOCKSWEEP_TEST_DEADLINE_CHILD=1 cargo test -q -p blocksweep-vulkan --test program -- \
    kernel_past_the_deadline --nocapture --test-threads=1 2>&1 | tee -a "$out" | grep -E "error after" || true
cargo test -q -p blocksweep-cuda --test program -- --nocapture 2>&1 | tee -a "$out" \
    | grep -E "deadline:|teardown took" || true
python3 - "$out" "$limit" <<'PY'
import re, sys
text, limit = open(sys.argv[1]).read(), float(sys.argv[2])
unit = {"s": 1, "ms": 1e-3, "µs": 1e-6, "ns": 1e-9}
# "error after 512.3ms" (OpenCL, Vulkan), "deadline: ... after 1.0s" (CUDA)
timed = re.findall(r"(?:error after|deadline: .* after) ([0-9.]+)(ms|µs|ns|s)\b", text)
late = [f"{v}{u}" for v, u in timed if float(v) * unit[u] > limit]
print(f"{len(timed)} deadlines timed; later than {limit} s: {late or 'none'}")
sys.exit(1 if late or not timed else 0)
PY
