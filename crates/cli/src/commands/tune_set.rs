//! One parameter set of a tune on one physical device: its configurations swept on every API
//! (one compile each), its rows gathered, and its outputs checked against the first set's.

use std::collections::BTreeMap;
use std::time::Instant;

use blocksweep_core::report::Report;
use blocksweep_core::spec::{KernelSpec, Sizes};
use blocksweep_core::sweep::SweepConfig;
use blocksweep_core::tune::cache::Cache;
use blocksweep_core::tune::{self, Config, Entry, Held, Outcome, Space, TuneReport, Wrong};
use blocksweep_core::{Api, BlockSize, GridPolicy, Registry, Targets};

use crate::args::SweepArgs;
use crate::jobs::{FrameJob, KernelJob};
use crate::session::Sweep;

/// What every parameter set of one tune shares.
pub struct Ctx<'a> {
    pub args: &'a SweepArgs,
    pub reg: &'a Registry,
    pub spec: Option<&'a (KernelSpec, Sizes)>,
    pub frame: Option<(u32, u32)>,
    pub config: &'a SweepConfig,
    pub date: &'a str,
}

/// Each API's reference output: the first parameter set's, and which set that was.
pub type Refs = BTreeMap<&'static str, (Vec<Vec<u8>>, String)>;

/// What one set's sweep gave.
#[derive(Default)]
pub struct SetRun {
    pub entries: Vec<Entry>,
    pub wrong: Vec<Wrong>,
    /// Per API that produced a reference output this time: its outputs (to save).
    pub new_refs: Vec<(Api, Vec<Vec<u8>>)>,
    /// Failures, and a whole-set error, each in words with the set named.
    pub errors: Vec<String>,
    /// Seconds from the start to the first measured row: opening the APIs and building.
    pub open_s: f64,
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
    ctx: &Ctx,
    targets: &Targets,
    params: &BTreeMap<String, u64>,
    configs: &[Config],
    refs: Option<&mut Refs>,
) -> SetRun {
    let config = set_config(ctx, configs);
    let sweep = Sweep {
        args: ctx.args,
        config: &config,
        reg: ctx.reg,
        frame_size: ctx.frame,
        date: ctx.date,
    };
    let t0 = Instant::now();
    let mut first_row: Option<f64> = None;
    let mut save = |all: &[Report]| {
        let ran = all
            .iter()
            .flat_map(|r| &r.results)
            .any(|r| r.rows_run() > 0);
        if ran && first_row.is_none() {
            first_row = Some(t0.elapsed().as_secs_f64());
        }
    };
    let mut out = SetRun::default();
    let swept = std::thread::scope(|s| match (ctx.spec, ctx.frame) {
        (Some((spec, sizes)), _) => {
            let at = spec.at_params(&Sizes(params.clone()));
            let mut job = KernelJob::spawn(s, at, sizes.clone());
            let r = sweep.each(vec![targets.clone()], &mut job, &mut save);
            if let (Some(w), Some(refs)) = (job.made(), refs) {
                check_outputs(w, params, refs, &mut out);
            }
            r
        }
        (None, Some(size)) => {
            let mut job = FrameJob::spawn(s, size, ctx.args.seed);
            sweep.each(vec![targets.clone()], &mut job, &mut save)
        }
        (None, None) => unreachable!("a tune of neither a kernel nor the frame"),
    });
    out.open_s = first_row.unwrap_or_else(|| t0.elapsed().as_secs_f64());
    match swept {
        Ok((reports, _)) => gather(ctx, &reports, params, configs, &mut out),
        Err(e) => out.errors.push(named(params, &e.to_string())),
    }
    out
}

/// The sweep of one set: its (block, grid) pairs, refused before launch by every limit (the
/// kernel's own too, in a tune), and no copy ceiling (a tune ranks configurations against
/// each other, not against a copy).
fn set_config(ctx: &Ctx, configs: &[Config]) -> SweepConfig {
    let grids = &ctx.args.grid.0;
    let pairs: Vec<(BlockSize, GridPolicy)> = configs
        .iter()
        .map(|c| (c.block, policy(c, grids)))
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
        // sweep's config): NVIDIA's OpenCL states CL_KERNEL_WORK_GROUP_SIZE = 256 for the
        // grayscale kernel and runs 1024, verified, so refusing above it would drop real rows.
        copy: false,
        ..ctx.config.clone()
    }
}

/// "at ELEMS=4: why" (just "why" without parameters).
fn named(params: &BTreeMap<String, u64>, m: &str) -> String {
    match params.is_empty() {
        true => m.to_string(),
        false => format!("at {}: {m}", tune::params_text(params)),
    }
}

/// Each API's output at this set against its reference, or this set as the reference.
fn check_outputs(
    w: &blocksweep_core::workload::ProgramWorkload,
    params: &BTreeMap<String, u64>,
    refs: &mut Refs,
    out: &mut SetRun,
) {
    for (api, outputs) in w.first_outputs() {
        match refs.get(api.key()) {
            Some((expected, first)) => {
                if let Err(m) = tune::compare_outputs(&w.instance, expected, &outputs) {
                    out.wrong.push(Wrong {
                        api,
                        params: params.clone(),
                        detail: format!("{m}; differs from the first configuration's ({first})"),
                    });
                }
            }
            None => {
                refs.insert(api.key(), (outputs.clone(), tune::params_text(params)));
                out.new_refs.push((api, outputs));
            }
        }
    }
}

/// The set's rows as entries, and its failures as wrong sets or errors.
fn gather(
    ctx: &Ctx,
    reports: &[Report],
    params: &BTreeMap<String, u64>,
    configs: &[Config],
    out: &mut SetRun,
) {
    for report in reports {
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
            let mut got = tune::entries_of(r, params, ctx.config.grid);
            // Configurations the API never reached (its sweep stopped): not run, and why.
            for c in configs {
                if !got.iter().any(|e| &e.config == c) {
                    got.push(Entry {
                        api: r.api,
                        config: c.clone(),
                        grid_blocks: 0,
                        outcome: Outcome::NotRun {
                            why: r.error.clone().unwrap_or_else(|| "did not run".into()),
                        },
                        cached: false,
                    });
                }
            }
            out.entries.extend(got);
        }
    }
}

/// Each API's winner measured a second time (from the cache where it was measured before).
pub fn recheck(
    ctx: &Ctx,
    targets: &Targets,
    report: &mut TuneReport,
    mut cache: Option<&mut Cache>,
    keys: &[(&'static str, String)],
) {
    report.refresh_answer(&[]);
    let winners: Vec<(blocksweep_core::Api, Config, f64)> = report
        .answer
        .per_api
        .iter()
        .map(|b| (b.api, b.best.clone(), b.ms))
        .collect();
    let again_key = |api: blocksweep_core::Api| {
        keys.iter()
            .find(|(k, _)| *k == api.key())
            .map(|(_, v)| format!("{v}|again"))
    };
    let mut held = Vec::new();
    let mut todo: Vec<(blocksweep_core::Api, Config, f64)> = Vec::new();
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
        let set = run(ctx, targets, &params, &configs, None);
        for (api, config, ms) in &todo {
            let again = set
                .entries
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
            warn!("{e}");
        }
    }
    report.refresh_answer(&held);
}
