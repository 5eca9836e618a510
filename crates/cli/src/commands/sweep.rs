//! `blocksweep sweep`: plan once, run every selected API, verify every row, report.
//!
//! Results are written after each API finishes (atomically, when --output is given), so a
//! failure in one API never loses another's rows. Exit code: 0 all good; 1 a sweep failed
//! (mismatch or driver error); 2 bad input, including a frame too large for the device and
//! an explicit block list of which no row can run on any API.

use std::path::Path;
use std::process::ExitCode;
use std::time::SystemTime;

use anyhow::Context;
use blocksweep_core::report::{write_atomic, Failure, Format, Report};
use blocksweep_core::sweep::{self, Plan, SweepConfig, SweepError};
use blocksweep_core::{blocks, Backend, ErrorKind, Frame};

use crate::args::{FormatChoice, SweepArgs};
use crate::progress::Bar;
use crate::registry::{self, Registry};
use crate::usage;

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

pub fn run(args: &SweepArgs) -> anyhow::Result<ExitCode> {
    let reg = Registry::probe();
    let targets = super::resolve(&reg, &args.device)?;
    let explicit_blocks = args.blocks.is_some();
    let config = SweepConfig {
        blocks: args
            .blocks
            .clone()
            .map(|b| b.0)
            .unwrap_or_else(blocks::default_blocks),
        grid: args.grid,
        warmups: args.warmups,
        reps: args.reps,
        // A launch above the kernel's stated limit is well defined in CUDA and OpenCL (the API
        // returns an error) and Vulkan has no such limit, so by default the API decides.
        past_kernel_limit: !args.strict_kernel_limit,
    };
    let (w, h) = args.size;
    let date = humantime::format_rfc3339_seconds(SystemTime::now()).to_string();
    let mut report = Report::new(format!("blocksweep {}", env!("CARGO_PKG_VERSION")), date);
    if targets.devices.len() > 1 {
        report.device_match = Some(targets.note.clone());
    }
    let mut bar = Bar::new();

    // Open every API first: the shared plan may come from any of them.
    let mut backends: Vec<Box<dyn Backend>> = Vec::new();
    for d in &targets.devices {
        bar.status(d.api, "opening the device and compiling the kernel");
        match registry::open(d, &args.device) {
            Ok(b) => backends.push(b),
            Err(e) => report.failures.push(Failure {
                api: d.api,
                message: e.message.clone(),
            }),
        }
    }
    if backends.is_empty() {
        bar.finish();
        let why: Vec<String> = report
            .failures
            .iter()
            .map(|f| format!("{}: {}", f.api, f.message))
            .collect();
        anyhow::bail!("no API could open the device ({})", why.join("; "));
    }

    if let Err(e) = refuse_what_cannot_fit(&backends, w, h) {
        bar.finish();
        return Err(e);
    }
    bar.status(
        backends[0].api(),
        "generating the frame and its CPU reference",
    );
    let frame = Frame::generate(w, h, args.seed);
    let reference = frame.reference();

    let shared = shared_plan(&reg, &targets.devices, &mut backends, &frame, &config)?;
    report.shared_plan = shared.is_some();
    let copy_bytes = (!args.no_copy).then(|| frame.pixels() * 8);

    let mut too_big: Option<String> = None;
    let mut failed = false;
    for b in backends.iter_mut() {
        let (result, err) = sweep::run(
            b.as_mut(),
            &frame,
            &reference,
            &config,
            shared.as_ref(),
            copy_bytes,
            &mut bar,
        );
        if let Some(e) = err {
            match &e {
                SweepError::Backend(be)
                    if be.kind == ErrorKind::OutOfMemory && result.rows.is_empty() =>
                {
                    too_big = Some(format!("frame {w}x{h} is too large for the device: {be}"));
                }
                _ => failed = true,
            }
            report.failures.push(Failure {
                api: result.api,
                message: e.to_string(),
            });
        }
        let said = b.diagnostics();
        if !said.is_empty() {
            // The validation layers spoke: the run is not clean, whatever the pixels say.
            for m in &said {
                eprintln!("blocksweep: {}: validation: {m}", b.api());
            }
            report.failures.push(Failure {
                api: b.api(),
                message: format!("{} validation message(s)", said.len()),
            });
        }
        report.results.push(result);
        write_outputs(args, &report)?;
    }
    bar.finish();
    drop(backends);

    if args.output.is_empty() {
        print!("{}", stdout_format(args).exporter().render(&report));
    } else {
        write_outputs(args, &report)?;
        for path in &args.output {
            eprintln!("blocksweep: wrote {}", path.display());
        }
    }
    if let Some(svg) = &args.plot {
        match crate::plot::write_svg(&report, svg) {
            Ok(()) => eprintln!("blocksweep: plotted {}", svg.display()),
            Err(e) => {
                eprintln!("blocksweep: plot {}: {e:#}", svg.display());
                failed = true;
            }
        }
    }
    if let Some(msg) = too_big {
        return Err(usage(msg));
    }
    let ran: usize = report.results.iter().map(|r| r.rows_run()).sum();
    if explicit_blocks && ran == 0 && !failed {
        let reasons: Vec<String> = report
            .results
            .iter()
            .flat_map(|r| {
                r.rows.iter().filter_map(move |x| {
                    x.skipped
                        .as_ref()
                        .map(|s| format!("{} block {}: {s}", r.api, x.block))
                })
            })
            .collect();
        return Err(usage(format!(
            "no block size in --blocks can run: {}",
            reasons.join("; ")
        )));
    }
    for f in &report.failures {
        eprintln!("blocksweep: {}: {}", f.api, f.message);
    }
    Ok(if failed || !report.failures.is_empty() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// MemAvailable from /proc/meminfo, in bytes, where there is one.
fn host_memory_available() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// Refuses a frame that cannot fit before it is generated: each API's allocation limits, and
/// the host side, which alone needs six planes (three inputs, the reference, the read-back,
/// one staging copy).
fn refuse_what_cannot_fit(backends: &[Box<dyn Backend>], w: u32, h: u32) -> anyhow::Result<()> {
    let pixels = Frame::pixel_count(w, h);
    for b in backends {
        if let Err(why) = b.limits().frame_fits(pixels) {
            return Err(usage(format!(
                "frame {w}x{h} is too large for {} on {}: {why}",
                b.api(),
                b.identity().name
            )));
        }
    }
    if let Some(avail) = host_memory_available() {
        let need = pixels.saturating_mul(4 * 6);
        if need > avail {
            return Err(usage(format!(
                "frame {w}x{h} needs about {} MiB of host memory; {} MiB is available",
                need >> 20,
                avail >> 20
            )));
        }
    }
    Ok(())
}

/// One physical device: every API runs the same (block, grid) pairs, planned by the best
/// residency source (CUDA's occupancy API where CUDA is there). Different devices, or one
/// API: `None`, and each API plans for its own device.
fn shared_plan(
    reg: &Registry,
    devices: &[blocksweep_core::DeviceIdentity],
    backends: &mut [Box<dyn Backend>],
    frame: &Frame,
    config: &SweepConfig,
) -> anyhow::Result<Option<Plan>> {
    let same_device = reg
        .physical
        .iter()
        .any(|p| devices.iter().all(|d| p.members.contains(d)));
    if !same_device || backends.len() < 2 {
        return Ok(None);
    }
    let src = backends
        .iter()
        .position(|b| b.api() == blocksweep_core::Api::Cuda)
        .unwrap_or(0);
    Ok(Some(sweep::plan(
        backends[src].as_mut(),
        frame.pixels(),
        config,
    )?))
}
