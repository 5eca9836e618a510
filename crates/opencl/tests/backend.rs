//! OpenCL-specific behaviour on every device this machine has: identity, native limit names,
//! launch refusals, memory refusals, the device-to-device copy, build logs, 3-D blocks.

mod common;

use blocksweep_core::conformance::BatchExt;
use blocksweep_core::sweep::{self, Quiet, SweepConfig};
use blocksweep_core::{
    Backend, BlockSize, DeviceKind, ErrorKind, Frame, GridPolicy, KernelVariant, Launch,
};
use blocksweep_opencl::{
    build_program_source, open, take_release_errors, OpenClError, OpenClOptions,
};
use common::{devices, open_device, run_child, PASSED};

#[test]
fn probe_lists_devices_in_index_order_with_their_identity() {
    let Some(devs) = devices() else { return };
    for (i, d) in devs.iter().enumerate() {
        assert_eq!(d.index, i);
        assert_eq!(d.api, blocksweep_opencl::API);
        assert!(d.api_version.starts_with("OpenCL "), "{}", d.api_version);
        assert!(!d.platform.is_empty() && !d.driver.is_empty() && !d.vendor.is_empty());
        if let Some(pci) = &d.pci_bus_id {
            let parts: Vec<&str> = pci.split([':', '.']).collect();
            assert_eq!(
                parts.iter().map(|p| p.len()).collect::<Vec<_>>(),
                [4, 2, 2, 1],
                "{pci}"
            );
        }
        // NVIDIA's driver exposes both cl_khr_device_uuid and its PCI queries.
        if d.platform.contains("NVIDIA") {
            assert!(d.uuid.is_some() && d.pci_bus_id.is_some(), "{d:?}");
        }
        // open() must describe the same device probe() listed.
        assert_eq!(open_device(d).identity(), d);
    }
}

#[test]
fn limits_and_kernel_facts_carry_opencl_names() {
    let Some(devs) = devices() else { return };
    for d in &devs {
        let b = open_device(d);
        let l = b.limits();
        let name = |n: &Option<blocksweep_core::Named<u64>>| n.as_ref().map(|n| n.name.clone());
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
        assert!(k.max_block.as_ref().unwrap().value >= 1);
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
                // The count itself is checked by nvidia_registers_come_from_ptxas; here, a
                // missing one must say why.
                if k.registers.is_none() {
                    let why = k.extra.iter().find(|(n, _)| n == "registers");
                    assert!(
                        why.is_some_and(|(_, v)| v.contains("CUDA_CACHE_DISABLE")),
                        "{k:?}"
                    );
                }
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
        println!("{} limits: {:#?}\nkernel: {:#?}", d.name, l, k);
    }
}

#[test]
fn a_block_above_the_kernel_limit_is_rejected_by_the_driver_with_its_name() {
    let Some(devs) = devices() else { return };
    for d in &devs {
        let mut b = open_device(d);
        b.upload(&Frame::generate(64, 4, 3)).unwrap();
        // Above the device's limit too: NVIDIA runs blocks above its CL_KERNEL_WORK_GROUP_SIZE
        // (which it reports as 256 for every kernel), so only the device limit is refused.
        let device_max = b.limits().max_threads_per_block.as_ref().unwrap().value;
        let max = device_max.max(b.kernel_facts().max_block.as_ref().unwrap().value);
        // Bypasses the sweep's own limit check on purpose: the driver must refuse, and say so.
        let launch = Launch::linear(BlockSize::linear((max + 1) as u32), 1);
        let e = b.dispatch_each(launch, 0, 1).unwrap_err();
        assert_eq!(e.kind, ErrorKind::LaunchRejected, "{e}");
        assert!(
            e.message.contains("CL_INVALID_WORK_GROUP_SIZE")
                || e.message.contains("CL_INVALID_WORK_ITEM_SIZE"),
            "{e}"
        );
        assert!(e.message.contains(&format!("block {}", max + 1)), "{e}");
        // The backend is still usable after a refusal.
        b.poison_output().unwrap();
        let ok = Launch::linear(BlockSize::linear(64), 1);
        assert_eq!(b.dispatch_each(ok, 1, 2).unwrap().len(), 2);
    }
}

#[test]
fn a_frame_above_max_alloc_is_refused_before_allocation() {
    let Some(devs) = devices() else { return };
    for d in &devs {
        let mut b = open_device(d);
        let max = b.limits().max_alloc_bytes.clone().unwrap();
        // A frame that only claims its size: planes of max/4 + 1 floats would each be one
        // float too many. Its pixel vectors are empty, so only a check made before allocating
        // and uploading can answer for it.
        // The core refuses it from this backend's limits before anything is allocated...
        let claimed = blocksweep_core::conformance::claimed_frame(max.value / 4 + 1);
        let why = b.limits().frame_fits(claimed.pixels()).unwrap_err();
        let plane = claimed.pixels() * 4;
        let want = format!(
            "one plane is {plane} bytes; CL_DEVICE_MAX_MEM_ALLOC_SIZE is {}",
            max.value
        );
        assert!(why.contains(&want), "{why}");
        // ...and the backend, handed it anyway, refuses planes that do not match the size.
        let e = b.upload(&claimed).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Driver, "{e}");
        // Nothing was uploaded.
        assert_eq!(b.poison_output().unwrap_err().kind, ErrorKind::Driver);
        // A copy above the limit is refused by the core the same way, and by the driver too.
        let why = b.limits().copy_fits(max.value + 1, 0).unwrap_err();
        assert!(why.contains("CL_DEVICE_MAX_MEM_ALLOC_SIZE"), "{why}");
        let e = b.copy_each(max.value + 1, 0, 1).unwrap_err();
        assert_eq!(e.kind, ErrorKind::OutOfMemory);
    }
}

