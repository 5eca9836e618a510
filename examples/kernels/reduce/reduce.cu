// partials[blockIdx.x] = the sum of this block's share of in[0..n), a grid-stride loop then a
// tree in dynamic shared memory (blockDim.x floats, cuLaunchKernel's sharedMemBytes).
// Every thread reaches every barrier: the tree's loop bounds are the same for the block.
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
    // Halve the live part, rounding up, so any block size works.
    for (unsigned int live = blockDim.x; live > 1;) {
        const unsigned int upper = (live + 1) / 2;
        if (tid < live - upper) {
            scratch[tid] += scratch[tid + upper];
        }
        __syncthreads();
        live = upper;
    }
    if (tid == 0) {
        partials[blockIdx.x] = scratch[0];
    }
}
