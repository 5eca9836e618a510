//! `blocksweep shapes` and `blocksweep tail`: the lab's two sweeps (docs/lab.md). Each opens
//! the APIs on each selected physical device, checks the frame, runs its sweep with the
//! sweep's protocol and verification, and prints (and writes) one report. Exit code: 0 all
//! good; 1 an API failed (a wrong pixel, a driver error) or a file could not be written; 2 bad
//! input.

use std::path::Path;
use std::process::ExitCode;
use std::time::SystemTime;

use blocksweep_core::blocks::BlockSize;
use blocksweep_core::lab::report::{ShapeReport, WaveReport};
use blocksweep_core::lab::run::{failure, run_shapes, run_waves, shared_wave, wave_of};
use blocksweep_core::lab::shapes;
use blocksweep_core::report::{Format, Render};
use blocksweep_core::session::Session;
use blocksweep_core::sweep::Quiet;
use blocksweep_core::{Frame, Registry, Targets};

use super::{layout, session_error};
use crate::args_lab::{LabRun, ShapesArgs, TailArgs};
use crate::output::{stdio, OutputTarget};
use crate::usage;

fn tool() -> String {
    format!("blocksweep {}", env!("CARGO_PKG_VERSION"))
}

fn now() -> String {
    humantime::format_rfc3339_seconds(SystemTime::now()).to_string()
}

/// The output files, checked before anything is measured, each with its format.
struct Files {
    files: Vec<(OutputTarget, Format)>,
}

fn stdout_format(run: &LabRun) -> Format {
    run.format.map_or(Format::Table, layout::format)
}

impl Files {
    fn check(run: &LabRun) -> anyhow::Result<Files> {
        let mut files = Vec::new();
        for p in &run.output {
            let t = OutputTarget::check(p).map_err(usage)?;
            let f = match Format::of_extension(p) {
                Ok(Some(f)) => f,
                Ok(None) => stdout_format(run),
                Err(_) if run.format.is_some() => stdout_format(run),
                Err(ext) => {
                    return Err(usage(format!(
                        "{}: .{ext} names no output format (.json, .csv, .md or .txt); give \
                         --format to write it anyway",
                        p.display()
                    )))
                }
            };
            files.push((t, f));
        }
        Ok(Files { files })
    }

    /// Writes every file, then stdout (unless --quiet with files); false when a write failed
    /// (the results then go to stdout too).
    fn finish(&self, run: &LabRun, report: &dyn Render) -> anyhow::Result<bool> {
        let mut ok = true;
        for (t, f) in &self.files {
            let text = report.render(*f, layout::file(run.wide));
            match t.write(text.as_bytes()) {
                Ok(()) => stdio::eprint_line(&format!("blocksweep: wrote {}", t.path().display())),
                Err(e) => {
                    warn!("error: {e}");
                    ok = false;
                }
            }
        }
        let files_only = run.quiet && !self.files.is_empty();
        if !files_only || !ok {
            stdio::print(&report.render(stdout_format(run), layout::stdout(run.wide)))?;
        }
        Ok(ok)
    }
}

/// Opens the session for one physical device and generates the frame and its reference.
fn open(
    reg: &Registry,
    targets: Targets,
    device: &crate::args::DeviceArgs,
    run: &LabRun,
) -> anyhow::Result<(Session, Frame, Vec<f32>)> {
    let session =
        Session::open(reg, targets, &device.open_options(), &mut Quiet).map_err(session_error)?;
    let (w, h) = run.size;
    session.check_frame(w, h).map_err(session_error)?;
    let frame = Frame::try_generate(w, h, run.seed).map_err(|e| usage(e.to_string()))?;
    let reference = frame.try_reference().map_err(|e| usage(e.to_string()))?;
    Ok((session, frame, reference))
}

pub fn shapes(args: &ShapesArgs) -> anyhow::Result<ExitCode> {
    let reg = super::registry();
    let each = super::resolve_each(&reg, &args.device)?;
    let files = Files::check(&args.run)?;
    let protocol = args.run.protocol();
    let (w, h) = args.run.size;
    let mut report = ShapeReport {
        tool: tool(),
        date: now(),
        protocol,
        results: Vec::new(),
        failures: Vec::new(),
    };
    for targets in each {
        let (mut session, frame, reference) = open(&reg, targets, &args.device, &args.run)?;
        report.failures.append(&mut session.failures);
        for &threads in &args.threads.0 {
            let rows = shapes::plan(threads, w, h).map_err(usage)?;
            for b in session.backends() {
                let r = run_shapes(b.as_mut(), &frame, &reference, threads, &rows, &protocol);
                let said = b.diagnostics();
                if !said.is_empty() {
                    report.failures.push(failure(
                        b.api(),
                        &format!("validation: {}", said.join(" | ")),
                    ));
                }
                report.results.push(r);
            }
        }
    }
    for r in report.results.iter().filter(|r| r.error.is_some()) {
        warn!("{}: {}", r.api, r.error.as_deref().unwrap_or_default());
    }
    let written = files.finish(&args.run, &report)?;
    Ok(if report.failed() || !written {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

pub fn tail(args: &TailArgs) -> anyhow::Result<ExitCode> {
    let reg = super::registry();
    let each = super::resolve_each(&reg, &args.device)?;
    let files = Files::check(&args.run)?;
    let plot = args
        .plot
        .as_deref()
        .map(|p| OutputTarget::check(p).map_err(usage))
        .transpose()?;
    let protocol = args.run.protocol();
    let block = BlockSize::linear(args.block);
    let mut report = WaveReport {
        tool: tool(),
        date: now(),
        spec: args.waves,
        block,
        protocol,
        shared_wave: false,
        results: Vec::new(),
        failures: Vec::new(),
    };
    for targets in each {
        let one = targets.one_physical_device;
        let (mut session, frame, reference) = open(&reg, targets, &args.device, &args.run)?;
        report.failures.append(&mut session.failures);
        let shared = shared_wave(session.backends(), one, block)?;
        report.shared_wave |= shared.is_some();
        for b in session.backends() {
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
                &frame,
                &reference,
                &args.waves,
                &wave,
                &protocol,
                args.run.seed,
            );
            let said = b.diagnostics();
            if !said.is_empty() {
                report.failures.push(failure(
                    b.api(),
                    &format!("validation: {}", said.join(" | ")),
                ));
            }
            report.results.push(r);
        }
    }
    if report
        .results
        .iter()
        .all(|r| r.rows.iter().all(|x| x.gbps.is_none()))
    {
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
        return Err(usage(format!("no grid could run: {}", why.join("; "))));
    }
    for r in report.results.iter().filter(|r| r.error.is_some()) {
        warn!("{}: {}", r.api, r.error.as_deref().unwrap_or_default());
    }
    let mut written = files.finish(&args.run, &report)?;
    if let Some(t) = plot {
        match crate::plot_waves::render_svg(&report) {
            Ok(svg) => match t.write(svg.as_bytes()) {
                Ok(()) => stdio::eprint_line(&format!("blocksweep: wrote {}", t.path().display())),
                Err(e) => {
                    warn!("error: {e}");
                    written = false;
                }
            },
            Err(e) => {
                warn!("error: plot {}: {e}", Path::new(t.path()).display());
                written = false;
            }
        }
    }
    Ok(if report.failed() || !written {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
