// The register-heavy grayscale (shaders/grayscale_registers.comp): the grid-stride loop plus a
// chain of 96 values per pixel made first to last and consumed last to first, so the compiler
// needs about 96 more registers. (h | 1) is odd and salt is 0, so every pixel gets its
// grayscale value, but the compiler cannot know that.

@id(0) override block_x: u32 = 64u;
@id(1) override block_y: u32 = 1u;
@id(2) override block_z: u32 = 1u;

const CHAIN: i32 = 96;

@group(0) @binding(0) var<storage, read> r: array<f32>;
@group(0) @binding(1) var<storage, read> g: array<f32>;
@group(0) @binding(2) var<storage, read> b: array<f32>;
@group(0) @binding(3) var<storage, read_write> gray: array<f32>;

struct Params { n: vec2<u32>, salt: u32 }
@group(0) @binding(4) var<uniform> params: Params;

@compute @workgroup_size(block_x, block_y, block_z)
fn main(@builtin(workgroup_id) group: vec3<u32>, @builtin(local_invocation_id) local: vec3<u32>,
        @builtin(num_workgroups) groups: vec3<u32>) {
    let n = params.n.x;
    let salt = params.salt;
    let step = groups.x * block_x;
    var i = group.x * block_x + local.x;
    loop {
        if (i >= n) { break; }
        let value = 0.299 * r[i] + 0.587 * g[i] + 0.114 * b[i];
        var v: array<u32, CHAIN>;
        v[0] = bitcast<u32>(value) ^ salt;
        for (var k = 1; k < CHAIN; k++) {
            v[k] = v[k - 1] * 0x9E3779B1u + u32(k);
        }
        var h = salt;
        for (var k = CHAIN - 1; k >= 0; k--) {
            h = (h ^ v[k]) * 0x85EBCA6Bu;
        }
        gray[i] = select(value, 0.0, (h | 1u) == salt);
        if (step >= n - i) { break; }
        i += step;
    }
}
