// partials[group] = the sum of this work-group's share of in[0..n): a grid-stride loop, then
// a tree in __local memory (the `local` argument: local size floats).
// BUG: `s = size / 2 ... s >>= 1` drops the odd slot whenever the live count is odd
// (local size 96: 48, 24, 12, 6, 3 -> slot 2 is never added). Fix: halve rounding up.
__kernel void reduce(__global const float* in, __global float* partials, const ulong n,
                     __local float* scratch) {
    const uint tid = (uint)get_local_id(0);
    const uint size = (uint)get_local_size(0);
    const ulong step = (ulong)get_num_groups(0) * size;
    float acc = 0.0f;
    for (ulong i = (ulong)get_group_id(0) * size + tid; i < n; i += step) {
        acc += in[i];
    }
    scratch[tid] = acc;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint s = size / 2; s > 0; s >>= 1) {  // BUG: a power of two only
        if (tid < s) {
            scratch[tid] += scratch[tid + s];
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (tid == 0) {
        partials[get_group_id(0)] = scratch[0];
    }
}
