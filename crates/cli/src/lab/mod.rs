//! The lab's commands (docs/lab.md) on the core (their arguments are `args::lab`): each sweep on
//! one physical device through the session, which opens every API, turns what each could not
//! do (and what its checking layer said) into failures, and closes them all. Between opening
//! and measuring, the frame's fit is checked against every API that opened, the frame is
//! made, and the tail's one wave planned for all.

use blocksweep_core::blocks::BlockSize;
use blocksweep_core::lab::report::{ShapeReport, WaveReport};
use blocksweep_core::lab::shapes;
use blocksweep_core::lab::task::{LabFrame, OnFrame, Shapes, Tail};
use blocksweep_core::session::{self, Finished, Later, SessionError, Task};
use blocksweep_core::{Registry, Targets};

use crate::args::lab::{LabRun, TailArgs};
use crate::args::DeviceArgs;
use crate::session::session_error;
use crate::usage;

/// The lab's frame, made while the APIs open, once the host's memory is known to hold it with
/// every API of the run.
fn make_frame(targets: &Targets, run: &LabRun) -> Result<LabFrame, SessionError> {
    let (w, h) = run.size;
    let apis: Vec<_> = targets.devices.iter().map(|d| (d.api, d.kind)).collect();
    blocksweep_core::hostmem::check_frame(w, h, &apis)
        .map_err(|e| SessionError::Input(e.to_string()))?;
    LabFrame::make(w, h, run.seed).map_err(SessionError::Input)
}

/// Runs a lab task on one physical device through the pipeline; at least one API must run it.
fn run_on<T: Task<Settings = ()>, F: FnOnce() -> Result<T, SessionError>>(
    reg: &Registry,
    targets: &Targets,
    device: &DeviceArgs,
    make: F,
) -> anyhow::Result<Finished<T::Answer>> {
    let mut task = Later::new(make);
    let options = crate::session::open_options(device, false)?;
    session::run(reg, targets, &options, &(), &mut task)
        .and_then(Finished::require_any)
        .map_err(session_error)
}

/// Every block shape of each of `threads` on every API of one device, into `report`: per
/// thread count, per API, as the tables read them.
pub fn shapes_on(
    reg: &Registry,
    targets: Targets,
    device: &DeviceArgs,
    (threads, run): (&[u32], &LabRun),
    report: &mut ShapeReport,
) -> anyhow::Result<()> {
    let (w, h) = run.size;
    let plans = threads
        .iter()
        .map(|&t| shapes::plan(t, w, h).map(|rows| (t, rows)))
        .collect::<Result<Vec<_>, _>>()
        .map_err(usage)?;
    let protocol = report.protocol;
    let make = || {
        let on = make_frame(&targets, run)?;
        let sweep = Shapes { plans, protocol };
        Ok(OnFrame { on, sweep })
    };
    let finished = run_on(reg, &targets, device, make)?;
    report.failures.extend(finished.failures);
    for i in 0..threads.len() {
        report
            .results
            .extend(finished.answers.iter().filter_map(|r| r.get(i).cloned()));
    }
    Ok(())
}

/// The wave sweep on every API of one device, into `report`: one wave for them all where
/// they share the device, else each API's own.
pub fn waves_on(
    reg: &Registry,
    targets: Targets,
    device: &DeviceArgs,
    args: &TailArgs,
    report: &mut WaveReport,
) -> anyhow::Result<()> {
    let make = || {
        let on = make_frame(&targets, &args.run)?;
        let sweep = Tail {
            spec: args.waves,
            block: BlockSize::linear(args.block),
            protocol: report.protocol,
            seed: args.run.seed,
        };
        Ok(OnFrame { on, sweep })
    };
    let finished = run_on(reg, &targets, device, make)?;
    report.shared_wave |= finished.shared_plan;
    report.failures.extend(finished.failures);
    report.results.extend(finished.answers);
    Ok(())
}

/// Why no grid of the wave sweep ran on any API (the first three reasons), if none did.
pub fn no_grid_ran(report: &WaveReport) -> Option<String> {
    let ran = report
        .results
        .iter()
        .any(|r| r.rows.iter().any(|x| x.gbps.is_some()));
    if ran {
        return None;
    }
    let why: Vec<String> = report
        .results
        .iter()
        .flat_map(|r| {
            r.rows
                .iter()
                .filter_map(move |x| x.skipped.as_ref().map(|s| format!("{}: {s}", r.api)))
        })
        .take(3)
        .collect();
    Some(format!("no grid could run: {}", why.join("; ")))
}
