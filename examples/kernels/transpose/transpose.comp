// out[x][y] = in[y][x] for a width x height row-major matrix, through a shared tile.
// The workgroup is square (local size x == y <= 32); the spec lists the sizes it takes.
// The loads and stores are guarded, the barrier is not: every invocation reaches it.
// Check: glslangValidator -V --target-env vulkan1.1 transpose.comp
#version 450

layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;

layout(std430, set = 0, binding = 0) readonly restrict buffer In { float src[]; };
layout(std430, set = 0, binding = 1) writeonly restrict buffer Out { float dst[]; };

layout(push_constant) uniform Params {
    uint width;
    uint height;
} params;

const uint TILE_MAX = 32;
shared float tile[TILE_MAX][TILE_MAX + 1];

void main() {
    const uint t = gl_WorkGroupSize.x;
    const uvec2 l = gl_LocalInvocationID.xy;
    const uint x = gl_WorkGroupID.x * t + l.x;
    const uint y = gl_WorkGroupID.y * t + l.y;
    if (x < params.width && y < params.height) {
        tile[l.y][l.x] = src[y * params.width + x];
    }
    memoryBarrierShared();
    barrier();
    const uint ox = gl_WorkGroupID.y * t + l.x;
    const uint oy = gl_WorkGroupID.x * t + l.y;
    if (ox < params.height && oy < params.width) {
        dst[oy * params.height + ox] = tile[l.x][l.y];
    }
}
