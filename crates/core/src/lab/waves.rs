//! The grid sweep: one block, grids from a fraction of a wave to several waves.
//!
//! A wave is as many blocks as the device holds at once: resident blocks per multiprocessor x
//! multiprocessors (CUDA's occupancy API where CUDA sees the device, else the core's model; a
//! CPU device has no block slots, so one block per compute unit). The default sweep launches
//! exactly one wave and so "never sees the tail effect, where a grid of 1.1 waves spends its
//! last tenth running on almost nothing". This sweep walks the grid in steps of a tenth of a
//! wave (or any step) and measures two kernels:
//!
//! - [`WaveKernel::GridStride`]: the grayscale kernel on a fixed frame. Each block does
//!   pixels / (grid x threads) pixels, so every block takes about as long as every other, and
//!   a grid of 1.1 waves runs a full wave and then a tenth of one;
//! - [`WaveKernel::OnePerThread`]: the guarded one-pixel-per-thread kernel with a data-sized grid.
//!   Its grid is fixed by the data, so the frame changes with the row: `grid` rows of one
//!   block's width, n = grid x threads pixels (re-uploaded and verified per row).
//!
//! If every block takes the same time and a wave is the unit of scheduling, the share of the
//! block slots busy over the run is waves / ceil(waves): 1 at whole waves, 0.55 at 1.1 waves.
//! That is the sawtooth the measured GB/s is read against ([`slots_busy`]).

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

use crate::backend::{DeviceIdentity, DeviceKind, Residency};
use crate::blocks::BlockSize;
use crate::frame::FrameInfo;
use crate::measure::Timing;

/// Waves are written with up to three decimals and kept in thousandths, so that 0.5..4:0.1
/// gives exactly 36 points, with no floating-point drift.
const SCALE: u64 = 1000;

/// Most points one sweep may have.
pub const MAX_POINTS: u64 = 1000;

/// Largest number of waves a point may ask for.
pub const MAX_WAVES: u64 = 1000;

/// The step when a range gives none: a tenth of a wave.
pub const DEFAULT_STEP: &str = "0.1";

/// `--waves A..B:STEP`: from A to B waves inclusive, in steps of STEP (default 0.1); a single
/// number is one point. `waves:` in front is accepted (`--grid waves:0.5..4:0.1` reads the
/// same). Values in thousandths of a wave.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct WaveSpec {
    pub start: u64,
    pub end: u64,
    pub step: u64,
}

impl WaveSpec {
    /// Every point, in thousandths of a wave.
    pub fn points(&self) -> Vec<u64> {
        let step = self.step.max(1);
        (0..)
            .map(|k| self.start + k * step)
            .take_while(|&w| w <= self.end)
            .collect()
    }
}

impl fmt::Display for WaveSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "waves:{}..{}:{}",
            show_waves(self.start),
            show_waves(self.end),
            show_waves(self.step)
        )
    }
}

/// 1500 -> "1.5", 100 -> "0.1", 4000 -> "4".
pub fn show_waves(thousandths: u64) -> String {
    let whole = thousandths / SCALE;
    let frac = thousandths % SCALE;
    if frac == 0 {
        return whole.to_string();
    }
    let digits = format!("{frac:03}");
    format!("{whole}.{}", digits.trim_end_matches('0'))
}

/// "0.5" -> 500, "4" -> 4000, "1.125" -> 1125, in thousandths of a wave.
fn thousandths(item: &str, text: &str) -> Result<u64, String> {
    let t = text.trim();
    let bad = || {
        format!(
            "'{item}' is not a number of waves (expected e.g. 0.5, 1.25 or 4, at most 3 decimals)"
        )
    };
    let (whole, frac) = match t.split_once('.') {
        Some((w, f)) => (w, f),
        None => (t, ""),
    };
    if (whole.is_empty() && frac.is_empty())
        || frac.len() > 3
        || !whole.chars().all(|c| c.is_ascii_digit())
        || !frac.chars().all(|c| c.is_ascii_digit())
    {
        return Err(bad());
    }
    let w: u64 = if whole.is_empty() {
        0
    } else {
        whole.parse().map_err(|_| bad())?
    };
    let f: u64 = if frac.is_empty() {
        0
    } else {
        format!("{frac:0<3}").parse().map_err(|_| bad())?
    };
    w.checked_mul(SCALE)
        .and_then(|w| w.checked_add(f))
        .ok_or_else(bad)
}

