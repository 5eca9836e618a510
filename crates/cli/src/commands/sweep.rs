//! `blocksweep sweep`: arguments in, a core [`Session`] per physical device measures, results
//! out.
//!
//! Every output path is checked before anything is measured. Regular output files are
//! rewritten atomically after every row, so a failure or an interrupt never loses what was
//! measured; special files (FIFOs, terminals, /dev/stdout) are written once, at the end. If a
//! write fails after the measurement, the results go to stdout instead. Exit code: 0 all good;
//! 1 a sweep failed (mismatch, driver error, validation message) or a result could not be
//! written; 2 bad input, including a frame too large for the device and a block list of which
//! no row can run on any API.

use std::path::Path;
use std::process::ExitCode;
use std::time::SystemTime;

use blocksweep_core::frame::HostAllocError;
use blocksweep_core::report::{render_runs, Format, Report};
use blocksweep_core::session::{pipeline, Session, SessionError, SweepJob};
use blocksweep_core::sweep::SweepConfig;
use blocksweep_core::workload::{FrameWorkload, Workload, WorkloadSource};
use blocksweep_core::{hostmem, trace, Frame, Targets};

use super::{layout, session_error};
use crate::args::{FormatChoice, SweepArgs};
use crate::output::{stdio, OutputTarget};
use crate::progress::Bar;
use crate::usage;

fn stdout_format(args: &SweepArgs) -> Format {
    match args.format {
        Some(FormatChoice::Table) | None => Format::Table,
        Some(FormatChoice::Markdown) => Format::Markdown,
        Some(FormatChoice::Csv) => Format::Csv,
        Some(FormatChoice::Json) => Format::Json,
    }
}

/// A file's format: its extension's (.json, .csv, .md, .txt), else --format's, else the
/// table for a path without an extension. An extension that names no format (`.xlsx`) is bad
/// input unless --format says what to write.
fn file_format(args: &SweepArgs, path: &Path) -> Result<Format, String> {
    match Format::of_extension(path) {
        Ok(Some(f)) => Ok(f),
        Ok(None) => Ok(stdout_format(args)),
        Err(_) if args.format.is_some() => Ok(stdout_format(args)),
        Err(ext) => Err(format!(
            "{}: .{ext} names no output format (.json, .csv, .md or .txt); give --format to write it anyway",
            path.display()
        )),
    }
}

/// The format of a file already checked by [`Outputs::check`].
fn checked_format(args: &SweepArgs, path: &Path) -> Format {
    file_format(args, path).unwrap_or(Format::Table)
}

/// True when `path` is this process's stdout (`-o /dev/stdout`): the results are not printed
/// twice.
fn is_stdout(path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (
        std::fs::metadata(path),
        std::fs::metadata("/proc/self/fd/1"),
    ) {
        (Ok(a), Ok(b)) => (a.dev(), a.ino()) == (b.dev(), b.ino()),
        _ => false,
    }
}

/// The output files, checked before anything is measured, and what has been written.
struct Outputs<'a> {
    args: &'a SweepArgs,
    files: Vec<OutputTarget>,
    plot: Option<OutputTarget>,
    /// The first write that failed; later saves are skipped and the run ends on stdout.
    failed: Option<String>,
}

