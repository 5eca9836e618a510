//! `blocksweep sweep`: arguments in, a core [`Session`] measures, results out.
//!
//! Output files are rewritten as rows arrive (at most every half second, and after every API),
//! so a failure or an interrupt never loses what was measured. Exit code: 0 all good; 1 a
//! sweep failed (mismatch, driver error, validation message); 2 bad input, including a frame
//! too large for the device and a block list of which no row can run on any API.

use std::path::Path;
use std::process::ExitCode;
use std::time::{Duration, Instant, SystemTime};

use anyhow::Context;
use blocksweep_core::report::{write_atomic, Format, Report};
use blocksweep_core::session::{Session, SessionError};
use blocksweep_core::sweep::Observer as _;
use blocksweep_core::Frame;

use crate::args::{FormatChoice, SweepArgs};
use crate::progress::Bar;
use crate::usage;

/// Shortest interval between two rewrites of the output files while rows arrive.
const SAVE_EVERY: Duration = Duration::from_millis(500);

fn stdout_format(args: &SweepArgs) -> Format {
    match args.format {
        Some(FormatChoice::Table) | None => Format::Table,
        Some(FormatChoice::Markdown) => Format::Markdown,
        Some(FormatChoice::Csv) => Format::Csv,
        Some(FormatChoice::Json) => Format::Json,
    }
}

/// A file's format: its extension's, else --format's, else the table.
fn file_format(args: &SweepArgs, path: &Path) -> Format {
    let known = path
        .extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| Format::parse(e).is_some() || e == "txt");
    if known {
        Format::from_path(path)
    } else {
        stdout_format(args)
    }
}

fn write_outputs(args: &SweepArgs, report: &Report) -> anyhow::Result<()> {
    for path in &args.output {
        let text = file_format(args, path).exporter().render(report);
        write_atomic(path, &text).with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(())
}

fn session_error(e: SessionError) -> anyhow::Error {
    match e {
        SessionError::Input(m) => usage(m),
        SessionError::NothingOpened(m) => anyhow::anyhow!(m),
    }
}

pub fn run(args: &SweepArgs) -> anyhow::Result<ExitCode> {
    let reg = super::registry();
    let targets = super::resolve(&reg, &args.device)?;
    let config = args.config();
    let mut bar = Bar::new();
    let opened = Session::open(&reg, targets, &args.device.open_options(), &mut bar);
    let mut session = opened.map_err(|e| {
        bar.finish();
        session_error(e)
    })?;
    let (w, h) = args.size;
    session.check_frame(w, h).map_err(|e| {
        bar.finish();
        session_error(e)
    })?;
    bar.status(None, "generating the frame and its CPU reference");
    let frame = Frame::try_generate(w, h, args.seed)?;
    let reference = frame.try_reference()?;

    let date = humantime::format_rfc3339_seconds(SystemTime::now()).to_string();
    let mut report = Report::new(format!("blocksweep {}", env!("CARGO_PKG_VERSION")), date);
    let mut last_save = Instant::now();
    let mut save_error: Option<anyhow::Error> = None;
    let mut save = |r: &Report| {
        if save_error.is_none() && last_save.elapsed() >= SAVE_EVERY {
            let mut r = r.clone();
            r.refresh_answer();
            save_error = write_outputs(args, &r).err();
            last_save = Instant::now();
        }
    };
    let outcome = session.sweep(
        &frame,
        &reference,
        &config,
        &mut report,
        &mut bar,
        &mut save,
    );
    bar.finish();
    drop(session);
    let outcome = outcome?;
    report.refresh_answer();

    if let Some(msg) = outcome.too_big {
        return Err(usage(msg));
    }
    if args.blocks.is_some() && !outcome.failed {
        if let Some(why) = Session::nothing_ran(&report) {
            // A run that measured nothing writes nothing: the files keep what they held.
            return Err(usage(why));
        }
    }
    if args.output.is_empty() {
        print!("{}", stdout_format(args).exporter().render(&report));
    } else {
        write_outputs(args, &report)?;
        for path in &args.output {
            eprintln!("blocksweep: wrote {}", path.display());
        }
    }
    let mut failed = outcome.failed || !report.failures.is_empty();
    if let Some(svg) = &args.plot {
        match crate::plot::write_svg(&report, svg) {
            Ok(()) => eprintln!("blocksweep: plotted {}", svg.display()),
            Err(e) => {
                eprintln!("blocksweep: plot {}: {e:#}", svg.display());
                failed = true;
            }
        }
    }
    for f in &report.failures {
        eprintln!("blocksweep: {}: {}", f.api, f.message);
    }
    Ok(if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
