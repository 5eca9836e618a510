// y[i] = x[i] + x[i + 1] (the last element doubled), each group staging x in a __local tile;
// a work-item takes its right neighbour from the tile, or from x at the group's edge.
// BUG: no barrier between the store to tile[tid] and the read of tile[tid + 1].
#define TILE 1024  // the largest work-group the sweep launches

__kernel void pairsum(__global const float* x, __global float* y, const ulong n) {
    __local float tile[TILE];
    const uint tid = (uint)get_local_id(0);
    const uint size = (uint)get_local_size(0);
    const ulong i = (ulong)get_group_id(0) * size + tid;
    if (i < n) {
        tile[tid] = x[i];
    }
    // BUG: a barrier(CLK_LOCAL_MEM_FENCE) belongs here
    if (i < n) {
        const ulong r = i + 1 < n ? i + 1 : i;
        const float right = (tid + 1 < size && i + 1 < n) ? tile[tid + 1] : x[r];
        y[i] = tile[tid] + right;
    }
}
