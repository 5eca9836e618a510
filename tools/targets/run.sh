#!/usr/bin/env bash
# `--target` as a new user meets it (docs/targets.md), on whatever devices are here: the
# devices written as a target file and read back, limits beside other targets, validate and
# validate --kernel for every example and every bug of the zoo against a list of targets, and
# the default sweep's answer across them. One text file per command (its command line, output
# and exit code) under $R, and summary.txt: each command's exit code and verdict counts.
# Usage: R=docs/results/<dir> B=./target/release/blocksweep [DEV=H100] tools/targets/run.sh
set -u
R=${R:?}
B=${B:-./target/release/blocksweep}
DEV=${DEV:-}
LIST=${LIST:-webgpu,roadmap-2022,android-baseline-2022,apple-m3,amd-rdna3,intel-arc,cuda-cc-7.5,cuda-cc-9.0}
mkdir -p "$R"
dev=(); [ -n "$DEV" ] && dev=(--device "$DEV")
run() {
  local name=$1; shift
  { echo "\$ blocksweep $*"; "$B" "$@" 2>&1; echo "exit $?"; } > "$R/$name.txt"
  echo "$name: $(tail -1 "$R/$name.txt"); $(grep -o '✗ \[' "$R/$name.txt" | wc -l) refused, $(grep -o '? \[' "$R/$name.txt" | wc -l) unknown cells" >> "$R/summary.txt"
}
: > "$R/summary.txt"
run limits-o limits "${dev[@]}" -o "$R/here.toml"
run limits-target limits "${dev[@]}" --target "$LIST"
run validate-here validate "${dev[@]}" --target "$R/here.toml"
run validate validate "${dev[@]}" --target "$LIST"
for spec in examples/kernels/*/kernel.toml; do
  name=$(basename "$(dirname "$spec")")
  run "kernel-$name" validate "${dev[@]}" --kernel "$spec" --target "$LIST"
done
for spec in examples/kernels/bugs/*/kernel.toml; do
  name=$(basename "$(dirname "$spec")")
  run "bug-$name" validate "${dev[@]}" --kernel "$spec" --target "$LIST"
done
run sweep sweep "${dev[@]}" --target "$LIST" -o "$R/sweep.json"
run sweep-reduce sweep "${dev[@]}" --kernel examples/kernels/reduce/kernel.toml --target "$LIST"
