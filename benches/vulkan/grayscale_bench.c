/* Plain Vulkan reference for blocksweep's Vulkan backend: the same SPIR-V (shaders/grayscale.spv,
 * read at run time), set up as blocksweep sets it up (workgroup size x, y, z through
 * specialization constants 0, 1, 2 and ONE_PIXEL_PER_THREAD = false through constant 3; the
 * pixel count as a 4-byte push constant; r, g, b, gray at bindings 0..3 of set 0), the same
 * launches (block:grid pairs, e.g. the grids of a blocksweep CSV), and every row timed three
 * ways with timestamp queries written at BOTTOM_OF_PIPE:
 *
 *   A  one command buffer: N dispatches separated by compute-to-compute pipeline barriers,
 *      a timestamp before the first and after the last; mean = interval / N
 *      (blocksweep's `--timing batch`)
 *   B  the same command buffer with a timestamp after each dispatch (N + 1 timestamps);
 *      dispatch i runs from stamp i to stamp i + 1 (blocksweep's `--timing each`)
 *   C  one submission per dispatch (timestamp, dispatch, timestamp) and a fence wait after
 *      each (blocksweep's `--timing synced`)
 *
 * then the same traffic (pixels x 8 bytes) copied under A by shaders/copy.spv (the ceiling:
 * NVIDIA serves vkCmdCopyBuffer on a copy engine, far below the SMs) and by vkCmdCopyBuffer
 * (row "copy_transfer", for reference). Links against the loader (libvulkan.so.1) only.
 *
 *   make -C benches vulkan        (or: cc -O2 -o grayscale_bench_vk grayscale_bench.c -lvulkan -lm)
 *   benches/bin/grayscale_bench_vk --device H200 --size 3840x2160 --reps 200 \
 *       --grids 16:4224,32:4224,... --csv out.csv          (--help for every option)
 */
#include <vulkan/vulkan.h>

#include "../common/bench_common.h"

