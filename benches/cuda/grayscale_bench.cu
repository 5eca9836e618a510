// Plain CUDA reference for blocksweep's CUDA backend: the seed's Day-10 sweep, written with
// the runtime API and nothing else, running the very same kernel source (#included below).
//
//   nvcc -std=c++17 -O3 -arch=sm_90 -o grayscale_bench grayscale_bench.cu    (or -arch=native)
//   ./grayscale_bench [width height]                                         (default 3840 2160)
//
// Per block size: blocks per SM from cudaOccupancyMaxActiveBlocksPerMultiprocessor, grid =
// min(blocksPerSM * SMs, ceil(n / T)) (at least 1), output poisoned with NaN, 3 warm-ups, then
// 10 launches each between its own pair of events and synchronised before the next (like
// blocksweep's harness), then every pixel checked against a CPU reference.

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "../../kernels/grayscale.cu"

#define CUDA_CHECK(call)                                                           \
    do {                                                                           \
        const cudaError_t err_ = (call);                                           \
        if (err_ != cudaSuccess) {                                                 \
            std::fprintf(stderr, "%s:%d: %s failed: %s (%s)\n", __FILE__, __LINE__, \
                         #call, cudaGetErrorName(err_), cudaGetErrorString(err_)); \
            std::exit(EXIT_FAILURE);                                               \
        }                                                                          \
    } while (0)

namespace {

constexpr int kBlocks[] = {16, 32, 64, 96, 100, 128, 160, 192, 256, 384, 512, 768, 1024};
constexpr int kWarmups = 3;
constexpr float kTolerance = 1e-6f;  // as blocksweep_core::verify::TOLERANCE

}  // namespace

int main(int argc, char** argv) {
    // Same defaults as `blocksweep sweep`: 3840 x 2160, 10 timed launches per block size.
    long long width = 3840, height = 2160;
    int reps = 10;
    if (argc == 3 || argc == 4) {
        width = std::atoll(argv[1]);
        height = std::atoll(argv[2]);
        if (argc == 4) reps = std::atoi(argv[3]);
    } else if (argc != 1) {
        std::fprintf(stderr, "usage: %s [width height [reps]]\n", argv[0]);
        return EXIT_FAILURE;
    }
    if (width <= 0 || height <= 0 || reps <= 0) {
        std::fprintf(stderr, "width, height and reps must be positive\n");
        return EXIT_FAILURE;
    }
    const size_t n = static_cast<size_t>(width) * static_cast<size_t>(height);
    const size_t bytes = n * sizeof(float);

    int dev = 0, driver = 0, runtime = 0;
    CUDA_CHECK(cudaGetDevice(&dev));
    cudaDeviceProp prop{};
    CUDA_CHECK(cudaGetDeviceProperties(&prop, dev));
    CUDA_CHECK(cudaDriverGetVersion(&driver));
    CUDA_CHECK(cudaRuntimeGetVersion(&runtime));
    std::printf("device %s cc %d.%d SMs %d driver_cuda %d runtime %d\n", prop.name, prop.major,
                prop.minor, prop.multiProcessorCount, driver, runtime);
    std::printf("frame %lld x %lld pixels %zu bytes_per_pass %zu\n", width, height, n, 4 * bytes);

    // Any values in [0, 1) do; these need no random generator.
    std::vector<float> r(n), g(n), b(n), out(n), ref(n);
    for (size_t i = 0; i < n; ++i) {
        r[i] = static_cast<float>(i % 251) / 251.0f;
        g[i] = static_cast<float>((i * 7) % 241) / 241.0f;
        b[i] = static_cast<float>((i * 13) % 239) / 239.0f;
        ref[i] = kRedWeight * r[i] + kGreenWeight * g[i] + kBlueWeight * b[i];
    }

    float *dr = nullptr, *dg = nullptr, *db = nullptr, *dout = nullptr;
    CUDA_CHECK(cudaMalloc(&dr, bytes));
    CUDA_CHECK(cudaMalloc(&dg, bytes));
    CUDA_CHECK(cudaMalloc(&db, bytes));
    CUDA_CHECK(cudaMalloc(&dout, bytes));
    CUDA_CHECK(cudaMemcpy(dr, r.data(), bytes, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dg, g.data(), bytes, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(db, b.data(), bytes, cudaMemcpyHostToDevice));

    cudaEvent_t start, stop;
    CUDA_CHECK(cudaEventCreate(&start));
    CUDA_CHECK(cudaEventCreate(&stop));

    int bestBlock = 0;
    double bestMean = 0.0;
    for (const int t : kBlocks) {
        int blocksPerSM = 0;
        CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocksPerSM, grayscale, t, 0));
        size_t wave = static_cast<size_t>(blocksPerSM) *
                      static_cast<size_t>(prop.multiProcessorCount);
        const size_t needed = (n + static_cast<size_t>(t) - 1) / static_cast<size_t>(t);
        wave = std::max<size_t>(1, std::min(wave, needed));
        const unsigned grid = static_cast<unsigned>(wave);

        // 0xFFFFFFFF is a NaN: a pixel the launch misses cannot pass the check.
        CUDA_CHECK(cudaMemset(dout, 0xFF, bytes));
        for (int w = 0; w < kWarmups; ++w) {
            grayscale<<<grid, t>>>(dr, dg, db, dout, n);
            CUDA_CHECK(cudaGetLastError());
            CUDA_CHECK(cudaDeviceSynchronize());
        }
        double sum = 0.0, best = 1e30;
        for (int k = 0; k < reps; ++k) {
            CUDA_CHECK(cudaEventRecord(start));
            grayscale<<<grid, t>>>(dr, dg, db, dout, n);
            CUDA_CHECK(cudaGetLastError());
            CUDA_CHECK(cudaEventRecord(stop));
            CUDA_CHECK(cudaEventSynchronize(stop));
            float ms = 0.0f;
            CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
            sum += ms;
            best = std::min(best, static_cast<double>(ms));
        }
        CUDA_CHECK(cudaMemcpy(out.data(), dout, bytes, cudaMemcpyDeviceToHost));
        for (size_t i = 0; i < n; ++i) {
            if (!(std::fabs(out[i] - ref[i]) <= kTolerance)) {
                std::fprintf(stderr, "block %d grid %u: pixel %zu is %g, expected %g\n", t, grid,
                             i, out[i], ref[i]);
                return EXIT_FAILURE;
            }
        }
        const double mean = sum / reps;
        std::printf("block %d grid %u mean_ms %.4f min_ms %.4f blocks_per_sm %d gbps %.1f\n", t,
                    grid, mean, best, blocksPerSM, 4.0 * bytes / (mean * 1e6));
        if (bestBlock == 0 || mean < bestMean) {
            bestBlock = t;
            bestMean = mean;
        }
    }

    int minGrid = 0, suggested = 0;
    CUDA_CHECK(cudaOccupancyMaxPotentialBlockSize(&minGrid, &suggested, grayscale, 0, 0));
    std::printf("suggested block %d min_grid %d (cudaOccupancyMaxPotentialBlockSize)\n", suggested,
                minGrid);
    std::printf("best block %d mean_ms %.4f\n", bestBlock, bestMean);

    CUDA_CHECK(cudaEventDestroy(start));
    CUDA_CHECK(cudaEventDestroy(stop));
    CUDA_CHECK(cudaFree(dr));
    CUDA_CHECK(cudaFree(dg));
    CUDA_CHECK(cudaFree(db));
    CUDA_CHECK(cudaFree(dout));
    return EXIT_SUCCESS;
}
