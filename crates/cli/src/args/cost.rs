//! Arguments of `launch-cost`: what one dispatch costs on each API (docs/launch-cost.md).

use clap::Args;

use super::{formats, trim, DeviceArgs, FileArgs, FormatChoice};

#[derive(Args, Debug)]
pub struct LaunchCostArgs {
    #[command(flatten)]
    pub device: DeviceArgs,
    /// Dispatches in the back-to-back batch (the device and enqueue figures).
    #[arg(long, default_value = "2000", value_parser = trim(clap::value_parser!(u32).range(1..=1_000_000)))]
    pub dispatches: u32,
    /// Dispatches timed one at a time, each waited for (the round trip).
    #[arg(long, default_value = "200", value_parser = trim(clap::value_parser!(u32).range(1..=100_000)))]
    pub round_trips: u32,
    /// Threads in the one block each dispatch launches.
    #[arg(long, default_value = "32", value_parser = trim(clap::value_parser!(u32).range(1..=4096)))]
    pub block: u32,
    /// Output format: table, markdown, csv or json.
    #[arg(long, short, default_value = "table", value_parser = formats())]
    pub format: FormatChoice,
    /// Do not fit tables to the terminal width.
    #[arg(long)]
    pub wide: bool,
    #[command(flatten)]
    pub out: FileArgs,
}
