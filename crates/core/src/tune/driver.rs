//! The tune's driver: the space searched in its order within the budget (a count, or seconds),
//! one share of it where asked, each parameter set swept through the session's pipeline once
//! (`set.rs`), what the cache holds taken from it and what is measured recorded in it, and
//! each API's winner measured a second time. What only the program running it knows (its
//! progress display, its messages, its files) comes in through [`Caller`].

use std::collections::BTreeMap;
use std::time::Instant;

use super::cache::{self, Cache};
use super::set::{self, Keys, Refs, SetRun};
use super::{Config, Order, Outcome, Search, Space, TuneReport, Wrong};
use crate::backend::Api;
use crate::grid::GridPolicy;
use crate::provider::Targets;
use crate::report::{Partial, StoppedAt};
use crate::session::pipeline::Opener;
use crate::spec::GridMode;
use crate::sweep::{Observer, SweepConfig};
use crate::workload::Work;

/// `--budget`: a count of configurations, or a time.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Budget {
    Count(usize),
    Seconds(f64),
}

/// What every parameter set of one tune shares.
pub struct Tune<'a> {
    pub work: &'a Work,
    /// The sweep's settings (protocol, limits, grid policy); each set's sweep is made from them.
    pub config: &'a SweepConfig,
    /// The grid policies searched.
    pub grids: &'a [GridPolicy],
    pub budget: Option<Budget>,
    /// The seed of a budget's sampled order.
    pub sample_seed: u64,
    /// Only share k of n of the space (`--shard`), where asked.
    pub shard: Option<(usize, usize)>,
    /// The tool line and the date of every report.
    pub tool: &'a str,
    pub date: &'a str,
    /// Close each API while the next is measured (see the pipeline's notes).
    pub overlap_close: bool,
    /// Reads the device's clocks around each API's turn, where the caller has a reader.
    pub clocks: Option<&'a dyn crate::clocks::ClockReader>,
    /// How each API is opened (in a worker process or in this one: the caller's choice).
    pub open: &'a Opener<'a>,
}

/// What a tune needs from the program running it.
pub trait Caller {
    /// Runs `sweep` (one parameter set's) with a progress display, ended when it returns.
    fn with_progress(&mut self, sweep: &mut dyn FnMut(&mut dyn Observer));
    /// A line for the user: an API's failure, a cache that could not be written.
    fn say(&mut self, line: &str);
    /// Every report so far (the last with its answer for the configurations so far), after
    /// every parameter set: an interrupted tune keeps its rows.
    fn saved(&mut self, so_far: &[TuneReport]);
}

/// A grid list with a spec whose grid covers its work at every block is bad input: `Err` says
/// why in one line.
pub fn check_grids(work: &Work, grids: &[GridPolicy]) -> Result<(), String> {
    match work {
        Work::Kernel { spec, .. } if spec.grid == GridMode::Data && grids.len() > 1 => {
            let list: Vec<String> = grids.iter().map(|g| g.to_string()).collect();
            Err(format!(
                "--grid {}: {} has grid = \"data\", which launches the grid covering its work at \
                 every block; a grid list needs a grid-stride kernel",
                list.join(","),
                spec.file
            ))
        }
        _ => Ok(()),
    }
}

/// Tunes each physical device in turn, the space split over them (one share each) where there
/// are several; `cache`: what was measured before, and where this run's measurements go.
pub fn run(
    tune: &Tune,
    each: Vec<Targets>,
    mut cache: Option<&mut Cache>,
    caller: &mut dyn Caller,
) -> Vec<TuneReport> {
    let n = each.len();
    let mut reports: Vec<TuneReport> = Vec::new();
    for (i, targets) in each.into_iter().enumerate() {
        let share = tune.shard.or((n > 1).then_some((i + 1, n)));
        let report = one_device(
            tune,
            &targets,
            cache.as_deref_mut(),
            share,
            (&reports, caller),
        );
        reports.push(report);
    }
    reports
}

/// Where every configuration was refused before anything was dispatched (a `[tune] restrict`
/// or a limit ruled out the whole space) and nothing else went wrong, why, by rule: bad input,
/// not an API's failure.
pub fn all_refused(reports: &[TuneReport]) -> Option<String> {
    let none = reports
        .iter()
        .all(|r| r.measurements.is_empty() && r.errors.is_empty());
    let refused: usize = reports.iter().map(|r| r.rejected.len()).sum();
    if !none || refused == 0 {
        return None;
    }
    let reasons: Vec<String> = (reports.iter().flat_map(TuneReport::rejected_by_reason))
        .map(|(n, why)| format!("{n} by {why}"))
        .collect();
    Some(format!(
        "every configuration ({refused}) was refused before it ran: {}",
        reasons.join("; ")
    ))
}

