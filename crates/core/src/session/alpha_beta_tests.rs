//! The sweep the session's tests share: the host backends Alpha and Beta (blocks 32 and 64)
//! over a 64x16 frame through the pipeline.

use crate::backend::{Api, Backend, BackendError, DeviceIdentity};
use crate::clocks::ClockReader;
use crate::frame::Frame;
use crate::provider::Targets;
use crate::report::Report;
use crate::sweep::{Quiet, SweepConfig};
use crate::testing::{HostBackend, TEST_API_A, TEST_API_B};
use crate::workload::{sweep, SweepJob, Workload};

/// Sweeps Alpha and Beta under `config` (its blocks, protocol, copy), as one physical device
/// or two; `make` builds each API's backend (a test sets its limits there); `clocks` is read
/// where given.
pub(super) fn sweep_alpha_beta(
    config: &SweepConfig,
    (one_device, clocks): (bool, Option<&dyn ClockReader>),
    make: &(dyn Fn(Api) -> HostBackend + Sync),
) -> Report {
    let devices: Vec<DeviceIdentity> = [TEST_API_A, TEST_API_B]
        .iter()
        .map(|&api| HostBackend::new(api).identity)
        .collect();
    let job = SweepJob {
        targets: Targets {
            devices,
            note: "test device".into(),
            one_physical_device: one_device,
        },
        config,
        overlap_close: false,
        clocks,
    };
    let open = |d: &DeviceIdentity| -> Result<Box<dyn Backend>, BackendError> {
        Ok(Box::new(make(d.api)))
    };
    let mut made = Workload::frame(Frame::generate(64, 16, 5));
    let mut report = Report::new("t", "d");
    sweep(&open, &job, &mut made, &mut report, &mut Quiet, &mut |_| {}).unwrap();
    report
}
