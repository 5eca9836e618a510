//! Several physical devices measured in one run (`--device all`, or a list): one [`Report`]
//! per GPU, kept whole (each with its own shared plan and portable answer), written together.

use serde::{Deserialize, Serialize};

use super::{Format, Report, SCHEMA_VERSION};

/// The reports of one multi-device run, one per physical device, in device order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Fleet {
    pub schema_version: u32,
    pub tool: String,
    pub date: String,
    pub runs: Vec<Report>,
}

impl Fleet {
    pub fn new(runs: Vec<Report>) -> Fleet {
        let (tool, date) = runs
            .first()
            .map(|r| (r.tool.clone(), r.date.clone()))
            .unwrap_or_default();
        Fleet {
            schema_version: SCHEMA_VERSION,
            tool,
            date,
            runs,
        }
    }
}

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

/// Renders one report, or a fleet of them: JSON as one document, CSV with one header, tables
/// and markdown one section per device under a heading.
pub fn render_runs(format: Format, runs: &[Report]) -> String {
    if let [one] = runs {
        return format.exporter().render(one);
    }
    match format {
        Format::Json => {
            let mut s = serde_json::to_string_pretty(&Fleet::new(runs.to_vec()))
                .unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"));
            s.push('\n');
            s
        }
        Format::Csv => {
            let mut out = String::new();
            for (i, r) in runs.iter().enumerate() {
                let text = format.exporter().render(r);
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
        Format::Table | Format::Markdown => {
            let mut out = String::new();
            for (i, r) in runs.iter().enumerate() {
                let h = heading(i, r);
                match format {
                    Format::Markdown => out.push_str(&format!("# {h}\n\n")),
                    _ => out.push_str(&format!("{h}\n{}\n\n", "=".repeat(h.chars().count()))),
                }
                out.push_str(&format.exporter().render(r));
                out.push('\n');
            }
            out
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::parse_reports;

    #[test]
    fn a_fleet_round_trips_and_a_single_report_reads_as_one_run() {
        let mut a = Report::new("blocksweep test", "2026-11-30T00:00:00Z");
        a.failures.push(crate::report::Failure {
            api: crate::testing::TEST_API_A,
            message: "first GPU".into(),
        });
        let mut b = a.clone();
        b.failures[0].message = "second GPU".into();
        let json = render_runs(Format::Json, &[a.clone(), b.clone()]);
        assert!(json.contains("\"runs\""), "{json}");
        let back = parse_reports(&json).unwrap();
        assert_eq!(back, vec![a.clone(), b]);
        let one = render_runs(Format::Json, std::slice::from_ref(&a));
        assert!(!one.contains("\"runs\""));
        assert_eq!(parse_reports(&one).unwrap(), vec![a]);
    }
}
