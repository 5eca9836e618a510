//! Every command's result as data (hyperfine's shape): what was measured, the answers derived
//! from it, and how a file of it is read back. Rendering each result in every format (table,
//! markdown, CSV, JSON) is blocksweep-render's job.
//!
//! | result | command | type |
//! |---|---|---|
//! | a sweep of one device | `sweep` | [`Report`] (JSON schema in docs/json-schema.md) |
//! | a tune (the same document: measurements and the answer) | `sweep` that tunes | [`crate::tune::TuneReport`] |
//! | sweeps of several devices | `sweep --device all` | a [`Fleet`] |
//! | devices of every API | `devices` | [`DevicesReport`] |
//! | launch limits | `limits` | [`limits::LimitsReport`] |
//! | portable assumptions | `validate` | [`crate::validate::ValidateReport`] |
//! | runs side by side | `compare` | [`compare::Comparison`] |

pub mod across;
pub mod compare;
mod devices;
pub mod envelope;
mod failure;
mod fleet;
mod json;
pub mod limits;
mod partial;
pub mod regress;

use serde::{Deserialize, Serialize};

use crate::answer::{measurements_of, Answer, Asked, Measurement, Stop, StopKind};
use crate::backend::Api;
use crate::sweep::SweepResult;

pub use self::devices::{DevicesReport, Unavailable};
pub use self::envelope::{Envelope, EnvelopeDevice};
pub use self::failure::{Failure, FailureKind};
pub use self::fleet::Fleet;
pub use self::json::{parse_report, parse_reports};
pub use self::partial::{Partial, StoppedAt};
pub use crate::answer::GOOD_FRACTION;

/// Bumped whenever a field of the JSON changes meaning or goes away. 3: rows carry a
/// `verdict`, the portable answer names why each API falls short, timing statistics name their
/// samples. 4: validate's outcomes and compare's cells are objects with a `kind`; a sweep
/// gained `answer` (docs/json-schema.md). 5: a sweep and a tune write one document: each
/// configuration measured on each API in `measurements`, and one `answer` of configurations
/// (a sweep's `portable` is the answer's `portable` and `exceptions`).
pub const SCHEMA_VERSION: u32 = 5;

/// Older schemas this version still reads: what changed is derived, and recomputed on reading.
pub const READS_SCHEMAS: [u32; 4] = [2, 3, 4, 5];

/// Everything one `blocksweep sweep` measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Report {
    pub schema_version: u32,
    /// "blocksweep 0.1.0".
    pub tool: String,
    /// When the run started, RFC 3339 UTC.
    pub date: String,
    /// Whether the document was saved before the run ended, and where it stood.
    #[serde(flatten)]
    pub partial: Partial,
    /// How the APIs' devices were matched to one physical device, where more than one ran.
    pub device_match: Option<String>,
    /// True when every API ran the same planned (block, grid) pairs on one physical device.
    #[serde(default)]
    pub shared_plan: bool,
    /// What the screen leads with ([`Answer`]): derived from `measurements`, refreshed by
    /// [`Report::refresh_answer`], and recomputed when a file is read (an older file's answer,
    /// in an older shape, is ignored).
    #[serde(default, deserialize_with = "derived")]
    pub answer: Option<Answer>,
    /// Each block on each API as a configuration (no parameter set, the result's grid
    /// policy): the rows of `results`, in the shape a tune's are; derived from them.
    #[serde(default)]
    pub measurements: Vec<Measurement>,
    pub results: Vec<SweepResult>,
    pub failures: Vec<Failure>,
}

impl Report {
    pub fn new(tool: impl Into<String>, date: impl Into<String>) -> Self {
        Report {
            schema_version: SCHEMA_VERSION,
            tool: tool.into(),
            date: date.into(),
            partial: Partial::default(),
            device_match: None,
            shared_plan: false,
            answer: None,
            measurements: Vec::new(),
            results: Vec::new(),
            failures: Vec::new(),
        }
    }

