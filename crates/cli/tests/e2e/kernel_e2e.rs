//! `sweep --kernel` and `validate --kernel` through the real binary on the CPU drivers (PoCL
//! for OpenCL, lavapipe for Vulkan): the examples on both APIs, the grayscale spec against the
//! built-in sweep, the broken kernel's message, bad input, an argument count or a compile error
//! in one API, a kernel past the deadline, and the portable assumptions with a user's kernel.
//! Sizes are small (65536 elements, 256x256) so that the file runs in seconds.

mod workers;

use crate::kernel_support::*;
use crate::support::{
    available, blocksweep, both, line_starting, read_json, stderr, succeeds, words,
};
use serde_json::Value;
use std::time::Duration;

#[test]
fn every_example_runs_verified_on_both_apis() {
    if !both() {
        return;
    }
    let dir = saxpy_scratch("examples");
    for (name, size, blocks) in [
        ("grayscale", "256x256", Some("64,256")),
        ("saxpy", "65536", Some("64,256")),
        ("transpose", "256x256", None), // the spec's own square blocks (the tile is the block)
        ("reduce", "65536", Some("64,256")),
    ] {
        let json = dir.join(format!("{name}.json"));
        let mut extra = vec!["--size", size];
        if let Some(b) = blocks {
            extra.extend(["--blocks", b]);
        }
        let out = sweep(&example(name), &json, &extra);
        let report = assert_clean_on_both(&out, &json);
        assert_eq!(result(&report, "opencl")["program"]["name"], name);
    }
}

