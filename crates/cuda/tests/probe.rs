//! probe() and open() on any machine: devices where the driver is, a clean Unavailable error
//! (never a panic) where it is not. (With devices, the conformance kit and tests/device.rs
//! check each one, and opening past the last one.)

#![warn(clippy::undocumented_unsafe_blocks)]

use std::process::ExitCode;

use blocksweep_conformance::{skip, Completion, Harness};
use blocksweep_core::ErrorKind;
use blocksweep_cuda::{open, probe, CudaOptions};

fn driver_present() -> bool {
    // SAFETY: only tries to dlopen libcuda.
    unsafe { cudarc::driver::sys::is_culib_present() }
}

fn probe_lists_devices_or_says_why_not() {
    match probe() {
        Ok(devices) => assert!(!devices.is_empty(), "an empty list must be an error"),
        Err(e) => {
            assert_eq!(e.kind(), ErrorKind::Unavailable, "{e}");
            if !driver_present() {
                let msg = e.to_string();
                assert!(
                    msg.starts_with("libcuda.so.1 not found (install ") && msg.contains("driver"),
                    "{msg}"
                );
            }
        }
    }
}

fn without_a_driver_open_is_unavailable_not_a_panic() -> Completion {
    if driver_present() {
        return skip("libcuda.so.1 loads here: the kit's open_past_last_device covers open()");
    }
    let err = open(0, &CudaOptions::default())
        .err()
        .expect("no driver, no device");
    assert_eq!(err.kind(), ErrorKind::Unavailable);
    assert!(err.to_string().contains("libcuda.so.1"), "{err}");
    let backend_err: blocksweep_core::BackendError = err.into();
    assert_eq!(backend_err.kind, ErrorKind::Unavailable);
    assert_eq!(backend_err.api, blocksweep_cuda::API);
    Completion::Completed
}

fn main() -> ExitCode {
    Harness::new()
        .test(
            "probe_lists_devices_or_says_why_not",
            probe_lists_devices_or_says_why_not,
        )
        .test(
            "without_a_driver_open_is_unavailable_not_a_panic",
            without_a_driver_open_is_unavailable_not_a_panic,
        )
        .run()
}
