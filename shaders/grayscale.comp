// Grayscale conversion of three planar f32 channels, the Vulkan twin of the seed's CUDA kernel.
//
// Compiled (and checked in as shaders/grayscale.spv) with, from the repository root:
//   glslangValidator -V --target-env vulkan1.1 -o shaders/grayscale.spv shaders/grayscale.comp
// crates/vulkan/tests/shader.rs recompiles it with the same command and fails if the checked-in
// .spv differs, then runs `spirv-val --target-env vulkan1.1` on it.
#version 450

// The workgroup size is a specialization constant (the program contract, crates/core's
// program.rs), so that one SPIR-V module serves every block size the sweep creates.
layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;

layout(std430, set = 0, binding = 0) readonly restrict buffer RedPlane { float r[]; };
layout(std430, set = 0, binding = 1) readonly restrict buffer GreenPlane { float g[]; };
layout(std430, set = 0, binding = 2) readonly restrict buffer BluePlane { float b[]; };
layout(std430, set = 0, binding = 3) writeonly restrict buffer GrayPlane { float gray[]; };

// The pixel count, the built-in's u64 `n` (std430: at offset 0), read as a uvec2 (low word
// first). The high word is 0 whenever Vulkan can hold the frame: maxStorageBufferRange is a
// uint32_t, so a plane of f32 never holds more than 2^30 pixels.
layout(push_constant) uniform Params { uvec2 n; } params;

void main() {
    const uint n = params.n.x;
    // Grid-stride loop, as in the seed: correct for any grid and block size. Only x indexes;
    // invocations with y or z above 0 repeat x's work. The host refuses a launch whose
    // grid * local_size_x exceeds 2^32 - 1, so neither the start nor the step wraps.
    const uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    for (uint i = gl_WorkGroupID.x * gl_WorkGroupSize.x + gl_LocalInvocationID.x; i < n;
         i += step) {
        gray[i] = 0.299 * r[i] + 0.587 * g[i] + 0.114 * b[i];
        // Checked before the add: i + step would reach n, or wrap past 2^32 back below n.
        if (step >= n - i) {
            break;
        }
    }
}
