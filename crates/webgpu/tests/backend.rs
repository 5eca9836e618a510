//! WebGPU-specific behaviour on every adapter this machine has: identity and limits under
//! WebGPU's names, the specification's defaults as a device's limits when asked for
//! (`--webgpu-limits default`), launches past them refused by wgpu's own validation, naming the
//! limit, and llvmpipe's loop cap. What every backend must do is the kit's (tests/conformance.rs).

use std::process::ExitCode;

use blocksweep_conformance::{BatchExt, Suite};
use blocksweep_core::builtin::{load, load_kernel};
use blocksweep_core::{
    Backend, BlockSize, DeviceIdentity, DeviceKind, ErrorKind, Frame, KernelVariant, Launch,
};
use blocksweep_webgpu::{open, LimitsChoice, WebGpuBackend, WebGpuOptions};

fn open_with(d: &DeviceIdentity, limits: LimitsChoice) -> WebGpuBackend {
    open(d.index, &WebGpuOptions { limits })
        .unwrap_or_else(|e| panic!("open({}) [{}] failed: {e}", d.index, d.name))
}

fn identity_is_webgpus(d: &DeviceIdentity) {
    assert!(d.api_version.starts_with("wgpu "), "{}", d.api_version);
    assert_eq!(d.uuid, None, "wgpu states no UUID");
    if d.name.contains("llvmpipe") {
        assert_eq!((d.kind, d.vendor.as_str()), (DeviceKind::Cpu, "Mesa"));
        assert!(
            d.driver_version.starts_with("Mesa "),
            "{}",
            d.driver_version
        );
    }
}

fn limits_carry_webgpu_names(d: &DeviceIdentity) {
    let b = open_with(d, LimitsChoice::Adapter);
    let l = b.limits();
    let name = |n: &Option<blocksweep_core::Named<u64>>| n.as_ref().map(|n| n.name.clone());
    assert_eq!(
        name(&l.max_threads_per_block).as_deref(),
        Some("maxComputeInvocationsPerWorkgroup")
    );
    assert_eq!(
        name(&l.shared_mem_per_block).as_deref(),
        Some("maxComputeWorkgroupStorageSize")
    );
    assert_eq!(
        name(&l.max_buffer_binding_bytes).as_deref(),
        Some("maxStorageBufferBindingSize")
    );
    assert_eq!(
        l.max_grid_dims.as_ref().unwrap().name,
        "maxComputeWorkgroupsPerDimension"
    );
    let adapter = l.max_threads_per_block.as_ref().unwrap().value;
    assert!(
        adapter >= 256,
        "every adapter gives at least the default: {adapter}"
    );
    assert!(l.timer_resolution_ns.as_ref().unwrap().value > 0.0);
    let said = |k: &str| l.extra.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
    assert!(said("requiredLimits").unwrap().contains("adapter"));
}

/// Asked for the defaults, the device has exactly WebGPU's 256 invocations and 16 KiB, and a
/// workgroup of 1024 (which Vulkan allows on this adapter where it says so) is refused by
/// wgpu's validation with its own words, naming the limit.
fn the_defaults_refuse_what_the_adapter_allows(d: &DeviceIdentity) {
    let mut b = open_with(d, LimitsChoice::Default);
    let l = b.limits().clone();
    assert_eq!(l.max_threads_per_block.as_ref().unwrap().value, 256);
    assert_eq!(l.shared_mem_per_block.as_ref().unwrap().value, 16 << 10);
    assert_eq!(
        l.max_buffer_binding_bytes.as_ref().unwrap().value,
        128 << 20
    );
    assert!(l
        .extra
        .iter()
        .any(|(k, _)| k == "adapter's maxComputeInvocationsPerWorkgroup"));
    let frame = Frame::generate(256, 4, 1);
    load(&mut b, KernelVariant::GridStride, &frame).unwrap();
    b.dispatch_each(Launch::linear(BlockSize::linear(256), 4), 0, 1)
        .unwrap();
    let e = b
        .dispatch_each(Launch::linear(BlockSize::linear(1024), 1), 0, 1)
        .unwrap_err();
    assert_eq!(e.kind, ErrorKind::LaunchRejected, "{e}");
    assert!(e.message.contains("256"), "{e}");
    // The shared-memory probe past 16 KiB: refused by name at the pipeline.
    load_kernel(&mut b, KernelVariant::SharedProbe, 256, 4).unwrap();
    let big = Launch::linear(BlockSize::linear(64), 4).with_shared(32 << 10);
    let e = b.dispatch_each(big, 0, 1).unwrap_err();
    assert_eq!(e.kind, ErrorKind::LaunchRejected, "{e}");
}

