//! error.rs's unit tests.

use super::*;

#[test]
fn launch_errors_are_rejections_with_the_cuda_name() {
    for code in [
        CuCode::CUDA_ERROR_INVALID_VALUE,
        CuCode::CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES,
    ] {
        let b: BackendError = map_launch("block 2048 x grid 4", code).into();
        assert_eq!((b.kind, b.api), (ErrorKind::LaunchRejected, crate::API));
        assert!(b.message.contains(&code.name()), "{}", b.message);
        assert!(b.message.contains("block 2048 x grid 4"), "{}", b.message);
    }
    // A fault is not a refusal.
    let e = map_launch("block 64 x grid 1", CuCode::CUDA_ERROR_ILLEGAL_ADDRESS);
    assert_eq!(e.kind(), ErrorKind::Driver);
}

#[test]
fn each_call_site_classifies_its_codes() {
    let oom = CuCode::CUDA_ERROR_OUT_OF_MEMORY;
    assert_eq!(
        map_alloc("cuMemAlloc_v2", 1 << 40, oom).kind(),
        ErrorKind::OutOfMemory
    );
    assert_eq!(
        map_driver("cuMemsetD8Async", oom).kind(),
        ErrorKind::OutOfMemory
    );
    for code in [
        CuCode::CUDA_ERROR_NO_DEVICE,
        CuCode::CUDA_ERROR_STUB_LIBRARY,
        CuCode(36),
    ] {
        assert_eq!(map_init("cuInit", "x", code).kind(), ErrorKind::Unavailable);
    }
    let ptx = CuCode::CUDA_ERROR_UNSUPPORTED_PTX_VERSION;
    let e = map_module_load("cuModuleLoadDataEx", "embedded PTX", ptx, "ptxas fatal\n");
    assert_eq!(e.kind(), ErrorKind::Build);
    assert_eq!(
        e.to_string(),
        "cuModuleLoadDataEx (embedded PTX): CUDA_ERROR_UNSUPPORTED_PTX_VERSION: ptxas fatal"
    );
    // The same code means different things at different call sites.
    let inval = CuCode::CUDA_ERROR_INVALID_VALUE;
    assert_eq!(
        map_driver("cuMemcpyDtoHAsync_v2", inval).kind(),
        ErrorKind::Driver
    );
    assert_eq!(map_launch("x", inval).kind(), ErrorKind::LaunchRejected);
    let e = map_nvrtc(
        "nvrtcCompileProgram",
        NvrtcCode::NVRTC_ERROR_COMPILATION,
        "error: expected a \";\"".into(),
    );
    assert_eq!(e.kind(), ErrorKind::Build);
    assert!(e.to_string().contains("NVRTC_ERROR_COMPILATION"));
    assert!(e.to_string().contains("expected a"));
}

#[test]
fn start_up_messages_name_the_driver_and_the_reason() {
    let words = driver_words(Some("/x/libcuda.so.535.309.01"), Some(12020));
    let e = map_init("cuInit", &words, CuCode::CUDA_ERROR_NO_DEVICE);
    assert_eq!(
        e.to_string(),
        "CUDA driver 535.309.01 (CUDA 12.2) is installed, but cuInit failed: \
         CUDA_ERROR_NO_DEVICE (no NVIDIA GPU visible)"
    );
    let old = DriverLoadError::Missing {
        file: Some("/usr/lib/libcuda.so.470.256.02".into()),
        version: Some(11040),
        names: vec!["cuA", "cuB", "cuC", "cuD", "cuE"],
    };
    let e = CudaError::from(old);
    assert_eq!(e.kind(), ErrorKind::Unavailable);
    assert_eq!(
        e.to_string(),
        "the installed CUDA driver 470.256.02 (CUDA 11.4) lacks cuA, cuB, cuC and 2 more: \
         install NVIDIA driver R525 or newer (CUDA 12.0)"
    );
    assert_eq!(few_names(&["cuA"]), "cuA");
    assert_eq!(driver_words(None, Some(13000)), "for CUDA 13.0");
    assert_eq!(driver_words(None, None), "(libcuda.so.1)");
}

