//! NVRTC compiles kernels/grayscale.cu (no GPU needed); skipped where libnvrtc is absent,
//! failed instead when BLOCKSWEEP_REQUIRE names `nvrtc` (tools/ci/cuda-floor-check.sh runs
//! these against NVRTC 12.0).

use std::process::ExitCode;

use blocksweep_conformance::{show, skip, Completion, Harness};
use blocksweep_core::ErrorKind;
use blocksweep_cuda::{
    nvrtc_available, nvrtc_compile, nvrtc_compile_cubin, CudaError, KERNEL_SOURCE,
};

/// `None` when libnvrtc loads, else the skip saying why (a failure when BLOCKSWEEP_REQUIRE
/// names nvrtc).
fn nvrtc_missing() -> Option<Completion> {
    if nvrtc_available() {
        return None;
    }
    let required = std::env::var("BLOCKSWEEP_REQUIRE")
        .is_ok_and(|r| r.split(',').any(|k| k.trim() == "nvrtc"));
    assert!(
        !required,
        "BLOCKSWEEP_REQUIRE names nvrtc, but no libnvrtc.so.13 / .12 loads"
    );
    Some(skip(
        "libnvrtc not found (put libnvrtc.so.13 or .12 on the loader path to run this)",
    ))
}

fn compiles_the_kernel_for_compute_90() -> Completion {
    if let Some(skipped) = nvrtc_missing() {
        return skipped;
    }
    let out = nvrtc_compile(KERNEL_SOURCE, (9, 0)).expect("NVRTC compiles grayscale.cu");
    assert_eq!(out.arch, "compute_90");
    assert!(out
        .options
        .contains(&"--gpu-architecture=compute_90".to_string()));
    assert!(out.ptx.contains(".target sm_90"));
    assert!(out.ptx.contains(".entry grayscale("));
    assert!(out.ptx.contains(".entry grayscale_one_per_thread("));
    assert!(!out.ptx.contains('\0'));
    assert!(out.version.0 >= 12, "{:?}", out.version);
    Completion::Completed
}

fn compiles_for_the_oldest_target_too() -> Completion {
    if let Some(skipped) = nvrtc_missing() {
        return skipped;
    }
    let out = nvrtc_compile(KERNEL_SOURCE, (7, 5)).unwrap();
    assert_eq!(out.arch, "compute_75");
    assert!(out.ptx.contains(".entry grayscale("));
    Completion::Completed
}

fn compiles_a_cubin_for_the_device_architecture() -> Completion {
    if let Some(skipped) = nvrtc_missing() {
        return skipped;
    }
    // The path taken where NVRTC is newer than the driver (same major): SASS for the device.
    let out = nvrtc_compile_cubin(KERNEL_SOURCE, (7, 5)).expect("NVRTC builds an sm_75 cubin");
    assert_eq!(out.arch, "sm_75");
    assert!(out
        .options
        .contains(&"--gpu-architecture=sm_75".to_string()));
    assert_eq!(&out.cubin[..4], b"\x7fELF", "a cubin is an ELF image");
    show!("NVRTC {:?}: {} byte cubin", out.version, out.cubin.len());
    Completion::Completed
}

fn a_syntax_error_is_a_build_error_with_the_log() -> Completion {
    if let Some(skipped) = nvrtc_missing() {
        return skipped;
    }
    let err = nvrtc_compile(
        "extern \"C\" __global__ void k() { this is not C++ }",
        (9, 0),
    )
    .expect_err("must not compile");
    assert_eq!(err.kind(), ErrorKind::Build);
    match &err {
        CudaError::Nvrtc { call, log, .. } => {
            assert_eq!(*call, "nvrtcCompileProgram");
            assert!(log.contains("error"), "log: {log}");
        }
        other => panic!("expected an NVRTC error, got {other:?}"),
    }
    assert!(err.to_string().contains("NVRTC_ERROR_COMPILATION"), "{err}");
    Completion::Completed
}

fn main() -> ExitCode {
    Harness::new()
        .test(
            "compiles_the_kernel_for_compute_90",
            compiles_the_kernel_for_compute_90,
        )
        .test(
            "compiles_for_the_oldest_target_too",
            compiles_for_the_oldest_target_too,
        )
        .test(
            "compiles_a_cubin_for_the_device_architecture",
            compiles_a_cubin_for_the_device_architecture,
        )
        .test(
            "a_syntax_error_is_a_build_error_with_the_log",
            a_syntax_error_is_a_build_error_with_the_log,
        )
        .run()
}
