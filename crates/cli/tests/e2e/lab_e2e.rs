//! End to end, the lab's commands (docs/lab.md) on the CPU drivers CI has: `shapes` and `tail`
//! on PoCL and lavapipe, every row verified; `validate`'s resource rows with each API's own
//! answer; the lab's bad input.

use crate::support::{
    available, bad_input, physical_devices, scratch, succeeds, succeeds_json, words,
};

/// The shape sweep of 64 threads: seven shapes, every one verified, with a grid sized to the
/// frame and the coalescing facts of the device's warp.
fn shapes_verify(key: &str) {
    if !available(key) {
        return;
    }
    let mut args = vec!["shapes", "--backend", key];
    args.extend(words(
        "--size 160x90 --threads 64 --reps 2 --warmups 0 --format json",
    ));
    let v = succeeds_json(&args);
    let results = v["results"].as_array().unwrap();
    assert_eq!(results.len(), 1, "{v}");
    let rows = results[0]["rows"].as_array().unwrap();
    let shapes: Vec<String> = rows
        .iter()
        .map(|r| format!("{}x{}", r["block"]["x"], r["block"]["y"]))
        .collect();
    assert_eq!(
        shapes,
        ["64x1", "32x2", "16x4", "8x8", "4x16", "2x32", "1x64"]
    );
    for r in rows {
        assert_eq!(r["verified"], true, "{r}");
        assert!(r["gbps"].as_f64().unwrap() > 0.0, "{r}");
        // Data-sized: ceil(160 / x) by ceil(90 / y).
        let (x, y) = (
            r["block"]["x"].as_u64().unwrap(),
            r["block"]["y"].as_u64().unwrap(),
        );
        assert_eq!(r["grid"]["x"].as_u64().unwrap(), 160u64.div_ceil(x), "{r}");
        assert_eq!(r["grid"]["y"].as_u64().unwrap(), 90u64.div_ceil(y), "{r}");
        assert!(r["coalescing"]["rows"].as_u64().unwrap() >= 1, "{r}");
    }
    assert!(results[0]["error"].is_null(), "{v}");
}

#[test]
fn shapes_verify_on_opencl() {
    shapes_verify("opencl");
}

#[test]
fn shapes_verify_on_vulkan() {
    shapes_verify("vulkan");
}

