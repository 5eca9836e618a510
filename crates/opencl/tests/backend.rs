//! OpenCL-specific behaviour on every device this machine has: identity and limits under
//! their OpenCL names, the driver's own refusal names, build logs, per-kernel facts, release
//! errors, NVIDIA's ptxas register count. What every backend must do is the conformance kit's
//! (tests/conformance.rs).

mod common;

use std::process::{Command, ExitCode};

use blocksweep_conformance::{ignored, skip, BatchExt, Suite};
use blocksweep_core::{
    Backend, BlockSize, DeviceIdentity, DeviceKind, ErrorKind, Frame, KernelVariant, Launch, Named,
};
use blocksweep_opencl::{
    build_program_source, open, take_release_errors, OpenClError, OpenClOptions,
};
use common::{open_device, run_child, PASSED};

fn identity_is_opencls(d: &DeviceIdentity) {
    assert!(d.api_version.starts_with("OpenCL "), "{}", d.api_version);
    assert!(!d.platform.is_empty(), "{d:?}");
    // NVIDIA's driver exposes both cl_khr_device_uuid and its PCI queries.
    if d.platform.contains("NVIDIA") {
        assert!(d.uuid.is_some() && d.pci_bus_id.is_some(), "{d:?}");
    }
}

fn limits_and_kernel_facts_carry_opencl_names(d: &DeviceIdentity) {
    let b = open_device(d);
    let l = b.limits();
    let name = |n: &Option<Named<u64>>| n.as_ref().map(|n| n.name.clone());
    assert_eq!(
        name(&l.max_threads_per_block).as_deref(),
        Some("CL_DEVICE_MAX_WORK_GROUP_SIZE")
    );
    assert_eq!(
        l.max_block_dims.as_ref().unwrap().name,
        "CL_DEVICE_MAX_WORK_ITEM_SIZES"
    );
    assert_eq!(
        name(&l.multiprocessors).as_deref(),
        Some("CL_DEVICE_MAX_COMPUTE_UNITS")
    );
    assert_eq!(
        name(&l.max_alloc_bytes).as_deref(),
        Some("CL_DEVICE_MAX_MEM_ALLOC_SIZE")
    );
    assert_eq!(
        name(&l.global_mem_bytes).as_deref(),
        Some("CL_DEVICE_GLOBAL_MEM_SIZE")
    );
    assert_eq!(
        name(&l.shared_mem_per_block).as_deref(),
        Some("CL_DEVICE_LOCAL_MEM_SIZE")
    );
    assert!(l.max_grid_dims.is_none(), "OpenCL has no grid limit");
    let res = l.timer_resolution_ns.as_ref().unwrap();
    assert_eq!(res.name, "CL_DEVICE_PROFILING_TIMER_RESOLUTION");
    assert_eq!(b.timer().resolution_ns, res.value);
    assert!(b.timer().method.contains("CL_PROFILING_COMMAND_START"));
    let k = b.kernel_facts();
    assert_eq!(
        k.max_block.as_ref().unwrap().name,
        "CL_KERNEL_WORK_GROUP_SIZE"
    );
    assert!(
        k.preferred_multiple.is_some() && k.private_bytes.is_some() && k.shared_bytes.is_some()
    );
    assert!(
        k.compiled_by.starts_with("clBuildProgram ("),
        "{}",
        k.compiled_by
    );
    match l.compute_capability {
        // NVIDIA: warp size, model and ptxas's register count.
        Some(_) => {
            assert_eq!(
                name(&l.warp_size).as_deref(),
                Some("CL_DEVICE_WARP_SIZE_NV")
            );
            assert!(
                l.mp_model.is_some(),
                "a known compute capability gives a model"
            );
            // Every build compiles (a never-seen kernel name defeats the compute cache), so
            // ptxas's count is always there; nvidia_registers_come_from_ptxas checks its value.
            assert!(k.registers.is_some(), "{k:?}");
        }
        None => {
            assert_eq!(
                name(&l.warp_size).as_deref(),
                Some("CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE")
            );
            assert!(k.registers.is_none());
        }
    }
    if d.kind == DeviceKind::Cpu {
        assert!(l.mp_model.is_none(), "no residency model on a CPU device");
    }
}