/// A spec whose two sources compute different things: the second API is checked against the
/// first; with two APIs nothing says which is right, so both are named (WebGPU's source is
/// left out for that); with WebGPU, which agrees with Vulkan but runs over it (one driver, one
/// witness), still nobody is called the wrong port, and all three are named.
#[test]
fn cross_api_difference_is_caught() {
    if !both() {
        return;
    }
    let dir = saxpy_scratch("cross");
    std::fs::write(
        dir.join("saxpy3.cl"),
        std::fs::read_to_string(dir.join("saxpy.cl"))
            .unwrap()
            .replace("fma(a, x[i], y[i])", "fma(a, x[i], y[i]) + 1.0f"),
    )
    .unwrap();
    let spec = saxpy_spec(&dir, "k.toml", |t| {
        let two: Vec<&str> = t.lines().filter(|l| !l.starts_with("webgpu")).collect();
        two.join("\n").replace("saxpy.cl", "saxpy3.cl")
    });
    let json = dir.join("k.json");
    let out = sweep(&spec, &json, &["--size", "65536", "--blocks", "64"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    // Two APIs that disagree: each is named, and neither is called the right one.
    for api in ["Vulkan", "OpenCL"] {
        let line = err
            .lines()
            .find(|l| l.starts_with(&format!("blocksweep: {api}: its output differs")))
            .unwrap_or_else(|| panic!("{api} not named: {err}"));
        assert!(line.contains("cannot tell whose port is wrong"), "{line}");
        assert!(line.contains("'y' at block 64"), "{line}");
    }
    // Both passed their own checks, so every row ran; none counts as checked now.
    let report = read_json(&json);
    for a in ["vulkan", "opencl"] {
        let rows = result(&report, a)["rows"].as_array().unwrap().clone();
        assert!(rows.iter().all(|x| x["verified"] == false), "{a}: {rows:?}");
    }
    if !available("webgpu") {
        return;
    }
    let spec = saxpy_spec(&dir, "k3.toml", |t| t.replace("saxpy.cl", "saxpy3.cl"));
    let json = dir.join("k3.json");
    let out = sweep(&spec, &json, &["--size", "65536", "--blocks", "64"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    // OpenCL is the odd one out, but the two that agree, Vulkan and WebGPU, run on one driver
    // (WebGPU over Vulkan): one witness, so nobody is called the wrong port and all are named.
    let named: Vec<&str> = err
        .lines()
        .filter(|l| l.contains("its output differs"))
        .collect();
    assert_eq!(named.len(), 3, "each API is named: {err}");
    for line in &named {
        assert!(
            line.contains("run on one driver (WebGPU runs over Vulkan)"),
            "{line}"
        );
        assert!(line.contains("cannot tell whose port is wrong"), "{line}");
        assert!(!line.contains("port is the wrong one"), "{line}");
    }
    assert!(
        err.contains("blocksweep: OpenCL: its output differs from Vulkan's and WebGPU's"),
        "{err}"
    );
}

/// The grayscale spec and the built-in sweep take one path: the same grid per block, every
/// row verified in both (times are noise on a CPU and are not compared).
#[test]
fn grayscale_spec_matches_the_builtin_sweep() {
    if !both() {
        return;
    }
    let dir = saxpy_scratch("grayscale");
    let common = ["--size", "320x240", "--blocks", "64,256", "--grid", "wave"];
    let spec_json = dir.join("spec.json");
    let out = sweep(&example("grayscale"), &spec_json, &common);
    let spec = assert_clean_on_both(&out, &spec_json);
    let builtin_json = dir.join("builtin.json");
    let mut args = words("sweep --reps 2 --warmups 1 -o");
    args.push(builtin_json.to_str().unwrap());
    args.extend(common);
    succeeds(&args);
    let builtin = read_json(&builtin_json);
    let webgpu = available("webgpu").then_some("webgpu");
    for a in ["vulkan", "opencl"].into_iter().chain(webgpu) {
        let ours = verified_rows(&spec, a);
        assert_eq!(ours.len(), 2, "{a}: {ours:?}");
        assert_eq!(ours, verified_rows(&builtin, a), "{a}: grids differ");
        assert_eq!(result(&builtin, a)["frame"]["pixels"], 320 * 240);
        assert_eq!(result(&spec, a)["frame"]["pixels"], 320 * 240);
    }
}

/// broken-stride's first row is checked on its own before it can become the reference: at
/// block 64 the 2-block wave grid on 2 CPU cores writes 128 of 65536 elements, and the other
/// 65408 still hold the poison. No row of a broken launch is ranked or given a speed.
#[test]
fn broken_stride_is_caught_at_its_first_row() {
    if !both() {
        return;
    }
    let dir = saxpy_scratch("broken");
    let json = dir.join("broken.json");
    let out = sweep(
        &example("broken-stride"),
        &json,
        &["--size", "65536", "--blocks", "64,256"],
    );
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    let webgpu = available("webgpu");
    let (apis, keys): (&[&str], &[&str]) = if webgpu {
        (
            &["Vulkan", "OpenCL", "WebGPU"],
            &["vulkan", "opencl", "webgpu"],
        )
    } else {
        (&["Vulkan", "OpenCL"], &["vulkan", "opencl"])
    };
    for api in apis {
        let lines: Vec<&str> = err
            .lines()
            .filter(|l| l.starts_with(&format!("blocksweep: {api}: ")))
            .collect();
        assert_eq!(lines.len(), 1, "{api}: said once: {err}");
        for needle in [
            "block 64, grid 2 left 65408 of 65536 elements of 'out' unwritten",
            "first at index 128",
        ] {
            assert!(
                lines[0].contains(needle),
                "{api}: {needle:?} not in {}",
                lines[0]
            );
        }
    }
    let answer = String::from_utf8_lossy(&out.stdout);
    let none = if webgpu {
        "No block size is known good on all three APIs"
    } else {
        "No block size is known good on both APIs"
    };
    assert!(answer.contains(none), "{answer}");
    assert!(
        !answer.contains("GB/s)"),
        "no speed for a broken API: {answer}"
    );
    let report = read_json(&json);
    for a in keys {
        let r = result(&report, a);
        assert!(r["error"].as_str().unwrap().contains("unwritten"), "{r}");
        let rows = r["rows"].as_array().unwrap();
        assert!(
            rows.iter()
                .all(|x| x["verified"] == false && x["timing"].is_null()),
            "{a}: {rows:?}"
        );
    }
    assert_eq!(report["answer"]["portable"], serde_json::json!([]));
    let stopped = report["answer"]["stopped"].as_array().unwrap();
    assert_eq!(stopped.len(), keys.len(), "{stopped:?}");
}

#[test]
fn bad_specs_are_one_line_naming_file_and_key() {
    let dir = saxpy_scratch("bad");
    let s = |name: &str, edit: &dyn Fn(String) -> String| saxpy_spec(&dir, name, edit);
    let malformed = write(&dir, "malformed.toml", "name = \"x\nwork = \"n\"\n");
    rejected(&dir, &malformed, None, "line 1, column");
    // A key before the first table is top-level.
    let top = s("top.toml", &|t| {
        t.replace("work = \"n\"", "colour = 3\nwork = \"n\"")
    });
    rejected(&dir, &top, None, "unknown field `colour`");
    let arg = s("arg.toml", &|t| {
        t.replacen("name = \"x\"", "name = \"x\"\ncolour = 1", 1)
    });
    rejected(&dir, &arg, None, "args[0]: ");
    rejected(&dir, &arg, None, "unknown field `colour`");
    let missing = s("missing.toml", &|t| t.replace("saxpy.cl", "nosuch.cl"));
    rejected(&dir, &missing, None, "sources.opencl.file: cannot read ");
    rejected(&dir, &missing, None, "nosuch.cl: No such file");
    let ty = s("type.toml", &|t| {
        t.replacen("buffer = \"f32\"", "buffer = \"f16\"", 1)
    });
    rejected(
        &dir,
        &ty,
        None,
        "args[0].buffer: 'f16' is not an element type",
    );
    let init = s("init.toml", &|t| {
        t.replace("init = \"random\"", "init = \"sparkly\"")
    });
    rejected(&dir, &init, None, "args[0].init: 'sparkly' is not an init");
    let cube = s("cube.toml", &|t| {
        t.replacen("elements = \"n\"", "elements = \"n * n * n\"", 1)
    });
    rejected(
        &dir,
        &cube,
        Some("4294967296"),
        "args[0].elements: 'n * n * n' overflows 64 bits",
    );
    rejected(
        &dir,
        &example("saxpy"),
        Some("256x256"),
        "--size: '256x256'",
    );
    let no_sources = s("nosources.toml", &|t| {
        let start = t.find("[sources]").unwrap();
        let end = t.find("[[args]]").unwrap();
        format!("{}{}", &t[..start], &t[end..])
    });
    rejected(&dir, &no_sources, None, "missing field `sources`");
}

#[test]
fn argument_count_contradicting_the_compiled_kernel() {
    if !both() {
        return;
    }
    let dir = saxpy_scratch("argc");
    // OpenCL's kernel takes 3 arguments (CL_KERNEL_NUM_ARGS); the spec declares 4.
    edited_source(
        &dir,
        "saxpy.cl",
        "three.cl",
        &[("const float a, ", ""), ("fma(a,", "fma(2.5f,")],
    );
    let cl = saxpy_spec(&dir, "cl.toml", |t| t.replace("saxpy.cl", "three.cl"));
    one_api_fails(
        &cl,
        "opencl",
        "vulkan",
        &["three.cl: the kernel takes 3 arguments, the spec declares 4"],
    );
    // Vulkan's shader binds a third storage buffer (SPIR-V reflection); the spec has 2.
    edited_source(
        &dir,
        "saxpy.comp",
        "three.comp",
        &[(
            "void main() {",
            "layout(std430, set = 0, binding = 2) buffer Z { float z[]; };\n\
             void main() {\n    z[0] = 1.0;",
        )],
    );
    let vk = saxpy_spec(&dir, "vk.toml", |t| t.replace("saxpy.comp", "three.comp"));
    one_api_fails(
        &vk,
        "vulkan",
        "opencl",
        &["three.comp: the shader binds 3 storage buffers, the spec declares 2 buffers"],
    );
}

#[test]
fn a_compile_error_shows_the_compilers_log_and_the_other_api_runs() {
    if !both() {
        return;
    }
    let dir = saxpy_scratch("compile");
    edited_source(
        &dir,
        "saxpy.cl",
        "typo.cl",
        &[("x[i], y[i])", "x[i], yy[i])")],
    );
    let cl = saxpy_spec(&dir, "cl.toml", |t| t.replace("saxpy.cl", "typo.cl"));
    one_api_fails(
        &cl,
        "opencl",
        "vulkan",
        &[
            "typo.cl: clBuildProgram failed with CL_BUILD_PROGRAM_FAILURE",
            "use of undeclared identifier 'yy'", // clang's own words, from the build log
        ],
    );
    edited_source(
        &dir,
        "saxpy.comp",
        "typo.comp",
        &[("x[i], y[i])", "x[i], yy[i])")],
    );
    let vk = saxpy_spec(&dir, "vk.toml", |t| t.replace("saxpy.comp", "typo.comp"));
    // glslang's own line (through libshaderc or glslangValidator, whichever this host has).
    one_api_fails(&vk, "vulkan", "opencl", &["'yy' : undeclared identifier"]);
}

/// A kernel that never finishes is OpenCL's failure, not a hang: the deadline stops the wait,
/// Vulkan's rows are kept, and the process ends promptly (PoCL's spinning thread is left to
/// the process's end). The spinning side is OpenCL only: lavapipe ends every shader loop after
/// 65535 turns, so a Vulkan shader cannot spin for ever there, and one that merely runs long
/// (a data grid of 2^20 invocations) cannot be stopped cleanly: the deadline error comes at
/// 1 s, but closing the Vulkan backend waits (vkDeviceWaitIdle) until the shader ends.
#[test]
fn a_kernel_that_never_finishes_is_stopped_by_the_deadline() {
    if !both() {
        return;
    }
    let dir = saxpy_scratch("deadline");
    write(&dir, "spin.cl", SPIN_CL);
    write(&dir, "fill.comp", FILL_COMP);
    let spec = write(&dir, "spin.toml", SPIN_SPEC);
    let json = dir.join("spin.json");
    // The kernel never finishes: only the deadline ends the run before the timeout kills it
    // (exit code None), so no wall-clock bound is needed.
    let out = blocksweep()
        .env("BLOCKSWEEP_DEADLINE_S", "1")
        .arg("sweep")
        .arg("--kernel")
        .arg(&spec)
        .args(["--reps", "2", "--warmups", "1", "--blocks", "64,128", "-o"])
        .arg(&json)
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("OpenCL: the kernel did not finish within 1 s"),
        "{err}"
    );
    let report = read_json(&json);
    assert!(result(&report, "opencl")["error"]
        .as_str()
        .unwrap()
        .contains("did not finish within 1 s"));
    assert_eq!(verified_rows(&report, "vulkan").len(), 2);
}

#[test]
fn validate_with_a_users_kernel_answers_per_api() {
    if !both() {
        return;
    }
    // 4096 elements, not more: the 1x65536 grid's 2^21 work-items each repeat the 1-D
    // kernel's whole grid-stride loop (65536 x the work; at 65536 elements about 10 s on PoCL).
    let spec = example("saxpy");
    let spec = spec.to_str().unwrap();
    let run = |extra: &[&str]| {
        succeeds(&[&["validate", "--kernel", spec, "--size", "4096"], extra].concat())
    };
    let webgpu = available("webgpu");
    let table = run(&[]);
    // The header's two lines: with three APIs the column names wrap below "assumption".
    let lines: Vec<&str> = table.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.contains("assumption"))
        .unwrap_or_else(|| panic!("no header: {table}"));
    let header = lines[at..(at + 2).min(lines.len())].join("\n");
    assert!(
        header.contains("Vulkan") && header.contains("OpenCL"),
        "{header}"
    );
    assert_eq!(header.contains("WebGPU"), webgpu, "{header}");
    let row = |starts: &str| line_starting(&table, starts);
    let r128 = row("1  128 threads per block");
    let apis = 2 + usize::from(webgpu);
    assert_eq!(r128.matches("holds: runs").count(), apis, "{r128}");
    let r1025 = row("4  1025 threads per block");
    let note = r1025
        .split("  holds: rejected [")
        .nth(1)
        .and_then(|s| s.split(']').next())
        .unwrap_or_else(|| panic!("Vulkan does not reject 1025: {r1025}"));
    let said = row(&format!("[{note}] Vulkan:"));
    assert!(
        said.contains("1025 invocations > maxComputeWorkGroupInvocations = 1024"),
        "{said}"
    );
    let json: Value = serde_json::from_str(&run(&["--format", "json"])).expect("JSON");
    let checks = json["checks"].as_array().expect("an array of checks");
    for a in ["vulkan", "opencl"]
        .into_iter()
        .chain(webgpu.then_some("webgpu"))
    {
        let first = checks
            .iter()
            .find(|c| c["api"] == a)
            .unwrap_or_else(|| panic!("no {a} check"));
        assert_eq!(first["outcome"]["kind"], "verified", "{first}");
    }
}

/// A Vulkan kernel past the deadline ends the run promptly: the device is abandoned, not
/// waited for (it was: 128 s on lavapipe, the rest of the kernel). lavapipe ends every loop
/// after 65535 turns, so the shader runs long (2^20 invocations of 60000 turns) rather than
/// for ever.
#[test]
fn a_vulkan_kernel_past_the_deadline_is_abandoned_not_waited_for() {
    if !available("vulkan") {
        return;
    }
    let dir = saxpy_scratch("vulkan-deadline");
    write(&dir, "spin.comp", LONG_COMP);
    let spec = write(&dir, "long.toml", LONG_SPEC);
    // Waiting for the shader takes 128 s on two idle cores (longer on loaded ones); the timeout
    // at 60 s (60 deadlines) kills a run that waits, which then has no exit code.
    let out = blocksweep()
        .env("BLOCKSWEEP_DEADLINE_S", "1")
        .args(["sweep", "--backend", "vulkan", "--kernel"])
        .arg(&spec)
        .args(["--reps", "1", "--warmups", "0", "--blocks", "64"])
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("Vulkan: the kernel did not finish within 1 s"),
        "{err}"
    );
}

/// On CPU drivers alone, a spec's GPU-sized default work is capped as the built-in frame is,
/// and the run says so once; `--size` keeps the size asked for.
#[test]
fn a_spec_on_cpu_drivers_alone_runs_at_a_cpu_size_and_says_so() {
    if !both() {
        return;
    }
    let dir = saxpy_scratch("cpu-size");
    let json = dir.join("cpu.json");
    let out = sweep(&example("saxpy"), &json, &["--blocks", "64"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let said: Vec<&str> = err.lines().filter(|l| l.contains("no GPU among")).collect();
    assert_eq!(said.len(), 1, "{err}");
    assert!(
        said[0].contains("saxpy at n=1048576 instead of its n=16777216"),
        "{err}"
    );
    let report = read_json(&json);
    assert_eq!(result(&report, "opencl")["program"]["sizes"], "n=1048576");
    let asked = sweep(
        &example("saxpy"),
        &json,
        &["--blocks", "64", "--size", "65536"],
    );
    assert!(
        !stderr(&asked).contains("no GPU among"),
        "{}",
        stderr(&asked)
    );
    assert_eq!(
        result(&read_json(&json), "opencl")["program"]["sizes"],
        "n=65536"
    );
}

/// A kernel whose output is wrong is `WRONG` in validate's table and `"wrong"` in its JSON, as
/// docs/kernels.md and json-schema.md say (it was `FAILED` and `"failed"`, a script looking
/// for wrong outputs missed it): the zoo's no-guard kernel writes past its buffer's end.
#[test]
fn validate_calls_a_wrong_output_wrong() {
    let apis = crate::support::available_apis();
    if apis.is_empty() {
        return;
    }
    let spec = example("bugs/no-guard");
    let out = blocksweep()
        .args(["validate", "--kernel"])
        .arg(&spec)
        .args(["--format", "json"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        crate::support::stderr(&out)
    );
    let json: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let kinds: Vec<&str> = json["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c["outcome"]["kind"].as_str())
        .collect();
    assert!(kinds.contains(&"wrong"), "{kinds:?}");
    // A crash is a failure (PoCL's worker dies at 65535 blocks); a wrong output never is.
    for c in json["checks"].as_array().unwrap() {
        let message = c["outcome"]["message"].as_str().unwrap_or_default();
        assert!(!message.contains("output is wrong"), "{c}");
    }
    let wrong = json["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["outcome"]["kind"] == "wrong")
        .unwrap();
    let detail = wrong["outcome"]["detail"].as_str().unwrap_or_default();
    assert!(detail.contains("past the end of 'y'"), "{wrong}");
    let table = blocksweep()
        .args(["validate", "--kernel"])
        .arg(&spec)
        .output()
        .unwrap();
    let table = String::from_utf8_lossy(&table.stdout);
    // The note's number may wrap to the cell's next line (three APIs' columns).
    assert!(table.contains("does not hold: WRONG"), "{table}");
}

/// A spec's `grid = "data"` launches the grid covering its work whatever --grid says: every
/// output names that policy (the transpose example's was labelled "wave" in the JSON, the
/// answer's configurations and the `Grid:` line; a new user's trial).
#[test]
fn a_data_grid_kernel_is_labelled_data_everywhere() {
    let apis = crate::support::available_apis();
    let Some(api) = apis.first() else {
        return;
    };
    let spec = example("transpose");
    let out = blocksweep()
        .args(["sweep", "--backend", api, "--kernel"])
        .arg(&spec)
        .args(["--format", "json", "--reps", "2", "--warmups", "0"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let json: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    for r in json["results"].as_array().unwrap() {
        assert_eq!(r["policy"], "data", "{}", r["grid_source"]);
    }
    for m in json["measurements"].as_array().unwrap() {
        assert_eq!(m["config"]["grid"], "data", "{m}");
    }
}

/// BLOCKSWEEP_APIS leaves an API out of the run, not out of what a spec may name: the saxpy
/// spec's WebGPU source is simply not run (call14 on the H100 found it refused as bad input).
#[test]
fn an_api_left_out_by_the_environment_is_still_a_known_source() {
    if !both() {
        return;
    }
    let spec = example("saxpy");
    let out = blocksweep()
        .env("BLOCKSWEEP_APIS", "vulkan,opencl")
        .args([
            "sweep",
            "--kernel",
            spec.to_str().unwrap(),
            "--size",
            "4096",
            "--blocks",
            "64",
        ])
        .args(["--format", "json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let apis: Vec<&str> = (doc["results"].as_array().unwrap().iter())
        .map(|r| r["api"].as_str().unwrap())
        .collect();
    assert_eq!(apis, ["vulkan", "opencl"], "{doc}");
}
