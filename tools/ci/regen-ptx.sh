#!/usr/bin/env bash
# Regenerates kernels/grayscale.ptx, the PTX that blocksweep embeds, from kernels/grayscale.cu
# with NVRTC 12.0 (from the pinned nvidia-cuda-nvrtc-cu12 wheel; no GPU, no toolkit needed):
#
#   tools/ci/regen-ptx.sh           rewrite kernels/grayscale.ptx
#   tools/ci/regen-ptx.sh --check   regenerate into a temporary file and fail if it differs
#
# Why 12.0 and compute_50: a driver JIT-compiles PTX only up to its own ISA, so the oldest
# toolkit of the supported range (CUDA 12.0, R525: ISA 8.0) writes PTX every driver since then
# loads, and the oldest target NVRTC 12.0 supports (sm_50, first-generation Maxwell) covers
# every GPU those drivers run. The header the script writes records the source's SHA-256, which
# crates/cuda/tests/ptx.rs compares with kernels/grayscale.cu: edit the .cu, rerun this.
set -euo pipefail
cd "$(dirname "$0")/../.."
. tools/ci/cuda12-tools.sh

ARCH=compute_50
check=false
[ "${1:-}" = --check ] && check=true

fetch_cuda12_wheels || { echo "regen-ptx: could not fetch NVRTC $CUDA12_VERSION" >&2; exit 1; }
out=$(mktemp)
trap 'rm -f "$out"' EXIT
LD_LIBRARY_PATH="$NVRTC12_LIB${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
python3 - "$NVRTC12_LIB/libnvrtc.so.12" kernels/grayscale.cu "$ARCH" "$CUDA12_VERSION" > "$out" <<'PY'
import ctypes, hashlib, sys

lib_path, cu_path, arch, wheel = sys.argv[1:5]
nvrtc = ctypes.CDLL(lib_path)
source = open(cu_path, "rb").read()

def ok(call, code, prog=None):
    if code != 0:
        log = ""
        if prog is not None:
            n = ctypes.c_size_t()
            nvrtc.nvrtcGetProgramLogSize(prog, ctypes.byref(n))
            buf = ctypes.create_string_buffer(n.value)
            nvrtc.nvrtcGetProgramLog(prog, buf)
            log = buf.value.decode(errors="replace")
        sys.exit(f"regen-ptx: {call} returned {code}\n{log}")

major, minor = ctypes.c_int(), ctypes.c_int()
ok("nvrtcVersion", nvrtc.nvrtcVersion(ctypes.byref(major), ctypes.byref(minor)))
if (major.value, minor.value) != (12, 0):
    sys.exit(f"regen-ptx: expected NVRTC 12.0, loaded {major.value}.{minor.value}")
prog = ctypes.c_void_p()
ok("nvrtcCreateProgram",
   nvrtc.nvrtcCreateProgram(ctypes.byref(prog), source, b"grayscale.cu", 0, None, None))
options = [f"--gpu-architecture={arch}".encode(), b"--std=c++17"]
ok("nvrtcCompileProgram",
   nvrtc.nvrtcCompileProgram(prog, len(options), (ctypes.c_char_p * len(options))(*options)), prog)
size = ctypes.c_size_t()
ok("nvrtcGetPTXSize", nvrtc.nvrtcGetPTXSize(prog, ctypes.byref(size)))
ptx = ctypes.create_string_buffer(size.value)
ok("nvrtcGetPTX", nvrtc.nvrtcGetPTX(prog, ptx))
nvrtc.nvrtcDestroyProgram(ctypes.byref(prog))

sha = hashlib.sha256(source).hexdigest()
sys.stdout.write(
    "// kernels/grayscale.ptx: written by tools/ci/regen-ptx.sh, do not edit.\n"
    f"// source: kernels/grayscale.cu, sha256 {sha}\n"
    f"// compiler: NVRTC {major.value}.{minor.value} (nvidia-cuda-nvrtc-cu12 {wheel}), "
    f"options: {' '.join(o.decode() for o in options)}\n"
    + ptx.value.decode())
PY
if $check; then
  if ! cmp -s "$out" kernels/grayscale.ptx; then
    echo "regen-ptx: kernels/grayscale.ptx is not NVRTC $CUDA12_VERSION's output for kernels/grayscale.cu:" >&2
    diff -u kernels/grayscale.ptx "$out" | head -n 40 >&2
    exit 1
  fi
  echo "regen-ptx: kernels/grayscale.ptx is NVRTC $CUDA12_VERSION's output for kernels/grayscale.cu"
else
  cp "$out" kernels/grayscale.ptx
  echo "regen-ptx: wrote kernels/grayscale.ptx ($(grep -m1 '^\.version' kernels/grayscale.ptx), $(grep -m1 '^\.target' kernels/grayscale.ptx))"
fi
