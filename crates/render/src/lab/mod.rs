//! The lab's reports, in every format the commands offer ([`Render`]), one file each: the shape
//! sweep (`blocksweep shapes`, `shapes.rs`), the grid sweep (`blocksweep tail`, `waves.rs`), and
//! the resource rows that `validate` adds under its table (`resources.rs`). Here: what the two
//! sweeps' reports share.

mod resources;
mod shapes;
mod waves;

pub(crate) use resources::render_resources;

use serde::Serialize;

use blocksweep_core::lab::row::Measurement;
use blocksweep_core::measure::{Protocol, Reps};
use blocksweep_core::report::{Envelope, Failure, Partial};
use blocksweep_core::words::fraction;
use blocksweep_core::{Api, DeviceIdentity};

use crate::layout::{Layout, Notes};
use crate::text::Doc;
use crate::{to_csv, Render};

/// "12.34" GB/s, with the row's share of the API's best: "3210.5 (0.97)".
fn gbps_cell(gbps: Option<f64>, of_best: Option<f64>) -> String {
    match (gbps, of_best) {
        (Some(g), Some(o)) => format!("{g:.1} ({})", fraction(o)),
        (Some(g), None) => format!("{g:.1}"),
        _ => "—".into(),
    }
}

/// One API's cell for a measured row: its GB/s (of best), WRONG, or why it was skipped as a
/// footnote.
fn measured_cell(api: Api, m: &Measurement, notes: &mut Notes) -> String {
    match m.skipped {
        Some("WRONG") => "WRONG".into(),
        Some(why) => format!("skipped {}", notes.mark(format!("{api}: {why}"))),
        None => gbps_cell(m.gbps, m.of_best),
    }
}

/// A measured row's CSV columns `mean_ms,gbps,of_best,verified,skipped`.
fn measured_csv(m: &Measurement) -> [String; 5] {
    [
        opt(m.timing.map(|t| format!("{:.6}", t.stats.mean))),
        opt(m.gbps.map(|g| format!("{g:.2}"))),
        opt(m.of_best.map(|o| format!("{o:.4}"))),
        m.verified.to_string(),
        opt(m.skipped.map(String::from)),
    ]
}

fn protocol_words(p: &Protocol) -> String {
    let reps = match p.reps {
        Reps::Fixed(n) => format!("{n} timed dispatches"),
        Reps::Adaptive {
            min, min_time_ms, ..
        } => format!(
            "at least {min} timed dispatches, aiming at {min_time_ms} ms of device time from the \
             warm-ups' pace"
        ),
    };
    format!(
        "{} warm-ups, then {reps} per row ({} timing), on each API's device clock; the output \
         poisoned with NaN before each row and every pixel verified after it",
        p.warmups, p.discipline
    )
}

fn device_lines<'a>(items: impl Iterator<Item = (Api, &'a str, String)>) -> Vec<String> {
    items
        .map(|(api, name, extra)| format!("{api}: {name}{extra}"))
        .collect()
}

/// What the two sweeps' reports have in common: who made them and when, and the APIs that
/// could not start.
struct Made<'a> {
    command: &'static str,
    tool: &'a str,
    date: &'a str,
    failures: &'a [Failure],
    partial: &'a Partial,
}

/// A lab sweep's report, as [`Render`] draws it: in text, the markdown title, the report's own
/// body, then the APIs that could not start; in CSV, its lines under its columns; in JSON, its
/// fields after the envelope.
trait LabReport: Serialize {
    /// The CSV's columns.
    const COLUMNS: &'static [&'static str];
    fn made(&self) -> Made<'_>;
    fn devices(&self) -> Vec<&DeviceIdentity>;
    fn body(&self, doc: &mut Doc);
    fn csv_lines(&self) -> Vec<Vec<String>>;
}

/// [`LabReport`]'s `made` and `devices` for a report of `command` whose fields `tool`, `date`,
/// `results` (each naming its device) and `failures` say them, as both sweeps' reports do.
macro_rules! made_of_fields {
    ($command:literal) => {
        fn made(&self) -> $crate::lab::Made<'_> {
            $crate::lab::Made {
                command: $command,
                tool: &self.tool,
                date: &self.date,
                failures: &self.failures,
                partial: &self.partial,
            }
        }

        fn devices(&self) -> Vec<&blocksweep_core::DeviceIdentity> {
            self.results.iter().map(|r| &r.device).collect()
        }
    };
}
use made_of_fields;

impl<T: LabReport> Render for T {
    fn text(&self, layout: Layout, md: bool) -> String {
        let made = self.made();
        let mut doc = Doc::new(layout, md);
        if md {
            doc.heading(1, &format!("blocksweep {}", made.command));
            doc.para(format!("{} · {}", made.tool, made.date));
        }
        if let Some(line) = made.partial.line("rows") {
            doc.para(crate::text::emphasised(line, md));
        }
        self.body(&mut doc);
        for f in made.failures {
            doc.para(format!("{}: {}", f.api, f.message));
        }
        doc.finish()
    }
    fn csv(&self) -> String {
        // Every lab CSV ends with `interrupted`: true on every line of a file saved before
        // its run ended.
        let interrupted = self.made().partial.interrupted.to_string();
        let mut header: Vec<String> = T::COLUMNS.iter().map(|c| c.to_string()).collect();
        header.push("interrupted".into());
        let mut rec = vec![header];
        rec.extend(self.csv_lines().into_iter().map(|mut l| {
            l.push(interrupted.clone());
            l
        }));
        to_csv(&rec)
    }
    fn json(&self) -> String {
        let made = self.made();
        Envelope::at(made.tool, made.date, made.command, self.devices()).document(self)
    }
}

/// "CUDA: stopped: ...", for an API whose sweep an error ended.
fn stopped_line(api: Api, error: &Option<String>) -> Option<String> {
    error.as_ref().map(|e| format!("{api}: stopped: {e}"))
}

fn opt(v: Option<String>) -> String {
    v.unwrap_or_default()
}

#[cfg(test)]
mod testing {
    use blocksweep_core::frame::Frame;
    use blocksweep_core::measure::{Protocol, Reps};
    use blocksweep_core::testing::{HostBackend, TEST_API_A};

    /// Two timed dispatches and no warm-up: enough for a test to see rows run and verify.
    pub fn quick() -> Protocol {
        Protocol {
            warmups: 0,
            reps: Reps::Fixed(2),
            ..Protocol::default()
        }
    }

    /// A host backend, and a `width` x `height` frame from `seed` with its reference.
    pub fn host_run(width: u32, height: u32, seed: u64) -> (HostBackend, Frame, Vec<f32>) {
        let frame = Frame::generate(width, height, seed);
        let reference = frame.reference();
        (HostBackend::new(TEST_API_A), frame, reference)
    }
}
