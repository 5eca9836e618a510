// y[i] = x[i - 4] + ... + x[i + 4] (indices clamped to the ends), each workgroup staging its
// stretch of x and a 4-element halo on each side in a workgroup tile, loaded by all invocations.
// BUG: `if (i >= n) { return; }` before the load and the barrier: in the last workgroup the
// invocations past n never reach workgroupBarrier() nor load their share of the tile, so the
// last outputs read slots nobody filled. Fix: no early return; guard the load and the store only.

@id(0) override block_x: u32 = 64u;
@id(1) override block_y: u32 = 1u;
@id(2) override block_z: u32 = 1u;

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;

struct Params { n: vec2<u32> }  // the u64 n, low word first
@group(0) @binding(2) var<uniform> params: Params;

const R = 4i;
const TILE = 1032u;  // the largest workgroup the sweep launches (1024), and the halo
var<workgroup> tile: array<f32, TILE>;

@compute @workgroup_size(block_x, block_y, block_z)
fn main(@builtin(workgroup_id) group: vec3<u32>, @builtin(local_invocation_id) local: vec3<u32>) {
    let n = select(params.n.x, 0xffffffffu, params.n.y != 0u);
    let tid = local.x;
    let size = block_x;
    let base = i32(group.x * size);
    let i = u32(base) + tid;
    if (i >= n) { return; }  // BUG: these invocations skip the barrier and their part of the load
    for (var j = tid; j < size + 2u * u32(R); j += size) {
        let g = clamp(base + i32(j) - R, 0i, i32(n) - 1i);
        tile[j] = x[g];
    }
    workgroupBarrier();
    var acc = 0.0;
    for (var k = 0i; k <= 2i * R; k++) { acc += tile[i32(tid) + k]; }
    y[i] = acc;
}
