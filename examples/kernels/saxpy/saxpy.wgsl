// y = a * x + y over n elements, a grid-stride loop (correct for any grid and block).
// The workgroup size comes from the override constants 0-2, set per launch.

@id(0) override block_x: u32 = 64u;
@id(1) override block_y: u32 = 1u;
@id(2) override block_z: u32 = 1u;

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;

// The scalars in argument order, each aligned to its size: a at 0, the u64 n at 8 as two
// 32-bit words (low first). A storage buffer holds under 2^32 floats, so the low word is
// the count.
struct Params {
    a: f32,
    n: vec2<u32>,
}
@group(0) @binding(2) var<uniform> params: Params;

@compute @workgroup_size(block_x, block_y, block_z)
fn main(@builtin(workgroup_id) group: vec3<u32>, @builtin(local_invocation_id) local: vec3<u32>,
        @builtin(num_workgroups) groups: vec3<u32>) {
    let n = select(params.n.x, 0xffffffffu, params.n.y != 0u);
    let step = groups.x * block_x;
    var i = group.x * block_x + local.x;
    loop {
        if (i >= n) { break; }
        y[i] = fma(params.a, x[i], y[i]);
        if (step >= n - i) { break; }  // i + step would reach n or wrap past 2^32
        i += step;
    }
}
