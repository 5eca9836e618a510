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

/// Every API's provider, in display order.
pub fn all() -> &'static [&'static dyn Provider] {
    PROVIDERS
}

#[cfg(test)]
mod tests {
    use super::*;

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
