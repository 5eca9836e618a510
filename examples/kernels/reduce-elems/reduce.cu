// partials[blockIdx.x] = the sum of this block's share of in[0..n): each pass of the
// grid-stride loop adds ELEMS elements a grid apart (coalesced, independent loads), then a
// tree in dynamic shared memory sums the block. ELEMS comes from the tune (-DELEMS=4).
#ifndef ELEMS
#define ELEMS 1
#endif
extern "C" __global__ void reduce(const float* in, float* partials, unsigned long long n) {
    extern __shared__ float scratch[];
    const unsigned int tid = threadIdx.x;
    const unsigned long long step = (unsigned long long)gridDim.x * blockDim.x;
    float acc = 0.0f;
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + tid; i < n;
         i += step * ELEMS) {
#pragma unroll
        for (int e = 0; e < ELEMS; e++) {
            const unsigned long long j = i + e * step;
            if (j < n) {
                acc += in[j];
            }
        }
    }
    scratch[tid] = acc;
    __syncthreads();
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
