//! What a user's kernel is compared with, through the real binary on the CPU drivers: a
//! reference file of the expected output (`reference = "y.npy"`), checked like another API's
//! output and the judge where the APIs disagree; and a first size whose row is the wrong one,
//! named as such rather than called "expected".

use crate::kernel_support::{result, sweep, write};
use crate::support::{both, read_json, scratch, stderr};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// y = 2 x over n elements in a grid-stride loop, with `bump` spliced in (a bug, or nothing).
const TWICE_CL: &str = "__kernel void twice(__global const float* x, __global float* y, \
    const uint n) {
    for (uint i = get_global_id(0); i < n; i += get_global_size(0)) {
        float v = 2.0f * x[i];
        BUMP
        y[i] = v;
    }
}
";

const TWICE_COMP: &str = "#version 450
layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) buffer Y { float y[]; };
layout(push_constant) uniform P { uint n; };
void main() {
    uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    for (uint i = gl_GlobalInvocationID.x; i < n; i += step) {
        float v = 2.0 * x[i];
        BUMP
        y[i] = v;
    }
}
";

/// A bug at block 16 only: every seventh element off by one there.
const AT_16_CL: &str = "if (get_local_size(0) == 16 && i % 7 == 3) v += 1.0f;";
const AT_16_COMP: &str = "if (gl_WorkGroupSize.x == 16u && i % 7u == 3u) v += 1.0;";

/// A spec of `twice` at n = 4096, x a ramp (so y = 2 i exactly), with `extra` in y's table.
fn twice(dir: &Path, cl_bump: &str, comp_bump: &str, extra: &str) -> PathBuf {
    write(dir, "twice.cl", &TWICE_CL.replace("BUMP", cl_bump));
    write(dir, "twice.comp", &TWICE_COMP.replace("BUMP", comp_bump));
    let spec = format!(
        "name = \"twice\"\nwork = \"n\"\nsizes = {{ n = 4096 }}\n\
         [sources]\nopencl = {{ file = \"twice.cl\", entry = \"twice\" }}\n\
         vulkan = {{ file = \"twice.comp\" }}\n\
         [[args]]\nbuffer = \"f32\"\nname = \"x\"\nelements = \"n\"\ninit = \"ramp\"\n\
         [[args]]\nbuffer = \"f32\"\nname = \"y\"\nelements = \"n\"\nwritten = true\n{extra}\n\
         [[args]]\nscalar = \"u32\"\nname = \"n\"\nvalue = \"n\"\n"
    );
    write(dir, "kernel.toml", &spec)
}

/// A `.npy` file (format 1.0) of `descr` elements and `shape`, holding `data`.
fn npy(path: &Path, descr: &str, shape: usize, data: &[u8]) {
    let mut h = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': ({shape},), }}");
    while !(10 + h.len() + 1).is_multiple_of(64) {
        h.push(' ');
    }
    h.push('\n');
    let mut out = b"\x93NUMPY\x01\x00".to_vec();
    out.extend((h.len() as u16).to_le_bytes());
    out.extend(h.as_bytes());
    out.extend(data);
    std::fs::write(path, out).unwrap();
}

/// y = 2 i for i < n, as f32 bytes, with element `off` (if any) one more.
fn expected(n: usize, off: Option<usize>) -> Vec<u8> {
    (0..n)
        .map(|i| 2.0 * i as f32 + if Some(i) == off { 1.0 } else { 0.0 })
        .flat_map(f32::to_le_bytes)
        .collect()
}

/// The failure line of `api` on stderr.
fn line_of<'a>(err: &'a str, api: &str) -> &'a str {
    err.lines()
        .find(|l| l.starts_with(&format!("blocksweep: {api}: ")))
        .unwrap_or_else(|| panic!("{api} not named: {err}"))
}

/// Each row of `api` as (block x, verified).
fn rows(report: &Value, api: &str) -> Vec<(u64, bool)> {
    let rows = result(report, api)["rows"].as_array().unwrap().clone();
    (rows.iter())
        .map(|r| (r["block"]["x"].as_u64().unwrap(), r["verified"] == true))
        .collect()
}

