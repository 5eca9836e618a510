//! The SM and memory clocks of an NVIDIA GPU and the reasons its driver holds them there, read
//! through NVML (`libnvidia-ml.so.1`), loaded at run time like libcuda: on a machine without it
//! [`load`] returns [`Unavailable`] with the reason, never a panic.
//!
//! [`NvmlClocks`] is the core's [`ClockReader`]: the pipeline asks it at the start and end of
//! every API's turn (issue 41). A device is found by its UUID ("GPU-" and the 8-4-4-4-12 form
//! every API reports) or, failing that, by its PCI bus id.
//!
//! | file | holds |
//! |---|---|
//! | `lib.rs` | these docs, [`load`], [`Nvml`]'s queries, the core's reader |
//! | `entry_points.rs` | the entry points called, their C signatures, loading the library |
//! | `reasons.rs` | the clock-event (throttle) reason bits and their words |

#![warn(clippy::undocumented_unsafe_blocks)]

mod entry_points;
mod reasons;

use std::ffi::{c_uint, CString};

use blocksweep_core::clocks::{ClockReader, Clocks};
use blocksweep_core::{DeviceIdentity, DeviceKind};

pub use entry_points::{load, Nvml, Unavailable};
pub use reasons::{reason_words, REASONS};

use entry_points::{Device, NVML_SUCCESS};

/// nvml.h's `nvmlClockType_t`: NVML_CLOCK_SM = 1, NVML_CLOCK_MEM = 2.
const CLOCK_SM: c_uint = 1;
const CLOCK_MEM: c_uint = 2;

/// Which device to ask about.
#[derive(Debug, Clone, Copy)]
pub enum DeviceKey<'a> {
    /// "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx".
    Uuid(&'a str),
    /// "dddd:bb:dd.f" (NVML also takes its own 8-digit domain).
    PciBusId(&'a str),
}

/// One reading of a device's clocks (MHz) and its clock-event reasons (nvml.h's bitmask).
#[derive(Debug, Clone, PartialEq)]
pub struct DeviceClocks {
    pub sm_mhz: u32,
    pub mem_mhz: u32,
    /// The highest clocks the device states (nvmlDeviceGetMaxClockInfo), where it states them.
    pub max_sm_mhz: Option<u32>,
    pub max_mem_mhz: Option<u32>,
    /// The reasons bitmask, where the driver answers it.
    pub reasons: Option<u64>,
}

impl Nvml {
    /// The device's handle, or NVML's word for why there is none.
    fn handle(&self, key: DeviceKey<'_>) -> Result<Device, String> {
        let (text, by_uuid) = match key {
            DeviceKey::Uuid(u) => (u, true),
            DeviceKey::PciBusId(p) => (p, false),
        };
        let c = CString::new(text).map_err(|_| format!("'{text}' holds a NUL byte"))?;
        let mut device: Device = std::ptr::null_mut();
        let f = match by_uuid {
            true => self.fns.nvmlDeviceGetHandleByUUID,
            false => self.fns.nvmlDeviceGetHandleByPciBusId_v2,
        };
        // SAFETY: `c` is a NUL-terminated string alive for the call and `device` a valid place
        // for one handle, as nvml.h's nvmlDeviceGetHandleByUUID / ByPciBusId_v2 take them.
        let code = unsafe { f(c.as_ptr(), &mut device) };
        self.check(code).map(|()| device)
    }

    /// One clock of `device` through `f` (current or max), in MHz.
    fn clock(
        &self,
        f: entry_points::ClockFn,
        device: Device,
        which: c_uint,
    ) -> Result<u32, String> {
        let mut mhz: c_uint = 0;
        // SAFETY: `device` is a handle NVML gave, `which` a documented nvmlClockType_t and
        // `mhz` a valid place for one unsigned int.
        let code = unsafe { f(device, which, &mut mhz) };
        self.check(code).map(|()| mhz)
    }

    /// The clock-event reasons, through the newer entry point where the driver has it.
    fn reasons(&self, device: Device) -> Option<u64> {
        let f = self.fns.reasons?;
        let mut bits: std::ffi::c_ulonglong = 0;
        // SAFETY: `device` is a handle NVML gave and `bits` a valid place for one unsigned
        // long long, as nvmlDeviceGetCurrentClocksEventReasons (and the older
        // ...ThrottleReasons, of the same signature) take them.
        let code = unsafe { f(device, &mut bits) };
        (code == NVML_SUCCESS).then_some(bits)
    }

    /// The device's current SM and memory clocks, its stated maxima and its reasons.
    pub fn clocks(&self, key: DeviceKey<'_>) -> Result<DeviceClocks, String> {
        self.clocks_of_handle(self.handle(key)?)
    }

    /// [`Self::clocks`] of a device whose handle is known.
    fn clocks_of_handle(&self, device: Device) -> Result<DeviceClocks, String> {
        let (now, max) = (
            self.fns.nvmlDeviceGetClockInfo,
            self.fns.nvmlDeviceGetMaxClockInfo,
        );
        Ok(DeviceClocks {
            sm_mhz: self.clock(now, device, CLOCK_SM)?,
            mem_mhz: self.clock(now, device, CLOCK_MEM)?,
            max_sm_mhz: self.clock(max, device, CLOCK_SM).ok(),
            max_mem_mhz: self.clock(max, device, CLOCK_MEM).ok(),
            reasons: self.reasons(device),
        })
    }

    /// The clocks of the device an API reports ([`Self::handle_of`]); `None` for a device
    /// that is not a GPU or that NVML does not know (another vendor's).
    pub fn clocks_of(&self, device: &DeviceIdentity) -> Option<DeviceClocks> {
        self.clocks_of_handle(self.handle_of(device)?).ok()
    }

    /// NVML's handle of the device an API reports: by its UUID, else by its PCI bus id.
    fn handle_of(&self, device: &DeviceIdentity) -> Option<Device> {
        if device.kind != DeviceKind::Gpu {
            return None;
        }
        let uuid = device.uuid_string().map(|u| format!("GPU-{u}"));
        let by_uuid = uuid.and_then(|u| self.handle(DeviceKey::Uuid(&u)).ok());
        by_uuid.or_else(|| {
            let pci = device.pci_bus_id.as_deref()?;
            self.handle(DeviceKey::PciBusId(pci)).ok()
        })
    }
}

/// The core's [`ClockReader`] over a loaded NVML, keeping each device's handle and last full
/// reading so that a row's reading is one call (the SM clock).
pub struct NvmlClocks {
    nvml: &'static Nvml,
    /// Per device UUID or PCI bus id: its handle (as an address) and last full reading.
    seen: std::sync::Mutex<Vec<(String, usize, Clocks)>>,
}

impl NvmlClocks {
    pub fn new(nvml: &'static Nvml) -> NvmlClocks {
        NvmlClocks {
            nvml,
            seen: std::sync::Mutex::new(Vec::new()),
        }
    }

    /// The loaded library.
    pub fn nvml(&self) -> &'static Nvml {
        self.nvml
    }
}

