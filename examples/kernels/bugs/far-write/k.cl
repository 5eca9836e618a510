// y[i] = 2 * x[i] for i < n, a grid-stride loop (correct for any grid and work-group)...
// BUG: ...except that i == 0 also stores to y[1 << 30], 4 GiB past the start of y.
__kernel void twice(__global const float* x, __global float* y, const ulong n) {
    const ulong step = (ulong)get_num_groups(0) * get_local_size(0);
    for (ulong i = (ulong)get_group_id(0) * get_local_size(0) + get_local_id(0); i < n;
         i += step) {
        y[i] = 2.0f * x[i];
        if (i == 0) {
            y[1ul << 30] = y[0];  // BUG: far out of bounds
        }
    }
}
