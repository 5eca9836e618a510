//! The sweep's outputs: its `--output` files rewritten atomically after every measured row (a
//! failure or an interrupt never loses what was measured), special files (FIFOs, terminals,
//! /dev/stdout) written once at the end, the `--plot`, and stdout.

use blocksweep_core::report::Report;
use blocksweep_render::render_runs;
use blocksweep_render::targets::append;

use crate::args::SweepArgs;
use crate::output::files::{is_stdout, write_plot, Files};
use crate::output::{stdio, width, OutputTarget};

/// The output files, checked before anything is measured, and what has been written.
pub struct Outputs {
    files: Files,
    plot: Option<OutputTarget>,
    /// The first write that failed; later saves are skipped and the run ends on stdout.
    failed: Option<String>,
    /// `--verbose`: stdout gets everything the files get.
    verbose: bool,
    /// `--target`: every block held against these, in every output.
    pub targets: Option<crate::targets::SweepTargets>,
}

impl Outputs {
    pub fn check(args: &SweepArgs) -> anyhow::Result<Outputs> {
        let (files, plot) = super::check_outputs(args)?;
        Ok(Outputs {
            files,
            plot,
            failed: None,
            verbose: args.verbose,
            targets: None,
        })
    }

    /// Rewrites the regular files (special files are written once, by `finish`), once a row
    /// has been measured: a run that measured nothing leaves the files as they were.
    pub fn save(&mut self, runs: &[Report]) {
        let rows: usize = runs
            .iter()
            .flat_map(|r| &r.results)
            .map(|r| r.rows_run())
            .sum();
        if self.failed.is_some() || rows == 0 {
            return;
        }
        let targeted = self.targets.as_ref().and_then(|t| t.report(runs));
        let text = |f, l| append(f, render_runs(f, runs, l), targeted.as_ref(), l);
        if let Err(e) = self.files.rewrite(rows, &text) {
            self.failed = Some(e);
        }
    }

    /// Writes every file and the plot; prints to stdout when there is no file, or when a
    /// write failed (the measured rows are never dropped). Returns false on a failed write.
    pub fn finish(&mut self, runs: &[Report]) -> anyhow::Result<bool> {
        let quiet = self.files.quiet;
        let targeted = self.targets.as_ref().and_then(|t| t.report(runs));
        let text = |f, l| append(f, render_runs(f, runs, l), targeted.as_ref(), l);
        if self.failed.is_none() {
            for (t, f) in &self.files.targets {
                let text = text(*f, width::file(self.files.wide));
                if let Err(e) = t.write(text.as_bytes()) {
                    self.failed = Some(e);
                    break;
                }
                if !quiet {
                    stdio::eprint_line(&format!("blocksweep: wrote {}", t.path().display()));
                }
            }
        }
        // The results go to stdout as well as to the files (hyperfine prints and exports),
        // unless a file is stdout itself, or --quiet asks for the files only.
        let to_stdout = self.failed.is_some()
            || !(self.files.files_only()
                || self.files.targets.iter().any(|(t, _)| is_stdout(t.path())));
        if to_stdout {
            let layout = width::stdout(self.files.wide).verbose(self.verbose);
            stdio::print(&text(self.files.stdout, layout))?;
        }
        if let Some(e) = &self.failed {
            warn!("{e}; the results are on stdout instead");
        }
        let mut ok = self.failed.is_none();
        if let Some(target) = &self.plot {
            // One plot per run; with several devices, the first device's.
            let svg = crate::plot::render_svg(&runs[0]);
            ok &= write_plot(target, svg, (!quiet).then_some("plotted"), "");
        }
        Ok(ok)
    }
}
