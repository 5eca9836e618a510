//! Driver presence, device enumeration, identity and launch limits (`cuDeviceGetAttribute`).
//!
//! Nothing here creates a context or compiles anything, so `probe` is cheap and safe to call
//! on any machine.

use std::sync::OnceLock;

use blocksweep_core::limits::{Dims, MultiprocessorModel};
use blocksweep_core::{DeviceIdentity, DeviceKind, Limits, Named};
use cudarc::driver::result;
use cudarc::driver::sys::{self, CUdevice, CUdevice_attribute as A};

use crate::error::{map_driver, map_init, CudaError};

/// Every driver entry point this crate reaches through cudarc. cudarc resolves each symbol
/// on first use and panics if it is missing, so an older driver is checked against this list
/// first and turned into an `Unavailable` error naming what it lacks.
const DRIVER_SYMBOLS: &[&str] = &[
    "cuInit",
    "cuDriverGetVersion",
    "cuGetErrorName",
    "cuGetErrorString",
    "cuDeviceGet",
    "cuDeviceGetCount",
    "cuDeviceGetName",
    "cuDeviceGetUuid_v2",
    "cuDeviceGetAttribute",
    "cuDeviceTotalMem_v2",
    "cuDevicePrimaryCtxRetain",
    "cuDevicePrimaryCtxRelease_v2",
    "cuCtxGetCurrent",
    "cuCtxSetCurrent",
    "cuStreamCreate",
    "cuStreamDestroy_v2",
    "cuStreamSynchronize",
    "cuMemGetInfo_v2",
    "cuMemAlloc_v2",
    "cuMemFree_v2",
    "cuMemAllocAsync",
    "cuMemFreeAsync",
    "cuMemcpyHtoDAsync_v2",
    "cuMemcpyDtoHAsync_v2",
    "cuMemcpyDtoDAsync_v2",
    "cuMemsetD8Async",
    "cuMemsetD32Async",
    "cuModuleLoadData",
    "cuModuleGetFunction",
    "cuModuleUnload",
    "cuFuncGetAttribute",
    "cuOccupancyMaxActiveBlocksPerMultiprocessor",
    "cuOccupancyMaxPotentialBlockSize",
    "cuEventCreate",
    "cuEventRecord",
    "cuEventSynchronize",
    "cuEventElapsedTime_v2",
    "cuEventDestroy_v2",
    "cuLaunchKernel",
];

static DRIVER_PRESENT: OnceLock<bool> = OnceLock::new();

/// Whether libcuda has been found loadable (checked once; false until someone asks).
pub(crate) fn driver_loaded() -> bool {
    DRIVER_PRESENT.get().copied().unwrap_or(false)
}

/// Finds libcuda without letting cudarc panic, checks it has every entry point we use, and
/// calls `cuInit`. Returns the driver's CUDA version as (major, minor).
pub(crate) fn load_driver() -> Result<(i32, i32), CudaError> {
    // SAFETY: is_culib_present only tries to dlopen the candidate names.
    let present = *DRIVER_PRESENT.get_or_init(|| unsafe { sys::is_culib_present() });
    if !present {
        return Err(CudaError::LibraryMissing {
            library: "libcuda.so.1",
            hint: "install the NVIDIA driver",
        });
    }
    // SAFETY: the library is known to load, so culib() returns it instead of panicking.
    let lib = unsafe { sys::culib() };
    let missing: Vec<&str> = DRIVER_SYMBOLS
        .iter()
        .copied()
        // SAFETY: only looks the symbol up; the pointer is never called through this type.
        .filter(|s| unsafe { lib.get::<unsafe extern "C" fn()>(s.as_bytes()) }.is_err())
        .collect();
    if !missing.is_empty() {
        return Err(CudaError::Unavailable(format!(
            "the installed CUDA driver lacks {} (blocksweep-cuda uses the CUDA 13.0 driver API: \
             install NVIDIA driver R580 or newer)",
            missing.join(", ")
        )));
    }
    result::init().map_err(|e| map_init("cuInit", e))?;
    let mut v = 0;
    // SAFETY: cuDriverGetVersion writes one int.
    unsafe { sys::cuDriverGetVersion(&mut v) }
        .result()
        .map_err(|e| map_init("cuDriverGetVersion", e))?;
    Ok((v / 1000, (v % 1000) / 10))
}

/// The NVIDIA kernel module's version ("580.159.03") where Linux exposes it; the driver API
/// itself only reports the CUDA version it implements.
fn kernel_module_version() -> Option<String> {
    parse_nvrm_version(&std::fs::read_to_string("/proc/driver/nvidia/version").ok()?)
}

