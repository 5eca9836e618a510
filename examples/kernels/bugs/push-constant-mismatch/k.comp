// y[i] = k * x[i] for i < n, a grid-stride loop.
// BUG: the spec's n is a u64 (8 bytes, at offset 8 after k and 4 bytes of padding), but the
// block below declares `uint n`: 4 bytes at offset 4. The block is 8 bytes, the spec's
// scalars 16, and n reads the padding. Fix: `uvec2 n;` (low word first) or `uint64_t n;`.
// Check: glslangValidator -V --target-env vulkan1.1 k.comp
#version 450

layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;

layout(std430, set = 0, binding = 0) readonly restrict buffer X { float x[]; };
layout(std430, set = 0, binding = 1) writeonly restrict buffer Y { float y[]; };

layout(push_constant) uniform Params {
    float k;
    uint n;  // BUG: the spec's n is a u64
} params;

void main() {
    const uint n = params.n;
    const uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    for (uint i = gl_WorkGroupID.x * gl_WorkGroupSize.x + gl_LocalInvocationID.x; i < n;
         i += step) {
        y[i] = params.k * x[i];
        if (step >= n - i) {
            break;  // i + step would reach n or wrap past 2^32
        }
    }
}
