//! Device enumeration and identity: what clGetPlatformIDs, clGetDeviceIDs and clGetDeviceInfo
//! answer, without building a program (the launch limits are in `limits.rs`).
//!
//! Every query goes through [`Info`], which carries the query's OpenCL name so that the
//! limits keep it (`CL_DEVICE_MAX_WORK_GROUP_SIZE`) and a failure names it. Replies are read
//! from raw bytes rather than through cl3's `InfoType` conversions, which panic when a driver
//! answers with an unexpected type.

use std::sync::Mutex;

use blocksweep_core::{trace, DeviceIdentity, DeviceKind};
use opencl3::device::{
    get_device_data, get_device_ids, CL_DEVICE_EXTENSIONS, CL_DEVICE_NAME,
    CL_DEVICE_PCI_BUS_INFO_KHR, CL_DEVICE_TYPE, CL_DEVICE_TYPE_ALL, CL_DEVICE_TYPE_CPU,
    CL_DEVICE_TYPE_GPU, CL_DEVICE_UUID_KHR, CL_DEVICE_VENDOR, CL_DEVICE_VERSION, CL_DRIVER_VERSION,
};
use opencl3::platform::platform::{get_platform_data, get_platform_ids, CL_PLATFORM_NAME};
use opencl3::types::{cl_device_id, cl_device_info, cl_platform_id};

use crate::error::{cl_error_name, map_platform_query, map_query, OpenClError};

// cl_nv_device_attribute_query (values from the extension's registry entry; the PCI queries
// are undocumented but stable, and the ones clinfo uses).
pub(crate) const CL_DEVICE_COMPUTE_CAPABILITY_MAJOR_NV: cl_device_info = 0x4000;
pub(crate) const CL_DEVICE_COMPUTE_CAPABILITY_MINOR_NV: cl_device_info = 0x4001;
pub(crate) const CL_DEVICE_REGISTERS_PER_BLOCK_NV: cl_device_info = 0x4002;
pub(crate) const CL_DEVICE_WARP_SIZE_NV: cl_device_info = 0x4003;
pub(crate) const CL_DEVICE_GPU_OVERLAP_NV: cl_device_info = 0x4004;
pub(crate) const CL_DEVICE_KERNEL_EXEC_TIMEOUT_NV: cl_device_info = 0x4005;
pub(crate) const CL_DEVICE_INTEGRATED_MEMORY_NV: cl_device_info = 0x4006;
pub(crate) const CL_DEVICE_PCI_BUS_ID_NV: cl_device_info = 0x4008;
pub(crate) const CL_DEVICE_PCI_SLOT_ID_NV: cl_device_info = 0x4009;
pub(crate) const CL_DEVICE_PCI_DOMAIN_ID_NV: cl_device_info = 0x400A;

/// A clGetDeviceInfo query and its OpenCL name.
#[derive(Clone, Copy)]
pub(crate) struct Info {
    pub id: cl_device_info,
    pub name: &'static str,
}

macro_rules! info {
    ($c:ident) => {
        Info {
            id: $c,
            name: stringify!($c),
        }
    };
}
pub(crate) use info;

/// One device in enumeration order (platform order, then device order).
pub(crate) struct DeviceEntry {
    pub platform_name: String,
    pub device: cl_device_id,
}

/// Every device of every platform, of every type. `Unavailable` when the library does not
/// load, there is no platform, or no platform has a device (the reasons for each kept).
/// `phase` ("probe", "open") labels the trace.
pub(crate) fn enumerate(phase: &str) -> Result<Vec<DeviceEntry>, OpenClError> {
    // One enumeration at a time. PoCL 3.1 initialises its devices lazily on the first
    // clGetDeviceIDs and, when two threads get there together, can tell one of them
    // CL_DEVICE_NOT_FOUND (seen with parallel tests); the first call in a process is always
    // this one, so serialising it serialises the driver's initialisation.
    static ENUMERATION: Mutex<()> = Mutex::new(());
    let _one_at_a_time = ENUMERATION
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    // The ICD loader loads every vendor library here (PoCL's pulls in libLLVM), whichever
    // device is wanted later.
    let platforms: Vec<cl_platform_id> =
        trace::time("opencl", format!("{phase}: clGetPlatformIDs"), || {
            get_platform_ids().map_err(map_platform_query("clGetPlatformIDs"))
        })?;
    if platforms.is_empty() {
        return Err(OpenClError::Unavailable {
            reason: "no OpenCL platforms (clGetPlatformIDs found none)".into(),
        });
    }
    let mut devices = Vec::new();
    // A broken vendor driver must not hide a working one: its failure is kept for the
    // "no devices" message and the other platforms are still listed.
    let mut failures = Vec::new();
    for &platform in &platforms {
        let platform_name = get_platform_data(platform, CL_PLATFORM_NAME)
            .map(|b| text(&b))
            .unwrap_or_else(|_| "unnamed platform".into());
        // The first call on a platform starts its devices.
        let ids = trace::time(
            "opencl",
            format!("{phase}: clGetDeviceIDs ({platform_name})"),
            || get_device_ids(platform, CL_DEVICE_TYPE_ALL),
        );
        match ids {
            Ok(ids) if ids.is_empty() => failures.push(format!("{platform_name}: no devices")),
            Ok(ids) => devices.extend(ids.into_iter().map(|device| DeviceEntry {
                platform_name: platform_name.clone(),
                device,
            })),
            Err(code) => failures.push(format!(
                "{platform_name}: clGetDeviceIDs failed with {}",
                cl_error_name(code)
            )),
        }
    }
    if devices.is_empty() {
        let mut reason = format!("{} OpenCL platform(s) but no devices", platforms.len());
        if !failures.is_empty() {
            reason.push_str(&format!(" ({})", failures.join("; ")));
        }
        return Err(OpenClError::Unavailable { reason });
    }
    Ok(devices)
}

