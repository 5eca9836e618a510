//! `blocksweep compare A.json B.json ...`: several runs side by side.

use std::io::Read;
use std::path::Path;
use std::process::ExitCode;

use blocksweep_core::report::compare::Comparison;
use blocksweep_core::report::{heading, parse_reports, Render, Report};

use super::layout;
use crate::args::CompareArgs;
use crate::output::{describe, stdio};
use crate::usage;

/// The most a results file may hold. A 4096-row, three-API run is a few MiB of JSON; anything
/// larger is not one (and `/dev/zero` or a runaway pipe would fill memory until the process
/// died).
pub const MAX_INPUT_BYTES: u64 = 64 << 20;

pub fn run(args: &CompareArgs) -> anyhow::Result<ExitCode> {
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
    // Each on stderr too, so a script reading only the numbers still hears it.
    for w in &comparison.warnings {
        warn!("warning: {w}");
    }
    stdio::print(&comparison.render(layout::format(args.format), layout::stdout(args.wide)))?;
    Ok(ExitCode::SUCCESS)
}

/// Reads a whole results file of at most `cap` bytes as UTF-8; each error is one line naming
/// the path and the cause.
pub(super) fn read_capped(path: &Path, cap: u64) -> Result<String, String> {
    let shown = path.display();
    let mut f = std::fs::File::open(path).map_err(|e| format!("{shown}: {}", describe(&e)))?;
    if f.metadata().is_ok_and(|m| m.is_dir()) {
        return Err(format!("{shown} is a directory, not a results file"));
    }
    let mut bytes = Vec::new();
    (&mut f)
        .take(cap + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("{shown}: {}", describe(&e)))?;
    if bytes.len() as u64 > cap {
        return Err(format!(
            "{shown} holds more than {} MiB: not a blocksweep results file",
            cap >> 20
        ));
    }
    String::from_utf8(bytes).map_err(|_| format!("{shown}: not JSON: the file is not UTF-8 text"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn caps_streams_and_names_causes() {
        let e = read_capped(Path::new("/dev/zero"), 1 << 20).unwrap_err();
        assert_eq!(
            e,
            "/dev/zero holds more than 1 MiB: not a blocksweep results file"
        );
        let e = read_capped(Path::new("/"), 1 << 20).unwrap_err();
        assert_eq!(e, "/ is a directory, not a results file");
        let e = read_capped(Path::new("/no/such/file.json"), 1 << 20).unwrap_err();
        assert_eq!(e, "/no/such/file.json: No such file or directory");
        let d = std::env::temp_dir().join(format!("blocksweep-compare-{}", std::process::id()));
        std::fs::write(&d, [0xff, 0xfe, b'{']).unwrap();
        let e = read_capped(&d, 1 << 20).unwrap_err();
        assert!(e.ends_with("not JSON: the file is not UTF-8 text"), "{e}");
        std::fs::write(&d, "{}").unwrap();
        assert_eq!(read_capped(&d, 2).unwrap(), "{}");
        assert!(read_capped(&d, 1).is_err());
        let _ = std::fs::remove_file(&d);
    }
}
