#!/usr/bin/env bash
# Issue 41's launch table on the lent GPU, in one device call: `blocksweep launch-cost` on every
# API beside benches/' plain programs at one pixel (block 32, grid 1): discipline A gives the
# device and enqueue figures, C the round trip (host clock around a dispatch and its wait).
# ROUNDS rounds, blocksweep and the plain programs alternating; then the ratios (summary.txt).
#
# Runs in the repository root there. Expects what tools/h200/bench.sh expects ($OUT, $B, the
# carried benches/bin programs, VK_DRIVER_FILES and the NVIDIA OpenCL ICD); nvcc builds the CUDA one.
# Knobs: DEV (device name substring, default H100), ROUNDS (2), N (dispatches and round trips, 2000).
set -u
R=${OUT:?}/launch
mkdir -p "$R"
B=${B:-./target/release/blocksweep}
DEV=${DEV:-H100}
ROUNDS=${ROUNDS:-2}
N=${N:-2000}
BIN=${BENCH_BIN:-benches/bin}
{
  date -u; nvidia-smi 2>&1 | head -12; "$B" --version
} > "$R/env.txt" 2>&1
nvcc -std=c++17 -O3 -arch=sm_90 -o /tmp/grayscale_bench_cuda benches/cuda/grayscale_bench.cu \
  > "$R/nvcc.txt" 2>&1 || echo "nvcc failed: no plain CUDA rows" >> "$R/env.txt"
declare -A PLAIN=([opencl]="$BIN/grayscale_bench_cl" [vulkan]="$BIN/grayscale_bench_vk" [cuda]=/tmp/grayscale_bench_cuda)
for r in $(seq 1 "$ROUNDS"); do
  "$B" launch-cost --device "$DEV" --dispatches "$N" --round-trips "$N" \
    -o "$R/bs-r$r.csv" -o "$R/bs-r$r.json" > "$R/bs-r$r.txt" 2> "$R/bs-r$r.err"
  echo "$?" > "$R/bs-r$r.exit"
  for api in cuda vulkan opencl; do
    [ -x "${PLAIN[$api]}" ] || continue
    timeout 120 "${PLAIN[$api]}" --device "$DEV" --size 1x1 --grids 32:1 -D AC --no-copy \
      -n "$N" -w 20 -o "$R/plain-$api-r$r.csv" > "$R/plain-$api-r$r.txt" 2>&1
    echo "$?" > "$R/plain-$api-r$r.exit"
  done
done
python3 - "$R" > "$R/summary.txt" 2>&1 <<'PY'
import csv, glob, os, statistics, sys
d = sys.argv[1]
def rows(p):
    with open(p, newline="") as f:
        return list(csv.DictReader(f))
bs, plain = {}, {}
for p in sorted(glob.glob(os.path.join(d, "bs-r*.csv"))):
    for r in rows(p):
        bs.setdefault(r["api"], []).append(r)
for p in sorted(glob.glob(os.path.join(d, "plain-*-r*.csv"))):
    for r in rows(p):
        plain.setdefault((r["api"], r["discipline"]), []).append(r)
med = lambda xs: statistics.median(xs) if xs else float("nan")
print("microseconds per dispatch, median over rounds; ratio = blocksweep / plain program")
print(f"{'api':7} {'figure':11} {'blocksweep':>11} {'plain':>9} {'ratio':>7}")
for api, rs in bs.items():
    a, c = plain.get((api, "A"), []), plain.get((api, "C"), [])
    pairs = [
        ("device", med([float(r["device_us"]) for r in rs]), med([float(r["ms_mean"]) * 1e3 for r in a])),
        ("enqueue", med([float(r["enqueue_us"]) for r in rs]), med([float(r["host_us"]) for r in a])),
        ("round trip", med([float(r["round_trip_median_us"]) for r in rs]), med([float(r["host_us"]) for r in c])),
    ]
    for name, b, p in pairs:
        print(f"{api:7} {name:11} {b:11.3f} {p:9.3f} {b / p if p == p and p else float('nan'):7.3f}")
PY
cat "$R/summary.txt"
