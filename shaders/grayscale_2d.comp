// The 2-D grayscale kernel of the shape sweep (docs/lab.md), the Vulkan twin of grayscale_2d
// in kernels/grayscale.cu and kernels/grayscale.cl.
//
// Compiled (and checked in as shaders/grayscale_2d.spv) with, from the repository root:
//   glslangValidator -V --target-env vulkan1.1 -o shaders/grayscale_2d.spv shaders/grayscale_2d.comp
// crates/vulkan/tests/shader.rs recompiles it with the same command and fails if the checked-in
// .spv differs, then runs `spirv-val --target-env vulkan1.1` on it.
#version 450

// LocalSize x and y (and z, always 1 here) are specialization constants: one SPIR-V module
// serves every workgroup shape the shape sweep creates a pipeline for.
layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;

layout(std430, set = 0, binding = 0) readonly restrict buffer RedPlane { float r[]; };
layout(std430, set = 0, binding = 1) readonly restrict buffer GreenPlane { float g[]; };
layout(std430, set = 0, binding = 2) readonly restrict buffer BluePlane { float b[]; };
layout(std430, set = 0, binding = 3) writeonly restrict buffer GrayPlane { float gray[]; };

// The frame: `width` pixels by `height` rows, row-major. width * height fits 32 bits (a plane
// of f32 holds at most 2^30 pixels: maxStorageBufferRange is a uint32_t).
layout(push_constant) uniform Params { uint width; uint height; } params;

void main() {
    const uint width = params.width;
    const uint height = params.height;
    // A grid-stride loop in each dimension: correct for any (workgroup, workgroup count)
    // shape. gl_LocalInvocationID.x varies fastest in gl_LocalInvocationIndex, and the drivers
    // we know of form subgroups in that order (Vulkan leaves it to the implementation), so a
    // workgroup narrower than the subgroup spreads one subgroup over several rows. The host
    // keeps count * size below 2^32 in each dimension, so neither start nor step wraps.
    const uint step_x = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    const uint step_y = gl_NumWorkGroups.y * gl_WorkGroupSize.y;
    for (uint y = gl_WorkGroupID.y * gl_WorkGroupSize.y + gl_LocalInvocationID.y; y < height;
         y += step_y) {
        const uint row = y * width;
        for (uint x = gl_WorkGroupID.x * gl_WorkGroupSize.x + gl_LocalInvocationID.x; x < width;
             x += step_x) {
            gray[row + x] = 0.299 * r[row + x] + 0.587 * g[row + x] + 0.114 * b[row + x];
            // Checked before the add: x + step_x would reach width, or wrap past 2^32.
            if (step_x >= width - x) {
                break;
            }
        }
        if (step_y >= height - y) {
            break;
        }
    }
}
