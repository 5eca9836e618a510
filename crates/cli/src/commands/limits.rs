//! `blocksweep limits`: one API in full, or every API side by side with spec minimums; with
//! `--target`, other GPUs' and profiles' limits beside them; `-o NAME.toml` writes the devices
//! in hand as a target file (docs/targets.md).

use std::path::PathBuf;
use std::process::ExitCode;

use blocksweep_core::builtin;
use blocksweep_core::report::limits::{ApiLimits, LimitsGroup, LimitsReport};
use blocksweep_core::KernelVariant;
use blocksweep_render::targets::WithLimits;
use blocksweep_render::Render;

use crate::args::LimitsArgs;
use crate::output::files::Files;
use crate::output::OutputTarget;
use crate::usage;

pub fn run(args: &LimitsArgs) -> anyhow::Result<ExitCode> {
    // A .toml output is a target file; the others are the report's formats.
    let (toml, rest): (Vec<PathBuf>, Vec<PathBuf>) = args
        .out
        .output
        .iter()
        .cloned()
        .partition(|p| p.extension().is_some_and(|e| e == "toml"));
    let mut out = args.out.clone();
    out.output = rest;
    let files = Files::check(out.to(args.format, args.wide))?;
    let toml = toml
        .iter()
        .map(|p| OutputTarget::check(p).map_err(usage))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let targets = crate::targets::select(args.target.as_deref())?;
    let (each, failed) = crate::session::ask_each(&args.device, |b| {
        // The built-in grid-stride kernel, built for its facts (registers, its block limit).
        builtin::load_kernel(b, KernelVariant::GridStride, 1, 1)?;
        let mut limits = b.limits().clone();
        // The clocks the device states, where NVML knows it (a GPU of its vendor).
        limits.extra.extend(crate::clocks::stated(b.identity()));
        Ok(ApiLimits {
            device: b.identity().clone(),
            limits,
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
    let mut written = true;
    for t in &toml {
        written &=
            crate::targets::write_file(t, &report, &crate::session::tool(), &crate::session::now());
    }
    let shown = WithLimits {
        report: &report,
        targets: targets.as_deref(),
    };
    written &= files.write_each(&|f, l| shown.render(f, l))?;
    Ok(super::exit(failed || !written))
}
