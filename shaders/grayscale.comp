// Grayscale conversion of three planar f32 channels, the Vulkan twin of the seed's CUDA kernel.
//
// Compiled (and checked in as shaders/grayscale.spv) with, from the repository root:
//   glslangValidator -V --target-env vulkan1.1 -o shaders/grayscale.spv shaders/grayscale.comp
// crates/vulkan/tests/shader.rs recompiles it with the same command and fails if the checked-in
// .spv differs, then runs `spirv-val --target-env vulkan1.1` on it.
#version 450

// The workgroup size and the kernel variant are specialization constants, so that one SPIR-V
// module serves every (block size, variant) pipeline the sweep creates.
layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;
layout(constant_id = 3) const bool ONE_PIXEL_PER_THREAD = false;

layout(std430, set = 0, binding = 0) readonly restrict buffer RedPlane { float r[]; };
layout(std430, set = 0, binding = 1) readonly restrict buffer GreenPlane { float g[]; };
layout(std430, set = 0, binding = 2) readonly restrict buffer BluePlane { float b[]; };
layout(std430, set = 0, binding = 3) writeonly restrict buffer GrayPlane { float gray[]; };

// Pixel count. 32 bits: maxStorageBufferRange is itself a uint32_t, so a plane of f32 can
// never hold more than 2^30 pixels; the host refuses larger frames before uploading.
layout(push_constant) uniform Params { uint n; } params;

void main() {
    const uint n = params.n;
    if (ONE_PIXEL_PER_THREAD) {
        // Correct only when the grid covers the frame: the tests launch it one block short to
        // prove that verification catches unwritten pixels.
        const uint i = gl_GlobalInvocationID.x;
        if (i < n) {
            gray[i] = 0.299 * r[i] + 0.587 * g[i] + 0.114 * b[i];
        }
        return;
    }
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
