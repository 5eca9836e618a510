// y[i] = x[i] + x[i + 1] (the last element doubled), each workgroup staging x in a workgroup
// tile; an invocation takes its right neighbour from the tile, or from x at the edge.
// BUG: no barrier between the store to tile[tid] and the read of tile[tid + 1].

@id(0) override block_x: u32 = 64u;
@id(1) override block_y: u32 = 1u;
@id(2) override block_z: u32 = 1u;

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;

struct Params { n: vec2<u32> }  // the u64 n, low word first
@group(0) @binding(2) var<uniform> params: Params;

const TILE = 1024u;  // the largest workgroup the sweep launches
var<workgroup> tile: array<f32, TILE>;

@compute @workgroup_size(block_x, block_y, block_z)
fn main(@builtin(workgroup_id) group: vec3<u32>, @builtin(local_invocation_id) local: vec3<u32>) {
    let n = select(params.n.x, 0xffffffffu, params.n.y != 0u);
    let tid = local.x;
    let i = group.x * block_x + tid;
    if (i < n) {
        tile[tid] = x[i];
    }
    // BUG: workgroupBarrier(); belongs here
    if (i < n) {
        let r = select(i, i + 1u, i + 1u < n);
        var right = x[r];
        if (tid + 1u < block_x && i + 1u < n) {
            right = tile[tid + 1u];
        }
        y[i] = tile[tid] + right;
    }
}
