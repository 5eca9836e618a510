// y[i] = x[i] * table[i % 16384]: each block stages the whole table in shared memory, waits
// at a barrier every thread reaches, then runs a grid-stride loop over y.
// BUG: 16384 floats = 64 KiB of static shared memory; CUDA allows 48 KiB of static shared.
#define TABLE 16384

extern "C" __global__ void lookup(const float* x, const float* table, float* y,
                                  unsigned long long n) {
    __shared__ float big[TABLE];  // BUG: 64 KiB
    for (unsigned int j = threadIdx.x; j < TABLE; j += blockDim.x) {
        big[j] = table[j];
    }
    __syncthreads();
    const unsigned long long step = (unsigned long long)gridDim.x * blockDim.x;
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
         i < n; i += step) {
        y[i] = x[i] * big[i % TABLE];
    }
}
