//! The APIs this blocksweep drives, in one list shared by the binary and the tests.
//!
//! Adding an API is one crate that implements [`blocksweep_core::Provider`] and
//! [`blocksweep_core::Backend`] (every directory under crates/ is a workspace member), its
//! dependency line in this crate's Cargo.toml, and one line here (docs/architecture.md).

#![warn(clippy::undocumented_unsafe_blocks)]

use blocksweep_core::Provider;

static PROVIDERS: &[&dyn Provider] = &[
    &blocksweep_cuda::PROVIDER,
    &blocksweep_vulkan::PROVIDER,
    &blocksweep_opencl::PROVIDER,
    &blocksweep_webgpu::PROVIDER,
];

/// Whether a tool injects itself into this process's drivers (compute-sanitizer): blocksweep
/// then starts its providers one at a time and runs every API of a sweep in a worker, as under
/// compute-sanitizer a sweep's own process hung 1 run of 5 and its workers 0 of 5 (H200,
/// 2026-12-02: docs/results/h200-2026-12-02/call7).
pub fn under_injection_tool() -> bool {
    blocksweep_cuda::under_cuda_tool()
}

/// Environment variable naming the APIs this process loads (keys or aliases, comma-separated,
/// e.g. `cuda,vulkan,opencl`): what a comparison with an older blocksweep of fewer APIs runs.
/// Unset or empty: every API.
pub const APIS_ENV: &str = "BLOCKSWEEP_APIS";

/// Every API's provider this process loads, in display order: all of them, or those
/// [`APIS_ENV`] names (a name it does not know is ignored).
pub fn all() -> &'static [&'static dyn Provider] {
    static CHOSEN: std::sync::OnceLock<Vec<&'static dyn Provider>> = std::sync::OnceLock::new();
    CHOSEN.get_or_init(|| chosen(std::env::var(APIS_ENV).ok().as_deref()))
}

/// Every API this blocksweep is built with, loaded or not: what reports and spec files may name
/// (an API [`APIS_ENV`] leaves out is still known by its key).
pub fn every() -> &'static [&'static dyn Provider] {
    PROVIDERS
}

/// The providers `list` names (all where it names none).
fn chosen(list: Option<&str>) -> Vec<&'static dyn Provider> {
    let names: Vec<String> = (list.unwrap_or("").split(','))
        .map(|k| k.trim().to_ascii_lowercase())
        .filter(|k| !k.is_empty())
        .collect();
    let named = |p: &&&dyn Provider| {
        let info = p.api().info();
        names
            .iter()
            .any(|n| n == info.key || info.aliases.contains(&n.as_str()))
    };
    match names.is_empty() {
        true => PROVIDERS.to_vec(),
        false => PROVIDERS.iter().filter(named).copied().collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_environment_picks_the_apis_loaded() {
        let keys =
            |l: Option<&str>| -> Vec<&str> { chosen(l).iter().map(|p| p.api().key()).collect() };
        assert_eq!(keys(None).len(), PROVIDERS.len());
        assert_eq!(keys(Some(" ")).len(), PROVIDERS.len());
        assert_eq!(keys(Some("opencl, vk,cuda")), ["cuda", "vulkan", "opencl"]);
        assert_eq!(keys(Some("webgpu,nothing")), ["webgpu"]);
    }

    #[test]
    fn keys_are_unique_and_ranked() {
        let mut keys: Vec<&str> = all().iter().map(|d| d.api().key()).collect();
        keys.dedup();
        assert_eq!(keys.len(), all().len());
        let apis: Vec<_> = all().iter().map(|d| d.api()).collect();
        let mut sorted = apis.clone();
        sorted.sort();
        assert_eq!(apis, sorted, "the list is in display order");
    }
}
