//! program.rs without a device: argument packing, the declared parameters and their check,
//! what is refused before NVRTC runs.

use super::*;
use blocksweep_core::{ErrorKind, ScalarType};

fn scalar(ty: ScalarType, bytes: &[u8]) -> ProgramArg {
    ProgramArg::Scalar {
        ty,
        bytes: bytes.to_vec(),
    }
}

/// saxpy's arguments with a local one in the middle: y, x, a local, a = 2.5, n = 1000.
fn saxpy_args() -> Vec<ProgramArg> {
    vec![
        ProgramArg::Buffer { bytes: 4000 },
        ProgramArg::Buffer { bytes: 4000 },
        ProgramArg::Local,
        scalar(ScalarType::F32, &2.5f32.to_le_bytes()),
        scalar(ScalarType::U64, &1000u64.to_le_bytes()),
    ]
}

/// The bytes parameter `i` of `params` points at.
fn pointee(params: &Params, i: usize, len: usize) -> Vec<u8> {
    let p = params.pointers[i].cast::<u8>();
    // SAFETY: the test reads no more than the value packed there.
    unsafe { std::slice::from_raw_parts(p, len) }.to_vec()
}

#[test]
fn packing_gives_one_pointer_per_buffer_and_scalar_in_order() {
    let buffers = [Some(0xdead_0000), Some(0xbeef_0000), None, None, None];
    let params = Params::pack(&saxpy_args(), &buffers).unwrap();
    assert_eq!(params.pointers.len(), 4, "the local argument is skipped");
    assert_eq!(pointee(&params, 0, 8), 0xdead_0000u64.to_ne_bytes());
    assert_eq!(pointee(&params, 1, 8), 0xbeef_0000u64.to_ne_bytes());
    assert_eq!(pointee(&params, 2, 4), 2.5f32.to_le_bytes());
    assert_eq!(pointee(&params, 3, 8), 1000u64.to_le_bytes());
    for p in &params.pointers {
        assert!(
            p.cast::<u64>().is_aligned(),
            "every value is 8-byte aligned"
        );
    }
    assert_eq!(params.launch_arg().cast_const(), params.pointers.as_ptr());
}

#[test]
fn packed_values_stay_put_when_the_params_move() {
    let buffers = [Some(7), Some(8), None, None, None];
    let params = Params::pack(&saxpy_args(), &buffers).unwrap();
    let before = params.pointers.clone();
    let moved = Box::new(params);
    assert_eq!(moved.pointers, before);
    assert_eq!(pointee(&moved, 3, 8), 1000u64.to_le_bytes());
}

#[test]
fn packing_refuses_what_would_mislead_the_kernel() {
    // A buffer argument without its device buffer.
    let e = Params::pack(&saxpy_args(), &[Some(1)]).err().unwrap();
    assert!(
        e.to_string().contains("argument 1: no device buffer"),
        "{e}"
    );
    // A scalar whose bytes are not its type's size.
    let short = [scalar(ScalarType::F64, &[0; 4])];
    let e = Params::pack(&short, &[None]).err().unwrap();
    assert_eq!(e.to_string(), "argument 0: a f64 scalar given as 4 bytes");
    assert!(declared_params(&short).is_err());
    // No arguments: a null array.
    let none = Params::pack(&[], &[]).unwrap();
    assert!(none.launch_arg().is_null());
}

#[test]
fn declared_parameters_skip_locals_and_keep_argument_indices() {
    let d = declared_params(&saxpy_args()).unwrap();
    let seen: Vec<(usize, usize, &str)> = d.iter().map(|p| (p.arg, p.size, &*p.what)).collect();
    assert_eq!(
        seen,
        [
            (0, 8, "buffer"),
            (1, 8, "buffer"),
            (3, 4, "f32"),
            (4, 8, "u64")
        ]
    );
}

#[test]
fn the_check_names_both_counts_or_the_argument_that_does_not_fit() {
    let d = declared_params(&saxpy_args()).unwrap();
    assert!(check_params("saxpy", &d, &[8, 8, 4, 8]).is_ok());
    let e = check_params("saxpy", &d, &[8, 8, 4]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Build);
    let m = e.to_string();
    assert!(m.contains("'saxpy' takes 3 parameters"), "{m}");
    assert!(m.contains("but 4 arguments are declared"), "{m}");
    // u64 declared where the kernel takes an int.
    let e = check_params("saxpy", &d, &[8, 8, 4, 4]).unwrap_err();
    assert_eq!(
        e.to_string(),
        "argument 4 (u64, 8 bytes) does not fit parameter 3 of 'saxpy', which is 4 bytes \
         (cuFuncGetParamInfo)"
    );
}

#[test]
fn without_a_driver_there_is_no_parameter_info() {
    // No libcuda in unit tests: skipped, never a guess.
    assert_eq!(param_sizes(ptr::null_mut()), None);
}

fn cuda_source(entry: &str, options: &[&str]) -> ProgramSource {
    ProgramSource {
        language: Language::Cuda,
        code: b"extern \"C\" __global__ void saxpy() {}".to_vec(),
        entry: entry.into(),
        origin: "examples/kernels/saxpy/saxpy.cu".into(),
        options: options.iter().map(|o| o.to_string()).collect(),
    }
}

#[test]
fn only_cuda_cpp_is_built_and_the_architecture_is_blocksweeps() {
    assert!(check_source(&cuda_source("saxpy", &["-DN=4", "--std=c++20"])).is_ok());
    let mut cl = cuda_source("saxpy", &[]);
    cl.language = Language::OpenCl;
    let e = check_source(&cl).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Build);
    assert_eq!(
        e.to_string(),
        "examples/kernels/saxpy/saxpy.cu: OpenCL C source; the CUDA backend builds CUDA C++ \
         (NVRTC) only"
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
fn scalar_words_hold_the_bytes_in_order() {
    let w = words(&[1, 2, 3, 4]);
    assert_eq!(w.len(), 1);
    assert_eq!(&w[0].to_ne_bytes()[..4], [1, 2, 3, 4]);
    assert_eq!(words(&[9; 8]).len(), 1);
}
