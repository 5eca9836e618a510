// out[i] = 2 * x[i], WRONG for the spec that declares it: guarded, but no grid-stride loop,
// so a grid smaller than n / workgroup size leaves the tail unwritten.

@id(0) override block_x: u32 = 64u;
@id(1) override block_y: u32 = 1u;
@id(2) override block_z: u32 = 1u;

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> dst: array<f32>;

struct Params { n: vec2<u32> }  // the u64 n, low word first
@group(0) @binding(2) var<uniform> params: Params;

@compute @workgroup_size(block_x, block_y, block_z)
fn main(@builtin(workgroup_id) group: vec3<u32>, @builtin(local_invocation_id) local: vec3<u32>) {
    let n = select(params.n.x, 0xffffffffu, params.n.y != 0u);
    let i = group.x * block_x + local.x;
    if (i < n) {
        dst[i] = 2.0 * x[i];
    }
}
