//! `blocksweep replay FILE.json`: a saved sweep rendered as if it ran here. The report is data
//! (every row keeps its warps, residency and occupancy), so a machine without a GPU shows a
//! GPU's run with every column the GPU had; nothing is measured. A tune's file replays too.

use std::process::ExitCode;

use blocksweep_core::report::{parse_reports, Report};
use blocksweep_render::layout::Layout;
use blocksweep_render::{render_runs, Format, Render};

use crate::args::ReplayArgs;
use crate::input::{read_capped, MAX_INPUT_BYTES};
use crate::output::files::{write_plot, Files};
use crate::output::{stdio, width};
use crate::results::replay::{noted, provenance, tune_provenance};
use crate::usage;

pub fn run(args: &ReplayArgs) -> anyhow::Result<ExitCode> {
    let to = args.out.to(args.format, args.wide);
    let (files, plot) = Files::check_with_plot(to, args.plot.as_deref())?;
    let path = &args.file;
    let text = read_capped(path, MAX_INPUT_BYTES).map_err(usage)?;
    // A tune's document (today's, or schema 4's `tunes`) replays as its reports.
    if let Some((reports, devices)) = blocksweep_core::tune::document::read(&text) {
        let tunes = blocksweep_render::tune::Tunes {
            reports: &reports,
            devices,
        };
        let note = tune_provenance(&reports);
        let text = |f: Format, l: Layout| noted(f, l, &note, tunes.render(f, l));
        let note_on_stderr = || {
            if matches!(files.stdout, Format::Json | Format::Csv) {
                stdio::eprint_line(&format!("blocksweep: {note}"));
            }
        };
        let stdout = width::stdout(args.wide).verbose(!args.brief);
        let mut written = files.write_each_to(&text, stdout, &note_on_stderr)?;
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
    let text = |f: Format, l: Layout| noted(f, l, &note, render_runs(f, &runs, l));
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
