// Waits for a flag the host never sets: past any deadline.
extern "C" __global__ void hang(volatile const unsigned* flag, unsigned* out, unsigned n) {
    while (flag[0] == 0u) {
    }
    for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        out[i] = i;
    }
}
