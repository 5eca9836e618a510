//! The limits tables: every API of one device side by side by concept, or one API's limits in
//! full, each value under its native name.

use super::rows::ROWS;
use super::{ApiLimits, LimitsGroup};
use crate::layout::{Column, Notes, Table};
use crate::text::Doc;
use blocksweep_core::backend::DeviceIdentity;

fn device_line(d: &DeviceIdentity) -> String {
    format!(
        "{}: {} ({}, driver {})",
        d.api, d.name, d.kind, d.driver_version
    )
}

/// APIs side by side for one physical device, concept by concept: each API's value under its
/// native name beside what its specification guarantees. Where the views are one physical
/// device, concepts on which the APIs report different values are marked ≠, because a
/// porting assumption breaks exactly there.
pub(super) fn render_cross(g: &LimitsGroup, doc: &mut Doc) {
    let views = &g.views;
    let lines: Vec<String> = views.iter().map(|v| device_line(&v.device)).collect();
    doc.lines(&lines);
    let promises = views
        .iter()
        .any(|v| !v.device.api.info().guarantees.is_empty());
    let mark_differs = g.one_physical_device && views.len() > 1;
    let mut cols = vec![Column::left("API"), Column::left("value").wrap(12)];
    if promises {
        cols.push(Column::left("spec ≥").wrap(8));
    }
    cols.push(Column::left("native name").wrap(20));
    let mut t = Table::new(cols);
    let indent = if doc.md { "" } else { "  " };
    let mut differs = 0;
    for c in ROWS {
        let vals: Vec<Option<(String, String)>> = views.iter().map(|v| (c.get)(v)).collect();
        if vals.iter().all(Option::is_none) {
            continue;
        }
        let present: Vec<&String> = vals.iter().flatten().map(|(v, _)| v).collect();
        let ne = mark_differs && present.windows(2).any(|w| w[0] != w[1]);
        differs += usize::from(ne);
        t.section(match ne {
            true => format!("{}  ≠", c.label),
            false => c.label.to_string(),
        });
        for (v, val) in views.iter().zip(&vals) {
            let api = v.device.api;
            let (value, name) = val.clone().unwrap_or_else(|| ("—".into(), String::new()));
            let mut row = vec![format!("{indent}{api}"), value];
            if promises {
                row.push(
                    api.guarantee(c.concept)
                        .map_or("—".into(), |g| g.to_string()),
                );
            }
            row.push(name);
            t.push(row);
        }
    }
    let mut legend = Vec::new();
    if promises {
        legend.push(
            "spec ≥: the minimum the API's specification promises on every conformant device \
             (docs/limits.md names the sections); a portable program may assume no more."
                .to_string(),
        );
    }
    if mark_differs {
        legend.push(format!(
            "≠: the APIs report different values for this one device ({differs} concept(s))."
        ));
    } else {
        legend.push(
            "These views are different devices, so their values differ with the device; ≠ \
             (the APIs disagree) is marked only for one device seen by several APIs."
                .to_string(),
        );
    }
    doc.table(&t, &legend.join(" "), &Notes::new());
}

/// Every limit one API reports, in full, under its native names.
pub(super) fn render_single(v: &ApiLimits, doc: &mut Doc) {
    let d = &v.device;
    let version = if d.api_version.starts_with(&d.api.to_string()) {
        d.api_version.clone()
    } else {
        format!("{} {}", d.api, d.api_version)
    };
    doc.lines(&[
        format!(
            "{}: {} ({}, vendor {}, driver {}, {version}{})",
            d.api,
            d.name,
            d.kind,
            d.vendor,
            d.driver_version,
            d.uuid_string()
                .map(|u| format!(", UUID {u}"))
                .unwrap_or_default(),
        ),
        format!("Kernel compiled by {}", v.kernel.compiled_by),
    ]);
    let mut t = Table::new(vec![
        Column::left("concept").wrap(16),
        Column::left("value").wrap(12),
        Column::left("native name").wrap(20),
    ]);
    for c in ROWS {
        if let Some((value, name)) = (c.get)(v) {
            t.push(vec![c.label.to_string(), value, name]);
        }
    }
    if let Some(cc) = &v.limits.compute_capability {
        t.push(vec![
            "compute capability".into(),
            format!("{}.{}", cc.value.0, cc.value.1),
            cc.name.clone(),
        ]);
    }
    if let Some(x) = &v.limits.theoretical_gbps {
        t.push(vec![
            "theoretical DRAM bandwidth".into(),
            format!("{:.0} GB/s", x.value),
            x.name.clone(),
        ]);
    }
    if let Some(m) = &v.limits.mp_model {
        t.push(vec![
            "residency model".into(),
            format!("{} warps, {} blocks per MP", m.max_warps, m.max_blocks),
            m.source.clone(),
        ]);
    }
    if !v.limits.extra.is_empty() {
        t.section(format!("{} only", d.api));
        for (k, val) in &v.limits.extra {
            t.push(vec![String::new(), val.clone(), k.clone()]);
        }
    }
    if !v.kernel.extra.is_empty() {
        t.section("kernel");
        for (k, val) in &v.kernel.extra {
            t.push(vec![String::new(), val.clone(), k.clone()]);
        }
    }
    doc.table(&t, "", &Notes::new());
}
