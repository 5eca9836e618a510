// y = a * x + y over n elements, a grid-stride loop (correct for any grid and block).
// NVRTC-compatible: no headers, extern "C" so that the entry point keeps its plain name.
extern "C" __global__ void saxpy(const float* x, float* y, float a, unsigned long long n) {
    const unsigned long long step = (unsigned long long)gridDim.x * blockDim.x;
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
         i < n; i += step) {
        y[i] = fmaf(a, x[i], y[i]);
    }
}