#[test]
fn faults_and_the_deadline_poison_the_context_and_refusals_do_not() {
    let faulted = [
        CuCode::CUDA_ERROR_ILLEGAL_ADDRESS,
        CuCode::CUDA_ERROR_LAUNCH_FAILED,
        CuCode::CUDA_ERROR_ILLEGAL_INSTRUCTION,
        CuCode::CUDA_ERROR_MISALIGNED_ADDRESS,
        CuCode::CUDA_ERROR_HARDWARE_STACK_ERROR,
        CuCode::CUDA_ERROR_ASSERT,
    ];
    for code in faulted {
        assert!(is_sticky(code), "{code:?}");
        // Wherever it surfaces: the wait, a copy, or the next launch.
        let e = map_driver("cuEventQuery", code);
        assert_eq!(e.poison(), Some(Poison::Faulted), "{e}");
        assert_eq!(e.kind(), ErrorKind::Driver);
        assert_eq!(map_launch("x", code).poison(), Some(Poison::Faulted));
    }
    for code in [
        CuCode::CUDA_ERROR_INVALID_VALUE,
        CuCode::CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES,
        CuCode::CUDA_ERROR_OUT_OF_MEMORY,
        CuCode::CUDA_ERROR_NOT_READY,
        CuCode::CUDA_ERROR_NOT_FOUND,
    ] {
        assert!(!is_sticky(code), "{code:?}");
        assert_eq!(map_launch("x", code).poison(), None);
    }
    let late = CudaError::Deadline {
        what: "the kernel",
        seconds: 0.5,
    };
    assert_eq!(late.poison(), Some(Poison::Busy));
    assert_eq!(late.kind(), ErrorKind::Driver);
    assert!(late
        .to_string()
        .starts_with("the kernel did not finish within 0.5 s"));
    let twenty = CudaError::Deadline {
        what: "the copy",
        seconds: 20.0,
    };
    assert!(twenty.to_string().contains("within 20 s"), "{twenty}");
    let after = CudaError::Unusable(late.to_string());
    assert_eq!((after.kind(), after.poison()), (ErrorKind::Driver, None));
    assert_eq!(CudaError::Program("x".into()).kind(), ErrorKind::Build);
    assert_eq!(CudaError::Usage("x".into()).poison(), None);
}

#[test]
fn missing_library_is_unavailable() {
    let e = CudaError::from(DriverLoadError::NotFound);
    assert_eq!(e.kind(), ErrorKind::Unavailable);
    assert_eq!(
        e.to_string(),
        "libcuda.so.1 not found (install NVIDIA driver R525 or newer: CUDA 12.0)"
    );
}

#[test]
fn the_first_poisoning_error_answers_every_later_call() {
    let mut h = Health::default();
    h.record(&CudaError::Usage(
        "write_buffer(2): argument 2 is not a buffer".into(),
    ));
    h.record(&map_launch(
        "block 2048 x grid 1",
        CuCode::CUDA_ERROR_INVALID_VALUE,
    ));
    assert!(
        h.check().is_ok(),
        "caller mistakes and refusals leave it usable"
    );
    let fault = map_driver("cuEventQuery", CuCode::CUDA_ERROR_ILLEGAL_ADDRESS);
    h.record(&fault);
    h.record(&CudaError::Deadline {
        what: "the kernel",
        seconds: 0.5,
    });
    let e = h.check().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Driver);
    assert_eq!(
        e.to_string(),
        format!("the CUDA context is unusable after an earlier error ({fault})")
    );
    assert!(!h.busy(), "a faulted context is torn down as usual");
    let mut late = Health::default();
    late.record(&CudaError::Deadline {
        what: "the copy",
        seconds: 20.0,
    });
    assert!(
        late.busy(),
        "a context still running a kernel is left alone"
    );
    assert!(late
        .check()
        .unwrap_err()
        .to_string()
        .contains("the copy did not finish"));
}
