//! What a failed row's message adds, through the real binary on the CPU drivers: the spec's
//! argument order where an output was never written and an input changed, and llvmpipe's cap
//! on loop iterations only where a loop of the kernel could reach it (the INNER_LOOP case in
//! bug_zoo.rs is one that can).

use crate::kernel_support::{result, sweep, write};
use crate::support::{available, both, read_json, scratch, stderr};

const TWICE_CL: &str = "__kernel void twice(__global const float* x, __global float* y, \
    const uint n) {
    for (uint i = get_global_id(0); i < n; i += get_global_size(0)) y[i] = 2.0f * x[i];
}
";

/// `body` in a shader of x (binding 0), y (binding 1) and n (a push constant).
fn comp(body: &str) -> String {
    format!(
        "#version 450
layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;
layout(std430, binding = 0) readonly buffer X {{ float x[]; }};
layout(std430, binding = 1) buffer Y {{ float y[]; }};
layout(push_constant) uniform P {{ uint n; }};
void main() {{
    uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    {body}
}}
"
    )
}

const X: &str = "[[args]]\nbuffer = \"f32\"\nname = \"x\"\nelements = \"n\"\ninit = \"ramp\"\n";
const Y: &str = "[[args]]\nbuffer = \"f32\"\nname = \"y\"\nelements = \"n\"\nwritten = true\n";

/// A spec of n elements with `sources` and `args` (then the scalar n).
fn spec(dir: &std::path::Path, n: u64, sources: &str, args: &[&str]) -> std::path::PathBuf {
    let text = format!(
        "name = \"twice\"\nwork = \"n\"\nsizes = {{ n = {n} }}\n[sources]\n{sources}\n{}\
         [[args]]\nscalar = \"u32\"\nname = \"n\"\nvalue = \"n\"\n",
        args.join("")
    );
    write(dir, "kernel.toml", &text)
}

/// x and y swapped in the spec: the kernel writes the spec's x and never y. The message says
/// the order may be wrong and names both (before: only 'y' unwritten, and on llvmpipe a note
/// about 65535 loop iterations that no loop of this kernel comes near).
#[test]
fn swapped_buffers_are_told_as_a_possible_argument_order() {
    if !both() {
        return;
    }
    let dir = scratch("hint-swapped");
    write(&dir, "twice.cl", TWICE_CL);
    let body = "for (uint i = gl_GlobalInvocationID.x; i < n; i += step) y[i] = 2.0 * x[i];";
    write(&dir, "twice.comp", &comp(body));
    let sources = "opencl = { file = \"twice.cl\", entry = \"twice\" }\n\
                   vulkan = { file = \"twice.comp\" }";
    let spec = spec(&dir, 4096, sources, &[Y, X]);
    let json = dir.join("r.json");
    let out = sweep(&spec, &json, &["--blocks", "64"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    for api in ["Vulkan", "OpenCL"] {
        let line = (err.lines())
            .find(|l| l.starts_with(&format!("blocksweep: {api}: ")))
            .unwrap_or_else(|| panic!("{api} not named: {err}"));
        for needle in [
            "left 4096 of 4096 elements of 'y' unwritten",
            "and 'x', which the spec declares read-only, changed",
            "the spec's [[args]] order may not be the kernel's parameters'",
            "('y' is args[0], 'x' args[1]",
        ] {
            assert!(line.contains(needle), "{needle:?} not in {line}");
        }
        assert!(!line.contains("65535"), "{line}");
        crate::kernel_support::docs_quote(line, "left 4096 of 4096", "parameter list)");
    }
}

/// A port that stops after 256 passes per thread and drops the tail: its message is about the
/// elements it left, with no note of llvmpipe's 65535-iteration cap, which no loop of it nears.
#[test]
fn no_loop_cap_note_where_no_loop_comes_near_it() {
    if !available("vulkan") {
        return;
    }
    let dir = scratch("hint-no-cap");
    let body = "uint i = gl_GlobalInvocationID.x;
    for (uint k = 0u; k < 256u && i < n; k++, i += step) y[i] = 2.0 * x[i];";
    write(&dir, "tuned.comp", &comp(body));
    let spec = spec(&dir, 65536, "vulkan = { file = \"tuned.comp\" }", &[X, Y]);
    let json = dir.join("r.json");
    let out = sweep(&spec, &json, &["--blocks", "64", "--grid", "2"]);
    let err = stderr(&out);
    let report = read_json(&json);
    let device = result(&report, "vulkan")["device"]["name"].as_str();
    if !device.is_some_and(|n| n.starts_with("llvmpipe")) {
        return; // Another driver has no cap: nothing to note either way.
    }
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("left 32768 of 65536 elements of 'y' unwritten"),
        "{err}"
    );
    assert!(!err.contains("65535"), "{err}");
}
