//! The clocks read around each API's turn: recorded on its result, and the result marked where
//! they moved.

use std::sync::Mutex;

use crate::backend::{Api, Backend, BackendError, DeviceIdentity};
use crate::blocks::parse_blocks;
use crate::clocks::{ClockReader, Clocks};
use crate::frame::Frame;
use crate::provider::Targets;
use crate::report::Report;
use crate::sweep::{Quiet, SweepConfig};
use crate::testing::{HostBackend, TEST_API_A, TEST_API_B};
use crate::workload::{sweep, FrameWorkload, SweepJob};
use crate::{Protocol, Reps};

/// Gives each API its readings in turn: Alpha ramps from idle, Beta holds its clock.
struct Ramp {
    read: Mutex<Vec<Api>>,
}

impl ClockReader for Ramp {
    fn read(&self, device: &DeviceIdentity) -> Option<Clocks> {
        let mut read = self.read.lock().unwrap();
        let nth = read.iter().filter(|&&a| a == device.api).count();
        read.push(device.api);
        let (sm, reasons) = match (device.api == TEST_API_A, nth) {
            (true, 0) => (345, vec!["gpu_idle".to_string()]),
            (true, _) => (1980, vec![]),
            (false, _) => (1980, vec!["applications_clocks_setting".to_string()]),
        };
        Some(Clocks {
            sm_mhz: sm,
            mem_mhz: 2619,
            max_sm_mhz: Some(1980),
            reasons,
        })
    }
}

fn sweep_with(clocks: Option<&dyn ClockReader>) -> Report {
    let config = SweepConfig {
        blocks: parse_blocks("32,64").unwrap(),
        protocol: Protocol {
            warmups: 0,
            reps: Reps::Fixed(2),
            ..Protocol::default()
        },
        copy: false,
        ..SweepConfig::default()
    };
    let devices: Vec<DeviceIdentity> = [TEST_API_A, TEST_API_B]
        .iter()
        .map(|&api| HostBackend::new(api).identity)
        .collect();
    let job = SweepJob {
        targets: Targets {
            devices,
            note: "test device".into(),
            one_physical_device: true,
        },
        config: &config,
        overlap_close: false,
        clocks,
    };
    let open = |d: &DeviceIdentity| -> Result<Box<dyn Backend>, BackendError> {
        Ok(Box::new(HostBackend::new(d.api)))
    };
    let mut made = FrameWorkload::new(Frame::generate(64, 16, 5));
    let mut report = Report::new("t", "d");
    sweep(&open, &job, &mut made, &mut report, &mut Quiet, &mut |_| {}).unwrap();
    report
}

#[test]
fn clocks_that_ramp_during_a_turn_mark_that_api_alone() {
    let ramp = Ramp {
        read: Mutex::new(Vec::new()),
    };
    let report = sweep_with(Some(&ramp));
    // Each API read twice, start and end of its own turn, one turn after the other.
    let read = ramp.read.lock().unwrap().clone();
    assert_eq!(read, [TEST_API_A, TEST_API_A, TEST_API_B, TEST_API_B]);
    let alpha = report.results.iter().find(|r| r.api == TEST_API_A).unwrap();
    let clocks = alpha.clocks.as_ref().expect("Alpha's clocks recorded");
    assert_eq!((clocks.start.sm_mhz, clocks.end.sm_mhz), (345, 1980));
    assert_eq!(
        alpha.clocks_moved.as_deref(),
        Some("SM clock 345 MHz → 1980 MHz during the turn")
    );
    let beta = report.results.iter().find(|r| r.api == TEST_API_B).unwrap();
    assert!(beta.clocks.is_some());
    assert_eq!(beta.clocks_moved, None, "a steady clock is not marked");
    // The clocks are in the file and read back.
    let json = serde_json::to_value(&report).unwrap();
    assert_eq!(json["results"][0]["clocks"]["start"]["sm_mhz"], 345);
    let back: Report = serde_json::from_value(json).unwrap();
    assert_eq!(back.results[0].clocks, alpha.clocks);
}

#[test]
fn without_a_reader_nothing_is_recorded_and_the_file_has_no_clocks() {
    let report = sweep_with(None);
    assert_eq!(report.results.len(), 2);
    for r in &report.results {
        assert_eq!((&r.clocks, &r.clocks_moved), (&None, &None));
    }
    let json = serde_json::to_value(&report).unwrap();
    let first = json["results"][0].as_object().unwrap();
    assert!(!first.contains_key("clocks") && !first.contains_key("clocks_moved"));
}
