// y[i] = x[i - 4] + ... + x[i + 4] (indices clamped to the ends), each block staging its
// stretch of x and a 4-element halo on each side in a shared tile, loaded by all its threads.
// BUG: `if (i >= n) return;` before the load and the barrier: in the last block the threads
// past n never reach __syncthreads() nor load their share of the tile, so the last outputs
// read slots nobody filled. Fix: no early return; guard the global load and the store only.
#define R 4
#define TILE (1024 + 2 * R)  // the largest block the sweep launches, and the halo

extern "C" __global__ void box9(const float* x, float* y, unsigned long long n) {
    __shared__ float tile[TILE];
    const unsigned int tid = threadIdx.x;
    const unsigned int size = blockDim.x;
    const long long base = (long long)blockIdx.x * size;
    const unsigned long long i = (unsigned long long)base + tid;
    if (i >= n) return;  // BUG: these threads skip the barrier and their part of the load
    for (unsigned int j = tid; j < size + 2 * R; j += size) {
        long long g = base + (long long)j - R;
        g = g < 0 ? 0 : (g >= (long long)n ? (long long)n - 1 : g);
        tile[j] = x[g];
    }
    __syncthreads();
    float acc = 0.0f;
    for (int k = 0; k <= 2 * R; k++) acc += tile[tid + k];
    y[i] = acc;
}
