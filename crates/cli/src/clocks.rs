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
    loaded(devices).map(|r| r as &dyn ClockReader)
}

/// The clocks `device` states, as `limits` lists them beside the API's own (its `extra`):
/// the highest SM and memory clocks, and the SM clock now; nothing where NVML does not know
/// the device.
pub fn stated(device: &DeviceIdentity) -> Vec<(String, String)> {
    let Some(c) = loaded([device]).and_then(|r| r.nvml().clocks_of(device)) else {
        return Vec::new();
    };
    let mhz = |v: Option<u32>| v.map(|v| format!("{v} MHz"));
    [
        ("NVML max SM clock", mhz(c.max_sm_mhz)),
        ("NVML max memory clock", mhz(c.max_mem_mhz)),
        ("NVML SM clock now", mhz(Some(c.sm_mhz))),
    ]
    .into_iter()
    .filter_map(|(name, v)| Some((name.to_string(), v?)))
    .collect()
}

fn loaded<'a>(
    devices: impl IntoIterator<Item = &'a DeviceIdentity>,
) -> Option<&'static NvmlClocks> {
    if !devices.into_iter().any(|d| d.kind == DeviceKind::Gpu) {
        return None;
    }
    let loaded = READER.get_or_init(|| {
        blocksweep_nvml::load()
            .map(NvmlClocks::new)
            .map_err(|e| e.0)
    });
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

#[cfg(test)]
mod tests {
    use super::*;
    use blocksweep_core::testing::HostBackend;
    use blocksweep_core::testing::TEST_API_A;

    fn device(kind: DeviceKind) -> DeviceIdentity {
        let mut d = HostBackend::new(TEST_API_A).identity;
        d.kind = kind;
        d
    }

    #[test]
    fn cpu_devices_ask_nothing() {
        assert!(reader([&device(DeviceKind::Cpu)]).is_none());
        assert!(stated(&device(DeviceKind::Cpu)).is_empty());
    }

    /// A GPU that NVML does not know: where the library is missing, no reader, said once;
    /// where it loads, a reader that finds no clocks for a device of no real UUID.
    #[test]
    fn a_gpu_without_nvml_gets_no_reader_and_an_unknown_gpu_no_clocks() {
        let gpu = device(DeviceKind::Gpu);
        match blocksweep_nvml::load() {
            Err(_) => {
                assert!(reader([&gpu]).is_none());
                assert!(SAID.load(Ordering::Relaxed), "said on stderr");
            }
            Ok(_) => assert_eq!(reader([&gpu]).and_then(|r| r.read(&gpu)), None),
        }
        assert!(stated(&gpu).is_empty());
    }
}
