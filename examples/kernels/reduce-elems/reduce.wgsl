// partials[workgroup] = the sum of this workgroup's share of in[0..n): each pass adds ELEMS
// elements a grid apart, then a tree in workgroup memory (override constant 3, bytes).
// ELEMS comes from the tune, as a define (-DELEMS=4) that the backend appends as
// `const ELEMS = 4;`: WGSL has no #ifndef, so the source has no default and needs the tune.

@id(0) override block_x: u32 = 64u;
@id(1) override block_y: u32 = 1u;
@id(2) override block_z: u32 = 1u;
@id(3) override shared_bytes: u32 = 4u;
var<workgroup> scratch: array<f32, max(shared_bytes / 4u, 1u)>;

@group(0) @binding(0) var<storage, read> src: array<f32>;
@group(0) @binding(1) var<storage, read_write> partials: array<f32>;

struct Params { n: vec2<u32> }  // the u64 n, low word first
@group(0) @binding(2) var<uniform> params: Params;

@compute @workgroup_size(block_x, block_y, block_z)
fn main(@builtin(workgroup_id) group: vec3<u32>, @builtin(local_invocation_id) local: vec3<u32>,
        @builtin(num_workgroups) groups: vec3<u32>) {
    let n = select(params.n.x, 0xffffffffu, params.n.y != 0u);
    let tid = local.x;
    let step = groups.x * block_x;
    let elems = u32(ELEMS);
    var acc = 0.0;
    var i = group.x * block_x + tid;
    loop {
        if (i >= n) { break; }
        for (var e = 0u; e < elems; e++) {
            // e * step below n - i: in range, and i + e * step cannot wrap past 2^32.
            if (e * step < n - i) {
                acc += src[i + e * step];
            }
        }
        if (step * elems >= n - i) { break; }
        i += step * elems;
    }
    scratch[tid] = acc;
    workgroupBarrier();
    var live = block_x;
    while (live > 1u) {
        let upper = (live + 1u) / 2u;
        if (tid < live - upper) {
            scratch[tid] += scratch[tid + upper];
        }
        workgroupBarrier();
        live = upper;
    }
    if (tid == 0u) {
        partials[group.x] = scratch[0];
    }
}
