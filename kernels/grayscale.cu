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

// ---------------------------------------------------------------------------------------------
// The lab kernels (docs/lab.md): block shape, shared memory and registers. Each computes the
// same grayscale value for every pixel, so the sweep verifies them like the seed's kernel.

// The 2-D kernel of the shape sweep. The frame is `width` pixels by `height` rows, row-major;
// a grid-stride loop in each dimension covers every pixel for any (block, grid) shape. Within
// a block, threadIdx.x varies fastest: a warp is 32 consecutive threads in x first, then y, so
// a block narrower than 32 threads spreads each warp over several rows of the image.
extern "C" __global__ void grayscale_2d(const float* r, const float* g, const float* b,
                                        float* out, unsigned int width, unsigned int height) {
    const size_t step_x = gridDim.x * static_cast<size_t>(blockDim.x);
    const size_t step_y = gridDim.y * static_cast<size_t>(blockDim.y);
    for (size_t y = blockIdx.y * static_cast<size_t>(blockDim.y) + threadIdx.y; y < height;
         y += step_y) {
        const size_t row = y * width;
        for (size_t x = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; x < width;
             x += step_x) {
            out[row + x] = kRedWeight * r[row + x] + kGreenWeight * g[row + x] +
                           kBlueWeight * b[row + x];
        }
    }
}

// Shared memory of a size chosen at launch (cuLaunchKernel's sharedMemBytes, `words` floats):
// the block fills all of it with the three weights, repeated, waits at a barrier every thread
// reaches (no guard around it: a barrier inside a divergent branch is undefined behaviour),
// then each thread reads its weights from there. The size is the point: a launch asking more
// than the per-block limit is refused. Launched with 1-D blocks; `words` must be at least 3
// (with fewer the kernel writes nothing, and verification says so).
extern "C" __global__ void grayscale_shared(const float* r, const float* g, const float* b,
                                            float* out, size_t n, unsigned int words) {
    extern __shared__ float scratch[];
    if (words < 3) {
        return;  // uniform: every thread of every block leaves, none waits at the barrier
    }
    for (unsigned int k = threadIdx.x; k < words; k += blockDim.x) {
        scratch[k] = k % 3 == 0 ? kRedWeight : (k % 3 == 1 ? kGreenWeight : kBlueWeight);
    }
    __syncthreads();
    // A different triple for each thread, so that every part of the array is read.
    const unsigned int j = 3 * (threadIdx.x % (words / 3));
    const float wr = scratch[j];
    const float wg = scratch[j + 1];
    const float wb = scratch[j + 2];
    const size_t step = gridDim.x * static_cast<size_t>(blockDim.x);
    for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
         i += step) {
        out[i] = wr * r[i] + wg * g[i] + wb * b[i];
    }
}

// Register-heavy: the seed's kernel plus, per pixel, a chain of kChain values that are all
// live at once (made first to last, consumed last to first), so the compiler needs about
// kChain more registers per thread than `grayscale` does. That is the point: at 1024 threads
// per block the register file (64 K registers per SM on every GPU this course covers) cannot
// hold them, and cuLaunchKernel refuses with CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES ("too many
// resources requested for launch"). The host passes salt = 0; (h | 1) is odd, so the test
// below never holds and every pixel gets its grayscale value, but the compiler cannot know.
constexpr int kChain = 96;

extern "C" __global__ void grayscale_registers(const float* r, const float* g, const float* b,
                                               float* out, size_t n, unsigned int salt) {
    const size_t step = gridDim.x * static_cast<size_t>(blockDim.x);
    for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
         i += step) {
        const float gray = kRedWeight * r[i] + kGreenWeight * g[i] + kBlueWeight * b[i];
        unsigned int v[kChain];
        v[0] = __float_as_uint(gray) ^ salt;
#pragma unroll
        for (int k = 1; k < kChain; ++k) {
            v[k] = v[k - 1] * 0x9E3779B1u + static_cast<unsigned int>(k);
        }
        unsigned int h = salt;
#pragma unroll
        for (int k = kChain - 1; k >= 0; --k) {
            h = (h ^ v[k]) * 0x85EBCA6Bu;
        }
        out[i] = (h | 1u) == salt ? 0.0f : gray;
    }
}
