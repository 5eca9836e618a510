//! The lab's two sweeps' reports as data: the shape sweep (`blocksweep shapes`) and the grid
//! sweep (`blocksweep tail`). blocksweep-render draws them.

use serde::{Deserialize, Serialize};

use crate::blocks::BlockSize;
use crate::lab::shapes::ShapeResult;
use crate::lab::waves::{WaveResult, WaveSpec};
use crate::measure::Protocol;
use crate::report::{Failure, Partial};

/// What `blocksweep shapes` prints: every API's shape sweep for each thread count.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ShapeReport {
    pub tool: String,
    pub date: String,
    /// Whether the document was saved before the run ended, and where it stood.
    #[serde(flatten)]
    pub partial: Partial,
    pub protocol: Protocol,
    /// Per thread count, per API, in the order run.
    pub results: Vec<ShapeResult>,
    pub failures: Vec<Failure>,
}

impl ShapeReport {
    /// Whether the report failed: an API that could not start, or a sweep stopped by an error
    /// (a wrong pixel, a driver error).
    pub fn failed(&self) -> bool {
        !self.failures.is_empty() || self.results.iter().any(|r| r.error.is_some())
    }

    /// The thread counts swept, in the order run.
    pub fn thread_counts(&self) -> Vec<u32> {
        let mut t: Vec<u32> = self.results.iter().map(|r| r.threads).collect();
        t.dedup();
        t
    }
}

/// What `blocksweep tail` prints: every API's grid sweep for one block.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WaveReport {
    pub tool: String,
    pub date: String,
    /// As [`ShapeReport::partial`].
    #[serde(flatten)]
    pub partial: Partial,
    pub spec: WaveSpec,
    pub block: BlockSize,
    pub protocol: Protocol,
    /// Whether every API ran the same grids (one physical device, one wave).
    pub shared_wave: bool,
    pub results: Vec<WaveResult>,
    pub failures: Vec<Failure>,
}

impl WaveReport {
    /// As [`ShapeReport::failed`].
    pub fn failed(&self) -> bool {
        !self.failures.is_empty() || self.results.iter().any(|r| r.error.is_some())
    }
}
