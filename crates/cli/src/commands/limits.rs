//! `blocksweep limits`: one API in full, or every API side by side with spec minimums.

use std::process::ExitCode;

use blocksweep_core::report::limits::{ApiLimits, LimitsGroup, LimitsReport};
use blocksweep_core::report::Render;
use blocksweep_core::session::Session;

use crate::args::LimitsArgs;
use crate::output::stdio;
use crate::output::width;

pub fn run(args: &LimitsArgs) -> anyhow::Result<ExitCode> {
    let reg = super::registry();
    let each = super::resolve_each(&reg, &args.device)?;
    let options = args.device.open_options();
    let mut groups = Vec::new();
    let mut failed = false;
    for targets in each {
        let heading = Some(super::heading(&targets));
        let one_physical_device = targets.one_physical_device;
        let (views, failures) = Session::each(&reg, targets, &options, |b| {
            Ok(ApiLimits {
                device: b.identity().clone(),
                limits: b.limits().clone(),
                kernel: b.kernel_facts().clone(),
                timer: b.timer(),
            })
        });
        failed |= super::warn_failures(&failures);
        groups.push(LimitsGroup {
            heading,
            one_physical_device,
            views,
        });
    }
    let report = LimitsReport { groups };
    stdio::print(&report.render(width::format(args.format), width::stdout(args.wide)))?;
    Ok(super::exit(failed))
}
