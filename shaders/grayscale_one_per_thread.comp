// One pixel per thread with an `i < n` guard, the Vulkan twin of grayscale_one_per_thread in
// kernels/grayscale.cu and kernels/grayscale.cl: correct only when the grid covers the frame
// (the tests launch it one block short to prove that verification catches unwritten pixels).
//
// Compiled (and checked in as shaders/grayscale_one_per_thread.spv) with, from the repository root:
//   glslangValidator -V --target-env vulkan1.1 -o shaders/grayscale_one_per_thread.spv shaders/grayscale_one_per_thread.comp
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
    // The whole u64 compared: with a high word, every 32-bit index is below n.
    const uint i = gl_GlobalInvocationID.x;
    if (params.n.y != 0u || i < params.n.x) {
        gray[i] = 0.299 * r[i] + 0.587 * g[i] + 0.114 * b[i];
    }
}