/// Why nothing can be reported, where no configuration ran on any API.
pub fn nothing_ran(reports: &[TuneReport]) -> Option<String> {
    let ran = reports
        .iter()
        .any(|r| r.measurements.iter().any(|e| e.ms().is_some()));
    if ran {
        return None;
    }
    let why = reports.iter().flat_map(|r| r.errors.iter()).next();
    Some(format!(
        "no configuration ran on any API{}",
        why.map(|w| format!(": {w}")).unwrap_or_default()
    ))
}

fn one_device(
    tune: &Tune,
    targets: &Targets,
    mut cache: Option<&mut Cache>,
    share: Option<(usize, usize)>,
    (done, caller): (&[TuneReport], &mut dyn Caller),
) -> TuneReport {
    let started = Instant::now();
    let order = match tune.budget {
        None => Order::Exhaustive,
        Some(_) => Order::Sampled(tune.sample_seed),
    };
    let sizes = tune.work.sizes();
    let space = Space::new(
        tune.work.tune(),
        &sizes,
        &tune.config.blocks,
        tune.grids,
        order,
    );
    let covered = match tune.budget {
        Some(Budget::Count(n)) => &space.configs[..n.min(space.configs.len())],
        _ => &space.configs[..],
    };
    let keys = keys(tune, targets);
    let mut report = new_report(tune, &space, order);
    report.devices = targets
        .devices
        .iter()
        .map(|d| format!("{}: {} ({})", d.api, d.name, d.driver_version))
        .collect();
    let mut refs: Refs = BTreeMap::new();
    if let Some(c) = cache.as_deref() {
        for (api, key) in &keys {
            if let Some(r) = c.reference(key) {
                refs.insert(api, (r, "the first configuration, from the cache".into()));
            }
        }
    }
    let sets = shard(Space::batches(covered), share);
    let planned = sets.len();
    for (n, (params, configs)) in sets.into_iter().enumerate() {
        if let Some(Budget::Seconds(s)) = tune.budget {
            if started.elapsed().as_secs_f64() > s {
                report.search.stopped = Some(format!(
                    "the {s} s budget ran out after {} configurations",
                    report.search.covered
                ));
                break;
            }
        }
        report.search.covered += configs.len();
        let missing = from_cache(&mut report, cache.as_deref(), &keys, &params, &configs);
        if missing.is_empty() {
            continue;
        }
        let set = set::run(tune, targets, (&params, &missing), Some(&mut refs), caller);
        report.search.compiles += 1;
        report.search.compile_s += set.open_s;
        report.search.measured += set.measurements.len();
        record(
            &mut report,
            (cache.as_deref_mut(), &keys),
            &params,
            set,
            caller,
        );
        save(done, &report, (n + 1, planned), caller);
    }
    set::recheck(tune, targets, &mut report, (cache, &keys), caller);
    report.search.wall_s = started.elapsed().as_secs_f64();
    if let Some((k, n)) = share {
        report.search.order.push_str(&format!(", share {k}/{n}"));
    }
    report
}

/// Each API's cache key: its device and driver, and the hash of the work with what decides its
/// numbers (the protocol, the copy ceiling).
fn keys(tune: &Tune, targets: &Targets) -> Vec<(&'static str, String)> {
    let protocol = serde_json::to_string(&tune.config.protocol).unwrap_or_default();
    let copy = if tune.config.copy { "copy" } else { "" };
    let mut parts = tune.work.identity();
    parts.push(protocol.into_bytes());
    parts.push(copy.into());
    let hash = cache::hash(&parts.iter().map(Vec::as_slice).collect::<Vec<_>>());
    targets
        .devices
        .iter()
        .map(|d| (d.api.key(), cache::device_key(d, &hash)))
        .collect()
}

/// The reports done and this one's so far (its answer for the configurations so far, marked
/// interrupted after `kept` of `planned` parameter sets, should the run end here) to the
/// caller.
fn save(
    done: &[TuneReport],
    partial: &TuneReport,
    (kept, planned): (usize, usize),
    caller: &mut dyn Caller,
) {
    let mut partial = partial.clone();
    partial.refresh_answer(&[]);
    partial.partial = Partial::at(StoppedAt {
        api: None,
        kept,
        planned: Some(planned),
        not_reached: Vec::new(),
    });
    let mut all = done.to_vec();
    all.push(partial);
    caller.saved(&all);
}

