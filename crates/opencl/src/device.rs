//! Device enumeration, identity and limits: everything clGetPlatformIDs, clGetDeviceIDs and
//! clGetDeviceInfo answer, without building a program.
//!
//! Every query goes through [`Info`], which carries the query's OpenCL name so that the
//! limits keep it (`CL_DEVICE_MAX_WORK_GROUP_SIZE`) and a failure names it. Replies are read
//! from raw bytes rather than through cl3's `InfoType` conversions, which panic when a driver
//! answers with an unexpected type.

use std::sync::Mutex;

use blocksweep_core::grid::nvidia_model;
use blocksweep_core::limits::Dims;
use blocksweep_core::{trace, DeviceIdentity, DeviceKind, Limits, Named};
use opencl3::device::{
    get_device_data, get_device_ids, CL_DEVICE_ADDRESS_BITS, CL_DEVICE_EXTENSIONS,
    CL_DEVICE_GLOBAL_MEM_CACHELINE_SIZE, CL_DEVICE_GLOBAL_MEM_CACHE_SIZE,
    CL_DEVICE_GLOBAL_MEM_SIZE, CL_DEVICE_HOST_UNIFIED_MEMORY, CL_DEVICE_LOCAL_MEM_SIZE,
    CL_DEVICE_MAX_CLOCK_FREQUENCY, CL_DEVICE_MAX_COMPUTE_UNITS, CL_DEVICE_MAX_MEM_ALLOC_SIZE,
    CL_DEVICE_MAX_WORK_GROUP_SIZE, CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS,
    CL_DEVICE_MAX_WORK_ITEM_SIZES, CL_DEVICE_NAME, CL_DEVICE_OPENCL_C_VERSION,
    CL_DEVICE_PCI_BUS_INFO_KHR, CL_DEVICE_PREFERRED_WORK_GROUP_SIZE_MULTIPLE,
    CL_DEVICE_PROFILING_TIMER_RESOLUTION, CL_DEVICE_TYPE, CL_DEVICE_TYPE_ALL, CL_DEVICE_TYPE_CPU,
    CL_DEVICE_TYPE_GPU, CL_DEVICE_UUID_KHR, CL_DEVICE_VENDOR, CL_DEVICE_VERSION, CL_DRIVER_VERSION,
};
use opencl3::platform::platform::{get_platform_data, get_platform_ids, CL_PLATFORM_NAME};
use opencl3::types::{cl_device_id, cl_device_info, cl_platform_id};

use crate::error::{cl_error_name, map_platform_query, map_query, OpenClError};

// cl_nv_device_attribute_query (values from the extension's registry entry; the PCI queries
// are undocumented but stable, and the ones clinfo uses).
const CL_DEVICE_COMPUTE_CAPABILITY_MAJOR_NV: cl_device_info = 0x4000;
const CL_DEVICE_COMPUTE_CAPABILITY_MINOR_NV: cl_device_info = 0x4001;
const CL_DEVICE_REGISTERS_PER_BLOCK_NV: cl_device_info = 0x4002;
const CL_DEVICE_WARP_SIZE_NV: cl_device_info = 0x4003;
const CL_DEVICE_GPU_OVERLAP_NV: cl_device_info = 0x4004;
const CL_DEVICE_KERNEL_EXEC_TIMEOUT_NV: cl_device_info = 0x4005;
const CL_DEVICE_INTEGRATED_MEMORY_NV: cl_device_info = 0x4006;
const CL_DEVICE_PCI_BUS_ID_NV: cl_device_info = 0x4008;
const CL_DEVICE_PCI_SLOT_ID_NV: cl_device_info = 0x4009;
const CL_DEVICE_PCI_DOMAIN_ID_NV: cl_device_info = 0x400A;

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

