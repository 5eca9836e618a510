// The copy ceiling's shader (shaders/copy.comp for Vulkan): a grid-stride vec4<u32> copy on
// the shader cores. WebGPU's copyBufferToBuffer may run on a copy engine, which on an H200
// moves a quarter of what the SMs do (crates/vulkan's copy selection found it).

@id(0) override block_x: u32 = 256u;

@group(0) @binding(0) var<storage, read> src: array<vec4<u32>>;
@group(0) @binding(1) var<storage, read_write> dst: array<vec4<u32>>;

struct Params { n: u32 }
@group(0) @binding(2) var<uniform> params: Params;

@compute @workgroup_size(block_x)
fn main(@builtin(workgroup_id) group: vec3<u32>, @builtin(local_invocation_id) local: vec3<u32>,
        @builtin(num_workgroups) groups: vec3<u32>) {
    let n = params.n;
    let step = groups.x * block_x;
    var i = group.x * block_x + local.x;
    loop {
        if (i >= n) { break; }
        dst[i] = src[i];
        if (step >= n - i) { break; }
        i += step;
    }
}