/// The configurations of a set that every API has in the cache go into the report, with the
/// set's cached verdicts; the others are returned, to be measured.
fn from_cache(
    report: &mut TuneReport,
    cache: Option<&Cache>,
    keys: &Keys,
    params: &BTreeMap<String, u64>,
    configs: &[Config],
) -> Vec<Config> {
    let Some(c) = cache else {
        return configs.to_vec();
    };
    let mut missing = Vec::new();
    for config in configs {
        match keys
            .iter()
            .map(|(_, k)| c.get(k, config))
            .collect::<Option<Vec<_>>>()
        {
            Some(found) => {
                report.search.from_cache += found.len();
                report.measurements.extend(found);
            }
            None => missing.push(config.clone()),
        }
    }
    for (api, key) in keys {
        if let (Some(Some(why)), Some(a)) = (c.verdict(key, params), Api::from_key(api)) {
            push_wrong(report, a, params, why);
        }
    }
    missing
}

type Batches = Vec<(BTreeMap<String, u64>, Vec<Config>)>;

/// Share `k` of `n`: every n-th parameter set (one compile each), or every n-th configuration
/// where there are fewer sets than shares.
fn shard(batches: Batches, share: Option<(usize, usize)>) -> Batches {
    let Some((k, n)) = share else {
        return batches;
    };
    if batches.len() >= n {
        return batches.into_iter().skip(k - 1).step_by(n).collect();
    }
    batches
        .into_iter()
        .map(|(p, c)| (p, c.into_iter().skip(k - 1).step_by(n).collect::<Vec<_>>()))
        .filter(|(_, c)| !c.is_empty())
        .collect()
}

fn new_report(tune: &Tune, space: &Space, order: Order) -> TuneReport {
    let decl = tune.work.tune();
    TuneReport {
        tool: tune.tool.to_string(),
        date: tune.date.to_string(),
        kernel: tune.work.describe(),
        spec_hash: tune.work.spec_hash(),
        caches: tune.config.protocol.caches.clone(),
        params: decl.map(|d| d.params.clone()).unwrap_or_default(),
        restrict: decl
            .map(|d| d.restrict.iter().map(|c| c.text.clone()).collect())
            .unwrap_or_default(),
        grids: tune.grids.iter().map(|g| g.to_string()).collect(),
        blocks: tune.config.blocks.clone(),
        devices: Vec::new(),
        partial: Partial::default(),
        answer: Default::default(),
        search: Search {
            order: match order {
                Order::Exhaustive => "exhaustive".into(),
                Order::Sampled(seed) => format!("sampled (seed {seed})"),
            },
            space: space.total,
            ..Search::default()
        },
        rejected: space.rejected.clone(),
        wrong: Vec::new(),
        errors: Vec::new(),
        measurements: Vec::new(),
        clocks: Vec::new(),
    }
}

fn push_wrong(report: &mut TuneReport, api: Api, params: &BTreeMap<String, u64>, detail: String) {
    if !report.is_wrong(api, params) {
        report.wrong.push(Wrong {
            api,
            params: params.clone(),
            detail,
        });
    }
}

/// A set's results into the report and the cache (saved at once: an interrupt loses at
/// most the set being measured).
fn record(
    report: &mut TuneReport,
    (cache, keys): (Option<&mut Cache>, &Keys),
    params: &BTreeMap<String, u64>,
    set: SetRun,
    caller: &mut dyn Caller,
) {
    let key_of = |api: Api| {
        keys.iter()
            .find(|(k, _)| *k == api.key())
            .map(|(_, v)| v.clone())
    };
    if let Some(c) = cache {
        // What did not run is tried again next time: it may have been the interrupt's.
        for e in set
            .measurements
            .iter()
            .filter(|e| !matches!(e.outcome, Outcome::NotRun { .. }))
        {
            if let Some(k) = key_of(e.api) {
                c.put(&k, e);
            }
        }
        for (api, outputs) in &set.new_refs {
            if let Some(k) = key_of(*api) {
                if let Err(e) = c.put_reference(&k, outputs) {
                    caller.say(&e);
                }
            }
        }
        for (api, key) in keys {
            let wrong = set
                .wrong
                .iter()
                .find(|w| w.api.key() == *api)
                .map(|w| w.detail.clone());
            c.put_verdict(key, params, wrong);
        }
        if let Err(e) = c.save() {
            caller.say(&e);
        }
    }
    for w in set.wrong {
        push_wrong(report, w.api, &w.params, w.detail);
    }
    report.errors.extend(set.errors);
    report.measurements.extend(set.measurements);
    report.clocks.extend(set.clocks);
}

#[cfg(test)]
#[path = "driver_tests.rs"]
mod tests;
