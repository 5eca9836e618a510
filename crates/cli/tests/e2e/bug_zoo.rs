//! The bug zoo (examples/kernels/bugs/) through the real binary on the CPU drivers: every
//! kernel there has one porting bug in all its sources, and blocksweep must catch each one
//! by name, exit 1 (never by a signal, never a hang), and keep the rows of the APIs the bug
//! did not stop. What catches a bug depends on the driver (lavapipe drops a store past its
//! binding, so a store past the guard band shows nothing there; PoCL runs the kernel on the
//! host's heap, where the worker's crash catches it; WebGPU's bounds checks keep every access
//! inside its binding), so each case names the API and words, and the APIs whose every row
//! verified in spite of the bug.

use crate::kernel_support::{example, result, sweep_command};
use crate::support::{available, both, read_json, scratch, stderr};
use serde_json::Value;
use std::os::unix::process::ExitStatusExt;

/// A stopped API and words its failure line must hold.
type Caught = (&'static str, &'static [&'static str]);

/// The report keys of the APIs whose every row verified: the bug did not show there.
type Verified = &'static [&'static str];

/// Each zoo kernel, what it must stop on PoCL and lavapipe (Vulkan and WebGPU), and where it
/// passes unseen.
const CASES: &[(&str, &[Caught], Verified)] = &[
    (
        "no-guard",
        &[
            ("OpenCL", &["past the end of 'y'", "first at index 1000003"]),
            ("Vulkan", &["past the end of 'y'", "first at index 1000003"]),
        ],
        // WebGPU's bounds checks keep the last workgroup's loads and stores inside x and y.
        &["webgpu"],
    ),
    (
        "flat-guard",
        &[
            (
                "Vulkan",
                &["differs from its own output", "depends on the launch"],
            ),
            (
                "WebGPU",
                &["differs from its own output", "depends on the launch"],
            ),
        ],
        &[],
    ),
    (
        "divergent-barrier",
        &[
            ("OpenCL", &["past the end of 'y'"]),
            (
                "Vulkan",
                &["'y' at block 32", "differs from its own output"],
            ),
            (
                "WebGPU",
                &["'y' at block 32", "differs from its own output"],
            ),
        ],
        &[],
    ),
    (
        "pow2-reduction",
        &[
            (
                "OpenCL",
                &["'partials' at block 96", "differs from its own"],
            ),
            (
                "WebGPU",
                &["'partials' at block 96", "differs from its own"],
            ),
        ],
        &[],
    ),
    (
        "warp-sync-reduction",
        // Every port is wrong on the CPU drivers, and lavapipe's two APIs lose the same adds:
        // they agree, but WebGPU runs over Vulkan (one driver, one witness), so the vote names
        // nobody's port the wrong one and every API is named.
        &[
            (
                "OpenCL",
                &[
                    "differs from Vulkan's and WebGPU's",
                    "run on one driver",
                    "cannot tell",
                ],
            ),
            ("Vulkan", &["differs from OpenCL's", "cannot tell"]),
            ("WebGPU", &["differs from OpenCL's", "cannot tell"]),
        ],
        &[],
    ),
    (
        "missing-barrier",
        &[
            ("OpenCL", &["differs from its own output at block 16"]),
            ("WebGPU", &["differs from its own output at block 16"]),
        ],
        &[],
    ),
    (
        "uninit-shared",
        // What the unwritten half holds varies between runs: a later row differs from the
        // first ("its own output at block 16"), or the first is the odd one ("differs from its
        // output at block 32, which agrees with OpenCL's"); either way the output check names it.
        &[
            ("Vulkan", &["output 'y' at block", "differs from its"]),
            ("WebGPU", &["output 'y' at block", "differs from its"]),
        ],
        &[],
    ),
    (
        "far-write",
        &[(
            "OpenCL",
            &["the kernel crashed the driver", "SIGSEGV", "rows before"],
        )],
        // lavapipe drops the store; WebGPU's bounds check keeps it inside y.
        &["vulkan", "webgpu"],
    ),
    (
        "endless-loop",
        &[
            ("OpenCL", &["did not finish within 2 s", "worker process"]),
            ("WebGPU", &["did not finish within 2 s", "worker process"]),
        ],
        &[],
    ),
    (
        "shared-over-limit",
        &[
            (
                "Vulkan",
                &["static shared memory, 65536 bytes", "maxComputeS"],
            ),
            (
                "WebGPU",
                &[
                    "static shared memory, 65536 bytes",
                    "maxComputeWorkgroupStorageSize",
                ],
            ),
        ],
        &[],
    ),
    (
        "push-constant-mismatch",
        &[
            ("Vulkan", &["push-constant block is 8 bytes, smaller"]),
            (
                "WebGPU",
                &[
                    "uniform block at @binding(2) has 4 bytes at 0, 4 bytes at 4",
                    "argument 3 (u64) at 8",
                ],
            ),
        ],
        &[],
    ),
];

#[test]
fn every_bug_in_the_zoo_is_caught_by_name_and_the_process_survives() {
    // Evaluated apart, so a CI run that requires all three fails on whichever is missing.
    let webgpu = available("webgpu");
    if !(both() && webgpu) {
        return;
    }
    let dir = scratch("bug-zoo");
    for (name, caught, verified) in CASES {
        let spec = example(&format!("bugs/{name}"));
        let json = dir.join(format!("{name}.json"));
        let out = sweep_with_deadline(&spec, &json);
        let err = stderr(&out);
        assert_eq!(
            out.status.signal(),
            None,
            "{name}: killed by a signal: {err}"
        );
        assert_eq!(out.status.code(), Some(1), "{name}: {err}");
        let report = read_json(&json);
        for (api, needles) in *caught {
            let line = err
                .lines()
                .find(|l| l.starts_with(&format!("blocksweep: {api}: ")))
                .unwrap_or_else(|| panic!("{name}: {api} not named: {err}"));
            for n in *needles {
                assert!(line.contains(n), "{name}: {n:?} not in {line}");
            }
            let key = api.to_lowercase();
            assert!(
                result(&report, &key)["error"].is_string(),
                "{name}: {report}"
            );
        }
        // Every API stays in the report, its rows kept.
        for other in ["vulkan", "opencl", "webgpu"] {
            assert!(result(&report, other)["rows"].is_array(), "{name}: {other}");
        }
        for api in *verified {
            let r = result(&report, api);
            let rows = r["rows"].as_array().unwrap();
            assert!(r["error"].is_null(), "{name}: {api}: {r}");
            assert!(!rows.is_empty(), "{name}: {api}: no rows");
            assert!(
                rows.iter().all(|x| x["verified"] == true),
                "{name}: {api}: {rows:?}"
            );
        }
        assert_eq!(report["answer"]["portable"], Value::Array(vec![]), "{name}");
    }
}

/// A bug that stops one API leaves the other's checked rows standing: the no-guard kernel's
/// store past the end is dropped by lavapipe (a robust driver), and caught on PoCL.
#[test]
fn the_api_a_bug_did_not_reach_keeps_its_verified_rows() {
    if !both() {
        return;
    }
    let dir = scratch("bug-zoo-kept");
    let json = dir.join("far.json");
    let out = sweep_with_deadline(&example("bugs/far-write"), &json);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let report = read_json(&json);
    let vulkan = result(&report, "vulkan")["rows"]
        .as_array()
        .unwrap()
        .clone();
    assert!(!vulkan.is_empty());
    assert!(vulkan.iter().all(|r| r["verified"] == true), "{vulkan:?}");
}

fn sweep_with_deadline(spec: &std::path::Path, json: &std::path::Path) -> std::process::Output {
    // The deadline is set in the environment of the binary (and its workers inherit it), not
    // in this multi-threaded test process: set_var races the other tests' reads.
    sweep_command(spec, json, &[])
        .env("BLOCKSWEEP_DEADLINE_S", "2")
        .output()
        .expect("run blocksweep")
}

/// A correct kernel whose inner loop runs past llvmpipe's cap on loop iterations: lavapipe cuts
/// it short, the row's own check finds the elements it never reached, and the message says
/// why, so that nobody blames the kernel (or another API).
#[test]
fn a_loop_past_llvmpipes_cap_is_told_so() {
    if !crate::support::available("vulkan") {
        return;
    }
    let dir = scratch("loop-cap");
    let spec = "name = \"inner\"\nwork = \"n\"\nsizes = { n = 4096 }\n\
        [sources]\nvulkan = { file = \"k.comp\" }\n\
        [[args]]\nbuffer = \"f32\"\nname = \"x\"\nelements = \"n\"\ninit = \"random\"\n\
        [[args]]\nbuffer = \"f32\"\nname = \"y\"\nelements = \"n\"\nwritten = true\n\
        [[args]]\nscalar = \"u64\"\nname = \"n\"\nvalue = \"n\"\n";
    std::fs::write(dir.join("kernel.toml"), spec).unwrap();
    std::fs::write(dir.join("k.comp"), INNER_LOOP).unwrap();
    let json = dir.join("inner.json");
    let out = crate::kernel_support::sweep(&dir.join("kernel.toml"), &json, &["--blocks", "64"]);
    let err = stderr(&out);
    let llvmpipe = read_json(&json)["results"][0]["device"]["name"]
        .as_str()
        .is_some_and(|n| n.starts_with("llvmpipe"));
    if !llvmpipe {
        return; // Another Vulkan driver runs the loop to its end: nothing to tell.
    }
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("ends a shader's loops after 65535 iterations"),
        "{err}"
    );
}

/// 100000 passes of an inner loop per element: past llvmpipe's 65535.
const INNER_LOOP: &str = "#version 450
layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) buffer Y { float y[]; };
layout(push_constant) uniform P { uvec2 n; };
void main() {
    uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    for (uint i = gl_GlobalInvocationID.x; i < n.x; i += step) {
        float acc = 0.0;
        for (uint k = 0u; k < 100000u; k++) acc += x[i];
        y[i] = acc;
    }
}
";
