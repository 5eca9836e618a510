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
        // The report is the document: the envelope says when and by what it was measured.
        [one] => {
            let mut own = Envelope::at(&one.tool, &one.date, COMMAND, []);
            own.devices = envelope.devices;
            own.document(one)
        }
        // Interrupted where any share was (the later shares are then absent).
        _ => {
            let interrupted = reports.iter().any(|r| r.partial.interrupted);
            let doc = serde_json::json!({ "interrupted": interrupted, "runs": reports });
            envelope.document(&doc)
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The H200's schema-4 tunes (call14): `tunes`, `entries`, `per_api`.
    const CALL14: [&str; 4] = [
        include_str!("../../../../docs/results/h200-2026-12-02/call14/tune/reduce-elems.json"),
        include_str!(
            "../../../../docs/results/h200-2026-12-02/call14/tune/reduce-elems-cached.json"
        ),
        include_str!("../../../../docs/results/h200-2026-12-02/call14/tune/grayscale-map.json"),
        include_str!(
            "../../../../docs/results/h200-2026-12-02/call14/tune/grayscale-map-wide.json"
        ),
    ];

    /// Read back, a schema-4 tune answers as its file did: each API's best with its second
    /// time, the portable set and the choice, made again by the one answer.
    #[test]
    fn a_schema_4_tune_reads_and_answers_as_it_did() {
        for text in CALL14 {
            let old: Value = serde_json::from_str(text).unwrap();
            let old = &old["tunes"][0]["answer"];
            let (reports, devices) = read(text).expect("a tune");
            assert_eq!((reports.len(), devices.len()), (1, 3));
            let r = &reports[0];
            assert!(!r.measurements.is_empty());
            let a = &r.answer;
            for (b, was) in a.best.iter().zip(old["per_api"].as_array().unwrap()) {
                assert_eq!(serde_json::to_value(&b.config).unwrap(), was["best"]);
                assert_eq!(b.held.is_some(), !was["held"].is_null(), "{}", b.api);
                assert!(b.device.starts_with("NVIDIA H200"), "{}", b.device);
            }
            assert_eq!(serde_json::to_value(&a.portable).unwrap(), old["portable"]);
            let choice = a.choice.as_ref().map(|c| &c.config);
            assert_eq!(
                serde_json::to_value(choice).unwrap(),
                old["choice"]["config"]
            );
        }
    }

    /// Today's document of one share is the report at the top level, and reads back whole.
    #[test]
    fn one_share_is_a_report_at_the_top_level_and_reads_back() {
        let (reports, devices) = read(CALL14[0]).unwrap();
        let text = document_listing(&reports, devices.clone());
        let v: Value = serde_json::from_str(&text).unwrap();
        assert!(v.get("tunes").is_none() && v.get("runs").is_none());
        assert!(v["measurements"].is_array() && v["answer"]["best"].is_array());
        assert_eq!(v["devices"].as_array().unwrap().len(), 3, "the envelope's");
        assert_eq!(
            v["device_names"].as_array().unwrap().len(),
            3,
            "the report's"
        );
        let (back, back_devices) = read(&text).unwrap();
        assert_eq!((back, back_devices), (reports.clone(), devices.clone()));
        let two = document_listing(&[reports[0].clone(), reports[0].clone()], devices);
        let (shares, _) = read(&two).unwrap();
        assert_eq!(shares.len(), 2, "several shares under runs");
    }
}