impl FromStr for WaveSpec {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let item = s.trim();
        let body = item.strip_prefix("waves:").unwrap_or(item).trim();
        if body.is_empty() {
            return Err(
                "empty wave range (expected e.g. 0.5..4:0.1: from 0.5 to 4 waves in tenths)".into(),
            );
        }
        let (start, end, step) = match body.split_once("..") {
            Some((a, rest)) => {
                let (b, step) = rest.split_once(':').unwrap_or((rest, DEFAULT_STEP));
                (
                    thousandths(item, a)?,
                    thousandths(item, b)?,
                    thousandths(item, step)?,
                )
            }
            None => {
                let w = thousandths(item, body)?;
                (w, w, 1)
            }
        };
        if start == 0 {
            return Err(format!(
                "'{item}' starts at 0 waves: a launch needs at least one block"
            ));
        }
        if step == 0 {
            return Err(format!("'{item}' has step 0"));
        }
        if start > end {
            return Err(format!("'{item}' is empty: its start is above its end"));
        }
        if end > MAX_WAVES * SCALE {
            return Err(format!(
                "'{item}' goes to {} waves; at most {MAX_WAVES}",
                show_waves(end)
            ));
        }
        if (end - start) / step + 1 > MAX_POINTS {
            return Err(format!(
                "'{item}' has {} points; at most {MAX_POINTS}",
                (end - start) / step + 1
            ));
        }
        Ok(WaveSpec { start, end, step })
    }
}

/// One wave of `block` on a device: how many blocks it holds at once, and who said so.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Wave {
    pub block: BlockSize,
    pub blocks_per_mp: u32,
    pub multiprocessors: u64,
    /// blocks_per_mp x multiprocessors (at least 1).
    pub blocks: u64,
    /// "cuOccupancyMaxActiveBlocksPerMultiprocessor", "model: ...", or why one block per
    /// compute unit was assumed.
    pub source: String,
}

impl Wave {
    /// The wave from the plan's residency; without one (a CPU device, or no model), one block
    /// per compute unit.
    pub fn new(
        block: BlockSize,
        residency: Option<&Residency>,
        multiprocessors: u64,
        kind: DeviceKind,
    ) -> Wave {
        let mps = multiprocessors.max(1);
        let (per_mp, source) = match residency {
            Some(r) if r.blocks_per_mp > 0 => (r.blocks_per_mp, r.source.clone()),
            Some(r) => (
                1,
                format!(
                    "{} says no block of {block} fits: one per multiprocessor assumed",
                    r.source
                ),
            ),
            None => (
                1,
                match kind {
                    DeviceKind::Cpu => {
                        "a CPU device has no block slots: one block per compute unit".to_string()
                    }
                    _ => "no occupancy data: one block per multiprocessor assumed".to_string(),
                },
            ),
        };
        Wave {
            block,
            blocks_per_mp: per_mp,
            multiprocessors: mps,
            blocks: (per_mp as u64 * mps).max(1),
            source,
        }
    }

    /// The grid for `thousandths` of a wave: rounded to the nearest block, at least one.
    pub fn grid(&self, thousandths: u64) -> u64 {
        ((thousandths.saturating_mul(self.blocks) + SCALE / 2) / SCALE).max(1)
    }
}

/// The two kernels of the grid sweep.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WaveKernel {
    /// The sweep's grid-stride kernel on a fixed frame.
    GridStride,
    /// One pixel per thread with a data-sized grid: the frame is grid x threads pixels.
    OnePerThread,
}

impl WaveKernel {
    pub const ALL: [WaveKernel; 2] = [WaveKernel::GridStride, WaveKernel::OnePerThread];

