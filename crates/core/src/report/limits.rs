//! The limits tables: one API's limits in full, or the APIs side by side by concept, each
//! value under its native name, beside what each specification guarantees.
//!
//! The guarantees shown are each API's own ([`crate::ApiInfo::guarantees`], quoted with their
//! sections in the backend crates and docs/limits.md).

use serde::Serialize;

use super::layout::{Column, Layout, Notes, Table};
use super::text::Doc;
use super::{to_csv, Envelope, Render};
use crate::backend::{DeviceIdentity, KernelFacts, TimerInfo};
use crate::limits::{Concept, Dims, Limits, Named};

/// One API's view, as the limits tables need it.
#[derive(Debug, Clone, Serialize)]
pub struct ApiLimits {
    pub device: DeviceIdentity,
    pub limits: Limits,
    pub kernel: KernelFacts,
    pub timer: TimerInfo,
}

/// A concept row: how to read it from each API's limits. Each API's specification minimum
/// comes from the API itself ([`crate::ApiInfo::guarantees`]).
struct Row {
    concept: Concept,
    label: &'static str,
    get: fn(&ApiLimits) -> Option<(String, String)>,
}

fn n(v: &Option<Named<u64>>) -> Option<(String, String)> {
    v.as_ref().map(|x| (x.value.to_string(), x.name.clone()))
}

fn d(v: &Option<Named<Dims>>) -> Option<(String, String)> {
    v.as_ref().map(|x| (x.value.to_string(), x.name.clone()))
}

fn bytes(v: &Option<Named<u64>>) -> Option<(String, String)> {
    v.as_ref().map(|x| (human_bytes(x.value), x.name.clone()))
}

pub fn human_bytes(b: u64) -> String {
    const K: f64 = 1024.0;
    let f = b as f64;
    if f >= K * K * K {
        format!("{:.1} GiB", f / (K * K * K))
    } else if f >= K * K {
        format!("{:.1} MiB", f / (K * K))
    } else if f >= K {
        format!("{:.0} KiB", f / K)
    } else {
        format!("{b} B")
    }
}

const ROWS: &[Row] = &[
    Row {
        concept: Concept::MaxThreadsPerBlock,
        label: "max threads per block",
        get: |a| n(&a.limits.max_threads_per_block),
    },
    Row {
        concept: Concept::MaxBlockDims,
        label: "max block dims",
        get: |a| d(&a.limits.max_block_dims),
    },
    Row {
        concept: Concept::MaxGridDims,
        label: "max grid dims (blocks)",
        get: |a| d(&a.limits.max_grid_dims),
    },
    Row {
        concept: Concept::WarpSize,
        label: "warp / subgroup size",
        get: |a| n(&a.limits.warp_size),
    },
    Row {
        concept: Concept::Multiprocessors,
        label: "multiprocessors",
        get: |a| n(&a.limits.multiprocessors),
    },
    Row {
        concept: Concept::MaxThreadsPerMp,
        label: "max resident threads per MP",
        get: |a| n(&a.limits.max_threads_per_mp),
    },
    Row {
        concept: Concept::MaxBlocksPerMp,
        label: "max resident blocks per MP",
        get: |a| n(&a.limits.max_blocks_per_mp),
    },
    Row {
        concept: Concept::SharedMemPerBlock,
        label: "shared/local memory per block",
        get: |a| bytes(&a.limits.shared_mem_per_block),
    },
    Row {
        concept: Concept::SharedMemPerBlockOptin,
        label: "shared memory per block (opt-in)",
        get: |a| bytes(&a.limits.shared_mem_per_block_optin),
    },
    Row {
        concept: Concept::RegistersPerBlock,
        label: "registers per block",
        get: |a| n(&a.limits.registers_per_block),
    },
    Row {
        concept: Concept::MaxAlloc,
        label: "max single allocation",
        get: |a| bytes(&a.limits.max_alloc_bytes),
    },
    Row {
        concept: Concept::MaxBufferBinding,
        label: "max buffer binding",
        get: |a| bytes(&a.limits.max_buffer_binding_bytes),
    },
    Row {
        concept: Concept::GlobalMemory,
        label: "global memory",
        get: |a| bytes(&a.limits.global_mem_bytes),
    },
    Row {
        concept: Concept::LastLevelCache,
        label: "last-level cache",
        get: |a| bytes(&a.limits.l2_bytes),
    },
    Row {
        concept: Concept::TimerResolution,
        label: "timer resolution",
        get: |a| {
            Some((
                format!("{} ns", a.timer.resolution_ns),
                a.limits
                    .timer_resolution_ns
                    .as_ref()
                    .map(|x| x.name.clone())
                    .unwrap_or_else(|| a.timer.method.clone()),
            ))
        },
    },
    Row {
        concept: Concept::KernelMaxBlock,
        label: "kernel: max block size",
        get: |a| n(&a.kernel.max_block),
    },
    Row {
        concept: Concept::KernelRegisters,
        label: "kernel: registers per thread",
        get: |a| n(&a.kernel.registers),
    },
];

/// The limits of one physical device (or of the devices one `limits` call named), one view
/// per API.
#[derive(Debug, Clone, Serialize)]
pub struct LimitsGroup {
    /// "physical device 0 (NVIDIA H200, matched by UUID)"; shown above the group when a call
    /// covers several devices.
    pub heading: Option<String>,
    /// Every view is one API's view of the same physical device: only then does a difference
    /// between them mean the APIs disagree (≠).
    pub one_physical_device: bool,
    pub views: Vec<ApiLimits>,
}

/// What `limits` prints. JSON: every API view as one flat array (its first shape; each view
/// names its device).
#[derive(Debug, Clone, Serialize)]
pub struct LimitsReport {
    pub groups: Vec<LimitsGroup>,
}