/// What the reader keeps a device's handle and reading under: the identity the API reports.
fn seen_key(device: &DeviceIdentity) -> String {
    format!(
        "{}|{:?}|{}",
        device.uuid_string().unwrap_or_default(),
        device.pci_bus_id,
        device.name
    )
}

impl ClockReader for NvmlClocks {
    fn read(&self, device: &DeviceIdentity) -> Option<Clocks> {
        let handle = self.nvml.handle_of(device)?;
        let c = self.nvml.clocks_of_handle(handle).ok()?;
        let key = seen_key(device);
        let clocks = Clocks {
            sm_mhz: c.sm_mhz,
            mem_mhz: c.mem_mhz,
            max_sm_mhz: c.max_sm_mhz,
            reasons: c.reasons.map(reason_words).unwrap_or_default(),
        };
        if let Ok(mut seen) = self.seen.lock() {
            seen.retain(|(k, _, _)| *k != key);
            seen.push((key, handle as usize, clocks.clone()));
        }
        Some(clocks)
    }

    fn read_row(&self, device: &DeviceIdentity) -> Option<Clocks> {
        let key = seen_key(device);
        let known = self
            .seen
            .lock()
            .ok()?
            .iter()
            .find(|(k, _, _)| *k == key)
            .cloned();
        let Some((_, handle, last)) = known else {
            return self.read(device);
        };
        let now = self.nvml.clock(
            self.nvml.fns.nvmlDeviceGetClockInfo,
            handle as Device,
            CLOCK_SM,
        );
        Some(Clocks {
            sm_mhz: now.ok()?,
            ..last
        })
    }
}
