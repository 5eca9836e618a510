//! Reading the JSON the binary prints or writes.

use std::path::Path;

use serde_json::Value;

use super::succeeds;

/// Runs the binary with `args`, expects success and JSON on stdout; returns the document.
pub fn succeeds_json(args: &[&str]) -> Value {
    let out = succeeds(args);
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{args:?}: not JSON ({e}): {out}"))
}

/// The JSON file at `path`.
pub fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path:?}: not JSON ({e}): {text}"))
}

/// The physical devices `devices --format json` lists, each with the API devices it groups.
pub fn physical_devices() -> Vec<Value> {
    let devices = succeeds_json(&["devices", "--format", "json"]);
    devices["physical_devices"].as_array().unwrap().clone()
}

/// True when one physical device is seen through more than one API.
pub fn a_device_serves_several_apis() -> bool {
    physical_devices()
        .iter()
        .any(|p| p["members"].as_array().unwrap().len() > 1)
}
