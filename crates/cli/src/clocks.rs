//! The GPU clocks read around each API's turn (issue 41): NVML's reader where a GPU is among a
//! run's devices and the library loads; where it does not, said once on stderr, and the run
//! goes on unchanged. A run on CPU devices only asks nothing and says nothing.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;

use blocksweep_core::clocks::ClockReader;
use blocksweep_core::{DeviceIdentity, DeviceKind};
use blocksweep_nvml::NvmlClocks;

static READER: OnceLock<Result<NvmlClocks, String>> = OnceLock::new();
static SAID: AtomicBool = AtomicBool::new(false);

/// The reader for a run over `devices`: `None` where none is a GPU, or where NVML is not there
/// (said once per process).
pub fn reader<'a>(
    devices: impl IntoIterator<Item = &'a DeviceIdentity>,
) -> Option<&'static dyn ClockReader> {
    if !devices.into_iter().any(|d| d.kind == DeviceKind::Gpu) {
        return None;
    }
    let loaded = READER.get_or_init(|| blocksweep_nvml::load().map(NvmlClocks).map_err(|e| e.0));
    match loaded {
        Ok(r) => Some(r),
        Err(why) => {
            if !SAID.swap(true, Ordering::Relaxed) {
                warn!("clocks: not recorded: {why}");
            }
            None
        }
    }
}
