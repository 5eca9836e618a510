// y[i] = tile[tid] + tile[tid + blockDim.x], the tile in dynamic shared memory (2 x block
// floats); the upper half was meant to hold a second input.
// BUG: only tile[0 .. blockDim.x) is ever written; tile[tid + blockDim.x] is uninitialised.
extern "C" __global__ void halves(const float* x, float* y, unsigned long long n) {
    extern __shared__ float tile[];
    const unsigned int tid = threadIdx.x;
    const unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + tid;
    if (i < n) {
        tile[tid] = x[i];
    }
    __syncthreads();  // every thread reaches it: the barrier is not the bug
    if (i < n) {
        y[i] = tile[tid] + tile[tid + blockDim.x];  // BUG: no thread wrote this slot
    }
}
