// out[x][y] = in[y][x] for a width x height row-major matrix, through a __local tile.
// The work-group is square (local size x == y <= 32); the spec lists the sizes it takes.
// The loads and stores are guarded, the barrier is not: every work-item reaches it.
#define TILE_MAX 32

__kernel void transpose(__global const float* in, __global float* out, const uint width,
                        const uint height) {
    __local float tile[TILE_MAX][TILE_MAX + 1];
    const uint t = (uint)get_local_size(0);
    const uint lx = (uint)get_local_id(0);
    const uint ly = (uint)get_local_id(1);
    const uint x = (uint)get_group_id(0) * t + lx;
    const uint y = (uint)get_group_id(1) * t + ly;
    if (x < width && y < height) {
        tile[ly][lx] = in[(ulong)y * width + x];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    const uint ox = (uint)get_group_id(1) * t + lx;
    const uint oy = (uint)get_group_id(0) * t + ly;
    if (ox < height && oy < width) {
        out[(ulong)oy * height + ox] = tile[lx][ly];
    }
}
