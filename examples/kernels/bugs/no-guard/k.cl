// y[i] = 2 * x[i], one element per work-item (grid = "data").
// BUG: no `if (i < n)`: work-items of the last group with i >= n read x and write y past the end.
__kernel void twice(__global const float* x, __global float* y, const ulong n) {
    const ulong i = (ulong)get_group_id(0) * get_local_size(0) + get_local_id(0);
    (void)n;  // the count is passed, and never used: that is the bug
    y[i] = 2.0f * x[i];
}
