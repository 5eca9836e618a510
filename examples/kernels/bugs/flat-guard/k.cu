// out[y][x] = in[y][x] + x for a width x height row-major image, one element per thread.
// BUG: the guard tests the flat index. A thread at (x >= width, y) has the flat index of
// (x - width, y + 1), passes, and overwrites that element with a value for a column that
// does not exist. The right guard is `x < width && y < height`.
extern "C" __global__ void ramp(const float* in, float* out, unsigned int width,
                                unsigned int height) {
    const unsigned int x = blockIdx.x * blockDim.x + threadIdx.x;
    const unsigned int y = blockIdx.y * blockDim.y + threadIdx.y;
    const unsigned int idx = y * width + x;
    if (idx < width * height) {
        out[idx] = in[idx] + (float)x;
    }
}
