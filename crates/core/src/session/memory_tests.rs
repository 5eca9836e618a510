//! The memory of one GPU that several APIs share: an API whose memory another's copy took fails
//! alone, and APIs that cannot hold the frame together take turns holding it.

use std::sync::atomic::Ordering;

use crate::backend::{Api, Backend, BackendError, DeviceIdentity};
use crate::frame::Frame;
use crate::limits::Named;
use crate::provider::Targets;
use crate::report::Report;
use crate::sweep::SweepConfig;
use crate::testing::{HostBackend, TEST_API_A, TEST_API_B};
use crate::workload::{sweep, SweepJob, Workload};

use super::pipeline_tests::config;

/// Alpha and Beta on one physical device, swept with `config`.
fn alpha_and_beta_on_one_gpu(config: &SweepConfig) -> SweepJob<'_> {
    let devices: Vec<DeviceIdentity> = [TEST_API_A, TEST_API_B]
        .iter()
        .map(|&api| HostBackend::new(api).identity)
        .collect();
    SweepJob {
        targets: Targets {
            devices,
            note: "test device".into(),
            one_physical_device: true,
        },
        config,
        overlap_close: false,
        clocks: None,
    }
}

/// The H100's 50000x50000 frame: each API fits the GPU alone, but one finds its memory taken by
/// the other's copy. That API fails under its name; the other's measured rows stay, and the run
/// is no bad input (it ended with exit 2 and none of CUDA's verified rows).
#[test]
fn an_api_whose_memory_is_taken_fails_alone_and_the_measured_rows_stay() {
    use crate::workload::{sweep_device, Ended};
    let config = config();
    let job = alpha_and_beta_on_one_gpu(&config);
    // Sweeps the device with the memory of the APIs `taken` already taken by another copy.
    let sweep_with = |taken: &[Api]| {
        let open = |d: &DeviceIdentity| -> Result<Box<dyn Backend>, BackendError> {
            let mut b = HostBackend::new(d.api);
            b.memory_taken = taken.contains(&d.api);
            Ok(Box::new(b))
        };
        let mut made = Workload::frame(Frame::generate(64, 16, 5));
        let mut report = Report::new("t", "d");
        let quiet = &mut crate::sweep::Quiet;
        let ended = sweep_device(
            &open,
            &job,
            &mut made,
            &mut report,
            quiet,
            &mut |_| {},
            false,
        );
        (report, ended.unwrap())
    };
    let (report, ended) = sweep_with(&[TEST_API_B]);
    assert_eq!(ended, Ended::Measured { failed: true });
    let alpha = report.results.iter().find(|r| r.api == TEST_API_A).unwrap();
    assert_eq!(alpha.rows_run(), 2, "Alpha's rows are kept");
    let f = report
        .failures
        .iter()
        .find(|f| f.api == TEST_API_B)
        .unwrap();
    assert!(f.message.contains("TEST_MEMORY_TAKEN"), "{}", f.message);
    assert_eq!(f.kind, crate::report::FailureKind::Resources);
    // Both refused: nothing measured, which is the frame's size (bad input).
    let (_, ended) = sweep_with(&[TEST_API_A, TEST_API_B]);
    assert!(
        matches!(ended, Ended::BadInput(ref m) if m.contains("too large")),
        "{ended:?}"
    );
}

/// Two APIs on one GPU whose memory holds one copy of the frame, not two: they take turns
/// holding it (the first uploads while opening, the second after the first's turn freed its
/// copy), and both are measured. The H100's 50000x50000 frame is the real case: CUDA's and
/// OpenCL's 40 GB copies do not fit its 80 GB together.
#[test]
fn apis_that_cannot_hold_the_frame_together_take_turns_holding_it() {
    // 20 KiB stated, one frame 16 KiB. `allocates`: what the driver really lets one allocate,
    // at once or (as NVIDIA's OpenCL does) only at the first launch: a driver whose allocation
    // succeeds past what the device holds must not be trusted to refuse.
    for allocates in [20u64 << 10, 1 << 20] {
        let memory = crate::testing::DeviceMemory::new(allocates);
        turns_on(&memory);
        let peak = memory.peak.load(Ordering::SeqCst);
        assert!((4 * 64 * 16 * 4..=20 << 10).contains(&peak), "peak {peak}");
    }
}

fn turns_on(memory: &std::sync::Arc<crate::testing::DeviceMemory>) {
    let config = config();
    let job = alpha_and_beta_on_one_gpu(&config);
    let open = |d: &DeviceIdentity| -> Result<Box<dyn Backend>, BackendError> {
        let mut b = HostBackend::new(d.api);
        b.device_memory = Some(memory.clone());
        b.limits.global_mem_bytes = Some(Named::new(20 << 10, "TEST_DEVICE_MEMORY"));
        Ok(Box::new(b))
    };
    let mut made = Workload::frame(Frame::generate(64, 16, 5));
    let mut report = Report::new("t", "d");
    let outcome = sweep(
        &open,
        &job,
        &mut made,
        &mut report,
        &mut crate::sweep::Quiet,
        &mut |_| {},
    )
    .unwrap();
    assert!(!outcome.failed, "{:?}", report.failures);
    assert!(report.failures.is_empty(), "{:?}", report.failures);
    for r in &report.results {
        assert_eq!(r.rows_run(), 2, "{} measured", r.api);
    }
    assert_eq!(
        report.results.iter().map(|r| r.api).collect::<Vec<_>>(),
        [TEST_API_A, TEST_API_B],
        "results in target order"
    );
}
