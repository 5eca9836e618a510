// y = a * x + y over n elements, a grid-stride loop (correct for any grid and block).
__kernel void saxpy(__global const float* x, __global float* y, const float a, const ulong n) {
    const ulong step = (ulong)get_num_groups(0) * (ulong)get_local_size(0);
    for (ulong i = (ulong)get_group_id(0) * get_local_size(0) + get_local_id(0); i < n;
         i += step) {
        y[i] = fma(a, x[i], y[i]);
    }
}
