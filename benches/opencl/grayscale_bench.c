/* Plain OpenCL reference for blocksweep's OpenCL backend: the same kernel source
 * (kernels/grayscale.cl, read at run time and built with "-cl-std=CL1.2" as blocksweep builds
 * it), the same launches (block:grid pairs, e.g. the grids of a blocksweep CSV), and every row
 * timed three ways on the device clock (profiling events on one in-order queue):
 *
 *   A  warm-ups, then N enqueues back to back; CL_PROFILING_COMMAND_START of the first to
 *      CL_PROFILING_COMMAND_END of the last, over N (blocksweep's `--timing batch`)
 *   B  N enqueues back to back, one wait at the end; mean of each one's START..END
 *      (blocksweep's `--timing each`)
 *   C  clFinish after each enqueue; mean of each one's START..END (`--timing synced`)
 *
 * then a same-traffic clEnqueueCopyBuffer (pixels x 8 bytes) under A. OpenCL C 1.2 host API
 * only; links against the ICD loader (libOpenCL.so.1).
 *
 *   make -C benches opencl         (or: cc -O2 -o grayscale_bench_cl grayscale_bench.c -lOpenCL -lm)
 *   benches/bin/grayscale_bench_cl --device NVIDIA --size 3840x2160 --reps 200 \
 *       --grids 16:4224,32:4224,... --csv out.csv          (--help for every option)
 */
#define CL_TARGET_OPENCL_VERSION 120
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include <CL/cl.h>

#include "../common/bench_common.h"

/* cl_nv_device_attribute_query */
#ifndef CL_DEVICE_COMPUTE_CAPABILITY_MAJOR_NV
#define CL_DEVICE_COMPUTE_CAPABILITY_MAJOR_NV 0x4000
#define CL_DEVICE_COMPUTE_CAPABILITY_MINOR_NV 0x4001
#endif

#define ENTRY_POINT "grayscale"

static const char *cl_error_name(cl_int e) {
    switch (e) {
#define E(x) case x: return #x;
        E(CL_DEVICE_NOT_FOUND) E(CL_OUT_OF_RESOURCES) E(CL_OUT_OF_HOST_MEMORY) E(CL_BUILD_PROGRAM_FAILURE)
        E(CL_MEM_OBJECT_ALLOCATION_FAILURE) E(CL_INVALID_VALUE) E(CL_INVALID_DEVICE) E(CL_INVALID_CONTEXT)
        E(CL_INVALID_COMMAND_QUEUE) E(CL_INVALID_MEM_OBJECT) E(CL_INVALID_PROGRAM) E(CL_INVALID_KERNEL_NAME)
        E(CL_INVALID_KERNEL) E(CL_INVALID_ARG_INDEX) E(CL_INVALID_ARG_VALUE) E(CL_INVALID_ARG_SIZE)
        E(CL_INVALID_KERNEL_ARGS) E(CL_INVALID_WORK_DIMENSION) E(CL_INVALID_WORK_GROUP_SIZE)
        E(CL_INVALID_WORK_ITEM_SIZE) E(CL_INVALID_GLOBAL_WORK_SIZE) E(CL_INVALID_EVENT)
        E(CL_INVALID_OPERATION) E(CL_INVALID_BUFFER_SIZE) E(CL_PROFILING_INFO_NOT_AVAILABLE)
        E(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST) E(CL_INVALID_PLATFORM) E(CL_INVALID_BUILD_OPTIONS)
#undef E
    default: return "unknown";
    }
}

