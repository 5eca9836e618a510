//! Under VK_LAYER_KHRONOS_validation with synchronization validation, the kit's sweep, fault,
//! batch-protocol, refusal and staged read-back scenarios, both copy methods (the shader's in one
//! dispatch and in several), a poison/read-back, every built-in kernel, the split shaders over
//! planes in pieces and the backend's destruction produce no warning or error at all.

mod common;

use std::process::ExitCode;

use blocksweep_conformance::{checks, skip_unless_required, staged, BatchExt, Completion, Suite};
use blocksweep_core::{builtin, Backend, DeviceIdentity, DeviceKind, Frame, KernelVariant};
use blocksweep_vulkan::{open, VulkanBackend, VulkanError, VulkanOptions};
use common::run_in_child;

/// lavapipe (the CPU device) where there is one, else the first device; opened with
/// validation, or the skip when the layer is missing (a failure when vulkan is required).
fn open_validated(devs: &[DeviceIdentity]) -> Result<(DeviceIdentity, VulkanBackend), Completion> {
    let d = devs
        .iter()
        .find(|d| d.kind == DeviceKind::Cpu)
        .unwrap_or(&devs[0])
        .clone();
    match open(d.index, &VulkanOptions { validation: true }) {
        Ok(b) => Ok((d, b)),
        Err(VulkanError::Unavailable(why)) if why.contains("VK_LAYER_KHRONOS_validation") => {
            Err(skip_unless_required(blocksweep_vulkan::API, why))
        }
        Err(e) => panic!("open({}) with validation failed: {e}", d.index),
    }
}

/// Asserts that the layer said nothing about `b`'s work or its destruction.
fn clean_through_teardown(d: &DeviceIdentity, b: VulkanBackend) -> Completion {
    let before_drop = b.validation_messages();
    let log = b.message_log();
    drop(b);
    let after_drop = log.messages();
    assert!(
        before_drop.is_empty() && after_drop.is_empty(),
        "{} under validation:\n{}",
        d.name,
        after_drop.join("\n")
    );
    Completion::Completed
}

fn the_kit_and_teardown_are_clean_under_validation(devs: &[DeviceIdentity]) -> Completion {
    let (d, mut b) = match open_validated(devs) {
        Ok(v) => v,
        Err(skipped) => return skipped,
    };
    checks::full_sweep(&mut b);
    checks::one_block_short(&mut b);
    checks::batch_protocol(&mut b);
    checks::rejected_launch(&mut b);
    // lavapipe's staging memory is HOST_CACHED, so it lends its persistent mapping (a GPU's
    // may not be, and then lends nothing).
    let staged = staged::staged_read_back(&mut b);
    let staged = matches!(staged, Completion::Completed);
    assert!(
        staged || d.kind != DeviceKind::Cpu,
        "lavapipe lends its staging"
    );
    clean_through_teardown(&d, b)
}

/// Apart from the kit's scenarios, so that it runs whatever they find.
fn builtins_copies_and_teardown_are_clean_under_validation(devs: &[DeviceIdentity]) -> Completion {
    let (d, mut b) = match open_validated(devs) {
        Ok(v) => v,
        Err(skipped) => return skipped,
    };
    let times = b.copy_each(1 << 20, 1, 2).unwrap();
    assert_eq!(times.len(), 2);
    // The compute-shader copy's round trip, in one dispatch and in several.
    let words: Vec<u32> = (0..5000).collect();
    assert_eq!(
        b.copy_round_trip_for_tests(&words).unwrap(),
        [words.clone(), words.clone()]
    );
    b.set_copy_dispatch_bytes_for_tests(4096);
    b.copy_each(20_008, 1, 1).unwrap();
    assert_eq!(b.copy_round_trip_for_tests(&words).unwrap()[1], words);
    let frame = Frame::generate(64, 8, 11);
    builtin::load(&mut b, KernelVariant::GridStride, &frame).unwrap();
    builtin::poison(&mut b, frame.pixels()).unwrap();
    let mut out = vec![0f32; 512];
    builtin::read(&mut b, &mut out).unwrap();
    assert!(out.iter().all(|v| v.is_nan()), "poison read back");
    // Every built-in (the shared one sized by the launch), read back staged.
    for kernel in KernelVariant::ALL {
        builtin::load(&mut b, kernel, &frame).unwrap();
        let launch = match kernel {
            KernelVariant::GridStride2D => blocksweep_core::Launch::new(
                blocksweep_core::BlockSize { x: 8, y: 8, z: 1 },
                blocksweep_core::GridSize { x: 8, y: 1 },
            ),
            _ => blocksweep_core::Launch::linear(blocksweep_core::BlockSize::linear(64), 8)
                .with_shared(768),
        };
        builtin::prepare_launch(&mut b, kernel, launch).unwrap();
        b.dispatch_each(launch, 0, 1).unwrap();
        let staged = builtin::read_staged(&mut b).unwrap().map(<[f32]>::to_vec);
        if let Some(staged) = staged {
            assert_eq!(
                blocksweep_core::verify::verify(&staged, &frame.reference()),
                Ok(())
            );
        }
    }
    // The split shaders over planes in pieces (the path of planes past 4 GiB on a GPU).
    if b.set_frame_piece_bytes_for_tests(1024) {
        for kernel in [KernelVariant::GridStride, KernelVariant::OnePixelPerThread] {
            builtin::load(&mut b, kernel, &frame).unwrap();
            builtin::poison(&mut b, frame.pixels()).unwrap();
            let launch = blocksweep_core::Launch::linear(blocksweep_core::BlockSize::linear(64), 8);
            b.dispatch_each(launch, 0, 1).unwrap();
            builtin::read(&mut b, &mut out).unwrap();
            assert_eq!(
                blocksweep_core::verify::verify(&out, &frame.reference()),
                Ok(())
            );
        }
    }
    clean_through_teardown(&d, b)
}

