//! The clocks read around each API's turn: recorded on its result, and the result marked where
//! they moved.

use std::sync::Mutex;

use crate::backend::{Api, DeviceIdentity};
use crate::blocks::parse_blocks;
use crate::clocks::{ClockReader, Clocks};
use crate::report::Report;
use crate::sweep::SweepConfig;
use crate::testing::{HostBackend, TEST_API_A, TEST_API_B};
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
    super::alpha_beta_tests::sweep_alpha_beta(&config, (true, clocks), &HostBackend::new)
}

#[test]
fn clocks_that_ramp_during_a_turn_mark_that_api_alone() {
    let ramp = Ramp {
        read: Mutex::new(Vec::new()),
    };
    let report = sweep_with(Some(&ramp));
    // Each API read at the start of its own turn, after each of its two rows and at the end,
    // one turn after the other.
    let read = ramp.read.lock().unwrap().clone();
    let (a, b) = (TEST_API_A, TEST_API_B);
    assert_eq!(read, [a, a, a, a, b, b, b, b]);
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

/// The SM clock each API reads at its nth reading (start of turn, after each row, end).
struct Script(fn(Api, usize) -> u32, Mutex<Vec<Api>>);

impl ClockReader for Script {
    fn read(&self, device: &DeviceIdentity) -> Option<Clocks> {
        let mut read = self.1.lock().unwrap();
        let nth = read.iter().filter(|&&a| a == device.api).count();
        read.push(device.api);
        Some(Clocks {
            sm_mhz: self.0(device.api, nth),
            mem_mhz: 2619,
            max_sm_mhz: Some(1980),
            reasons: Vec::new(),
        })
    }
}

/// nvbench's rule: a row timed below 75 % of the stated SM clock is measured again. Alpha
/// reads 345 MHz at its start and after its first row's first measurement, then 1980: that row
/// runs twice and keeps the second, noted; Beta stays at 900 MHz (45 %): each row runs twice,
/// is marked slow, and says both clocks. Every row keeps the clock read beside it.
#[test]
fn a_row_timed_below_75_percent_of_the_clock_runs_again_and_is_marked_if_still_slow() {
    let script = Script(
        |api, nth| match (api == TEST_API_A, nth) {
            (true, 0 | 1) => 345,
            (true, _) => 1980,
            (false, _) => 900,
        },
        Mutex::new(Vec::new()),
    );
    let report = sweep_with(Some(&script));
    let (a, b) = (TEST_API_A, TEST_API_B);
    // Alpha: start, row 32 twice, row 64, end; Beta: start, each row twice, end.
    let read = script.1.lock().unwrap().clone();
    assert_eq!(read, [a, a, a, a, a, b, b, b, b, b, b]);
    let alpha = report.results.iter().find(|r| r.api == a).unwrap();
    let first = &alpha.rows[0];
    assert_eq!((first.sm_mhz, first.slow_clock), (Some(1980), false));
    assert_eq!(
        first.note.as_deref(),
        Some("measured again: the first measurement ran at SM clock 345 MHz, below 75 % of its stated 1980 MHz")
    );
    assert!(first.verified && first.timing.is_some());
    assert_eq!(alpha.rows[1].note, None);
    assert_eq!(alpha.rows[1].sm_mhz, Some(1980));
    let beta = report.results.iter().find(|r| r.api == b).unwrap();
    for row in &beta.rows {
        assert_eq!((row.sm_mhz, row.slow_clock), (Some(900), true));
        let note = row.note.as_deref().unwrap_or_default();
        assert!(
            note.starts_with("measured twice on a slowed GPU: SM clock 900 MHz"),
            "{note}"
        );
    }
    // In the file, and read back.
    let json = serde_json::to_value(&report).unwrap();
    assert_eq!(json["results"][1]["rows"][0]["slow_clock"], true);
    assert_eq!(json["results"][1]["rows"][0]["sm_mhz"], 900);
    let back: Report = serde_json::from_value(json).unwrap();
    assert_eq!(back.results[1].rows, beta.rows);
}