impl<'a> Outputs<'a> {
    fn check(args: &'a SweepArgs) -> anyhow::Result<Outputs<'a>> {
        let check = |p: &Path| OutputTarget::check(p).map_err(usage);
        for p in &args.output {
            check(p)?;
            file_format(args, p).map_err(usage)?;
        }
        let outputs = Outputs {
            args,
            files: args
                .output
                .iter()
                .map(|p| check(p))
                .collect::<Result<_, _>>()?,
            plot: args.plot.as_deref().map(check).transpose()?,
            failed: None,
        };
        outputs.kept(0);
        Ok(outputs)
    }

    /// What an interrupt says the regular files hold (they are the ones rewritten per row).
    fn kept(&self, rows: usize) {
        let saved: Vec<&Path> = self
            .files
            .iter()
            .filter(|t| t.is_atomic())
            .map(|t| t.path())
            .collect();
        crate::output::kept_on_interrupt(rows, &saved);
    }

    /// Rewrites the regular files (special files are written once, by `finish`), once a row
    /// has been measured: a run that measured nothing leaves the files as they were.
    fn save(&mut self, runs: &[Report]) {
        let measured = runs
            .iter()
            .flat_map(|r| &r.results)
            .any(|r| r.rows_run() > 0);
        if self.failed.is_some() || !measured {
            return;
        }
        let _saving = crate::output::saving();
        for t in self.files.iter().filter(|t| t.is_atomic()) {
            let text = render_runs(
                checked_format(self.args, t.path()),
                runs,
                layout::file(self.args.wide),
            );
            if let Err(e) = t.write(text.as_bytes()) {
                self.failed = Some(e);
                return;
            }
        }
        self.kept(
            runs.iter()
                .flat_map(|r| &r.results)
                .map(|r| r.rows_run())
                .sum(),
        );
    }

    /// Writes every file and the plot; prints to stdout when there is no file, or when a
    /// write failed (the measured rows are never dropped). Returns false on a failed write.
    fn finish(&mut self, runs: &[Report]) -> anyhow::Result<bool> {
        if self.failed.is_none() {
            for t in &self.files {
                let text = render_runs(
                    checked_format(self.args, t.path()),
                    runs,
                    layout::file(self.args.wide),
                );
                if let Err(e) = t.write(text.as_bytes()) {
                    self.failed = Some(e);
                    break;
                }
                if !self.args.quiet {
                    stdio::eprint_line(&format!("blocksweep: wrote {}", t.path().display()));
                }
            }
        }
        // The results go to stdout as well as to the files (hyperfine prints and exports),
        // unless a file is stdout itself, or --quiet asks for the files only.
        let files_only = self.args.quiet && !self.files.is_empty();
        let to_stdout = self.failed.is_some()
            || !(files_only || self.files.iter().any(|t| is_stdout(t.path())));
        if to_stdout {
            stdio::print(&render_runs(
                stdout_format(self.args),
                runs,
                layout::stdout(self.args.wide),
            ))?;
        }
        if let Some(e) = &self.failed {
            warn!("{e}; the results are on stdout instead");
        }
        let mut ok = self.failed.is_none();
        if let Some(target) = &self.plot {
            // One plot per run; with several devices, the first device's.
            match crate::plot::render_svg(&runs[0]) {
                Err(e) => {
                    warn!("plot {}: {e:#}", target.path().display());
                    ok = false;
                }
                Ok(svg) => match target.write(svg.as_bytes()) {
                    Ok(()) if self.args.quiet => {}
                    Ok(()) => stdio::eprint_line(&format!(
                        "blocksweep: plotted {}",
                        target.path().display()
                    )),
                    Err(e) => {
                        warn!("{e}");
                        ok = false;
                    }
                },
            }
        }
        Ok(ok)
    }
}

/// How one device's sweep ended.
enum Ended {
    /// Measured (perhaps with failures recorded in the report).
    Measured { failed: bool },
    /// Bad input found during the run (a frame too large when allocated, no row of the given
    /// sizes could run): exit 2, and the files keep what they held.
    BadInput(String),
    /// No row of the default sizes could run on any API: exit 1, the files keep what they held.
    NothingRan(String),
}

pub fn run(args: &SweepArgs) -> anyhow::Result<ExitCode> {
    // A spec file is read, and the frame's size checked against the core's own host memory,
    // before anything is made or opened.
    let spec = match &args.kernel {
        Some(path) => Some(super::kernel::load(path, args.size.as_deref(), None)?),
        None => None,
    };
    let mut outputs = Outputs::check(args)?;
    let reg = super::registry();
    let each = reg
        .targets_each(&args.device.choice(), args.device.device.as_deref())
        .map_err(usage)?;
    let frame_size = match &spec {
        Some(_) => None,
        None => {
            let (w, h) = frame_size(args, &each)?;
            hostmem::check_frame(w, h, &[]).map_err(|e| usage(e.to_string()))?;
            Some((w, h))
        }
    };
    let mut config = args.config();
    if let (Some((spec, _)), None) = (&spec, &args.blocks) {
        if let Some(blocks) = &spec.blocks {
            config.blocks = blocks.clone();
        }
    }
    let date = humantime::format_rfc3339_seconds(SystemTime::now()).to_string();
    std::thread::scope(|s| {
        // The frame and its CPU reference (or the kernel's buffers) are made on every core
        // while the drivers load, probe, open the devices and build the kernels.
        let mut work: Box<dyn WorkloadSource> = match (spec, frame_size) {
            (Some((spec, sizes)), _) => Box::new(super::kernel::KernelJob::spawn(s, spec, sizes)),
            (None, Some((w, h))) => Box::new(FrameJob {
                making: Some(s.spawn(move || {
                    let _t = trace::span("core", "frame and CPU reference");
                    let frame = Frame::try_generate(w, h, args.seed)?;
                    let reference = frame.try_reference()?;
                    Ok(FrameWorkload { frame, reference })
                })),
                made: None,
            }),
            (None, None) => unreachable!("a frame size without a spec"),
        };
        let mut runs: Vec<Report> = Vec::new();
        let mut failed = false;
        for targets in each {
            let report = Report::new(format!("blocksweep {}", env!("CARGO_PKG_VERSION")), &date);
            let mut save = |r: &Report| {
                let mut all = runs.clone();
                all.push(r.clone());
                outputs.save(&all);
            };
            let device = Device {
                args,
                config: &config,
                reg: &reg,
                frame_size,
            };
            let (report, ended) = device.sweep(targets, work.as_mut(), report, &mut save)?;
            match ended {
                Ended::BadInput(why) => return Err(usage(why)),
                Ended::NothingRan(why) => return Err(anyhow::anyhow!(why)),
                Ended::Measured { failed: f } => failed |= f,
            }
            for f in &report.failures {
                warn!("{}: {}", f.api, f.message);
            }
            runs.push(report);
        }
        let written = outputs.finish(&runs)?;
        Ok(if failed || !written {
            ExitCode::from(1)
        } else {
            ExitCode::SUCCESS
        })
    })
}

/// The frame's size: `--size`, else the course's 4K frame on a GPU and a 1280x720 one where
/// every target is a CPU device (said once): there the 4K sweep takes about a minute on two
/// cores, and no frame size makes a CPU's figures say anything about a GPU.
fn frame_size(args: &SweepArgs, each: &[Targets]) -> anyhow::Result<(u32, u32)> {
    let cpu_only = each
        .iter()
        .flat_map(|t| &t.devices)
        .all(|d| d.kind != blocksweep_core::DeviceKind::Gpu);
    if args.size.is_some() || !cpu_only {
        return args.frame_size().map_err(usage);
    }
    let (w, h) = blocksweep_core::frame::CPU_DEFAULT_SIZE;
    if !args.quiet {
        stdio::eprint_line(&format!(
            "blocksweep: no GPU among the devices: a {w}x{h} frame instead of the course's \
             3840x2160 (a CPU driver's figures say nothing about a GPU; --size 3840x2160 for it)"
        ));
    }
    Ok((w, h))
}

/// The frame and its CPU reference: made on a thread of their own, waited for once.
struct FrameJob<'scope> {
    making: Option<std::thread::ScopedJoinHandle<'scope, Result<FrameWorkload, HostAllocError>>>,
    made: Option<FrameWorkload>,
}

