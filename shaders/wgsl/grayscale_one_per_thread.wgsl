// One pixel per invocation with an `i < n` guard (shaders/grayscale_one_per_thread.comp):
// correct only when grid * block >= n. The WGSL contract: shaders/wgsl/grayscale.wgsl.

@id(0) override block_x: u32 = 64u;
@id(1) override block_y: u32 = 1u;
@id(2) override block_z: u32 = 1u;

@group(0) @binding(0) var<storage, read> r: array<f32>;
@group(0) @binding(1) var<storage, read> g: array<f32>;
@group(0) @binding(2) var<storage, read> b: array<f32>;
@group(0) @binding(3) var<storage, read_write> gray: array<f32>;

struct Params { n: vec2<u32> }
@group(0) @binding(4) var<uniform> params: Params;

@compute @workgroup_size(block_x, block_y, block_z)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    // The whole u64 compared: with a high word, every 32-bit index is below n.
    let i = id.x;
    if (params.n.y != 0u || i < params.n.x) {
        gray[i] = 0.299 * r[i] + 0.587 * g[i] + 0.114 * b[i];
    }
}
