//! `blocksweep limits`: one API in full, or every API side by side with spec minimums.

use std::process::ExitCode;

use blocksweep_core::builtin;
use blocksweep_core::report::limits::{ApiLimits, LimitsGroup, LimitsReport};
use blocksweep_core::KernelVariant;
use blocksweep_render::Render;

use crate::args::LimitsArgs;
use crate::output::files::Files;

pub fn run(args: &LimitsArgs) -> anyhow::Result<ExitCode> {
    let files = Files::check(args.out.to(args.format, args.wide))?;
    let (each, failed) = crate::session::ask_each(&args.device, |b| {
        // The built-in grid-stride kernel, built for its facts (registers, its block limit).
        builtin::load_kernel(b, KernelVariant::GridStride, 1, 1)?;
        Ok(ApiLimits {
            device: b.identity().clone(),
            limits: b.limits().clone(),
            kernel: b.kernel_facts().clone(),
            timer: b.timer(),
        })
    })?;
    let groups = each
        .into_iter()
        .map(|d| LimitsGroup {
            heading: Some(d.heading),
            one_physical_device: d.one_physical_device,
            views: d.answers,
        })
        .collect();
    let report = LimitsReport { groups };
    let written = files.write_each(&|f, l| report.render(f, l))?;
    Ok(super::exit(failed || !written))
}
