// partials[group] = the sum of this work-group's share of in[0..n): a grid-stride loop, a
// tree in __local memory down to 128 slots, then the last 64 work-items unrolled.
// BUG: the unrolled steps have no barrier and scratch is not volatile: nothing makes one
// work-item's add visible to another before it reads that slot.
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
    for (uint s = size / 2; s > 64; s >>= 1) {
        if (tid < s) {
            scratch[tid] += scratch[tid + s];
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (tid < 64) {  // BUG: "one wavefront needs no synchronisation"
        scratch[tid] += scratch[tid + 64];
        scratch[tid] += scratch[tid + 32];
        scratch[tid] += scratch[tid + 16];
        scratch[tid] += scratch[tid + 8];
        scratch[tid] += scratch[tid + 4];
        scratch[tid] += scratch[tid + 2];
        scratch[tid] += scratch[tid + 1];
    }
    if (tid == 0) {
        partials[get_group_id(0)] = scratch[0];
    }
}
