//! `blocksweep validate`: portable sizing assumptions, launched on every API.

use std::process::ExitCode;

use blocksweep_core::validate::{self, Check, Outcome, ValidateGroup, ValidateReport};
use blocksweep_core::workload::{ProgramWorkload, Workload};
use blocksweep_core::Frame;
use blocksweep_render::Render;

use crate::args::ValidateArgs;
use crate::output::files::Files;
use crate::usage;

pub fn run(args: &ValidateArgs) -> anyhow::Result<ExitCode> {
    let files = Files::check(args.out.to(args.format, args.wide))?;
    let work = match &args.kernel {
        Some(path) => {
            // 4096 per dimension unless --size says: validate launches, it does not time.
            let (spec, sizes) = crate::jobs::load(path, args.size.as_deref(), Some(4096))?;
            let buffers = ProgramWorkload::planned_buffers(&spec, &sizes)
                .map_err(|e| usage(e.to_string()))?;
            let what = format!("kernel '{}' at {sizes}", spec.name);
            blocksweep_core::hostmem::check_kernel(&what, &buffers, &[], false)
                .map_err(|e| usage(e.to_string()))?;
            let instance = spec.instantiate(&sizes).map_err(|e| usage(e.to_string()))?;
            Some(ProgramWorkload::new(spec, instance))
        }
        None => None,
    };
    // Small, and not a multiple of any block size, so coverage bugs cannot hide.
    let frame = Frame::generate(509, 253, 3);
    let reference = frame.reference();
    let options = match &work {
        Some(_) => args.device.kernel_options()?,
        None => args.device.open_options(),
    };
    let (each, mut failed) = crate::session::ask_each_with(&args.device, options, |b| {
        let name = b.identity().clone();
        match &work {
            Some(w) => {
                w.prepare(b)?;
                Ok((name, w.validate(b)?, Vec::new(), None))
            }
            None => {
                let v = validate::run_api(b, &frame, &reference)?;
                Ok((name, v.checks, v.resources, Some(v.subgroups)))
            }
        }
    })?;
    // Outputs the APIs disagree on, once every API has run: the odd one out is named.
    for blame in work.iter().flat_map(|w| w.blames()) {
        warn!("{}: {}", blame.api, blame.message);
        failed = true;
    }
    let mut groups = Vec::new();
    for device in each {
        let mut group = ValidateGroup {
            heading: Some(device.heading),
            apis: Vec::new(),
            devices: Vec::new(),
            checks: Vec::new(),
            resources: Vec::new(),
            subgroups: Vec::new(),
        };
        for (id, checks, resources, subgroups) in device.answers {
            group.apis.push((id.api, id.name.clone()));
            group.devices.push(id);
            group.checks.extend(checks);
            group.resources.extend(resources);
            group.subgroups.extend(subgroups);
        }
        groups.push(group);
    }
    let report = ValidateReport { groups };
    let written = files.write_each(&|f, l| report.render(f, l))?;
    let wrong = report.checks().any(Check::went_wrong)
        || report
            .resources()
            .any(|r| matches!(r.outcome, Outcome::Wrong { .. }));
    Ok(super::exit(wrong || failed || !written))
}
