//! The lab's commands (docs/lab.md) on the core (their arguments are `args::lab`): each sweep on
//! one physical device through the session, which opens every API, turns what each could not
//! do (and what its checking layer said) into failures, and closes them all. Between opening
//! and measuring, the frame's fit is checked against every API that opened, the frame is
//! made, and the tail's one wave planned for all.

use blocksweep_core::blocks::BlockSize;
use blocksweep_core::frame::CheckedFrame;
use blocksweep_core::lab::report::{ShapeReport, WaveReport};
use blocksweep_core::lab::shapes::{self, ShapeResult};
use blocksweep_core::lab::task::{Shapes, Tail};
use blocksweep_core::report::Partial;
use blocksweep_core::session::{self, Finished, Later, Progress, SessionError, Task};
use blocksweep_core::sweep::Observer;
use blocksweep_core::{Api, Registry, Targets};

use crate::args::lab::{LabRun, TailArgs};
use crate::args::DeviceArgs;
use crate::progress::Bar;
use crate::session::session_error;
use crate::usage;

/// The lab's frame, made while the APIs open, once the host's memory is known to hold it with
/// every API of the run.
fn make_frame(targets: &Targets, run: &LabRun) -> Result<CheckedFrame, SessionError> {
    let (w, h) = run.size;
    let apis: Vec<_> = targets.devices.iter().map(|d| (d.api, d.kind)).collect();
    blocksweep_core::hostmem::check_frame(w, h, &apis)
        .map_err(|e| SessionError::Input(e.to_string()))?;
    CheckedFrame::make(w, h, run.seed).map_err(SessionError::Input)
}

/// What sees every answer so far after every row.
type OnUpdate<'a, A> = dyn FnMut(&Progress<'_, A>) + 'a;
/// The progress line's words for the answer of the API in its turn.
type Stood<'a, A> = dyn Fn(&A) -> String + 'a;

/// Runs a lab task on one physical device through the pipeline; at least one API must run it.
/// `on_update` sees every answer so far after every row; the progress line on stderr says
/// what `stood` makes of the answer of the API in its turn ("3 of 9 shapes measured").
fn run_on<T: Task<Settings = ()>, F: FnOnce() -> Result<T, SessionError>>(
    reg: &Registry,
    (targets, device): (&Targets, &DeviceArgs),
    make: F,
    (on_update, stood): (&mut OnUpdate<'_, T::Answer>, &Stood<'_, T::Answer>),
) -> anyhow::Result<Finished<T::Answer>> {
    let mut task = Later::new(make);
    let options = crate::session::open_options(device, false)?;
    let mut bar = Bar::new();
    bar.status(None, "opening the devices and building the kernels");
    let apis = apis(targets);
    let mut show = |p: &Progress<'_, T::Answer>| {
        on_update(p);
        if let Some((i, answer)) = p.current {
            bar.status(apis.get(i).copied(), &stood(answer));
        }
    };
    let finished = session::run_saving(reg, targets, &options, &(), &mut task, &mut show);
    bar.finish();
    finished
        .and_then(Finished::require_any)
        .map_err(session_error)
}

/// The APIs of one device, in target order (as the pipeline's progress lists them).
fn apis(targets: &Targets) -> Vec<Api> {
    targets.devices.iter().map(|d| d.api).collect()
}

/// Each thread count's results, per API in target order (as the tables read them).
fn by_thread_count(answers: &[&Vec<ShapeResult>], counts: usize) -> Vec<ShapeResult> {
    (0..counts)
        .flat_map(|i| answers.iter().filter_map(move |r| r.get(i).cloned()))
        .collect()
}

/// Every block shape of each of `threads` on every API of one device, into `report`: per
/// thread count, per API, as the tables read them. `save` sees the report after every row,
/// marked interrupted there (where it stood, should the run end before the next).
pub fn shapes_on(
    reg: &Registry,
    targets: Targets,
    device: &DeviceArgs,
    (threads, run): (&[u32], &LabRun),
    (report, save): (&mut ShapeReport, &mut dyn FnMut(&ShapeReport)),
) -> anyhow::Result<()> {
    let (w, h) = run.size;
    let plans = threads
        .iter()
        .map(|&t| shapes::plan(t, w, h).map(|rows| (t, rows)))
        .collect::<Result<Vec<_>, _>>()
        .map_err(usage)?;
    let protocol = report.protocol.clone();
    let planned = plans.iter().map(|(_, rows)| rows.len()).sum();
    let make = || {
        Ok(Shapes {
            on: make_frame(&targets, run)?,
            plans,
            protocol,
        })
    };
    let (apis, done) = (apis(&targets), &*report);
    let mut last_turn = None;
    let mut on_update = |p: &Progress<'_, Vec<ShapeResult>>| {
        last_turn = p.current.map(|(i, _)| i).or(last_turn);
        let rows = |a: &Vec<ShapeResult>| a.iter().map(|r| r.rows.len()).sum();
        let mut so_far = done.clone();
        so_far.failures.extend(p.failures().cloned());
        let answers: Vec<&Vec<ShapeResult>> = p.answers().collect();
        so_far
            .results
            .extend(by_thread_count(&answers, threads.len()));
        so_far.partial = Partial::at(p.stood(&apis, last_turn, rows, Some(planned)));
        save(&so_far);
    };
    let stood = |a: &Vec<ShapeResult>| {
        let done: usize = a.iter().map(|r| r.rows.len()).sum();
        format!("{done} of {planned} shapes measured")
    };
    let finished = run_on(reg, (&targets, device), make, (&mut on_update, &stood))?;
    report.failures.extend(finished.failures);
    let answers: Vec<&Vec<ShapeResult>> = finished.answers.iter().collect();
    report
        .results
        .extend(by_thread_count(&answers, threads.len()));
    Ok(())
}

/// The wave sweep on every API of one device, into `report`: one wave for them all where
/// they share the device, else each API's own. `save` sees the report after every point, as
/// [`shapes_on`]'s does (how many points an API plans depends on its wave: none is said).
pub fn waves_on(
    reg: &Registry,
    (targets, device): (Targets, &DeviceArgs),
    args: &TailArgs,
    (report, save): (&mut WaveReport, &mut dyn FnMut(&WaveReport)),
) -> anyhow::Result<()> {
    let make = || {
        Ok(Tail {
            on: make_frame(&targets, &args.run)?,
            spec: args.waves,
            block: BlockSize::linear(args.block),
            protocol: report.protocol.clone(),
            seed: args.run.seed,
        })
    };
    let (apis, done) = (apis(&targets), &*report);
    let mut last_turn = None;
    let mut on_update = |p: &Progress<'_, _>| {
        last_turn = p.current.map(|(i, _)| i).or(last_turn);
        let rows = |a: &blocksweep_core::lab::waves::WaveResult| a.rows.len();
        let mut so_far = done.clone();
        so_far.failures.extend(p.failures().cloned());
        so_far.results.extend(p.answers().cloned());
        so_far.partial = Partial::at(p.stood(&apis, last_turn, rows, None));
        save(&so_far);
    };
    let stood =
        |a: &blocksweep_core::lab::waves::WaveResult| format!("{} grids measured", a.rows.len());
    let finished = run_on(reg, (&targets, device), make, (&mut on_update, &stood))?;
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
