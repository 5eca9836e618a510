// Grayscale conversion of three planar f32 channels, the WebGPU twin of the seed's CUDA kernel
// (shaders/grayscale.comp for Vulkan). Built at run time by wgpu (naga), no tool needed.
//
// The program contract for WGSL (crates/core's program.rs): buffers at @group(0) @binding(i)
// in argument order, the scalars one uniform struct at the binding after the last buffer,
// a u64 as vec2<u32> (low word first), and the workgroup size the override constants
// @id(0), @id(1), @id(2), so that one module serves every block size the sweep creates.

@id(0) override block_x: u32 = 64u;
@id(1) override block_y: u32 = 1u;
@id(2) override block_z: u32 = 1u;

@group(0) @binding(0) var<storage, read> r: array<f32>;
@group(0) @binding(1) var<storage, read> g: array<f32>;
@group(0) @binding(2) var<storage, read> b: array<f32>;
@group(0) @binding(3) var<storage, read_write> gray: array<f32>;

// The pixel count, the built-in's u64 `n`. The high word is 0 whenever WebGPU can hold the
// frame: maxStorageBufferBindingSize keeps a plane of f32 under 2^32 pixels.
struct Params { n: vec2<u32> }
@group(0) @binding(4) var<uniform> params: Params;

@compute @workgroup_size(block_x, block_y, block_z)
fn main(@builtin(workgroup_id) group: vec3<u32>, @builtin(local_invocation_id) local: vec3<u32>,
        @builtin(num_workgroups) groups: vec3<u32>) {
    let n = params.n.x;
    // Grid-stride loop, as in the seed: correct for any grid and block size. Only x indexes;
    // invocations with y or z above 0 repeat x's work. The host refuses a launch whose
    // grid * block_x exceeds 2^32 - 1, so neither the start nor the step wraps.
    let step = groups.x * block_x;
    var i = group.x * block_x + local.x;
    loop {
        if (i >= n) { break; }
        gray[i] = 0.299 * r[i] + 0.587 * g[i] + 0.114 * b[i];
        // Checked before the add: i + step would reach n, or wrap past 2^32 back below n.
        if (step >= n - i) { break; }
        i += step;
    }
}
