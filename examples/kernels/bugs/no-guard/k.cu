// y[i] = 2 * x[i], one element per thread (grid = "data").
// BUG: no `if (i < n)`: threads of the last block with i >= n read x and write y past the end.
extern "C" __global__ void twice(const float* x, float* y, unsigned long long n) {
    const unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    (void)n;  // the count is passed, and never used: that is the bug
    y[i] = 2.0f * x[i];
}
