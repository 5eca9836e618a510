//! `-o` and `-q` for the commands that print results without measuring a sweep (`limits`,
//! `validate`, `devices`, `compare`, `replay`), as `sweep` and the lab have them: one set of
//! flags with one meaning everywhere.

use std::path::PathBuf;

use clap::Args;

use super::FormatChoice;

/// The flags that say where results go, as each command spells them.
#[derive(Clone, Copy)]
pub struct Where<'a> {
    pub output: &'a [PathBuf],
    pub format: Option<FormatChoice>,
    pub quiet: bool,
    pub wide: bool,
    /// A plot is written too: with --quiet, that is a file the results go to.
    pub plotted: bool,
}

impl<'a> Where<'a> {
    /// The same, with a plot written (or not) beside the files.
    pub fn plotting(mut self, plotted: bool) -> Where<'a> {
        self.plotted = plotted;
        self
    }
}

#[derive(Args, Debug, Clone, Default)]
pub struct FileArgs {
    /// Also write the results to this file, in the format its extension names (.json, .csv,
    /// .md, .txt; else --format). Repeatable.
    #[arg(long, short)]
    pub output: Vec<PathBuf>,
    /// No results on stdout when --output files (or a --plot) are given.
    #[arg(long, short)]
    pub quiet: bool,
}

impl FileArgs {
    /// Where the results go, with the command's `--format` (its default, the table, counts as
    /// not given: an extension that names no format is then refused) and `--wide`.
    pub fn to(&self, format: FormatChoice, wide: bool) -> Where<'_> {
        Where {
            output: &self.output,
            format: (format != FormatChoice::Table).then_some(format),
            quiet: self.quiet,
            wide,
            plotted: false,
        }
    }
}
