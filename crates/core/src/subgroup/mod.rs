//! Subgroups, claimed against measured: what each API says a warp / subgroup / sub-group is
//! (its size query, and in Vulkan the sizes a pipeline may require), and what a kernel in that
//! API measures when it runs one block: the size its API reports, its subgroup's id and the
//! active lanes of its subgroup counted by a ballot. A reported size is not trusted alone: a
//! driver has reported `gl_SubgroupSize` 32 while 8 invocations ran.
//!
//! [`crate::subgroup_probe`] is what a provider declares (its probe kernel, how to build it, what
//! its limits claim), `probe` runs that through the user-kernel seam, `verdict` judges the assumptions people
//! port, `report` renders them for `validate`.

mod probe;
mod verdict;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::backend::Api;

pub use crate::subgroup_probe::{Claims, ProbeBuild, SubgroupProbe};
pub use probe::{probe, PROBE_BLOCKS};
pub use verdict::{evaluate, promise, Cell, SubgroupAssumption, SUBGROUP_ASSUMPTIONS};

/// Words each invocation writes: reported size, subgroup id, active lanes.
pub const WORDS: usize = 3;
/// What a word holds before the probe runs; an invocation that wrote nothing reads as this.
pub const UNWRITTEN: u32 = u32::MAX;

/// One subgroup as it ran, from the words its invocations wrote.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SubgroupRan {
    pub id: u32,
    /// Invocations that wrote this id.
    pub invocations: u32,
    /// The distinct sizes they reported (one, on a sound driver).
    pub sizes: Vec<u32>,
    /// The distinct active-lane counts their ballots gave (one, equal to `invocations`).
    pub lanes: Vec<u32>,
}

impl SubgroupRan {
    /// The active lanes (the largest count, where they disagree).
    pub fn active(&self) -> u32 {
        self.lanes.iter().copied().max().unwrap_or(0)
    }
}

/// What one dispatch of one block gave.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Probed {
    /// It ran: its subgroups by id, and how many invocations wrote nothing.
    Measured {
        subgroups: Vec<SubgroupRan>,
        unwritten: u32,
    },
    /// The API (or the backend on its behalf) refused the launch or the requirement.
    Refused { message: String },
    /// It failed otherwise; the API's words.
    Failed { message: String },
}

/// One block of the probe, at the default subgroup size or at a required one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Dispatch {
    pub block: u32,
    /// The size the pipeline required (Vulkan), `None` for the default.
    pub required: Option<u32>,
    pub ran: Probed,
}

impl Dispatch {
    /// Its subgroups, if it ran.
    pub fn subgroups(&self) -> Option<&[SubgroupRan]> {
        match &self.ran {
            Probed::Measured { subgroups, .. } => Some(subgroups),
            _ => None,
        }
    }

    /// The distinct sizes its invocations reported.
    pub fn reported(&self) -> Vec<u32> {
        let mut all: Vec<u32> = self
            .subgroups()
            .unwrap_or_default()
            .iter()
            .flat_map(|s| s.sizes.iter().copied())
            .collect();
        all.sort_unstable();
        all.dedup();
        all
    }

    /// The widest subgroup's active lanes: the size that ran.
    pub fn width(&self) -> Option<u32> {
        self.subgroups()?.iter().map(SubgroupRan::active).max()
    }

    /// The subgroup of the highest id.
    pub fn last(&self) -> Option<&SubgroupRan> {
        self.subgroups()?.last()
    }

    /// Active lanes per subgroup, runs folded: "12 x 8 + 4", "32 + 16".
    pub fn lanes_text(&self) -> String {
        let lanes: Vec<u32> = self
            .subgroups()
            .unwrap_or_default()
            .iter()
            .map(SubgroupRan::active)
            .collect();
        let mut parts: Vec<String> = Vec::new();
        let mut i = 0;
        while i < lanes.len() {
            let run = lanes[i..].iter().take_while(|&&l| l == lanes[i]).count();
            parts.push(match run {
                1 => lanes[i].to_string(),
                n => format!("{n} x {}", lanes[i]),
            });
            i += run;
        }
        parts.join(" + ")
    }

