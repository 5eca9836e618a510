//! The fields every command's JSON opens with, so a file says what wrote it, when, in which
//! schema, and on which devices, whatever the command (docs/json-schema.md, "Envelope").
//!
//! The command's own payload follows at the top level: the sweep's [`super::Report`] fields
//! stay where readers of older files find them; a command whose result is a list (limits,
//! validate) names it as one field.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::{to_json, SCHEMA_VERSION};
use crate::backend::{Api, DeviceIdentity};

/// "blocksweep 0.1.0": the tool as it names itself in every file.
pub fn tool() -> String {
    format!("blocksweep {}", env!("CARGO_PKG_VERSION"))
}

/// One device a command ran on (or, for `compare`, the devices its runs measured): enough to
/// tell two identical GPUs apart.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EnvelopeDevice {
    pub api: Api,
    pub name: String,
    /// The 8-4-4-4-12 hex string, or null where the API exposes none.
    pub uuid: Option<String>,
    pub pci_bus_id: Option<String>,
}

impl EnvelopeDevice {
    pub fn of(d: &DeviceIdentity) -> EnvelopeDevice {
        EnvelopeDevice {
            api: d.api,
            name: d.name.clone(),
            uuid: d.uuid_string(),
            pci_bus_id: d.pci_bus_id.clone(),
        }
    }
}

/// The envelope's fields, in the order they are written.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Envelope {
    /// "blocksweep 0.1.0": what wrote (for a sweep: what measured) the document.
    pub tool: String,
    /// The version part of `tool`.
    pub version: String,
    pub schema_version: u32,
    /// The subcommand whose document this is: "sweep", "limits", ...
    pub command: String,
    /// RFC 3339 UTC: when the command ran (a sweep: when it started measuring).
    pub date: String,
    pub devices: Vec<EnvelopeDevice>,
}

impl Envelope {
    /// The envelope of a document written now by this blocksweep.
    pub fn now<'a>(
        command: &str,
        devices: impl IntoIterator<Item = &'a DeviceIdentity>,
    ) -> Envelope {
        Envelope::at(&tool(), &now_rfc3339(), command, devices)
    }

    /// The envelope of a document that records its own tool and date (a sweep read back is
    /// still the run it was).
    pub fn at<'a>(
        tool: &str,
        date: &str,
        command: &str,
        devices: impl IntoIterator<Item = &'a DeviceIdentity>,
    ) -> Envelope {
        let version = tool.rsplit(' ').next().unwrap_or(tool).to_string();
        // Once each: the lab's results repeat a device per thread count.
        let mut listed: Vec<EnvelopeDevice> = Vec::new();
        for d in devices.into_iter().map(EnvelopeDevice::of) {
            if !listed.contains(&d) {
                listed.push(d);
            }
        }
        Envelope {
            tool: tool.to_string(),
            version,
            schema_version: SCHEMA_VERSION,
            command: command.to_string(),
            date: date.to_string(),
            devices: listed,
        }
    }

    /// The envelope, then the payload's fields (a field the envelope already has is the
    /// envelope's), as pretty JSON. A payload that is not an object goes under `"payload"`.
    pub fn document<T: Serialize + ?Sized>(&self, payload: &T) -> String {
        let mut doc = match serde_json::to_value(self) {
            Ok(Value::Object(m)) => m,
            _ => Map::new(),
        };
        match serde_json::to_value(payload) {
            Ok(Value::Object(fields)) => {
                for (k, v) in fields {
                    doc.entry(k).or_insert(v);
                }
            }
            Ok(other) => {
                doc.insert("payload".into(), other);
            }
            Err(e) => {
                doc.insert("error".into(), Value::String(e.to_string()));
            }
        }
        to_json(&Value::Object(doc))
    }

    /// The envelope of a document read back, where it has one (files before the envelope have
    /// none, or only `tool`, `date` and `schema_version`).
    pub fn read(value: &Value) -> Option<Envelope> {
        serde_json::from_value(value.clone()).ok()
    }
}

/// The current time as RFC 3339 UTC to the second ("2026-12-01T09:30:00Z").
pub fn now_rfc3339() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    rfc3339(secs)
}

/// Seconds since the Unix epoch as RFC 3339 UTC (Howard Hinnant's civil-from-days).
fn rfc3339(secs: u64) -> String {
    let (days, rem) = ((secs / 86_400) as i64, secs % 86_400);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_are_rfc3339_utc() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(rfc3339(1_796_117_405), "2026-12-01T09:30:05Z");
    }

    #[test]
    fn the_envelope_comes_first_and_wins() {
        let e = Envelope::at("blocksweep 9.9.9", "2026-12-01T00:00:00Z", "limits", []);
        let text = e.document(&serde_json::json!({"tool": "other", "limits": [1, 2]}));
        let v: Value = serde_json::from_str(&text).unwrap();
        let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
        let want = [
            "tool",
            "version",
            "schema_version",
            "command",
            "date",
            "devices",
            "limits",
        ];
        assert_eq!(keys, want);
        assert_eq!(v["tool"], "blocksweep 9.9.9");
        assert_eq!(v["version"], "9.9.9");
        assert_eq!(v["schema_version"], SCHEMA_VERSION);
        assert_eq!(Envelope::read(&v), Some(e.clone()));
        let bare: Value = serde_json::from_str(&e.document(&[1, 2])).unwrap();
        assert_eq!(bare["payload"], serde_json::json!([1, 2]));
    }
}
