#!/usr/bin/env bash
# The bug zoo (examples/kernels/bugs/) and kernels written here on the spot (not in the
# repository, as a new user's would be) through every API on the lent H200, in one device
# call: each must fail by name with exit 1, never by a signal and never by a hang, the other
# APIs' rows kept. Runs from tools/h200/run.sh (PARTS=zoo), which installs the carried loaders
# and sets OUT, B, DEV. Results: $OUT/zoo/, one text file per kernel and a summary.
set -u
R=${OUT:?}/zoo
mkdir -p "$R"
B=${B:-./target/release/blocksweep}
DEV=${DEV-H200}
devarg=(); [ -n "$DEV" ] && devarg=(--device "$DEV")
export BLOCKSWEEP_DEADLINE_S=${BLOCKSWEEP_DEADLINE_S:-5}

# one NAME SPEC: sweep SPEC through every API; its output, exit code (or signal) and wall time.
one() {
  local name=$1 spec=$2 start code
  start=$SECONDS
  { echo "\$ BLOCKSWEEP_DEADLINE_S=$BLOCKSWEEP_DEADLINE_S blocksweep sweep --kernel $spec ${devarg[*]}"
    timeout 300 "$B" sweep --kernel "$spec" "${devarg[@]}" -o "$R/$name.json" 2>&1
    code=$?; echo "exit $code"; } > "$R/$name.txt"
  code=$(tail -1 "$R/$name.txt" | cut -d' ' -f2)
  printf '%-24s exit %-3s %4d s  %s\n' "$name" "$code" "$((SECONDS - start))" \
    "$(grep '^blocksweep: ' "$R/$name.txt" | grep -v '^blocksweep: wrote ' | cut -c1-160 | paste -sd'|')" >> "$R/summary.txt"
}

for d in examples/kernels/bugs/*/; do
  one "$(basename "$d")" "$d/kernel.toml"
done

# Kernels written here: a port that is wrong on one API only (the others agree, so that API is
# named); a Vulkan store three elements past the end; a CUDA store far out of bounds; and a
# WGSL port wrong at one element (WebGPU runs over Vulkan, but CUDA and OpenCL are witnesses of
# their own, so WebGPU is named).
U=$(mktemp -d)
mkdir -p "$U/onewrong" "$U/vkpast" "$U/cudafar"
cat > "$U/base.toml" <<'TOML'
work = "n"
sizes = { n = 1000000 }
[sources]
cuda = { file = "k.cu", entry = "k" }
opencl = { file = "k.cl", entry = "k" }
vulkan = { file = "k.comp" }
webgpu = { file = "k.wgsl" }
[[args]]
buffer = "f32"
name = "x"
elements = "n"
init = "random"
[[args]]
buffer = "f32"
name = "y"
elements = "n"
written = true
[[args]]
scalar = "u64"
name = "n"
value = "n"
[check]
bytes_per_item = 8
TOML
cu='extern "C" __global__ void k(const float* x, float* y, unsigned long long n) {
  for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
       i += (unsigned long long)gridDim.x * blockDim.x) y[i] = 3.0f * x[i] EXTRA_CU;
  FAR_CU
}'
cl='__kernel void k(__global const float* x, __global float* y, const ulong n) {
  for (ulong i = get_global_id(0); i < n; i += get_global_size(0)) y[i] = 3.0f * x[i];
}'
comp='#version 450
layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) buffer Y { float y[]; };
layout(push_constant) uniform P { uvec2 n; };
void main() {
  uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint i = gl_GlobalInvocationID.x; i < n.x; i += step) y[i] = 3.0 * x[i];
  PAST_VK
}'
wgsl='@id(0) override bx: u32 = 64u;
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
struct P { n: vec2<u32> }
@group(0) @binding(2) var<uniform> p: P;
@compute @workgroup_size(bx)
fn main(@builtin(global_invocation_id) id: vec3<u32>, @builtin(num_workgroups) g: vec3<u32>) {
  let step = g.x * bx;
  for (var i = id.x; i < p.n.x; i += step) { y[i] = 3.0 * x[i] EXTRA_WGSL; }
}'
mkdir -p "$U/wgslwrong"
for k in onewrong vkpast cudafar wgslwrong; do
  { echo "name = \"$k\""; cat "$U/base.toml"; } > "$U/$k/kernel.toml"
  e_cu=""; f_cu=""; p_vk=""; e_wgsl=""
  case $k in
    onewrong) e_cu='+ (i == 1000 ? 1.0f : 0.0f)' ;;
    vkpast) p_vk='if (gl_GlobalInvocationID.x == 0u) { y[n.x + 2u] = 1.0; }' ;;
    wgslwrong) e_wgsl='+ select(0.0, 1.0, i == 1000u)' ;;
    cudafar) f_cu='if (blockIdx.x == 0) { if (threadIdx.x == 0) { if (blockDim.x == 256) y[1ull << 34] = 1.0f; } }' ;;
  esac
  # No `&` in the replacements: bash 5.2 puts the matched text there.
  src=${cu/EXTRA_CU/$e_cu}
  echo "${src/FAR_CU/$f_cu}" > "$U/$k/k.cu"
  echo "$cl" > "$U/$k/k.cl"
  echo "${comp/PAST_VK/$p_vk}" > "$U/$k/k.comp"
  echo "${wgsl/EXTRA_WGSL/$e_wgsl}" > "$U/$k/k.wgsl"
  cp -r "$U/$k" "$R/src-$k"
  one "user-$k" "$U/$k/kernel.toml"
done
cat "$R/summary.txt"
