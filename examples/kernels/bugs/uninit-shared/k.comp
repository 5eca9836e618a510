// y[i] = tile[tid] + tile[tid + size], the tile sized by specialisation constant 3 (bytes:
// 2 x workgroup floats); the upper half was meant to hold a second input.
// BUG: only tile[0 .. size) is ever written; tile[tid + size] is uninitialised.
// Check: glslangValidator -V --target-env vulkan1.1 k.comp
#version 450

layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;
layout(constant_id = 3) const uint SHARED_BYTES = 8;
shared float tile[SHARED_BYTES / 4];

layout(std430, set = 0, binding = 0) readonly restrict buffer X { float x[]; };
layout(std430, set = 0, binding = 1) writeonly restrict buffer Y { float y[]; };

layout(push_constant) uniform Params { uvec2 n; } params;  // the u64 n, low word first

void main() {
    const uint n = params.n.y != 0u ? 0xffffffffu : params.n.x;
    const uint tid = gl_LocalInvocationID.x;
    const uint size = gl_WorkGroupSize.x;
    const uint i = gl_WorkGroupID.x * size + tid;
    if (i < n) {
        tile[tid] = x[i];
    }
    memoryBarrierShared();
    barrier();  // every invocation reaches it: the barrier is not the bug
    if (i < n) {
        y[i] = tile[tid] + tile[tid + size];  // BUG: no invocation wrote this slot
    }
}