fn decode_uint(name: &str, b: &[u8]) -> Result<u64, OpenClError> {
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
        format!("{domain:04x}:{bus:02x}:{dev:02x}.{func:x}")
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

/// The device's launch limits under their OpenCL names. `warp_size` is left for the backend
/// to fill from the built kernel on devices without cl_nv_device_attribute_query.
pub(crate) fn limits(d: cl_device_id) -> Result<Limits, OpenClError> {
    let ext = Extensions::query(d)?;
    let named =
        |q: Info| -> Result<Named<u64>, OpenClError> { Ok(Named::new(uint(d, q)?, q.name)) };
    let dims_q = info!(CL_DEVICE_MAX_WORK_ITEM_SIZES);
    let sizes: Vec<u64> = bytes(d, dims_q)?
        .chunks(std::mem::size_of::<usize>())
        .map(|c| decode_uint(dims_q.name, c))
        .collect::<Result<_, _>>()?;
    // Fewer than three dimensions means y and z cannot exceed 1.
    let dim = |i: usize| sizes.get(i).copied().unwrap_or(1);
    let mut limits = Limits {
        max_threads_per_block: Some(named(info!(CL_DEVICE_MAX_WORK_GROUP_SIZE))?),
        max_block_dims: Some(Named::new(Dims([dim(0), dim(1), dim(2)]), dims_q.name)),
        // OpenCL bounds the global size only by size_t.
        max_grid_dims: None,
        multiprocessors: Some(named(info!(CL_DEVICE_MAX_COMPUTE_UNITS))?),
        shared_mem_per_block: Some(named(info!(CL_DEVICE_LOCAL_MEM_SIZE))?),
        max_alloc_bytes: Some(named(info!(CL_DEVICE_MAX_MEM_ALLOC_SIZE))?),
        global_mem_bytes: Some(named(info!(CL_DEVICE_GLOBAL_MEM_SIZE))?),
        l2_bytes: Some(named(info!(CL_DEVICE_GLOBAL_MEM_CACHE_SIZE))?).filter(|n| n.value > 0),
        timer_resolution_ns: {
            let q = info!(CL_DEVICE_PROFILING_TIMER_RESOLUTION);
            Some(Named::new(uint(d, q)? as f64, q.name))
        },
        ..Limits::default()
    };
    if ext.has("cl_nv_device_attribute_query") {
        add_nvidia(d, &mut limits)?;
    }
    for q in [
        info!(CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS),
        info!(CL_DEVICE_PREFERRED_WORK_GROUP_SIZE_MULTIPLE),
        info!(CL_DEVICE_MAX_CLOCK_FREQUENCY),
        info!(CL_DEVICE_GLOBAL_MEM_CACHELINE_SIZE),
        info!(CL_DEVICE_ADDRESS_BITS),
        info!(CL_DEVICE_HOST_UNIFIED_MEMORY),
        info!(CL_DEVICE_GPU_OVERLAP_NV),
        info!(CL_DEVICE_KERNEL_EXEC_TIMEOUT_NV),
        info!(CL_DEVICE_INTEGRATED_MEMORY_NV),
    ] {
        // Facts for the reader, not inputs: a device that does not answer one (a 1.2 device
        // has no CL_DEVICE_PREFERRED_WORK_GROUP_SIZE_MULTIPLE) simply does not list it.
        if q.name.ends_with("_NV") && !ext.has("cl_nv_device_attribute_query") {
            continue;
        }
        if let Ok(v) = uint(d, q) {
            limits.extra.push((q.name.to_string(), v.to_string()));
        }
    }
    if let Ok(v) = string(d, info!(CL_DEVICE_OPENCL_C_VERSION)) {
        limits.extra.push(("CL_DEVICE_OPENCL_C_VERSION".into(), v));
    }
    Ok(limits)
}

/// NVIDIA's cl_nv_device_attribute_query: warp size, registers, compute capability, and from
/// the capability the per-SM model the core's residency calculation needs.
fn add_nvidia(d: cl_device_id, limits: &mut Limits) -> Result<(), OpenClError> {
    let warp = uint(d, info!(CL_DEVICE_WARP_SIZE_NV))?;
    limits.warp_size = Some(Named::new(warp, "CL_DEVICE_WARP_SIZE_NV"));
    let regs = uint(d, info!(CL_DEVICE_REGISTERS_PER_BLOCK_NV))?;
    limits.registers_per_block = Some(Named::new(regs, "CL_DEVICE_REGISTERS_PER_BLOCK_NV"));
    let major = uint(d, info!(CL_DEVICE_COMPUTE_CAPABILITY_MAJOR_NV))? as u32;
    let minor = uint(d, info!(CL_DEVICE_COMPUTE_CAPABILITY_MINOR_NV))? as u32;
    limits.compute_capability = Some(Named::new(
        (major, minor),
        "CL_DEVICE_COMPUTE_CAPABILITY_MAJOR_NV/MINOR_NV",
    ));
    limits.mp_model = nvidia_model(major, minor, "cl_nv_device_attribute_query");
    if let Some(m) = &limits.mp_model {
        let origin = format!("model (sm_{major}{minor})");
        limits.max_threads_per_mp = Some(Named::new(
            m.max_warps as u64 * m.warp_size as u64,
            origin.clone(),
        ));
        limits.max_blocks_per_mp = Some(Named::new(m.max_blocks as u64, origin.clone()));
        if let Some(r) = m.registers {
            limits.registers_per_mp = Some(Named::new(r as u64, origin));
        }
    }
    Ok(())
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
