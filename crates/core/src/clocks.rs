//! The device's clocks around each API's turn: what the GPU ran at while a table was measured.
//!
//! A GPU that idles at a few hundred MHz boosts within the first API's turn, and one that heats
//! or meets its power cap slows down mid-run; either changes the rows (issue 41). The core reads
//! nothing itself: a [`ClockReader`] (the CLI's, through the vendor's management library) is
//! asked at the start and end of every turn, and the result records both readings and says,
//! in words, when they moved.

use serde::{Deserialize, Serialize};

use crate::backend::DeviceIdentity;

/// One reading of a device's clocks, in MHz, and the reasons its driver gives for holding the
/// clocks where they are (words such as "gpu_idle", "sw_power_cap").
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Clocks {
    pub sm_mhz: u32,
    pub mem_mhz: u32,
    /// The highest SM clock the device states, where it states one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_sm_mhz: Option<u32>,
    #[serde(default)]
    pub reasons: Vec<String>,
}

impl Clocks {
    /// The reasons that slow a busy device: all but [`QUIET_REASONS`].
    pub fn slowing(&self) -> Vec<&str> {
        self.reasons
            .iter()
            .map(String::as_str)
            .filter(|r| !QUIET_REASONS.contains(r))
            .collect()
    }
}

impl Clocks {
    /// Where the SM clock is below [`SLOW_FRACTION`] of the device's stated maximum, in words
    /// ("SM clock 1200 MHz, below 75 % of its stated 1980 MHz"); `None` where it is not, or
    /// no maximum is stated.
    pub fn slow(&self) -> Option<String> {
        let max = self.max_sm_mhz.filter(|&m| m > 0)?;
        (f64::from(self.sm_mhz) < SLOW_FRACTION * f64::from(max)).then(|| {
            format!(
                "SM clock {} MHz, below {:.0} % of its stated {max} MHz",
                self.sm_mhz,
                SLOW_FRACTION * 100.0
            )
        })
    }
}

/// A row measured while the SM clock read below this fraction of the device's stated maximum
/// is measured again once, as nvbench discards such samples (a clock still ramping from idle,
/// or held down by heat or power).
pub const SLOW_FRACTION: f64 = 0.75;

/// Reasons that say nothing about a slowdown: an idle device, and clocks a user set.
pub const QUIET_REASONS: &[&str] = &["gpu_idle", "applications_clocks_setting"];

/// An SM clock that changed by more than this fraction between a turn's start and end moved.
pub const MOVED_FRACTION: f64 = 0.03;

/// The clocks at the start and end of one API's turn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TurnClocks {
    pub start: Clocks,
    pub end: Clocks,
}

impl TurnClocks {
    /// Why the turn's rows ran on moving clocks, in words; `None` when the SM clock held within
    /// [`MOVED_FRACTION`] and nothing slowed the device at either end.
    pub fn moved(&self) -> Option<String> {
        let (a, b) = (self.start.sm_mhz, self.end.sm_mhz);
        let mut why = Vec::new();
        if f64::from(a.abs_diff(b)) > MOVED_FRACTION * f64::from(a.max(b).max(1)) {
            why.push(format!("SM clock {a} MHz → {b} MHz during the turn"));
        }
        for (when, c) in [("start", &self.start), ("end", &self.end)] {
            let slowing = c.slowing();
            if !slowing.is_empty() {
                why.push(format!("{} at the {when}", slowing.join(", ")));
            }
        }
        (!why.is_empty()).then(|| why.join("; "))
    }
}

/// Reads a device's clocks; `None` where the device has none to read (not a GPU the reader
/// knows, or the reading failed).
pub trait ClockReader: Sync {
    fn read(&self, device: &DeviceIdentity) -> Option<Clocks>;

    /// The reading beside each row: its SM clock and stated maximum are read now; a reader may
    /// leave the rest as the last full [`Self::read`] found (a full reading cost a 13-row turn on
    /// the H100 tens of milliseconds, one call the SM clock alone).
    fn read_row(&self, device: &DeviceIdentity) -> Option<Clocks> {
        self.read(device)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(sm: u32, reasons: &[&str]) -> Clocks {
        Clocks {
            sm_mhz: sm,
            mem_mhz: 2619,
            max_sm_mhz: Some(1980),
            reasons: reasons.iter().map(|r| r.to_string()).collect(),
        }
    }

    fn turn(start: Clocks, end: Clocks) -> TurnClocks {
        TurnClocks { start, end }
    }

    #[test]
    fn steady_clocks_and_quiet_reasons_do_not_move() {
        let t = turn(
            at(1980, &["gpu_idle"]),
            at(1950, &["applications_clocks_setting"]),
        );
        assert_eq!(t.moved(), None);
    }

    #[test]
    fn a_ramp_from_idle_moves() {
        let t = turn(at(345, &["gpu_idle"]), at(1980, &[]));
        assert_eq!(
            t.moved().as_deref(),
            Some("SM clock 345 MHz → 1980 MHz during the turn")
        );
    }

    #[test]
    fn a_slowing_reason_moves_even_at_a_steady_clock() {
        let t = turn(at(1755, &[]), at(1755, &["gpu_idle", "sw_power_cap"]));
        assert_eq!(t.moved().as_deref(), Some("sw_power_cap at the end"));
    }
}
