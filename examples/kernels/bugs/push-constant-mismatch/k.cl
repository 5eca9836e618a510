// y[i] = k * x[i] for i < n, a grid-stride loop. CORRECT: the u64 n is a ulong.
// (The bug of this folder is in k.comp's push-constant block.)
__kernel void scale(__global const float* x, __global float* y, const float k, const ulong n) {
    const ulong step = (ulong)get_num_groups(0) * get_local_size(0);
    for (ulong i = (ulong)get_group_id(0) * get_local_size(0) + get_local_id(0); i < n;
         i += step) {
        y[i] = k * x[i];
    }
}
