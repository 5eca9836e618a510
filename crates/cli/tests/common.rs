//! Shared by the end-to-end tests: run the real binary, and decide whether an API is there.

#![allow(dead_code)]

use assert_cmd::Command;
use blocksweep_conformance::skip_unavailable;
use blocksweep_core::Api;

/// The API with this key, from the driver list the binary is built with.
pub fn api(key: &str) -> Api {
    blocksweep_drivers::all()
        .iter()
        .map(|d| d.api())
        .find(|a| a.key() == key)
        .unwrap_or_else(|| panic!("no API {key} in the driver list"))
}

pub fn blocksweep() -> Command {
    Command::cargo_bin("blocksweep").expect("the blocksweep binary is built for its tests")
}

/// True when the binary finds a device for `api`. When it does not: panics if
/// BLOCKSWEEP_REQUIRE names the API (CI), else prints SKIPPED and returns false.
pub fn available(api: Api) -> bool {
    let out = blocksweep()
        .args(["devices", "--format", "json"])
        .output()
        .expect("run blocksweep devices");
    assert!(
        out.status.success(),
        "devices failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value =
        serde_json::from_slice(&out.stdout).expect("devices --format json is JSON");
    let why = v["unavailable"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|u| u["api"] == api.key())
        .map(|u| u["reason"].as_str().unwrap_or("").to_string());
    match why {
        None => true,
        Some(why) => !skip_unavailable(api, &why),
    }
}

/// Runs the binary, expects exit code 2 and a one-line error containing `needle`.
pub fn bad_input(args: &[&str], needle: &str) {
    let out = blocksweep().args(args).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(2),
        "{args:?}: exit {:?}, stderr: {stderr}",
        out.status.code()
    );
    assert!(
        stderr.contains(needle),
        "{args:?}: stderr {stderr:?} lacks {needle:?}"
    );
    assert_eq!(
        stderr.trim_end().lines().count(),
        1,
        "{args:?}: error must be one line: {stderr:?}"
    );
    assert!(
        !stderr.contains("panicked") && !stderr.contains("backtrace"),
        "{stderr}"
    );
    assert!(stderr.starts_with("blocksweep: error: "), "{stderr}");
}

/// Runs the binary with `args`, expects success (showing stderr otherwise), returns stdout.
pub fn succeeds<S: AsRef<std::ffi::OsStr>>(args: &[S]) -> String {
    let out = blocksweep().args(args).output().expect("run blocksweep");
    assert!(
        out.status.success(),
        "{:?} failed: {}",
        args.iter()
            .map(|a| a.as_ref().to_owned())
            .collect::<Vec<_>>(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}
