//! A sweep report for people. By default: the answer (each API's fastest size, the sizes
//! within 95 % everywhere), one line per API saying on what and how it was measured, then the
//! evidence: the API's own table, or with several APIs the side-by-side table. Verbose (and
//! every file) adds each API's full header, its own table under several APIs, and the summary
//! lines under each table.

mod answer;
mod cells;
mod clocks;
mod doc;
mod header;
mod merged;
mod table;

pub(super) use cells::{gbps, ms, of_best};

pub(crate) use doc::Doc;

use super::layout::Layout;
use crate::Render;
use blocksweep_core::report::{Envelope, Report};

impl Render for Report {
    fn text(&self, layout: Layout, md: bool) -> String {
        render(self, layout, md)
    }
    fn csv(&self) -> String {
        super::csv::render(self)
    }
    /// The envelope (the run's own tool and date), then the report's fields.
    fn json(&self) -> String {
        let devices = self.results.iter().map(|r| &r.device);
        Envelope::at(&self.tool, &self.date, "sweep", devices).document(self)
    }
}

fn render(report: &Report, layout: Layout, md: bool) -> String {
    let mut doc = Doc::new(layout, md);
    if md {
        doc.heading(1, "blocksweep results");
        doc.para(format!("{} · {}", report.tool, report.date));
    }
    if let Some(line) = report.partial.line("rows") {
        doc.para(emphasised(line, md));
    }
    answer::answer(report, &mut doc);
    if let Some(p) = answer::cpu_paragraph(report, layout.verbose) {
        doc.para(p);
    }
    let ceiling = report.theoretical_gbps();
    let several = report.results.len() > 1;
    if layout.verbose {
        for r in &report.results {
            table::api_section(r, ceiling, &report.failures, &mut doc);
        }
    } else if let Some(first) = report.results.first() {
        let work = header::work_line_of(&report.results).unwrap_or_default();
        let mut lines = vec![work + checked(report) + caches(first)];
        for r in &report.results {
            lines.extend(header::brief(r, &report.failures));
        }
        doc.lines(&lines);
        if !several {
            table::api_table(first, ceiling, &mut doc);
        }
    }
    if several {
        merged::render(report, &mut doc);
    }
    failures(report, &mut doc);
    if !layout.verbose && !md {
        doc.para(more(several));
    }
    doc.finish()
}

/// A line no reader may miss: bold in markdown.
pub(crate) fn emphasised(line: String, md: bool) -> String {
    match md {
        true => format!("**{line}**"),
        false => line,
    }
}

/// Each API that failed or stopped, in its own words: those the answer has not said already
/// (it leads with every API that stopped, where several APIs ran), so each is said once.
fn failures(report: &Report, doc: &mut Doc) {
    let said = |f: &blocksweep_core::report::Failure| {
        report.answer.as_ref().is_some_and(|a| {
            a.apis.len() > 1
                && a.stopped
                    .iter()
                    .any(|s| s.api == f.api && f.message.contains(s.message.as_str()))
        })
    };
    let failed: Vec<String> = report
        .failures
        .iter()
        .filter(|f| !said(f))
        .map(|f| format!("{}: FAILED: {}", f.api, f.message))
        .collect();
    match doc.md {
        true if !failed.is_empty() => doc.list(&failed),
        _ => doc.lines(&failed),
    }
}

/// What the short report's tables do not show: every row was checked.
fn checked(report: &Report) -> &'static str {
    let rows = || {
        report
            .results
            .iter()
            .flat_map(|r| &r.rows)
            .filter(|x| x.ran())
    };
    let frame = report.results.iter().all(|r| r.program.is_none());
    match rows().all(|x| x.verified) {
        true if frame => "; every row checked pixel by pixel against the CPU",
        _ => "",
    }
}

/// Hot or cold, for the short report (each API's line gives a cold flush's size).
fn caches(first: &blocksweep_core::sweep::SweepResult) -> &'static str {
    match first.protocol.caches.is_cold() {
        true => "; caches cold: the last-level cache flushed before each timed dispatch",
        false => "; caches hot (--cold flushes the last-level cache before each dispatch)",
    }
}

/// The last line of the short report: where the rest is.
fn more(several: bool) -> &'static str {
    match several {
        true => "Each API's own table and how it was timed: --verbose (every -o file has them).",
        false => "How it was timed and built: --verbose (every -o file has it).",
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn lists_read_as_words() {
        let s = crate::and_list::<&str>;
        assert_eq!(s(&[]), "");
        assert_eq!(s(&["CUDA"]), "CUDA");
        assert_eq!(s(&["CUDA", "OpenCL"]), "CUDA and OpenCL");
        assert_eq!(s(&["CUDA", "Vulkan", "OpenCL"]), "CUDA, Vulkan and OpenCL");
    }
}