/// The grid sweep: both kernels at the same grids, every point verified, the one-pixel-per-
/// thread frame following the grid; the table, the CSV and the plot.
fn tail_verifies(key: &str) {
    if !available(key) {
        return;
    }
    let dir = scratch(&format!("lab-{key}"));
    let svg = dir.join("tail.svg");
    let csv = dir.join("tail.csv");
    let mut args = vec!["tail", "--backend", key];
    args.extend(words(
        "--size 320x180 --block 64 --waves waves:0.5..3:0.5 --reps 2 --warmups 0 --format json",
    ));
    args.extend(["--plot", svg.to_str().unwrap(), "-o", csv.to_str().unwrap()]);
    let v = succeeds_json(&args);
    let r = &v["results"][0];
    let blocks = r["wave"]["blocks"].as_u64().unwrap();
    assert!(blocks >= 1, "{v}");
    let rows = r["rows"].as_array().unwrap();
    let grids = |series: &str| -> Vec<u64> {
        rows.iter()
            .filter(|x| x["series"] == series)
            .map(|x| x["grid"].as_u64().unwrap())
            .collect()
    };
    let gs = grids("grid_stride");
    assert!(!gs.is_empty(), "{v}");
    assert_eq!(
        gs,
        grids("one_per_thread"),
        "the same grids for both kernels"
    );
    for x in rows {
        assert_eq!(x["verified"], true, "{x}");
        if x["series"] == "one_per_thread" {
            // One pixel per thread: the frame is grid x block pixels.
            assert_eq!(x["height"], x["grid"], "{x}");
            assert_eq!(x["width"].as_u64(), Some(64), "{x}");
        } else {
            assert_eq!(
                (x["width"].as_u64(), x["height"].as_u64()),
                (Some(320), Some(180))
            );
        }
    }
    let plot = std::fs::read_to_string(&svg).unwrap();
    assert!(plot.contains("The tail effect") && plot.contains("class=\"point\""));
    let table = std::fs::read_to_string(&csv).unwrap();
    assert!(
        table.starts_with("api,device,block,wave_blocks,series"),
        "{table}"
    );
    assert_eq!(table.lines().count(), rows.len() + 1);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn tail_verifies_on_opencl() {
    tail_verifies("opencl");
}

#[test]
fn tail_verifies_on_vulkan() {
    tail_verifies("vulkan");
}

/// Validate's resource rows on one API: seven, each with a launch; the shared-memory limit's
/// row runs and verifies; what 1 KiB above it does is the API's (or, in Vulkan, blocksweep's
/// refusal naming maxComputeSharedMemorySize). `None` when the API is not here.
fn resources(key: &str) -> Option<Vec<serde_json::Value>> {
    if !available(key) {
        return None;
    }
    let v = succeeds_json(&["validate", "--backend", key, "--format", "json"]);
    let all = v["checks"].as_array().unwrap().clone();
    let res: Vec<serde_json::Value> = all
        .into_iter()
        .filter(|c| !c["assumption"]["probe"].is_null())
        .collect();
    assert_eq!(res.len(), 7, "{v}");
    for r in &res {
        assert_eq!(r["api"], key, "{r}");
        assert!(!r["assumption"]["launch"].is_null(), "{r}");
        assert_ne!(r["outcome"]["kind"], "wrong", "{r}");
    }
    // Row 4: the device's own limit runs and verifies.
    assert_eq!(res[3]["outcome"]["kind"], "verified", "{}", res[3]);
    Some(res)
}

#[test]
fn validate_resources_on_vulkan_refuse_above_max_compute_shared_memory_size() {
    let Some(res) = resources("vulkan") else {
        return;
    };
    let above = &res[4];
    assert_eq!(above["outcome"]["kind"], "rejected", "{above}");
    let msg = above["outcome"]["message"].as_str().unwrap_or("");
    assert!(msg.contains("maxComputeSharedMemorySize"), "{above}");
    // The register-heavy kernel at the largest workgroup: Vulkan has no error for it.
    assert_eq!(res[6]["outcome"]["kind"], "verified", "{}", res[6]);
}

#[test]
fn validate_resources_on_opencl() {
    let Some(res) = resources("opencl") else {
        return;
    };
    // 1 KiB above CL_DEVICE_LOCAL_MEM_SIZE: PoCL runs it (its local memory is the host's)
    // and it verifies, with the limit named beside it; a GPU's driver refuses it. Which one
    // is here decides the one answer expected.
    let pocl = physical_devices()
        .iter()
        .flat_map(|d| d["members"].as_array().cloned().unwrap_or_default())
        .filter(|m| m["api"] == "opencl")
        .all(|m| {
            m["platform"]
                .as_str()
                .unwrap_or("")
                .contains("Portable Computing Language")
        });
    let above = &res[4];
    match pocl {
        true => {
            assert_eq!(above["outcome"]["kind"], "verified", "{above}");
            let said = above["limits_say"].as_str().unwrap_or("");
            assert!(said.contains("CL_DEVICE_LOCAL_MEM_SIZE"), "{above}");
        }
        false => assert_eq!(above["outcome"]["kind"], "rejected", "{above}"),
    }
    let text = succeeds(&["validate", "--backend", "opencl"]);
    assert!(
        text.contains("Resources: shared memory and registers per block"),
        "{text}"
    );
    assert!(text.contains("R7"), "{text}");
}

#[test]
fn lab_bad_input_is_one_line_and_exit_2() {
    bad_input(&["shapes", "--threads", "96"], "power of two");
    bad_input(&["shapes", "--threads", "abc"], "not a thread count");
    bad_input(&["shapes", "--threads", "131072"], "at most 65536");
    bad_input(&["tail", "--waves", "4..1"], "start is above its end");
    bad_input(&["tail", "--waves", "0..2"], "at least one block");
    bad_input(&["tail", "--waves", "1..2:0"], "step 0");
    bad_input(&["tail", "--waves", "1..2:0.0001"], "at most 3 decimals");
    bad_input(&["tail", "--block", "0"], "block 0");
    bad_input(&["tail", "--plot", "x.png"], "must be a .svg file");
    assert!(succeeds(&["tail", "--help"]).contains("docs/lab.md"));
}

/// On a terminal, the lab's commands show where they stand (they ran a minute or more in
/// silence): util-linux `script` gives the run a pseudo-terminal, and its typescript holds the
/// progress line ("OpenCL: 3 of 7 shapes measured", "OpenCL: 2 grids measured").
#[test]
fn shapes_and_tail_show_progress_on_a_terminal() {
    if !available("opencl") {
        return;
    }
    let bin = assert_cmd::cargo::cargo_bin("blocksweep");
    let runs = [
        ("shapes --threads 64", "of 7 shapes measured"),
        ("tail --block 64 --waves 0.5..2:0.5", "grids measured"),
    ];
    for (command, said) in runs {
        let line = format!(
            "{} {command} --backend opencl --size 160x90 --reps 2 --warmups 0 >/dev/null",
            bin.display()
        );
        let out = std::process::Command::new("script")
            .args(["-qec", &line, "/dev/null"])
            .output()
            .expect("util-linux `script` runs the binary on a pseudo-terminal");
        let typed = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{command}: {typed}");
        assert!(
            typed.contains(said),
            "{command}: no progress line in {typed:?}"
        );
    }
}
