//! `--workers` against `--in-process`: the same kernels through a worker process per API and
//! in this one verify the same rows (times are noise on a CPU and are not compared), for a
//! user's kernel and for the built-in sweep.

use crate::kernel_support::{example, result, sweep, verified_rows};
use crate::support::{blocksweep, both, read_json, scratch, stderr};
use serde_json::Value;
use std::path::Path;

/// What each row of `api` came to: its block, grid, and whether it verified or was skipped.
fn rows(report: &Value, api: &str) -> Vec<(String, u64, Value, Value)> {
    verified_rows(report, api);
    let rows = result(report, api)["rows"].as_array().unwrap();
    rows.iter()
        .map(|r| {
            let block = r["block"].to_string();
            let grid = r["grid"].as_u64().unwrap();
            (block, grid, r["verified"].clone(), r["skipped"].clone())
        })
        .collect()
}

/// The rows of both APIs of the report at `json`, after a run that exited 0.
fn both_rows(out: &std::process::Output, json: &Path) -> Vec<Vec<(String, u64, Value, Value)>> {
    assert_eq!(out.status.code(), Some(0), "{}", stderr(out));
    let report = read_json(json);
    ["vulkan", "opencl"].map(|a| rows(&report, a)).to_vec()
}

#[test]
fn a_kernel_in_workers_verifies_the_rows_it_verifies_in_process() {
    if !both() {
        return;
    }
    let dir = scratch("kernel-workers");
    for (name, size) in [
        ("saxpy", "65536"),
        ("reduce", "65536"),
        ("transpose", "256x256"),
    ] {
        let seen: Vec<_> = ["--workers", "--in-process"]
            .map(|how| {
                let json = dir.join(format!("{name}{how}.json"));
                let out = sweep(&example(name), &json, &["--size", size, how]);
                both_rows(&out, &json)
            })
            .to_vec();
        assert_eq!(seen[0], seen[1], "{name}: workers, then in process");
    }
}

#[test]
fn the_builtin_sweep_in_workers_verifies_the_rows_it_verifies_in_process() {
    if !both() {
        return;
    }
    let dir = scratch("builtin-workers");
    let seen: Vec<_> = [Some("--workers"), None]
        .map(|how| {
            let json = dir.join(format!("builtin{}.json", how.unwrap_or("")));
            let out = blocksweep()
                .args(["sweep", "--size", "256x256", "--blocks", "64,256"])
                .args(["--reps", "2", "--warmups", "1", "-o"])
                .arg(&json)
                .args(how)
                .output()
                .expect("run blocksweep");
            both_rows(&out, &json)
        })
        .to_vec();
    assert_eq!(seen[0], seen[1], "workers, then in process");
}
