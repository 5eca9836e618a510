//! Several physical devices measured in one run, drawn as one result: a single report as
//! itself, several as a [`Fleet`] in JSON and one section per device in text.

use blocksweep_core::report::{Envelope, Fleet, Report};

use crate::{Format, Layout, Render};

/// "GPU 1: NVIDIA H200 (UUID 8b713902-...)": the heading of one run in a fleet.
pub fn heading(index: usize, report: &Report) -> String {
    let device = report.results.first().map(|r| &r.device);
    let name = device.map(|d| d.name.as_str()).unwrap_or("no device");
    let uuid = device
        .and_then(|d| d.uuid_string())
        .map(|u| format!(" (UUID {u})"))
        .unwrap_or_default();
    format!("Device {index}: {name}{uuid}")
}

/// The reports of one run, one per physical device, as one result to render: a single
/// report renders as itself; several as a [`Fleet`] in JSON, one CSV with one header, and one
/// section per device under a heading in text and markdown.
pub struct Runs<'a>(pub &'a [Report]);

impl Render for Runs<'_> {
    fn text(&self, layout: Layout, md: bool) -> String {
        self.sections(layout, md)
    }
    fn csv(&self) -> String {
        let mut out = String::new();
        for (i, r) in self.0.iter().enumerate() {
            let text = r.csv();
            let mut lines = text.lines();
            if i > 0 {
                lines.next(); // the header, once
            }
            for l in lines {
                out.push_str(l);
                out.push('\n');
            }
        }
        out
    }
    fn json(&self) -> String {
        match self.0 {
            [one] => one.json(),
            runs => {
                let fleet = Fleet::new(runs.to_vec());
                let devices = runs.iter().flat_map(|r| &r.results).map(|r| &r.device);
                Envelope::at(&fleet.tool, &fleet.date, "sweep", devices).document(&fleet)
            }
        }
    }
}

impl Runs<'_> {
    fn sections(&self, layout: Layout, md: bool) -> String {
        if let [one] = self.0 {
            return one.render(format_of(md), layout);
        }
        let mut out = String::new();
        for (i, r) in self.0.iter().enumerate() {
            let h = heading(i, r);
            match md {
                true => out.push_str(&format!("# {h}\n\n")),
                false => {
                    let h = crate::layout::wrap(&h, layout.width);
                    let n = crate::layout::max_line_width(&h);
                    out.push_str(&format!("{h}\n{}\n\n", "=".repeat(n)));
                }
            }
            out.push_str(&r.render(format_of(md), layout));
            out.push('\n');
        }
        out
    }
}

fn format_of(md: bool) -> Format {
    match md {
        true => Format::Markdown,
        false => Format::Table,
    }
}

/// Renders one report, or a fleet of them ([`Runs`]).
pub fn render_runs(format: Format, runs: &[Report], layout: Layout) -> String {
    Runs(runs).render(format, layout)
}

#[cfg(test)]
mod tests {
    use super::*;
    use blocksweep_core::report::{parse_reports, Failure, SCHEMA_VERSION};
    use serde_json::Value;

    #[test]
    fn a_fleet_round_trips_and_a_single_report_reads_as_one_run() {
        let mut a = Report::new("blocksweep test", "2026-11-30T00:00:00Z");
        a.failures.push(Failure::new(
            blocksweep_core::testing::TEST_API_A,
            blocksweep_core::report::FailureKind::Driver,
            "first GPU",
        ));
        let mut b = a.clone();
        b.failures[0].message = "second GPU".into();
        // What is derived is recomputed on reading.
        a.refresh_answer();
        b.refresh_answer();
        let json = render_runs(Format::Json, &[a.clone(), b.clone()], Layout::default());
        assert!(json.contains("\"runs\""), "{json}");
        let back = parse_reports(&json).unwrap();
        assert_eq!(back, vec![a.clone(), b]);
        let one = render_runs(Format::Json, std::slice::from_ref(&a), Layout::default());
        assert!(!one.contains("\"runs\""));
        assert_eq!(parse_reports(&one).unwrap(), vec![a]);
    }

    fn committed(path: &str) -> String {
        let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/results/");
        std::fs::read_to_string(format!("{root}{path}")).expect("a committed run")
    }

    #[test]
    fn committed_runs_of_schema_2_and_3_read_and_write_enveloped() {
        for path in [
            "h200-2026-11-30-d/core/h200-2026-11-30.json",
            "h200-2026-12-01/call3/core/h200-2026-12-01.json",
            "h200x2-2026-11-30/multi/x2-2026-11-30.json",
        ] {
            let runs = parse_reports(&committed(path)).unwrap_or_else(|e| panic!("{path}: {e}"));
            assert!(runs.iter().all(|r| r.schema_version == SCHEMA_VERSION));
            let text = render_runs(Format::Json, &runs, Layout::default());
            let v: Value = serde_json::from_str(&text).unwrap();
            let e = Envelope::read(&v).expect("an envelope");
            assert_eq!(
                (e.command.as_str(), e.schema_version),
                ("sweep", SCHEMA_VERSION)
            );
            assert_eq!(e.date, runs[0].date, "{path}: the date it was measured");
            assert!(e
                .devices
                .iter()
                .all(|d| d.uuid.as_ref().is_some_and(|u| u.len() == 36)));
            assert_eq!(parse_reports(&text).unwrap(), runs, "{path} round-trips");
        }
    }
}
