//! `blocksweep validate`: portable sizing assumptions, launched on every API.

use std::process::ExitCode;

use blocksweep_core::program::ProgramArg;
use blocksweep_core::validate::{
    Check, LaunchOutcome, ValidateGroup, ValidateReport, Validation, FRAME,
};
use blocksweep_core::workload::{KernelValidation, ProgramWorkload};
use blocksweep_core::{builtin, BlockSize, KernelVariant};
use blocksweep_render::targets::Targeted;
use blocksweep_render::Render;

use crate::args::ValidateArgs;
use crate::output::files::Files;
use crate::usage;

pub fn run(args: &ValidateArgs) -> anyhow::Result<ExitCode> {
    // Said here rather than by clap, whose "required: --kernel" read as if validate needed it.
    if args.size.is_some() && args.kernel.is_none() {
        let (w, h) = FRAME;
        return Err(usage(format!(
            "--size sets a kernel's sizes, with --kernel SPEC.toml; validate's built-in frame \
             has a size of its own ({w}x{h})"
        )));
    }
    let files = Files::check(args.out.to(args.format, args.wide))?;
    let targets = crate::targets::select(args.target.as_deref())?;
    let mut kernel = None;
    let work = match &args.kernel {
        Some(path) => {
            // 4096 per dimension unless --size says: validate launches, it does not time.
            let (mut spec, sizes) = crate::work::load(path, &[], args.size.as_deref(), Some(4096))?;
            if args.size.is_none() && sizes != spec.sizes {
                crate::work::unused_references(&mut spec, &sizes, false);
            }
            kernel = Some(kernel_line(&spec, &sizes, args.size.is_some()));
            let buffers = ProgramWorkload::planned_buffers(&spec, &sizes)
                .map_err(|e| usage(e.to_string()))?;
            let what = spec.at(&sizes);
            blocksweep_core::hostmem::check_kernel(&what, &buffers, &[], false)
                .map_err(|e| usage(e.to_string()))?;
            let instance = spec.instantiate(&sizes).map_err(|e| usage(e.to_string()))?;
            Some(ProgramWorkload::new(spec, instance))
        }
        None => None,
    };
    // What --target needs of the kernel besides the builds' facts: its arguments and its
    // dynamic shared memory at each block.
    let subgroup = work.as_ref().and_then(|w| w.instance.subgroup_size);
    let (args_of, dynamic): (Vec<ProgramArg>, Box<dyn Fn(BlockSize) -> u64>) = match &work {
        Some(w) => {
            let instance = w.instance.clone();
            let shared = move |b| instance.shared_bytes(b).map_or(0, u64::from);
            (w.instance.args.clone(), Box::new(shared))
        }
        None => (
            builtin::args(KernelVariant::GridStride, FRAME.0, FRAME.1),
            Box::new(|_| 0),
        ),
    };
    let options = crate::session::open_options(&args.device, work.is_some())?;
    let (each, failed) = match work {
        Some(work) => {
            let reg = crate::session::registry();
            let mut each = crate::session::resolve_each(&reg, &args.device)?;
            let unsourced =
                crate::work::keep_sourced(&work.spec, &args.device.choice(), &mut each)?;
            crate::work::say(&unsourced);
            crate::session::run_each_of(each, options, &mut KernelValidation { work })?
        }
        None => crate::session::run_each(&args.device, options, &mut Validation::default())?,
    };
    let builds: Vec<_> = each
        .iter()
        .flat_map(|d| &d.answers)
        .map(|v| (v.device.api, v.kernel.clone()))
        .collect();
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
        for v in device.answers {
            group.apis.push((v.device.api, v.device.name.clone()));
            group.devices.push(v.device);
            group.checks.extend(v.checks);
            group.resources.extend(v.resources);
            group.subgroups.extend(v.subgroups);
        }
        groups.push(group);
    }
    let report = ValidateReport { groups, kernel };
    let checked = targets.map(|t| {
        let kernel = crate::targets::kernel(&builds, args_of, subgroup);
        crate::targets::validate(&t, &kernel, dynamic.as_ref())
    });
    let shown = Targeted {
        report: &report,
        targets: checked.as_ref(),
    };
    let written = files.write_each(&|f, l| shown.render(f, l))?;
    let wrong = report.checks().any(Check::went_wrong)
        || report
            .resources()
            .any(|r| matches!(r.outcome, LaunchOutcome::Wrong { .. }));
    Ok(super::exit(wrong || failed || !written))
}

/// "scale (scale/kernel.toml) at n=4096 (its own n=1048576, capped at 4096 per dimension:
/// --size for another)": what validate launched, and why where the sizes are not the spec's.
fn kernel_line(
    spec: &blocksweep_core::KernelSpec,
    sizes: &blocksweep_core::spec::Sizes,
    asked: bool,
) -> String {
    let at = format!("{} ({}) at {sizes}", spec.name, spec.file);
    match asked || *sizes == spec.sizes {
        true => at,
        false => format!(
            "{at} (the spec's own {}; validate launches each work dimension at most 4096 \
             unless --size says: it checks launches, it does not time)",
            spec.sizes
        ),
    }
}