#[test]
fn a_reference_file_that_matches_is_checked_and_recorded() {
    if !both() {
        return;
    }
    let dir = scratch("reference-match");
    npy(&dir.join("y.npy"), "<f4", 4096, &expected(4096, None));
    let spec = twice(&dir, "", "", "reference = \"y.npy\"");
    let json = dir.join("r.json");
    let out = sweep(&spec, &json, &["--blocks", "16,64"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = std::fs::read_to_string(&json).unwrap();
    let report = crate::support::schemas::conforms("sweep", &text);
    for api in ["opencl", "vulkan"] {
        let program = &result(&report, api)["program"];
        let file = program["reference_files"]["y"].as_str().unwrap_or_default();
        assert!(file.ends_with("y.npy"), "{api}: {program}");
        let checked = program["checked"][0].as_str().unwrap();
        assert!(checked.contains("against the reference file"), "{checked}");
        assert_eq!(rows(&report, api), [(16, true), (64, true)], "{api}");
    }
}

/// Two ports that disagree, and a file that says which is right: the wrong one is named
/// against the file at its first row, the other keeps its verified rows (without the file,
/// both would be named and neither called right).
#[test]
fn the_reference_file_judges_two_apis_that_disagree() {
    if !both() {
        return;
    }
    let dir = scratch("reference-judge");
    npy(&dir.join("y.npy"), "<f4", 4096, &expected(4096, None));
    let spec = twice(&dir, "", "if (i == 5u) v += 1.0;", "reference = \"y.npy\"");
    let json = dir.join("r.json");
    let out = sweep(&spec, &json, &["--blocks", "16,64"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    let line = line_of(&err, "Vulkan");
    for needle in [
        "output 'y' at block 16, grid",
        "differs from the reference file",
        "y.npy",
        "element 5: expected 1e1",
        "Vulkan's port is the wrong one",
    ] {
        assert!(line.contains(needle), "{needle:?} not in {line}");
    }
    assert!(!err.contains("blocksweep: OpenCL: "), "{err}");
    crate::kernel_support::docs_quote(line, "y.npy: element 5", "at this launch");
    let report = read_json(&json);
    assert_eq!(rows(&report, "opencl"), [(16, true), (64, true)]);
}

#[test]
fn a_reference_file_of_another_type_or_length_is_bad_input() {
    if !both() {
        return;
    }
    let dir = scratch("reference-bad");
    npy(&dir.join("y.npy"), "<f8", 4096, &[0u8; 4096 * 8]);
    std::fs::write(dir.join("y.raw"), expected(4096, None)).unwrap();
    for (extra, size, needle) in [
        ("reference = \"y.npy\"", "4096", "args[1].reference: "),
        ("reference = \"y.raw\"", "2048", "y.raw: is 16384 bytes"),
    ] {
        let spec = twice(&dir, "", "", extra);
        let json = dir.join("never.json");
        let out = sweep(&spec, &json, &["--size", size]);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        assert!(
            err.contains("kernel.toml: ") && err.contains(needle),
            "{err}"
        );
        assert!(!json.exists());
    }
    let err = stderr(&sweep(
        &twice(&dir, "", "", "reference = \"y.npy\""),
        &dir.join("never.json"),
        &[],
    ));
    assert!(
        err.contains("holds '<f8' elements; the buffer is f32"),
        "{err}"
    );
}

/// A kernel wrong at block 16 alone, the first size: the rows after it agree with each other,
/// so the first row is named the wrong one (not called "expected"), loses its speed, and the
/// others keep theirs. Before, block 32 was reported as differing from block 16's "expected"
/// values, with a hint about grids that do not cover the work.
#[test]
fn a_first_size_wrong_on_its_own_is_named_not_called_expected() {
    if !both() {
        return;
    }
    let dir = scratch("reference-first-wrong");
    let spec = twice(&dir, AT_16_CL, AT_16_COMP, "");
    let json = dir.join("r.json");
    let out = sweep(&spec, &json, &["--blocks", "16,32,64,128"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    let report =
        crate::support::schemas::conforms("sweep", &std::fs::read_to_string(&json).unwrap());
    for (api, key) in [("Vulkan", "vulkan"), ("OpenCL", "opencl")] {
        let line = line_of(&err, api);
        for needle in [
            "output 'y' at block 16, grid",
            "differs from its outputs at blocks 32, 64 and 128, which agree with each other",
            "element 3: expected 6e0 (0x40c00000), got 7e0 (0x40e00000)",
            &format!("This row, {api}'s first size, is the wrong one"),
        ] {
            assert!(line.contains(needle), "{needle:?} not in {line}");
        }
        assert!(!line.contains("cover the work"), "{line}");
        if api == "Vulkan" {
            crate::kernel_support::docs_quote(
                line,
                "differs from its outputs",
                "compared with it:",
            );
        }
        let r = result(&report, key);
        assert_eq!(
            rows(&report, key),
            [(16, false), (32, true), (64, true), (128, true)],
            "{api}"
        );
        assert!(r["rows"][0]["of_best"].is_null(), "{}", r["rows"][0]);
        assert!(r["rows"][1]["of_best"].is_number(), "{}", r["rows"][1]);
    }
}

/// One row after the wrong first size is too few to outvote it, but another API that passed
/// agrees with that row: the first size is the wrong one.
#[test]
fn another_api_that_agrees_with_the_later_row_names_the_first_size_wrong() {
    if !both() {
        return;
    }
    let dir = scratch("reference-witness");
    let spec = twice(&dir, AT_16_CL, "", "");
    let json = dir.join("r.json");
    let out = sweep(&spec, &json, &["--blocks", "16,32"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    let line = line_of(&err, "OpenCL");
    for needle in [
        "output 'y' at block 16, grid",
        "differs from its output at block 32, which agrees with Vulkan's",
        "This row, OpenCL's first size, is the wrong one",
    ] {
        assert!(line.contains(needle), "{needle:?} not in {line}");
    }
    let report = read_json(&json);
    assert_eq!(rows(&report, "opencl"), [(16, false), (32, true)]);
    assert_eq!(rows(&report, "vulkan"), [(16, true), (32, true)]);
}

/// `--reference BUFFER=FILE` gives the file outside the spec (or replaces the spec's): checked
/// the same way; a buffer that is not a written one is bad input, one line.
#[test]
fn a_reference_file_from_the_command_line_is_checked_like_the_specs() {
    if !both() {
        return;
    }
    let dir = scratch("reference-flag");
    npy(&dir.join("off.npy"), "<f4", 4096, &expected(4096, Some(9)));
    let spec = twice(&dir, "", "", "");
    let json = dir.join("r.json");
    let given = format!("y={}", dir.join("off.npy").display());
    let out = sweep(&spec, &json, &["--blocks", "64", "--reference", &given]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    for api in ["Vulkan", "OpenCL"] {
        let line = line_of(&err, api);
        assert!(line.contains("differs from the reference file"), "{line}");
        assert!(
            line.contains("off.npy: element 9: expected 1.9e1"),
            "{line}"
        );
    }
    let out = sweep(
        &spec,
        &dir.join("never.json"),
        &["--reference", "x=off.npy"],
    );
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(
        err.contains("kernel.toml: --reference: 'x' is not a written buffer of this kernel (y)"),
        "{err}"
    );
    // A file that does not fit the buffer names the flag that gave it.
    let not_y = format!("y={}", spec.display());
    let out = sweep(&spec, &dir.join("never.json"), &["--reference", &not_y]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    let said = format!("kernel.toml: --reference: {}: is ", spec.display());
    assert!(err.contains(&said), "{said:?} not in {err}");
    assert!(err.contains("bytes of raw little-endian f32"), "{err}");
}

/// A run at sizes blocksweep chose (a CPU's cap on a sweep, validate's 4096) has buffers of
/// other lengths than the spec's reference files: the files are not used, and the run says
/// so, rather than refusing a spec that is right at its own sizes.
#[test]
fn a_reference_file_is_not_used_at_sizes_blocksweep_chose() {
    if !both() {
        return;
    }
    let dir = scratch("reference-capped");
    let n = (1usize << 20) + 4096;
    npy(&dir.join("y.npy"), "<f4", n, &expected(n, None));
    let spec = twice(&dir, "", "", "reference = \"y.npy\"");
    let text = std::fs::read_to_string(&spec).unwrap();
    std::fs::write(&spec, text.replace("n = 4096", &format!("n = {n}"))).unwrap();
    let json = dir.join("r.json");
    let out = sweep(&spec, &json, &["--blocks", "64"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    if err.contains("no GPU among the devices") {
        let note = format!(
            "blocksweep: the reference file of 'y' is not used at n=1048576, which blocksweep \
             chose: it holds the output at the spec's n={n} (--size for it)"
        );
        assert!(err.contains(&note), "{err}");
    }
    let out = crate::support::blocksweep()
        .args(["validate", "--kernel"])
        .arg(&spec)
        .output()
        .unwrap();
    let err = stderr(&out);
    assert_ne!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("the reference file of 'y' is not used at n=4096"),
        "{err}"
    );
}
