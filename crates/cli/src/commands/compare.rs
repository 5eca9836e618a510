//! `blocksweep compare A.json B.json ...`: several runs side by side, and the answer across
//! GPUs where they measured more than one. Runs of one GPU (shards of a tune, `--device all`
//! of identical GPUs) merge as one: tunes into one answer, sweeps side by side.

use std::process::ExitCode;

use blocksweep_core::report::across::{Across, Input};
use blocksweep_core::report::compare::Comparison;
use blocksweep_core::report::Report;
use blocksweep_core::tune;
use blocksweep_render::{Format, Render};

use crate::args::CompareArgs;
use crate::output::files::{write_plot, Files};
use crate::output::OutputTarget;
use crate::usage;

pub fn run(args: &CompareArgs) -> anyhow::Result<ExitCode> {
    let to = args.out.to(args.format, args.wide);
    let (files, plot) = Files::check_with_plot(to, args.plot.as_deref())?;
    let read = crate::runs::read(&args.files)?;
    // Said only of runs compare takes: a refused mix says nothing else first.
    let fell_below = |read: &crate::runs::Read| {
        args.fail_below
            .is_some_and(|f| crate::runs::fell_below(read, f))
    };
    let mut inputs: Vec<Input> = Vec::new();
    for (label, r) in &read.sweeps {
        inputs.extend(Input::of_sweep(label, r));
    }
    for (label, r) in &read.tunes {
        inputs.push(r.input(label));
    }
    let sides = read.tunes.is_empty();
    let across = Across::of(inputs, sides).map_err(usage)?;
    let comparison = match (across, sides) {
        (None, false) if read.sweeps.is_empty() => {
            let below = fell_below(&read);
            return merge_tunes(&files, read, plot).map(|code| match below {
                true => super::exit(true),
                false => code,
            });
        }
        (None, false) => return Err(usage(mixed_on_one_device(&read))),
        (None, true) => side_by_side(args, &read.sweeps)?,
        (Some(a), true) => side_by_side(args, &read.sweeps)?.with_across(a),
        (Some(a), false) => Comparison::across_only(a, read.listed.clone()),
    };
    let below = fell_below(&read);
    if plot.is_some() && comparison.across.is_none() {
        return Err(usage(
            "--plot draws the maps across devices, and these runs measured one device (a \
             sweep's own plot is `replay --plot`)",
        ));
    }
    // The table on stdout leads with the warnings; JSON or CSV there (a script reading only
    // the numbers), or nothing there, has each said on stderr instead, once.
    let table = matches!(files.stdout, Format::Table | Format::Markdown) && !files.files_only();
    for w in comparison.warnings.iter().filter(|_| !table) {
        warn!("warning: {w}");
    }
    let mut written = files.write_each(&|f, l| comparison.render(f, l))?;
    if let Some(t) = plot {
        if let Some(a) = &comparison.across {
            let svg = Ok(crate::plot::across::heat_maps(a));
            written &= write_plot(&t, svg, Some("plotted"), "error: ");
        }
    }
    Ok(super::exit(!written || below))
}

/// The refusal of tunes and sweeps of one device, each file named: a tune's answer and a
/// sweep's table are two kinds of result that only an answer across devices puts together.
fn mixed_on_one_device(read: &crate::runs::Read) -> String {
    let names = |runs: Vec<&String>| {
        let names: Vec<&str> = runs.iter().map(|s| s.as_str()).collect();
        names.join(", ")
    };
    format!(
        "a tune ({}) and a sweep ({}) of one device: compare merges tunes of one device, lays \
         sweeps side by side, or answers across devices; compare the tune with tunes, the sweep \
         with sweeps",
        names(read.tunes.iter().map(|(l, _)| l).collect()),
        names(read.sweeps.iter().map(|(l, _)| l).collect()),
    )
}

/// Sweeps side by side: two API results at least.
fn side_by_side(args: &CompareArgs, sweeps: &[(String, Report)]) -> anyhow::Result<Comparison> {
    if sweeps.iter().map(|(_, r)| r.results.len()).sum::<usize>() < 2 {
        return Err(usage(format!(
            "{}: one run only; compare needs two (two files, or one written by sweep --device all)",
            args.files[0].display()
        )));
    }
    Ok(Comparison::of(sweeps))
}

/// Tunes of one space split over identical GPUs, merged into one answer.
fn merge_tunes(
    files: &Files,
    read: crate::runs::Read,
    plot: Option<OutputTarget>,
) -> anyhow::Result<ExitCode> {
    let reports = read.tunes.into_iter().map(|(_, r)| r).collect();
    let Some(merged) = tune::merge(reports) else {
        return Err(usage("no tune to merge"));
    };
    let tunes = blocksweep_render::tune::Tunes {
        reports: std::slice::from_ref(&merged),
        devices: read.listed,
    };
    let mut written = files.write_each(&|f, l| tunes.render(f, l))?;
    if let Some(t) = plot {
        let svg = Ok(crate::plot::tune::heat_maps(&merged));
        written &= write_plot(&t, svg, Some("plotted"), "error: ");
    }
    Ok(super::exit(!written))
}
