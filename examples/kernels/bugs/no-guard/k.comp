// y[i] = 2 * x[i], one element per invocation (grid = "data").
// BUG: no `if (i < n)`: invocations of the last workgroup with i >= n read x and write y past
// the end.
// Check: glslangValidator -V --target-env vulkan1.1 k.comp
#version 450

layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;

layout(std430, set = 0, binding = 0) readonly restrict buffer X { float x[]; };
layout(std430, set = 0, binding = 1) writeonly restrict buffer Y { float y[]; };

// The u64 n as two 32-bit words, low first: declared, and never used (that is the bug).
layout(push_constant) uniform Params { uvec2 n; } params;

void main() {
    const uint i = gl_WorkGroupID.x * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
    y[i] = 2.0 * x[i];
}
