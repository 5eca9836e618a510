// y[i] = 2 * x[i] for i < n, a grid-stride loop (correct for any grid and workgroup)...
// BUG: ...except that i == 0 also stores to y[1u << 30u], 4 GiB past the start of y.
// (WebGPU checks every index against the binding: the store is clamped or dropped.)

@id(0) override block_x: u32 = 64u;
@id(1) override block_y: u32 = 1u;
@id(2) override block_z: u32 = 1u;

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;

struct Params { n: vec2<u32> }  // the u64 n, low word first
@group(0) @binding(2) var<uniform> params: Params;

@compute @workgroup_size(block_x, block_y, block_z)
fn main(@builtin(workgroup_id) group: vec3<u32>, @builtin(local_invocation_id) local: vec3<u32>,
        @builtin(num_workgroups) groups: vec3<u32>) {
    let n = select(params.n.x, 0xffffffffu, params.n.y != 0u);
    let step = groups.x * block_x;
    var i = group.x * block_x + local.x;
    loop {
        if (i >= n) { break; }
        y[i] = 2.0 * x[i];
        if (i == 0u) {
            y[1u << 30u] = y[0];  // BUG: far out of bounds
        }
        if (step >= n - i) { break; }  // i + step would reach n or wrap past 2^32
        i += step;
    }
}
