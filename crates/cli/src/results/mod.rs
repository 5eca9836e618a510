//! A measuring command's results while it measures: [`sweep`]'s `--output` files rewritten
//! after every row, [`tune`]'s after every parameter set, then stdout and the `--plot`. Above
//! [`crate::output`] (how any file is checked and written), beside the progress bar and the
//! `--target` checks they draw on.

pub mod replay;
pub mod sweep;
pub mod tune;

use crate::args::SweepArgs;
use crate::args::Where;
use crate::output::files::Files;
use crate::output::OutputTarget;

/// A sweep's or a tune's output files and plot, each path checked (and given its format)
/// before anything is measured.
fn check_outputs(args: &SweepArgs) -> anyhow::Result<(Files, Option<OutputTarget>)> {
    let to = Where {
        output: &args.output,
        format: args.format,
        quiet: args.quiet,
        wide: args.wide,
        plotted: false,
    };
    Files::check_with_plot(to, args.plot.as_deref())
}
