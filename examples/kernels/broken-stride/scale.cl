// out[i] = 2 * x[i], WRONG for the spec that declares it: guarded, but no grid-stride loop,
// so a grid smaller than n / local size leaves the tail unwritten.
__kernel void scale(__global const float* x, __global float* out, const ulong n) {
    const ulong i = (ulong)get_group_id(0) * get_local_size(0) + get_local_id(0);
    if (i < n) {
        out[i] = 2.0f * x[i];
    }
}
