//! Vulkan-specific behaviour on every device this machine has: identity and limits under their
//! Vulkan names, launches refused before the driver sees them (each naming its limit), memory
//! refusals naming Vulkan's limits, and llvmpipe's loop cap. What every backend must do is the
//! conformance kit's (tests/conformance.rs); the copy ceiling has its own file, tests/copy.rs.

mod common;

use std::process::ExitCode;

use blocksweep_conformance::{claimed_frame, BatchExt, Suite};
use blocksweep_core::builtin::{load, load_kernel, poison, read};
use blocksweep_core::{
    Backend, BlockSize, DeviceIdentity, DeviceKind, ErrorKind, Frame, GridSize, KernelVariant,
    Launch,
};
use common::open_device;

fn launch(x: u32, y: u32, z: u32, grid: u32) -> Launch {
    Launch::linear(BlockSize { x, y, z }, grid)
}

fn identity_is_vulkans(d: &DeviceIdentity) {
    let v: Vec<&str> = d.api_version.split('.').collect();
    assert_eq!(v.len(), 3, "{}", d.api_version);
    assert!(
        v.iter().all(|p| p.parse::<u32>().is_ok()),
        "{}",
        d.api_version
    );
    // Every 1.1 device has VkPhysicalDeviceIDProperties::deviceUUID.
    if d.api_version.as_str() >= "1.1" {
        assert!(d.uuid.is_some(), "{d:?}");
    }
    if d.name.contains("llvmpipe") {
        assert_eq!(d.kind, DeviceKind::Cpu);
        assert_eq!(d.vendor, "Mesa");
        assert!(
            d.driver_version.starts_with("Mesa "),
            "{}",
            d.driver_version
        );
    }
}

/// The loaded kernel's facts, under Vulkan's names.
fn the_facts_carry_vulkan_names(b: &blocksweep_vulkan::VulkanBackend) {
    let l = b.limits();
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
            .contains("; vkCreateComputePipelines (driver "),
        "{}",
        k.compiled_by
    );
    if let Some(r) = &k.registers {
        assert!(r
            .name
            .starts_with("VK_KHR_pipeline_executable_properties: "));
        assert!(r.value > 0 && r.value <= 255, "{}", r.value);
    }
}

fn limits_and_kernel_facts_carry_vulkan_names(d: &DeviceIdentity) {
    {
        let mut b = open_device(d);
        // The facts are a loaded program's: the built-in grid-stride kernel's here.
        load_kernel(&mut b, KernelVariant::GridStride, 64, 4).unwrap();
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
        the_facts_carry_vulkan_names(&b);
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
    }
}

/// The kit checks that a launch above the limits is refused and leaves the backend usable;
/// here, that the backend refuses each kind before vkCmdDispatch, naming the Vulkan limit.
fn launches_above_the_limits_are_refused_before_the_driver_sees_them(d: &DeviceIdentity) {
    let mut b = open_device(d);
    load(
        &mut b,
        KernelVariant::GridStride,
        &Frame::generate(64, 4, 3),
    )
    .unwrap();
    let max = b.limits().max_threads_per_block.clone().unwrap().value as u32;
    let dims = b.limits().max_block_dims.clone().unwrap().value.0;
    let count = b.limits().max_grid_dims.clone().unwrap().value.0;
    let mut refuse = |l: Launch, want: &str| {
        let e = b.dispatch_each(l, 0, 1).unwrap_err();
        assert_eq!(e.kind, ErrorKind::LaunchRejected, "{e}");
        assert!(e.message.contains(want), "{e} should name {want}");
    };
    refuse(launch(max + 1, 1, 1, 1), "maxComputeWorkGroupInvocations");
    if dims[2] < max as u64 {
        refuse(
            launch(1, 1, dims[2] as u32 + 1, 1),
            "maxComputeWorkGroupSize[z]",
        );
    }
    if count[0] < u32::MAX as u64 {
        refuse(
            launch(1, 1, 1, count[0] as u32 + 1),
            "maxComputeWorkGroupCount[x]",
        );
    }
    refuse(launch(64, 1, 1, 0), "grid 0");
}

