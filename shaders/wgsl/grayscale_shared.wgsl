// The shared-memory probe (docs/lab.md; shaders/grayscale_shared.comp). WebGPU has no dynamic
// workgroup memory: the array's size is the override constant @id(3), the launch's shared
// bytes, fixed when the pipeline is created (one pipeline per size). Fewer than 4 bytes still
// get one f32 (WGSL has no empty arrays); fewer than 12 write nothing.

@id(0) override block_x: u32 = 64u;
@id(1) override block_y: u32 = 1u;
@id(2) override block_z: u32 = 1u;
@id(3) override shared_bytes: u32 = 12u;

var<workgroup> scratch: array<f32, max(shared_bytes / 4u, 1u)>;

@group(0) @binding(0) var<storage, read> r: array<f32>;
@group(0) @binding(1) var<storage, read> g: array<f32>;
@group(0) @binding(2) var<storage, read> b: array<f32>;
@group(0) @binding(3) var<storage, read_write> gray: array<f32>;

// The built-in's u64 `n` (low word first) and its u32 `words`: the launch's shared bytes / 4,
// as the host sets it before each launch (CUDA and OpenCL size their array from it).
struct Params { n: vec2<u32>, words: u32 }
@group(0) @binding(4) var<uniform> params: Params;

@compute @workgroup_size(block_x, block_y, block_z)
fn main(@builtin(workgroup_id) group: vec3<u32>, @builtin(local_invocation_id) local: vec3<u32>,
        @builtin(num_workgroups) groups: vec3<u32>) {
    let n = params.n.x;
    let words = min(params.words, shared_bytes / 4u);
    // Uniform: such a launch writes nothing (verification says so).
    if (words < 3u) { return; }
    // The workgroup fills all of the array with the three weights, repeated, meets at a
    // barrier every invocation reaches, then each invocation reads its weights from there.
    for (var k = local.x; k < words; k += block_x) {
        scratch[k] = select(select(0.114, 0.587, k % 3u == 1u), 0.299, k % 3u == 0u);
    }
    workgroupBarrier();
    let j = 3u * (local.x % (words / 3u));
    let wr = scratch[j];
    let wg = scratch[j + 1u];
    let wb = scratch[j + 2u];
    let step = groups.x * block_x;
    var i = group.x * block_x + local.x;
    loop {
        if (i >= n) { break; }
        gray[i] = wr * r[i] + wg * g[i] + wb * b[i];
        if (step >= n - i) { break; }
        i += step;
    }
}
