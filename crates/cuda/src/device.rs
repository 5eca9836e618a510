//! Which devices exist and what they are: driver start-up, enumeration and identity
//! (`cuDeviceGetAttribute`); their launch limits are in `limits.rs`.
//!
//! Nothing here creates a context or compiles anything, so `probe` is cheap and safe to call
//! on any machine.

use std::ffi::c_char;

use blocksweep_core::{DeviceIdentity, DeviceKind, Named};
use cudarc::driver::sys::{CUdevice, CUdevice_attribute as A, CUuuid};

use crate::entry_points::{cu, driver_words, load_driver};
use crate::error::{map_driver, map_init, CudaError, OrMap, MIN_DRIVER};

/// The CUDA driver, started: its version and the words that name it in messages.
#[derive(Debug, Clone)]
pub(crate) struct DriverInfo {
    /// cuDriverGetVersion as (major, minor): the newest CUDA the driver implements.
    pub cuda: (i32, i32),
    /// "535.309.01 (CUDA 12.2)": the library file's version where known, and the CUDA version.
    pub words: String,
}

/// Loads libcuda (every entry point in the table, or an error naming the missing ones),
/// checks it implements CUDA 12.0 at least, and calls `cuInit`.
pub(crate) fn start_driver() -> Result<DriverInfo, CudaError> {
    let driver = load_driver()?;
    let mut v = 0;
    // SAFETY: cuDriverGetVersion writes one int and works before cuInit.
    unsafe { cu!(cuDriverGetVersion(&mut v)) }.or_map(map_driver)?;
    let words = driver_words(driver.file.as_deref(), Some(v));
    if v < 12000 {
        return Err(CudaError::Unavailable(format!(
            "the installed CUDA driver {words} is older than CUDA 12.0: install {MIN_DRIVER}"
        )));
    }
    // SAFETY: flags must be 0.
    unsafe { cu!(cuInit(0)) }.map_err(|f| map_init(f.call, &words, f.code))?;
    Ok(DriverInfo {
        cuda: (v / 1000, (v % 1000) / 10),
        words,
    })
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
    let mut v = 0;
    // SAFETY: dev came from cuDeviceGet; `a` is a valid enum value; one int out.
    unsafe { cu!(cuDeviceGetAttribute(&mut v, a, dev)) }.or_map(map_driver)?;
    Ok(v)
}

/// The native name of an attribute, e.g. `CU_DEVICE_ATTRIBUTE_WARP_SIZE` (the enum's
/// variants are the header's names).
pub(crate) fn attribute_name(a: A) -> String {
    format!("{a:?}")
}

pub(crate) fn named(dev: CUdevice, a: A) -> Result<Named<u64>, CudaError> {
    let v = attribute(dev, a)?;
    Ok(Named::new(v.max(0) as u64, attribute_name(a)))
}

/// The device handle of ordinal `index`.
pub(crate) fn device_handle(index: usize) -> Result<CUdevice, CudaError> {
    let ordinal = i32::try_from(index)
        .map_err(|_| CudaError::Unavailable(format!("CUDA device {index} does not exist")))?;
    let mut dev: CUdevice = 0;
    // SAFETY: one int out; the driver checks the ordinal.
    unsafe { cu!(cuDeviceGet(&mut dev, ordinal)) }.or_map(map_driver)?;
    Ok(dev)
}

/// Every device the driver sees, in ordinal order (the index `open` takes), and the driver.
pub(crate) fn enumerate() -> Result<(Vec<DeviceIdentity>, DriverInfo), CudaError> {
    let driver = start_driver()?;
    let mut count = 0;
    // SAFETY: one int out.
    unsafe { cu!(cuDeviceGetCount(&mut count)) }
        .map_err(|f| map_init(f.call, &driver.words, f.code))?;
    if count <= 0 {
        return Err(CudaError::Unavailable(format!(
            "CUDA driver {} is installed, but cuDeviceGetCount returned 0: no NVIDIA GPU visible",
            driver.words
        )));
    }
    let devices = (0..count as usize)
        .map(|i| identity(i, device_handle(i)?, driver.cuda))
        .collect::<Result<_, _>>()?;
    Ok((devices, driver))
}

fn device_name(dev: CUdevice) -> Result<String, CudaError> {
    let mut buf = [0 as c_char; 256];
    // SAFETY: the driver writes at most `len` bytes, NUL-terminated.
    unsafe { cu!(cuDeviceGetName(buf.as_mut_ptr(), buf.len() as i32, dev)) }.or_map(map_driver)?;
    let bytes: Vec<u8> = buf
        .iter()
        .map(|&c| c as u8)
        .take_while(|&c| c != 0)
        .collect();
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

fn device_uuid(dev: CUdevice) -> Result<[u8; 16], CudaError> {
    let mut uuid = CUuuid { bytes: [0; 16] };
    // SAFETY: one 16-byte struct out.
    unsafe { cu!(cuDeviceGetUuid_v2(&mut uuid, dev)) }.or_map(map_driver)?;
    Ok(uuid.bytes.map(|b| b as u8))
}

fn identity(index: usize, dev: CUdevice, version: (i32, i32)) -> Result<DeviceIdentity, CudaError> {
    let pci = (
        attribute(dev, A::CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID)?,
        attribute(dev, A::CU_DEVICE_ATTRIBUTE_PCI_BUS_ID)?,
        attribute(dev, A::CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID)?,
    );
    let api_version = format!("{}.{}", version.0, version.1);
    Ok(DeviceIdentity {
        api: crate::API,
        index,
        name: device_name(dev)?,
        vendor: "NVIDIA".into(),
        driver_version: kernel_module_version()
            .unwrap_or_else(|| format!("CUDA {api_version} driver")),
        api_version,
        platform: String::new(),
        kind: DeviceKind::Gpu,
        uuid: Some(device_uuid(dev)?),
        pci_bus_id: Some(pci_bus_id(pci.0, pci.1, pci.2)),
    })
}

/// "dddd:bb:dd.0": CUDA reports domain, bus and device; a CUDA device is function 0.
fn pci_bus_id(domain: i32, bus: i32, device: i32) -> String {
    let part = |v: i32| u32::try_from(v).unwrap_or(0);
    blocksweep_core::backend::pci_bus_id(part(domain), part(bus), part(device), 0)
}

#[cfg(test)]
mod tests {
    use super::*;

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
