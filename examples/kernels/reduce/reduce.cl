// partials[group] = the sum of this work-group's share of in[0..n), a grid-stride loop then a
// tree in __local memory (the `local` argument: local size floats). Every work-item reaches
// every barrier: the tree's loop bounds are the same for the work-group.
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
