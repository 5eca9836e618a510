//! program.rs without a device: what is refused before NVRTC or the JIT runs, and the names it
//! uses.

use super::*;
use blocksweep_core::ErrorKind;

#[test]
fn without_a_driver_there_is_no_parameter_info() {
    // No libcuda in unit tests: skipped, never a guess.
    assert_eq!(param_sizes(ptr::null_mut(), None), None);
}

fn cuda_source(entry: &str, options: &[&str]) -> ProgramSource {
    ProgramSource {
        language: CUDA_CPP,
        code: b"extern \"C\" __global__ void saxpy() {}".to_vec(),
        entry: entry.into(),
        origin: "examples/kernels/saxpy/saxpy.cu".into(),
        options: options.iter().map(|o| o.to_string()).collect(),
    }
}

#[test]
fn only_cuda_cpp_and_ptx_are_built_and_the_architecture_is_blocksweeps() {
    assert!(check_source(&cuda_source("saxpy", &["-DN=4", "--std=c++20"])).is_ok());
    let mut cl = cuda_source("saxpy", &[]);
    cl.language = blocksweep_core::Language::new("opencl", "OpenCL C");
    let e = check_source(&cl).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Build);
    assert_eq!(
        e.to_string(),
        "examples/kernels/saxpy/saxpy.cu: OpenCL C source; the CUDA backend builds CUDA C++ \
         (NVRTC) and PTX only"
    );
    for arch in ["-arch=sm_80", "--gpu-architecture=compute_75"] {
        let e = check_source(&cuda_source("saxpy", &[arch])).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Build);
        assert!(e.to_string().contains(arch), "{e}");
    }
    let e = check_source(&cuda_source(" ", &[])).unwrap_err();
    assert!(e.to_string().contains("no entry point"), "{e}");
}

#[test]
fn nvrtc_logs_name_the_source_file() {
    assert_eq!(unit_name("examples/kernels/saxpy/saxpy.cu"), "saxpy.cu");
    assert_eq!(unit_name("inline.cu"), "inline.cu");
    assert_eq!(unit_name(""), "program.cu");
    assert_eq!(unit_name("/"), "program.cu");
}

#[test]
fn ptx_is_taken_without_options_and_never_given_to_nvrtc() {
    let ptx = crate::builtin::source(
        blocksweep_core::KernelVariant::SharedProbe,
        crate::CudaCompiler::Ptx,
    );
    assert!(check_source(&ptx).is_ok());
    let with_option = ProgramSource {
        options: vec!["-DN=4".into()],
        ..ptx.clone()
    };
    let e = check_source(&with_option).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Build);
    assert!(e.to_string().contains("option '-DN=4'"), "{e}");
    let e = nvrtc_compile_program(&ptx, (9, 0)).unwrap_err();
    assert_eq!(
        e.to_string(),
        "kernels/grayscale.ptx: PTX source; NVRTC compiles CUDA C++"
    );
}