    pub fn key(self) -> &'static str {
        match self {
            WaveKernel::GridStride => "grid_stride",
            WaveKernel::OnePerThread => "one_per_thread",
        }
    }

    pub fn describe(self) -> &'static str {
        match self {
            WaveKernel::GridStride => "the sweep's grid-stride kernel, fixed frame",
            WaveKernel::OnePerThread => {
                "one pixel per thread, data-sized grid (frame = grid x threads pixels)"
            }
        }
    }
}

impl fmt::Display for WaveKernel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.key())
    }
}

/// waves / ceil(waves): the share of block slots busy over a run whose blocks all take the same
/// time, when a wave is the unit of scheduling. 1 at whole waves; 0.55 at 1.1.
pub fn slots_busy(waves: f64) -> f64 {
    if waves <= 0.0 || !waves.is_finite() {
        return 0.0;
    }
    waves / waves.ceil()
}

/// One planned point: the same grid on every API.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WavePoint {
    pub series: WaveKernel,
    /// The waves asked for, in thousandths: the first ask that gave this grid.
    pub asked: u64,
    /// The last ask that rounded to this grid (asks between were merged into it), in
    /// thousandths; equal to `asked` where no other ask did. Older files have none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub asked_last: Option<u64>,
    pub grid: u64,
    /// grid / wave: what the rounding to whole blocks gave.
    pub waves: f64,
    /// The frame this point runs on: the fixed frame, or (threads, grid) for one pixel per
    /// thread.
    pub width: u32,
    pub height: u32,
}

impl WavePoint {
    pub fn pixels(&self) -> u64 {
        self.width as u64 * self.height as u64
    }
}

/// The points of one series. `frame` is the fixed frame of the grid-stride series. Points
/// whose one-pixel-per-thread frame would not fit 32-bit extents are left out (they cannot be
/// reached with [`MAX_WAVES`] and a block below 2^22 threads).
pub fn plan(spec: &WaveSpec, wave: &Wave, series: WaveKernel, frame: (u32, u32)) -> Vec<WavePoint> {
    let threads = wave.block.threads();
    let mut out = Vec::new();
    for asked in spec.points() {
        let grid = wave.grid(asked);
        // Two asks that round to the same grid are one launch: measured once, the row
        // keeping the range of asks it stands for.
        if let Some(p) = out.iter_mut().find(|p: &&mut WavePoint| p.grid == grid) {
            p.asked_last = Some(asked);
            continue;
        }
        let (width, height) = match series {
            WaveKernel::GridStride => frame,
            WaveKernel::OnePerThread => match (u32::try_from(threads), u32::try_from(grid)) {
                (Ok(w), Ok(h)) => (w, h),
                _ => continue,
            },
        };
        out.push(WavePoint {
            series,
            asked,
            asked_last: None,
            grid,
            waves: grid as f64 / wave.blocks as f64,
            width,
            height,
        });
    }
    out
}

/// One measured point, for one API.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WaveRow {
    #[serde(flatten)]
    pub point: WavePoint,
    pub slots_busy: f64,
    pub timing: Option<Timing>,
    /// 16 bytes per pixel over the mean time, 10^9 bytes per second.
    pub gbps: Option<f64>,
    /// This row's GB/s over the series' best GB/s.
    pub of_best: Option<f64>,
    pub verified: bool,
    /// Why the point did not run (a limit named, or the API's refusal).
    pub skipped: Option<String>,
}

/// One API's grid sweep: both series for one block.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WaveResult {
    pub api: crate::api::Api,
    pub device: DeviceIdentity,
    pub wave: Wave,
    /// The grid-stride series' frame.
    pub frame: FrameInfo,
    pub rows: Vec<WaveRow>,
    /// Set when the sweep stopped early; the rows before it are kept.
    pub error: Option<String>,
}

impl WaveResult {
    /// Fills `of_best` per series.
    pub fn fill_relative(&mut self) {
        for s in WaveKernel::ALL {
            super::row::fill_of_best(self.rows.iter_mut().filter(|r| r.point.series == s));
        }
    }
}

#[cfg(test)]
#[path = "waves_tests.rs"]
mod tests;
