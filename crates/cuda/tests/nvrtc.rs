//! NVRTC compiles kernels/grayscale.cu (no GPU needed); skipped where libnvrtc is absent,
//! failed instead when BLOCKSWEEP_REQUIRE names `nvrtc` (tools/ci/cuda-floor-check.sh runs
//! these against NVRTC 12.0).

mod common;

use std::process::ExitCode;

use blocksweep_conformance::{show, skip, Completion, Harness};
use blocksweep_core::{ErrorKind, ProgramSource};
use blocksweep_cuda::{
    nvrtc_compile, nvrtc_compile_cubin, nvrtc_compile_program, CudaError, KERNEL_SOURCE,
};
use common::nvrtc_loads;

/// `None` when libnvrtc loads, else the skip saying why (a failure when BLOCKSWEEP_REQUIRE
/// names nvrtc).
fn nvrtc_missing() -> Option<Completion> {
    (!nvrtc_loads()).then(|| {
        skip("libnvrtc not found (put libnvrtc.so.13 or .12 on the loader path to run this)")
    })
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

/// A user's kernel as a spec file gives it.
fn user(code: &str, entry: &str, origin: &str, options: &[&str]) -> ProgramSource {
    ProgramSource {
        language: blocksweep_cuda::CUDA_CPP,
        code: code.as_bytes().to_vec(),
        entry: entry.into(),
        origin: origin.into(),
        options: options.iter().map(|o| o.to_string()).collect(),
    }
}

const SAXPY: &str = r#"
#ifndef SCALE
#error SCALE is not defined
#endif
extern "C" __global__ void saxpy(float* y, const float* x, float a, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = SCALE * a * x[i] + y[i];
}
"#;

fn a_users_kernel_compiles_with_its_options() -> Completion {
    if let Some(skipped) = nvrtc_missing() {
        return skipped;
    }
    let src = user(SAXPY, "saxpy", "examples/saxpy.cu", &["-DSCALE=2"]);
    let out = nvrtc_compile_program(&src, (9, 0)).expect("saxpy compiles");
    assert_eq!(
        out.options,
        ["--gpu-architecture=compute_90", "--std=c++17", "-DSCALE=2"]
    );
    // extern "C": the name expression lowers to the name itself.
    assert_eq!(out.lowered.as_deref(), Some("saxpy"));
    assert!(out.ptx.contains(".entry saxpy("), "{}", out.ptx);
    // The user's standard replaces the default.
    let src = user(SAXPY, "saxpy", "saxpy.cu", &["-DSCALE=2", "--std=c++14"]);
    let out = nvrtc_compile_program(&src, (9, 0)).unwrap();
    assert!(
        !out.options.iter().any(|o| o == "--std=c++17"),
        "{:?}",
        out.options
    );
    Completion::Completed
}

fn a_cpp_entry_lowers_to_its_mangled_name() -> Completion {
    if let Some(skipped) = nvrtc_missing() {
        return skipped;
    }
    let code = r#"
__global__ void scale(float* y, float a, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] *= a;
}
template <typename T> __global__ void twice(T* y) { y[threadIdx.x] *= T(2); }
"#;
    for entry in ["scale", "twice<float>"] {
        let out = nvrtc_compile_program(&user(code, entry, "scale.cu", &[]), (9, 0)).unwrap();
        let lowered = out.lowered.expect("a lowered name");
        show!("{entry} -> {lowered}");
        assert!(lowered.starts_with("_Z"), "{entry}: {lowered}");
        assert!(
            out.ptx.contains(&format!(".entry {lowered}(")),
            "{entry}: {lowered}"
        );
    }
    Completion::Completed
}

fn a_users_build_errors_name_the_file() -> Completion {
    if let Some(skipped) = nvrtc_missing() {
        return skipped;
    }
    let bad = user(SAXPY, "saxpy", "kernels/user/bad.cu", &[]);
    let err = nvrtc_compile_program(&bad, (9, 0)).expect_err("SCALE is not defined");
    assert_eq!(err.kind(), ErrorKind::Build);
    let log = err.to_string();
    assert!(log.contains("bad.cu(3): "), "{log}");
    assert!(log.contains("SCALE is not defined"), "{log}");
    // An entry the source lacks fails the name expression: load_program's second try then
    // says to declare it extern "C" __global__.
    let missing = user(SAXPY, "nope", "saxpy.cu", &["-DSCALE=1"]);
    let err = nvrtc_compile_program(&missing, (9, 0)).expect_err("no such entry");
    assert_eq!(err.kind(), ErrorKind::Build, "{err}");
    show!("missing entry: {err}");
    let arch = user(SAXPY, "saxpy", "saxpy.cu", &["-arch=sm_80"]);
    let err = nvrtc_compile_program(&arch, (9, 0)).expect_err("the architecture is ours");
    assert!(err.to_string().contains("'-arch=sm_80'"), "{err}");
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
        .test(
            "a_users_kernel_compiles_with_its_options",
            a_users_kernel_compiles_with_its_options,
        )
        .test(
            "a_cpp_entry_lowers_to_its_mangled_name",
            a_cpp_entry_lowers_to_its_mangled_name,
        )
        .test(
            "a_users_build_errors_name_the_file",
            a_users_build_errors_name_the_file,
        )
        .run()
}
