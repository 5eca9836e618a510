use serde_json::Value;

use super::{Fleet, Report, READS_SCHEMAS, SCHEMA_VERSION};

/// Reads a report written as JSON (the full record: docs/json-schema.md), refusing other
/// schemas with a clear message.
pub fn parse_report(text: &str) -> Result<Report, String> {
    let value = sweep_document(text)?;
    read_report(value)
}

/// Reads one report or a fleet of them (a multi-device run: `{"runs": [...]}`).
pub fn parse_reports(text: &str) -> Result<Vec<Report>, String> {
    let value = sweep_document(text)?;
    if value.get("runs").is_none() {
        return Ok(vec![read_report(value)?]);
    }
    let fleet: Fleet =
        serde_json::from_value(value).map_err(|e| format!("not a blocksweep report: {e}"))?;
    Ok(fleet.runs.into_iter().map(today).collect())
}

fn read_report(value: Value) -> Result<Report, String> {
    serde_json::from_value(value)
        .map(today)
        .map_err(|e| format!("not a blocksweep report: {e}"))
}

/// A report read back in today's shape: what is derived recomputed, so it is a schema
/// [`SCHEMA_VERSION`] report whatever schema its file had.
fn today(mut report: Report) -> Report {
    report.refresh_answer();
    report.schema_version = SCHEMA_VERSION;
    report
}

/// The text as JSON of a schema this blocksweep reads, from a sweep (another command's
/// document, enveloped since schema 3, names its command).
fn sweep_document(text: &str) -> Result<Value, String> {
    let value: Value = serde_json::from_str(text).map_err(|e| format!("not JSON: {e}"))?;
    match value.get("schema_version").and_then(|v| v.as_u64()) {
        Some(v) if READS_SCHEMAS.iter().any(|&r| r as u64 == v) => {}
        Some(v) => {
            return Err(format!(
                "schema_version {v} is not supported (this blocksweep reads {READS_SCHEMAS:?})"
            ))
        }
        None => return Err("not a blocksweep report (no schema_version)".into()),
    }
    match value.get("command").and_then(|c| c.as_str()) {
        None | Some("sweep") => Ok(value),
        Some(other) => Err(format!(
            "the output of `blocksweep {other}`, not of a sweep"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::Envelope;

    #[test]
    fn another_commands_document_is_named() {
        let limits = Envelope::now("limits", []).document(&serde_json::json!({"limits": []}));
        let e = parse_reports(&limits).unwrap_err();
        assert_eq!(e, "the output of `blocksweep limits`, not of a sweep");
        let e = parse_report(r#"{"schema_version": 1}"#).unwrap_err();
        assert!(e.starts_with("schema_version 1 is not supported"), "{e}");
    }
}
