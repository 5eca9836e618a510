// out[y][x] = in[y][x] + x for a width x height row-major image, one element per invocation.
// BUG: the guard tests the flat index. An invocation at (x >= width, y) has the flat index of
// (x - width, y + 1), passes, and overwrites that element with a value for a column that
// does not exist. The right guard is `x < width && y < height`.

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

@compute @workgroup_size(block_x, block_y, block_z)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    let x = id.x;
    let y = id.y;
    let idx = y * params.width + x;
    if (idx < params.width * params.height) {  // BUG: the flat index, not x and y
        dst[idx] = src[idx] + f32(x);
    }
}
