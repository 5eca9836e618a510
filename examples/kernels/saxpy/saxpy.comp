// y = a * x + y over n elements, a grid-stride loop (correct for any grid and block).
// Check: glslangValidator -V --target-env vulkan1.1 saxpy.comp
#version 450

layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;

layout(std430, set = 0, binding = 0) readonly restrict buffer X { float x[]; };
layout(std430, set = 0, binding = 1) restrict buffer Y { float y[]; };

// The scalars in argument order, std430: a at 0, the u64 n at 8 as two 32-bit words (low
// first), so no int64 extension is needed. A storage buffer holds under 2^32 floats, so the
// low word is the count.
layout(push_constant) uniform Params {
    float a;
    uvec2 n;
} params;

void main() {
    const uint n = params.n.y != 0u ? 0xffffffffu : params.n.x;
    const uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    for (uint i = gl_WorkGroupID.x * gl_WorkGroupSize.x + gl_LocalInvocationID.x; i < n;
         i += step) {
        y[i] = fma(params.a, x[i], y[i]);
        if (step >= n - i) {
            break;  // i + step would reach n or wrap past 2^32
        }
    }
}
