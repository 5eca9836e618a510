// partials[group] = the sum of this work-group's share of in[0..n): each pass adds ELEMS
// elements a grid apart, then a tree in __local memory. ELEMS comes from the tune (-DELEMS=4).
#ifndef ELEMS
#define ELEMS 1
#endif
__kernel void reduce(__global const float* in, __global float* partials, const ulong n,
                     __local float* scratch) {
    const uint tid = (uint)get_local_id(0);
    const uint size = (uint)get_local_size(0);
    const ulong step = (ulong)get_num_groups(0) * size;
    float acc = 0.0f;
    for (ulong i = (ulong)get_group_id(0) * size + tid; i < n; i += step * ELEMS) {
        for (int e = 0; e < ELEMS; e++) {
            const ulong j = i + e * step;
            if (j < n) {
                acc += in[j];
            }
        }
    }
    scratch[tid] = acc;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint live = size; live > 1;) {
        const uint upper = (live + 1) / 2;
        if (tid < live - upper) {
            scratch[tid] += scratch[tid + upper];
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        live = upper;
    }
    if (tid == 0) {
        partials[get_group_id(0)] = scratch[0];
    }
}
