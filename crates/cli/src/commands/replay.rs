//! `blocksweep replay FILE.json`: a saved sweep rendered as if it ran here. The report is data
//! (every row keeps its warps, residency and occupancy), so a machine without a GPU shows a
//! GPU's run with every column the GPU had; nothing is measured. A tune's file replays too.

use std::process::ExitCode;

use blocksweep_core::report::{parse_reports, Report};
use blocksweep_render::layout::{wrap, Layout};
use blocksweep_render::{render_runs, Format, Render};

use crate::args::ReplayArgs;
use crate::input::{read_capped, MAX_INPUT_BYTES};
use crate::output::files::{write_plot, Files};
use crate::output::{stdio, width, OutputTarget};
use crate::usage;

pub fn run(args: &ReplayArgs) -> anyhow::Result<ExitCode> {
    let files = Files::check(
        args.out
            .to(args.format, args.wide)
            .plotting(args.plot.is_some()),
    )?;
    let plot = args
        .plot
        .as_deref()
        .map(|p| OutputTarget::check(p).map_err(usage))
        .transpose()?;
    let path = &args.file;
    let text = read_capped(path, MAX_INPUT_BYTES).map_err(usage)?;
    // A tune's document (today's, or schema 4's `tunes`) replays as its reports.
    if let Some((reports, devices)) = blocksweep_core::tune::document::read(&text) {
        let tunes = blocksweep_render::tune::Tunes {
            reports: &reports,
            devices,
        };
        let mut written = files.write_each(&|f, l| tunes.render(f, l))?;
        if let (Some(t), Some(first)) = (plot, reports.first()) {
            let svg = Ok(crate::plot::tune::heat_maps(first));
            written &= write_plot(&t, svg, Some("plotted"), "error: ");
        }
        return Ok(super::exit(!written));
    }
    let runs = parse(&text).map_err(|e| usage(format!("{}: {e}", path.display())))?;
    let runs = only(runs, &args.backend).map_err(|e| usage(format!("{}: {e}", path.display())))?;
    let note = provenance(&runs);
    // The note goes before the text (a table's line, a markdown quote); JSON and CSV stay what
    // a sweep writes, the note on stderr beside them.
    let text = |f: Format, l: Layout| -> String {
        let body = render_runs(f, &runs, l);
        match f {
            Format::Table => format!("{}\n\n{body}", wrap(&note, l.width)),
            Format::Markdown => format!("> {note}\n\n{body}"),
            Format::Json | Format::Csv => body,
        }
    };
    // A replay is read for its details: everything on stdout too, as the files hold it, unless
    // --brief.
    let stdout = width::stdout(args.wide).verbose(!args.brief);
    let note_on_stderr = || {
        if matches!(files.stdout, Format::Json | Format::Csv) {
            stdio::eprint_line(&format!("blocksweep: {note}"));
        }
    };
    let mut written = files.write_each_to(&text, stdout, &note_on_stderr)?;
    if let Some(t) = plot {
        let svg = crate::plot::sweep::render_svg(&runs[0]);
        written &= write_plot(&t, svg, Some("plotted"), "error: ");
    }
    Ok(super::exit(!written))
}

/// The runs with only the results (and failures) of the APIs `keys` names, and the answer
/// made again over them; all of them where `keys` is empty. A key no run has is bad input.
fn only(mut runs: Vec<Report>, keys: &[String]) -> Result<Vec<Report>, String> {
    if keys.is_empty() {
        return Ok(runs);
    }
    for k in keys {
        if !runs
            .iter()
            .any(|r| r.results.iter().any(|x| x.api.key() == k.trim()))
        {
            let had: Vec<&str> = runs
                .iter()
                .flat_map(|r| r.results.iter().map(|x| x.api.key()))
                .collect();
            return Err(format!(
                "--backend {k}: the run has no such API (it has {})",
                had.join(", ")
            ));
        }
    }
    let keep = |key: &str| keys.iter().any(|k| k.trim() == key);
    for r in &mut runs {
        r.results.retain(|x| keep(x.api.key()));
        r.failures.retain(|f| keep(f.api.key()));
        r.refresh_answer();
    }
    Ok(runs)
}

/// The runs of a sweep's file; one without a single result is not a run to replay.
fn parse(text: &str) -> Result<Vec<Report>, String> {
    let runs = parse_reports(text)?;
    match runs.iter().all(|r| r.results.is_empty()) {
        true => Err("the report holds no results".into()),
        false => Ok(runs),
    }
}

/// "Replay of a run measured on NVIDIA H200 (CUDA, Vulkan, OpenCL) on 2026-12-01 at
/// 20:17:51 UTC by blocksweep 0.1.0; nothing was measured now."
fn provenance(runs: &[Report]) -> String {
    let devices: Vec<String> = runs
        .iter()
        .filter_map(|r| {
            let first = r.results.first()?;
            let apis: Vec<String> = r.results.iter().map(|x| x.api.to_string()).collect();
            Some(format!("{} ({})", first.device.name, apis.join(", ")))
        })
        .collect();
    let first = &runs[0];
    let when = match first.date.split_once('T') {
        Some((day, time)) => format!("{day} at {} UTC", time.trim_end_matches('Z')),
        None => first.date.clone(),
    };
    format!(
        "Replay of a run measured on {} on {when} by {}; nothing was measured now.",
        devices.join(" and "),
        first.tool
    )
}
