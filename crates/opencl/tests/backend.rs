//! OpenCL-specific behaviour on every device this machine has: identity and limits under
//! their OpenCL names, the driver's own refusal names, build logs, per-kernel facts, release
//! errors, NVIDIA's ptxas register count, and the built-in kernels as programs. What every backend must do is the conformance kit's
//! (tests/conformance.rs).

mod common;

use std::process::{Command, ExitCode};

use blocksweep_conformance::{ignored, skip, BatchExt, Suite};
use blocksweep_core::builtin::{load, load_kernel, poison, prepare_launch, read, read_staged};
use blocksweep_core::{
    Backend, BlockSize, DeviceIdentity, DeviceKind, ErrorKind, Frame, GridSize, KernelFacts,
    KernelVariant, Launch, Named,
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
    let mut b = open_device(d);
    assert_eq!(b.kernel_facts(), &KernelFacts::default(), "no program yet");
    load_kernel(&mut b, KernelVariant::GridStride, 64, 4).unwrap();
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
    load(
        &mut b,
        KernelVariant::GridStride,
        &Frame::generate(64, 4, 3),
    )
    .unwrap();
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
    load(&mut b, KernelVariant::GridStride, &frame).unwrap();
    poison(&mut b, frame.pixels()).unwrap();
    b.dispatch_each(Launch::linear(BlockSize::linear(64), 4), 1, 2)
        .unwrap();
    read_staged(&mut b)
        .unwrap()
        .expect("a mapped staging buffer");
    b.copy_each(1 << 20, 1, 2).unwrap();
    drop(b);
    assert_eq!(take_release_errors(), Vec::<String>::new());
}

fn each_kernel_variant_has_its_own_facts(d: &DeviceIdentity) {
    let mut b = open_device(d);
    load_kernel(&mut b, KernelVariant::GridStride, 64, 4).unwrap();
    let grid_stride = b.kernel_facts().clone();
    load_kernel(&mut b, KernelVariant::OnePixelPerThread, 64, 4).unwrap();
    let one = b.kernel_facts().clone();
    assert_ne!(grid_stride.extra, one.extra, "facts name their kernel");
    assert!(one
        .extra
        .contains(&("kernel".into(), "grayscale_one_per_thread".into())));
    assert!(one
        .extra
        .contains(&("source".into(), "kernels/grayscale.cl".into())));
}

/// Each built-in kernel is a program of its own: a user's macro that breaks only the
/// register-heavy kernel's source (`salt` is its argument's name) leaves open() working and
/// the load of that kernel failing with the build log; no program is current then (empty
/// facts, a dispatch refused), and another built-in still loads and verifies.
fn a_broken_builtin_fails_alone(d: &DeviceIdentity) {
    let options = OpenClOptions {
        extra_build_options: "-D salt=0".into(),
    };
    let mut b = open(d.index, &options).expect("open builds no kernel it cannot");
    let frame = Frame::generate(67, 5, 3);
    let e = load(&mut b, KernelVariant::RegisterHeavy, &frame).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Build, "{e}");
    assert!(
        e.message.contains("BLOCKSWEEP_KERNEL_grayscale_registers")
            && e.message.contains("kernels/grayscale.cl"),
        "{e}"
    );
    assert_eq!(b.kernel_facts(), &KernelFacts::default());
    let e = b
        .dispatch_each(Launch::linear(BlockSize::linear(64), 2), 0, 1)
        .unwrap_err();
    assert!(e.message.contains("no program loaded"), "{e}");
    load(&mut b, KernelVariant::GridStride2D, &frame).unwrap();
    poison(&mut b, frame.pixels()).unwrap();
    b.dispatch_each(Launch::linear(BlockSize::linear(64), 2), 0, 1)
        .unwrap();
    let mut out = vec![0.0; frame.r.len()];
    read(&mut b, &mut out).unwrap();
    blocksweep_core::verify::verify(&out, &frame.reference()).unwrap();
}

/// A launch of `kernel` that covers a `frame` of width 67: 2-D work-groups for the 2-D
/// kernel, local memory for the shared one, one work-item per pixel for the guarded one.
fn covering_launch(kernel: KernelVariant, pixels: u64) -> Launch {
    match kernel {
        KernelVariant::GridStride2D => {
            Launch::new(BlockSize { x: 16, y: 2, z: 1 }, GridSize { x: 2, y: 1 })
        }
        KernelVariant::SharedProbe => Launch::linear(BlockSize::linear(64), 2).with_shared(1024),
        KernelVariant::OnePixelPerThread => {
            Launch::linear(BlockSize::linear(64), pixels.div_ceil(64) as u32)
        }
        _ => Launch::linear(BlockSize::linear(64), 2),
    }
}

