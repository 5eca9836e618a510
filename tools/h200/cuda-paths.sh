#!/usr/bin/env bash
# Every way blocksweep's CUDA backend can build its kernel, each through a full verified sweep on
# the lent H200 (driver R580, CUDA 13.0, nvcc 13.0, libnvrtc.so.13 on the loader path; no Rust
# there), plus the cheap ptxas / cuobjdump checks of the embedded PTX. Under 60 s.
#
#   OUT=/some/dir B=./target/release/blocksweep tools/h200/cuda-paths.sh
#
# Logs go to "$OUT/cuda-paths/": per command NAME.txt (the command, its stderr, its exit code),
# and per sweep NAME.table.txt (the header lines and the table) and NAME.json; summary.txt is also
# printed. The paths:
#
#   nvrtc       --cuda-compiler nvrtc: NVRTC 13.0 = driver 13.0, so compute_90 PTX, JIT-compiled
#   ptx         --cuda-compiler ptx: the embedded NVRTC 12.0 PTX (ISA 8.0, sm_50), JIT-compiled
#   auto        the default: should pick NVRTC PTX, as nvrtc
#   auto-nojit  CUDA_DISABLE_PTX_JIT=1: the driver loads cubins only, so auto must build an sm_90
#               cubin with NVRTC (the path taken on a driver older than its NVRTC, e.g. a T4 on
#               R535 with NVRTC 12.9), and verify it
#   ptx-nojit   CUDA_DISABLE_PTX_JIT=1 with --cuda-compiler ptx: expected to fail, naming the
#               driver's code (CUDA_ERROR_JIT_COMPILATION_DISABLED) and its JIT log
set -u
B=${B:-./target/release/blocksweep}
R=${OUT:?OUT must name the output directory}/cuda-paths
mkdir -p "$R"
start=$SECONDS
PTX=kernels/grayscale.ptx

# run NAME SECONDS [ENV=VALUE ...] -- ARGS...: one blocksweep command, logged; never past 60 s.
run() {
  local name=$1 limit=$2 envs=()
  shift 2
  while [ "$1" != -- ]; do envs+=("$1"); shift; done
  shift
  local left=$((55 - (SECONDS - start)))
  [ "$left" -lt "$limit" ] && limit=$left
  if [ "$limit" -le 0 ]; then echo "skipped: out of time" > "$R/$name.txt"; return; fi
  { echo "\$ ${envs[*]} blocksweep $*"; } > "$R/$name.txt"
  env "${envs[@]}" timeout "$limit" "$B" "$@" >> "$R/$name.txt" 2>&1
  echo "exit $?" >> "$R/$name.txt"
}

{
  date -u
  nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv,noheader
  nvcc --version | tail -n 2
  ldconfig -p | grep -E 'libcuda\.so|libnvrtc\.so' || true
  echo "CUDA_DISABLE_PTX_JIT=${CUDA_DISABLE_PTX_JIT:-unset}"
} > "$R/env.txt" 2>&1

# sweep NAME SECONDS [ENV=VALUE ...] -- ARGS...: the seed's full verified sweep on the H200's
# CUDA device, its report in NAME.table.txt (header lines + table) and NAME.json.
sweep() {
  local name=$1 limit=$2 envs=()
  shift 2
  while [ "$1" != -- ]; do envs+=("$1"); shift; done
  shift
  run "$name" "$limit" "${envs[@]}" -- sweep --backend cuda --device H200 "$@" \
    -o "$R/$name.json" -o "$R/$name.table.txt"
}

run devices 10 -- devices
sweep nvrtc 15 -- --cuda-compiler nvrtc
sweep ptx 15 -- --cuda-compiler ptx
sweep auto 15 -- --cuda-compiler auto
sweep auto-nojit 15 CUDA_DISABLE_PTX_JIT=1 -- --cuda-compiler auto
sweep ptx-nojit 10 CUDA_DISABLE_PTX_JIT=1 -- --cuda-compiler ptx

# The embedded PTX through the toolkit there: ptxas 13.0 must still take ISA 8.0 / sm_50 PTX.
{
  for arch in sm_90 sm_75; do
    echo "\$ ptxas -arch=$arch -v $PTX"
    timeout 10 ptxas -arch="$arch" -v -o "$R/grayscale-$arch.cubin" "$PTX" 2>&1
    echo "exit $?"
  done
  echo "\$ cuobjdump -sass grayscale-sm_90.cubin"
  timeout 10 cuobjdump -sass "$R/grayscale-sm_90.cubin" 2>&1 | grep -E 'Function|FFMA|LDG|STG|EXIT' | head -n 20
  echo "\$ cuobjdump -elf grayscale-sm_90.cubin | grep -i arch"
  timeout 10 cuobjdump -elf "$R/grayscale-sm_90.cubin" 2>&1 | grep -iE 'arch|sm_' | head -n 5
} > "$R/ptxas.txt" 2>&1

# summary: per path, the kernel line, the rows checked ok, any failure, the exit code.
{
  echo "cuda-paths on $(sed -n 2p "$R/env.txt")"
  grep -E '^CUDA' "$R/devices.txt" | head -n 3 | sed 's/^/   /'
  for name in nvrtc ptx auto auto-nojit ptx-nojit; do
    t=$R/$name.table.txt
    echo "== $name: $(head -n 1 "$R/$name.txt")"
    if [ -f "$t" ]; then
      grep -m1 -E '^Kernel: ' "$t" | sed 's/^/   /'
      # A table row: block (e.g. 256), warps, ..., check (last column: "ok" when verified).
      awk '$1 ~ /^[0-9x]+$/ && $2 ~ /^[0-9]+$/ {n++; if ($NF == "ok") ok++}
           END {printf "   rows: %d, verified ok: %d\n", n, ok}' "$t"
      grep -m1 -E '^Fastest measured' "$t" | sed 's/^/   /'
    fi
    [ -f "$R/$name.json" ] && command -v python3 >/dev/null && python3 - "$R/$name.json" <<'PY'
import json, sys
keep = ("kernel path", "cuDriverGetVersion", "nvrtcVersion", "NVRTC library", "NVRTC options",
        "NVRTC not used", "CU_FUNC_ATTRIBUTE_PTX_VERSION", "CU_FUNC_ATTRIBUTE_BINARY_VERSION")
for r in json.load(open(sys.argv[1])).get("results", [])[:1]:
    for k, v in r.get("kernel", {}).get("extra", []):
        if k in keep:
            print(f"   {k}: {v}")
PY
    grep -iE 'error|unavailable|mismatch|panick' "$R/$name.txt" | head -n 3 | sed 's/^/   /'
    tail -n 1 "$R/$name.txt" | sed 's/^/   /'
  done
  echo "== ptxas 13.0 on the embedded PTX (ISA 8.0, sm_50)"
  grep -E '^exit|Used|fatal|error' "$R/ptxas.txt" | sed 's/^/   /'
  echo "== done in $((SECONDS - start)) s"
} > "$R/summary.txt" 2>&1
cat "$R/summary.txt"
