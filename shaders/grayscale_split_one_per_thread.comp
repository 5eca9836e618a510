// The one-pixel-per-thread grayscale kernel (shaders/grayscale_one_per_thread.comp) over planes
// split into pieces, as shaders/grayscale_split.comp explains.
//
// Compiled (and checked in as shaders/grayscale_split_one_per_thread.spv) with, from the
// repository root:
//   glslangValidator -V --target-env vulkan1.2 -o shaders/grayscale_split_one_per_thread.spv shaders/grayscale_split_one_per_thread.comp
// crates/vulkan/tests/shader.rs recompiles it with the same command and fails if the checked-in
// .spv differs, then runs `spirv-val --target-env vulkan1.2` on it.
#version 450
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_buffer_reference_uvec2 : require

layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;

layout(buffer_reference, std430, buffer_reference_align = 4) restrict buffer Piece { float v[]; };
layout(buffer_reference, std430, buffer_reference_align = 8) readonly restrict buffer Table {
    uvec2 address[];
};

layout(push_constant) uniform Params { uvec2 n; uvec2 table; uint shift; uint count; } params;

void main() {
    const uint i = gl_GlobalInvocationID.x;
    if (i < params.n.x) {
        Table table = Table(params.table);
        const uint k = i >> params.shift;
        const uint at = i & ((1u << params.shift) - 1u);
        const uint count = params.count;
        const float r = Piece(table.address[k]).v[at];
        const float g = Piece(table.address[count + k]).v[at];
        const float b = Piece(table.address[2u * count + k]).v[at];
        Piece(table.address[3u * count + k]).v[at] = 0.299 * r + 0.587 * g + 0.114 * b;
    }
}
