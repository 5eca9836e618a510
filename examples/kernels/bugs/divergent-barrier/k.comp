// y[i] = x[i] + x[i + 1] (the last element doubled), each workgroup staging x in a shared tile.
// BUG: barrier() is inside `if (i < n)`, so the last workgroup's invocations with i >= n skip
// it while the others wait there. Fix: close the guard before the barrier, reopen it after.
// Check: glslangValidator -V --target-env vulkan1.1 k.comp
#version 450

layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;

layout(std430, set = 0, binding = 0) readonly restrict buffer X { float x[]; };
layout(std430, set = 0, binding = 1) writeonly restrict buffer Y { float y[]; };

layout(push_constant) uniform Params { uvec2 n; } params;  // the u64 n, low word first

const uint TILE = 1024;  // the largest workgroup the sweep launches
shared float tile[TILE];

void main() {
    const uint n = params.n.y != 0u ? 0xffffffffu : params.n.x;
    const uint tid = gl_LocalInvocationID.x;
    const uint i = gl_WorkGroupID.x * gl_WorkGroupSize.x + tid;
    if (i < n) {
        tile[tid] = x[i];
        memoryBarrierShared();
        barrier();  // BUG: not reached by the invocations with i >= n
        const uint r = i + 1 < n ? i + 1 : i;
        const float right = (tid + 1 < gl_WorkGroupSize.x && i + 1 < n) ? tile[tid + 1] : x[r];
        y[i] = tile[tid] + right;
    }
}
