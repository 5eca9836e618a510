// y[i] = x[i - 4] + ... + x[i + 4] (indices clamped to the ends), each workgroup staging its
// stretch of x and a 4-element halo on each side in a shared tile, loaded by all invocations.
// BUG: `if (i >= n) return;` before the load and the barrier: in the last workgroup the
// invocations past n never reach barrier() nor load their share of the tile, so the last
// outputs read slots nobody filled. Fix: no early return; guard the load and the store only.
// Check: glslangValidator -V --target-env vulkan1.1 k.comp
#version 450

layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;

layout(std430, set = 0, binding = 0) readonly restrict buffer X { float x[]; };
layout(std430, set = 0, binding = 1) writeonly restrict buffer Y { float y[]; };

layout(push_constant) uniform Params { uvec2 n; } params;  // the u64 n, low word first

const int R = 4;
const uint TILE = 1024 + 2 * R;  // the largest workgroup the sweep launches, and the halo
shared float tile[TILE];

void main() {
    const uint n = params.n.y != 0u ? 0xffffffffu : params.n.x;
    const uint tid = gl_LocalInvocationID.x;
    const uint size = gl_WorkGroupSize.x;
    const int base = int(gl_WorkGroupID.x * size);
    const uint i = uint(base) + tid;
    if (i >= n) return;  // BUG: these invocations skip the barrier and their part of the load
    for (uint j = tid; j < size + 2 * R; j += size) {
        const int g = clamp(base + int(j) - R, 0, int(n) - 1);
        tile[j] = x[g];
    }
    memoryBarrierShared();
    barrier();
    float acc = 0.0;
    for (int k = 0; k <= 2 * R; k++) acc += tile[tid + k];
    y[i] = acc;
}
