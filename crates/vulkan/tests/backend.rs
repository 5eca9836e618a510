//! Vulkan-specific behaviour on every device this machine has: identity, native limit names,
//! launches refused before the driver sees them, memory refusals, 3-D workgroups, re-uploads
//! and misuse. The copy ceiling has its own file, tests/copy.rs.

mod common;

use blocksweep_core::conformance::BatchExt;
use blocksweep_core::sweep::{self, Quiet, SweepConfig};
use blocksweep_core::{
    Backend, BlockSize, DeviceKind, ErrorKind, Frame, GridPolicy, KernelVariant, Launch,
};
use blocksweep_vulkan::{open, VulkanError, VulkanOptions};
use common::{devices, open_device};

fn launch(x: u32, y: u32, z: u32, grid: u32) -> Launch {
    Launch::linear(BlockSize { x, y, z }, grid)
}

#[test]
fn probe_lists_devices_in_index_order_with_their_identity() {
    let Some(devs) = devices() else { return };
    for (i, d) in devs.iter().enumerate() {
        assert_eq!(d.index, i);
        assert_eq!(d.api, blocksweep_vulkan::API);
        let v: Vec<&str> = d.api_version.split('.').collect();
        assert_eq!(v.len(), 3, "{}", d.api_version);
        assert!(
            v.iter().all(|p| p.parse::<u32>().is_ok()),
            "{}",
            d.api_version
        );
        assert!(!d.driver.is_empty() && !d.vendor.is_empty() && !d.name.is_empty());
        // Every 1.1 device has VkPhysicalDeviceIDProperties::deviceUUID.
        if d.api_version.as_str() >= "1.1" {
            assert!(d.uuid.is_some(), "{d:?}");
        }
        if let Some(pci) = &d.pci_bus_id {
            let parts: Vec<&str> = pci.split([':', '.']).collect();
            assert_eq!(
                parts.iter().map(|p| p.len()).collect::<Vec<_>>(),
                [4, 2, 2, 1],
                "{pci}"
            );
        }
        if d.name.contains("llvmpipe") {
            assert_eq!(d.kind, DeviceKind::Cpu);
            assert_eq!(d.vendor, "Mesa");
            assert!(d.driver.starts_with("Mesa "), "{}", d.driver);
        }
        // open() must describe the same device probe() listed.
        assert_eq!(open_device(d).identity(), d);
    }
}

#[test]
fn limits_and_kernel_facts_carry_vulkan_names() {
    let Some(devs) = devices() else { return };
    for d in &devs {
        let b = open_device(d);
        let l = b.limits();
        let name = |n: &Option<blocksweep_core::Named<u64>>| n.as_ref().map(|n| n.name.clone());
        assert_eq!(
            name(&l.max_threads_per_block).as_deref(),
            Some("maxComputeWorkGroupInvocations")
        );
        assert_eq!(
            l.max_block_dims.as_ref().unwrap().name,
            "maxComputeWorkGroupSize"
        );
        assert_eq!(
            l.max_grid_dims.as_ref().unwrap().name,
            "maxComputeWorkGroupCount"
        );
        assert_eq!(name(&l.warp_size).as_deref(), Some("subgroupSize"));
        assert_eq!(
            name(&l.shared_mem_per_block).as_deref(),
            Some("maxComputeSharedMemorySize")
        );
        assert_eq!(
            name(&l.max_buffer_binding_bytes).as_deref(),
            Some("maxStorageBufferRange")
        );
        assert!(name(&l.max_alloc_bytes)
            .unwrap()
            .starts_with("maxMemoryAllocationSize"));
        assert_eq!(
            name(&l.global_mem_bytes).as_deref(),
            Some("VkMemoryHeap[DEVICE_LOCAL].size")
        );
        let res = l.timer_resolution_ns.as_ref().unwrap();
        assert_eq!(res.name, "timestampPeriod");
        assert_eq!(b.timer().resolution_ns, res.value);
        assert!(b.timer().method.contains("vkCmdWriteTimestamp"));
        let bits = l
            .extra
            .iter()
            .find(|(k, _)| k.starts_with("timestampValidBits"))
            .expect("timestampValidBits in extra");
        assert!(bits.1.parse::<u32>().unwrap() > 0);
        let k = b.kernel_facts();
        let max = k.max_block.as_ref().unwrap();
        assert_eq!(
            max.name,
            "maxComputeWorkGroupInvocations (no per-pipeline query in Vulkan)"
        );
        assert_eq!(
            Some(max.value),
            l.max_threads_per_block.as_ref().map(|m| m.value)
        );
        assert!(
            k.compiled_by
                .starts_with("vkCreateComputePipelines (driver "),
            "{}",
            k.compiled_by
        );
        if let Some(r) = &k.registers {
            assert!(r
                .name
                .starts_with("VK_KHR_pipeline_executable_properties: "));
            assert!(r.value > 0 && r.value <= 255, "{}", r.value);
        }
        match &l.mp_model {
            // Only NVIDIA's VK_NV_shader_sm_builtins gives a residency model.
            Some(m) => {
                assert_eq!(d.vendor, "NVIDIA");
                assert!(
                    m.source.contains("VK_NV_shader_sm_builtins"),
                    "{}",
                    m.source
                );
                assert_eq!(
                    name(&l.multiprocessors).as_deref(),
                    Some("shaderSMCount (VK_NV_shader_sm_builtins)")
                );
            }
            // Without it, only a CPU device gets a count: the host's hardware threads.
            None => match d.kind {
                DeviceKind::Cpu => assert!(name(&l.multiprocessors)
                    .is_some_and(|n| n.starts_with("host hardware threads"))),
                _ => assert!(l.multiprocessors.is_none()),
            },
        }
        if d.kind == DeviceKind::Cpu {
            assert!(l.mp_model.is_none(), "no residency model on a CPU device");
        }
        println!("{} limits: {:#?}\nkernel: {:#?}", d.name, l, k);
    }
}

