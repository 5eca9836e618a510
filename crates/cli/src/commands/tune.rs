//! `blocksweep sweep` with a grid list, a spec's `[tune]` or `--budget`: the whole launch
//! tuned across APIs (block × grid × the kernel's own parameters) by the core's tune driver
//! (`blocksweep_core::tune::run`); here the arguments become its settings, the cache is
//! opened, and the reports are written ([`crate::results::tune`]). Exit code: 0, or 1 when a
//! configuration was wrong or an API failed, or 2 for bad input.

use std::process::ExitCode;

use blocksweep_core::spec::KernelSpec;
use blocksweep_core::sweep::SweepConfig;
use blocksweep_core::tune::{self, cache::Cache, Tune};
use blocksweep_core::workload::Work;
use blocksweep_core::{DeviceIdentity, Registry, Targets};

use crate::args::SweepArgs;
use crate::results::tune::TuneOutputs;
use crate::usage;

/// Whether the arguments and the spec ask for a tune rather than a plain sweep.
pub fn wanted(args: &SweepArgs, spec: Option<&KernelSpec>) -> bool {
    args.grid.0.len() > 1 || args.tune.budget.is_some() || spec.is_some_and(|s| s.tune.is_some())
}

/// What a tune is given beside its arguments: the work, the sweep's settings, the APIs.
pub struct Given<'a> {
    pub work: &'a Work,
    pub config: &'a SweepConfig,
    pub reg: &'a Registry,
    pub date: &'a str,
}

pub fn run(args: &SweepArgs, given: Given, each: Vec<Targets>) -> anyhow::Result<ExitCode> {
    tune::check_grids(given.work, &args.grid.0).map_err(usage)?;
    // A data kernel's one grid is the data's, named so in every output.
    let grids = match given.work.grid() {
        Some(g) => vec![g],
        None => args.grid.0.clone(),
    };
    // `--device all` splits the space over the GPUs, one share each, one after another
    // (`compare` merges them); `--shard` takes one share on this one.
    let devices: Vec<DeviceIdentity> = each.iter().flat_map(|t| t.devices.clone()).collect();
    let mut outputs = TuneOutputs::check(args, devices)?;
    let mut cache = match args.tune.cache_path() {
        Some(p) => Some(Cache::open(&p).map_err(usage)?),
        None => None,
    };
    let options = crate::session::open_options(&args.device, given.work.is_users())?;
    let open = |d: &DeviceIdentity| blocksweep_core::worker::open(given.reg, d, &options);
    let tool = crate::session::tool();
    let tune = Tune {
        work: given.work,
        config: given.config,
        grids: &grids,
        budget: args.tune.budget,
        sample_seed: args.tune.sample_seed,
        shard: args.tune.shard,
        tool: &tool,
        date: given.date,
        overlap_close: args.overlap_close,
        clocks: crate::clocks::reader(each.iter().flat_map(|t| &t.devices)),
        open: &open,
    };
    let reports = tune::run(&tune, each, cache.as_mut(), &mut outputs);
    if let Some(why) = tune::all_refused(&reports) {
        return Err(crate::usage(why));
    }
    if let Some(why) = tune::nothing_ran(&reports) {
        return Err(anyhow::anyhow!(why));
    }
    let failed = reports
        .iter()
        .any(|r| !r.wrong.is_empty() || !r.errors.is_empty());
    let written = outputs.finish(&reports)?;
    Ok(super::exit(failed || !written))
}
