// y[i] = x[i] / 2^k with k = i % 8, the halvings applied two at a time.
// BUG: `while (k != 0u) ... k -= 2u` never ends for an odd k (1, 0xffffffff, 0xfffffffd, ...).
// The store to y inside the loop gives every pass a visible effect (WGSL has no volatile).
// (lavapipe ends any loop after 65535 passes, so there the dispatch may finish.)

@id(0) override block_x: u32 = 64u;
@id(1) override block_y: u32 = 1u;
@id(2) override block_z: u32 = 1u;

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;

struct Params { n: vec2<u32> }  // the u64 n, low word first
@group(0) @binding(2) var<uniform> params: Params;

@compute @workgroup_size(block_x, block_y, block_z)
fn main(@builtin(workgroup_id) group: vec3<u32>, @builtin(local_invocation_id) local: vec3<u32>) {
    let n = select(params.n.x, 0xffffffffu, params.n.y != 0u);
    let i = group.x * block_x + local.x;
    if (i < n) {
        var v = x[i];
        var k = i % 8u;
        y[i] = v;
        while (k != 0u) {  // BUG: misses 0 when k is odd
            v *= 0.25;
            y[i] = v;
            k -= 2u;
        }
    }
}