    /// Recomputes what is derived from the rows (each row's of-best, tie and verdict, the
    /// measurements and the answer), so a report read from an older file answers by today's
    /// rule.
    pub fn refresh_answer(&mut self) {
        for r in &mut self.results {
            // Schema 2 had no `sample_mean`: the mean of the samples the file keeps.
            let rows = r.rows.iter_mut().filter_map(|x| x.timing.as_mut());
            let copy = r.copy.as_mut().map(|c| &mut c.timing);
            for t in rows.chain(copy) {
                if t.stats.sample_mean == 0.0 {
                    if let Some(s) = crate::measure::TimeStats::of(&t.samples_ms, None) {
                        t.stats.sample_mean = s.sample_mean;
                    }
                }
            }
            r.fill_relative();
        }
        self.measurements = self
            .results
            .iter()
            .flat_map(|r| measurements_of(r, &Default::default(), r.policy))
            .collect();
        self.answer = Some(Answer::of(&self.measurements, &self.asked()));
    }

    /// What the answer is over: every API asked (those with results, then those that failed),
    /// their devices, and those that failed or stopped part-way.
    pub(crate) fn asked(&self) -> Asked<'static> {
        let mut apis: Vec<Api> = self.results.iter().map(|r| r.api).collect();
        let mut stops = Vec::new();
        for f in &self.failures {
            if !apis.contains(&f.api) {
                apis.push(f.api);
                stops.push(Stop {
                    api: f.api,
                    gpu: None,
                    kind: StopKind::Failed,
                    message: f.message.clone(),
                });
            }
        }
        stops.extend(self.results.iter().filter_map(|r| {
            let e = r.error.as_ref()?;
            // A backend's error names its API already.
            let e = e.strip_prefix(&format!("{}: ", r.api)).unwrap_or(e);
            Some(Stop {
                api: r.api,
                gpu: None,
                kind: StopKind::Stopped,
                message: e.to_string(),
            })
        }));
        self.interrupted_stops(&mut apis, &mut stops);
        let devices = self.results.iter();
        Asked {
            apis,
            devices: devices.map(|r| (r.api, r.device.name.clone())).collect(),
            stops,
            ..Asked::default()
        }
    }

    /// An interrupted run ranks no API part-way through its rows, nor one not reached: each
    /// is stopped, and the answer says so.
    fn interrupted_stops(&self, apis: &mut Vec<Api>, stops: &mut Vec<Stop>) {
        let Some(at) = self.partial.stopped_at.as_ref() else {
            return;
        };
        let stopped = |s: &Vec<Stop>, a: Api| s.iter().any(|s| s.api == a);
        if let Some(api) = at.api.filter(|&a| at.part_way() && !stopped(stops, a)) {
            stops.push(Stop {
                gpu: None,
                api,
                kind: StopKind::Interrupted,
                message: format!("after {} of its {} rows", at.kept, at.planned.unwrap_or(0)),
            });
        }
        for &api in &at.not_reached {
            if !apis.contains(&api) {
                apis.push(api);
            }
            if !stopped(stops, api) {
                stops.push(Stop {
                    gpu: None,
                    api,
                    kind: StopKind::Interrupted,
                    message: "before its turn".into(),
                });
            }
        }
    }

    /// The best theoretical DRAM bandwidth any API reported for the device (GB/s).
    pub fn theoretical_gbps(&self) -> Option<f64> {
        self.results
            .iter()
            .filter_map(|r| r.limits.theoretical_gbps.as_ref().map(|n| n.value))
            .fold(None, |a: Option<f64>, b| Some(a.map_or(b, |a| a.max(b))))
    }
}

/// A derived field read leniently: a value of an older shape reads as `None`, to be recomputed.
fn derived<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: serde::de::DeserializeOwned,
{
    let v = serde_json::Value::deserialize(d)?;
    Ok(serde_json::from_value(v).ok())
}

/// As [`derived`], for a field that is never absent: an older shape reads as the default.
pub(crate) fn lenient<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: serde::Deserializer<'de>,
    T: serde::de::DeserializeOwned + Default,
{
    Ok(derived(d)?.unwrap_or_default())
}

/// Pretty JSON with a final newline. Serialising plain data structs cannot fail (no maps with
/// non-string keys); should it, the error is the document.
pub fn to_json<T: Serialize + ?Sized>(value: &T) -> String {
    let mut s =
        serde_json::to_string_pretty(value).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"));
    s.push('\n');
    s
}
