extern "C" __global__ void k(const float* x, float* y, unsigned long long n) {
  for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
       i += (unsigned long long)gridDim.x * blockDim.x) y[i] = 3.0f * x[i] + (i == 1000 ? 1.0f : 0.0f);
  
}
