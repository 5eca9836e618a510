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

pub mod cache;
mod check;
pub mod document;
mod driver;
mod fields;
mod merge;
mod set;
mod space;

pub use crate::answer::{
    measurements_of, params_text, Answer, ApiBest, Config, GridPolicyKey, Held, Measurement,
    Outcome, PortableChoice, Wrong,
};
pub use check::compare_outputs;
pub use driver::{all_refused, check_grids, nothing_ran, run, Budget, Caller, Tune};
pub use merge::merge;
pub use space::{Order, Space};

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::answer::Asked;
use crate::api::Api;
use crate::blocks::BlockSize;

/// A configuration refused before anything compiled or launched, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Rejected {
    pub config: Config,
    pub why: String,
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
    /// Whether the document was saved before the tune ended, and after how many parameter
    /// sets.
    #[serde(flatten)]
    pub partial: crate::report::Partial,
    /// "grayscale frame 1280x720", "kernel 'reduce-elems' at n=65536".
    pub kernel: String,
    /// Which spec a user's kernel is (the hash of its file, sources and sizes); absent for the
    /// frame and in files written before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spec_hash: Option<String>,
    /// Hot or cold (`--cold`), as every sweep of the tune ran (each API's flush is sized for
    /// its device in its sweep).
    #[serde(default)]
    pub caches: crate::flush::Caches,
    #[serde(with = "fields::params")]
    pub params: Vec<(String, Vec<u64>)>,
    pub restrict: Vec<String>,
    pub grids: Vec<String>,
    pub blocks: Vec<BlockSize>,
    /// The device each API ran on: "Vulkan: llvmpipe (...)" (schema 4 called them `devices`,
    /// a name the envelope's list of device objects has where a report is the document).
    #[serde(rename = "device_names", alias = "devices")]
    pub devices: Vec<String>,
    /// Derived from `measurements` (the answer of an older file, in an older shape, is made
    /// again when it is read).
    #[serde(default, deserialize_with = "crate::report::lenient")]
    pub answer: Answer,
    pub search: Search,
    pub rejected: Vec<Rejected>,
    pub wrong: Vec<Wrong>,
    /// A parameter set that could not be swept at all (bad sizes at its values, nothing
    /// opened), in words with the set named.
    #[serde(default)]
    pub errors: Vec<String>,
    /// Each configuration on each API (schema 4 called them `entries`).
    #[serde(alias = "entries")]
    pub measurements: Vec<Measurement>,
    /// The GPU's clocks at the start and end of each parameter set's turn on each API, where
    /// they were read (NVML); absent where none were.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub clocks: Vec<SetClocks>,
}

/// One parameter set's turn on one API, as the GPU's clocks saw it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SetClocks {
    pub api: Api,
    /// The parameter set ("ELEMS=4"; empty without parameters).
    pub params: String,
    pub clocks: crate::clocks::TurnClocks,
    /// Why its rows ran on moving clocks, in words; absent where the clocks held.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub moved: Option<String>,
}

impl TuneReport {
    /// The APIs with at least one entry, in first-seen order.
    pub fn apis(&self) -> Vec<Api> {
        let mut out: Vec<Api> = Vec::new();
        for e in &self.measurements {
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

    /// Recomputes the answer from the measurements (kept apart so a merged report can too).
    pub fn refresh_answer(&mut self, held: &[Held]) {
        // "CUDA: NVIDIA H200 (580.159.04)": the API by its name, or its key in a file read
        // where that API is not registered.
        let devices = self.apis().into_iter().map(|a| {
            let named = |d: &String| {
                let (api, words) = d.split_once(": ")?;
                let this = api == a.to_string() || api.eq_ignore_ascii_case(a.key());
                this.then(|| words.to_string())
            };
            (a, self.devices.iter().find_map(named).unwrap_or_default())
        });
        let asked = Asked {
            apis: self.apis(),
            devices: devices.collect(),
            wrong: &self.wrong,
            held,
            ..Asked::default()
        };
        self.answer = Answer::of(&self.measurements, &asked);
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