/// The kit checks that a block above the limits is refused and leaves the backend usable;
/// here, that the refusal is OpenCL's own error, by name.
fn the_drivers_refusal_carries_its_cl_error_name(d: &DeviceIdentity) {
    let mut b = open_device(d);
    b.upload(&Frame::generate(64, 4, 3)).unwrap();
    // Above the device's limit too: NVIDIA runs blocks above its CL_KERNEL_WORK_GROUP_SIZE
    // (which it reports as 256 for every kernel), so only the device limit is refused.
    let device_max = b.limits().max_threads_per_block.as_ref().unwrap().value;
    let max = device_max.max(b.kernel_facts().max_block.as_ref().unwrap().value);
    let launch = Launch::linear(BlockSize::linear((max + 1) as u32), 1);
    let e = b.dispatch_each(launch, 0, 1).unwrap_err();
    assert!(
        e.message.contains("CL_INVALID_WORK_GROUP_SIZE")
            || e.message.contains("CL_INVALID_WORK_ITEM_SIZE"),
        "{e}"
    );
}

/// A copy buffer above CL_DEVICE_MAX_MEM_ALLOC_SIZE is refused by the core, naming the limit.
fn a_copy_above_max_alloc_is_refused(d: &DeviceIdentity) {
    let mut b = open_device(d);
    let max = b.limits().max_alloc_bytes.clone().unwrap();
    let why = b.limits().copy_fits(max.value + 1, 0).unwrap_err();
    assert!(why.contains("CL_DEVICE_MAX_MEM_ALLOC_SIZE"), "{why}");
    // The core's refusal is the rule; the driver's own answer varies: PoCL refuses the buffer;
    // NVIDIA's OpenCL on an H200 allocated and copied it with one fill (2026-11-30), and with
    // fills in 1 GiB pieces failed with its -9999 and left the platform unable to create
    // another context in the process (2026-12-01). The core never asks: NVIDIA is not asked.
    if b.limits().compute_capability.is_some() {
        return;
    }
    match b.copy_each(max.value + 1, 0, 1) {
        Err(e) => assert_eq!(e.kind, ErrorKind::OutOfMemory, "{e}"),
        Ok(times) => assert!(times.iter().all(|t| t.is_finite() && *t > 0.0), "{times:?}"),
    }
}

/// Every handle a backend made is released without an error.
fn releases_report_no_errors(d: &DeviceIdentity) {
    let mut b = open_device(d);
    let frame = Frame::generate(64, 4, 3);
    b.upload(&frame).unwrap();
    b.dispatch_each(Launch::linear(BlockSize::linear(64), 4), 1, 2)
        .unwrap();
    b.copy_each(1 << 20, 1, 2).unwrap();
    drop(b);
    assert_eq!(take_release_errors(), Vec::<String>::new());
}

fn each_kernel_variant_has_its_own_facts(d: &DeviceIdentity) {
    let mut b = open_device(d);
    let grid_stride = b.kernel_facts().clone();
    b.set_kernel(KernelVariant::OnePixelPerThread).unwrap();
    let one = b.kernel_facts().clone();
    assert_ne!(grid_stride.extra, one.extra, "facts name their kernel");
    assert!(one
        .extra
        .contains(&("kernel".into(), "grayscale_one_per_thread".into())));
}

/// Opening builds the grid-stride kernel alone, and each other one is built when first
/// selected: a user's macro that breaks only the register-heavy kernel's source (`salt` is its
/// argument's name) leaves open() working and makes set_kernel fail with the build log, the
/// selection unchanged. A kernel built with a frame already up is bound to it.
fn variants_build_when_first_selected(d: &DeviceIdentity) {
    let options = OpenClOptions {
        extra_build_options: "-D salt=0".into(),
    };
    let mut b = open(d.index, &options).expect("open builds only the grid-stride kernel");
    let frame = Frame::generate(67, 5, 3);
    b.upload(&frame).unwrap();
    let e = b.set_kernel(KernelVariant::RegisterHeavy).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Build, "{e}");
    assert!(
        e.message.contains("BLOCKSWEEP_KERNEL_grayscale_registers"),
        "{e}"
    );
    let kernel = |b: &blocksweep_opencl::OpenClBackend| {
        let facts = b.kernel_facts();
        facts
            .extra
            .iter()
            .find(|(k, _)| k == "kernel")
            .unwrap()
            .1
            .clone()
    };
    assert_eq!(
        kernel(&b),
        "grayscale",
        "a failed build keeps the selection"
    );
    b.set_kernel(KernelVariant::GridStride2D).unwrap();
    assert_eq!(kernel(&b), "grayscale_2d");
    b.poison_output().unwrap();
    b.dispatch_each(Launch::linear(BlockSize::linear(64), 2), 0, 1)
        .unwrap();
    let mut out = vec![0.0; frame.r.len()];
    b.read_output(&mut out).unwrap();
    blocksweep_core::verify::verify(&out, &frame.reference()).unwrap();
}

