// y[i] = 2 * x[i] for i < n, a grid-stride loop (correct for any grid and block)...
// BUG: ...except that i == 0 also stores to y[1 << 30], 4 GiB past the start of y.
extern "C" __global__ void twice(const float* x, float* y, unsigned long long n) {
    const unsigned long long step = (unsigned long long)gridDim.x * blockDim.x;
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
         i < n; i += step) {
        y[i] = 2.0f * x[i];
        if (i == 0) {
            y[1ull << 30] = y[0];  // BUG: far out of bounds
        }
    }
}
