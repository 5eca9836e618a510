// y[i] = k * x[i] for i < n, a grid-stride loop.
// BUG: the spec's n is a u64 (8 bytes, at offset 8 after k and 4 bytes of padding), but the
// uniform struct below declares `n: u32`: 4 bytes at offset 4. WebGPU has no push constants;
// its scalars are this uniform block, and the same mismatch reads n from the padding.
// Fix: `n: vec2<u32>` (low word first).

@id(0) override block_x: u32 = 64u;
@id(1) override block_y: u32 = 1u;
@id(2) override block_z: u32 = 1u;

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;

struct Params {
    k: f32,
    n: u32,  // BUG: the spec's n is a u64
}
@group(0) @binding(2) var<uniform> params: Params;

@compute @workgroup_size(block_x, block_y, block_z)
fn main(@builtin(workgroup_id) group: vec3<u32>, @builtin(local_invocation_id) local: vec3<u32>,
        @builtin(num_workgroups) groups: vec3<u32>) {
    let n = params.n;
    let step = groups.x * block_x;
    var i = group.x * block_x + local.x;
    loop {
        if (i >= n) { break; }
        y[i] = params.k * x[i];
        if (step >= n - i) { break; }  // i + step would reach n or wrap past 2^32
        i += step;
    }
}
