#!/usr/bin/env bash
# The lab (docs/lab.md) on the lent H200, all three APIs on the one GPU, in under 3 minutes:
#
#   shapes    every power-of-two block shape of 256 and of 1024 threads, the 2-D kernel, on a
#             4096x2048 frame (8.4 M pixels, as 4K; powers of two on both sides, so that no shape
#             leaves threads idle past the frame's edge)
#   tail-256  block 256, grids of 0.5 to 4 waves in tenths, the seed's grid-stride kernel and
#             one pixel per thread, with the plot (GB/s against waves)
#   tail-1024 the same at block 1024 (2 blocks per SM: a coarser wave)
#   validate  the portable assumptions and the resource rows (shared memory, registers)
#
#   OUT=/some/dir B=./target/release/blocksweep tools/h200/lab.sh
#
# Called by tools/h200/run.sh's `lab` part. Everything goes to "$OUT/lab/": per command
# NAME.txt (the command line, what it printed, its exit code) and its -o files (JSON, markdown,
# CSV, SVG) named NAME-DATE.*; summary.txt lists them with each command's exit code and wall
# time, and is printed at the end.
set -u
B=${B:-./target/release/blocksweep}
DEV=${DEV:-H200}
D=$(date -u +%F)
R=${OUT:?OUT must name the output directory}/lab
mkdir -p "$R"
start=$SECONDS
BUDGET=170

# run NAME LIMIT ARGS...: one blocksweep command under `timeout`, never past the budget.
run() {
  local name=$1 limit=$2
  shift 2
  local left=$((BUDGET - (SECONDS - start)))
  [ "$left" -lt "$limit" ] && limit=$left
  if [ "$limit" -le 0 ]; then
    echo "$name: skipped, out of time" | tee -a "$R/summary.txt"
    return
  fi
  local t0=$SECONDS
  { echo "\$ blocksweep $*"; timeout "$limit" "$B" "$@" 2>&1; echo "exit $?"; } > "$R/$name.txt"
  echo "$name: $(tail -n 1 "$R/$name.txt"), $((SECONDS - t0)) s" >> "$R/summary.txt"
}

: > "$R/summary.txt"
{ date -u; "$B" --version; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } >> "$R/summary.txt" 2>&1

run shapes 60 shapes --device "$DEV" --threads 256,1024 --size 4096x2048 \
  -o "$R/shapes-$D.json" -o "$R/shapes-$D.md" -o "$R/shapes-$D.csv"
run tail-256 60 tail --device "$DEV" --block 256 --waves 0.5..4:0.1 \
  -o "$R/tail-256-$D.json" -o "$R/tail-256-$D.md" -o "$R/tail-256-$D.csv" --plot "$R/tail-256-$D.svg"
run tail-1024 45 tail --device "$DEV" --block 1024 --waves 0.5..4:0.1 \
  -o "$R/tail-1024-$D.json" -o "$R/tail-1024-$D.md" -o "$R/tail-1024-$D.csv" --plot "$R/tail-1024-$D.svg"
run validate 30 validate --device "$DEV"
run validate-md 30 validate --device "$DEV" --format markdown
run validate-json 30 validate --device "$DEV" --format json

{
  echo
  echo "The tail effect, just past a whole wave (from the tables):"
  grep -h -A12 "Just past a whole wave" "$R"/tail-*.txt | grep -E "^- " || true
  echo
  echo "Resource rows (validate):"
  sed -n '/Resources: shared memory/,$p' "$R/validate.txt" | head -n 40
  echo
  echo "files:"
  ls -l "$R"
  echo "total $((SECONDS - start)) s"
} >> "$R/summary.txt" 2>&1
cat "$R/summary.txt"
