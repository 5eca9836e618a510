//! One parameter set of a tune on one physical device: its configurations swept on every API
//! through the session's pipeline (one compile each), its rows gathered, and its outputs checked
//! against the first set's; and the second measurement of each API's winner.

use std::collections::BTreeMap;
use std::time::Instant;

use super::cache::Cache;
use super::driver::{Caller, Tune};
use super::{Config, Held, Measurement, Outcome, Space, TuneReport, Wrong};
use crate::backend::Api;
use crate::blocks::BlockSize;
use crate::grid::GridPolicy;
use crate::provider::Targets;
use crate::report::Report;
use crate::sweep::SweepConfig;
use crate::workload::{sweep_device, Ended, ProgramWorkload, SweepJob};

/// Each API's reference output: the first parameter set's, and which set that was.
pub type Refs = BTreeMap<&'static str, (Vec<Vec<u8>>, String)>;

/// Each API's cache key (its device, driver and the work's hash), by API key.
pub type Keys = [(&'static str, String)];

/// What one set's sweep gave.
#[derive(Default)]
pub struct SetRun {
    pub measurements: Vec<Measurement>,
    pub wrong: Vec<Wrong>,
    /// Per API that produced a reference output this time: its outputs (to save).
    pub new_refs: Vec<(Api, Vec<Vec<u8>>)>,
    /// Failures, and a whole-set error, each in words with the set named.
    pub errors: Vec<String>,
    /// Seconds from the start to the first measured row: opening the APIs and building.
    pub open_s: f64,
    /// Each API's clocks over its turn, where they were read.
    pub clocks: Vec<super::SetClocks>,
}

/// The grid policy a configuration names, from the run's list.
fn policy(c: &Config, grids: &[GridPolicy]) -> GridPolicy {
    grids
        .iter()
        .copied()
        .find(|g| g.to_string() == c.grid.0)
        .unwrap_or_default()
}

/// Sweeps `configs` (all of one parameter set) on `targets`; with `refs`, checks each API's
/// output against its reference, or makes this set the reference where there is none.
pub fn run(
    tune: &Tune,
    targets: &Targets,
    (params, configs): (&BTreeMap<String, u64>, &[Config]),
    refs: Option<&mut Refs>,
    caller: &mut dyn Caller,
) -> SetRun {
    let config = set_config(tune, configs);
    let work = tune.work.at_params(params);
    let job = SweepJob {
        targets: targets.clone(),
        config: &config,
        overlap_close: tune.overlap_close,
        clocks: tune.clocks,
    };
    let t0 = Instant::now();
    let mut first_row: Option<f64> = None;
    let mut on_row = |r: &Report| {
        let ran = r.results.iter().any(|r| r.rows_run() > 0);
        if ran && first_row.is_none() {
            first_row = Some(t0.elapsed().as_secs_f64());
        }
    };
    let mut out = SetRun::default();
    let mut report = Report::new(tune.tool, tune.date);
    let mut ended = None;
    std::thread::scope(|s| {
        let mut making = work.spawn(s);
        caller.with_progress(&mut |observer| {
            // Bad sizes end the set with an error either way: `sizes_given` changes no word.
            let (save, sizes_given) = (&mut on_row, false);
            let r = sweep_device(
                tune.open,
                &job,
                &mut making,
                &mut report,
                observer,
                save,
                sizes_given,
            );
            ended = Some(r);
        });
        if let (Some(w), Some(refs)) = (making.program(), refs) {
            check_outputs(w, params, refs, &mut out);
        }
    });
    out.open_s = first_row.unwrap_or_else(|| t0.elapsed().as_secs_f64());
    match ended {
        Some(Ok(Ended::Measured { .. })) => {
            // Each line names its set: sets that fail alike would say the same line.
            for f in &report.failures {
                caller.say(&match params.is_empty() {
                    true => format!("{}: {}", f.api, f.message),
                    false => format!("{} at {}: {}", f.api, super::params_text(params), f.message),
                });
            }
            gather(tune, &report, params, configs, &mut out);
        }
        Some(Ok(Ended::BadInput(why) | Ended::NothingRan(why))) => {
            out.errors.push(named(params, &why))
        }
        Some(Err(e)) => out.errors.push(named(params, &e.to_string())),
        None => out.errors.push(named(params, "the sweep did not start")),
    }
    out
}

/// The sweep of one set: its (block, grid) pairs, refused before launch by every limit (the
/// kernel's own too, in a tune), and no copy ceiling (a tune ranks configurations against
/// each other, not against a copy).
fn set_config(tune: &Tune, configs: &[Config]) -> SweepConfig {
    let pairs: Vec<(BlockSize, GridPolicy)> = configs
        .iter()
        .map(|c| (c.block, policy(c, tune.grids)))
        .collect();
    let mut blocks: Vec<BlockSize> = Vec::new();
    for (b, _) in &pairs {
        if !blocks.contains(b) {
            blocks.push(*b);
        }
    }
    SweepConfig {
        blocks,
        pairs,
        // The kernel's own limit as the sweep treats it (`strict_kernel_limit` from the
        // sweep's config): one vendor's driver states a work-group limit of 256 for the
        // grayscale kernel and runs 1024, verified, so refusing above it would drop real rows.
        copy: false,
        ..tune.config.clone()
    }
}

/// "at ELEMS=4: why" (just "why" without parameters).
pub(super) fn named(params: &BTreeMap<String, u64>, m: &str) -> String {
    match params.is_empty() {
        true => m.to_string(),
        false => format!("at {}: {m}", super::params_text(params)),
    }
}

/// Each API's output at this set against its reference, or this set as the reference.
fn check_outputs(
    w: &ProgramWorkload,
    params: &BTreeMap<String, u64>,
    refs: &mut Refs,
    out: &mut SetRun,
) {
    for (api, outputs) in w.first_outputs() {
        match refs.get(api.key()) {
            Some((expected, first)) => {
                if let Err(m) = super::compare_outputs(&w.instance, expected, &outputs) {
                    out.wrong.push(Wrong {
                        api,
                        params: params.clone(),
                        detail: format!("{m}; differs from the first configuration's ({first})"),
                    });
                }
            }
            None => {
                refs.insert(api.key(), (outputs.clone(), super::params_text(params)));
                out.new_refs.push((api, outputs));
            }
        }
    }
}

/// The set's rows as measurements, and its failures as wrong sets or errors.
fn gather(
    tune: &Tune,
    report: &Report,
    params: &BTreeMap<String, u64>,
    configs: &[Config],
    out: &mut SetRun,
) {
    for f in &report.failures {
        // A set an API failed after rows ran (a wrong output, a fault) is never ranked
        // there; one it failed before any (no source, a compile error) ranked nothing.
        let ran = report
            .results
            .iter()
            .any(|r| r.api == f.api && r.rows_run() > 0);
        if !ran {
            out.errors
                .push(format!("{} {}", f.api, named(params, &f.message)));
        } else if !out.wrong.iter().any(|w| w.api == f.api) {
            out.wrong.push(Wrong {
                api: f.api,
                params: params.clone(),
                detail: f.message.clone(),
            });
        }
    }
    for r in &report.results {
        if let Some(c) = &r.clocks {
            out.clocks.push(super::SetClocks {
                api: r.api,
                params: super::params_text(params),
                clocks: c.clone(),
                moved: r.clocks_moved.clone(),
            });
        }
        let mut got = super::measurements_of(r, params, tune.config.grid);
        // Configurations the API never reached (its sweep stopped): not run, and why.
        for c in configs {
            if !got.iter().any(|e| &e.config == c) {
                got.push(Measurement {
                    api: r.api,
                    gpu: None,
                    config: c.clone(),
                    grid_blocks: 0,
                    outcome: Outcome::NotRun {
                        why: r.error.clone().unwrap_or_else(|| "did not run".into()),
                    },
                    cached: false,
                });
            }
        }
        out.measurements.extend(got);
    }
}

/// Each API's winner measured a second time (from the cache where it was measured before).
pub fn recheck(
    tune: &Tune,
    targets: &Targets,
    report: &mut TuneReport,
    (mut cache, keys): (Option<&mut Cache>, &Keys),
    caller: &mut dyn Caller,
) {
    report.refresh_answer(&[]);
    let winners: Vec<(Api, Config, f64)> = report
        .answer
        .best
        .iter()
        .map(|b| (b.api, b.config.clone(), b.ms))
        .collect();
    let again_key = |api: Api| {
        keys.iter()
            .find(|(k, _)| *k == api.key())
            .map(|(_, v)| format!("{v}|again"))
    };
    let mut held = Vec::new();
    let mut todo: Vec<(Api, Config, f64)> = Vec::new();
    for (api, config, ms) in winners {
        let hit = cache
            .as_deref()
            .zip(again_key(api))
            .and_then(|(c, k)| c.get(&k, &config));
        match hit.and_then(|e| e.ms()) {
            Some(second) => held.push(Held::new(api, config, ms, second)),
            None => todo.push((api, config, ms)),
        }
    }
    let sets = Space::batches(&todo.iter().map(|t| t.1.clone()).collect::<Vec<_>>());
    for (params, configs) in sets {
        let set = run(tune, targets, (&params, &configs), None, caller);
        for (api, config, ms) in &todo {
            let again = set
                .measurements
                .iter()
                .find(|e| e.api == *api && &e.config == config);
            let Some(e) = again else { continue };
            if let (Some(c), Some(k)) = (cache.as_deref_mut(), again_key(*api)) {
                c.put(&k, e);
            }
            if let Some(second) = e.ms() {
                held.push(Held::new(*api, config.clone(), *ms, second));
            }
        }
    }
    if let Some(c) = cache.as_deref() {
        if let Err(e) = c.save() {
            caller.say(&e);
        }
    }
    report.refresh_answer(&held);
}
