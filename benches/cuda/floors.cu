// The physical floors a big frame's phases are set against (issue 21), measured with the CUDA
// runtime and nothing else, in the same device call as the sweep:
//
//   h2d_pinned     cudaMemcpy host-to-device from cudaMallocHost memory (PCIe, DMA direct)
//   d2h_pinned     cudaMemcpy device-to-host into cudaMallocHost memory
//   h2d_pageable   cudaMemcpy host-to-device from plain new[] memory (what an upload from an
//                  ordinary Vec gets: the driver stages it through pinned buffers of its own)
//   d2h_pageable   cudaMemcpy device-to-host into plain memory
//   d2d            cudaMemcpy device-to-device (DRAM: read + write counted, as blocksweep's
//                  copy ceiling counts them)
//   host_copy      memcpy between two host buffers on every core (the host's DRAM floor for
//                  making the frame, its reference and verification), read + write counted
//
//   nvcc -std=c++17 -O3 -o floors floors.cu     (no kernel, so any -arch)
//   ./floors [GiB [reps]]                       (default 4 GiB, 5 reps; best and mean of reps)
//
// Each transfer runs once untimed (first-touch page faults, lazy driver mappings), then `reps`
// times between two events on the default stream (host_copy: the wall clock). One line per
// floor: "floor NAME bytes B best_ms X mean_ms Y best_gbs Z", GB/s = 1e9 bytes per second.

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

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

struct Stat {
    double best_ms = 1e300;
    double sum_ms = 0.0;
    unsigned n = 0;
    void add(double ms) {
        best_ms = std::min(best_ms, ms);
        sum_ms += ms;
        ++n;
    }
};

// `traffic`: bytes counted per run (the copy's size, or twice it where read + write count).
void report(const char* name, size_t traffic, const Stat& s) {
    std::printf("floor %-13s bytes %zu best_ms %.3f mean_ms %.3f best_gbs %.1f\n", name,
                traffic, s.best_ms, s.sum_ms / s.n, traffic / (s.best_ms * 1e6));
    std::fflush(stdout);
}

// One untimed run, then `reps` timed between two events.
Stat time_memcpy(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind, unsigned reps) {
    cudaEvent_t a, b;
    CUDA_CHECK(cudaEventCreate(&a));
    CUDA_CHECK(cudaEventCreate(&b));
    CUDA_CHECK(cudaMemcpy(dst, src, bytes, kind));
    Stat s;
    for (unsigned i = 0; i < reps; ++i) {
        CUDA_CHECK(cudaEventRecord(a));
        CUDA_CHECK(cudaMemcpy(dst, src, bytes, kind));
        CUDA_CHECK(cudaEventRecord(b));
        CUDA_CHECK(cudaEventSynchronize(b));
        float ms = 0.0f;
        CUDA_CHECK(cudaEventElapsedTime(&ms, a, b));
        s.add(ms);
    }
    CUDA_CHECK(cudaEventDestroy(a));
    CUDA_CHECK(cudaEventDestroy(b));
    return s;
}

// memcpy of `bytes` split evenly over every hardware thread; the wall time of the slowest.
double parallel_memcpy_ms(char* dst, const char* src, size_t bytes) {
    const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
    const size_t per = (bytes + threads - 1) / threads;
    const auto start = std::chrono::steady_clock::now();
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < threads; ++t) {
        const size_t at = std::min(bytes, t * per);
        const size_t len = std::min(per, bytes - at);
        pool.emplace_back([=] { std::memcpy(dst + at, src + at, len); });
    }
    for (auto& t : pool) t.join();
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
        .count();
}

}  // namespace

int main(int argc, char** argv) {
    const double gib = argc > 1 ? std::atof(argv[1]) : 4.0;
    const unsigned reps = argc > 2 ? static_cast<unsigned>(std::atoi(argv[2])) : 5;
    if (gib <= 0.0 || reps == 0) {
        std::fprintf(stderr, "usage: %s [GiB > 0 [reps > 0]]\n", argv[0]);
        return EXIT_FAILURE;
    }
    const size_t bytes = static_cast<size_t>(gib * (1ull << 30)) / 4 * 4;
    cudaDeviceProp prop;
    CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
    std::printf("device %s, PCI %04x:%02x:%02x, %zu bytes per copy, %u reps, %u host threads\n",
                prop.name, prop.pciDomainID, prop.pciBusID, prop.pciDeviceID, bytes, reps,
                std::max(1u, std::thread::hardware_concurrency()));

    void *dev_a = nullptr, *dev_b = nullptr, *pinned = nullptr;
    CUDA_CHECK(cudaMalloc(&dev_a, bytes));
    CUDA_CHECK(cudaMalloc(&dev_b, bytes));
    CUDA_CHECK(cudaMallocHost(&pinned, bytes));
    std::memset(pinned, 0x3f, bytes);
    CUDA_CHECK(cudaMemset(dev_a, 0, bytes));
    CUDA_CHECK(cudaMemset(dev_b, 0, bytes));

    report("h2d_pinned", bytes, time_memcpy(dev_a, pinned, bytes, cudaMemcpyHostToDevice, reps));
    report("d2h_pinned", bytes, time_memcpy(pinned, dev_a, bytes, cudaMemcpyDeviceToHost, reps));
    report("d2d", 2 * bytes, time_memcpy(dev_b, dev_a, bytes, cudaMemcpyDeviceToDevice, reps));

    char* pageable = new char[bytes];
    std::memset(pageable, 0x3f, bytes);
    report("h2d_pageable", bytes,
           time_memcpy(dev_a, pageable, bytes, cudaMemcpyHostToDevice, reps));
    report("d2h_pageable", bytes,
           time_memcpy(pageable, dev_a, bytes, cudaMemcpyDeviceToHost, reps));

    // Host to host on every core: pageable <- pinned, both touched already.
    parallel_memcpy_ms(pageable, static_cast<const char*>(pinned), bytes);
    Stat host;
    for (unsigned i = 0; i < reps; ++i)
        host.add(parallel_memcpy_ms(pageable, static_cast<const char*>(pinned), bytes));
    report("host_copy", 2 * bytes, host);

    delete[] pageable;
    CUDA_CHECK(cudaFreeHost(pinned));
    CUDA_CHECK(cudaFree(dev_b));
    CUDA_CHECK(cudaFree(dev_a));
    return EXIT_SUCCESS;
}
