//! A measuring command's results while it measures: [`sweep`]'s `--output` files rewritten
//! after every row, [`tune`]'s after every parameter set, then stdout and the `--plot`. Above
//! [`crate::output`] (how any file is checked and written), beside the progress bar and the
//! `--target` checks they draw on.

pub mod sweep;
pub mod tune;