#[test]
fn copy_timed_measures_a_device_to_device_copy() {
    let Some(devs) = devices() else { return };
    for d in &devs {
        let mut b = open_device(d);
        let bytes = 16 << 20;
        let times = b.copy_each(bytes, 1, 4).unwrap();
        assert_eq!(times.len(), 4);
        assert!(times.iter().all(|&t| t > 0.0 && t.is_finite()), "{times:?}");
        let mean = times.iter().sum::<f64>() / times.len() as f64;
        let gbps = 2.0 * bytes as f64 / (mean * 1e6);
        // Bytes read + written per second: above a floppy disk, below any memory system built.
        assert!(gbps > 0.01 && gbps < 100_000.0, "{gbps} GB/s");
        println!(
            "{}: copy of {bytes} bytes: {times:?} ms = {gbps:.1} GB/s",
            d.name
        );
    }
    assert_eq!(take_release_errors(), Vec::<String>::new());
}

#[test]
fn three_dimensional_blocks_run_and_verify() {
    let Some(devs) = devices() else { return };
    for d in &devs {
        let mut b = open_device(d);
        let frame = Frame::generate(160, 90, 5);
        let config = SweepConfig {
            blocks: vec![
                BlockSize { x: 8, y: 4, z: 2 },
                BlockSize { x: 32, y: 2, z: 1 },
            ],
            grid: GridPolicy::Wave,
            protocol: blocksweep_core::Protocol {
                warmups: 0,
                reps: blocksweep_core::Reps::Fixed(2),
                discipline: blocksweep_core::Discipline::Batch,
            },
            strict_kernel_limit: true,
            copy: false,
        };
        let (result, err) = sweep::run(
            &mut b,
            &frame,
            &frame.reference(),
            &config,
            None,
            &mut Quiet,
            &mut |_| {},
        );
        assert!(err.is_none(), "{err:?}");
        assert!(
            result.rows.iter().all(|r| r.verified && r.ran()),
            "{:?}",
            result.rows
        );
    }
}

#[test]
fn each_kernel_variant_has_its_own_facts() {
    let Some(devs) = devices() else { return };
    for d in &devs {
        let mut b = open_device(d);
        let grid_stride = b.kernel_facts().clone();
        b.set_kernel(KernelVariant::OnePixelPerThread).unwrap();
        let one = b.kernel_facts().clone();
        assert_ne!(grid_stride.extra, one.extra, "facts name their kernel");
        assert!(one
            .extra
            .contains(&("kernel".into(), "grayscale_one_per_thread".into())));
    }
}

#[test]
fn a_broken_program_returns_its_build_log() {
    let Some(devs) = devices() else { return };
    for d in &devs {
        let ok = build_program_source(d.index, blocksweep_opencl::KERNEL_SOURCE, "-cl-std=CL1.2");
        assert!(ok.is_ok(), "{ok:?}");
        let broken = "__kernel void broken(__global float* out) { out[0] = undeclared_name; }";
        let e =
            build_program_source(d.index, broken, "-cl-std=CL1.2").expect_err("it must not build");
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
}

#[test]
fn open_past_the_last_device_is_unavailable() {
    let Some(devs) = devices() else { return };
    let e = open(devs.len(), &OpenClOptions::default())
        .err()
        .expect("no such device");
    assert!(matches!(e, OpenClError::Unavailable { .. }), "{e}");
    assert!(
        e.to_string()
            .contains(&format!("no OpenCL device {}", devs.len())),
        "{e}"
    );
}

#[test]
fn nvidia_registers_come_from_ptxas() {
    let Some(devs) = devices() else { return };
    if !devs.iter().any(|d| d.platform.contains("NVIDIA")) {
        eprintln!("no NVIDIA OpenCL device: no ptxas report to read");
        return;
    }
    // NVIDIA's driver prints ptxas's report only when it compiles; with its compute cache off
    // it always does.
    let exe = std::env::current_exe().unwrap();
    run_child(
        std::process::Command::new(exe).env("CUDA_CACHE_DISABLE", "1"),
        "child_nvidia_registers",
    );
}

#[test]
#[ignore = "run by nvidia_registers_come_from_ptxas with CUDA_CACHE_DISABLE=1"]
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
