//! `blocksweep devices`: physical devices with the APIs that see them, then each API's status.

use std::process::ExitCode;

use blocksweep_core::report::DevicesReport;
use blocksweep_render::Render;

use crate::args::DevicesArgs;
use crate::output::files::Files;

pub fn run(args: &DevicesArgs) -> anyhow::Result<ExitCode> {
    let files = Files::check(args.out.to(args.format, args.wide))?;
    let reg = crate::session::registry();
    let report = DevicesReport::of(&reg);
    let written = files.write_each(&|f, l| report.render(f, l))?;
    Ok(super::exit(!written))
}
