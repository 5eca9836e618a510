#!/usr/bin/env bash
# The CUDA floor (CUDA 12.0, driver R525+), checked on a machine without a GPU:
#
#   1. kernels/grayscale.ptx is exactly NVRTC 12.0's output for kernels/grayscale.cu
#      (tools/ci/regen-ptx.sh --check), and ptxas 12.0 assembles it for sm_50, sm_52 and sm_75;
#   2. NVRTC 12.0 compiles the kernel to PTX and to a cubin through blocksweep's own NVRTC path
#      (crates/cuda/tests/nvrtc.rs with BLOCKSWEEP_REQUIRE=nvrtc);
#   3. every entry point in blocksweep_cuda::DRIVER_ENTRY_POINTS is exported by R535's
#      libcuda.so.1 (Debian 12's libcuda1 535.x), and NVRTC's by NVRTC 12.0
#      (crates/cuda/tests/floor.rs against lists made here from the fetched libraries);
#   4. `blocksweep devices` run against that libcuda gets past symbol loading to cuInit, and
#      says so: "CUDA driver 535.x (CUDA 12.2) is installed, but cuInit failed:
#      CUDA_ERROR_NO_DEVICE (no NVIDIA GPU visible)".
#
# The tools come from tools/ci/cuda12-tools.sh (pip and apt, cached). Where a package cannot be
# fetched, the check FAILS (exit 1, saying which): a floor that was not checked must not pass
# for one that was. `make test` alone checks only the vendored export lists
# (crates/cuda/tests/data) and the PTX's recorded source hash.
set -euo pipefail
cd "$(dirname "$0")/../.."
. tools/ci/cuda12-tools.sh
start=$SECONDS
say() { echo "cuda-floor: $*"; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# nm lists the libraries' exports (binutils: on the CI image, installed here if missing).
command -v nm >/dev/null || { apt-get update -qq && apt-get install -y -qq binutils; } >&2
exports() { nm -D --defined-only "$1" | awk '$2 == "T" {sub(/@.*/, "", $3); print $3}' | sort -u; }

if fetch_cuda12_wheels; then
  tools/ci/regen-ptx.sh --check
  for arch in sm_50 sm_52 sm_75; do
    "$PTXAS12" -arch="$arch" -o "$tmp/grayscale-$arch.cubin" kernels/grayscale.ptx
  done
  say "ptxas $CUDA12_VERSION assembles kernels/grayscale.ptx for sm_50, sm_52 and sm_75"
  LD_LIBRARY_PATH="$NVRTC12_LIB${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" BLOCKSWEEP_REQUIRE=nvrtc \
    cargo test -q -p blocksweep-cuda --test nvrtc
  exports "$NVRTC12_LIB/libnvrtc.so.12" > "$tmp/libnvrtc.txt"
  export BLOCKSWEEP_LIBNVRTC_EXPORTS=$tmp/libnvrtc.txt
else
  say "FAILED: the NVRTC $CUDA12_VERSION / ptxas wheels could not be fetched, so the PTX and NVRTC checks cannot run"
  exit 1
fi

bin_dir=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')/debug
if fetch_r535_libcuda; then
  lib=$(r535_libcuda)
  exports "$lib" > "$tmp/libcuda.txt"
  BLOCKSWEEP_LIBCUDA_EXPORTS=$tmp/libcuda.txt cargo test -q -p blocksweep-cuda --test floor
  say "every driver entry point blocksweep calls is exported by ${lib##*/}"
  cargo build -q -p blocksweep-cli
  out=$(LD_LIBRARY_PATH="$(r535_libdir)" "$bin_dir/blocksweep" devices 2>&1 || true)
  # devices may wrap a long line, continuing it indented: join those back first.
  line=$(printf '%s\n' "$out" \
    | awk '/^  / {sub(/^ +/, ""); text = text " " $0; next} {if (NR > 1) print text; text = $0}
           END {print text}' \
    | grep '^CUDA: unavailable: ' || true)
  say "with ${lib##*/}: ${line:-no CUDA line}"
  want="CUDA driver ${lib##*libcuda.so.} (CUDA 12.2) is installed, but cuInit failed: CUDA_ERROR_NO_DEVICE (no NVIDIA GPU visible)"
  if [ "$line" != "CUDA: unavailable: $want" ]; then
    say "FAILED: expected 'CUDA: unavailable: $want'; blocksweep devices printed:"
    printf '%s\n' "$out"
    exit 1
  fi
else
  say "FAILED: Debian's libcuda1 535.x could not be fetched, so the R535 checks cannot run"
  exit 1
fi
say "done in $((SECONDS - start)) s"
