use super::Report;

/// Reads a report written as JSON (the full record: docs/json-schema.md), refusing other schemas with a clear message.
pub fn parse_report(text: &str) -> Result<Report, String> {
    let value: serde_json::Value =
        serde_json::from_str(text).map_err(|e| format!("not JSON: {e}"))?;
    check_schema(&value)?;
    let mut report: Report =
        serde_json::from_value(value).map_err(|e| format!("not a blocksweep report: {e}"))?;
    report.refresh_answer();
    Ok(report)
}

/// Reads one report or a fleet of them (a multi-device run: `{"runs": [...]}`).
pub fn parse_reports(text: &str) -> Result<Vec<Report>, String> {
    let value: serde_json::Value =
        serde_json::from_str(text).map_err(|e| format!("not JSON: {e}"))?;
    check_schema(&value)?;
    if value.get("runs").is_some() {
        let mut fleet: super::Fleet =
            serde_json::from_value(value).map_err(|e| format!("not a blocksweep report: {e}"))?;
        fleet.runs.iter_mut().for_each(Report::refresh_answer);
        return Ok(fleet.runs);
    }
    let mut report: Report =
        serde_json::from_value(value).map_err(|e| format!("not a blocksweep report: {e}"))?;
    report.refresh_answer();
    Ok(vec![report])
}

fn check_schema(value: &serde_json::Value) -> Result<(), String> {
    match value.get("schema_version").and_then(|v| v.as_u64()) {
        Some(v) if super::READS_SCHEMAS.iter().any(|&r| r as u64 == v) => {}
        Some(v) => {
            return Err(format!(
                "schema_version {v} is not supported (this blocksweep reads {:?})",
                super::READS_SCHEMAS
            ))
        }
        None => return Err("not a blocksweep report (no schema_version)".into()),
    }
    Ok(())
}