#[test]
fn launches_above_the_limits_are_refused_before_the_driver_sees_them() {
    let Some(devs) = devices() else { return };
    for d in &devs {
        let mut b = open_device(d);
        b.upload(&Frame::generate(64, 4, 3)).unwrap();
        let max = b.limits().max_threads_per_block.clone().unwrap().value as u32;
        let dims = b.limits().max_block_dims.clone().unwrap().value.0;
        let count = b.limits().max_grid_dims.clone().unwrap().value.0;
        let refuse = |b: &mut blocksweep_vulkan::VulkanBackend, l: Launch, want: &str| {
            let e = b.dispatch_each(l, 0, 1).unwrap_err();
            assert_eq!(e.kind, ErrorKind::LaunchRejected, "{e}");
            assert!(e.message.contains(want), "{e} should name {want}");
        };
        refuse(
            &mut b,
            launch(max + 1, 1, 1, 1),
            "maxComputeWorkGroupInvocations",
        );
        if dims[2] < max as u64 {
            refuse(
                &mut b,
                launch(1, 1, dims[2] as u32 + 1, 1),
                "maxComputeWorkGroupSize[z]",
            );
        }
        if count[0] < u32::MAX as u64 {
            refuse(
                &mut b,
                launch(1, 1, 1, count[0] as u32 + 1),
                "maxComputeWorkGroupCount[x]",
            );
        }
        refuse(&mut b, launch(64, 1, 1, 0), "grid 0");
        // The backend is still usable after a refusal.
        b.poison_output().unwrap();
        assert_eq!(b.dispatch_each(launch(64, 1, 1, 1), 1, 2).unwrap().len(), 2);
        let mut out = vec![0f32; 256];
        b.read_output(&mut out).unwrap();
        let reference = Frame::generate(64, 4, 3).reference();
        assert!(blocksweep_core::verify::verify(&out, &reference).is_ok());
    }
}

#[test]
fn a_frame_above_max_storage_buffer_range_is_refused_before_allocation() {
    let Some(devs) = devices() else { return };
    for d in &devs {
        let mut b = open_device(d);
        let range = b.limits().max_buffer_binding_bytes.clone().unwrap();
        // A frame that only claims its size (its planes are empty): only a check made before
        // allocating and uploading can answer for it.
        // The core refuses it from this backend's limits before anything is allocated...
        let claimed = blocksweep_core::conformance::claimed_frame(range.value / 4 + 1);
        let why = b.limits().frame_fits(claimed.pixels()).unwrap_err();
        let plane = claimed.pixels() * 4;
        let want = format!(
            "one plane is {plane} bytes; maxStorageBufferRange is {}",
            range.value
        );
        assert!(why.contains(&want), "{why}");
        // ...and the backend, handed it anyway, refuses planes that do not match the size.
        let e = b.upload(&claimed).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Driver, "{e}");
        // Nothing was uploaded: later calls are refused, not undefined.
        assert_eq!(b.poison_output().unwrap_err().kind, ErrorKind::Driver);
        assert_eq!(
            b.dispatch_each(launch(64, 1, 1, 1), 0, 1).unwrap_err().kind,
            ErrorKind::Driver
        );
        // A frame whose planes do not hold its pixel count is refused too.
        let mut short = Frame::generate(8, 8, 1);
        short.g.pop();
        let e = b.upload(&short).unwrap_err();
        assert!(e.message.contains("plane g holds 63 values"), "{e}");
        // A copy above the device-local heap is refused before allocating.
        let heap = b.limits().global_mem_bytes.clone().unwrap();
        let e = b.copy_each(heap.value, 0, 1).unwrap_err();
        assert_eq!(e.kind, ErrorKind::OutOfMemory);
        assert!(e.message.contains("VkMemoryHeap[DEVICE_LOCAL].size"), "{e}");
    }
}

