//! `blocksweep compare A.json B.json ...`: several runs side by side.

use std::process::ExitCode;

use blocksweep_core::report::compare::Comparison;
use blocksweep_core::report::{parse_reports, Report};
use blocksweep_core::tune::{self, TuneReport};
use blocksweep_render::{heading, Format, Render};

use crate::args::CompareArgs;
use crate::input::{read_capped, MAX_INPUT_BYTES};
use crate::output::files::Files;
use crate::output::stdio;
use crate::usage;

pub fn run(args: &CompareArgs) -> anyhow::Result<ExitCode> {
    let files = Files::check(args.out.to(args.format, args.wide))?;
    if let Some(tunes) = tunes(args)? {
        return merge_tunes(&files, tunes);
    }
    let mut reports: Vec<(String, Report)> = Vec::new();
    for path in &args.files {
        let text = read_capped(path, MAX_INPUT_BYTES).map_err(usage)?;
        let runs = parse_reports(&text).map_err(|e| usage(format!("{}: {e}", path.display())))?;
        if runs.iter().all(|r| r.results.is_empty()) {
            return Err(usage(format!(
                "{}: the report holds no results",
                path.display()
            )));
        }
        let stem = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        // A multi-device run is one column per device: "run#0", "run#1".
        let many = runs.len() > 1;
        for (i, report) in runs.into_iter().enumerate() {
            let label = match many {
                true => format!("{stem}#{i}"),
                false => stem.clone(),
            };
            if many {
                stdio::eprint_line(&format!("blocksweep: {label} = {}", heading(i, &report)));
            }
            reports.push((label, report));
        }
    }
    if reports.iter().map(|(_, r)| r.results.len()).sum::<usize>() < 2 {
        return Err(usage(format!(
            "{}: one run only; compare needs two (two files, or one written by sweep --device all)",
            args.files[0].display()
        )));
    }
    let comparison = Comparison::of(&reports);
    // The table on stdout leads with the warnings; JSON or CSV there (a script reading only
    // the numbers), or nothing there, has each said on stderr instead, once.
    let table = matches!(files.stdout, Format::Table | Format::Markdown) && !files.files_only();
    for w in comparison.warnings.iter().filter(|_| !table) {
        warn!("warning: {w}");
    }
    let written = files.write_each(&|f, l| comparison.render(f, l))?;
    Ok(super::exit(!written))
}

/// Every file as tune reports (one, or a list from `--device all`), or `None` when a file is
/// not a tune's: then the files are sweeps, compared side by side.
fn tunes(args: &CompareArgs) -> anyhow::Result<Option<Tunes>> {
    let mut out = Tunes::default();
    for path in &args.files {
        let text = read_capped(path, MAX_INPUT_BYTES).map_err(usage)?;
        let Some((reports, devices)) = tune::document::read(&text) else {
            return Ok(None);
        };
        out.reports.extend(reports);
        out.devices.extend(devices);
    }
    Ok(Some(out))
}

/// The tune reports of every file, and the devices the files list.
#[derive(Default)]
struct Tunes {
    reports: Vec<TuneReport>,
    devices: Vec<blocksweep_core::report::envelope::EnvelopeDevice>,
}

/// Tunes of one space split over GPUs, merged into one answer.
fn merge_tunes(files: &Files, tunes: Tunes) -> anyhow::Result<ExitCode> {
    let Some(merged) = tune::merge(tunes.reports) else {
        return Err(usage("no tune to merge"));
    };
    let merged = blocksweep_render::tune::Tunes {
        reports: std::slice::from_ref(&merged),
        devices: tunes.devices,
    };
    let written = files.write_each(&|f, l| merged.render(f, l))?;
    Ok(super::exit(!written))
}
