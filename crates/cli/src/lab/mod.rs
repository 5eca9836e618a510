//! The lab's commands (docs/lab.md) on the core: their arguments ([`args`]), and each sweep on
//! one physical device through the session, which opens every API, turns what each could not
//! do (and what its checking layer said) into failures, and closes them all. Between opening
//! and measuring, the frame's fit is checked against every API that opened, the frame is
//! made, and the tail's one wave planned for all.

pub mod args;

use blocksweep_core::backend::Backend;
use blocksweep_core::blocks::BlockSize;
use blocksweep_core::lab::report::{ShapeReport, WaveReport};
use blocksweep_core::lab::run::{run_shapes, run_waves, shared_wave, wave_of};
use blocksweep_core::lab::shapes;
use blocksweep_core::lab::waves::Wave;
use blocksweep_core::report::Failure;
use blocksweep_core::session::{self, Session, SessionError};
use blocksweep_core::{Frame, Registry, Targets};

use crate::args::DeviceArgs;
use crate::session::session_error;
use crate::usage;
use args::{LabRun, TailArgs};

/// The frame the lab's sweeps measure, and its CPU reference.
struct Made {
    frame: Frame,
    reference: Vec<f32>,
}

/// Checks the frame against every API that opened (none opened: every reason), then makes it.
fn make_frame(
    backends: &[Box<dyn Backend>],
    failures: &[Failure],
    run: &LabRun,
) -> anyhow::Result<Made> {
    if backends.is_empty() {
        return Err(session_error(SessionError::nothing_opened(failures)));
    }
    let (w, h) = run.size;
    session::check_frame(backends, w, h).map_err(session_error)?;
    let frame = Frame::try_generate(w, h, run.seed).map_err(|e| usage(e.to_string()))?;
    let reference = frame.try_reference().map_err(|e| usage(e.to_string()))?;
    Ok(Made { frame, reference })
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
    let (_, per_api, failures) = Session::each_ready(
        reg,
        targets,
        &device.open_options(),
        |backends, failures| make_frame(backends, failures, run),
        |m, b| {
            Ok(plans
                .iter()
                .map(|(t, rows)| run_shapes(b, &m.frame, &m.reference, *t, rows, &protocol))
                .collect::<Vec<_>>())
        },
    )?;
    report.failures.extend(failures);
    for i in 0..plans.len() {
        report
            .results
            .extend(per_api.iter().filter_map(|r| r.get(i).cloned()));
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
    let block = BlockSize::linear(args.block);
    let one_device = targets.one_physical_device;
    let protocol = report.protocol;
    let ready = |backends: &mut [Box<dyn Backend>], failures: &[Failure]| {
        let made = make_frame(backends, failures, &args.run)?;
        let shared = shared_wave(backends, one_device, block)?;
        anyhow::Ok((made, shared))
    };
    let work = |(m, shared): &(Made, Option<Wave>), b: &mut dyn Backend| {
        let wave = match shared {
            Some(w) => w.clone(),
            None => wave_of(b, block)?,
        };
        Ok(run_waves(
            b,
            &m.frame,
            &m.reference,
            &args.waves,
            &wave,
            &protocol,
            args.run.seed,
        ))
    };
    let ((_, shared), results, failures) =
        Session::each_ready(reg, targets, &device.open_options(), ready, work)?;
    report.shared_wave |= shared.is_some();
    report.failures.extend(failures);
    report.results.extend(results);
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
