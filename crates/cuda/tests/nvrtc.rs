//! NVRTC compiles kernels/grayscale.cu (no GPU needed); skipped where libnvrtc is absent.

use blocksweep_core::ErrorKind;
use blocksweep_cuda::{nvrtc_available, nvrtc_compile, CudaError, KERNEL_SOURCE};

fn skip() -> bool {
    if nvrtc_available() {
        return false;
    }
    eprintln!("SKIPPED: libnvrtc not found (put libnvrtc.so.13 on the loader path to run this)");
    true
}

#[test]
fn compiles_the_kernel_for_compute_90() {
    if skip() {
        return;
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
}

#[test]
fn compiles_for_the_oldest_target_too() {
    if skip() {
        return;
    }
    let out = nvrtc_compile(KERNEL_SOURCE, (7, 5)).unwrap();
    assert_eq!(out.arch, "compute_75");
    assert!(out.ptx.contains(".entry grayscale("));
}

#[test]
fn a_syntax_error_is_a_build_error_with_the_log() {
    if skip() {
        return;
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
}
