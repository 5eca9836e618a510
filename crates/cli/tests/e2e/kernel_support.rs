//! What the kernel end-to-end tests share: scratch directories with the saxpy sources, the
//! sweep they run, readers of its JSON report, the bad-input and one-API-fails checks, and
//! the sources of the kernels that outlast the deadline.

use super::support::{available, bad_input, blocksweep, read_json, scratch, stderr};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Output;

/// The repository root (examples/ lives there).
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

pub fn example(name: &str) -> PathBuf {
    root()
        .join("examples/kernels")
        .join(name)
        .join("kernel.toml")
}

/// A fresh directory for one test, with the saxpy example's sources copied into it.
pub fn saxpy_scratch(test: &str) -> PathBuf {
    let dir = scratch(&format!("kernel-{test}"));
    for f in ["saxpy.cl", "saxpy.comp", "saxpy.cu", "saxpy.wgsl"] {
        std::fs::copy(root().join("examples/kernels/saxpy").join(f), dir.join(f)).unwrap();
    }
    dir
}

pub fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

/// The saxpy spec with `edit` applied (a source swapped, a key added, ...), in `dir`.
pub fn saxpy_spec(dir: &Path, name: &str, edit: impl Fn(String) -> String) -> PathBuf {
    let text = std::fs::read_to_string(example("saxpy")).unwrap();
    write(dir, name, &edit(text))
}

/// `sweep --kernel SPEC` small and quick, JSON to `json`, plus `extra`.
pub fn sweep(spec: &Path, json: &Path, extra: &[&str]) -> Output {
    sweep_command(spec, json, extra)
        .output()
        .expect("run blocksweep")
}

/// The command [`sweep`] runs, for a caller that adds to it (an environment of its own).
pub fn sweep_command(spec: &Path, json: &Path, extra: &[&str]) -> assert_cmd::Command {
    let mut c = blocksweep();
    c.arg("sweep")
        .arg("--kernel")
        .arg(spec)
        .args(["--reps", "2", "--warmups", "1", "-o"])
        .arg(json)
        .args(extra);
    c
}

/// The result of `api` in a sweep report.
pub fn result<'a>(report: &'a Value, api: &str) -> &'a Value {
    report["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["api"] == api)
        .unwrap_or_else(|| panic!("no {api} result in {report}"))
}

/// Asserts that `api` measured rows, every one that ran verified; returns (block, grid) per
/// row.
pub fn verified_rows(report: &Value, api: &str) -> Vec<(String, u64)> {
    let r = result(report, api);
    assert!(r["error"].is_null(), "{api}: {}", r["error"]);
    let rows = r["rows"].as_array().unwrap();
    assert!(!rows.is_empty(), "{api} has no rows");
    for row in rows {
        if row["skipped"].is_null() {
            assert_eq!(row["verified"], true, "{api}: unverified row {row}");
        }
    }
    assert!(
        rows.iter().any(|r| r["verified"] == true),
        "{api}: none ran"
    );
    rows.iter()
        .map(|row| (row["block"].to_string(), row["grid"].as_u64().unwrap()))
        .collect()
}

/// Rows measured on both APIs (and WebGPU's, where it is here), no failure: each API was
/// compared with the first at every row (a difference would have stopped it, as
/// `cross_api_difference_is_caught` shows).
pub fn assert_clean_on_both(out: &Output, json: &Path) -> Value {
    assert_eq!(out.status.code(), Some(0), "{}", stderr(out));
    let report = read_json(json);
    let webgpu = available("webgpu").then_some("webgpu");
    for a in ["vulkan", "opencl"].into_iter().chain(webgpu) {
        verified_rows(&report, a);
        let program = &result(&report, a)["program"];
        assert!(program["name"].is_string(), "{a}: no program: {program}");
        assert!(program["source"].as_str().is_some_and(|s| !s.is_empty()));
    }
    assert_eq!(report["failures"], serde_json::json!([]), "{report}");
    assert_eq!(report["answer"]["stopped"], serde_json::json!([]));
    report
}

/// Runs `sweep --kernel spec` with `size` and `-o`, expecting exit 2, one line naming the
/// file and `key`, and no report written.
pub fn rejected(dir: &Path, spec: &Path, size: Option<&str>, key: &str) {
    let json = dir.join("never.json");
    let spec = spec.to_str().unwrap();
    let json_arg = json.to_str().unwrap();
    let mut args = vec!["sweep", "--kernel", spec, "-o", json_arg];
    if let Some(s) = size {
        args.extend(["--size", s]);
    }
    let file = Path::new(spec).file_name().unwrap().to_str().unwrap();
    bad_input(&args, &format!("{file}: "));
    bad_input(&args, key);
    assert!(!json.exists(), "{spec}: a report was written");
}

