//! `blocksweep sweep`: arguments in, the core's session pipeline measures each physical device
//! ([`crate::session`]), results out ([`crate::output::sweep`]).
//!
//! Every output path is checked before anything is measured; a write that fails after the
//! measurement sends the results to stdout instead. Exit code: 0 all good; 1 a sweep failed
//! (mismatch, driver error, validation message) or a result could not be written; 2 bad input,
//! including a frame too large for the device and a block list of which no row can run on any
//! API.

use std::process::ExitCode;

use blocksweep_core::hostmem;
use blocksweep_core::workload::ProgramWorkload;
use blocksweep_core::workload::WorkloadSource;

use crate::args::SweepArgs;
use crate::jobs::{self, FrameJob, KernelJob};
use crate::output::sweep::Outputs;
use crate::session::Sweep;
use crate::usage;

pub fn run(args: &SweepArgs) -> anyhow::Result<ExitCode> {
    let targets = crate::targets::select(args.target.as_deref())?;
    // A spec file is read, and the frame's size checked against the core's own host memory,
    // before anything is made or opened.
    let spec = match &args.kernel {
        Some(path) => Some(jobs::load(path, args.size.as_deref(), None)?),
        None => None,
    };
    let tuning = super::tune::wanted(args, spec.as_ref().map(|(s, _)| s));
    // A tune checks and writes its own files.
    let mut outputs = match tuning {
        true => None,
        false => Some(Outputs::check(args)?),
    };
    let reg = crate::session::registry();
    let each = crate::session::resolve_each(&reg, &args.device)?;
    let spec = spec.map(|(spec, sizes)| {
        let sizes = jobs::kernel_sizes(args, &spec, sizes, &each);
        (spec, sizes)
    });
    // Every host allocation of the run, counted here once per physical device (they are swept
    // one after another) with its APIs' device kinds, before any buffer or frame is generated;
    // the sweep checks again with the APIs that opened.
    let kinds = |t: &blocksweep_core::Targets| -> Vec<_> {
        t.devices.iter().map(|d| (d.api, d.kind)).collect()
    };
    let frame_size = match &spec {
        Some((spec, sizes)) => {
            let buffers =
                ProgramWorkload::planned_buffers(spec, sizes).map_err(|e| usage(e.to_string()))?;
            let what = format!("kernel '{}' at {sizes}", spec.name);
            for t in &each {
                hostmem::check_kernel(&what, &buffers, &kinds(t), false)
                    .map_err(|e| usage(e.to_string()))?;
            }
            None
        }
        None => {
            let (w, h) = jobs::frame_size(args, &each)?;
            for t in &each {
                hostmem::check_frame(w, h, &kinds(t)).map_err(|e| usage(e.to_string()))?;
            }
            Some((w, h))
        }
    };
    let mut config = args.config();
    if let (Some((spec, _)), None) = (&spec, &args.blocks) {
        if let Some(blocks) = &spec.blocks {
            config.blocks = blocks.clone();
        }
    }
    if let (Some(targets), Some(outputs)) = (targets, outputs.as_mut()) {
        outputs.targets = Some(crate::targets::for_sweep(
            targets,
            spec.as_ref(),
            frame_size,
        )?);
    }
    let date = super::now();
    if super::tune::wanted(args, spec.as_ref().map(|(s, _)| s)) {
        let ctx = super::tune_set::Ctx {
            args,
            reg: &reg,
            spec: spec.as_ref(),
            frame: frame_size,
            config: &config,
            date: &date,
        };
        return super::tune::run(&ctx, each);
    }
    std::thread::scope(|s| {
        let mut work: Box<WorkloadSource<'_>> = match (spec, frame_size) {
            (Some((spec, sizes)), _) => Box::new(KernelJob::spawn(s, spec, sizes)),
            (None, Some(size)) => Box::new(FrameJob::spawn(s, size, args.seed)),
            (None, None) => unreachable!("a frame size without a spec"),
        };
        let sweep = Sweep {
            args,
            config: &config,
            reg: &reg,
            frame_size,
            date: &date,
        };
        let outputs = outputs.as_mut().expect("a sweep's outputs were checked");
        let (runs, failed) = sweep.each(each, work.as_mut(), &mut |all| outputs.save(all))?;
        let written = outputs.finish(&runs)?;
        Ok(super::exit(failed || !written))
    })
}
