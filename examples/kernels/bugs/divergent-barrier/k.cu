// y[i] = x[i] + x[i + 1] (the last element doubled), each block staging x in a shared tile.
// BUG: __syncthreads() is inside `if (i < n)`, so the last block's threads with i >= n skip
// it while the others wait there. Fix: close the guard before the barrier, reopen it after.
#define TILE 1024  // the largest block the sweep launches

extern "C" __global__ void pairsum(const float* x, float* y, unsigned long long n) {
    __shared__ float tile[TILE];
    const unsigned int tid = threadIdx.x;
    const unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + tid;
    if (i < n) {
        tile[tid] = x[i];
        __syncthreads();  // BUG: not reached by the threads with i >= n
        const unsigned long long r = i + 1 < n ? i + 1 : i;
        const float right = (tid + 1 < blockDim.x && i + 1 < n) ? tile[tid + 1] : x[r];
        y[i] = tile[tid] + right;
    }
}
