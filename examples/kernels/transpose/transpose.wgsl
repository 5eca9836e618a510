// out[x][y] = in[y][x] for a width x height row-major matrix, through a workgroup tile.
// The workgroup is square (block_x == block_y <= 32); the spec lists the sizes it takes.
// The loads and stores are guarded, the barrier is not: every invocation reaches it.

@id(0) override block_x: u32 = 16u;
@id(1) override block_y: u32 = 16u;
@id(2) override block_z: u32 = 1u;

@group(0) @binding(0) var<storage, read> src: array<f32>;
@group(0) @binding(1) var<storage, read_write> dst: array<f32>;

struct Params {
    width: u32,
    height: u32,
}
@group(0) @binding(2) var<uniform> params: Params;

const TILE_MAX = 32u;
var<workgroup> tile: array<array<f32, TILE_MAX + 1u>, TILE_MAX>;

@compute @workgroup_size(block_x, block_y, block_z)
fn main(@builtin(workgroup_id) group: vec3<u32>, @builtin(local_invocation_id) l: vec3<u32>) {
    let t = block_x;
    let x = group.x * t + l.x;
    let y = group.y * t + l.y;
    if (x < params.width && y < params.height) {
        tile[l.y][l.x] = src[y * params.width + x];
    }
    workgroupBarrier();
    let ox = group.y * t + l.x;
    let oy = group.x * t + l.y;
    if (ox < params.height && oy < params.width) {
        dst[oy * params.height + ox] = tile[l.x][l.y];
    }
}
