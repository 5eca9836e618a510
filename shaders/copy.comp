// Device-to-device copy on the shader cores: the Vulkan copy ceiling's second method, beside
// vkCmdCopyBuffer (which NVIDIA serves on a copy engine, far below what the SMs can move).
//
// Compiled (and checked in as shaders/copy.spv) with, from the repository root:
//   glslangValidator -V --target-env vulkan1.1 -o shaders/copy.spv shaders/copy.comp
// crates/vulkan/tests/shader.rs recompiles it with the same command and fails if the checked-in
// .spv differs, then runs `spirv-val --target-env vulkan1.1` on it.
#version 450

// The host specializes the workgroup size (256, or less where the device allows less).
layout(local_size_x_id = 0) in;

// 16-byte elements: uvec4 moves the bits unchanged, whatever they hold (a float NaN too).
layout(std430, set = 0, binding = 0) readonly restrict buffer Source { uvec4 src[]; };
layout(std430, set = 0, binding = 1) writeonly restrict buffer Destination { uvec4 dst[]; };

// Elements (16 bytes each) to copy. One dispatch covers at most maxStorageBufferRange bytes,
// a uint32_t, so the count always fits; the host splits larger copies into several dispatches.
layout(push_constant) uniform Params { uint n; } params;

void main() {
    const uint n = params.n;
    // Grid-stride loop, as in grayscale.comp. The host keeps grid * local_size_x below 2^32,
    // so neither the start nor the step wraps.
    const uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    for (uint i = gl_WorkGroupID.x * gl_WorkGroupSize.x + gl_LocalInvocationID.x; i < n;
         i += step) {
        dst[i] = src[i];
        // Checked before the add: i + step would reach n, or wrap past 2^32 back below n.
        if (step >= n - i) {
            break;
        }
    }
}