/// Sweeps `spec` at 65536 elements, expecting exit 1: `failing` stopped with a message
/// containing every needle, `other` measured and verified its rows.
pub fn one_api_fails(spec: &Path, failing: &str, other: &str, needles: &[&str]) -> String {
    let json = spec.with_extension("json");
    let out = sweep(spec, &json, &["--size", "65536", "--blocks", "64,128"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    let report = read_json(&json);
    let message = result(&report, failing)["error"]
        .as_str()
        .unwrap_or_else(|| panic!("{failing} did not fail: {report}"))
        .to_string();
    for n in needles {
        assert!(message.contains(n), "{failing}: {n:?} not in {message}");
        assert!(err.contains(n), "stderr lacks {n:?}: {err}");
    }
    assert_eq!(verified_rows(&report, other).len(), 2);
    message
}

/// The saxpy example's source `file` with each (from, to) swapped, written as `new_name`.
pub fn edited_source(dir: &Path, file: &str, new_name: &str, swaps: &[(&str, &str)]) {
    let mut text = std::fs::read_to_string(dir.join(file)).unwrap();
    for (from, to) in swaps {
        assert!(text.contains(from), "{file} lacks {from:?}");
        text = text.replace(from, to);
    }
    std::fs::write(dir.join(new_name), text).unwrap();
}

/// A flag buffer of zeros, an output and its length: the spinning kernel waits on the flag.
pub const SPIN_SPEC: &str = r#"
name = "spin"
work = "n"
sizes = { n = 4096 }
[sources]
opencl = { file = "spin.cl", entry = "fill" }
vulkan = { file = "fill.comp" }
[[args]]
buffer = "u32"
name = "flag"
elements = "1"
init = "zeros"
[[args]]
buffer = "f32"
name = "out"
elements = "n"
written = true
[[args]]
scalar = "u64"
name = "n"
value = "n"
"#;

pub const SPIN_CL: &str = r#"
// Never finishes: waits for a flag that stays zero (the compiler cannot know it does).
__kernel void fill(__global const uint* flag, __global float* out, const ulong n) {
    while (*(volatile __global const uint*)flag == 0u) {}
    out[get_global_id(0)] = 1.0f;
}
"#;

pub const FILL_COMP: &str = r#"#version 450
layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;
layout(std430, set = 0, binding = 0) readonly buffer Flag { uint flag[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Out { float dst[]; };
layout(push_constant) uniform Params { uvec2 n; } params;
void main() {
    const uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    for (uint i = gl_GlobalInvocationID.x; i < params.n.x; i += step) {
        dst[i] = 1.0 + float(flag[0]);
    }
}
"#;

/// A Vulkan kernel that runs long (2^20 invocations of 60000 turns) but ends.
pub const LONG_SPEC: &str = r#"
name = "long"
work = "n"
sizes = { n = 1048576 }
[sources]
vulkan = { file = "spin.comp" }
[[args]]
buffer = "u32"
name = "out"
elements = "n"
written = true
[[args]]
scalar = "u32"
name = "n"
value = "n"
[launch]
grid = "data"
"#;

pub const LONG_COMP: &str = r#"#version 450
layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;
layout(std430, set = 0, binding = 0) buffer Out { uint o[]; };
layout(push_constant) uniform P { uint n; } p;
void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i >= p.n) return;
    uint acc = i;
    for (uint k = 0u; k < 60000u; k++) { acc = acc * 1664525u + 1013904223u; }
    o[i] = acc;
}
"#;

/// Asserts that docs/kernels.md quotes the part of `line` from `from` up to and including
/// `to` (wrapped lines read whole): the docs' quoted messages are the binary's own.
#[allow(dead_code)] // reference_e2e and hints_e2e use it; kernel_e2e does not
pub fn docs_quote(line: &str, from: &str, to: &str) {
    let start = line
        .find(from)
        .unwrap_or_else(|| panic!("{from:?} not in {line}"));
    let end = line[start..]
        .find(to)
        .unwrap_or_else(|| panic!("{to:?} not in {line}"));
    let said = &line[start..start + end + to.len()];
    let docs = std::fs::read_to_string(root().join("docs/kernels.md")).unwrap();
    let docs = super::support::flat(&docs.replace('`', ""));
    assert!(
        docs.contains(said),
        "docs/kernels.md does not quote {said:?}"
    );
}
