#!/usr/bin/env bash
# Everything blocksweep measures on the lent NVIDIA H200, in one call (see docs/results/README.md).
# Runs in the repository root there, with the release binary and .gl/ (Debian's Vulkan/OpenCL
# loaders and glvnd) carried over. Writes logs to $OUT/h200/ and a tarball $OUT/h200.tgz.
set -u
R=${OUT:?}/h200; mkdir -p "$R"
B=./target/release/blocksweep
D=$(date -u +%F)
# Only where .gl/ was carried (the lent machine, as root): loaders first, then NVIDIA's ICD file.
if ls .gl/*.deb >/dev/null 2>&1; then
  for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig
  ls /etc/OpenCL/vendors/ 2>/dev/null | grep -q nvidia || echo libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd
fi
{ date -u; uname -a; nvidia-smi; nvcc --version; ls -l /usr/share/vulkan/icd.d /usr/local/nvidia/share/vulkan/icd.d /etc/vulkan/icd.d 2>&1; } > "$R/env.txt" 2>&1

# Vulkan: find NVIDIA's ICD (the loader may not see it where the image put it).
vk() { $B devices 2>&1 | grep -q "Vulkan #"; }
if ! vk; then
  for f in /usr/share/vulkan/icd.d/nvidia_icd.json /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json /etc/vulkan/icd.d/nvidia_icd.json; do
    [ -f "$f" ] || continue
    export VK_DRIVER_FILES=$f; vk && break
    { echo "== $f"; cat "$f"; VK_LOADER_DEBUG=error,warn $B devices; } >> "$R/vulkan-debug.txt" 2>&1
    unset VK_DRIVER_FILES
  done
fi
for lib in $(grep -ho '"library_path": *"[^"]*"' /usr/share/vulkan/icd.d/*.json /usr/local/nvidia/share/vulkan/icd.d/*.json 2>/dev/null | sed 's/.*: *"//; s/"$//' | sort -u); do
  { echo "== ldd $lib"; ldd "$(ldconfig -p | awk -v l="$lib" '$1==l {print $NF; exit}')" 2>&1 | grep -i "not found"; } >> "$R/vulkan-debug.txt" 2>&1
done
echo "VK_DRIVER_FILES=${VK_DRIVER_FILES:-}" >> "$R/env.txt"

run() { local name=$1; shift; echo "\$ blocksweep $*" > "$R/$name.txt"; $B "$@" >> "$R/$name.txt" 2>&1; echo "exit $?" >> "$R/$name.txt"; }
run devices devices
run limits limits --device H200
for api in cuda vulkan opencl; do run limits-$api limits --backend $api --device H200; done
# Issue 2, 3, 4: each API alone on the GPU, the seed's defaults (4K, 13 sizes, wave grid).
run opencl sweep --backend opencl --device H200
run opencl-strict sweep --backend opencl --device H200 --strict-kernel-limit
run vulkan sweep --backend vulkan --device H200
run cuda sweep --backend cuda --device H200
run cuda-8k sweep --backend cuda --device H200 --size 7680x4320
run cuda-ptx sweep --backend cuda --device H200 --cuda-compiler ptx --blocks 128,256,1024
# Issue 5: the three APIs on one physical device, one run.
run merged sweep --device H200 -o "$R/h200-$D.json" -o "$R/h200-$D.md" --plot "$R/h200-$D.svg"
run merged-strict sweep --device H200 --strict-kernel-limit --format markdown
run validate validate --device H200
run cuda-grid-data sweep --backend cuda --device H200 --grid data
# The plain nvcc program, same kernel and launches, same device, alternated with the Rust
# harness; 200 timed launches per row so that a 40 us kernel's mean is not timer noise.
if nvcc -std=c++17 -O3 -arch=sm_90 -o /tmp/grayscale_bench benches/cuda/grayscale_bench.cu > "$R/bench-build.txt" 2>&1; then
  for i in 1 2 3; do
    run cuda-rerun-$i sweep --backend cuda --device H200 --format csv --no-copy --reps 200
    /tmp/grayscale_bench 3840 2160 200 > "$R/bench-$i.txt" 2>&1
  done
  run cuda-rerun-8k sweep --backend cuda --device H200 --format csv --no-copy --reps 200 --size 7680x4320
  /tmp/grayscale_bench 7680 4320 200 > "$R/bench-8k.txt" 2>&1
fi
tar czf "$OUT/h200.tgz" -C "$OUT" h200
