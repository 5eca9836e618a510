//! Results from different GPUs or machines side by side (a "T4 vs 5090 vs H100"
//! view): per block size, each (file, API)'s fraction of its own best, and each one's fastest
//! size. Absolute times from different GPUs do not compare; ratios within one run do, provided
//! the runs measured the same thing: runs that differ in frame size, protocol or grid policy
//! are compared with a warning saying so.

use serde::Serialize;

use super::across::{device_noun, Across};
use super::envelope::EnvelopeDevice;
use super::Report;
use crate::backend::{Api, DeviceIdentity};
use crate::blocks::BlockSize;
use crate::grid::GridPolicy;
use crate::measure::{tie_threshold, Protocol};
use crate::sweep::{SweepResult, Verdict};
use crate::words::ms;

/// One column: one API's result in one run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Run {
    /// The file's label (its stem; "stem#i" for the i-th device of a multi-device file).
    pub label: String,
    pub api: Api,
    pub device: String,
    pub date: String,
    pub frame: (u32, u32),
    pub protocol: Protocol,
    pub policy: GridPolicy,
    /// The fastest block size, its mean time (ms), and how many rows ran / reached 95 %.
    pub fastest: Option<BlockSize>,
    pub fastest_ms: Option<f64>,
    pub within_95: usize,
    pub rows_run: usize,
}

/// One block size's cell in one column. JSON: an object whose `kind` says which.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Cell {
    /// The run's best mean time ÷ this size's (1.0 = its fastest); `tie`: within the noise;
    /// `verdict`: the row's verdict in its run, the same one its own table showed.
    Ran {
        of_best: f64,
        tie: bool,
        #[serde(skip_serializing_if = "Option::is_none")]
        verdict: Option<Verdict>,
    },
    /// The run skipped this size (a limit), with why.
    Skipped { why: String },
    /// The run did not include this size.
    NotSwept,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Line {
    pub block: BlockSize,
    pub cells: Vec<Cell>,
}

/// What `compare` prints.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Comparison {
    pub runs: Vec<Run>,
    pub rows: Vec<Line>,
    /// Ways the runs differ that change what their ratios mean (frame, protocol, grid).
    pub warnings: Vec<String>,
    /// The answer across GPUs, where the runs measured more than one (report/across.rs).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub across: Option<Across>,
    /// The devices the runs measured, once each (the envelope's `devices`).
    #[serde(skip)]
    pub devices: Vec<DeviceIdentity>,
    /// The devices tune files listed (the envelope's `devices` too).
    #[serde(skip)]
    pub listed: Vec<EnvelopeDevice>,
}

impl Comparison {
    /// Every API result of every report, each report with its label (usually its file name).
    pub fn of(reports: &[(String, Report)]) -> Comparison {
        let mut runs = Vec::new();
        let mut results: Vec<&SweepResult> = Vec::new();
        for (label, rep) in reports {
            for r in &rep.results {
                let best = r.best();
                runs.push(Run {
                    label: label.clone(),
                    api: r.api,
                    device: r.device.name.clone(),
                    date: rep.date.clone(),
                    frame: (r.frame.width, r.frame.height),
                    protocol: r.protocol.clone(),
                    policy: r.policy,
                    fastest: best.map(|b| b.block),
                    fastest_ms: best.and_then(|b| b.mean_ms()),
                    within_95: r.rows_good(),
                    rows_run: r.rows_run(),
                });
                results.push(r);
            }
        }
        let mut blocks: Vec<BlockSize> = results
            .iter()
            .flat_map(|r| r.rows.iter().map(|x| x.block))
            .collect();
        blocks.sort_by_key(|b| (b.threads(), *b));
        blocks.dedup();
        let rows = blocks
            .into_iter()
            .map(|block| Line {
                block,
                cells: results
                    .iter()
                    .map(|r| match r.rows.iter().find(|x| x.block == block) {
                        Some(x) => match (x.of_best, &x.skipped) {
                            (Some(o), _) => Cell::Ran {
                                of_best: o,
                                tie: x.ties_best,
                                verdict: x.verdict,
                            },
                            (None, Some(why)) => Cell::Skipped { why: why.clone() },
                            (None, None) => Cell::Skipped {
                                why: x.note.clone().unwrap_or_else(|| "did not finish".into()),
                            },
                        },
                        None => Cell::NotSwept,
                    })
                    .collect(),
            })
            .collect();
        let mut warnings = warnings(&runs);
        warnings.extend(disagreements(&runs, &results));
        let devices = results.iter().map(|r| r.device.clone()).collect();
        Comparison {
            runs,
            rows,
            warnings,
            across: None,
            devices,
            listed: Vec::new(),
        }
    }

    /// The answer across GPUs alone (tunes: no side-by-side table of block sizes), with the
    /// devices the files listed.
    pub fn across_only(mut across: Across, listed: Vec<EnvelopeDevice>) -> Comparison {
        Comparison {
            runs: Vec::new(),
            rows: Vec::new(),
            warnings: std::mem::take(&mut across.warnings),
            across: Some(across),
            devices: Vec::new(),
            listed,
        }
    }

    /// What the words call the runs' devices: "GPU" where every one is known to be one, else
    /// "device".
    pub fn noun(&self) -> &'static str {
        device_noun(self.devices.iter().map(|d| Some(d.kind)))
    }

    /// The answer across GPUs added to the side-by-side table, its warnings with the table's.
    pub fn with_across(mut self, mut across: Across) -> Comparison {
        self.warnings.append(&mut across.warnings);
        self.across = Some(across);
        self
    }
}