impl WorkloadSource for FrameJob<'_> {
    fn workload(&mut self) -> Result<&dyn Workload, SessionError> {
        if let Some(job) = self.making.take() {
            let made = job
                .join()
                .map_err(|_| SessionError::Failed("generating the frame panicked".into()))?
                .map_err(|e| SessionError::Input(e.to_string()))?;
            self.made = Some(made);
        }
        self.made
            .as_ref()
            .map(|w| w as &dyn Workload)
            .ok_or_else(|| SessionError::Failed("the frame was not made".into()))
    }
}

/// What every device's sweep of one run shares.
struct Device<'a> {
    args: &'a SweepArgs,
    config: &'a SweepConfig,
    reg: &'a blocksweep_core::Registry,
    /// The grayscale frame's size; `None` for a user's kernel.
    frame_size: Option<(u32, u32)>,
}

impl Device<'_> {
    /// Opens the APIs on one physical device and sweeps each as soon as it is open (the core's
    /// pipeline); `save` sees the report after every row.
    fn sweep(
        &self,
        targets: Targets,
        work: &mut dyn WorkloadSource,
        mut report: Report,
        save: &mut dyn FnMut(&Report),
    ) -> anyhow::Result<(Report, Ended)> {
        let (args, config, reg) = (self.args, self.config, self.reg);
        let mut bar = Bar::new();
        // The host's memory with each API's share, from the targets alone; checked again before
        // the first API is measured, with the APIs still in the run.
        if let Some((w, h)) = self.frame_size {
            let kinds: Vec<_> = targets.devices.iter().map(|d| (d.api, d.kind)).collect();
            hostmem::check_frame(w, h, &kinds).map_err(|e| usage(e.to_string()))?;
        }
        let job = SweepJob {
            targets,
            config,
            overlap_close: args.overlap_close,
        };
        let mut on_row = |r: &Report| {
            let mut r = r.clone();
            r.refresh_answer();
            save(&r);
        };
        let options = args.device.open_options();
        let open = |d: &blocksweep_core::DeviceIdentity| reg.open(d, &options);
        let outcome = pipeline::sweep(&open, &job, work, &mut report, &mut bar, &mut on_row);
        bar.finish();
        let outcome = outcome.map_err(session_error)?;
        report.refresh_answer();
        if let Some(msg) = outcome.too_big {
            return Ok((report, Ended::BadInput(msg)));
        }
        if !outcome.failed {
            if let Some(why) = Session::nothing_ran(&report) {
                // A run that measured nothing writes nothing: the files keep what they held. With
                // the sizes given, the sizes were wrong (bad input); with the default ones, the
                // device's limits refused them all (a driver reporting a zero limit): a failure.
                return Ok((
                    report,
                    match args.blocks.is_some() {
                        true => Ended::BadInput(why),
                        false => Ended::NothingRan(why),
                    },
                ));
            }
        }
        let failed = outcome.failed || !report.failures.is_empty();
        Ok((report, Ended::Measured { failed }))
    }
}