#define VK_CHECK(call)                                                                     \
    do {                                                                                   \
        VkResult r_ = (call);                                                              \
        if (r_ != VK_SUCCESS) bench_die("%s:%d: %s failed: VkResult %d", __FILE__, __LINE__, #call, (int)r_); \
    } while (0)

/* llvmpipe ends a shader's loops after this many iterations (gallivm LP_MAX_TGSI_LOOP_ITERATIONS;
 * blocksweep refuses such launches too). */
#define LLVMPIPE_LOOP_LIMIT 65535ull
#define COPY_WORKGROUP 256u
#define COPY_GROUPS_PER_SM 8u
#define COPY_GRID_CAP_WITHOUT_SMS 65535u

struct buffer {
    VkBuffer buf;
    VkDeviceMemory mem;
    VkDeviceSize size;
    void *map;
};

struct vk {
    VkInstance instance;
    VkPhysicalDevice pd;
    VkPhysicalDeviceProperties props;
    VkPhysicalDeviceMemoryProperties mem;
    VkDevice dev;
    VkQueue queue;
    uint32_t family, valid_bits;
    double period_ns;
    VkCommandPool pool;
    VkCommandBuffer cb;
    VkFence fence;
    VkQueryPool queries;
    uint32_t query_capacity;
    uint32_t sm_count, warps_per_sm; /* VK_NV_shader_sm_builtins, 0 when unknown */
    int llvmpipe;
};

static struct vk V;

static uint32_t memory_type(uint32_t bits, VkMemoryPropertyFlags need, VkMemoryPropertyFlags prefer) {
    for (int pass = 0; pass < 2; ++pass)
        for (uint32_t i = 0; i < V.mem.memoryTypeCount; ++i) {
            VkMemoryPropertyFlags f = V.mem.memoryTypes[i].propertyFlags;
            if (!(bits & (1u << i)) || (f & need) != need) continue;
            if (pass == 0 && (f & prefer) != prefer) continue;
            return i;
        }
    bench_die("no memory type with flags 0x%x", (unsigned)need);
}

static struct buffer buffer_new(VkDeviceSize size, VkBufferUsageFlags usage, int host) {
    struct buffer b;
    memset(&b, 0, sizeof b);
    b.size = size;
    VkBufferCreateInfo bi = {VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
    bi.size = size;
    bi.usage = usage;
    bi.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
    VK_CHECK(vkCreateBuffer(V.dev, &bi, NULL, &b.buf));
    VkMemoryRequirements req;
    vkGetBufferMemoryRequirements(V.dev, b.buf, &req);
    VkMemoryAllocateInfo ai = {VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
    ai.allocationSize = req.size;
    ai.memoryTypeIndex =
        host ? memory_type(req.memoryTypeBits, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT,
                           VK_MEMORY_PROPERTY_HOST_CACHED_BIT)
             : memory_type(req.memoryTypeBits, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, 0);
    VK_CHECK(vkAllocateMemory(V.dev, &ai, NULL, &b.mem));
    VK_CHECK(vkBindBufferMemory(V.dev, b.buf, b.mem, 0));
    if (host) VK_CHECK(vkMapMemory(V.dev, b.mem, 0, VK_WHOLE_SIZE, 0, &b.map));
    return b;
}

static void buffer_free(struct buffer *b) {
    if (b->map) vkUnmapMemory(V.dev, b->mem);
    vkDestroyBuffer(V.dev, b->buf, NULL);
    vkFreeMemory(V.dev, b->mem, NULL);
    memset(b, 0, sizeof *b);
}

static void barrier(VkPipelineStageFlags src_stage, VkAccessFlags src, VkPipelineStageFlags dst_stage,
                    VkAccessFlags dst) {
    VkMemoryBarrier mb = {VK_STRUCTURE_TYPE_MEMORY_BARRIER};
    mb.srcAccessMask = src;
    mb.dstAccessMask = dst;
    vkCmdPipelineBarrier(V.cb, src_stage, dst_stage, 0, 1, &mb, 0, NULL, 0, NULL);
}

/* Starts the one command buffer, with a barrier from every earlier compute or transfer write
 * (an earlier submission's fill, upload or dispatch) to this one's compute and transfer work. */
static void begin(void) {
    VK_CHECK(vkResetCommandBuffer(V.cb, 0));
    VkCommandBufferBeginInfo bi = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    VK_CHECK(vkBeginCommandBuffer(V.cb, &bi));
    const VkPipelineStageFlags both = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT;
    barrier(both, VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT, both,
            VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_READ_BIT |
                VK_ACCESS_TRANSFER_WRITE_BIT);
}

/* Ends, submits and waits on the fence. */
static void submit_wait(void) {
    VK_CHECK(vkEndCommandBuffer(V.cb));
    VkSubmitInfo si = {VK_STRUCTURE_TYPE_SUBMIT_INFO};
    si.commandBufferCount = 1;
    si.pCommandBuffers = &V.cb;
    VK_CHECK(vkQueueSubmit(V.queue, 1, &si, V.fence));
    VK_CHECK(vkWaitForFences(V.dev, 1, &V.fence, VK_TRUE, 120ull * 1000000000ull));
    VK_CHECK(vkResetFences(V.dev, 1, &V.fence));
}

static void ensure_queries(uint32_t count) {
    if (count <= V.query_capacity) return;
    if (V.queries) vkDestroyQueryPool(V.dev, V.queries, NULL);
    VkQueryPoolCreateInfo qi = {VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
    qi.queryType = VK_QUERY_TYPE_TIMESTAMP;
    qi.queryCount = count;
    VK_CHECK(vkCreateQueryPool(V.dev, &qi, NULL, &V.queries));
    V.query_capacity = count;
}

static double ticks_ms(uint64_t a, uint64_t b) {
    uint64_t mask = V.valid_bits >= 64 ? ~0ull : ((1ull << V.valid_bits) - 1);
    return (double)((b - a) & mask) * V.period_ns / 1e6;
}

/* What one dispatch (or copy) records, and the barrier that separates two of them. */
struct work {
    VkPipeline pipeline;
    VkPipelineLayout layout;
    uint32_t dispatches;        /* the copy shader splits copies above maxStorageBufferRange */
    VkDescriptorSet sets[16];
    uint32_t push[16], grid[16];
    int transfer;               /* vkCmdCopyBuffer instead of a dispatch */
    VkBuffer src, dst;
    VkDeviceSize copy_bytes;
};

static void record(const struct work *w) {
    if (w->transfer) {
        VkBufferCopy region = {0, 0, w->copy_bytes};
        vkCmdCopyBuffer(V.cb, w->src, w->dst, 1, &region);
        return;
    }
    for (uint32_t i = 0; i < w->dispatches; ++i) {
        vkCmdBindPipeline(V.cb, VK_PIPELINE_BIND_POINT_COMPUTE, w->pipeline);
        vkCmdBindDescriptorSets(V.cb, VK_PIPELINE_BIND_POINT_COMPUTE, w->layout, 0, 1, &w->sets[i], 0, NULL);
        vkCmdPushConstants(V.cb, w->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, 4, &w->push[i]);
        vkCmdDispatch(V.cb, w->grid[i], 1, 1);
    }
}

/* Between two dispatches of a batch: the next one overwrites what the previous one wrote. */
static void between(const struct work *w) {
    if (w->transfer)
        barrier(VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT,
                VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT);
    else
        barrier(VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
}

enum stamps { STAMPS_NONE, STAMPS_BATCH, STAMPS_EACH };

static void stamp(uint32_t q) { vkCmdWriteTimestamp(V.cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, V.queries, q); }

/* `count` dispatches in one command buffer, a barrier between consecutive ones, one submission
 * and one wait; the per-interval times go to `ms` (1 for BATCH, count for EACH). */
static void run_batch(const struct work *w, uint32_t count, enum stamps s, double *ms) {
    uint32_t nq = s == STAMPS_NONE ? 0 : s == STAMPS_BATCH ? 2 : count + 1;
    if (nq) ensure_queries(nq);
    begin();
    if (nq) {
        vkCmdResetQueryPool(V.cb, V.queries, 0, nq);
        stamp(0);
    }
    for (uint32_t i = 0; i < count; ++i) {
        if (i > 0) between(w);
        record(w);
        if (s == STAMPS_EACH) stamp(i + 1);
    }
    if (s == STAMPS_BATCH) stamp(1);
    submit_wait();
    if (!nq) return;
    uint64_t *ticks = (uint64_t *)calloc(nq, sizeof *ticks);
    if (ticks == NULL) bench_die("out of memory");
    VK_CHECK(vkGetQueryPoolResults(V.dev, V.queries, 0, nq, nq * sizeof *ticks, ticks, sizeof *ticks,
                                   VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT));
    for (uint32_t i = 0; i + 1 < nq; ++i) ms[i] = ticks_ms(ticks[i], ticks[i + 1]);
    free(ticks);
}

static void warm_up(const struct work *w, unsigned warmups) {
    if (warmups) run_batch(w, warmups, STAMPS_NONE, NULL);
}

static struct bench_stat time_a(const struct work *w, unsigned reps, unsigned warmups) {
    double ms;
    warm_up(w, warmups);
    const double host = bench_host_us();
    run_batch(w, reps, STAMPS_BATCH, &ms);
    struct bench_stat s = bench_stat_batch(ms, reps);
    s.host_us = (bench_host_us() - host) / reps;
    return s;
}

static struct bench_stat time_b(const struct work *w, unsigned reps, unsigned warmups) {
    double *ms = (double *)calloc(reps, sizeof *ms);
    if (ms == NULL) bench_die("out of memory");
    warm_up(w, warmups);
    run_batch(w, reps, STAMPS_EACH, ms);
    struct bench_stat s = bench_stat_each(ms, reps);
    free(ms);
    return s;
}

static struct bench_stat time_c(const struct work *w, unsigned reps, unsigned warmups) {
    double *ms = (double *)calloc(reps, sizeof *ms), *host = (double *)calloc(reps, sizeof *host);
    if (ms == NULL || host == NULL) bench_die("out of memory");
    warm_up(w, warmups);
    for (unsigned i = 0; i < reps; ++i) {
        const double h = bench_host_us();
        run_batch(w, 1, STAMPS_EACH, &ms[i]);
        host[i] = bench_host_us() - h;
    }
    struct bench_stat s = bench_stat_each(ms, reps);
    s.host_us = bench_median(host, reps);
    free(ms);
    free(host);
    return s;
}

/* ---- set-up ------------------------------------------------------------------------------- */

static int device_has_extension(VkPhysicalDevice pd, const char *name) {
    uint32_t n = 0;
    VK_CHECK(vkEnumerateDeviceExtensionProperties(pd, NULL, &n, NULL));
    VkExtensionProperties *e = (VkExtensionProperties *)calloc(n ? n : 1, sizeof *e);
    VK_CHECK(vkEnumerateDeviceExtensionProperties(pd, NULL, &n, e));
    int found = 0;
    for (uint32_t i = 0; i < n; ++i)
        if (!strcmp(e[i].extensionName, name)) found = 1;
    free(e);
    return found;
}

static void open_device(const char *want, FILE *t) {
    VkApplicationInfo app = {VK_STRUCTURE_TYPE_APPLICATION_INFO};
    app.pApplicationName = "blocksweep-bench";
    app.apiVersion = VK_API_VERSION_1_1;
    VkInstanceCreateInfo ii = {VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
    ii.pApplicationInfo = &app;
    VkResult r = vkCreateInstance(&ii, NULL, &V.instance);
    if (r != VK_SUCCESS) bench_die("vkCreateInstance: VkResult %d (is a Vulkan driver installed? VK_DRIVER_FILES?)", r);
    uint32_t n = 0;
    VK_CHECK(vkEnumeratePhysicalDevices(V.instance, &n, NULL));
    if (n == 0) bench_die("no Vulkan physical device");
    VkPhysicalDevice *pds = (VkPhysicalDevice *)calloc(n, sizeof *pds);
    VK_CHECK(vkEnumeratePhysicalDevices(V.instance, &n, pds));
    int chosen = -1;
    unsigned long index;
    for (uint32_t i = 0; i < n; ++i) {
        VkPhysicalDeviceProperties p;
        vkGetPhysicalDeviceProperties(pds[i], &p);
        fprintf(t, "Vulkan device %u: %s\n", i, p.deviceName);
        if (chosen >= 0) continue;
        if (want == NULL) {
            if (p.deviceType == VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU || p.deviceType == VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU)
                chosen = (int)i;
        } else if (bench_is_index(want, &index)) {
            if (index == i) chosen = (int)i;
        } else if (bench_contains_ci(p.deviceName, want)) {
            chosen = (int)i;
        }
    }
    if (chosen < 0 && want == NULL) chosen = 0;
    if (chosen < 0) bench_die("--device %s: no Vulkan device matches", want);
    V.pd = pds[chosen];
    free(pds);
    vkGetPhysicalDeviceProperties(V.pd, &V.props);
    vkGetPhysicalDeviceMemoryProperties(V.pd, &V.mem);
    if (V.props.apiVersion < VK_API_VERSION_1_1)
        bench_die("%s supports Vulkan 1.0 only; shaders/*.spv target Vulkan 1.1", V.props.deviceName);
    V.llvmpipe = bench_contains_ci(V.props.deviceName, "llvmpipe");
    V.period_ns = V.props.limits.timestampPeriod;

    if (device_has_extension(V.pd, VK_NV_SHADER_SM_BUILTINS_EXTENSION_NAME)) {
        VkPhysicalDeviceShaderSMBuiltinsPropertiesNV sm = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_SM_BUILTINS_PROPERTIES_NV};
        VkPhysicalDeviceProperties2 p2 = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
        p2.pNext = &sm;
        vkGetPhysicalDeviceProperties2(V.pd, &p2);
        V.sm_count = sm.shaderSMCount;
        V.warps_per_sm = sm.shaderWarpsPerSM;
    }

    /* The first queue family with compute and timestamps, as blocksweep picks it. */
    uint32_t nf = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(V.pd, &nf, NULL);
    VkQueueFamilyProperties *qf = (VkQueueFamilyProperties *)calloc(nf, sizeof *qf);
    vkGetPhysicalDeviceQueueFamilyProperties(V.pd, &nf, qf);
    V.family = UINT32_MAX;
    for (uint32_t i = 0; i < nf && V.family == UINT32_MAX; ++i)
        if ((qf[i].queueFlags & VK_QUEUE_COMPUTE_BIT) && qf[i].queueCount > 0 && qf[i].timestampValidBits > 0) {
            V.family = i;
            V.valid_bits = qf[i].timestampValidBits;
        }
    free(qf);
    if (V.family == UINT32_MAX) bench_die("no queue family with compute and timestamps");

    float priority = 1.0f;
    VkDeviceQueueCreateInfo qi = {VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
    qi.queueFamilyIndex = V.family;
    qi.queueCount = 1;
    qi.pQueuePriorities = &priority;
    VkDeviceCreateInfo di = {VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
    di.queueCreateInfoCount = 1;
    di.pQueueCreateInfos = &qi;
    VK_CHECK(vkCreateDevice(V.pd, &di, NULL, &V.dev));
    vkGetDeviceQueue(V.dev, V.family, 0, &V.queue);

    VkCommandPoolCreateInfo pi = {VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    pi.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
    pi.queueFamilyIndex = V.family;
    VK_CHECK(vkCreateCommandPool(V.dev, &pi, NULL, &V.pool));
    VkCommandBufferAllocateInfo ci = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    ci.commandPool = V.pool;
    ci.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    ci.commandBufferCount = 1;
    VK_CHECK(vkAllocateCommandBuffers(V.dev, &ci, &V.cb));
    VkFenceCreateInfo fi = {VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    VK_CHECK(vkCreateFence(V.dev, &fi, NULL, &V.fence));
}

static VkShaderModule load_shader(const struct bench_options *o, const char *rel, FILE *t) {
    char path[PATH_MAX + 64];
    size_t len = 0;
    unsigned char *code = bench_read_repo_file(o, rel, &len, path, sizeof path);
    if (len < 20 || len % 4 != 0 || *(const uint32_t *)(const void *)code != 0x07230203u)
        bench_die("%s is not SPIR-V", path);
    VkShaderModuleCreateInfo si = {VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
    si.codeSize = len;
    si.pCode = (const uint32_t *)(const void *)code;
    VkShaderModule m;
    VK_CHECK(vkCreateShaderModule(V.dev, &si, NULL, &m));
    fprintf(t, "shader %s (%zu bytes)\n", path, len);
    free(code);
    return m;
}

/* A descriptor set layout of `bindings` storage buffers and a pipeline layout with a 4-byte
 * compute push constant (the pixel or element count). */
static void make_layouts(uint32_t bindings, VkDescriptorSetLayout *set_layout, VkPipelineLayout *layout) {
    VkDescriptorSetLayoutBinding b[4];
    memset(b, 0, sizeof b);
    for (uint32_t i = 0; i < bindings; ++i) {
        b[i].binding = i;
        b[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
        b[i].descriptorCount = 1;
        b[i].stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
    }
    VkDescriptorSetLayoutCreateInfo li = {VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
    li.bindingCount = bindings;
    li.pBindings = b;
    VK_CHECK(vkCreateDescriptorSetLayout(V.dev, &li, NULL, set_layout));
    VkPushConstantRange range = {VK_SHADER_STAGE_COMPUTE_BIT, 0, 4};
    VkPipelineLayoutCreateInfo pi = {VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
    pi.setLayoutCount = 1;
    pi.pSetLayouts = set_layout;
    pi.pushConstantRangeCount = 1;
    pi.pPushConstantRanges = &range;
    VK_CHECK(vkCreatePipelineLayout(V.dev, &pi, NULL, layout));
}

/* A compute pipeline with `count` 4-byte specialization constants, ids 0..count-1. */
static VkPipeline make_pipeline(VkShaderModule m, VkPipelineLayout layout, const uint32_t *values, uint32_t count) {
    VkSpecializationMapEntry e[4];
    for (uint32_t i = 0; i < count; ++i) {
        e[i].constantID = i;
        e[i].offset = 4 * i;
        e[i].size = 4;
    }
    VkSpecializationInfo spec = {count, e, 4 * count, values};
    VkComputePipelineCreateInfo ci = {VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
    ci.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
    ci.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
    ci.stage.module = m;
    ci.stage.pName = "main";
    ci.stage.pSpecializationInfo = &spec;
    ci.layout = layout;
    VkPipeline p;
    VK_CHECK(vkCreateComputePipelines(V.dev, VK_NULL_HANDLE, 1, &ci, NULL, &p));
    return p;
}

static void write_set(VkDescriptorSet set, uint32_t binding, VkBuffer buf, VkDeviceSize offset, VkDeviceSize range) {
    VkDescriptorBufferInfo bi = {buf, offset, range};
    VkWriteDescriptorSet w = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
    w.dstSet = set;
    w.dstBinding = binding;
    w.descriptorCount = 1;
    w.descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    w.pBufferInfo = &bi;
    vkUpdateDescriptorSets(V.dev, 1, &w, 0, NULL);
}

static void fill(VkBuffer b, uint32_t bits) {
    begin();
    vkCmdFillBuffer(V.cb, b, 0, VK_WHOLE_SIZE, bits);
    submit_wait();
}

static void copy_buffer(VkBuffer src, VkBuffer dst, VkDeviceSize bytes, int host_read) {
    begin();
    VkBufferCopy region = {0, 0, bytes};
    vkCmdCopyBuffer(V.cb, src, dst, 1, &region);
    if (host_read)
        barrier(VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_HOST_BIT,
                VK_ACCESS_HOST_READ_BIT);
    submit_wait();
}

static uint64_t gcd64(uint64_t a, uint64_t b) { return b ? gcd64(b, a % b) : a; }

int main(int argc, char **argv) {
    struct bench_options o;
    bench_parse_args(&o, "vulkan", argc, argv);
    FILE *t = bench_table_out;
    open_device(o.device, t);
    const VkPhysicalDeviceLimits *L = &V.props.limits;
    fprintf(t, "selected: %s, Vulkan %u.%u.%u, queue family %u (%u timestamp bits, period %.3f ns)",
            V.props.deviceName, VK_API_VERSION_MAJOR(V.props.apiVersion), VK_API_VERSION_MINOR(V.props.apiVersion),
            VK_API_VERSION_PATCH(V.props.apiVersion), V.family, V.valid_bits, V.period_ns);
    if (V.sm_count) fprintf(t, ", shaderSMCount %u, shaderWarpsPerSM %u", V.sm_count, V.warps_per_sm);
    fprintf(t, "\n");

    struct bench_frame f;
    bench_frame_init(&f, o.width, o.height);
    const size_t n = f.n;
    const VkDeviceSize bytes = (VkDeviceSize)n * sizeof(float);
    const double pass_bytes = 16.0 * (double)n;
    if (n > 0xFFFFFFFFull || bytes > L->maxStorageBufferRange)
        bench_die("%zu pixels: a plane exceeds maxStorageBufferRange (%u) or the shader's 32-bit count", n,
                  L->maxStorageBufferRange);
    fprintf(t, "frame %llu x %llu pixels %zu bytes_per_pass %.0f, N %u, warm-ups %u\n", o.width, o.height, n,
            pass_bytes, o.reps, o.warmups);

    /* The planes (bindings 0..3) and a staging buffer for upload and read-back. */
    const VkBufferUsageFlags plane_usage =
        VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT;
    struct buffer planes[4], staging = buffer_new(bytes, VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT, 1);
    const float *inputs[3] = {f.r, f.g, f.b};
    for (int i = 0; i < 4; ++i) {
        planes[i] = buffer_new(bytes, plane_usage, 0);
        if (i < 3) {
            memcpy(staging.map, inputs[i], bytes);
            copy_buffer(staging.buf, planes[i].buf, bytes, 0);
        }
    }

    /* The grayscale shader: set layout, pipeline layout, one descriptor set. */
    VkShaderModule gray = load_shader(&o, "shaders/grayscale.spv", t);
    VkDescriptorSetLayout gray_set_layout;
    VkPipelineLayout gray_layout;
    make_layouts(4, &gray_set_layout, &gray_layout);

    /* The copy shader's plan: 16-byte elements, the copy split where it exceeds
     * maxStorageBufferRange, workgroup 256, grid capped at 8 workgroups per SM (blocksweep's). */
    const VkDeviceSize copy_bytes = ((VkDeviceSize)n * 8 + 15) / 16 * 16;
    const uint64_t align = L->minStorageBufferOffsetAlignment ? L->minStorageBufferOffsetAlignment : 1;
    const uint64_t unit = 16 / gcd64(16, align) * align;
    const uint64_t step = (uint64_t)L->maxStorageBufferRange / unit * unit;
    const uint32_t copy_chunks = (uint32_t)((copy_bytes + step - 1) / step);
    if (o.copy && copy_chunks > 16) bench_die("copy of %llu bytes needs %u dispatches (at most 16)", (unsigned long long)copy_bytes, copy_chunks);

    VkDescriptorPoolSize ps = {VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 4 + 2 * copy_chunks};
    VkDescriptorPoolCreateInfo dpi = {VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
    dpi.maxSets = 1 + copy_chunks;
    dpi.poolSizeCount = 1;
    dpi.pPoolSizes = &ps;
    VkDescriptorPool dpool;
    VK_CHECK(vkCreateDescriptorPool(V.dev, &dpi, NULL, &dpool));
    VkDescriptorSetAllocateInfo dai = {VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
    dai.descriptorPool = dpool;
    dai.descriptorSetCount = 1;
    dai.pSetLayouts = &gray_set_layout;
    VkDescriptorSet gray_set;
    VK_CHECK(vkAllocateDescriptorSets(V.dev, &dai, &gray_set));
    for (uint32_t i = 0; i < 4; ++i) write_set(gray_set, i, planes[i].buf, 0, VK_WHOLE_SIZE);

    struct bench_report *rep = (struct bench_report *)calloc(1, sizeof *rep);
    rep->o = &o;
    snprintf(rep->device, sizeof rep->device, "%s", V.props.deviceName);
    if (o.grid_mode == GRID_WAVE)
        fprintf(t, "grid: wave, %s\n",
                V.sm_count ? "NVIDIA per-SM limits (shaderWarpsPerSM, 32 blocks; 16 where 32 or 48 warps) x shaderSMCount"
                           : "no SM count on this device: data grid ceil(n / T)");

    struct work w;
    memset(&w, 0, sizeof w);
    w.layout = gray_layout;
    w.dispatches = 1;
    w.sets[0] = gray_set;
    w.push[0] = (uint32_t)n;
    for (unsigned i = 0; i < o.row_count; ++i) {
        const unsigned tpb = o.rows[i].block;
        struct bench_row *row = &rep->rows[rep->count++];
        row->block = tpb;
        row->bytes = pass_bytes;
        if (o.grid_mode == GRID_LIST) row->grid = o.rows[i].grid;
        else if (o.grid_mode == GRID_WAVE && V.sm_count) {
            unsigned max_blocks = (V.warps_per_sm == 32 || V.warps_per_sm == 48) ? 16 : 32;
            row->grid = bench_wave(bench_nv_blocks_per_sm(tpb, V.warps_per_sm, max_blocks), V.sm_count, n, tpb);
        } else row->grid = bench_blocks_to_cover(n, tpb);
        if (tpb > L->maxComputeWorkGroupInvocations || tpb > L->maxComputeWorkGroupSize[0]) {
            row->skipped = "block above maxComputeWorkGroupInvocations or maxComputeWorkGroupSize[0]";
            continue;
        }
        if (row->grid > L->maxComputeWorkGroupCount[0] || row->grid * tpb > 0xFFFFFFFFull) {
            row->skipped = "grid above maxComputeWorkGroupCount[0] or the shader's 32-bit index";
            continue;
        }
        if (V.llvmpipe && bench_blocks_to_cover(n, (unsigned)(row->grid * tpb)) > LLVMPIPE_LOOP_LIMIT) {
            row->skipped = "llvmpipe ends a loop after 65535 iterations; this grid would need more";
            continue;
        }
        /* constant_id 0..2 = local_size_{x,y,z}_id, 3 = ONE_PIXEL_PER_THREAD (VkBool32 false). */
        const uint32_t spec[4] = {tpb, 1, 1, 0};
        w.pipeline = make_pipeline(gray, gray_layout, spec, 4);
        w.grid[0] = (uint32_t)row->grid;
        const int run[3] = {o.run_a, o.run_b, o.run_c};
        for (int d = 0; d < 3; ++d) {
            if (!run[d]) continue;
            fill(planes[3].buf, BENCH_POISON_BITS);
            row->st[d] = d == 0 ? time_a(&w, o.reps, o.warmups)
                       : d == 1 ? time_b(&w, o.reps, o.warmups)
                                : time_c(&w, o.reps, o.warmups);
            copy_buffer(planes[3].buf, staging.buf, bytes, 1);
            memcpy(f.out, staging.map, bytes);
            bench_verify(&f, o.api, "ABC"[d], tpb, row->grid);
        }
        vkDestroyPipeline(V.dev, w.pipeline, NULL);
    }

    VkShaderModule copy_module = VK_NULL_HANDLE;
    VkDescriptorSetLayout copy_set_layout = VK_NULL_HANDLE;
    VkPipelineLayout copy_layout = VK_NULL_HANDLE;
    if (o.copy) {
        const VkBufferUsageFlags usage =
            VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
        struct buffer src = buffer_new(copy_bytes, usage, 0), dst = buffer_new(copy_bytes, usage, 0);
        fill(src.buf, 0);
        fill(dst.buf, 0);
        copy_module = load_shader(&o, "shaders/copy.spv", t);
        make_layouts(2, &copy_set_layout, &copy_layout);
        uint32_t wg = COPY_WORKGROUP;
        if (wg > L->maxComputeWorkGroupInvocations) wg = L->maxComputeWorkGroupInvocations;
        if (wg > L->maxComputeWorkGroupSize[0]) wg = L->maxComputeWorkGroupSize[0];
        uint64_t cap = V.sm_count ? (uint64_t)V.sm_count * COPY_GROUPS_PER_SM : COPY_GRID_CAP_WITHOUT_SMS;
        if (cap > L->maxComputeWorkGroupCount[0]) cap = L->maxComputeWorkGroupCount[0];
        struct work c;
        memset(&c, 0, sizeof c);
        c.layout = copy_layout;
        c.pipeline = make_pipeline(copy_module, copy_layout, &wg, 1);
        c.dispatches = copy_chunks;
        VkDescriptorSetLayout layouts[16];
        for (uint32_t i = 0; i < copy_chunks; ++i) layouts[i] = copy_set_layout;
        dai.descriptorSetCount = copy_chunks;
        dai.pSetLayouts = layouts;
        VK_CHECK(vkAllocateDescriptorSets(V.dev, &dai, c.sets));
        for (uint32_t i = 0; i < copy_chunks; ++i) {
            VkDeviceSize off = (VkDeviceSize)i * step, len = copy_bytes - off < step ? copy_bytes - off : step;
            write_set(c.sets[i], 0, src.buf, off, len);
            write_set(c.sets[i], 1, dst.buf, off, len);
            uint64_t elements = len / 16, grid = (elements + wg - 1) / wg;
            c.push[i] = (uint32_t)elements;
            c.grid[i] = (uint32_t)(grid < cap ? grid : cap);
            if (V.llvmpipe && bench_blocks_to_cover(elements, (unsigned)(c.grid[i] * wg)) > LLVMPIPE_LOOP_LIMIT)
                bench_die("copy: llvmpipe's loop limit would cut the copy shader short");
        }
        struct bench_row *row = &rep->rows[rep->count++];
        row->label = "copy";
        row->grid = c.grid[0];
        row->bytes = 2.0 * (double)n * 8;
        row->st[0] = time_a(&c, o.reps, o.warmups);
        vkDestroyPipeline(V.dev, c.pipeline, NULL);

        struct work x;
        memset(&x, 0, sizeof x);
        x.transfer = 1;
        x.src = src.buf;
        x.dst = dst.buf;
        x.copy_bytes = copy_bytes;
        row = &rep->rows[rep->count++];
        row->label = "copy_transfer";
        row->bytes = 2.0 * (double)n * 8;
        row->st[0] = time_a(&x, o.reps, o.warmups);
        buffer_free(&src);
        buffer_free(&dst);
    }

    bench_print_table(rep);
    bench_write_csv(rep);

    VK_CHECK(vkDeviceWaitIdle(V.dev));
    if (copy_layout) vkDestroyPipelineLayout(V.dev, copy_layout, NULL);
    if (copy_set_layout) vkDestroyDescriptorSetLayout(V.dev, copy_set_layout, NULL);
    if (copy_module) vkDestroyShaderModule(V.dev, copy_module, NULL);
    vkDestroyDescriptorPool(V.dev, dpool, NULL);
    vkDestroyPipelineLayout(V.dev, gray_layout, NULL);
    vkDestroyDescriptorSetLayout(V.dev, gray_set_layout, NULL);
    vkDestroyShaderModule(V.dev, gray, NULL);
    for (int i = 0; i < 4; ++i) buffer_free(&planes[i]);
    buffer_free(&staging);
    if (V.queries) vkDestroyQueryPool(V.dev, V.queries, NULL);
    vkDestroyFence(V.dev, V.fence, NULL);
    vkDestroyCommandPool(V.dev, V.pool, NULL);
    vkDestroyDevice(V.dev, NULL);
    vkDestroyInstance(V.instance, NULL);
    free(rep);
    bench_frame_free(&f);
    return EXIT_SUCCESS;
}