/// "a, b: 3840 x 2160; c: 640 x 360": the runs' files (each named once) by the value they
/// hold, where they hold more than one.
fn groups<T: PartialEq, F: Fn(&T) -> String>(runs: &[Run], vals: &[T], show: F) -> Option<String> {
    let mut distinct: Vec<(&T, Vec<&str>)> = Vec::new();
    for (r, v) in runs.iter().zip(vals) {
        let file = r.label.split('#').next().unwrap_or(&r.label);
        match distinct.iter_mut().find(|(d, _)| *d == v) {
            Some((_, files)) if files.contains(&file) => {}
            Some((_, files)) => files.push(file),
            None => distinct.push((v, vec![file])),
        }
    }
    if distinct.len() < 2 {
        return None;
    }
    let parts: Vec<String> = distinct
        .iter()
        .map(|(v, files)| format!("{}: {}", files.join(", "), show(v)))
        .collect();
    Some(parts.join("; "))
}

/// Why two timing disciplines' ratios differ, in words, for the disciplines named.
pub(crate) fn timing_words(names: &[String]) -> &'static str {
    match names.iter().any(|n| n == "synced") {
        true => "synced timing adds launch latency to every dispatch, so its ratios read flatter.",
        false => {
            "a dispatch timed alone carries its own start and end, a batch shares them, so \
                  their ratios differ."
        }
    }
}

fn warnings(runs: &[Run]) -> Vec<String> {
    let mut w = Vec::new();
    let frames: Vec<(u32, u32)> = runs.iter().map(|r| r.frame).collect();
    if let Some(g) = groups(runs, &frames, |(a, b)| format!("{a} x {b}")) {
        w.push(format!(
            "The runs used different frame sizes ({g}): a frame that fits in cache or too \
             small to fill the device changes the curve's shape."
        ));
    }
    let disciplines: Vec<_> = runs.iter().map(|r| r.protocol.discipline).collect();
    if let Some(g) = groups(runs, &disciplines, |d| d.to_string()) {
        let names: Vec<String> = disciplines.iter().map(|d| d.to_string()).collect();
        w.push(format!(
            "The runs were timed differently ({g}): {}",
            timing_words(&names)
        ));
    }
    let caches: Vec<_> = runs.iter().map(|r| r.protocol.caches.key()).collect();
    if let Some(g) = groups(runs, &caches, |c| c.to_string()) {
        w.push(format!(
            "The runs found the caches differently ({g}): a hot row whose data fits in the \
             last-level cache reads the cache, a cold one memory (--cold)."
        ));
    }
    let reps: Vec<_> = runs
        .iter()
        .map(|r| (r.protocol.warmups, r.protocol.reps))
        .collect();
    if let Some(g) = groups(runs, &reps, |(w, r)| format!("{w} warm-ups, {}", r.words())) {
        w.push(format!(
            "The runs repeated differently ({g}): fewer dispatches mean noisier ratios."
        ));
    }
    let policies: Vec<_> = runs.iter().map(|r| r.policy).collect();
    if let Some(g) = groups(runs, &policies, |p| format!("--grid {p}")) {
        w.push(format!(
            "The runs chose grids differently ({g}): the grid changes each row as much as the \
             block does."
        ));
    }
    w
}

/// Runs of the same device, API and frame whose rows differ by more than their own noise
/// allows: at least one was disturbed, and neither ranking can be trusted as it stands.
fn disagreements(runs: &[Run], results: &[&SweepResult]) -> Vec<String> {
    let mut w = Vec::new();
    for i in 0..results.len() {
        for j in i + 1..results.len() {
            let (a, b) = (results[i], results[j]);
            let same_device = match (a.device.uuid, b.device.uuid) {
                (Some(x), Some(y)) => x == y,
                _ => a.device.name == b.device.name,
            };
            // Hot and cold rows differ by design, not by a disturbance.
            let caches = |r: &Run| r.protocol.caches.key();
            let (ri, rj) = (&runs[i], &runs[j]);
            if a.api != b.api || !same_device || ri.frame != rj.frame || caches(ri) != caches(rj) {
                continue;
            }
            let resolution_ms = a.timer.resolution_ns.max(b.timer.resolution_ns) / 1e6;
            let apart: Vec<String> = a
                .rows
                .iter()
                .filter_map(|x| {
                    let y = b.rows.iter().find(|y| y.block == x.block)?;
                    let (tx, ty) = (x.timing.as_ref()?, y.timing.as_ref()?);
                    let reps = tx.reps.min(ty.reps);
                    let limit = tie_threshold(&tx.stats, &ty.stats, resolution_ms, reps);
                    let (lo, hi) = (
                        tx.stats.mean.min(ty.stats.mean),
                        tx.stats.mean.max(ty.stats.mean),
                    );
                    (hi > lo * (1.0 + limit)).then(|| {
                        format!(
                            "{} ({} vs {} ms)",
                            x.block,
                            ms(tx.stats.mean),
                            ms(ty.stats.mean)
                        )
                    })
                })
                .collect();
            if !apart.is_empty() {
                w.push(format!(
                    "Columns {} and {} measured the same device ({}, {}) and disagree beyond \
                     their own noise at {}: at least one run was disturbed; rerun on a quieter \
                     machine before trusting either ranking.",
                    i + 1,
                    j + 1,
                    a.api,
                    a.device.name,
                    apart.join(", ")
                ));
            }
        }
    }
    w
}

#[cfg(test)]
#[path = "compare_tests.rs"]
mod tests;
