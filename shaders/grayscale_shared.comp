// The shared-memory probe (docs/lab.md), the Vulkan twin of grayscale_shared in
// kernels/grayscale.cu and kernels/grayscale.cl.
//
// Compiled (and checked in as shaders/grayscale_shared.spv) with, from the repository root:
//   glslangValidator -V --target-env vulkan1.1 -o shaders/grayscale_shared.spv shaders/grayscale_shared.comp
// crates/vulkan/tests/shader.rs recompiles it with the same command and fails if the checked-in
// .spv differs, then runs `spirv-val --target-env vulkan1.1` on it.
#version 450

layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;

// Vulkan has no dynamic shared memory: the size is fixed when the pipeline is created,
// through specialization constant 3, the launch's shared bytes (the program contract; one
// pipeline per size). A size above maxComputeSharedMemorySize is not an error the driver
// returns but invalid usage (undefined behaviour), so blocksweep refuses it before creating
// the pipeline, naming the limit. Fewer than 4 bytes still get one float (SPIR-V has no empty
// arrays); fewer than 12 write nothing.
layout(constant_id = 3) const uint SHARED_BYTES = 12;
const uint ARRAY_WORDS = SHARED_BYTES / 4;
shared float scratch[ARRAY_WORDS > 0u ? ARRAY_WORDS : 1u];

layout(std430, set = 0, binding = 0) readonly restrict buffer RedPlane { float r[]; };
layout(std430, set = 0, binding = 1) readonly restrict buffer GreenPlane { float g[]; };
layout(std430, set = 0, binding = 2) readonly restrict buffer BluePlane { float b[]; };
layout(std430, set = 0, binding = 3) writeonly restrict buffer GrayPlane { float gray[]; };

// The built-in's u64 `n` as a uvec2 (low word first; the high one is 0 whenever Vulkan can
// hold the frame) and its u32 `words` at offset 8 (std430): the launch's shared bytes / 4, as
// the host sets it before each launch (CUDA and OpenCL size their array from it).
layout(push_constant) uniform Params { uvec2 n; uint words; } params;

void main() {
    const uint n = params.n.x;
    // The words both sizes allow: a `words` the host did not set shows as unwritten pixels,
    // as it would on CUDA and OpenCL, instead of being hidden by the constant.
    const uint words = min(params.words, ARRAY_WORDS);
    if (words < 3) {
        return;  // uniform: such a launch writes nothing (verification says so)
    }
    // The workgroup fills all of the array with the three weights, repeated, meets at a
    // barrier every invocation reaches (never inside a divergent branch), then each invocation
    // reads its weights from there. Launched with 1-D workgroups; words >= 3.
    for (uint k = gl_LocalInvocationID.x; k < words; k += gl_WorkGroupSize.x) {
        scratch[k] = k % 3 == 0 ? 0.299 : (k % 3 == 1 ? 0.587 : 0.114);
    }
    memoryBarrierShared();
    barrier();
    // A different triple for each invocation, so that every part of the array is read.
    const uint j = 3 * (gl_LocalInvocationID.x % (words / 3));
    const float wr = scratch[j];
    const float wg = scratch[j + 1];
    const float wb = scratch[j + 2];
    // The seed's grid-stride loop. The host keeps grid * local_size_x below 2^32.
    const uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    for (uint i = gl_WorkGroupID.x * gl_WorkGroupSize.x + gl_LocalInvocationID.x; i < n;
         i += step) {
        gray[i] = wr * r[i] + wg * g[i] + wb * b[i];
        if (step >= n - i) {
            break;
        }
    }
}