/// The version in the "NVRM version" line: the first word after "Kernel Module" made of
/// digits and dots ("... Open Kernel Module for x86_64  580.159.04  Release Build ...").
fn parse_nvrm_version(text: &str) -> Option<String> {
    let line = text.lines().find(|l| l.starts_with("NVRM version"))?;
    let after = line.split("Kernel Module").nth(1)?;
    after
        .split_whitespace()
        .find(|w| w.contains('.') && w.chars().all(|c| c.is_ascii_digit() || c == '.'))
        .map(str::to_string)
}

pub(crate) fn attribute(dev: CUdevice, a: A) -> Result<i32, CudaError> {
    // SAFETY: dev came from cuDeviceGet.
    unsafe { result::device::get_attribute(dev, a) }
        .map_err(|e| map_driver("cuDeviceGetAttribute", e))
}

/// The native name of an attribute, e.g. `CU_DEVICE_ATTRIBUTE_WARP_SIZE` (the enum's
/// variants are the header's names).
pub(crate) fn attribute_name(a: A) -> String {
    format!("{a:?}")
}

fn named(dev: CUdevice, a: A) -> Result<Named<u64>, CudaError> {
    let v = attribute(dev, a)?;
    Ok(Named::new(v.max(0) as u64, attribute_name(a)))
}

/// Every device the driver sees, in ordinal order (the index `open` takes).
pub fn probe() -> Result<Vec<DeviceIdentity>, CudaError> {
    let version = load_driver()?;
    let count = result::device::get_count().map_err(|e| map_init("cuDeviceGetCount", e))?;
    if count <= 0 {
        return Err(CudaError::Unavailable(
            "no CUDA devices (cuDeviceGetCount returned 0)".into(),
        ));
    }
    (0..count as usize)
        .map(|i| {
            let dev = result::device::get(i as i32).map_err(|e| map_driver("cuDeviceGet", e))?;
            identity(i, dev, version)
        })
        .collect()
}

fn identity(index: usize, dev: CUdevice, version: (i32, i32)) -> Result<DeviceIdentity, CudaError> {
    let name = result::device::get_name(dev).map_err(|e| map_driver("cuDeviceGetName", e))?;
    let uuid = result::device::get_uuid(dev).map_err(|e| map_driver("cuDeviceGetUuid_v2", e))?;
    let pci = (
        attribute(dev, A::CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID)?,
        attribute(dev, A::CU_DEVICE_ATTRIBUTE_PCI_BUS_ID)?,
        attribute(dev, A::CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID)?,
    );
    let api_version = format!("{}.{}", version.0, version.1);
    Ok(DeviceIdentity {
        api: crate::API,
        index,
        name,
        vendor: "NVIDIA".into(),
        driver: kernel_module_version().unwrap_or_else(|| format!("CUDA {api_version} driver")),
        api_version,
        platform: String::new(),
        kind: DeviceKind::Gpu,
        uuid: Some(uuid.bytes.map(|b| b as u8)),
        pci_bus_id: Some(pci_bus_id(pci.0, pci.1, pci.2)),
    })
}

/// "dddd:bb:dd.0": CUDA reports domain, bus and device; a CUDA device is function 0.
pub fn pci_bus_id(domain: i32, bus: i32, device: i32) -> String {
    format!("{domain:04x}:{bus:02x}:{device:02x}.0")
}

/// Peak DRAM bandwidth in GB/s from the memory clock (kHz) and bus width (bits), counting
/// two transfers per clock. `None` when the driver reports either as 0, as it may for
/// memory whose clock it does not expose.
pub fn theoretical_gbps(memory_clock_khz: i64, bus_width_bits: i64) -> Option<f64> {
    if memory_clock_khz <= 0 || bus_width_bits <= 0 {
        return None;
    }
    Some(2.0 * memory_clock_khz as f64 * 1e3 * (bus_width_bits as f64 / 8.0) / 1e9)
}

