//! One model of what was measured and what it answers, for a sweep and a tune alike: a
//! [`Measurement`] is one configuration (the kernel's parameter set, a block, a grid policy)
//! on one API, and the [`Answer`] ranks them (`rank.rs`) and says it in words (`words.rs`).
//! A plain sweep is the case of one parameter set (none) and one grid policy.

mod rank;
#[cfg(test)]
mod tests;
mod words;

pub use rank::{
    Answer, ApiBest, Asked, Held, PortableChoice, Regret, Short, Shortfall, Stop, StopKind,
};

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

use crate::backend::Api;
use crate::blocks::BlockSize;
use crate::grid::GridPolicy;
use crate::measure::TimeStats;
use crate::sweep::SweepResult;

pub use crate::sweep::GOOD_FRACTION;

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
    /// Its API's sweep stopped before it (a wrong output, a fault).
    NotRun { why: String },
}

/// One configuration on one API.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Measurement {
    pub api: Api,
    /// The GPU it ran on, where an answer spans several (`compare`): with the API, the
    /// answer's column. Absent in one run's document.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu: Option<String>,
    pub config: Config,
    /// Blocks launched.
    pub grid_blocks: u64,
    pub outcome: Outcome,
    /// Read from the cache rather than measured in this run.
    #[serde(default)]
    pub cached: bool,
}

impl Measurement {
    /// The answer's column it is in: its GPU (where named) and its API.
    pub fn column(&self) -> (Option<&str>, Api) {
        (self.gpu.as_deref(), self.api)
    }

    pub fn ms(&self) -> Option<f64> {
        match &self.outcome {
            Outcome::Ran { stats, .. } => Some(stats.mean),
            _ => None,
        }
    }
}

/// A parameter set whose output differs from the first configuration's on an API: named,
/// and none of its measurements ranked there.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Wrong {
    pub api: Api,
    pub params: BTreeMap<String, u64>,
    pub detail: String,
}

/// The measurements one API's sweep of one parameter set made: one per row, by its policy (a
/// tune's rows carry one; a sweep without a grid axis has `policy` for all).
pub fn measurements_of(
    result: &SweepResult,
    params: &BTreeMap<String, u64>,
    policy: GridPolicy,
) -> Vec<Measurement> {
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
            Measurement {
                api: result.api,
                gpu: None,
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
