//! The limits report as files: the CSV, one line per limit an API reported, and the JSON, each
//! view whole. Both carry every figure the tables show, and beside each limit what its API's
//! specification guarantees (the cross table's "spec ≥").

use serde_json::Value;

use super::rows::{guarantee, guarantee_in_figures, guarantee_of};
use super::{units, ApiLimits, LimitsReport};
use crate::to_csv;
use blocksweep_core::report::Envelope;

/// The CSV's columns.
const COLUMNS: [&str; 6] = [
    "api",
    "concept",
    "value",
    "native_name",
    "device",
    "guaranteed",
];

/// One CSV line of a view, after its API.
struct Line {
    concept: String,
    value: String,
    name: String,
    guaranteed: Option<String>,
}

/// `api,concept,value,native_name,device,guaranteed`: one line per limit each API reported, the
/// guarantee in the value's notation.
pub(super) fn csv(report: &LimitsReport) -> String {
    let mut rec = vec![COLUMNS.map(String::from).to_vec()];
    for v in report.views() {
        for line in lines(v) {
            rec.push(vec![
                v.device.api.key().to_string(),
                line.concept,
                line.value,
                line.name,
                v.device.name.clone(),
                line.guaranteed.unwrap_or_default().to_string(),
            ]);
        }
    }
    to_csv(&rec)
}

/// A limit serialised as JSON (`{ "value", "name" }` or null) as a CSV line under `key`; a
/// limit the API does not report only where its specification guarantees one (value and name
/// empty), so that the guarantee the table shows is in the file too.
fn named_line(v: &ApiLimits, key: &str, named: &Value) -> Option<Line> {
    let guaranteed = guarantee_in_figures(v.device.api, key);
    let (value, name) = match (
        named.get("value"),
        named.get("name").and_then(Value::as_str),
    ) {
        (Some(value), Some(name)) => (value.to_string(), name.to_string()),
        _ if named.is_null() && guaranteed.is_some() => (String::new(), String::new()),
        _ => return None,
    };
    Some(Line {
        concept: key.to_string(),
        value,
        name,
        guaranteed,
    })
}

/// Every line of `v`, in its JSON's order: the `limits` fields, their `extra`, the kernel's
/// limits and its `extra` (`concept` is the field, `kernel_` and the field, `extra` or
/// `kernel_extra`). The residency model's value is its JSON without `source`, which names it.
fn lines(v: &ApiLimits) -> Vec<Line> {
    let mut out = Vec::new();
    if let Value::Object(fields) = serde_json::to_value(&v.limits).unwrap_or_default() {
        for (key, field) in &fields {
            match (key.as_str(), field) {
                ("extra", _) => {}
                ("mp_model", Value::Object(model)) => {
                    let mut figures = model.clone();
                    let source = figures.remove("source");
                    out.push(Line {
                        concept: key.clone(),
                        value: Value::Object(figures).to_string(),
                        name: source
                            .and_then(|s| s.as_str().map(String::from))
                            .unwrap_or_default(),
                        guaranteed: None,
                    });
                }
                // The table shows the timer's resolution where the limits have none.
                ("timer_resolution_ns", Value::Null) => out.push(Line {
                    concept: key.clone(),
                    value: Value::from(v.timer.resolution_ns).to_string(),
                    name: v.timer.method.clone(),
                    guaranteed: guarantee_in_figures(v.device.api, key),
                }),
                _ => out.extend(named_line(v, key, field)),
            }
        }
    }
    let raw = |concept: &str, (name, value): &(String, String)| Line {
        concept: concept.to_string(),
        value: value.clone(),
        name: name.clone(),
        guaranteed: None,
    };
    out.extend(v.limits.extra.iter().map(|e| raw("extra", e)));
    for (key, named) in [
        ("kernel_max_block", &v.kernel.max_block),
        ("kernel_registers", &v.kernel.registers),
    ] {
        out.extend(named_line(
            v,
            key,
            &serde_json::to_value(named).unwrap_or_default(),
        ));
    }
    out.extend(v.kernel.extra.iter().map(|e| raw("kernel_extra", e)));
    out
}

/// The envelope, then `limits`: one object per API view, every device's in turn.
pub(super) fn json(report: &LimitsReport) -> String {
    let views: Vec<Value> = report.views().map(view_json).collect();
    Envelope::now("limits", report.views().map(|v| &v.device))
        .document(&serde_json::json!({ "limits": views }))
}

/// One view as JSON: each limit of `limits` and `kernel` with its `unit`, `guaranteed` (what
/// its API's specification guarantees for it, in words; null where it promises nothing) and
/// `promised` (the same as a number with its unit), and the view's `guarantees`, every promise
/// of its API, each in words and as `amount`.
fn view_json(v: &ApiLimits) -> Value {
    let api = v.device.api;
    let mut o = serde_json::to_value(v).unwrap_or_default();
    for (part, prefix) in [("limits", ""), ("kernel", "kernel_")] {
        let Some(fields) = o.get_mut(part).and_then(Value::as_object_mut) else {
            continue;
        };
        for (key, field) in fields.iter_mut() {
            if let Some(named) = field
                .as_object_mut()
                .filter(|m| m.contains_key("value") && m.contains_key("name"))
            {
                let key = format!("{prefix}{key}");
                named.insert("unit".into(), units::unit(&key).into());
                named.insert("guaranteed".into(), guarantee(api, &key).into());
                let promised = guarantee_of(api, &key).map(units::promised);
                named.insert("promised".into(), promised.into());
            }
        }
    }
    let guarantees: Vec<Value> = api
        .info()
        .guarantees
        .iter()
        .map(|g| {
            serde_json::json!({
                "concept": g.concept,
                "minimum": g.to_string(),
                "fixed": g.fixed,
                "native_name": g.name,
                "amount": units::amount(g),
                "condition": g.condition,
            })
        })
        .collect();
    if let Some(m) = o.as_object_mut() {
        m.insert("guarantees".into(), guarantees.into());
    }
    o
}