impl LimitsReport {
    pub fn views(&self) -> impl Iterator<Item = &ApiLimits> {
        self.groups.iter().flat_map(|g| &g.views)
    }

    fn render_text(&self, layout: Layout, md: bool) -> String {
        let mut out = Vec::new();
        for g in &self.groups {
            let mut doc = Doc::new(layout, md);
            if self.groups.len() > 1 {
                if let Some(h) = &g.heading {
                    doc.heading(1, h);
                }
            }
            match g.views.len() {
                0 => {}
                1 => render_single(&g.views[0], &mut doc),
                _ => render_cross(g, &mut doc),
            }
            out.push(doc.finish());
        }
        out.join("\n")
    }
}

impl Render for LimitsReport {
    fn text(&self, layout: Layout, md: bool) -> String {
        self.render_text(layout, md)
    }
    /// `api,concept,value,native_name,device`: one line per limit an API reported (`concept`
    /// is the JSON field; `extra` for API-specific ones).
    fn csv(&self) -> String {
        let mut rec: Vec<Vec<String>> = vec![["api", "concept", "value", "native_name", "device"]
            .map(String::from)
            .to_vec()];
        for v in self.views() {
            for (concept, value, name) in csv_rows(v) {
                rec.push(vec![
                    v.device.api.key().to_string(),
                    concept,
                    value,
                    name,
                    v.device.name.clone(),
                ]);
            }
        }
        to_csv(&rec)
    }
    /// The envelope, then `limits`: one object per API view, every device's in turn, each
    /// with the `guarantees` its specification makes (the table's "spec ≥" column).
    fn json(&self) -> String {
        let views: Vec<serde_json::Value> = self.views().map(view_json).collect();
        Envelope::now("limits", self.views().map(|v| &v.device))
            .document(&serde_json::json!({ "limits": views }))
    }
}

/// One view as JSON, with `guarantees: [{ "concept", "minimum" }]` from its API.
fn view_json(v: &ApiLimits) -> serde_json::Value {
    let mut o = serde_json::to_value(v).unwrap_or_default();
    let guarantees: Vec<serde_json::Value> = v
        .device
        .api
        .info()
        .guarantees
        .iter()
        .map(|(c, min)| serde_json::json!({ "concept": c, "minimum": min }))
        .collect();
    if let Some(m) = o.as_object_mut() {
        m.insert("guarantees".into(), guarantees.into());
    }
    o
}

fn csv_rows(v: &ApiLimits) -> Vec<(String, String, String)> {
    let j = serde_json::to_value(&v.limits).unwrap_or_default();
    let mut out = Vec::new();
    if let Some(map) = j.as_object() {
        for (k, val) in map {
            if let (Some(value), Some(name)) =
                (val.get("value"), val.get("name").and_then(|n| n.as_str()))
            {
                out.push((k.clone(), value.to_string(), name.to_string()));
            }
        }
    }
    for (k, val) in &v.limits.extra {
        out.push(("extra".into(), val.clone(), k.clone()));
    }
    for (concept, x) in [
        ("kernel_max_block", &v.kernel.max_block),
        ("kernel_registers", &v.kernel.registers),
    ] {
        if let Some(x) = x {
            out.push((concept.into(), x.value.to_string(), x.name.clone()));
        }
    }
    out
}

fn device_line(d: &DeviceIdentity) -> String {
    format!("{}: {} ({}, driver {})", d.api, d.name, d.kind, d.driver)
}

/// APIs side by side for one physical device, concept by concept: each API's value under its
/// native name beside what its specification guarantees. Where the views are one physical
/// device, concepts on which the APIs report different values are marked ≠, because a
/// porting assumption breaks exactly there.
fn render_cross(g: &LimitsGroup, doc: &mut Doc) {
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
                row.push(api.guarantee(c.concept).unwrap_or("—").to_string());
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
fn render_single(v: &ApiLimits, doc: &mut Doc) {
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
            d.driver,
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::Api;
    use crate::report::layout;
    use crate::testing::{HostBackend, TEST_API_A, TEST_API_B};
    use crate::Backend;

    fn view(api: Api, threads: u64) -> ApiLimits {
        let mut b = HostBackend::new(api);
        b.limits.max_threads_per_block = Some(Named::new(threads, "MAX_THREADS"));
        ApiLimits {
            device: b.identity().clone(),
            limits: b.limits().clone(),
            kernel: b.kernel_facts().clone(),
            timer: b.timer(),
        }
    }

    #[test]
    fn differences_are_marked_only_on_one_physical_device() {
        let mut g = LimitsGroup {
            heading: None,
            one_physical_device: true,
            views: vec![view(TEST_API_A, 1024), view(TEST_API_B, 512)],
        };
        let one = LimitsReport {
            groups: vec![g.clone()],
        };
        let s = one.table(Layout::default());
        assert!(s.contains("max threads per block  ≠"), "{s}");
        assert!(s.contains("spec ≥"), "{s}");
        assert!(layout::max_line_width(&s) <= 100, "{s}");
        g.one_physical_device = false;
        let two = LimitsReport { groups: vec![g] };
        let s = two.table(Layout::default());
        assert!(!s.contains("block  ≠"), "{s}");
        assert!(s.contains("different devices"), "{s}");
        let json: serde_json::Value = serde_json::from_str(&two.json()).unwrap();
        assert_eq!(json["command"], "limits");
        assert_eq!(json["limits"].as_array().unwrap().len(), 2);
        assert!(two
            .csv()
            .starts_with("api,concept,value,native_name,device\n"));
        assert!(two
            .markdown(Layout::default())
            .contains("| **max threads per block** "));
    }
}
