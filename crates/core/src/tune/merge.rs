//! Tunes of one space split over GPUs (`--shard`, `--device all`, the Slurm tune array),
//! merged into one report and one answer by `compare`; and a tune as a run of the answer
//! across GPUs, where `compare` is given tunes of different GPUs.

use std::collections::{BTreeMap, BTreeSet};

use super::{Config, Held, TuneReport};
use crate::backend::Api;
use crate::report::across::Input;

/// The reports as one: every entry once (the first file's where two hold the same API and
/// configuration), the rejected, the wrong and the errors of all, the searches summed (each
/// configuration covered once, each entry counted from the file it was kept from), and the
/// answer made again. A winner's second time is kept where the merged winner is the same.
/// Files that share no configuration are shares of one space; files that do are runs.
pub fn merge(mut reports: Vec<TuneReport>) -> Option<TuneReport> {
    if reports.is_empty() {
        return None;
    }
    let shares = reports.len();
    let mut out = reports.remove(0);
    let mut held: Vec<Held> = out
        .answer
        .best
        .iter()
        .filter_map(|b| b.held.clone())
        .collect();
    let mut shared = 0;
    for r in reports {
        held.extend(r.answer.best.iter().filter_map(|b| b.held.clone()));
        shared += add(&mut out, r);
    }
    // "exhaustive, share 1/2" named the first share only: the merge is every share's.
    let order = out
        .search
        .order
        .split(", share ")
        .next()
        .unwrap_or_default();
    out.search.order = match (shares, shared) {
        (1, _) => format!("{order} (merged)"),
        (n, 0) => format!("{order} (merged from {n} shares)"),
        (n, k) => format!(
            "{order} (merged from {n} runs; {k} configurations in more than one, each kept from \
             the first file that has it)"
        ),
    };
    out.refresh_answer(&[]);
    let winners: Vec<Held> = held
        .into_iter()
        .filter(|h| {
            out.answer
                .best
                .iter()
                .any(|b| b.api == h.api && b.config == h.config)
        })
        .collect();
    out.refresh_answer(&winners);
    Some(out)
}

/// Adds `r` to `out`: its entries `out` lacks, its rejected, wrong, errors and devices, and
/// its search counted without what was dropped. Returns how many of its configurations `out`
/// already held (a configuration in both is covered once, with the first file's entries).
fn add(out: &mut TuneReport, r: TuneReport) -> usize {
    // Each configuration `out` holds, with the APIs it holds it on.
    let mut held: BTreeMap<Config, Vec<Api>> = BTreeMap::new();
    for x in &out.measurements {
        held.entry(x.config.clone()).or_default().push(x.api);
    }
    // Configurations held before `r`: one of them in `r` too is covered once.
    let before: BTreeSet<Config> = held.keys().cloned().collect();
    let mut shared: BTreeSet<&Config> = BTreeSet::new();
    let (mut dropped_measured, mut dropped_cached) = (0, 0);
    for e in &r.measurements {
        if let Some(c) = before.get(&e.config) {
            shared.insert(c);
        }
        let apis = held.entry(e.config.clone()).or_default();
        match apis.contains(&e.api) {
            true if e.cached => dropped_cached += 1,
            true => dropped_measured += 1,
            false => {
                apis.push(e.api);
                out.measurements.push(e.clone());
            }
        }
    }
    let shared = shared.len();
    out.clocks.extend(r.clocks);
    for x in r.rejected {
        if !out.rejected.contains(&x) {
            out.rejected.push(x);
        }
    }
    for w in r.wrong {
        if !out.is_wrong(w.api, &w.params) {
            out.wrong.push(w);
        }
    }
    for d in r.devices {
        if !out.devices.contains(&d) {
            out.devices.push(d);
        }
    }
    out.errors.extend(r.errors);
    let (a, b) = (&mut out.search, r.search);
    a.covered += b.covered.saturating_sub(shared);
    a.measured += b.measured.saturating_sub(dropped_measured);
    a.from_cache += b.from_cache.saturating_sub(dropped_cached);
    a.compiles += b.compiles;
    a.compile_s += b.compile_s;
    a.wall_s = a.wall_s.max(b.wall_s);
    shared
}

impl TuneReport {
    /// The tune as a run of the answer across GPUs (`compare` of tunes of several GPUs): its
    /// GPU is the one its devices name ("CUDA: NVIDIA H200 (580.x)").
    pub fn input(&self, file: &str) -> Input {
        let name = |d: &String| {
            let words = d.split_once(": ").map_or(d.as_str(), |(_, w)| w);
            words
                .rsplit_once(" (")
                .map_or(words, |(n, _)| n)
                .to_string()
        };
        let gpu = self.devices.first().map(name).unwrap_or_default();
        let mut ms = self.measurements.clone();
        ms.retain(|m| !self.is_wrong(m.api, &m.config.params));
        ms.iter_mut().for_each(|m| m.gpu = Some(gpu.clone()));
        // "grayscale frame 3840x2160", "kernel 'reduce-elems' at n=65536".
        let (kernel, size) = match self.kernel.strip_prefix("grayscale frame ") {
            Some(size) => ("grayscale".to_string(), size.to_string()),
            None => {
                let k = self.kernel.trim_start_matches("kernel ");
                let (k, s) = k.split_once(" at ").unwrap_or((k, ""));
                (k.trim_matches('\'').to_string(), s.to_string())
            }
        };
        Input {
            file: file.to_string(),
            gpu,
            kind: None,
            kernel,
            size,
            spec_hash: self.spec_hash.clone(),
            discipline: None,
            measurements: ms,
            stops: Vec::new(),
        }
    }
}

#[cfg(test)]
#[path = "merge_tests.rs"]
mod tests;
