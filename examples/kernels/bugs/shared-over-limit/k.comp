// y[i] = x[i] * table[i % 16384]: each workgroup stages the whole table in shared memory,
// waits at a barrier every invocation reaches, then runs a grid-stride loop over y.
// BUG: 16384 floats = 64 KiB of shared memory, over maxComputeSharedMemorySize on most
// devices (lavapipe: 32 KiB).
// Check: glslangValidator -V --target-env vulkan1.1 k.comp
#version 450

layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;

layout(std430, set = 0, binding = 0) readonly restrict buffer X { float x[]; };
layout(std430, set = 0, binding = 1) readonly restrict buffer Table { float table[]; };
layout(std430, set = 0, binding = 2) writeonly restrict buffer Y { float y[]; };

layout(push_constant) uniform Params { uvec2 n; } params;  // the u64 n, low word first

const uint TABLE = 16384;
shared float big[TABLE];  // BUG: 64 KiB

void main() {
    const uint n = params.n.y != 0u ? 0xffffffffu : params.n.x;
    for (uint j = gl_LocalInvocationID.x; j < TABLE; j += gl_WorkGroupSize.x) {
        big[j] = table[j];
    }
    memoryBarrierShared();
    barrier();
    const uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    for (uint i = gl_WorkGroupID.x * gl_WorkGroupSize.x + gl_LocalInvocationID.x; i < n;
         i += step) {
        y[i] = x[i] * big[i % TABLE];
        if (step >= n - i) {
            break;  // i + step would reach n or wrap past 2^32
        }
    }
}
