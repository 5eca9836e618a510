// y[i] = x[i] / 2^k with k = i % 8, the halvings applied two at a time.
// BUG: `while (k != 0) ... k -= 2` never ends for an odd k (1, 0xffffffff, 0xfffffffd, ...).
// The store to y inside the loop is volatile: the loop has a visible effect on every pass.
extern "C" __global__ void halve(const float* x, float* y, unsigned long long n) {
    volatile float* out = y;
    const unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = x[i];
        unsigned int k = (unsigned int)(i % 8);
        out[i] = v;
        while (k != 0) {  // BUG: misses 0 when k is odd
            v *= 0.25f;
            out[i] = v;
            k -= 2;
        }
    }
}
