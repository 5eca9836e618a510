// y[i] = k * x[i] for i < n, a grid-stride loop. CORRECT: the u64 n is unsigned long long.
// (The bug of this folder is in k.comp's push-constant block.)
extern "C" __global__ void scale(const float* x, float* y, float k, unsigned long long n) {
    const unsigned long long step = (unsigned long long)gridDim.x * blockDim.x;
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
         i < n; i += step) {
        y[i] = k * x[i];
    }
}