/// builtin() gives every kernel of KernelVariant::ALL, and each, loaded as a program, verifies
/// a small frame read back both ways (staged and into the caller's memory); the guarded
/// kernel one work-group short leaves pixels unwritten, which verification finds.
fn every_builtin_verifies_a_frame(d: &DeviceIdentity) {
    let mut b = open_device(d);
    let frame = Frame::generate(67, 5, 3);
    let reference = frame.reference();
    for kernel in KernelVariant::ALL {
        let source = b.builtin(kernel).expect("a source for every built-in");
        assert_eq!(source.entry, kernel.entry());
        assert_eq!(source.language, blocksweep_opencl::OPENCL_C);
        assert_eq!(source.origin, "kernels/grayscale.cl");
        load(&mut b, kernel, &frame).unwrap();
        let launch = covering_launch(kernel, frame.pixels());
        poison(&mut b, frame.pixels()).unwrap();
        prepare_launch(&mut b, kernel, launch).unwrap();
        b.dispatch_each(launch, 0, 1).unwrap();
        let staged = read_staged(&mut b)
            .unwrap()
            .expect("a mapped staging buffer");
        let why = format!("{} at {launch}", kernel.entry());
        blocksweep_core::verify::verify(staged, &reference).expect(&why);
        let mut out = vec![0.0; frame.r.len()];
        read(&mut b, &mut out).unwrap();
        blocksweep_core::verify::verify(&out, &reference).expect(&why);
    }
    let kernel = KernelVariant::OnePixelPerThread;
    load(&mut b, kernel, &frame).unwrap();
    let full = covering_launch(kernel, frame.pixels());
    let short = Launch::linear(full.block, full.grid.x - 1);
    poison(&mut b, frame.pixels()).unwrap();
    b.dispatch_each(short, 0, 1).unwrap();
    let staged = read_staged(&mut b).unwrap().unwrap();
    assert!(blocksweep_core::verify::verify(staged, &reference).is_err());
    assert!(staged[..64].iter().all(|v| !v.is_nan()) && staged.last().unwrap().is_nan());
}

/// set_scalar gives the shared kernel its word count per launch: left at 0 (the load's
/// value), the kernel writes nothing; set for each launch's local memory, it verifies. A value
/// that is not a scalar's, or of another size, is refused.
fn set_scalar_sets_the_shared_kernels_words(d: &DeviceIdentity) {
    let mut b = open_device(d);
    let frame = Frame::generate(67, 5, 3);
    let kernel = KernelVariant::SharedProbe;
    load(&mut b, kernel, &frame).unwrap();
    let launch = |bytes| Launch::linear(BlockSize::linear(32), 3).with_shared(bytes);
    poison(&mut b, frame.pixels()).unwrap();
    b.dispatch_each(launch(1024), 0, 1).unwrap();
    let staged = read_staged(&mut b).unwrap().unwrap();
    assert!(
        staged.iter().all(|v| v.is_nan()),
        "words 0: nothing written"
    );
    for bytes in [12, 4096, 1024] {
        poison(&mut b, frame.pixels()).unwrap();
        prepare_launch(&mut b, kernel, launch(bytes)).unwrap();
        b.dispatch_each(launch(bytes), 0, 1).unwrap();
        let staged = read_staged(&mut b).unwrap().unwrap();
        blocksweep_core::verify::verify(staged, &frame.reference()).expect("words set");
    }
    let e = b.set_scalar(0, &[0; 8]).unwrap_err();
    assert!(e.message.contains("not a scalar"), "{e}");
    let e = b.set_scalar(5, &7u64.to_le_bytes()).unwrap_err();
    assert!(e.message.contains("8 bytes for a u32"), "{e}");
    assert!(b.set_scalar(9, &[0; 4]).is_err());
}

/// A staged read lends the kernel's part of the buffer only, its guard bands left out, and
/// keeps up with a buffer of another size; a write of a MiB or more, staged through the same
/// page-locked buffer, lands whole.
fn a_staged_read_leaves_out_the_guard_bands(d: &DeviceIdentity) {
    // A sub-buffer's offset must meet CL_DEVICE_MEM_BASE_ADDR_ALIGN: the core's band does.
    const GUARD: u64 = blocksweep_core::workload::guard::GUARD;
    let mut b = open_device(d);
    let copy = "__kernel void copy(__global const uint* x, __global uint* y) {
        y[get_global_id(0)] = x[get_global_id(0)];
    }";
    let source = blocksweep_core::ProgramSource {
        language: blocksweep_opencl::OPENCL_C,
        code: copy.as_bytes().to_vec(),
        entry: "copy".into(),
        origin: "tests/copy.cl".into(),
        options: vec![],
    };
    for n in [1u64 << 19, 16, 40] {
        let args = [
            blocksweep_core::ProgramArg::buffer(n * 4),
            blocksweep_core::ProgramArg::Buffer {
                bytes: n * 4,
                guard: GUARD,
            },
        ];
        b.load_program(&source, &args).unwrap();
        let x: Vec<u8> = (0..n as u32).flat_map(|v| v.to_le_bytes()).collect();
        b.write_buffer(0, &x).unwrap();
        b.write_buffer(1, &vec![0xEE; (n * 4 + 2 * GUARD) as usize])
            .unwrap();
        b.dispatch_each(Launch::linear(BlockSize::linear(8), n as u32 / 8), 0, 1)
            .unwrap();
        let mut written = vec![0u8; x.len()];
        b.read_buffer(0, 0, &mut written).unwrap();
        assert!(written == x, "n = {n}: the write landed whole");
        let staged = b.read_buffer_staged(1).unwrap().unwrap();
        assert!(staged == &x[..], "n = {n}");
        assert!(b.read_buffer_staged(7).is_err());
    }
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
        for v in [KernelVariant::GridStride, KernelVariant::OnePixelPerThread] {
            load_kernel(&mut b, v, 64, 4).unwrap();
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
        .each_device("broken_builtin_fails_alone", a_broken_builtin_fails_alone)
        .each_device("every_builtin_verifies", every_builtin_verifies_a_frame)
        .each_device(
            "set_scalar_sets_shared_words",
            set_scalar_sets_the_shared_kernels_words,
        )
        .each_device(
            "staged_read_leaves_out_guards",
            a_staged_read_leaves_out_the_guard_bands,
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
