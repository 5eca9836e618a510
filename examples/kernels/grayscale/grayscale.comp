// The grayscale kernel as a user's Vulkan source: shaders/grayscale.comp's grid-stride loop,
// with the spec's u64 pixel count read whole. Push constants follow the spec's scalars
// exactly (std430): n is a u64 at offset 0, read here as a uvec2 (low word first). The
// built-in shader pushes a 32-bit n of its own; a spec's block must match the spec.
#version 450
layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;

layout(std430, set = 0, binding = 0) readonly restrict buffer RedPlane { float r[]; };
layout(std430, set = 0, binding = 1) readonly restrict buffer GreenPlane { float g[]; };
layout(std430, set = 0, binding = 2) readonly restrict buffer BluePlane { float b[]; };
layout(std430, set = 0, binding = 3) writeonly restrict buffer GrayPlane { float gray[]; };

// A storage buffer of f32 holds at most 2^30 pixels (maxStorageBufferRange is a uint32_t),
// so the high word is 0 whenever Vulkan can hold the frame.
layout(push_constant) uniform Params { uvec2 n; } params;

void main() {
    const uint n = params.n.x;
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
