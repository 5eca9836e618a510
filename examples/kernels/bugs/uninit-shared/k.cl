// y[i] = tile[tid] + tile[tid + size], the tile a `local` argument (2 x local size floats);
// the upper half was meant to hold a second input.
// BUG: only tile[0 .. size) is ever written; tile[tid + size] is uninitialised.
__kernel void halves(__global const float* x, __global float* y, const ulong n,
                     __local float* tile) {
    const uint tid = (uint)get_local_id(0);
    const uint size = (uint)get_local_size(0);
    const ulong i = (ulong)get_group_id(0) * size + tid;
    if (i < n) {
        tile[tid] = x[i];
    }
    barrier(CLK_LOCAL_MEM_FENCE);  // every work-item reaches it: the barrier is not the bug
    if (i < n) {
        y[i] = tile[tid] + tile[tid + size];  // BUG: no work-item wrote this slot
    }
}
