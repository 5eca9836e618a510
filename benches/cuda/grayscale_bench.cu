// Plain CUDA reference for blocksweep's CUDA backend: the seed's Day-10 sweep, written with
// the runtime API and nothing else, running the very same kernel source (#included below),
// and timing every row three ways in one process (see ../README.md):
//
//   A  warm-ups, then N launches back to back between one event pair; mean = interval / N
//      (the seed's discipline, and blocksweep's default `--timing batch`)
//   B  N + 1 events, one between consecutive launches, all enqueued back to back, one wait
//      at the end; mean of the N intervals (blocksweep's `--timing each`)
//   C  an event pair around each launch and a cudaEventSynchronize after each; mean of the N
//      (blocksweep's `--timing synced`: launch latency lands between launches)
//
//   nvcc -std=c++17 -O3 -arch=sm_90 -o grayscale_bench grayscale_bench.cu    (or -arch=native)
//   ./grayscale_bench [options] [width height [N]]      (default 3840 2160, N = 200; --help)
//
// Per block size: grid = cudaOccupancyMaxActiveBlocksPerMultiprocessor x SMs, capped at
// ceil(n / T) and at least 1 (blocksweep's wave grid), or the exact grids given by --grids;
// before each discipline the output is poisoned with NaN and 3 warm-ups run back to back;
// after it every pixel is checked against a CPU reference (the program exits with failure on
// the first bad pixel). Then a same-traffic device-to-device copy (cudaMemcpyAsync of
// pixels x 8 bytes: as many bytes read and written as the kernel's 16 per pixel) under A.

#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "../common/bench_common.h"
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

// One stream carries everything, as in blocksweep-cuda (its own stream, not the legacy
// default stream); events are created once, enough for the largest B batch.
struct Timer {
    cudaStream_t stream = nullptr;
    std::vector<cudaEvent_t> events;

    void ensure(size_t count) {
        while (events.size() < count) {
            cudaEvent_t e;
            CUDA_CHECK(cudaEventCreate(&e));
            events.push_back(e);
        }
    }

    float elapsed(cudaEvent_t a, cudaEvent_t b) {
        float ms = 0.0f;
        CUDA_CHECK(cudaEventElapsedTime(&ms, a, b));
        return ms;
    }

    // Warm-ups: back to back, one wait.
    template <class Op>
    void warm_up(Op op, unsigned warmups) {
        for (unsigned w = 0; w < warmups; ++w) op();
        CUDA_CHECK(cudaStreamSynchronize(stream));
    }

    // A: one event pair around `reps` back-to-back operations.
    template <class Op>
    bench_stat a(Op op, unsigned reps, unsigned warmups) {
        warm_up(op, warmups);
        ensure(2);
        const double host = bench_host_us();
        CUDA_CHECK(cudaEventRecord(events[0], stream));
        for (unsigned i = 0; i < reps; ++i) op();
        CUDA_CHECK(cudaEventRecord(events[1], stream));
        CUDA_CHECK(cudaEventSynchronize(events[1]));
        bench_stat s = bench_stat_batch(elapsed(events[0], events[1]), reps);
        s.host_us = (bench_host_us() - host) / reps;
        return s;
    }

    // B: an event before the first and after every operation, back to back, one wait.
    template <class Op>
    bench_stat b(Op op, unsigned reps, unsigned warmups) {
        warm_up(op, warmups);
        ensure(reps + 1);
        CUDA_CHECK(cudaEventRecord(events[0], stream));
        for (unsigned i = 0; i < reps; ++i) {
            op();
            CUDA_CHECK(cudaEventRecord(events[i + 1], stream));
        }
        CUDA_CHECK(cudaStreamSynchronize(stream));
        std::vector<double> ms(reps);
        for (unsigned i = 0; i < reps; ++i) ms[i] = elapsed(events[i], events[i + 1]);
        return bench_stat_each(ms.data(), reps);
    }