/// The kit checks that frames and copies too large are refused; here, that the refusals name
/// Vulkan's own limits (maxStorageBufferRange, the device-local heap) and the bad plane. A plane
/// past maxStorageBufferRange is split into pieces where the device has bufferDeviceAddress,
/// so only the heap refuses it.
fn refusals_name_vulkans_limits(d: &DeviceIdentity) {
    let mut b = open_device(d);
    let range = b.limits().max_buffer_binding_bytes.clone().unwrap();
    let claimed = claimed_frame(range.value / 4 + 1);
    let plane = claimed.pixels() * 4;
    match b.limits().frame_piece_bytes.clone() {
        Some(piece) => {
            assert!(piece.value <= range.value && piece.value.is_power_of_two());
            assert_eq!(b.limits().frame_fits(claimed.pixels()), Ok(()));
            let heap = b.limits().global_mem_bytes.clone().unwrap();
            let why = b.limits().frame_fits(heap.value / 16 + 1).unwrap_err();
            assert!(why.contains(&heap.name.to_string()), "{why}");
        }
        None => {
            let why = b.limits().frame_fits(claimed.pixels()).unwrap_err();
            // The first Vulkan limit the plane breaks: maxMemoryAllocationSize where it is the
            // lower (NVIDIA on an H200: 4292870144 bytes), else maxStorageBufferRange.
            assert!(
                why.starts_with(&format!("one plane is {plane} bytes; ")),
                "{why}"
            );
            assert!(
                why.contains(&format!("maxStorageBufferRange is {}", range.value))
                    || why.contains("maxMemoryAllocationSize is "),
                "{why}"
            );
        }
    }
    let mut short = Frame::generate(8, 8, 1);
    short.g.pop();
    let e = load(&mut b, KernelVariant::GridStride, &short).unwrap_err();
    assert!(
        e.message
            .contains("argument 1 is a buffer of 256 bytes; 252 given"),
        "{e}"
    );
    let heap = b.limits().global_mem_bytes.clone().unwrap();
    let e = b.copy_each(heap.value, 0, 1).unwrap_err();
    assert_eq!(e.kind, ErrorKind::OutOfMemory);
    assert!(e.message.contains("VkMemoryHeap[DEVICE_LOCAL].size"), "{e}");
}

/// llvmpipe stops a shader's loops after 65535 iterations; the backend refuses a grid-stride
/// launch that would need more, instead of letting the driver leave pixels unwritten. Other
/// drivers run the same launch and verify.
fn a_loop_longer_than_the_driver_runs_is_refused(d: &DeviceIdentity) {
    {
        let mut b = open_device(d);
        let llvmpipe = d.platform == "llvmpipe";
        let mut out = Vec::new();
        let mut run = |b: &mut blocksweep_vulkan::VulkanBackend, pixels: u32, grid: u32| {
            let frame = Frame::generate(pixels, 1, 4);
            load(b, KernelVariant::GridStride, &frame).unwrap();
            poison(b, frame.pixels()).unwrap();
            b.dispatch_each(launch(1, 1, 1, grid), 0, 1)?;
            out.resize(pixels as usize, 0.0);
            read(b, &mut out).unwrap();
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
        // The other grid-stride built-ins are held to the same cap, n or the height read
        // from their arguments; one pixel per thread does not loop.
        let one = launch(1, 1, 1, 1);
        for (kernel, width, height, l) in [
            (KernelVariant::RegisterHeavy, 65536, 1, one),
            (KernelVariant::SharedProbe, 65536, 1, one.with_shared(12)),
            (
                KernelVariant::GridStride2D,
                1,
                65536,
                Launch::new(BlockSize::linear(1), GridSize { x: 1, y: 1 }),
            ),
        ] {
            load_kernel(&mut b, kernel, width, height).unwrap();
            blocksweep_core::builtin::prepare_launch(&mut b, kernel, l).unwrap();
            match b.dispatch_each(l, 0, 1) {
                Err(e) => {
                    assert!(llvmpipe, "{} refused a legal launch: {e}", d.name);
                    assert_eq!(e.kind, ErrorKind::LaunchRejected, "{kernel:?}: {e}");
                    assert!(e.message.contains("LP_MAX_TGSI_LOOP_ITERATIONS"), "{e}");
                }
                Ok(_) => assert!(!llvmpipe, "{kernel:?} would have looped past the cap"),
            }
        }
        load_kernel(&mut b, KernelVariant::OnePixelPerThread, 65536 * 4, 1).unwrap();
        b.dispatch_each(launch(64, 1, 1, 4096), 0, 1).unwrap();
        let limit = b
            .limits()
            .extra
            .iter()
            .find(|(k, _)| k.contains("LP_MAX_TGSI"));
        assert_eq!(limit.is_some(), llvmpipe, "{limit:?}");
    }
}

fn main() -> ExitCode {
    Suite::new(&blocksweep_vulkan::PROVIDER)
        .each_device("identity_is_vulkans", identity_is_vulkans)
        .each_device(
            "limits_carry_vulkan_names",
            limits_and_kernel_facts_carry_vulkan_names,
        )
        .each_device(
            "refused_before_the_driver",
            launches_above_the_limits_are_refused_before_the_driver_sees_them,
        )
        .each_device("refusals_name_vulkans_limits", refusals_name_vulkans_limits)
        .each_device(
            "loop_longer_than_the_driver_runs",
            a_loop_longer_than_the_driver_runs_is_refused,
        )
        .run()
}
