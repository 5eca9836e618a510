//! A tune: the whole launch searched across APIs. A configuration is the kernel's own
//! parameters (a spec's `[tune]`), a block and a grid policy; every API runs every
//! configuration it can, and the answer (`answer.rs`) names each API's best, the portable set
//! and the regret of the portable choice.
//!
//! The driver (`driver.rs`) searches the space in its order (`space.rs`) within the budget,
//! one sweep of the session's pipeline per parameter set (`set.rs`: each is a compile), with
//! the cache (`cache.rs`) and a second measurement of each winner; the program running it
//! gives its progress display and how each API opens. Beside it: the rows gathered from the
//! sweeps' results, the answer and the document.

mod answer;
pub mod cache;
mod check;
pub mod document;
mod driver;
mod fields;
mod merge;
mod set;
mod space;

pub use answer::{ApiBest, Held, PortableChoice, TuneAnswer};
pub use check::compare_outputs;
pub use driver::{check_grids, nothing_ran, run, Budget, Caller, Tune};
pub use merge::merge;
pub use space::{Order, Space};

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

use crate::api::Api;
use crate::blocks::BlockSize;
use crate::grid::GridPolicy;
use crate::measure::TimeStats;
use crate::sweep::SweepResult;

/// One configuration: the kernel's parameters (empty for a kernel without `[tune]`), the
/// block and the grid policy.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Config {
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub params: BTreeMap<String, u64>,
    pub block: BlockSize,
    pub grid: GridPolicyKey,
}

/// A grid policy as a key: its words (`1w`, `data`, `4096`), which order and compare.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct GridPolicyKey(pub String);

impl From<GridPolicy> for GridPolicyKey {
    fn from(g: GridPolicy) -> Self {
        GridPolicyKey(g.to_string())
    }
}

impl Config {
    /// "ELEMS=4": the parameters alone ("" without any).
    pub fn params_text(&self) -> String {
        params_text(&self.params)
    }
}

/// "ELEMS=4,TILE=16".
pub fn params_text(p: &BTreeMap<String, u64>) -> String {
    p.iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(",")
}

impl fmt::Display for Config {
    /// "ELEMS=4 block 256 grid 1w".
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !self.params.is_empty() {
            write!(f, "{} ", self.params_text())?;
        }
        write!(f, "block {} grid {}", self.block, self.grid.0)
    }
}

/// What one configuration did on one API.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Outcome {
    /// Ran and checked out (or was timed only, for a timing-only spec).
    Ran {
        stats: TimeStats,
        reps: u32,
        resolution_ms: f64,
        gbps: Option<f64>,
    },
    /// Refused before launch (a device or kernel limit), in its words.
    Refused { why: String },
    /// Its API's sweep of this parameter set stopped before it (a wrong output, a fault).
    NotRun { why: String },
}

/// One configuration on one API.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    pub api: Api,
    pub config: Config,
    /// Blocks launched.
    pub grid_blocks: u64,
    pub outcome: Outcome,
    /// Read from the cache rather than measured in this run.
    #[serde(default)]
    pub cached: bool,
}

impl Entry {
    pub fn ms(&self) -> Option<f64> {
        match &self.outcome {
            Outcome::Ran { stats, .. } => Some(stats.mean),
            _ => None,
        }
    }
}

/// A configuration refused before anything compiled or launched, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Rejected {
    pub config: Config,
    pub why: String,
}

/// A parameter set whose output differs from the first configuration's on an API: named,
/// and none of its rows ranked there.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Wrong {
    pub api: Api,
    pub params: BTreeMap<String, u64>,
    pub detail: String,
}

