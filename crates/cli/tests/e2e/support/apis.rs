//! Which APIs this machine has. A missing one is skipped with a SKIPPED line, or fails the
//! test when BLOCKSWEEP_REQUIRE names it (CI).

use blocksweep_conformance::skip_unavailable;
use blocksweep_core::Api;

use super::succeeds_json;

/// The API with this key, from the provider list the binary is built with.
pub fn api(key: &str) -> Api {
    blocksweep_apis::all()
        .iter()
        .map(|d| d.api())
        .find(|a| a.key() == key)
        .unwrap_or_else(|| panic!("no API {key} in the provider list"))
}

/// True when the binary finds a device for the API `key`. When it does not: panics if
/// BLOCKSWEEP_REQUIRE names the API, else prints SKIPPED and returns false.
pub fn available(key: &str) -> bool {
    let devices = succeeds_json(&["devices", "--format", "json"]);
    let why = devices["unavailable"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|u| u["api"] == key)
        .map(|u| u["reason"].as_str().unwrap_or("").to_string());
    match why {
        None => true,
        Some(why) => !skip_unavailable(api(key), &why),
    }
}

/// True when both CPU-driver APIs (Vulkan and OpenCL) are here.
pub fn both() -> bool {
    // Evaluate both, so a CI run that requires both fails on whichever is missing.
    let v = available("vulkan");
    let o = available("opencl");
    v && o
}

/// Those of Vulkan, OpenCL and WebGPU (the APIs with CPU drivers: WebGPU runs on lavapipe)
/// that are here, in that order.
pub fn available_apis() -> Vec<&'static str> {
    ["vulkan", "opencl", "webgpu"]
        .into_iter()
        .filter(|k| available(k))
        .collect()
}
