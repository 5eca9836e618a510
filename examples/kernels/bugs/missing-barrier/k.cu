// y[i] = x[i] + x[i + 1] (the last element doubled), each block staging x in a shared tile;
// a thread takes its right neighbour from the tile, or from x at the block's edge.
// BUG: no __syncthreads() between the store to tile[tid] and the read of tile[tid + 1].
#define TILE 1024  // the largest block the sweep launches

extern "C" __global__ void pairsum(const float* x, float* y, unsigned long long n) {
    __shared__ float tile[TILE];
    const unsigned int tid = threadIdx.x;
    const unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + tid;
    if (i < n) {
        tile[tid] = x[i];
    }
    // BUG: a __syncthreads() belongs here
    if (i < n) {
        const unsigned long long r = i + 1 < n ? i + 1 : i;
        const float right = (tid + 1 < blockDim.x && i + 1 < n) ? tile[tid + 1] : x[r];
        y[i] = tile[tid] + right;
    }
}
