// Planar RGB -> grayscale, the kernel of the Day-10 block-size sweep.
//
// One source for every CUDA path in blocksweep: NVRTC compiles this file at run time, nvcc
// turned it into kernels/grayscale.ptx (the embedded fallback; kernels/README.md has the
// command), and benches/cuda/grayscale_bench.cu #includes it. So it must compile under NVRTC:
// no system headers (NVRTC provides size_t itself), and extern "C" so that the driver finds
// the entry points by their plain names.

// Rec. 601 luma weights; blocksweep_core::WEIGHTS holds the same three literals.
constexpr float kRedWeight = 0.299f;
constexpr float kGreenWeight = 0.587f;
constexpr float kBlueWeight = 0.114f;

// The seed's kernel: a grid-stride loop, correct for any grid and block size. Index
// arithmetic is in size_t so that gridDim.x * blockDim.x and the pixel index cannot wrap.
extern "C" __global__ void grayscale(const float* r, const float* g, const float* b,
                                     float* out, size_t n) {
    const size_t step = gridDim.x * static_cast<size_t>(blockDim.x);
    for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
         i < n; i += step) {
        out[i] = kRedWeight * r[i] + kGreenWeight * g[i] + kBlueWeight * b[i];
    }
}

// One pixel per thread, guarded: correct only when gridDim.x * blockDim.x >= n. It exists so
// that tests can launch it one block short and watch verification catch the unwritten pixels.
extern "C" __global__ void grayscale_one_per_thread(const float* r, const float* g,
                                                    const float* b, float* out, size_t n) {
    const size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
    if (i < n) {
        out[i] = kRedWeight * r[i] + kGreenWeight * g[i] + kBlueWeight * b[i];
    }
}
