// out[y][x] = in[y][x] + x for a width x height row-major image, one element per work-item.
// BUG: the guard tests the flat index. A work-item at (x >= width, y) has the flat index of
// (x - width, y + 1), passes, and overwrites that element with a value for a column that
// does not exist. The right guard is `x < width && y < height`.
__kernel void ramp(__global const float* in, __global float* out, const uint width,
                   const uint height) {
    const uint x = (uint)get_global_id(0);
    const uint y = (uint)get_global_id(1);
    const uint idx = y * width + x;
    if (idx < width * height) {
        out[idx] = in[idx] + (float)x;
    }
}
