// out[i] = 2 * x[i], WRONG for the spec that declares it: it is guarded (never out of
// bounds) but has no grid-stride loop, so a grid smaller than n / blockDim.x leaves the tail
// unwritten. The correct loop is in examples/kernels/saxpy/saxpy.cu.
extern "C" __global__ void scale(const float* x, float* out, unsigned long long n) {
    const unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] = 2.0f * x[i];
    }
}
