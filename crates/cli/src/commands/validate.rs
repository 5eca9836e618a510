//! `blocksweep validate`: portable sizing assumptions, launched on every API.

use std::process::ExitCode;

use blocksweep_core::report::Render;
use blocksweep_core::validate::{self, Outcome, ValidateGroup, ValidateReport};
use blocksweep_core::workload::{ProgramWorkload, Workload};
use blocksweep_core::Frame;

use super::layout;
use crate::args::ValidateArgs;
use crate::output::stdio;

pub fn run(args: &ValidateArgs) -> anyhow::Result<ExitCode> {
    if let Some(path) = &args.kernel {
        return run_kernel(args, path);
    }
    let reg = super::registry();
    let each = super::resolve_each(&reg, &args.device)?;
    let options = args.device.open_options();
    // Small, and not a multiple of any block size, so coverage bugs cannot hide.
    let frame = Frame::generate(509, 253, 3);
    let reference = frame.reference();
    let mut groups = Vec::new();
    let mut failed = false;
    for targets in &each {
        let mut checks = Vec::new();
        let mut resources = Vec::new();
        let mut subgroups = Vec::new();
        let mut apis = Vec::new();
        for d in &targets.devices {
            let result = reg
                .open(d, &options)
                .and_then(|mut b| validate::run_api(b.as_mut(), &frame, &reference));
            match result {
                Ok(v) => {
                    // `--vk-validation` promises to fail on any message the layer raised.
                    if !v.diagnostics.is_empty() {
                        warn!(
                            "{}: {} validation message(s): {}",
                            d.api,
                            v.diagnostics.len(),
                            v.diagnostics.join(" | ")
                        );
                        failed = true;
                    }
                    apis.push((d.api, d.name.clone()));
                    checks.extend(v.checks);
                    resources.extend(v.resources);
                    subgroups.push(v.subgroups);
                }
                Err(e) => {
                    warn!("{e}");
                    failed = true;
                }
            }
        }
        groups.push(ValidateGroup {
            heading: Some(super::heading(targets)),
            apis,
            checks,
            resources,
            subgroups,
        });
    }
    let report = ValidateReport { groups };
    stdio::print(&report.render(layout::format(args.format), layout::stdout(args.wide)))?;
    let wrong = report
        .checks()
        .any(|c| matches!(c.outcome, Outcome::Wrong { .. }))
        || report
            .resources()
            .any(|r| matches!(r.outcome, Outcome::Wrong { .. }));
    Ok(if wrong || failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// `validate --kernel`: the assumptions launched with the user's kernel on every API.
fn run_kernel(args: &ValidateArgs, path: &std::path::Path) -> anyhow::Result<ExitCode> {
    let (spec, sizes) = super::kernel::load(path, args.size.as_deref())?;
    let instance = spec
        .instantiate(&sizes)
        .map_err(|e| crate::usage(e.to_string()))?;
    let work = ProgramWorkload::new(spec, instance);
    let reg = super::registry();
    let each = super::resolve_each(&reg, &args.device)?;
    let options = args.device.open_options();
    let mut groups = Vec::new();
    let mut failed = false;
    for targets in &each {
        let mut checks = Vec::new();
        let mut apis = Vec::new();
        for d in &targets.devices {
            let result = reg.open(d, &options).and_then(|mut b| {
                work.prepare(b.as_mut())?;
                let c = work.validate(b.as_mut())?;
                Ok((c, b.diagnostics()))
            });
            match result {
                Ok((c, said)) => {
                    if !said.is_empty() {
                        warn!(
                            "{}: {} validation message(s): {}",
                            d.api,
                            said.len(),
                            said.join(" | ")
                        );
                        failed = true;
                    }
                    apis.push((d.api, d.name.clone()));
                    checks.extend(c);
                }
                Err(e) => {
                    warn!("{e}");
                    failed = true;
                }
            }
        }
        groups.push(ValidateGroup {
            heading: Some(super::heading(targets)),
            apis,
            checks,
            resources: Vec::new(),
            subgroups: Vec::new(),
        });
    }
    let report = ValidateReport { groups };
    stdio::print(&report.render(layout::format(args.format), layout::stdout(args.wide)))?;
    let wrong = report.checks().any(|c| {
        matches!(c.outcome, Outcome::Wrong { .. })
            || matches!(&c.outcome, Outcome::Failed { message } if message.starts_with("ran, but"))
    });
    Ok(if wrong || failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
