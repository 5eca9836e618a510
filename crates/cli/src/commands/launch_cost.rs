//! `blocksweep launch-cost`: what one dispatch costs on each API of each device.

use std::process::ExitCode;

use blocksweep_core::launch_cost::{self, CostConfig, CostGroup, CostReport};
use blocksweep_render::Render;

use crate::args::LaunchCostArgs;
use crate::output::files::Files;

pub fn run(args: &LaunchCostArgs) -> anyhow::Result<ExitCode> {
    let files = Files::check(args.out.to(args.format, args.wide))?;
    let config = CostConfig {
        dispatches: args.dispatches,
        round_trips: args.round_trips,
        block: args.block,
        ..CostConfig::default()
    };
    // Each API in its turn, nothing else running beside it (the pipeline's order).
    let (each, failed) =
        crate::session::ask_each(&args.device, |b| launch_cost::measure(b, &config))?;
    let groups = each
        .into_iter()
        .map(|d| CostGroup {
            heading: Some(d.heading),
            costs: d.answers,
        })
        .collect();
    let report = CostReport { groups };
    let written = files.write_each(&|f, l| report.render(f, l))?;
    Ok(super::exit(failed || !written))
}
