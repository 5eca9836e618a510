//! Shared by the integration tests: whether NVRTC is here.

use blocksweep_cuda::nvrtc_available;

/// Whether libnvrtc loads. Where it does not, a `BLOCKSWEEP_REQUIRE` that names `nvrtc`
/// (tools/ci/cuda-floor-check.sh sets it) fails the calling test.
pub fn nvrtc_loads() -> bool {
    if nvrtc_available() {
        return true;
    }
    let required = std::env::var("BLOCKSWEEP_REQUIRE")
        .is_ok_and(|r| r.split(',').any(|k| k.trim() == "nvrtc"));
    assert!(
        !required,
        "BLOCKSWEEP_REQUIRE names nvrtc, but no libnvrtc.so.13 / .12 loads"
    );
    false
}
