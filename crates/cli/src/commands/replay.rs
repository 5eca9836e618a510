//! `blocksweep replay FILE.json`: a saved sweep rendered as if it ran here. The report is data
//! (every row keeps its warps, residency and occupancy), so a machine without a GPU shows a
//! GPU's run with every column the GPU had; nothing is measured.

use std::process::ExitCode;

use blocksweep_core::report::layout::wrap;
use blocksweep_core::report::{parse_reports, render_runs, Format, Report};

use crate::args::ReplayArgs;
use crate::input::{read_capped, MAX_INPUT_BYTES};
use crate::output::stdio;
use crate::output::width;
use crate::usage;

pub fn run(args: &ReplayArgs) -> anyhow::Result<ExitCode> {
    let path = &args.file;
    let text = read_capped(path, MAX_INPUT_BYTES).map_err(usage)?;
    let runs = parse(&text).map_err(|e| usage(format!("{}: {e}", path.display())))?;
    let format = width::format(args.format);
    // A replay is read for its details: everything, as the files hold it, unless --brief.
    let out = width::stdout(args.wide).verbose(!args.brief);
    let note = provenance(&runs);
    match format {
        // The files' formats stay what a sweep writes; the note goes beside them.
        Format::Json | Format::Csv => stdio::eprint_line(&format!("blocksweep: {note}")),
        Format::Markdown => stdio::print(&format!("> {note}\n\n"))?,
        Format::Table => stdio::print(&format!("{}\n\n", wrap(&note, out.width)))?,
    }
    stdio::print(&render_runs(format, &runs, out))?;
    Ok(ExitCode::SUCCESS)
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
