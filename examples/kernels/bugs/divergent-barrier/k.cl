// y[i] = x[i] + x[i + 1] (the last element doubled), each group staging x in a __local tile.
// BUG: the barrier is inside `if (i < n)`, so the last group's work-items with i >= n skip it
// while the others wait there. Fix: close the guard before the barrier, reopen it after.
#define TILE 1024  // the largest work-group the sweep launches

__kernel void pairsum(__global const float* x, __global float* y, const ulong n) {
    __local float tile[TILE];
    const uint tid = (uint)get_local_id(0);
    const uint size = (uint)get_local_size(0);
    const ulong i = (ulong)get_group_id(0) * size + tid;
    if (i < n) {
        tile[tid] = x[i];
        barrier(CLK_LOCAL_MEM_FENCE);  // BUG: not reached by the work-items with i >= n
        const ulong r = i + 1 < n ? i + 1 : i;
        const float right = (tid + 1 < size && i + 1 < n) ? tile[tid + 1] : x[r];
        y[i] = tile[tid] + right;
    }
}
