// out[i] = 2 * x[i], WRONG for the spec that declares it: guarded, but no grid-stride loop,
// so a grid smaller than n / local size leaves the tail unwritten.
// Check: glslangValidator -V --target-env vulkan1.1 scale.comp
#version 450

layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;

layout(std430, set = 0, binding = 0) readonly restrict buffer X { float x[]; };
layout(std430, set = 0, binding = 1) writeonly restrict buffer Out { float dst[]; };

layout(push_constant) uniform Params { uvec2 n; } params;

void main() {
    const uint n = params.n.y != 0u ? 0xffffffffu : params.n.x;
    const uint i = gl_WorkGroupID.x * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
    if (i < n) {
        dst[i] = 2.0 * x[i];
    }
}
