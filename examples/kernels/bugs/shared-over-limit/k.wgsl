// y[i] = x[i] * table[i % 16384]: each workgroup stages the whole table in workgroup memory,
// waits at a barrier every invocation reaches, then runs a grid-stride loop over y.
// BUG: 16384 floats = 64 KiB of workgroup memory, over maxComputeWorkgroupStorageSize on most
// devices (WebGPU guarantees 16 KiB; lavapipe has 32 KiB).

@id(0) override block_x: u32 = 64u;
@id(1) override block_y: u32 = 1u;
@id(2) override block_z: u32 = 1u;

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read> table: array<f32>;
@group(0) @binding(2) var<storage, read_write> y: array<f32>;

struct Params { n: vec2<u32> }  // the u64 n, low word first
@group(0) @binding(3) var<uniform> params: Params;

const TABLE = 16384u;
var<workgroup> big: array<f32, TABLE>;  // BUG: 64 KiB

@compute @workgroup_size(block_x, block_y, block_z)
fn main(@builtin(workgroup_id) group: vec3<u32>, @builtin(local_invocation_id) local: vec3<u32>,
        @builtin(num_workgroups) groups: vec3<u32>) {
    let n = select(params.n.x, 0xffffffffu, params.n.y != 0u);
    for (var j = local.x; j < TABLE; j += block_x) {
        big[j] = table[j];
    }
    workgroupBarrier();
    let step = groups.x * block_x;
    var i = group.x * block_x + local.x;
    loop {
        if (i >= n) { break; }
        y[i] = x[i] * big[i % TABLE];
        if (step >= n - i) { break; }  // i + step would reach n or wrap past 2^32
        i += step;
    }
}
