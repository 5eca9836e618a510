// The register-heavy kernel (docs/lab.md), the Vulkan twin of grayscale_registers in
// kernels/grayscale.cu and kernels/grayscale.cl.
//
// Compiled (and checked in as shaders/grayscale_registers.spv) with, from the repository root:
//   glslangValidator -V --target-env vulkan1.1 -o shaders/grayscale_registers.spv shaders/grayscale_registers.comp
// crates/vulkan/tests/shader.rs recompiles it with the same command and fails if the checked-in
// .spv differs, then runs `spirv-val --target-env vulkan1.1` on it.
#version 450
#extension GL_EXT_control_flow_attributes : require

layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;

layout(std430, set = 0, binding = 0) readonly restrict buffer RedPlane { float r[]; };
layout(std430, set = 0, binding = 1) readonly restrict buffer GreenPlane { float g[]; };
layout(std430, set = 0, binding = 2) readonly restrict buffer BluePlane { float b[]; };
layout(std430, set = 0, binding = 3) writeonly restrict buffer GrayPlane { float gray[]; };

// The built-in's u64 `n` as a uvec2 (low word first; the high one is 0 whenever Vulkan can
// hold the frame) and its u32 `salt` at offset 8 (std430), which the host passes as 0.
layout(push_constant) uniform Params { uvec2 n; uint salt; } params;

// Values per pixel that are all live at once.
const int CHAIN = 96;

void main() {
    const uint n = params.n.x;
    const uint salt = params.salt;
    // The seed's grid-stride loop, plus a chain of CHAIN values per pixel made first to last
    // and consumed last to first, so the compiler needs about CHAIN more registers. Vulkan has
    // no per-pipeline workgroup limit (CUDA's CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, OpenCL's
    // CL_KERNEL_WORK_GROUP_SIZE): a driver must run any workgroup up to
    // maxComputeWorkGroupInvocations, spilling registers if it has to. (h | 1) is odd and salt
    // is 0, so every pixel gets its grayscale value, but the compiler cannot know that.
    const uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    for (uint i = gl_WorkGroupID.x * gl_WorkGroupSize.x + gl_LocalInvocationID.x; i < n;
         i += step) {
        const float value = 0.299 * r[i] + 0.587 * g[i] + 0.114 * b[i];
        uint v[CHAIN];
        v[0] = floatBitsToUint(value) ^ salt;
        [[unroll]] for (int k = 1; k < CHAIN; ++k) {
            v[k] = v[k - 1] * 0x9E3779B1u + uint(k);
        }
        uint h = salt;
        [[unroll]] for (int k = CHAIN - 1; k >= 0; --k) {
            h = (h ^ v[k]) * 0x85EBCA6Bu;
        }
        gray[i] = (h | 1u) == salt ? 0.0 : value;
        if (step >= n - i) {
            break;
        }
    }
}
