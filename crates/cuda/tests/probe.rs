//! probe() and open() on any machine: devices where the driver is, a clean Unavailable error
//! (never a panic) where it is not.

use blocksweep_core::{DeviceKind, ErrorKind};
use blocksweep_cuda::{open, probe, CudaOptions};

fn driver_present() -> bool {
    // SAFETY: only tries to dlopen libcuda.
    unsafe { cudarc::driver::sys::is_culib_present() }
}

#[test]
fn probe_lists_devices_or_says_why_not() {
    match probe() {
        Ok(devices) => {
            assert!(!devices.is_empty());
            for (i, d) in devices.iter().enumerate() {
                assert_eq!(d.index, i, "index must be the position in probe()");
                assert_eq!(d.api, blocksweep_cuda::API);
                assert_eq!(d.kind, DeviceKind::Gpu);
                assert!(!d.name.is_empty());
                assert!(d.uuid.is_some());
                let pci = d.pci_bus_id.as_deref().unwrap();
                assert_eq!(pci.len(), 12, "{pci}");
                assert!(pci.ends_with(".0"), "{pci}");
                assert!(d.api_version.contains('.'), "{}", d.api_version);
                eprintln!(
                    "{}: {} uuid {} pci {} driver {} CUDA {}",
                    d.index,
                    d.name,
                    d.uuid_string().unwrap(),
                    pci,
                    d.driver,
                    d.api_version
                );
            }
        }
        Err(e) => {
            assert_eq!(e.kind(), ErrorKind::Unavailable, "{e}");
            if !driver_present() {
                assert_eq!(
                    e.to_string(),
                    "libcuda.so.1 not found (install NVIDIA driver R525 or newer: CUDA 12.0)"
                );
            }
            blocksweep_core::conformance::skip_unavailable(blocksweep_cuda::API, &e.to_string());
        }
    }
}

#[test]
fn open_without_a_device_is_unavailable_not_a_panic() {
    if driver_present() {
        // Past the last device: an Unavailable error naming the count.
        let count = probe().map(|d| d.len()).unwrap_or(0);
        match open(count + 7, &CudaOptions::default()) {
            Err(e) => assert_eq!(e.kind(), ErrorKind::Unavailable, "{e}"),
            Ok(_) => panic!("device {} should not exist", count + 7),
        }
        return;
    }
    let err = open(0, &CudaOptions::default())
        .err()
        .expect("no driver, no device");
    assert_eq!(err.kind(), ErrorKind::Unavailable);
    assert!(err.to_string().contains("libcuda.so.1"), "{err}");
    let backend_err: blocksweep_core::BackendError = err.into();
    assert_eq!(backend_err.kind, ErrorKind::Unavailable);
    assert_eq!(backend_err.api, blocksweep_cuda::API);
}