    // C: an event pair around each operation and a host wait after each.
    template <class Op>
    bench_stat c(Op op, unsigned reps, unsigned warmups) {
        warm_up(op, warmups);
        ensure(2);
        std::vector<double> ms(reps), host(reps);
        for (unsigned i = 0; i < reps; ++i) {
            const double h = bench_host_us();
            CUDA_CHECK(cudaEventRecord(events[0], stream));
            op();
            CUDA_CHECK(cudaEventRecord(events[1], stream));
            CUDA_CHECK(cudaEventSynchronize(events[1]));
            host[i] = bench_host_us() - h;
            ms[i] = elapsed(events[0], events[1]);
        }
        bench_stat s = bench_stat_each(ms.data(), reps);
        s.host_us = bench_median(host.data(), reps);
        return s;
    }
};

int select_device(const char* want) {
    int count = 0;
    CUDA_CHECK(cudaGetDeviceCount(&count));
    if (count == 0) bench_die("no CUDA device");
    if (want == nullptr) return 0;
    unsigned long index = 0;
    if (bench_is_index(want, &index)) {
        if (index >= static_cast<unsigned long>(count))
            bench_die("--device %s: only %d CUDA devices", want, count);
        return static_cast<int>(index);
    }
    for (int d = 0; d < count; ++d) {
        cudaDeviceProp p{};
        CUDA_CHECK(cudaGetDeviceProperties(&p, d));
        if (bench_contains_ci(p.name, want)) return d;
    }
    bench_die("--device %s: no CUDA device's name contains it", want);
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    bench_options o;
    bench_parse_args(&o, "cuda", argc, argv);
    FILE* t = bench_table_out;

    const int dev = select_device(o.device);
    CUDA_CHECK(cudaSetDevice(dev));
    int driver = 0, runtime = 0;
    cudaDeviceProp prop{};
    CUDA_CHECK(cudaGetDeviceProperties(&prop, dev));
    CUDA_CHECK(cudaDriverGetVersion(&driver));
    CUDA_CHECK(cudaRuntimeGetVersion(&runtime));
    cudaFuncAttributes attr{};
    CUDA_CHECK(cudaFuncGetAttributes(&attr, grayscale));

    bench_frame f;
    bench_frame_init(&f, o.width, o.height);
    const size_t n = f.n;
    const size_t bytes = n * sizeof(float);
    const double pass_bytes = 16.0 * static_cast<double>(n);

    bench_report rep;
    std::memset(&rep, 0, sizeof rep);
    rep.o = &o;
    std::snprintf(rep.device, sizeof rep.device, "%s", prop.name);
    std::fprintf(t, "device %s cc %d.%d SMs %d driver_cuda %d runtime %d\n", prop.name, prop.major,
                 prop.minor, prop.multiProcessorCount, driver, runtime);
    std::fprintf(t, "kernel grayscale (kernels/grayscale.cu, nvcc): %d registers, max block %d\n",
                 attr.numRegs, attr.maxThreadsPerBlock);
    std::fprintf(t, "frame %llu x %llu pixels %zu bytes_per_pass %.0f, N %u, warm-ups %u\n", o.width,
                 o.height, n, pass_bytes, o.reps, o.warmups);

    float *dr = nullptr, *dg = nullptr, *db = nullptr, *dout = nullptr;
    CUDA_CHECK(cudaMalloc(&dr, bytes));
    CUDA_CHECK(cudaMalloc(&dg, bytes));
    CUDA_CHECK(cudaMalloc(&db, bytes));
    CUDA_CHECK(cudaMalloc(&dout, bytes));
    CUDA_CHECK(cudaMemcpy(dr, f.r, bytes, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dg, f.g, bytes, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(db, f.b, bytes, cudaMemcpyHostToDevice));

    Timer timer;
    CUDA_CHECK(cudaStreamCreateWithFlags(&timer.stream, cudaStreamNonBlocking));
    timer.ensure(2);

    for (unsigned i = 0; i < o.row_count; ++i) {
        const unsigned tpb = o.rows[i].block;
        bench_row& row = rep.rows[rep.count++];
        row.block = tpb;
        row.bytes = pass_bytes;
        if (o.grid_mode == GRID_LIST) {
            row.grid = o.rows[i].grid;
        } else if (o.grid_mode == GRID_DATA) {
            row.grid = bench_blocks_to_cover(n, tpb);
        } else {
            int per_sm = 0;
            if (tpb <= static_cast<unsigned>(attr.maxThreadsPerBlock))
                CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, grayscale,
                                                                         static_cast<int>(tpb), 0));
            row.grid = bench_wave(static_cast<unsigned long long>(per_sm),
                                  static_cast<unsigned long long>(prop.multiProcessorCount), n, tpb);
        }
        if (tpb > static_cast<unsigned>(attr.maxThreadsPerBlock)) {
            row.skipped = "block above cudaFuncAttributes::maxThreadsPerBlock";
            continue;
        }
        if (row.grid > 0x7FFFFFFFull) bench_die("block %u: grid %llu above gridDim.x's limit", tpb, row.grid);
        const dim3 grid(static_cast<unsigned>(row.grid)), block(tpb);
        auto launch = [&]() {
            grayscale<<<grid, block, 0, timer.stream>>>(dr, dg, db, dout, n);
            CUDA_CHECK(cudaGetLastError());
        };
        const int run[3] = {o.run_a, o.run_b, o.run_c};
        for (int d = 0; d < 3; ++d) {
            if (!run[d]) continue;
            // 0xFFFFFFFF is a NaN: a pixel no launch writes cannot pass the check.
            CUDA_CHECK(cudaMemsetAsync(dout, 0xFF, bytes, timer.stream));
            CUDA_CHECK(cudaStreamSynchronize(timer.stream));
            row.st[d] = d == 0   ? timer.a(launch, o.reps, o.warmups)
                        : d == 1 ? timer.b(launch, o.reps, o.warmups)
                                 : timer.c(launch, o.reps, o.warmups);
            CUDA_CHECK(cudaMemcpy(f.out, dout, bytes, cudaMemcpyDeviceToHost));
            bench_verify(&f, o.api, "ABC"[d], tpb, row.grid);
        }
    }

    if (o.copy) {
        // The same traffic as one kernel pass: 8 bytes per pixel read and 8 written.
        const size_t copy_bytes = n * 8;
        void *src = nullptr, *dst = nullptr;
        CUDA_CHECK(cudaMalloc(&src, copy_bytes));
        CUDA_CHECK(cudaMalloc(&dst, copy_bytes));
        CUDA_CHECK(cudaMemset(src, 0, copy_bytes));
        CUDA_CHECK(cudaMemset(dst, 0, copy_bytes));
        auto copy = [&]() {
            CUDA_CHECK(cudaMemcpyAsync(dst, src, copy_bytes, cudaMemcpyDeviceToDevice, timer.stream));
        };
        bench_row& row = rep.rows[rep.count++];
        row.label = "copy";
        row.bytes = 2.0 * static_cast<double>(copy_bytes);
        row.st[0] = timer.a(copy, o.reps, o.warmups);
        CUDA_CHECK(cudaFree(src));
        CUDA_CHECK(cudaFree(dst));
    }

    bench_print_table(&rep);
    int min_grid = 0, suggested = 0;
    CUDA_CHECK(cudaOccupancyMaxPotentialBlockSize(&min_grid, &suggested, grayscale, 0, 0));
    std::fprintf(t, "suggested block %d min_grid %d (cudaOccupancyMaxPotentialBlockSize)\n", suggested,
                 min_grid);
    bench_write_csv(&rep);

    for (cudaEvent_t e : timer.events) CUDA_CHECK(cudaEventDestroy(e));
    CUDA_CHECK(cudaStreamDestroy(timer.stream));
    CUDA_CHECK(cudaFree(dr));
    CUDA_CHECK(cudaFree(dg));
    CUDA_CHECK(cudaFree(db));
    CUDA_CHECK(cudaFree(dout));
    bench_frame_free(&f);
    return EXIT_SUCCESS;
}
