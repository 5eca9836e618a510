//! The tune's JSON: the sweep's document (docs/json-schema.md), with `command: "tune"` in the
//! envelope. One share of the space writes its report at the top level, as a sweep of one
//! device does; several (`--device all`, `--shard` merged by hand) write them under `runs`, as
//! a fleet. Each report holds `measurements` and `answer` as a sweep's does, and its search
//! beside them. Schema 4 held the reports under `tunes` and called the measurements
//! `entries`; such files still read, their answers made again.

use serde_json::Value;

use super::{Held, TuneReport};
use crate::backend::DeviceIdentity;
use crate::report::envelope::{Envelope, EnvelopeDevice};

/// The command the envelope names.
pub const COMMAND: &str = "tune";

/// The JSON document of `reports`, measured on `devices`.
pub fn document<'a>(
    reports: &[TuneReport],
    devices: impl IntoIterator<Item = &'a DeviceIdentity>,
) -> String {
    with_envelope(Envelope::now(COMMAND, devices), reports)
}

/// The JSON document of `reports` read back from files (`compare` merging shares), with the
/// devices those files listed.
pub fn document_listing(reports: &[TuneReport], devices: Vec<EnvelopeDevice>) -> String {
    let mut envelope = Envelope::now(COMMAND, []);
    for d in devices {
        if !envelope.devices.contains(&d) {
            envelope.devices.push(d);
        }
    }
    with_envelope(envelope, reports)
}

fn with_envelope(envelope: Envelope, reports: &[TuneReport]) -> String {
    match reports {
        [one] => envelope.document(one),
        _ => envelope.document(&serde_json::json!({ "runs": reports })),
    }
}

/// A tune file's reports and devices; `None` when the text is not a tune's document.
pub fn read(text: &str) -> Option<(Vec<TuneReport>, Vec<EnvelopeDevice>)> {
    let value: Value = serde_json::from_str(text).ok()?;
    if value.get("command")?.as_str()? != COMMAND {
        return None;
    }
    let listed = value.get("runs").or_else(|| value.get("tunes"));
    let values: Vec<Value> = match listed {
        Some(v) => v.as_array()?.clone(),
        None => {
            // The envelope's `devices` (objects), not the report's `device_names`.
            let mut one = value.as_object()?.clone();
            one.remove("devices");
            vec![Value::Object(one)]
        }
    };
    let mut reports = Vec::new();
    for v in values {
        let mut r: TuneReport = serde_json::from_value(v.clone()).ok()?;
        r.refresh_answer(&held(&v));
        reports.push(r);
    }
    let devices = Envelope::read(&value)
        .map(|e| e.devices)
        .unwrap_or_default();
    Some((reports, devices))
}

/// The winners' second times a report recorded: today's `best`, or schema 4's `per_api`.
fn held(report: &Value) -> Vec<Held> {
    let answer = &report["answer"];
    let bests = answer.get("best").or_else(|| answer.get("per_api"));
    let bests = bests.and_then(Value::as_array).cloned().unwrap_or_default();
    bests
        .iter()
        .filter_map(|b| serde_json::from_value(b.get("held")?.clone()).ok())
        .collect()
}
