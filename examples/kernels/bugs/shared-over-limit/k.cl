// y[i] = x[i] * table[i % 16384]: each work-group stages the whole table in __local memory,
// waits at a barrier every work-item reaches, then runs a grid-stride loop over y.
// BUG: 16384 floats = 64 KiB of __local memory, over CL_DEVICE_LOCAL_MEM_SIZE on most GPUs.
#define TABLE 16384

__kernel void lookup(__global const float* x, __global const float* table, __global float* y,
                     const ulong n) {
    __local float big[TABLE];  // BUG: 64 KiB
    for (uint j = (uint)get_local_id(0); j < TABLE; j += (uint)get_local_size(0)) {
        big[j] = table[j];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    const ulong step = (ulong)get_num_groups(0) * get_local_size(0);
    for (ulong i = (ulong)get_group_id(0) * get_local_size(0) + get_local_id(0); i < n;
         i += step) {
        y[i] = x[i] * big[i % TABLE];
    }
}
