// y[i] = 2 * x[i] for i < n, a grid-stride loop (correct for any grid and workgroup)...
// BUG: ...except that i == 0 also stores to y[1 << 30], 4 GiB past the start of y.
// Check: glslangValidator -V --target-env vulkan1.1 k.comp
#version 450

layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;

layout(std430, set = 0, binding = 0) readonly restrict buffer X { float x[]; };
layout(std430, set = 0, binding = 1) restrict buffer Y { float y[]; };

layout(push_constant) uniform Params { uvec2 n; } params;  // the u64 n, low word first

void main() {
    const uint n = params.n.y != 0u ? 0xffffffffu : params.n.x;
    const uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    for (uint i = gl_WorkGroupID.x * gl_WorkGroupSize.x + gl_LocalInvocationID.x; i < n;
         i += step) {
        y[i] = 2.0 * x[i];
        if (i == 0u) {
            y[1u << 30] = y[0];  // BUG: far out of bounds
        }
        if (step >= n - i) {
            break;  // i + step would reach n or wrap past 2^32
        }
    }
}
