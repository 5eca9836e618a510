// out[x][y] = in[y][x] for a width x height row-major matrix, through a shared tile.
// The block is square (blockDim.x == blockDim.y <= 32); the spec lists the blocks it takes.
// The loads and stores are guarded, the barrier is not: every thread of the block reaches it.
#define TILE_MAX 32

extern "C" __global__ void transpose(const float* in, float* out, unsigned int width,
                                     unsigned int height) {
    __shared__ float tile[TILE_MAX][TILE_MAX + 1];  // +1: no bank conflicts on the column read
    const unsigned int t = blockDim.x;
    const unsigned int x = blockIdx.x * t + threadIdx.x;
    const unsigned int y = blockIdx.y * t + threadIdx.y;
    if (x < width && y < height) {
        tile[threadIdx.y][threadIdx.x] = in[(unsigned long long)y * width + x];
    }
    __syncthreads();
    // The same tile, transposed: block (bx, by) writes rows bx*t.. of out, columns by*t..
    const unsigned int ox = blockIdx.y * t + threadIdx.x;  // column of out: a row of in
    const unsigned int oy = blockIdx.x * t + threadIdx.y;  // row of out: a column of in
    if (ox < height && oy < width) {
        out[(unsigned long long)oy * height + ox] = tile[threadIdx.x][threadIdx.y];
    }
}
