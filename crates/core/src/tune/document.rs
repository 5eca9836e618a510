//! The tune's JSON: the envelope every command's JSON carries (`command: "tune"`, the devices),
//! then `tunes`, one report per share of the space: one, unless `--device all` split it over
//! several GPUs. A script reads every tune file the same way, one GPU or many, merged or not.

use serde_json::Value;

use super::TuneReport;
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
    envelope.document(&serde_json::json!({ "tunes": reports }))
}

/// A tune file's reports and devices; `None` when the text is not a tune's document.
pub fn read(text: &str) -> Option<(Vec<TuneReport>, Vec<EnvelopeDevice>)> {
    let value: Value = serde_json::from_str(text).ok()?;
    if value.get("command")?.as_str()? != COMMAND {
        return None;
    }
    let reports = serde_json::from_value(value.get("tunes")?.clone()).ok()?;
    let devices = Envelope::read(&value)
        .map(|e| e.devices)
        .unwrap_or_default();
    Some((reports, devices))
}
