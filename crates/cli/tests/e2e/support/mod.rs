//! What the end-to-end tests share: running the real binary, which APIs this machine has
//! (BLOCKSWEEP_REQUIRE makes a missing one fail), reading the JSON and the text it prints,
//! and scratch directories.

// Each test file compiles this module on its own and uses only a part of it: what it leaves
// unused (a function, its re-export) is used by another.
#![allow(dead_code, unused_imports)]

mod apis;
mod json;
mod run;
pub mod schemas;
mod text;

pub use apis::{api, available, available_apis, both};
pub use json::{a_device_serves_several_apis, physical_devices, read_json, succeeds_json};
pub use run::{
    bad_input, bad_input_before_any_phase, blocksweep, run_at, stderr, succeeds, succeeds_at, words,
};
pub use text::{assert_fits, csv_field, csv_rows, flat, line_starting, widest};

use std::path::PathBuf;

/// A sweep's size and repetitions, small enough for a CPU driver to answer in seconds.
const QUICK: [&str; 6] = ["--size", "320x180", "--reps", "2", "--warmups", "1"];

/// `sweep --backend api`, then `extra`, then [`QUICK`].
pub fn quick_sweep<'a>(api: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec!["sweep", "--backend", api];
    args.extend(extra);
    args.extend(QUICK);
    args
}

/// A fresh, empty directory for one test; `name` tells the tests of one file apart.
pub fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("blocksweep-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}
