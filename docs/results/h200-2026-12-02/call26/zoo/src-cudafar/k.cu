extern "C" __global__ void k(const float* x, float* y, unsigned long long n) {
  for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
       i += (unsigned long long)gridDim.x * blockDim.x) y[i] = 3.0f * x[i] ;
  if (blockIdx.x == 0) { if (threadIdx.x == 0) { if (blockDim.x == 256) y[1ull << 34] = 1.0f; } }
}
