// y[i] = x[i] / 2^k with k = i % 8, the halvings applied two at a time.
// BUG: `while (k != 0) ... k -= 2` never ends for an odd k (1, 0xffffffff, 0xfffffffd, ...).
// The store to y inside the loop is volatile: the loop has a visible effect on every pass.
__kernel void halve(__global const float* x, __global float* y, const ulong n) {
    volatile __global float* out = y;
    const ulong i = (ulong)get_group_id(0) * get_local_size(0) + get_local_id(0);
    if (i < n) {
        float v = x[i];
        uint k = (uint)(i % 8);
        out[i] = v;
        while (k != 0) {  // BUG: misses 0 when k is odd
            v *= 0.25f;
            out[i] = v;
            k -= 2;
        }
    }
}