    /// What is wrong with the figures, if anything: invocations that wrote nothing, a
    /// subgroup whose ballot does not count its invocations or whose invocations disagree, ids
    /// that skip.
    pub fn inconsistency(&self) -> Option<String> {
        let Probed::Measured {
            subgroups,
            unwritten,
        } = &self.ran
        else {
            return None;
        };
        let mut why = Vec::new();
        if *unwritten > 0 {
            why.push(format!("{unwritten} invocations wrote nothing"));
        }
        for s in subgroups {
            if s.lanes != [s.invocations] {
                why.push(format!(
                    "subgroup {}: {} invocations, ballots counted {}",
                    s.id,
                    s.invocations,
                    join(&s.lanes)
                ));
            }
            if s.sizes.len() > 1 {
                why.push(format!(
                    "subgroup {}: sizes {} reported",
                    s.id,
                    join(&s.sizes)
                ));
            }
        }
        let ids: Vec<u32> = subgroups.iter().map(|s| s.id).collect();
        if ids.iter().enumerate().any(|(i, &id)| id != i as u32) {
            why.push(format!(
                "subgroup ids {} are not 0..{}",
                join(&ids),
                ids.len()
            ));
        }
        (!why.is_empty()).then(|| why.join("; "))
    }
}

pub fn join(v: &[u32]) -> String {
    let s: Vec<String> = v.iter().map(u32::to_string).collect();
    s.join(", ")
}

/// The subgroups of a block of `block` invocations from the probe's output (`WORDS` words per
/// invocation; `UNWRITTEN` where an invocation wrote nothing).
pub fn derive(block: u32, words: &[u32]) -> Probed {
    let mut by_id: BTreeMap<u32, SubgroupRan> = BTreeMap::new();
    let mut unwritten = 0;
    for inv in words.chunks_exact(WORDS).take(block as usize) {
        let (size, id, lanes) = (inv[0], inv[1], inv[2]);
        if [size, id, lanes] == [UNWRITTEN; 3] {
            unwritten += 1;
            continue;
        }
        let s = by_id.entry(id).or_insert_with(|| SubgroupRan {
            id,
            invocations: 0,
            sizes: Vec::new(),
            lanes: Vec::new(),
        });
        s.invocations += 1;
        for (set, v) in [(&mut s.sizes, size), (&mut s.lanes, lanes)] {
            if let Err(at) = set.binary_search(&v) {
                set.insert(at, v);
            }
        }
    }
    let missing = (block as usize).saturating_sub(words.len() / WORDS) as u32;
    Probed::Measured {
        subgroups: by_id.into_values().collect(),
        unwritten: unwritten + missing,
    }
}

/// What `validate` learns about one API's subgroups.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ApiSubgroups {
    pub api: Api,
    pub claims: Claims,
    /// How the probe asked, in the API's words, and its source.
    pub probe: String,
    /// Every block at the default size, then at each required size.
    pub dispatches: Vec<Dispatch>,
    /// Why nothing was measured ("no subgroup query in this API on this device: ...").
    pub unmeasured: Option<String>,
}

impl ApiSubgroups {
    /// The dispatches at the default size (`None`) or at a required one.
    pub fn at(&self, required: Option<u32>) -> impl Iterator<Item = &Dispatch> {
        self.dispatches
            .iter()
            .filter(move |d| d.required == required)
    }

    /// The default-size dispatch of `block`, if it was made.
    pub fn block(&self, block: u32) -> Option<&Dispatch> {
        self.at(None).find(|d| d.block == block)
    }

    /// Whether every dispatch that ran agrees with itself, whatever the width: its ballots
    /// count its invocations, they sum to the block, and where one size was reported the block
    /// is ceil(block / size) subgroups, the last holding what is left. The first problem found.
    /// The tests' check of a report (`test-support`).
    #[cfg(any(test, feature = "test-support"))]
    pub fn self_consistent(&self) -> Result<(), String> {
        for d in &self.dispatches {
            let Some(sg) = d.subgroups() else { continue };
            let at = format!(
                "{}: block {} (required {:?})",
                self.api, d.block, d.required
            );
            if let Some(why) = d.inconsistency() {
                return Err(format!("{at}: {why}"));
            }
            let sum: u32 = sg.iter().map(SubgroupRan::active).sum();
            if sum != d.block {
                return Err(format!("{at}: active lanes sum to {sum}"));
            }
            if let [w] = d.reported()[..] {
                let n = d.block.div_ceil(w.max(1));
                let last = d.last().map(SubgroupRan::active);
                if sg.len() as u32 != n || last != Some(d.block - (n - 1) * w) {
                    return Err(format!("{at}: size {w}, but {}", d.lanes_text()));
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