/// The device's launch limits, each under its CU_DEVICE_ATTRIBUTE name.
pub(crate) fn limits(dev: CUdevice) -> Result<Limits, CudaError> {
    let a = |attr| attribute(dev, attr);
    let dims = |x, y, z| -> Result<Dims, CudaError> {
        Ok(Dims([a(x)? as u64, a(y)? as u64, a(z)? as u64]))
    };
    // SAFETY: dev came from cuDeviceGet.
    let total = unsafe { result::device::total_mem(dev) }
        .map_err(|e| map_driver("cuDeviceTotalMem_v2", e))? as u64;
    let warp = a(A::CU_DEVICE_ATTRIBUTE_WARP_SIZE)?;
    let threads_mp = a(A::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR)?;
    let blocks_mp = a(A::CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR)?;
    let regs_mp = a(A::CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR)?;
    let major = a(A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)?;
    let minor = a(A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)?;
    let mem_clock = a(A::CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE)?;
    let bus = a(A::CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH)?;
    let mp_model = (warp > 0 && threads_mp > 0 && blocks_mp > 0).then(|| MultiprocessorModel {
        warp_size: warp as u32,
        max_warps: (threads_mp / warp) as u32,
        max_blocks: blocks_mp as u32,
        registers: (regs_mp > 0).then_some(regs_mp as u32),
        register_granularity: 256,
        source: "cuDeviceGetAttribute".into(),
    });
    let mut extra = Vec::new();
    for attr in [
        A::CU_DEVICE_ATTRIBUTE_CLOCK_RATE,
        A::CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE,
        A::CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH,
        A::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR,
        A::CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY,
        A::CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT,
        A::CU_DEVICE_ATTRIBUTE_ECC_ENABLED,
        A::CU_DEVICE_ATTRIBUTE_INTEGRATED,
        A::CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED,
        A::CU_DEVICE_ATTRIBUTE_COMPUTE_MODE,
    ] {
        extra.push((attribute_name(attr), a(attr)?.to_string()));
    }
    Ok(Limits {
        max_threads_per_block: Some(named(dev, A::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK)?),
        max_block_dims: Some(Named::new(
            dims(
                A::CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X,
                A::CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y,
                A::CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z,
            )?,
            "CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_{X,Y,Z}",
        )),
        max_grid_dims: Some(Named::new(
            dims(
                A::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X,
                A::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y,
                A::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z,
            )?,
            "CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_{X,Y,Z}",
        )),
        warp_size: Some(named(dev, A::CU_DEVICE_ATTRIBUTE_WARP_SIZE)?),
        multiprocessors: Some(named(dev, A::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?),
        max_threads_per_mp: Some(named(
            dev,
            A::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR,
        )?),
        max_blocks_per_mp: Some(named(
            dev,
            A::CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR,
        )?),
        shared_mem_per_block: Some(named(
            dev,
            A::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK,
        )?),
        shared_mem_per_block_optin: Some(named(
            dev,
            A::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
        )?),
        registers_per_block: Some(named(dev, A::CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK)?),
        registers_per_mp: Some(named(
            dev,
            A::CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR,
        )?),
        max_alloc_bytes: Some(Named::new(
            total,
            "cuDeviceTotalMem (no separate allocation limit)",
        )),
        max_buffer_binding_bytes: None,
        global_mem_bytes: Some(Named::new(total, "cuDeviceTotalMem")),
        l2_bytes: Some(named(dev, A::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE)?),
        theoretical_gbps: theoretical_gbps(mem_clock as i64, bus as i64).map(|g| {
            Named::new(
                g,
                "2 x MEMORY_CLOCK_RATE x GLOBAL_MEMORY_BUS_WIDTH / 8 (CU_DEVICE_ATTRIBUTE_*)",
            )
        }),
        timer_resolution_ns: Some(Named::new(
            crate::timing::EVENT_RESOLUTION_NS,
            crate::timing::EVENT_RESOLUTION_SOURCE,
        )),
        compute_capability: Some(Named::new(
            (major.max(0) as u32, minor.max(0) as u32),
            "CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR/MINOR",
        )),
        max_loop_iterations: None,
        mp_model,
        extra,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bandwidth_arithmetic() {
        // Tesla T4: 5001000 kHz GDDR6 on a 256-bit bus -> 320.064 GB/s (the datasheet's 320).
        let t4 = theoretical_gbps(5_001_000, 256).unwrap();
        assert!((t4 - 320.064).abs() < 1e-9, "{t4}");
        // H100 SXM as cuDeviceGetAttribute reports it: 2619000 kHz, 5120 bits.
        let h100 = theoretical_gbps(2_619_000, 5120).unwrap();
        assert!((h100 - 3352.32).abs() < 1e-6, "{h100}");
        // A driver that reports 0 leaves the field empty rather than claiming 0 GB/s.
        assert_eq!(theoretical_gbps(0, 5120), None);
        assert_eq!(theoretical_gbps(2_619_000, 0), None);
    }

    #[test]
    fn driver_version_from_proc() {
        let open = "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  \
                    Release Build  (nixbld@)\nGCC version:  gcc version 15.3.0 (GCC)\n";
        assert_eq!(parse_nvrm_version(open).as_deref(), Some("580.159.04"));
        let proprietary = "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.104.05  \
                           Sat Aug 19 01:15:15 UTC 2023\n";
        assert_eq!(
            parse_nvrm_version(proprietary).as_deref(),
            Some("535.104.05")
        );
        assert_eq!(parse_nvrm_version("something else"), None);
    }

    #[test]
    fn pci_address_format() {
        assert_eq!(pci_bus_id(0, 0x1b, 0), "0000:1b:00.0");
        assert_eq!(pci_bus_id(1, 0xc3, 0x1f), "0001:c3:1f.0");
    }

    #[test]
    fn attribute_names_are_native() {
        assert_eq!(
            attribute_name(A::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK),
            "CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK"
        );
    }
}
