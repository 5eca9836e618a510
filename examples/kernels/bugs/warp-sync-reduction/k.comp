// partials[workgroup] = the sum of this workgroup's share of in[0..n): a grid-stride loop, a
// tree in shared memory (specialisation constant 3) down to 128 slots, then 64 lanes unrolled.
// BUG: the unrolled steps have no barrier() and scratch is not volatile/coherent: nothing
// makes one invocation's add visible to another before it reads that slot.
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
    const uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    float acc = 0.0;
    for (uint i = gl_WorkGroupID.x * gl_WorkGroupSize.x + tid; i < n; i += step) {
        acc += src[i];
        if (step >= n - i) break;  // i + step would reach n or wrap past 2^32
    }
    scratch[tid] = acc;
    memoryBarrierShared();
    barrier();
    for (uint s = gl_WorkGroupSize.x / 2; s > 64; s >>= 1) {
        if (tid < s) scratch[tid] += scratch[tid + s];
        memoryBarrierShared();
        barrier();
    }
    if (tid < 64) {  // BUG: "one wavefront needs no synchronisation"
        scratch[tid] += scratch[tid + 64];
        scratch[tid] += scratch[tid + 32];
        scratch[tid] += scratch[tid + 16];
        scratch[tid] += scratch[tid + 8];
        scratch[tid] += scratch[tid + 4];
        scratch[tid] += scratch[tid + 2];
        scratch[tid] += scratch[tid + 1];
    }
    if (tid == 0) partials[gl_WorkGroupID.x] = scratch[0];
}
