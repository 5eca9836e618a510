//! The `--output` files of a command: each path checked and given its format before anything
//! is measured, then written with the results; stdout gets them too unless `--quiet` asks for
//! the files only, or a write failed (measured results are never dropped).

use std::path::Path;

use blocksweep_render::layout::Layout;
use blocksweep_render::Format;

use super::{stdio, width, OutputTarget};
use crate::args::Where;
use crate::usage;

/// The checked output files, each with its format.
pub struct Files {
    pub targets: Vec<(OutputTarget, Format)>,
    /// stdout's format: --format's, else the table.
    pub stdout: Format,
    pub quiet: bool,
    pub wide: bool,
    pub plotted: bool,
}

impl Files {
    /// [`Files::check`], and the `--plot` path beside them (where given) checked as one.
    pub fn check_with_plot(
        to: Where,
        plot: Option<&Path>,
    ) -> anyhow::Result<(Files, Option<OutputTarget>)> {
        let files = Files::check(to.plotting(plot.is_some()))?;
        let plot = plot.map(|p| OutputTarget::check(p).map_err(usage));
        Ok((files, plot.transpose()?))
    }

    /// Checks every path (bad input: exit 2) and gives it its format.
    pub fn check(to: Where) -> anyhow::Result<Files> {
        let stdout = to.format.map_or(Format::Table, width::format);
        let mut targets = Vec::new();
        for p in to.output {
            let t = OutputTarget::check(p).map_err(usage)?;
            let f = file_format(p, stdout, to.format.is_some()).map_err(usage)?;
            targets.push((t, f));
        }
        // Until the first save, a Ctrl-C says the files were left as they were.
        let atomic = targets.iter().filter(|(t, _)| t.is_atomic());
        let paths: Vec<&Path> = atomic.map(|(t, _)| t.path()).collect();
        super::kept_on_interrupt(0, &paths);
        Ok(Files {
            targets,
            stdout,
            quiet: to.quiet,
            wide: to.wide,
            plotted: to.plotted,
        })
    }

    /// True when every result goes to files and none to stdout (--quiet with files, a plot
    /// among them).
    pub fn files_only(&self) -> bool {
        self.quiet && (!self.targets.is_empty() || self.plotted)
    }

    /// Rewrites the regular files (special files are written once, at the end) with what is
    /// measured so far, `rows` of it, under the interrupt's lock so that what Ctrl-C says
    /// matches them; the first failed write is returned, the files after it left as they were.
    pub fn rewrite(
        &self,
        rows: usize,
        render: &dyn Fn(Format, Layout) -> String,
    ) -> Result<(), String> {
        {
            let _saving = super::saving();
            let atomic = || self.targets.iter().filter(|(t, _)| t.is_atomic());
            for (t, f) in atomic() {
                t.write(render(*f, width::file(self.wide)).as_bytes())?;
            }
            let saved: Vec<&std::path::Path> = atomic().map(|(t, _)| t.path()).collect();
            super::kept_on_interrupt(rows, &saved);
        }
        hold_if_asked();
        Ok(())
    }

    /// Writes every file (each failure said, the others still written), then stdout unless
    /// [`Files::files_only`]; false when a write failed (the results then go to stdout too).
    pub fn write_each(&self, render: &dyn Fn(Format, Layout) -> String) -> anyhow::Result<bool> {
        self.write_each_to(render, width::stdout(self.wide), &|| {})
    }

    /// [`Files::write_each`] with stdout's layout given, and `before_stdout` run just before
    /// stdout is written (what a command says on stderr beside its results there).
    pub fn write_each_to(
        &self,
        render: &dyn Fn(Format, Layout) -> String,
        stdout: Layout,
        before_stdout: &dyn Fn(),
    ) -> anyhow::Result<bool> {
        let mut ok = true;
        for (t, f) in &self.targets {
            let text = render(*f, width::file(self.wide));
            match t.write(text.as_bytes()) {
                Ok(()) => stdio::eprint_line(&format!("blocksweep: wrote {}", t.path().display())),
                Err(e) => {
                    warn!("error: {e}");
                    ok = false;
                }
            }
        }
        if !self.files_only() || !ok {
            before_stdout();
            stdio::print(&render(self.stdout, stdout))?;
        }
        Ok(ok)
    }
}

/// With `BLOCKSWEEP_HOLD_AFTER_SAVE` set (the interrupt's tests), the run stops after its
/// first save until a signal ends it: the signal then comes at a known point, after a row and
/// before the end, however fast the machine. Called without the save's lock held.
fn hold_if_asked() {
    if std::env::var_os("BLOCKSWEEP_HOLD_AFTER_SAVE").is_some() {
        loop {
            std::thread::park();
        }
    }
}

/// A file's format: its extension's (.json, .csv, .md, .txt), else `stdout`'s (--format's, or
/// the table for a path without an extension). An extension that names no format (`.xlsx`) is
/// bad input unless --format (`format_given`) says what to write.
fn file_format(path: &Path, stdout: Format, format_given: bool) -> Result<Format, String> {
    match Format::of_extension(path) {
        Ok(Some(f)) => Ok(f),
        Ok(None) => Ok(stdout),
        Err(_) if format_given => Ok(stdout),
        Err(ext) => Err(format!(
            "{}: .{ext} names no output format (.json, .csv, .md or .txt); give --format to write it anyway",
            path.display()
        )),
    }
}

/// True when `path` is this process's stdout (`-o /dev/stdout`): the results are not printed
/// twice.
pub fn is_stdout(path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (
        std::fs::metadata(path),
        std::fs::metadata("/proc/self/fd/1"),
    ) {
        (Ok(a), Ok(b)) => (a.dev(), a.ino()) == (b.dev(), b.ino()),
        _ => false,
    }
}

/// Writes an SVG plot to `target`; says what happened on stderr (`done` names it: "wrote",
/// "plotted"), with `prefix` before a failure. False when it failed.
pub fn write_plot(
    target: &OutputTarget,
    svg: anyhow::Result<String>,
    done: Option<&str>,
    prefix: &str,
) -> bool {
    match svg {
        Err(e) => {
            warn!("{prefix}plot {}: {e:#}", target.path().display());
            false
        }
        Ok(svg) => match target.write(svg.as_bytes()) {
            Ok(()) => {
                if let Some(done) = done {
                    stdio::eprint_line(&format!("blocksweep: {done} {}", target.path().display()));
                }
                true
            }
            Err(e) => {
                warn!("{prefix}{e}");
                false
            }
        },
    }
}
