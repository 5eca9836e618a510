// The grid-stride grayscale kernel (shaders/grayscale.comp) over planes too large for one
// allocation or one binding: each plane is split into pieces of 2^shift pixels, each its own
// allocation, reached by buffer device address through a table in device memory.
//
// Compiled (and checked in as shaders/grayscale_split.spv) with, from the repository root:
//   glslangValidator -V --target-env vulkan1.2 -o shaders/grayscale_split.spv shaders/grayscale_split.comp
// crates/vulkan/tests/shader.rs recompiles it with the same command and fails if the checked-in
// .spv differs, then runs `spirv-val --target-env vulkan1.2` on it.
#version 450
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_buffer_reference_uvec2 : require

layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;

layout(buffer_reference, std430, buffer_reference_align = 4) restrict buffer Piece { float v[]; };
// Plane p's piece k is at address[p * count + k]: r, g, b, then the output.
layout(buffer_reference, std430, buffer_reference_align = 8) readonly restrict buffer Table {
    uvec2 address[];
};

// The built-in's u64 `n` (its high word is 0: the host refuses 2^32 pixels or more), then the
// table's address, log2 of a piece's pixels, and the pieces per plane.
layout(push_constant) uniform Params { uvec2 n; uvec2 table; uint shift; uint count; } params;

void main() {
    const uint n = params.n.x;
    Table table = Table(params.table);
    const uint mask = (1u << params.shift) - 1u;
    const uint count = params.count;
    const uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    for (uint i = gl_WorkGroupID.x * gl_WorkGroupSize.x + gl_LocalInvocationID.x; i < n;
         i += step) {
        const uint k = i >> params.shift;
        const uint at = i & mask;
        const float r = Piece(table.address[k]).v[at];
        const float g = Piece(table.address[count + k]).v[at];
        const float b = Piece(table.address[2u * count + k]).v[at];
        Piece(table.address[3u * count + k]).v[at] = 0.299 * r + 0.587 * g + 0.114 * b;
        // As in grayscale.comp: i + step would reach n, or wrap past 2^32 back below n.
        if (step >= n - i) {
            break;
        }
    }
}