fn a_broken_program_returns_its_build_log(d: &DeviceIdentity) {
    let ok = build_program_source(d.index, blocksweep_opencl::KERNEL_SOURCE, "-cl-std=CL1.2");
    assert!(ok.is_ok(), "{ok:?}");
    let broken = "__kernel void broken(__global float* out) { out[0] = undeclared_name; }";
    let e = build_program_source(d.index, broken, "-cl-std=CL1.2").expect_err("it must not build");
    let OpenClError::Build { log, name, .. } = &e else {
        panic!("not a build error: {e}")
    };
    assert_eq!(name, "CL_BUILD_PROGRAM_FAILURE");
    assert!(
        log.contains("undeclared_name"),
        "the log names the error: {log}"
    );
    assert!(e.to_string().contains(log.as_str()));
    assert_eq!(
        blocksweep_core::BackendError::from(e).kind,
        ErrorKind::Build
    );
}

/// NVIDIA's driver prints ptxas's report only when it compiles, and serves a source it has
/// seen from its compute cache; the backend adds a kernel with a new name to every build, so
/// a child process with the cache ON (the default) must still see the report.
fn nvidia_registers_come_from_ptxas(
    devices: &[DeviceIdentity],
) -> blocksweep_conformance::Completion {
    if !devices.iter().any(|d| d.platform.contains("NVIDIA")) {
        return skip("no NVIDIA OpenCL device: no ptxas report to read");
    }
    let exe = std::env::current_exe().unwrap();
    run_child(
        Command::new(exe).env_remove("CUDA_CACHE_DISABLE"),
        "child_nvidia_registers",
    );
    blocksweep_conformance::Completion::Completed
}

fn child_nvidia_registers() {
    let devs = blocksweep_opencl::probe().expect("the parent test found devices");
    for d in devs.iter().filter(|d| d.platform.contains("NVIDIA")) {
        let mut b = open_device(d);
        assert!(b.build_log().contains("ptxas info"), "{}", b.build_log());
        for v in [KernelVariant::GridStride, KernelVariant::OnePixelPerThread] {
            b.set_kernel(v).unwrap();
            let regs = b
                .kernel_facts()
                .registers
                .clone()
                .expect("ptxas register count");
            assert_eq!(regs.name, "ptxas (-cl-nv-verbose)");
            assert!((1..=255).contains(&regs.value), "{}", regs.value);
            println!("{} {v:?}: {} registers", d.name, regs.value);
        }
    }
    println!("{PASSED}");
}

fn main() -> ExitCode {
    Suite::new(&blocksweep_opencl::PROVIDER)
        .each_device("identity_is_opencls", identity_is_opencls)
        .each_device(
            "limits_carry_opencl_names",
            limits_and_kernel_facts_carry_opencl_names,
        )
        .each_device(
            "refusal_names_the_cl_error",
            the_drivers_refusal_carries_its_cl_error_name,
        )
        .each_device("copy_above_max_alloc", a_copy_above_max_alloc_is_refused)
        .each_device("releases_report_no_errors", releases_report_no_errors)
        .each_device(
            "kernel_variants_have_own_facts",
            each_kernel_variant_has_its_own_facts,
        )
        .each_device(
            "variants_build_when_first_selected",
            variants_build_when_first_selected,
        )
        .each_device(
            "broken_program_build_log",
            a_broken_program_returns_its_build_log,
        )
        .all_devices(
            "nvidia_registers_come_from_ptxas",
            nvidia_registers_come_from_ptxas,
        )
        .test(ignored("child_nvidia_registers"), child_nvidia_registers)
        .run()
}
