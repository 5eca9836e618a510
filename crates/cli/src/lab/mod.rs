//! The lab's commands (docs/lab.md) on the core: their arguments ([`args`]), a session per
//! physical device with the frame checked and made, and each API's run with its validation
//! messages turned into failures.

pub mod args;

use blocksweep_core::backend::Backend;
use blocksweep_core::blocks::BlockSize;
use blocksweep_core::lab::report::{ShapeReport, WaveReport};
use blocksweep_core::lab::run::{failure, run_shapes, run_waves, shared_wave, wave_of};
use blocksweep_core::lab::shapes;
use blocksweep_core::report::Failure;
use blocksweep_core::session::{Said, Session};
use blocksweep_core::sweep::Quiet;
use blocksweep_core::{Frame, Registry, Targets};

use crate::args::DeviceArgs;
use crate::session::session_error;
use crate::usage;
use args::{LabRun, TailArgs};

/// A session on one physical device, with the frame and its reference.
pub struct Opened {
    pub session: Session,
    pub frame: Frame,
    pub reference: Vec<f32>,
    /// What each API's checking layer said that was reported already.
    pub said: Said,
}

/// Opens the session for one physical device and generates the frame and its reference.
pub fn open(
    reg: &Registry,
    targets: Targets,
    device: &DeviceArgs,
    run: &LabRun,
) -> anyhow::Result<Opened> {
    let session =
        Session::open(reg, targets, &device.open_options(), &mut Quiet).map_err(session_error)?;
    let (w, h) = run.size;
    session.check_frame(w, h).map_err(session_error)?;
    let frame = Frame::try_generate(w, h, run.seed).map_err(|e| usage(e.to_string()))?;
    let reference = frame.try_reference().map_err(|e| usage(e.to_string()))?;
    Ok(Opened {
        session,
        frame,
        reference,
        said: Said::default(),
    })
}

/// The API's validation messages since the last look, as one failure.
fn said(b: &dyn Backend, seen: &mut Said, failures: &mut Vec<Failure>) {
    failures.extend(seen.failure(b));
}

/// Every block shape of each of `threads` on every API of one device, into `report`.
pub fn shapes_on(
    o: &mut Opened,
    threads: &[u32],
    run: &LabRun,
    report: &mut ShapeReport,
) -> anyhow::Result<()> {
    report.failures.append(&mut o.session.failures);
    let (w, h) = run.size;
    for &threads in threads {
        let rows = shapes::plan(threads, w, h).map_err(usage)?;
        for b in o.session.backends() {
            let r = run_shapes(
                b.as_mut(),
                &o.frame,
                &o.reference,
                threads,
                &rows,
                &report.protocol,
            );
            said(b.as_ref(), &mut o.said, &mut report.failures);
            report.results.push(r);
        }
    }
    Ok(())
}

/// The wave sweep on every API of one device, into `report`: one wave for them all where
/// they share the device, else each API's own.
pub fn waves_on(
    o: &mut Opened,
    one_device: bool,
    args: &TailArgs,
    report: &mut WaveReport,
) -> anyhow::Result<()> {
    report.failures.append(&mut o.session.failures);
    let block = BlockSize::linear(args.block);
    let shared = shared_wave(o.session.backends(), one_device, block)?;
    report.shared_wave |= shared.is_some();
    for b in o.session.backends() {
        let wave = match &shared {
            Some(w) => w.clone(),
            None => match wave_of(b.as_mut(), block) {
                Ok(w) => w,
                Err(e) => {
                    report.failures.push(failure(b.api(), &e.message));
                    continue;
                }
            },
        };
        let r = run_waves(
            b.as_mut(),
            &o.frame,
            &o.reference,
            &args.waves,
            &wave,
            &report.protocol,
            args.run.seed,
        );
        said(b.as_ref(), &mut o.said, &mut report.failures);
        report.results.push(r);
    }
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
