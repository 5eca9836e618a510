// partials[blockIdx.x] = the sum of this block's share of in[0..n): a grid-stride loop, a
// tree in dynamic shared memory down to 128 slots, then the last 64 lanes unrolled.
// BUG: the unrolled steps have no __syncwarp() and scratch is not volatile, so a lane may
// read its neighbour's slot before the neighbour's add (or keep it in a register).
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
    for (unsigned int s = blockDim.x / 2; s > 64; s >>= 1) {
        if (tid < s) {
            scratch[tid] += scratch[tid + s];
        }
        __syncthreads();
    }
    if (tid < 64) {  // BUG: "one wavefront needs no synchronisation"
        scratch[tid] += scratch[tid + 64];
        scratch[tid] += scratch[tid + 32];
        scratch[tid] += scratch[tid + 16];
        scratch[tid] += scratch[tid + 8];
        scratch[tid] += scratch[tid + 4];
        scratch[tid] += scratch[tid + 2];
        scratch[tid] += scratch[tid + 1];
    }
    if (tid == 0) {
        partials[blockIdx.x] = scratch[0];
    }
}