#[test]
fn three_dimensional_blocks_and_reuploads_verify() {
    let Some(devs) = devices() else { return };
    for d in &devs {
        let mut b = open_device(d);
        let config = SweepConfig {
            blocks: vec![
                BlockSize { x: 8, y: 4, z: 2 },
                BlockSize { x: 32, y: 2, z: 1 },
                BlockSize::linear(100),
            ],
            grid: GridPolicy::Data,
            protocol: blocksweep_core::Protocol {
                warmups: 0,
                reps: blocksweep_core::Reps::Fixed(2),
                discipline: blocksweep_core::Discipline::Batch,
            },
            strict_kernel_limit: true,
            copy: false,
        };
        // Two frame sizes in turn, then the first again: the planes are reallocated and the
        // descriptors re-pointed each time the size changes.
        for (w, h, seed) in [(160, 90, 5), (33, 7, 6), (160, 90, 7)] {
            let frame = Frame::generate(w, h, seed);
            let (result, err) = sweep::run(
                &mut b,
                &frame,
                &frame.reference(),
                &config,
                None,
                &mut Quiet,
                &mut |_| {},
            );
            assert!(err.is_none(), "{w}x{h}: {err:?}");
            assert!(
                result.rows.iter().all(|r| r.verified && r.ran()),
                "{:?}",
                result.rows
            );
        }
    }
}

#[test]
fn the_one_pixel_kernel_leaves_the_tail_unwritten() {
    let Some(devs) = devices() else { return };
    for d in &devs {
        let mut b = open_device(d);
        let frame = Frame::generate(100, 1, 9);
        b.upload(&frame).unwrap();
        b.set_kernel(KernelVariant::OnePixelPerThread).unwrap();
        b.poison_output().unwrap();
        // One workgroup of 64 covers pixels 0..64 and nothing else.
        b.dispatch_each(launch(64, 1, 1, 1), 0, 1).unwrap();
        let mut out = vec![0f32; 100];
        b.read_output(&mut out).unwrap();
        let reference = frame.reference();
        assert!(out[..64]
            .iter()
            .zip(&reference)
            .all(|(a, b)| (a - b).abs() <= 1e-6));
        assert!(out[64..].iter().all(|v| v.is_nan()), "poison must survive");
        // The grid-stride kernel at the same launch covers everything.
        b.set_kernel(KernelVariant::GridStride).unwrap();
        b.dispatch_each(launch(64, 1, 1, 1), 0, 1).unwrap();
        b.read_output(&mut out).unwrap();
        assert!(blocksweep_core::verify::verify(&out, &reference).is_ok());
        // A read-back into a slice of the wrong size is refused, not truncated.
        assert_eq!(
            b.read_output(&mut out[..99]).unwrap_err().kind,
            ErrorKind::Driver
        );
    }
}

/// llvmpipe stops a shader's loops after 65535 iterations; the backend refuses a grid-stride
/// launch that would need more, instead of letting the driver leave pixels unwritten. Other
/// drivers run the same launch and verify.
#[test]
fn a_loop_longer_than_the_driver_runs_is_refused() {
    let Some(devs) = devices() else { return };
    for d in &devs {
        let mut b = open_device(d);
        let llvmpipe = d.platform == "llvmpipe";
        let mut out = Vec::new();
        let mut run = |b: &mut blocksweep_vulkan::VulkanBackend, pixels: u32, grid: u32| {
            let frame = Frame::generate(pixels, 1, 4);
            b.upload(&frame).unwrap();
            b.poison_output().unwrap();
            b.dispatch_each(launch(1, 1, 1, grid), 0, 1)?;
            out.resize(pixels as usize, 0.0);
            b.read_output(&mut out).unwrap();
            let ok = blocksweep_core::verify::verify(&out, &frame.reference());
            assert!(ok.is_ok(), "{pixels} pixels, grid {grid}: {ok:?}");
            Ok::<(), blocksweep_core::BackendError>(())
        };
        // One invocation, 65535 iterations: the most llvmpipe runs.
        run(&mut b, 65535, 1).unwrap();
        match run(&mut b, 65536, 1) {
            Err(e) => {
                assert!(llvmpipe, "{} refused a legal launch: {e}", d.name);
                assert_eq!(e.kind, ErrorKind::LaunchRejected);
                assert!(e.message.contains("65536 loop iterations"), "{e}");
                assert!(e.message.contains("LP_MAX_TGSI_LOOP_ITERATIONS"), "{e}");
            }
            Ok(()) => assert!(!llvmpipe, "llvmpipe would have left pixel 65535 unwritten"),
        }
        // Two invocations share the work: 65535 iterations each again.
        run(&mut b, 131070, 2).unwrap();
        let limit = b
            .limits()
            .extra
            .iter()
            .find(|(k, _)| k.contains("LP_MAX_TGSI"));
        assert_eq!(limit.is_some(), llvmpipe, "{limit:?}");
    }
}

#[test]
fn open_past_the_last_device_is_unavailable() {
    let Some(devs) = devices() else { return };
    let e = open(devs.len(), &VulkanOptions { validation: false })
        .err()
        .expect("no such device");
    assert!(matches!(e, VulkanError::Unavailable(_)), "{e}");
    assert!(
        e.to_string()
            .contains(&format!("no Vulkan device {}", devs.len())),
        "{e}"
    );
    assert_eq!(
        blocksweep_core::BackendError::from(e).kind,
        ErrorKind::Unavailable
    );
}
