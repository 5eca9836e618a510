//! `blocksweep sweep`: arguments in, the core's session pipeline measures each physical device
//! ([`crate::session`]), results out ([`crate::results::sweep`]); with a grid list, a spec's
//! `[tune]` or `--budget`, the core's tune driver instead ([`super::tune`]).
//!
//! Every output path is checked before anything is measured; a write that fails after the
//! measurement sends the results to stdout instead. Exit code: 0 all good; 1 a sweep failed
//! (mismatch, driver error, validation message) or a result could not be written; 2 bad input,
//! including a frame too large for the device and a block list of which no row can run on any
//! API.

use std::process::ExitCode;

use crate::args::SweepArgs;
use crate::results::sweep::Outputs;
use crate::session::Sweep;
use crate::usage;
use crate::work;

pub fn run(args: &SweepArgs) -> anyhow::Result<ExitCode> {
    let targets = crate::targets::select(args.target.as_deref())?;
    // A spec file is read, and the work's size checked against the host's memory, before
    // anything is made or opened.
    let spec = match &args.kernel {
        Some(path) => Some(work::load(
            path,
            &args.reference,
            args.size.as_deref(),
            None,
        )?),
        None => None,
    };
    // A tune checks and writes its own files.
    let mut outputs = match super::tune::wanted(args, spec.as_ref().map(|(s, _)| s)) {
        true => None,
        false => Some(Outputs::check(args)?),
    };
    let reg = crate::session::registry();
    let mut each = crate::session::resolve_each(&reg, &args.device)?;
    let unsourced = match &spec {
        Some((s, _)) => work::keep_sourced(s, &args.device.choice(), &mut each)?,
        None => Vec::new(),
    };
    let work = work::of_args(args, spec, &each)?;
    // Every host allocation of the run, counted here once per physical device (they are swept
    // one after another) with its APIs' device kinds, before any buffer or frame is generated;
    // the sweep checks again with the APIs that opened.
    for t in &each {
        let kinds: Vec<_> = t.devices.iter().map(|d| (d.api, d.kind)).collect();
        work.check_host(&kinds).map_err(usage)?;
    }
    let mut config = args.config();
    if let (Some(blocks), None) = (work.blocks(), &args.blocks) {
        config.blocks = blocks.to_vec();
    }
    if let Some(grid) = work.grid() {
        config.grid = grid;
    }
    if let (Some(targets), Some(outputs)) = (targets, outputs.as_mut()) {
        outputs.targets = Some(crate::targets::for_sweep(targets, &work)?);
    }
    // Once the input is known good (bad input is one line), before anything runs.
    if let blocksweep_core::workload::Work::Kernel { spec, .. } = &work {
        work::say_unavailable(&reg, spec, &args.device.choice());
    }
    let date = crate::session::now();
    let Some(mut outputs) = outputs else {
        let given = super::tune::Given {
            work: &work,
            config: &config,
            reg: &reg,
            date: &date,
        };
        let code = super::tune::run(args, given, each)?;
        work::say(&unsourced);
        return Ok(code);
    };
    let sweep = Sweep {
        args,
        config: &config,
        reg: &reg,
        work: &work,
        date: &date,
    };
    std::thread::scope(|s| {
        let mut making = work.spawn(s);
        let (runs, failed) = sweep.each(each, &mut making, &mut |all| outputs.save(all))?;
        // After the run: a reference file the spec names is read as the work is made, and its
        // error is bad input, one line.
        work::say(&unsourced);
        let written = outputs.finish(&runs)?;
        Ok(super::exit(failed || !written))
    })
}
