#!/usr/bin/env bash
# The summary of run.sh's part "big" (issue 21), from the files it wrote in DIR: the wall time,
# CPU and peak RSS of the sweep (big.time, /usr/bin/time -v), its traced phases (big.err), and
# each phase's physical floor from floors.txt (benches/cuda/floors.cu), for the 50000x50000
# frame: 2.5e9 pixels, 1e10 bytes per plane.
#   bash tools/h200/big-summary.sh DIR
set -u
R=${1:?usage: big-summary.sh DIR}
PIXELS=2500000000
PLANE=$((PIXELS * 4))

echo "== command"; cat "$R/big.cmd" 2>/dev/null
echo "== wall time, CPU, peak RSS (/usr/bin/time -v)"
grep -E "Elapsed \(wall clock\)|Percent of CPU|Maximum resident set size" "$R/big.time" 2>/dev/null
rss_kb=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$R/big.time" 2>/dev/null)
# The host-memory model (crates/core/src/hostmem.rs): 16 bytes per pixel (frame and
# reference) + 4 per API that reads back (APIS, default 3: Vulkan's planes in pieces since
# 2026-12-06, before which it refused the frame) + 64 MiB of headroom, beside the drivers' own
# start-up memory (170 to 280 MiB per API).
APIS=${APIS:-3}
model=$((PIXELS * (16 + 4 * APIS) + (64 << 20)))
if [ -n "${rss_kb:-}" ]; then
  awk -v rss="$rss_kb" -v model="$model" -v apis="$APIS" 'BEGIN {
    printf "peak RSS %.2f GB; model %.2f GB (16 + 4 x %d bytes per pixel); model / RSS = %.3f\n",
      rss * 1024 / 1e9, model / 1e9, apis, model / (rss * 1024) }'
fi

echo "== traced phases (BLOCKSWEEP_TRACE=1)"
grep "blocksweep trace" "$R/big.err" 2>/dev/null
echo "== rows and errors"
cat "$R/big.out" 2>/dev/null
grep -v "blocksweep trace" "$R/big.err" 2>/dev/null | tail -20

echo "== floors (benches/cuda/floors.cu)"
cat "$R/floors.txt" 2>/dev/null
gbs() { awk -v n="$1" '$1 == "floor" && $2 == n {print $NF}' "$R/floors.txt" 2>/dev/null; }
h2d=$(gbs h2d_pinned); d2h=$(gbs d2h_pinned); d2d=$(gbs d2d); host=$(gbs host_copy)
echo "== each phase against its floor (bytes / bandwidth)"
awk -v plane="$PLANE" -v h2d="${h2d:-0}" -v d2h="${d2h:-0}" -v d2d="${d2d:-0}" -v host="${host:-0}" '
  function floor_s(bytes, gbs) { return gbs > 0 ? sprintf("%.3f s", bytes / (gbs * 1e9)) : "n/a" }
  BEGIN {
    printf "making the frame    3 planes written, %.0f bytes at the host copy rate %s GB/s: %s\n", 3 * plane, host, floor_s(3 * plane, host)
    printf "CPU reference       3 planes read, 1 written, %.0f bytes at %s GB/s: %s\n", 4 * plane, host, floor_s(4 * plane, host)
    printf "upload, per API     3 planes, %.0f bytes at pinned H2D %s GB/s: %s\n", 3 * plane, h2d, floor_s(3 * plane, h2d)
    printf "read-back, per row  1 plane, %.0f bytes at pinned D2H %s GB/s: %s\n", plane, d2h, floor_s(plane, d2h)
    printf "verify, per row     2 planes read, %.0f bytes at %s GB/s: %s\n", 2 * plane, host, floor_s(2 * plane, host)
    printf "kernel pass         4 planes, %.0f bytes at the D2D copy %s GB/s: %s\n", 4 * plane, d2d, floor_s(4 * plane, d2d)
  }'
