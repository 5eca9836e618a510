// The lab's 2-D kernel (shaders/grayscale_2d.comp): the frame as width x height, a
// grid-stride loop in x and in y. The WGSL contract: shaders/wgsl/grayscale.wgsl.

@id(0) override block_x: u32 = 8u;
@id(1) override block_y: u32 = 8u;
@id(2) override block_z: u32 = 1u;

@group(0) @binding(0) var<storage, read> r: array<f32>;
@group(0) @binding(1) var<storage, read> g: array<f32>;
@group(0) @binding(2) var<storage, read> b: array<f32>;
@group(0) @binding(3) var<storage, read_write> gray: array<f32>;

struct Params { width: u32, height: u32 }
@group(0) @binding(4) var<uniform> params: Params;

@compute @workgroup_size(block_x, block_y, block_z)
fn main(@builtin(workgroup_id) group: vec3<u32>, @builtin(local_invocation_id) local: vec3<u32>,
        @builtin(num_workgroups) groups: vec3<u32>) {
    let width = params.width;
    let height = params.height;
    // The host keeps count * size below 2^32 in each dimension, so neither start nor step wraps.
    let step_x = groups.x * block_x;
    let step_y = groups.y * block_y;
    var y = group.y * block_y + local.y;
    loop {
        if (y >= height) { break; }
        let row = y * width;
        var x = group.x * block_x + local.x;
        loop {
            if (x >= width) { break; }
            gray[row + x] = 0.299 * r[row + x] + 0.587 * g[row + x] + 0.114 * b[row + x];
            if (step_x >= width - x) { break; }
            x += step_x;
        }
        if (step_y >= height - y) { break; }
        y += step_y;
    }
}
