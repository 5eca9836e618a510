#!/usr/bin/env bash
# Issue 38's "no slower": the default three-API sweep's wall time, this binary ($B, with
# BLOCKSWEEP_APIS=cuda,vulkan,opencl), the same commit built without the WebGPU crate ($NOWGPU)
# and an earlier commit's ($BASE), in rotating order (each first, second and third equally
# often), $ROUNDS rounds. Whether a difference is WebGPU's linking or the code since $BASE.
set -u
R=${OUT:?}/wall3
mkdir -p "$R"
DEV=${DEV:-H100}
ROUNDS=${ROUNDS:-6}
one() { # NAME BIN ROUND; with TRACE=1 each run's BLOCKSWEEP_TRACE lines in NAME-ROUND.trace
  /usr/bin/time -f "%e" -o "$R/$1-$3.txt" env BLOCKSWEEP_APIS=cuda,vulkan,opencl \
    BLOCKSWEEP_TRACE=${TRACE:-} "$2" sweep --device "$DEV" > /dev/null 2> "$R/$1-$3.trace"
  [ -n "${TRACE:-}" ] || rm -f "$R/$1-$3.trace"
}
for r in $(seq 1 "$ROUNDS"); do
  case $((r % 3)) in
    1) one now "$B" "$r"; one nowgpu "$NOWGPU" "$r"; one base "$BASE" "$r" ;;
    2) one nowgpu "$NOWGPU" "$r"; one base "$BASE" "$r"; one now "$B" "$r" ;;
    0) one base "$BASE" "$r"; one now "$B" "$r"; one nowgpu "$NOWGPU" "$r" ;;
  esac
done
for who in now nowgpu base; do
  printf '%-7s %s\n' "$who" "$(for r in $(seq 1 "$ROUNDS"); do cat "$R/$who-$r.txt"; done | sort -n | paste -sd' ')"
done | tee "$R/summary.txt"
