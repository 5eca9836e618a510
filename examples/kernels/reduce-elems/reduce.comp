// partials[workgroup] = the sum of this workgroup's share of in[0..n): each pass adds ELEMS
// elements a grid apart, then a tree in shared memory (specialisation constant 3, bytes).
// ELEMS comes from the tune, as a define (-DELEMS=4) through the GLSL compiler.
#version 450

#ifndef ELEMS
#define ELEMS 1
#endif

layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;
layout(constant_id = 3) const uint SHARED_BYTES = 4;
shared float scratch[SHARED_BYTES / 4];

layout(std430, set = 0, binding = 0) readonly restrict buffer In { float src[]; };
layout(std430, set = 0, binding = 1) writeonly restrict buffer Partials { float partials[]; };

layout(push_constant) uniform Params { uvec2 n; } params;

void main() {
    const uint n = params.n.y != 0u ? 0xffffffffu : params.n.x;
    const uint tid = gl_LocalInvocationID.x;
    const uint size = gl_WorkGroupSize.x;
    const uint step = gl_NumWorkGroups.x * size;
    float acc = 0.0;
    for (uint i = gl_WorkGroupID.x * size + tid; i < n;) {
        for (uint e = 0u; e < uint(ELEMS); e++) {
            // e * step below n - i: in range, and i + e * step cannot wrap past 2^32.
            if (e * step < n - i) {
                acc += src[i + e * step];
            }
        }
        if (step * uint(ELEMS) >= n - i) {
            break;
        }
        i += step * uint(ELEMS);
    }
    scratch[tid] = acc;
    memoryBarrierShared();
    barrier();
    for (uint live = size; live > 1;) {
        const uint upper = (live + 1) / 2;
        if (tid < live - upper) {
            scratch[tid] += scratch[tid + upper];
        }
        memoryBarrierShared();
        barrier();
        live = upper;
    }
    if (tid == 0) {
        partials[gl_WorkGroupID.x] = scratch[0];
    }
}
