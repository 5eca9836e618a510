// partials[workgroup] = the sum of this workgroup's share of in[0..n), a grid-stride loop
// then a tree in shared memory sized by specialisation constant 3 (bytes: one float per
// invocation). Every invocation reaches every barrier: the tree's bounds are uniform.
// Check: glslangValidator -V --target-env vulkan1.1 reduce.comp
#version 450

layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;
layout(constant_id = 3) const uint SHARED_BYTES = 4;
shared float scratch[SHARED_BYTES / 4];

layout(std430, set = 0, binding = 0) readonly restrict buffer In { float src[]; };
layout(std430, set = 0, binding = 1) writeonly restrict buffer Partials { float partials[]; };

// The u64 n as two 32-bit words, low first (std430 puts it at offset 0 either way).
layout(push_constant) uniform Params { uvec2 n; } params;

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
