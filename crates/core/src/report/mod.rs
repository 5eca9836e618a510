//! Reports: one data model, several exporters behind one small trait (the hyperfine shape).
//!
//! A [`Report`] holds every API's [`SweepResult`] from one run. Exporters turn it into text:
//! the seed's table (plain or markdown), CSV, or JSON (the full record, schema in
//! docs/json-schema.md).

mod answer;
pub mod compare;
mod csv;
mod fleet;
mod json;
pub mod limits;
mod merged;
pub(crate) mod text;

use serde::{Deserialize, Serialize};
use std::path::Path;

use crate::backend::Api;
use crate::sweep::SweepResult;

pub use self::answer::{PortableAnswer, Shortfall, GOOD_FRACTION};
pub use self::csv::CsvExporter;
pub use self::fleet::{heading, render_runs, Fleet};
pub use self::json::{parse_report, parse_reports, JsonExporter};
pub use self::text::{MarkdownExporter, TableExporter};

/// Bumped whenever a field of the JSON changes meaning or goes away.
pub const SCHEMA_VERSION: u32 = 2;

/// An API that could not run, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Failure {
    pub api: Api,
    pub message: String,
}

/// Everything one `blocksweep sweep` measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Report {
    pub schema_version: u32,
    /// "blocksweep 0.1.0".
    pub tool: String,
    /// When the run started, RFC 3339 UTC.
    pub date: String,
    /// How the APIs' devices were matched to one physical device, where more than one ran.
    pub device_match: Option<String>,
    /// True when every API ran the same planned (block, grid) pairs on one physical device.
    #[serde(default)]
    pub shared_plan: bool,
    pub results: Vec<SweepResult>,
    pub failures: Vec<Failure>,
    /// Which block sizes are good on every API (see [`PortableAnswer`]); refreshed by
    /// [`Report::refresh_answer`].
    #[serde(default)]
    pub portable: Option<PortableAnswer>,
}

impl Report {
    pub fn new(tool: impl Into<String>, date: impl Into<String>) -> Self {
        Report {
            schema_version: SCHEMA_VERSION,
            tool: tool.into(),
            date: date.into(),
            device_match: None,
            shared_plan: false,
            results: Vec::new(),
            failures: Vec::new(),
            portable: None,
        }
    }

    /// Recomputes the portable answer from the results.
    pub fn refresh_answer(&mut self) {
        self.portable = PortableAnswer::of(self, GOOD_FRACTION);
    }

    /// The best theoretical DRAM bandwidth any API reported for the device (GB/s).
    pub fn theoretical_gbps(&self) -> Option<f64> {
        self.results
            .iter()
            .filter_map(|r| r.limits.theoretical_gbps.as_ref().map(|n| n.value))
            .fold(None, |a: Option<f64>, b| Some(a.map_or(b, |a| a.max(b))))
    }
}

/// Turns a report into bytes in one format.
pub trait Exporter {
    fn render(&self, report: &Report) -> String;
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Table,
    Markdown,
    Csv,
    Json,
}

impl Format {
    pub const NAMES: [&'static str; 4] = ["table", "markdown", "csv", "json"];

    pub fn parse(s: &str) -> Option<Format> {
        match s.to_ascii_lowercase().as_str() {
            "table" | "text" => Some(Format::Table),
            "markdown" | "md" => Some(Format::Markdown),
            "csv" => Some(Format::Csv),
            "json" => Some(Format::Json),
            _ => None,
        }
    }

    /// The format an output file's extension implies (`.md`, `.csv`, `.json`, else table).
    pub fn from_path(path: &Path) -> Format {
        match path
            .extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase)
            .as_deref()
        {
            Some("md" | "markdown") => Format::Markdown,
            Some("csv") => Format::Csv,
            Some("json") => Format::Json,
            _ => Format::Table,
        }
    }

    pub fn exporter(self) -> Box<dyn Exporter> {
        match self {
            Format::Table => Box::new(TableExporter),
            Format::Markdown => Box::new(MarkdownExporter),
            Format::Csv => Box::new(CsvExporter),
            Format::Json => Box::new(JsonExporter),
        }
    }
}
