# Sourced by the CUDA floor scripts (tools/ci/regen-ptx.sh, tools/ci/cuda-floor-check.sh):
# fetches, once, the CUDA 12.0 tools and the R535 driver library that blocksweep's CUDA floor is
# checked against, none of which needs a GPU:
#
#   NVRTC 12.0 and ptxas 12.0   the nvidia-cuda-nvrtc-cu12 / nvidia-cuda-nvcc-cu12 wheels (pip)
#   libcuda.so.1 of R535        Debian 12's libcuda1 (non-free), extracted, never installed
#
# Everything lands in $CUDA12_CACHE (default ~/.cache/blocksweep/cuda-12.0) and is reused.
# Each fetch_* function prints nothing on success and returns non-zero when the registry
# cannot be reached.

CUDA12_VERSION=12.0.140
CUDA12_CACHE=${CUDA12_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/blocksweep/cuda-12.0}
NVRTC12_LIB=$CUDA12_CACHE/wheels/nvidia/cuda_nvrtc/lib
PTXAS12=$CUDA12_CACHE/wheels/nvidia/cuda_nvcc/bin/ptxas
R535_DIR=$CUDA12_CACHE/r535

# NVRTC 12.0 (libnvrtc.so.12 + builtins) and ptxas 12.0, from the pinned wheels.
fetch_cuda12_wheels() {
  [ -f "$NVRTC12_LIB/libnvrtc.so.12" ] && [ -x "$PTXAS12" ] && return 0
  mkdir -p "$CUDA12_CACHE/download" "$CUDA12_CACHE/wheels" || return 1
  python3 -m pip download --no-deps --quiet --disable-pip-version-check \
    -d "$CUDA12_CACHE/download" \
    "nvidia-cuda-nvrtc-cu12==$CUDA12_VERSION" "nvidia-cuda-nvcc-cu12==$CUDA12_VERSION" >&2 || return 1
  local w
  for w in "$CUDA12_CACHE"/download/nvidia_cuda_nvrtc_cu12-"$CUDA12_VERSION"-*.whl \
           "$CUDA12_CACHE"/download/nvidia_cuda_nvcc_cu12-"$CUDA12_VERSION"-*.whl; do
    python3 -m zipfile -e "$w" "$CUDA12_CACHE/wheels" || return 1
  done
  chmod +x "$PTXAS12"
}

# R535's libcuda.so.1 under $R535_DIR (the 535.x that Debian 12's non-free component offers).
# apt works in a private directory, with the machine's own Debian sources switched to the
# non-free component, so the system's apt state and sources are left alone.
fetch_r535_libcuda() {
  [ -n "$(r535_libcuda)" ] && return 0
  local apt=$CUDA12_CACHE/apt f
  mkdir -p "$apt/lists/partial" "$apt/archives/partial" "$apt/sources.list.d" "$R535_DIR" || return 1
  : > "$apt/sources.list"
  if [ -f /etc/apt/sources.list ]; then
    sed -nE 's/^(deb[[:space:]]+(\[[^]]*\][[:space:]]+)?[^[:space:]]*debian[^[:space:]]*[[:space:]]+[^[:space:]]+)[[:space:]].*/\1 non-free/p' \
      /etc/apt/sources.list > "$apt/sources.list"
  fi
  for f in /etc/apt/sources.list.d/*.sources; do
    [ -f "$f" ] && grep -q 'debian-archive-keyring' "$f" || continue
    sed -E 's/^Components:.*/Components: non-free/' "$f" > "$apt/sources.list.d/${f##*/}"
  done
  local opts=(-q -o "Dir::Etc::SourceList=$apt/sources.list" -o "Dir::Etc::SourceParts=$apt/sources.list.d"
              -o "Dir::State::Lists=$apt/lists" -o "Dir::Cache::Archives=$apt/archives"
              -o APT::Sandbox::User=root)
  apt-get "${opts[@]}" update >/dev/null 2>&1 || return 1
  (cd "$apt/archives" && apt-get "${opts[@]}" download libcuda1 >/dev/null 2>&1) || return 1
  local deb
  deb=$(ls "$apt"/archives/libcuda1_535.*_amd64.deb 2>/dev/null | tail -n 1)
  [ -n "$deb" ] || { echo "the libcuda1 offered is not of the 535 series" >&2; return 1; }
  dpkg-deb -x "$deb" "$R535_DIR"
}

# The directory holding R535's libcuda.so.1, once fetched.
r535_libdir() { dirname "$(r535_libcuda)"; }
r535_libcuda() { ls "$R535_DIR"/usr/lib/x86_64-linux-gnu/nvidia/current/libcuda.so.535.* 2>/dev/null | head -n 1; }
