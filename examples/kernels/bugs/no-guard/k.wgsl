// y[i] = 2 * x[i], one element per invocation (grid = "data").
// BUG: no `if (i < n)`: invocations of the last workgroup with i >= n read x and write y past
// the end. (WebGPU checks every index against the binding: those accesses are clamped or
// dropped.)

@id(0) override block_x: u32 = 64u;
@id(1) override block_y: u32 = 1u;
@id(2) override block_z: u32 = 1u;

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;

// The u64 n as two 32-bit words, low first: declared, and never used (that is the bug).
struct Params { n: vec2<u32> }
@group(0) @binding(2) var<uniform> params: Params;

@compute @workgroup_size(block_x, block_y, block_z)
fn main(@builtin(workgroup_id) group: vec3<u32>, @builtin(local_invocation_id) local: vec3<u32>) {
    let i = group.x * block_x + local.x;
    y[i] = 2.0 * x[i];  // BUG: unguarded
}
