//! The runs a command reads back from files (`compare`): a tune's document as its reports, a
//! sweep's as one report per device; and `compare --fail-below`'s check of them against the
//! first file's.

use blocksweep_core::report::envelope::EnvelopeDevice;
use blocksweep_core::report::{parse_reports, regress, Report};
use blocksweep_core::tune::{self, TuneReport};
use blocksweep_render::heading;

use crate::input::{read_capped, MAX_INPUT_BYTES};
use crate::output::stdio;
use crate::usage;

/// What the files hold: sweeps (each with its label) and tunes (each with its file's label).
#[derive(Default)]
pub struct Read {
    pub sweeps: Vec<(String, Report)>,
    pub tunes: Vec<(String, TuneReport)>,
    /// The devices the tune files list.
    pub listed: Vec<EnvelopeDevice>,
}

/// `--fail-below`: each configuration or best slower than `floor` of the first file's, said
/// on stderr; true when there is any.
pub fn fell_below(read: &Read, floor: f64) -> bool {
    let runs: Vec<(String, Vec<blocksweep_core::answer::Measurement>)> = (read.sweeps.iter())
        .map(|(l, r)| (l.clone(), r.measurements.clone()))
        .chain(
            read.tunes
                .iter()
                .map(|(l, r)| (l.clone(), r.measurements.clone())),
        )
        .collect();
    let found = regress::regressions(&runs, floor);
    for r in &found {
        warn!("below {floor} of the first file's ({}): {r}", runs[0].0);
    }
    !found.is_empty()
}

/// Every file read: a tune's document as its reports, else a sweep's (one report, or one per
/// device of `--device all`: "run#0", "run#1").
pub fn read(files: &[std::path::PathBuf]) -> anyhow::Result<Read> {
    let mut out = Read::default();
    let stem_of = |p: &std::path::Path| {
        p.file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default()
    };
    for path in files {
        let text = read_capped(path, MAX_INPUT_BYTES).map_err(usage)?;
        // A file's stem names it, unless another file has the same stem: then its path does.
        let stem = match files.iter().filter(|f| stem_of(f) == stem_of(path)).count() {
            1 => stem_of(path),
            _ => path.display().to_string(),
        };
        if let Some((reports, devices)) = tune::document::read(&text) {
            out.tunes
                .extend(reports.into_iter().map(|r| (stem.clone(), r)));
            out.listed.extend(devices);
            continue;
        }
        let runs = parse_reports(&text).map_err(|e| usage(format!("{}: {e}", path.display())))?;
        if runs.iter().all(|r| r.results.is_empty()) {
            return Err(usage(format!(
                "{}: the report holds no results",
                path.display()
            )));
        }
        let many = runs.len() > 1;
        for (i, report) in runs.into_iter().enumerate() {
            let label = match many {
                true => format!("{stem}#{i}"),
                false => stem.clone(),
            };
            if many {
                stdio::eprint_line(&format!("blocksweep: {label} = {}", heading(i, &report)));
            }
            out.sweeps.push((label, report));
        }
    }
    Ok(out)
}