fn validation_is_live_and_reports_a_missing_barrier(devs: &[DeviceIdentity]) -> Completion {
    let mut b = match open_validated(devs) {
        Ok((_, b)) => b,
        Err(skipped) => return skipped,
    };
    // The report says the layer was on (the sweep's header and JSON read this).
    let said = b.limits().extra.iter().find(|(k, _)| k == "validation");
    assert_eq!(
        said.map(|(_, v)| v.as_str()),
        Some("VK_LAYER_KHRONOS_validation on, with synchronization validation")
    );
    b.provoke_sync_hazard_for_tests().unwrap();
    let messages = b.validation_messages();
    assert!(
        messages
            .iter()
            .any(|m| m.contains("SYNC-HAZARD-WRITE-AFTER-WRITE")),
        "synchronization validation should have reported the hazard: {messages:#?}"
    );
    Completion::Completed
}

/// Set in the child process that [`loader_notices_are_not_diagnostics`] starts.
const CHILD: &str = "BLOCKSWEEP_TEST_LOADER_NOTICE_CHILD";
const LOADER_TEST: &str = "loader_notices_are_not_diagnostics";

/// With `VK_INSTANCE_LAYERS` naming the validation layer, the loader warns that it adds the
/// layer; that notice is not a validation finding, so a clean dispatch still leaves
/// `diagnostics()` empty. The variable must be set before the loader runs, so the test runs
/// itself again in a child process with it.
fn loader_notices_are_not_diagnostics(devs: &[DeviceIdentity]) -> Completion {
    if std::env::var_os(CHILD).is_none() {
        let trial = format!("{LOADER_TEST}::vulkan");
        let env = [
            (CHILD, "1"),
            ("VK_INSTANCE_LAYERS", "VK_LAYER_KHRONOS_validation"),
        ];
        return run_in_child(&["--exact", &trial, "--test-threads=1"], &env, |out| {
            out.contains("1 passed")
        });
    }
    let (_, mut b) = match open_validated(devs) {
        Ok(v) => v,
        Err(skipped) => return skipped,
    };
    let frame = Frame::generate(64, 8, 11);
    builtin::load(&mut b, KernelVariant::GridStride, &frame).unwrap();
    b.dispatch_each(
        blocksweep_core::Launch::linear(blocksweep_core::BlockSize::linear(64), 8),
        0,
        1,
    )
    .unwrap();
    let mut out = vec![0f32; 512];
    builtin::read(&mut b, &mut out).unwrap();
    assert_eq!(b.diagnostics(), Vec::<String>::new());
    Completion::Completed
}

/// The core's subgroup probe (shaders/subgroup.comp through `load_program`, at the default
/// size and at every size a pipeline may require) under validation: what it measures agrees
/// with itself, a size outside minSubgroupSize..maxSubgroupSize is refused naming the rule,
/// and the layer says nothing.
fn subgroup_probe_is_consistent_and_clean_under_validation(devs: &[DeviceIdentity]) -> Completion {
    let (d, mut b) = match open_validated(devs) {
        Ok(v) => v,
        Err(skipped) => return skipped,
    };
    let s = blocksweep_core::subgroup::probe(&mut b);
    assert_eq!(s.unmeasured, None, "{s:?}");
    s.self_consistent().unwrap();
    let ran = s.dispatches.iter().filter(|d| d.subgroups().is_some());
    assert!(
        ran.count() >= blocksweep_core::subgroup::PROBE_BLOCKS.len(),
        "{s:?}"
    );
    // The reported size is subgroupSize, and every size the pipeline may require ran as such.
    let size = b.limits().warp_size.as_ref().map(|w| w.value as u32);
    assert_eq!(
        s.block(32).unwrap().reported(),
        size.into_iter().collect::<Vec<_>>()
    );
    for &r in &s.claims.required {
        for d in s.at(Some(r)) {
            assert_eq!(d.reported(), [r], "{d:?}");
        }
    }
    if d.kind == DeviceKind::Cpu {
        assert!(
            !s.claims.required.is_empty(),
            "lavapipe may require its size"
        );
    }
    let source = blocksweep_core::ProgramSource {
        language: blocksweep_vulkan::GLSL,
        code: b"#version 450\nvoid main() {}\n".to_vec(),
        entry: "main".into(),
        origin: "empty.comp".into(),
        options: vec!["--required-subgroup-size=3".into()],
    };
    let args = [blocksweep_core::ProgramArg::buffer(4)];
    let e = b.load_program(&source, &args).unwrap_err();
    assert!(
        e.message.contains("power of two") || e.message.contains("cannot require"),
        "{e}"
    );
    let log = b.message_log();
    drop(b);
    assert_eq!(
        log.messages(),
        Vec::<String>::new(),
        "{} under validation",
        d.name
    );
    Completion::Completed
}

fn main() -> ExitCode {
    Suite::new(&blocksweep_vulkan::PROVIDER)
        .all_devices(
            "clean_under_validation",
            the_kit_and_teardown_are_clean_under_validation,
        )
        .all_devices(
            "builtins_clean_under_validation",
            builtins_copies_and_teardown_are_clean_under_validation,
        )
        .all_devices(
            "validation_reports_a_missing_barrier",
            validation_is_live_and_reports_a_missing_barrier,
        )
        .all_devices(LOADER_TEST, loader_notices_are_not_diagnostics)
        .all_devices(
            "subgroup_probe_clean_under_validation",
            subgroup_probe_is_consistent_and_clean_under_validation,
        )
        .run()
}
