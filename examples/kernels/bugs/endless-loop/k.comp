// y[i] = x[i] / 2^k with k = i % 8, the halvings applied two at a time.
// BUG: `while (k != 0) ... k -= 2` never ends for an odd k (1, 0xffffffff, 0xfffffffd, ...).
// The store to y inside the loop is volatile: the loop has a visible effect on every pass.
// (lavapipe ends any loop after 65535 passes, so there the dispatch may finish.)
// Check: glslangValidator -V --target-env vulkan1.1 k.comp
#version 450

layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;

layout(std430, set = 0, binding = 0) readonly restrict buffer X { float x[]; };
layout(std430, set = 0, binding = 1) volatile buffer Y { float y[]; };

layout(push_constant) uniform Params { uvec2 n; } params;  // the u64 n, low word first

void main() {
    const uint n = params.n.y != 0u ? 0xffffffffu : params.n.x;
    const uint i = gl_WorkGroupID.x * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
    if (i < n) {
        float v = x[i];
        uint k = i % 8u;
        y[i] = v;
        while (k != 0u) {  // BUG: misses 0 when k is odd
            v *= 0.25;
            y[i] = v;
            k -= 2u;
        }
    }
}
