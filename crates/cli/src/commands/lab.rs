//! `blocksweep shapes` and `blocksweep tail`: the lab's two sweeps (docs/lab.md). Each opens
//! the APIs on each selected physical device through the session, checks the frame, runs its sweep with the
//! sweep's protocol and verification ([`crate::lab`]), and prints (and writes) one report.
//! Exit code: 0 all good; 1 an API failed (a wrong pixel, a driver error) or a file could not
//! be written; 2 bad input.

use std::process::ExitCode;

use blocksweep_core::blocks::BlockSize;
use blocksweep_core::lab::report::{ShapeReport, WaveReport};
use blocksweep_render::Render;

use crate::args::lab::{ShapesArgs, TailArgs};
use crate::lab::{self, no_grid_ran};
use crate::output::files::{write_plot, Files};
use crate::output::OutputTarget;
use crate::usage;

pub fn shapes(args: &ShapesArgs) -> anyhow::Result<ExitCode> {
    let reg = crate::session::registry();
    let each = crate::session::resolve_each(&reg, &args.device)?;
    let files = Files::check(args.run.outputs())?;
    let (tool, date, protocol) = (
        crate::session::tool(),
        crate::session::now(),
        args.run.protocol(),
    );
    let mut report = ShapeReport {
        partial: Default::default(),
        tool,
        date,
        protocol,
        results: Vec::new(),
        failures: Vec::new(),
    };
    let mut save = |r: &ShapeReport| {
        let rows = r.results.iter().map(|x| x.rows.len()).sum();
        // Quietly: the write at the end says what failed.
        let _ = files.rewrite(rows, &|f, l| r.render(f, l));
    };
    for targets in each {
        let how = (&args.threads.0[..], &args.run);
        lab::shapes_on(&reg, targets, &args.device, how, (&mut report, &mut save))?;
    }
    for r in report.results.iter().filter(|r| r.error.is_some()) {
        warn!("{}: {}", r.api, r.error.as_deref().unwrap_or_default());
    }
    let written = files.write_each(&|f, l| report.render(f, l))?;
    Ok(super::exit(report.failed() || !written))
}

pub fn tail(args: &TailArgs) -> anyhow::Result<ExitCode> {
    let reg = crate::session::registry();
    let each = crate::session::resolve_each(&reg, &args.device)?;
    let files = Files::check(args.run.outputs().plotting(args.plot.is_some()))?;
    let plot = args
        .plot
        .as_deref()
        .map(|p| OutputTarget::check(p).map_err(usage))
        .transpose()?;
    let mut report = WaveReport {
        partial: Default::default(),
        tool: crate::session::tool(),
        date: crate::session::now(),
        spec: args.waves,
        block: BlockSize::linear(args.block),
        protocol: args.run.protocol(),
        shared_wave: false,
        results: Vec::new(),
        failures: Vec::new(),
    };
    let mut save = |r: &WaveReport| {
        let rows = r.results.iter().map(|x| x.rows.len()).sum();
        let _ = files.rewrite(rows, &|f, l| r.render(f, l));
    };
    for targets in each {
        let on = (targets, &args.device);
        lab::waves_on(&reg, on, args, (&mut report, &mut save))?;
    }
    if let Some(why) = no_grid_ran(&report) {
        return Err(usage(why));
    }
    for r in report.results.iter().filter(|r| r.error.is_some()) {
        warn!("{}: {}", r.api, r.error.as_deref().unwrap_or_default());
    }
    let mut written = files.write_each(&|f, l| report.render(f, l))?;
    if let Some(t) = plot {
        written &= write_plot(
            &t,
            crate::plot::waves::render_svg(&report),
            Some("wrote"),
            "error: ",
        );
    }
    Ok(super::exit(report.failed() || !written))
}
