// partials[blockIdx.x] = the sum of this block's share of in[0..n): a grid-stride loop, then
// a tree in dynamic shared memory (blockDim.x floats).
// BUG: `s = blockDim.x / 2 ... s >>= 1` drops the odd slot whenever the live count is odd
// (block 96: 48, 24, 12, 6, 3 -> slot 2 is never added). Fix: halve rounding up.
extern "C" __global__ void reduce(const float* in, float* partials, unsigned long long n) {
    extern __shared__ float scratch[];
    const unsigned int tid = threadIdx.x;
    const unsigned long long step = (unsigned long long)gridDim.x * blockDim.x;
    float acc = 0.0f;
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + tid; i < n;
         i += step) {
        acc += in[i];
    }
    scratch[tid] = acc;
    __syncthreads();
    for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {  // BUG: a power of two only
        if (tid < s) {
            scratch[tid] += scratch[tid + s];
        }
        __syncthreads();
    }
    if (tid == 0) {
        partials[blockIdx.x] = scratch[0];
    }
}
