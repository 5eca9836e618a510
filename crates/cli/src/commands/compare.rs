//! `blocksweep compare A.json B.json ...`: several runs side by side.

use std::process::ExitCode;

use blocksweep_core::report::compare::render;
use blocksweep_core::report::{parse_report, Report};

use crate::args::{CompareArgs, FormatChoice};
use crate::usage;

pub fn run(args: &CompareArgs) -> anyhow::Result<ExitCode> {
    let mut reports: Vec<(String, Report)> = Vec::new();
    for path in &args.files {
        let text =
            std::fs::read_to_string(path).map_err(|e| usage(format!("{}: {e}", path.display())))?;
        let report = parse_report(&text).map_err(|e| usage(format!("{}: {e}", path.display())))?;
        if report.results.is_empty() {
            return Err(usage(format!(
                "{}: the report holds no results",
                path.display()
            )));
        }
        let label = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        reports.push((label, report));
    }
    if !matches!(args.format, FormatChoice::Table | FormatChoice::Markdown) {
        return Err(usage("compare prints table or markdown"));
    }
    print!(
        "{}",
        render(&reports, args.format == FormatChoice::Markdown)
    );
    Ok(ExitCode::SUCCESS)
}