#define CL_CHECK(call)                                                                                 \
    do {                                                                                               \
        cl_int err_ = (call);                                                                          \
        if (err_ != CL_SUCCESS)                                                                        \
            bench_die("%s:%d: %s failed: %d (%s)", __FILE__, __LINE__, #call, err_, cl_error_name(err_)); \
    } while (0)

#define CL_CHECK_ERR(err, what)                                                                            \
    do {                                                                                                   \
        if ((err) != CL_SUCCESS) bench_die("%s failed: %d (%s)", what, (int)(err), cl_error_name(err));    \
    } while (0)

struct device_entry {
    cl_platform_id platform;
    cl_device_id device;
    char name[256], platform_name[256];
    cl_device_type type;
};

static struct device_entry *list_devices(unsigned *count) {
    cl_uint np = 0;
    cl_int err = clGetPlatformIDs(0, NULL, &np);
    if (err != CL_SUCCESS || np == 0) bench_die("no OpenCL platform (clGetPlatformIDs: %d)", err);
    cl_platform_id *platforms = (cl_platform_id *)calloc(np, sizeof *platforms);
    CL_CHECK(clGetPlatformIDs(np, platforms, NULL));
    struct device_entry *list = NULL;
    unsigned n = 0;
    for (cl_uint p = 0; p < np; ++p) {
        cl_uint nd = 0;
        if (clGetDeviceIDs(platforms[p], CL_DEVICE_TYPE_ALL, 0, NULL, &nd) != CL_SUCCESS || nd == 0) continue;
        cl_device_id *devs = (cl_device_id *)calloc(nd, sizeof *devs);
        CL_CHECK(clGetDeviceIDs(platforms[p], CL_DEVICE_TYPE_ALL, nd, devs, NULL));
        list = (struct device_entry *)realloc(list, (n + nd) * sizeof *list);
        for (cl_uint d = 0; d < nd; ++d) {
            struct device_entry *e = &list[n++];
            memset(e, 0, sizeof *e);
            e->platform = platforms[p];
            e->device = devs[d];
            CL_CHECK(clGetDeviceInfo(devs[d], CL_DEVICE_NAME, sizeof e->name - 1, e->name, NULL));
            CL_CHECK(clGetPlatformInfo(platforms[p], CL_PLATFORM_NAME, sizeof e->platform_name - 1,
                                       e->platform_name, NULL));
            CL_CHECK(clGetDeviceInfo(devs[d], CL_DEVICE_TYPE, sizeof e->type, &e->type, NULL));
        }
        free(devs);
    }
    free(platforms);
    if (n == 0) bench_die("no OpenCL device");
    *count = n;
    return list;
}

/* An index into the flat list (platforms in order, their devices in order), or a substring of
 * the device or platform name; by default the first GPU, else the first device. */
static const struct device_entry *select_device(const struct device_entry *list, unsigned n, const char *want) {
    unsigned long index;
    if (want == NULL) {
        for (unsigned i = 0; i < n; ++i)
            if (list[i].type & CL_DEVICE_TYPE_GPU) return &list[i];
        return &list[0];
    }
    if (bench_is_index(want, &index)) {
        if (index >= n) bench_die("--device %s: only %u OpenCL devices", want, n);
        return &list[index];
    }
    for (unsigned i = 0; i < n; ++i)
        if (bench_contains_ci(list[i].name, want)) return &list[i];
    for (unsigned i = 0; i < n; ++i)
        if (bench_contains_ci(list[i].platform_name, want)) return &list[i];
    bench_die("--device %s: no OpenCL device or platform name contains it", want);
}

static int has_extension(cl_device_id d, const char *ext) {
    size_t len = 0;
    if (clGetDeviceInfo(d, CL_DEVICE_EXTENSIONS, 0, NULL, &len) != CL_SUCCESS) return 0;
    char *s = (char *)malloc(len + 1);
    CL_CHECK(clGetDeviceInfo(d, CL_DEVICE_EXTENSIONS, len, s, NULL));
    s[len] = '\0';
    int found = 0;
    size_t el = strlen(ext);
    for (char *p = s; (p = strstr(p, ext)) != NULL; p += el)
        if ((p == s || p[-1] == ' ') && (p[el] == ' ' || p[el] == '\0')) found = 1;
    free(s);
    return found;
}

static cl_ulong profiling(cl_event e, cl_profiling_info what) {
    cl_ulong v = 0;
    CL_CHECK(clGetEventProfilingInfo(e, what, sizeof v, &v, NULL));
    return v;
}

static double event_ms(cl_event e) {
    cl_ulong s = profiling(e, CL_PROFILING_COMMAND_START), t = profiling(e, CL_PROFILING_COMMAND_END);
    return (double)(t - s) / 1e6;
}

/* What one dispatch (or copy) enqueues. */
struct work {
    cl_command_queue q;
    cl_kernel kernel;
    size_t global, local;
    cl_mem src, dst;
    size_t copy_bytes;
    int is_copy;
};

static void enqueue(const struct work *w, cl_event *ev) {
    if (w->is_copy)
        CL_CHECK(clEnqueueCopyBuffer(w->q, w->src, w->dst, 0, 0, w->copy_bytes, 0, NULL, ev));
    else
        CL_CHECK(clEnqueueNDRangeKernel(w->q, w->kernel, 1, NULL, &w->global, &w->local, 0, NULL, ev));
}

static void warm_up(const struct work *w, unsigned warmups) {
    for (unsigned i = 0; i < warmups; ++i) enqueue(w, NULL);
    CL_CHECK(clFinish(w->q));
}

/* A: START of the first to END of the last of `reps` back-to-back enqueues. */
static struct bench_stat time_a(const struct work *w, unsigned reps, unsigned warmups) {
    warm_up(w, warmups);
    cl_event first = NULL, last = NULL;
    const double host = bench_host_us();
    for (unsigned i = 0; i < reps; ++i) enqueue(w, i == 0 ? &first : i + 1 == reps ? &last : NULL);
    if (reps == 1) {
        last = first;
        CL_CHECK(clRetainEvent(last));
    }
    CL_CHECK(clWaitForEvents(1, &last));
    const double host_us = (bench_host_us() - host) / reps;
    cl_ulong s = profiling(first, CL_PROFILING_COMMAND_START), t = profiling(last, CL_PROFILING_COMMAND_END);
    CL_CHECK(clReleaseEvent(first));
    CL_CHECK(clReleaseEvent(last));
    struct bench_stat st = bench_stat_batch((double)(t - s) / 1e6, reps);
    st.host_us = host_us;
    return st;
}

/* B: every enqueue's START..END, all back to back, one wait. */
static struct bench_stat time_b(const struct work *w, unsigned reps, unsigned warmups) {
    warm_up(w, warmups);
    cl_event *ev = (cl_event *)calloc(reps, sizeof *ev);
    double *ms = (double *)calloc(reps, sizeof *ms);
    if (ev == NULL || ms == NULL) bench_die("out of memory");
    for (unsigned i = 0; i < reps; ++i) enqueue(w, &ev[i]);
    CL_CHECK(clWaitForEvents(1, &ev[reps - 1]));
    for (unsigned i = 0; i < reps; ++i) {
        ms[i] = event_ms(ev[i]);
        CL_CHECK(clReleaseEvent(ev[i]));
    }
    struct bench_stat s = bench_stat_each(ms, reps);
    free(ev);
    free(ms);
    return s;
}

/* C: clFinish after each enqueue; each one's START..END. */
static struct bench_stat time_c(const struct work *w, unsigned reps, unsigned warmups) {
    warm_up(w, warmups);
    double *ms = (double *)calloc(reps, sizeof *ms), *host = (double *)calloc(reps, sizeof *host);
    if (ms == NULL || host == NULL) bench_die("out of memory");
    for (unsigned i = 0; i < reps; ++i) {
        cl_event e;
        const double h = bench_host_us();
        enqueue(w, &e);
        CL_CHECK(clFinish(w->q));
        host[i] = bench_host_us() - h;
        ms[i] = event_ms(e);
        CL_CHECK(clReleaseEvent(e));
    }
    struct bench_stat s = bench_stat_each(ms, reps);
    s.host_us = bench_median(host, reps);
    free(ms);
    free(host);
    return s;
}

static void fill(cl_command_queue q, cl_mem m, cl_uint bits, size_t bytes) {
    CL_CHECK(clEnqueueFillBuffer(q, m, &bits, sizeof bits, 0, bytes, 0, NULL, NULL));
    CL_CHECK(clFinish(q));
}

int main(int argc, char **argv) {
    struct bench_options o;
    bench_parse_args(&o, "opencl", argc, argv);
    FILE *t = bench_table_out;

    unsigned ndev = 0;
    struct device_entry *devices = list_devices(&ndev);
    for (unsigned i = 0; i < ndev; ++i)
        fprintf(t, "OpenCL device %u: %s (%s)\n", i, devices[i].name, devices[i].platform_name);
    const struct device_entry *dev = select_device(devices, ndev, o.device);
    cl_device_id device = dev->device;

    cl_uint cus = 0;
    size_t max_wg = 0, timer_res = 0;
    char version[256] = "", driver[256] = "";
    CL_CHECK(clGetDeviceInfo(device, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof cus, &cus, NULL));
    CL_CHECK(clGetDeviceInfo(device, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof max_wg, &max_wg, NULL));
    CL_CHECK(clGetDeviceInfo(device, CL_DEVICE_PROFILING_TIMER_RESOLUTION, sizeof timer_res, &timer_res, NULL));
    CL_CHECK(clGetDeviceInfo(device, CL_DEVICE_VERSION, sizeof version - 1, version, NULL));
    CL_CHECK(clGetDeviceInfo(device, CL_DRIVER_VERSION, sizeof driver - 1, driver, NULL));
    const int nvidia = has_extension(device, "cl_nv_device_attribute_query");
    cl_uint cc_major = 0, cc_minor = 0;
    if (nvidia) {
        CL_CHECK(clGetDeviceInfo(device, CL_DEVICE_COMPUTE_CAPABILITY_MAJOR_NV, sizeof cc_major, &cc_major, NULL));
        CL_CHECK(clGetDeviceInfo(device, CL_DEVICE_COMPUTE_CAPABILITY_MINOR_NV, sizeof cc_minor, &cc_minor, NULL));
    }
    fprintf(t, "selected: %s (%s); %s, driver %s; %u compute units, max work-group %zu, timer resolution %zu ns\n",
            dev->name, dev->platform_name, version, driver, cus, max_wg, timer_res);

    /* The kernel: blocksweep-opencl embeds this very file and builds it with these options. */
    char path[PATH_MAX + 64];
    size_t src_len = 0;
    char *source = (char *)bench_read_repo_file(&o, "kernels/grayscale.cl", &src_len, path, sizeof path);
    if (strstr(source, "__kernel void " ENTRY_POINT "(") == NULL)
        bench_die("%s declares no '__kernel void " ENTRY_POINT "('", path);
    cl_int err;
    cl_context ctx = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
    CL_CHECK_ERR(err, "clCreateContext");
    cl_command_queue q = clCreateCommandQueue(ctx, device, CL_QUEUE_PROFILING_ENABLE, &err);
    CL_CHECK_ERR(err, "clCreateCommandQueue");
    const char *src_ptr = source;
    cl_program program = clCreateProgramWithSource(ctx, 1, &src_ptr, &src_len, &err);
    CL_CHECK_ERR(err, "clCreateProgramWithSource");
    const char *options = nvidia ? "-cl-std=CL1.2 -cl-nv-verbose" : "-cl-std=CL1.2";
    cl_int build = clBuildProgram(program, 1, &device, options, NULL, NULL);
    size_t log_len = 0;
    clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, 0, NULL, &log_len);
    char *log = (char *)calloc(log_len + 1, 1);
    clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, log_len, log, NULL);
    if (build != CL_SUCCESS) bench_die("clBuildProgram(%s): %d (%s)\n%s", path, build, cl_error_name(build), log);
    cl_kernel kernel = clCreateKernel(program, ENTRY_POINT, &err);
    CL_CHECK_ERR(err, "clCreateKernel");
    size_t kernel_wg = 0;
    CL_CHECK(clGetKernelWorkGroupInfo(kernel, device, CL_KERNEL_WORK_GROUP_SIZE, sizeof kernel_wg, &kernel_wg, NULL));
    fprintf(t, "kernel %s from %s, clBuildProgram \"%s\": CL_KERNEL_WORK_GROUP_SIZE %zu\n", ENTRY_POINT, path,
            options, kernel_wg);
    /* ptxas's report on NVIDIA ("Compiling entry function 'grayscale'", "Used 16 registers"). */
    for (char *line = strtok(log, "\n"); line != NULL; line = strtok(NULL, "\n"))
        if (strstr(line, "entry function") != NULL || strstr(line, "registers") != NULL)
            fprintf(t, "  build log: %s\n", line);
    free(log);

    struct bench_frame f;
    bench_frame_init(&f, o.width, o.height);
    const size_t n = f.n, bytes = n * sizeof(float);
    const double pass_bytes = 16.0 * (double)n;
    fprintf(t, "frame %llu x %llu pixels %zu bytes_per_pass %.0f, N %u, warm-ups %u\n", o.width, o.height, n,
            pass_bytes, o.reps, o.warmups);

    cl_mem planes[4];
    for (int i = 0; i < 4; ++i) {
        planes[i] = clCreateBuffer(ctx, i < 3 ? CL_MEM_READ_ONLY : CL_MEM_READ_WRITE, bytes, NULL, &err);
        CL_CHECK_ERR(err, "clCreateBuffer");
    }
    CL_CHECK(clEnqueueWriteBuffer(q, planes[0], CL_TRUE, 0, bytes, f.r, 0, NULL, NULL));
    CL_CHECK(clEnqueueWriteBuffer(q, planes[1], CL_TRUE, 0, bytes, f.g, 0, NULL, NULL));
    CL_CHECK(clEnqueueWriteBuffer(q, planes[2], CL_TRUE, 0, bytes, f.b, 0, NULL, NULL));
    for (cl_uint i = 0; i < 4; ++i) CL_CHECK(clSetKernelArg(kernel, i, sizeof(cl_mem), &planes[i]));
    cl_ulong n_arg = n;
    CL_CHECK(clSetKernelArg(kernel, 4, sizeof n_arg, &n_arg));

    /* blocksweep's wave model where this program knows it: NVIDIA's per-SM limits for the
     * compute capability, one work-group per compute unit on a CPU; else the data grid. */
    unsigned nv_warps = 0, nv_blocks = 0;
    const int nv_model = nvidia && bench_nv_sm_limits(cc_major, cc_minor, &nv_warps, &nv_blocks);
    struct bench_report *rep = (struct bench_report *)calloc(1, sizeof *rep);
    rep->o = &o;
    snprintf(rep->device, sizeof rep->device, "%s", dev->name);
    if (o.grid_mode == GRID_WAVE)
        fprintf(t, "grid: wave, %s\n",
                nv_model ? "NVIDIA per-SM limits of the compute capability x compute units"
                : (dev->type & CL_DEVICE_TYPE_CPU) ? "1 work-group per compute unit (CPU device)"
                                                    : "unknown residency: data grid ceil(n / T)");

    struct work w;
    memset(&w, 0, sizeof w);
    w.q = q;
    w.kernel = kernel;
    for (unsigned i = 0; i < o.row_count; ++i) {
        const unsigned tpb = o.rows[i].block;
        struct bench_row *row = &rep->rows[rep->count++];
        row->block = tpb;
        row->bytes = pass_bytes;
        if (o.grid_mode == GRID_LIST) row->grid = o.rows[i].grid;
        else if (o.grid_mode == GRID_DATA) row->grid = bench_blocks_to_cover(n, tpb);
        else if (nv_model) row->grid = bench_wave(bench_nv_blocks_per_sm(tpb, nv_warps, nv_blocks), cus, n, tpb);
        else if (dev->type & CL_DEVICE_TYPE_CPU) row->grid = bench_wave(1, cus, n, tpb);
        else row->grid = bench_blocks_to_cover(n, tpb);
        if (tpb > kernel_wg) {
            row->skipped = "block above CL_KERNEL_WORK_GROUP_SIZE";
            continue;
        }
        w.local = tpb;
        w.global = (size_t)row->grid * tpb;
        const int run[3] = {o.run_a, o.run_b, o.run_c};
        for (int d = 0; d < 3; ++d) {
            if (!run[d]) continue;
            fill(q, planes[3], BENCH_POISON_BITS, bytes);
            row->st[d] = d == 0 ? time_a(&w, o.reps, o.warmups)
                       : d == 1 ? time_b(&w, o.reps, o.warmups)
                                : time_c(&w, o.reps, o.warmups);
            CL_CHECK(clEnqueueReadBuffer(q, planes[3], CL_TRUE, 0, bytes, f.out, 0, NULL, NULL));
            bench_verify(&f, o.api, "ABC"[d], tpb, row->grid);
        }
    }

    if (o.copy) {
        /* The same traffic as one kernel pass: 8 bytes per pixel read and 8 written. */
        w.is_copy = 1;
        w.copy_bytes = n * 8;
        w.src = clCreateBuffer(ctx, CL_MEM_READ_WRITE, w.copy_bytes, NULL, &err);
        CL_CHECK_ERR(err, "clCreateBuffer (copy source)");
        w.dst = clCreateBuffer(ctx, CL_MEM_READ_WRITE, w.copy_bytes, NULL, &err);
        CL_CHECK_ERR(err, "clCreateBuffer (copy destination)");
        fill(q, w.src, 0, w.copy_bytes);
        fill(q, w.dst, 0, w.copy_bytes);
        struct bench_row *row = &rep->rows[rep->count++];
        row->label = "copy";
        row->bytes = 2.0 * (double)w.copy_bytes;
        row->st[0] = time_a(&w, o.reps, o.warmups);
        CL_CHECK(clReleaseMemObject(w.src));
        CL_CHECK(clReleaseMemObject(w.dst));
    }

    bench_print_table(rep);
    bench_write_csv(rep);

    for (int i = 0; i < 4; ++i) CL_CHECK(clReleaseMemObject(planes[i]));
    CL_CHECK(clReleaseKernel(kernel));
    CL_CHECK(clReleaseProgram(program));
    CL_CHECK(clReleaseCommandQueue(q));
    CL_CHECK(clReleaseContext(ctx));
    free(rep);
    free(source);
    free(devices);
    bench_frame_free(&f);
    return EXIT_SUCCESS;
}
