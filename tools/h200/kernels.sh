#!/usr/bin/env bash
# Your kernel through every API on the lent H200, in one device call: every example of
# examples/kernels/ swept (`sweep --kernel`) and validated (`validate --kernel`) through every
# API (`blocksweep apis`); the grayscale spec beside the built-in sweep in the same call (the proof
# that they are one path); the broken kernel's message. The backends' user-kernel test binaries
# run in run.sh's kit part.
#
# Runs in the repository root there, from tools/h200/run.sh (PARTS=kernels), which installs the
# carried loaders (.gl/, with glslang-tools for GLSL) and sets OUT, B, DEV. Results: $OUT/kernels/.
set -u
R=${OUT:?}/kernels
mkdir -p "$R"
B=${B:-./target/release/blocksweep}
DEV=${DEV:-H200}

run() {
  local name=$1; shift
  { echo "\$ blocksweep $*"; "$B" "$@" 2>&1; echo "exit $?"; } > "$R/$name.txt"
}

{ date -u; command -v glslangValidator; glslangValidator --version 2>&1 | head -3; } > "$R/env.txt" 2>&1
# The built-in sweep and the grayscale spec, one after the other, twice (order alternated).
for round in 1 2; do
  if [ "$round" = 1 ]; then
    run "builtin-$round" sweep --device "$DEV" -o "$R/builtin-$round.json"
    run "grayscale-$round" sweep --kernel examples/kernels/grayscale/kernel.toml --device "$DEV" -o "$R/grayscale-$round.json"
  else
    run "grayscale-$round" sweep --kernel examples/kernels/grayscale/kernel.toml --device "$DEV" -o "$R/grayscale-$round.json"
    run "builtin-$round" sweep --device "$DEV" -o "$R/builtin-$round.json"
  fi
done
for k in saxpy transpose reduce broken-stride; do
  run "$k" sweep --kernel "examples/kernels/$k/kernel.toml" --device "$DEV" -o "$R/$k.json" -o "$R/$k.md"
done
for k in grayscale saxpy transpose reduce; do
  run "validate-$k" validate --kernel "examples/kernels/$k/kernel.toml" --device "$DEV"
done
run validate-json validate --kernel examples/kernels/saxpy/kernel.toml --device "$DEV" --format json
# One API at a time too, so that each API's rows are seen without the others.
for api in $("$B" apis); do
  run "saxpy-$api" sweep --kernel examples/kernels/saxpy/kernel.toml --backend "$api" --device "$DEV"
done
# Faults: a kernel that never finishes, under a 2 s deadline (the other APIs keep their rows).
if [ -d tests/kernels/hang ]; then
  BLOCKSWEEP_DEADLINE_S=2 run hang sweep --kernel tests/kernels/hang/kernel.toml --device "$DEV" --blocks 64,256
fi
ls -la "$R"
