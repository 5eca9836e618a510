//! `validate`'s second table, "Subgroups: what each API claims, and what ran", and the same
//! figures as CSV records and JSON rows.

use serde_json::{json, Value};

use crate::layout::{Column, Notes, Table};
use crate::text::Doc;
use blocksweep_core::backend::Api;
use blocksweep_core::subgroup::{evaluate, promise, SUBGROUP_ASSUMPTIONS};
use blocksweep_core::subgroup::{join, ApiSubgroups, Dispatch, Probed};
use blocksweep_core::subgroup_probe::UNNAMED_RANGE;

/// One dispatch in a few words: "block 100: reports 8; 13 subgroups, 12 x 8 + 4 active".
fn dispatch_text(d: &Dispatch) -> String {
    let at = match d.required {
        Some(r) => format!("block {} (required {r})", d.block),
        None => format!("block {}", d.block),
    };
    let what = match &d.ran {
        Probed::Measured { subgroups, .. } => {
            let mut t = format!(
                "reports {}; {} subgroups, {} active",
                join(&d.reported()),
                subgroups.len(),
                d.lanes_text()
            );
            if let Some(why) = d.inconsistency() {
                t.push_str(&format!(" ({why})"));
            }
            t
        }
        Probed::Refused { message } => format!("refused: {message}"),
        Probed::Failed { message } => format!("FAILED: {message}"),
    };
    match d.block {
        0 => format!("required {}: {what}", d.required.unwrap_or(0)),
        _ => format!("{at}: {what}"),
    }
}

/// What one API claimed and measured, in one footnote.
fn detail(s: &ApiSubgroups) -> String {
    let c = &s.claims;
    let mut claims: Vec<String> = Vec::new();
    claims.extend(c.size.iter().map(|n| format!("{} {}", n.name, n.value)));
    claims.extend(
        c.hint
            .iter()
            .map(|n| format!("{} {} (a hint, no subgroup size)", n.name, n.value)),
    );
    if let Some((min, max)) = c.range {
        let declared = s.api.info().subgroup_probe;
        let (lo, hi) = declared.map_or(UNNAMED_RANGE, |p| p.range_names());
        claims.push(format!("{lo} {min}, {hi} {max}"));
    }
    match (&c.required_not, c.required.is_empty()) {
        (Some(why), _) => claims.push(format!("no size may be required: {why}")),
        (None, false) => claims.push(format!("a pipeline may require {}", join(&c.required))),
        _ => {}
    }
    claims.extend(c.per_kernel.iter().map(|(k, v)| format!("{k} {v}")));
    let claims = match claims.is_empty() {
        true => "no claims".to_string(),
        false => claims.join("; "),
    };
    let ran = match &s.unmeasured {
        Some(why) => why.clone(),
        None => {
            let each: Vec<String> = s.dispatches.iter().map(dispatch_text).collect();
            format!("probe {}: {}", s.probe, each.join("; "))
        }
    };
    format!("{}: {claims}. {ran}", s.api)
}

/// One row per assumption, one column per API; each API's figures under the table.
pub(crate) fn render(subgroups: &[ApiSubgroups], apis: &[Api], doc: &mut Doc) {
    if subgroups.is_empty() {
        return;
    }
    doc.heading(3, "Subgroups: what each API claims, and what ran");
    let mut cols = vec![Column::right("#"), Column::left("assumption").wrap(20)];
    cols.extend(apis.iter().map(|a| Column::left(a.to_string()).wrap(16)));
    let mut t = Table::new(cols);
    let mut who = vec!["Who promises it:".to_string()];
    for (i, (which, claim)) in SUBGROUP_ASSUMPTIONS.iter().enumerate() {
        let mut row = vec![format!("S{}", i + 1), claim.to_string()];
        for api in apis {
            let s = subgroups.iter().find(|s| s.api == *api);
            row.push(s.map_or_else(|| "—".into(), |s| evaluate(s, *which).text()));
        }
        t.push(row);
        who.push(format!("S{}. {}", i + 1, promise(*which)));
    }
    let mut notes = Notes::new();
    for s in subgroups {
        notes.mark(detail(s));
    }
    doc.raw(t.to_text(doc.layout, doc.md));
    doc.para(
        "What each API claims and what its probe measured (one block per dispatch; active \
         lanes counted by a ballot, not taken from the reported size):",
    );
    doc.raw(notes.render(doc.layout, doc.md));
    doc.lines(&who);
}

/// CSV records in `validate`'s columns (api, device, assumption, block, grid, guarantee,
/// limits_say, outcome, message): one per (API, assumption), then one per dispatch.
pub fn csv_rows(s: &ApiSubgroups, device: &str) -> Vec<Vec<String>> {
    let mut rows = Vec::new();
    for (which, claim) in SUBGROUP_ASSUMPTIONS {
        let c = evaluate(s, which);
        let outcome = match c.holds {
            Some(true) => "holds",
            Some(false) => "does not hold",
            None => "not judged",
        };
        rows.push(vec![
            s.api.key().into(),
            device.into(),
            claim.into(),
            String::new(),
            String::new(),
            promise(which),
            c.claims.clone(),
            outcome.into(),
            c.text(),
        ]);
    }
    for d in &s.dispatches {
        let outcome = match d.ran {
            Probed::Measured { .. } => "measured",
            Probed::Refused { .. } => "rejected",
            Probed::Failed { .. } => "failed",
        };
        rows.push(vec![
            s.api.key().into(),
            device.into(),
            "subgroup probe".into(),
            d.block.to_string(),
            "1".into(),
            s.probe.clone(),
            d.required
                .map(|r| format!("required subgroup size {r}"))
                .unwrap_or_default(),
            outcome.into(),
            dispatch_text(d),
        ]);
    }
    rows
}

/// JSON rows for `validate`'s flat array: one per (API, assumption) with `assumption.claim`
/// and a `subgroups` verdict, then one holding the API's whole probe (`subgroup_probe`).
pub fn json_rows(s: &ApiSubgroups) -> Vec<Value> {
    let mut rows: Vec<Value> = SUBGROUP_ASSUMPTIONS
        .iter()
        .map(|&(which, claim)| {
            let cell = evaluate(s, which);
            let kind = match cell.holds {
                Some(true) => "holds",
                Some(false) => "does_not_hold",
                None => "not_judged",
            };
            json!({
                "api": s.api,
                "assumption": { "claim": claim, "guarantee": promise(which), "subgroups": which },
                "outcome": { "kind": kind, "verdict": cell.text() },
                "subgroups": cell,
            })
        })
        .collect();
    // The probe's row has an outcome too, so that every row of `checks` reads alike.
    let outcome = match &s.unmeasured {
        None => json!({ "kind": "measured" }),
        Some(why) => json!({ "kind": "not_measured", "why": why }),
    };
    rows.push(json!({
        "api": s.api,
        "assumption": { "claim": "subgroup probe", "guarantee": s.probe },
        "outcome": outcome,
        "subgroup_probe": s,
    }));
    rows
}