/// A workgroup count past maxComputeWorkgroupsPerDimension: wgpu's refusal, not a hang.
fn too_many_workgroups_are_refused(d: &DeviceIdentity) {
    let mut b = open_with(d, LimitsChoice::Adapter);
    let max = b.limits().max_grid_dims.as_ref().unwrap().value.0[0];
    load_kernel(&mut b, KernelVariant::OnePixelPerThread, 64, 1).unwrap();
    let over = u32::try_from(max + 1).unwrap();
    let e = b
        .dispatch_each(Launch::linear(BlockSize::linear(1), over), 0, 1)
        .unwrap_err();
    assert_eq!(e.kind, ErrorKind::LaunchRejected, "{e}");
}

fn a_loop_longer_than_the_driver_runs_is_refused(d: &DeviceIdentity) {
    let llvmpipe = d.name.contains("llvmpipe");
    let mut b = open_with(d, LimitsChoice::Adapter);
    load_kernel(&mut b, KernelVariant::GridStride, 65536 * 4, 1).unwrap();
    match b.dispatch_each(Launch::linear(BlockSize::linear(2), 1), 0, 1) {
        Err(e) => {
            assert!(llvmpipe, "{} refused a legal launch: {e}", d.name);
            assert_eq!(e.kind, ErrorKind::LaunchRejected, "{e}");
            assert!(e.message.contains("LP_MAX_TGSI_LOOP_ITERATIONS"), "{e}");
        }
        Ok(_) => assert!(!llvmpipe, "it would have looped past the cap"),
    }
}

/// `--cold`: each timed dispatch after a clear of the scratch buffer, one interval per
/// dispatch, and the output still right; the copy the same.
fn cold_batches_flush_and_still_verify(d: &DeviceIdentity) {
    let mut b = open_with(d, LimitsChoice::Adapter);
    let frame = Frame::generate(256, 8, 5);
    load(&mut b, KernelVariant::GridStride, &frame).unwrap();
    blocksweep_core::builtin::poison(&mut b, frame.pixels()).unwrap();
    let work = blocksweep_core::Work::Kernel(Launch::linear(BlockSize::linear(64), 8));
    let t = b.run_batch_flushed(work, 3, 1 << 20).unwrap();
    assert_eq!(t.each_ms.len(), 3, "{t:?}");
    assert!(t.each_ms.iter().all(|&ms| ms > 0.0), "{t:?}");
    let mut out = vec![0f32; frame.pixels() as usize];
    blocksweep_core::builtin::read(&mut b, &mut out).unwrap();
    blocksweep_core::verify::verify(&out, &frame.reference()).unwrap();
    let copy = blocksweep_core::Work::Copy { bytes: 1 << 16 };
    assert_eq!(b.run_batch_flushed(copy, 2, 4096).unwrap().each_ms.len(), 2);
}

/// Fills of any byte on the device (zeros by clearBuffer, others from a pattern buffer), each
/// range exactly, the rest untouched; a fill not in whole words is left to the core.
fn fills_set_each_range_on_the_device(d: &DeviceIdentity) {
    let mut b = open_with(d, LimitsChoice::Adapter);
    load_kernel(&mut b, KernelVariant::GridStride, 64, 4).unwrap();
    let plane = 64 * 4 * 4;
    b.write_buffer(3, &vec![7u8; plane]).unwrap();
    let fill = |offset, len, byte| blocksweep_core::Fill { offset, len, byte };
    let done = b
        .fill_buffer(3, &[fill(0, 16, 0xA5), fill(32, 8, 0), fill(64, 64, 0xFF)])
        .unwrap();
    assert!(done);
    let mut out = vec![0u8; plane];
    b.read_buffer(3, 0, &mut out).unwrap();
    assert!(out[..16].iter().all(|&v| v == 0xA5), "{:?}", &out[..16]);
    assert!(out[16..32].iter().all(|&v| v == 7));
    assert!(out[32..40].iter().all(|&v| v == 0));
    assert!(out[64..128].iter().all(|&v| v == 0xFF));
    assert!(out[128..].iter().all(|&v| v == 7));
    assert!(
        !b.fill_buffer(3, &[fill(1, 4, 0xA5)]).unwrap(),
        "not in whole words"
    );
}

fn main() -> ExitCode {
    Suite::new(&blocksweep_webgpu::PROVIDER)
        .each_device("identity_is_webgpus", identity_is_webgpus)
        .each_device("limits_carry_webgpu_names", limits_carry_webgpu_names)
        .each_device(
            "the_defaults_refuse_what_the_adapter_allows",
            the_defaults_refuse_what_the_adapter_allows,
        )
        .each_device(
            "too_many_workgroups_are_refused",
            too_many_workgroups_are_refused,
        )
        .each_device(
            "fills_set_each_range_on_the_device",
            fills_set_each_range_on_the_device,
        )
        .each_device(
            "cold_batches_flush_and_still_verify",
            cold_batches_flush_and_still_verify,
        )
        .each_device(
            "loop_longer_than_the_driver_runs",
            a_loop_longer_than_the_driver_runs_is_refused,
        )
        .run()
}
