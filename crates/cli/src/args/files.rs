//! `-o` and `-q` for the commands that print results without measuring a sweep (`limits`,
//! `validate`, `devices`, `compare`, `replay`), as `sweep` and the lab have them: one set of
//! flags with one meaning everywhere.

use std::path::PathBuf;

use clap::Args;

use super::FormatChoice;
use crate::output::files::Where;

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
