//! `blocksweep devices`: physical devices with the APIs that see them, then each API's status.

use std::process::ExitCode;

use blocksweep_core::report::{DevicesReport, Render};

use crate::args::DevicesArgs;
use crate::output::stdio;
use crate::output::width;

pub fn run(args: &DevicesArgs) -> anyhow::Result<ExitCode> {
    let reg = crate::session::registry();
    let report = DevicesReport::of(&reg);
    let text = report.render(width::format(args.format), width::stdout(args.wide));
    stdio::println(text.trim_end_matches('\n'))?;
    Ok(ExitCode::SUCCESS)
}
