// y[i] = tile[tid] + tile[tid + size], the tile sized by override constant 3 (bytes:
// 2 x workgroup floats); the upper half was meant to hold a second input.
// BUG: only tile[0 .. size) is ever written; tile[tid + size] is uninitialised. (WebGPU
// zero-fills workgroup memory; blocksweep's pipelines turn that off, as the other APIs have it.)

@id(0) override block_x: u32 = 64u;
@id(1) override block_y: u32 = 1u;
@id(2) override block_z: u32 = 1u;
@id(3) override shared_bytes: u32 = 8u;
var<workgroup> tile: array<f32, max(shared_bytes / 4u, 1u)>;

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;

struct Params { n: vec2<u32> }  // the u64 n, low word first
@group(0) @binding(2) var<uniform> params: Params;

@compute @workgroup_size(block_x, block_y, block_z)
fn main(@builtin(workgroup_id) group: vec3<u32>, @builtin(local_invocation_id) local: vec3<u32>) {
    let n = select(params.n.x, 0xffffffffu, params.n.y != 0u);
    let tid = local.x;
    let size = block_x;
    let i = group.x * size + tid;
    if (i < n) {
        tile[tid] = x[i];
    }
    workgroupBarrier();  // every invocation reaches it: the barrier is not the bug
    if (i < n) {
        y[i] = tile[tid] + tile[tid + size];  // BUG: no invocation wrote this slot
    }
}
