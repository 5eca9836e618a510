//! What a backend says it runs on: the device, its clock, the compiled kernel's own limits.

use serde::{Deserialize, Serialize};
use std::fmt;

use crate::api::Api;

pub use crate::limits::KernelFacts;
use crate::uuid::{format_uuid, uuid_text};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DeviceKind {
    Gpu,
    Cpu,
    Other,
}

impl fmt::Display for DeviceKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            DeviceKind::Gpu => "GPU",
            DeviceKind::Cpu => "CPU",
            DeviceKind::Other => "other",
        })
    }
}

/// "dddd:bb:dd.f", the PCI address as nvidia-smi and lspci print it, from its four parts
/// (every API that reports one gives these, in its own form).
pub fn pci_bus_id(domain: u32, bus: u32, device: u32, function: u32) -> String {
    format!("{domain:04x}:{bus:02x}:{device:02x}.{function:x}")
}

/// A vendor's name from its PCI vendor id, or the Khronos-registered id of a vendor without
/// one (VkVendorId): what Vulkan and WebGPU (through wgpu) report alike.
pub fn vendor_name(vendor_id: u32) -> String {
    let name = match vendor_id {
        0x10DE => "NVIDIA",
        0x1002 | 0x1022 => "AMD",
        0x8086 => "Intel",
        0x13B5 => "ARM",
        0x5143 => "Qualcomm",
        0x1010 => "Imagination Technologies",
        0x106B => "Apple",
        0x144D => "Samsung",
        0x1AE0 => "Google",
        0x10001 => "Vivante",
        0x10002 => "VeriSilicon",
        0x10003 => "Kazan",
        0x10004 => "Codeplay",
        0x10005 => "Mesa",
        0x10006 => "PoCL",
        0x10007 => "Mobileye",
        _ => return format!("vendor 0x{vendor_id:04X}"),
    };
    name.to_string()
}

/// Who a device is, as one API sees it. `uuid` and `pci_bus_id` let the layers above match the
/// same physical GPU across APIs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DeviceIdentity {
    pub api: Api,
    /// Position in this backend's own enumeration (stable within one process).
    pub index: usize,
    pub name: String,
    pub vendor: String,
    /// The vendor driver's own version string (e.g. "580.159.03", "Mesa 22.3.6", "PoCL 3.1");
    /// "driver" in reports.
    #[serde(rename = "driver")]
    pub driver_version: String,
    /// API version the device reports (e.g. "OpenCL 3.0 CUDA", "1.4.312", "9.0").
    pub api_version: String,
    /// Platform (OpenCL) or other grouping the API uses; empty where there is none.
    pub platform: String,
    pub kind: DeviceKind,
    /// The 16-byte device UUID, where the API exposes one. JSON: the usual 8-4-4-4-12 hex
    /// string, as in CSV (an array of 16 numbers, as older files have it, reads too).
    #[serde(with = "uuid_text")]
    pub uuid: Option<[u8; 16]>,
    /// PCI address "dddd:bb:dd.f", where the API exposes one.
    pub pci_bus_id: Option<String>,
}

impl DeviceIdentity {
    /// "Vulkan 1.3.230"; a version string that already names its API ("OpenCL 3.0 PoCL ...")
    /// as it is.
    pub fn api_version_named(&self) -> String {
        match self.api_version.starts_with(&self.api.to_string()) {
            true => self.api_version.clone(),
            false => format!("{} {}", self.api, self.api_version),
        }
    }

    /// The UUID as 32 lower-case hex digits in the usual 8-4-4-4-12 grouping.
    pub fn uuid_string(&self) -> Option<String> {
        self.uuid.map(|u| format_uuid(&u))
    }
}

/// How the backend times a dispatch, and how fine that clock is.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TimerInfo {
    /// e.g. "CUDA events (cuEventElapsedTime)".
    pub method: String,
    /// The clock's resolution in nanoseconds, as the API states it.
    pub resolution_ns: f64,
}

#[cfg(test)]
mod tests {
    #[test]
    fn vendors_are_named_by_their_ids() {
        assert_eq!(super::vendor_name(0x10DE), "NVIDIA");
        assert_eq!(super::vendor_name(0x10005), "Mesa");
        assert_eq!(super::vendor_name(0xABCD), "vendor 0xABCD");
    }

    #[test]
    fn pci_addresses_read_as_lspci_prints_them() {
        assert_eq!(super::pci_bus_id(0, 0x1b, 0, 0), "0000:1b:00.0");
        assert_eq!(super::pci_bus_id(1, 0xc3, 0x1f, 7), "0001:c3:1f.7");
    }
}