/// How the space was searched, and what it cost.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Search {
    /// "exhaustive", or "sampled (seed 7)".
    pub order: String,
    /// Configurations in the space, before the constraints.
    pub space: usize,
    /// Configurations the budget let in (all, without one).
    pub covered: usize,
    /// (configuration, API) pairs measured in this run, and read from the cache.
    pub measured: usize,
    pub from_cache: usize,
    /// Parameter sets compiled (one build per API each), and their wall time in seconds.
    pub compiles: usize,
    pub compile_s: f64,
    /// The whole tune's wall time, in seconds.
    pub wall_s: f64,
    /// What stopped the search early, where something did (the budget).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped: Option<String>,
}

/// Everything a tune found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TuneReport {
    pub tool: String,
    pub date: String,
    /// "grayscale frame 1280x720", "kernel 'reduce-elems' at n=65536".
    pub kernel: String,
    #[serde(with = "fields::params")]
    pub params: Vec<(String, Vec<u64>)>,
    pub restrict: Vec<String>,
    pub grids: Vec<String>,
    pub blocks: Vec<BlockSize>,
    /// The device each API ran on: "Vulkan: llvmpipe (...)".
    pub devices: Vec<String>,
    pub answer: TuneAnswer,
    pub search: Search,
    pub rejected: Vec<Rejected>,
    pub wrong: Vec<Wrong>,
    /// A parameter set that could not be swept at all (bad sizes at its values, nothing
    /// opened), in words with the set named.
    #[serde(default)]
    pub errors: Vec<String>,
    pub entries: Vec<Entry>,
}

impl TuneReport {
    /// The APIs with at least one entry, in first-seen order.
    pub fn apis(&self) -> Vec<Api> {
        let mut out: Vec<Api> = Vec::new();
        for e in &self.entries {
            if !out.contains(&e.api) {
                out.push(e.api);
            }
        }
        out
    }

    /// Whether an API's output at these parameters was found wrong.
    pub fn is_wrong(&self, api: Api, params: &BTreeMap<String, u64>) -> bool {
        self.wrong
            .iter()
            .any(|w| w.api == api && &w.params == params)
    }

    /// Recomputes the answer from the entries (kept apart so a merged report can too).
    pub fn refresh_answer(&mut self, held: &[Held]) {
        self.answer = answer::answer(self, held);
    }

    /// Rejections counted by reason, the commonest first: "12 restrict: TILE * TILE <= block".
    pub fn rejected_by_reason(&self) -> Vec<(usize, String)> {
        let mut counts: Vec<(usize, String)> = Vec::new();
        for r in &self.rejected {
            // The values differ per configuration; the rule is the reason.
            let reason = r.why.split(" (").next().unwrap_or(&r.why).to_string();
            match counts.iter_mut().find(|(_, w)| *w == reason) {
                Some((n, _)) => *n += 1,
                None => counts.push((1, reason)),
            }
        }
        counts.sort_by_key(|c| std::cmp::Reverse(c.0));
        counts
    }
}

/// The entries one API's sweep of one parameter set produced: a row each, by its policy (a
/// tune's rows carry one; a sweep without a grid axis has `policy` for all).
pub fn entries_of(
    result: &SweepResult,
    params: &BTreeMap<String, u64>,
    policy: GridPolicy,
) -> Vec<Entry> {
    let resolution_ms = result.timer.resolution_ns / 1e6;
    result
        .rows
        .iter()
        .map(|r| {
            let outcome = match (&r.skipped, &r.timing) {
                (Some(why), _) => Outcome::Refused { why: why.clone() },
                (None, Some(t)) => Outcome::Ran {
                    stats: t.stats,
                    reps: t.reps,
                    resolution_ms,
                    gbps: r.gbps,
                },
                (None, None) => Outcome::NotRun {
                    why: result.error.clone().unwrap_or_else(|| "did not run".into()),
                },
            };
            Entry {
                api: result.api,
                config: Config {
                    params: params.clone(),
                    block: r.block,
                    grid: r.policy.unwrap_or(policy).into(),
                },
                grid_blocks: r.grid,
                outcome,
                cached: false,
            }
        })
        .collect()
}