/// The reply's bytes.
pub(crate) fn bytes(device: cl_device_id, q: Info) -> Result<Vec<u8>, OpenClError> {
    get_device_data(device, q.id).map_err(map_query("clGetDeviceInfo", q.name))
}

/// An unsigned reply (cl_uint, cl_ulong, size_t, cl_bool, cl_bitfield) widened to u64.
pub(crate) fn uint(device: cl_device_id, q: Info) -> Result<u64, OpenClError> {
    decode_uint(q.name, &bytes(device, q)?)
}

pub(crate) fn decode_uint(name: &str, b: &[u8]) -> Result<u64, OpenClError> {
    match b.len() {
        4 => Ok(u32::from_ne_bytes([b[0], b[1], b[2], b[3]]) as u64),
        8 => Ok(u64::from_ne_bytes([
            b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7],
        ])),
        n => Err(OpenClError::Malformed {
            query: name.into(),
            detail: format!("{n} bytes where a 4- or 8-byte integer was expected"),
        }),
    }
}

/// A string reply, without its terminating NUL.
pub(crate) fn string(device: cl_device_id, q: Info) -> Result<String, OpenClError> {
    Ok(text(&bytes(device, q)?))
}

fn text(b: &[u8]) -> String {
    let end = b.iter().position(|&c| c == 0).unwrap_or(b.len());
    String::from_utf8_lossy(&b[..end]).trim().to_string()
}

/// The device's extension list, for "is cl_khr_x supported" questions.
pub(crate) struct Extensions(String);

impl Extensions {
    pub(crate) fn query(device: cl_device_id) -> Result<Self, OpenClError> {
        Ok(Extensions(string(device, info!(CL_DEVICE_EXTENSIONS))?))
    }

    pub(crate) fn has(&self, name: &str) -> bool {
        self.0.split_whitespace().any(|e| e == name)
    }
}

/// Who the device is. `index` is its position in [`enumerate`]'s order.
pub(crate) fn identity(index: usize, entry: &DeviceEntry) -> Result<DeviceIdentity, OpenClError> {
    let d = entry.device;
    let ext = Extensions::query(d)?;
    let ty = uint(d, info!(CL_DEVICE_TYPE))?;
    let kind = if ty & CL_DEVICE_TYPE_GPU != 0 {
        DeviceKind::Gpu
    } else if ty & CL_DEVICE_TYPE_CPU != 0 {
        DeviceKind::Cpu
    } else {
        DeviceKind::Other
    };
    let uuid = if ext.has("cl_khr_device_uuid") {
        bytes(d, info!(CL_DEVICE_UUID_KHR))
            .ok()
            .and_then(|b| <[u8; 16]>::try_from(b.as_slice()).ok())
    } else {
        None
    };
    Ok(DeviceIdentity {
        api: crate::API,
        index,
        name: string(d, info!(CL_DEVICE_NAME))?,
        vendor: string(d, info!(CL_DEVICE_VENDOR))?,
        driver_version: string(d, info!(CL_DRIVER_VERSION))?,
        api_version: string(d, info!(CL_DEVICE_VERSION))?,
        platform: entry.platform_name.clone(),
        kind,
        uuid,
        pci_bus_id: pci_bus_id(d, &ext),
    })
}

/// "dddd:bb:dd.f" from cl_khr_pci_bus_info, else from NVIDIA's attribute queries (decoded as
/// clinfo does: slot = device << 3 | function). `None` where the domain cannot be known, since
/// a guessed domain would match the wrong GPU on a multi-domain server.
fn pci_bus_id(d: cl_device_id, ext: &Extensions) -> Option<String> {
    let format = |domain: u64, bus: u64, dev: u64, func: u64| {
        let part = |v: u64| u32::try_from(v).unwrap_or(u32::MAX);
        blocksweep_core::backend::pci_bus_id(part(domain), part(bus), part(dev), part(func))
    };
    if ext.has("cl_khr_pci_bus_info") {
        // struct cl_device_pci_bus_info_khr { cl_uint domain, bus, device, function; }
        let b = bytes(d, info!(CL_DEVICE_PCI_BUS_INFO_KHR)).ok()?;
        let f: Vec<u64> = b
            .chunks_exact(4)
            .map(|c| u32::from_ne_bytes([c[0], c[1], c[2], c[3]]) as u64)
            .collect();
        if f.len() == 4 {
            return Some(format(f[0], f[1], f[2], f[3]));
        }
    }
    if ext.has("cl_nv_device_attribute_query") {
        let bus = uint(d, info!(CL_DEVICE_PCI_BUS_ID_NV)).ok()?;
        let slot = uint(d, info!(CL_DEVICE_PCI_SLOT_ID_NV)).ok()?;
        let domain = uint(d, info!(CL_DEVICE_PCI_DOMAIN_ID_NV)).ok()?;
        return Some(format(domain, bus & 0xff, (slot >> 3) & 0xff, slot & 7));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_four_and_eight_byte_replies_and_refuses_others() {
        assert_eq!(decode_uint("q", &7u32.to_ne_bytes()).unwrap(), 7);
        assert_eq!(
            decode_uint("q", &(1u64 << 40).to_ne_bytes()).unwrap(),
            1 << 40
        );
        let e = decode_uint("CL_X", &[1, 2, 3]).unwrap_err();
        assert!(e.to_string().contains("CL_X returned 3 bytes"), "{e}");
    }

    #[test]
    fn strings_stop_at_the_nul() {
        assert_eq!(text(b"PoCL 3.1\0garbage"), "PoCL 3.1");
        assert_eq!(text(b"no nul "), "no nul");
    }
}
