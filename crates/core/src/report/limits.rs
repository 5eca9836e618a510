//! The limits tables: one API's limits in full, or the APIs side by side by concept, each
//! value under its native name, beside what each specification guarantees.
//!
//! The guarantees shown are each API's own ([`crate::ApiInfo::guarantees`], quoted with their
//! sections in the backend crates and docs/limits.md).

use serde::Serialize;
use tabled::builder::Builder;

use super::text::table;
use crate::backend::{Api, DeviceIdentity, KernelFacts, TimerInfo};
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

fn cell(v: &Option<(String, String)>) -> String {
    match v {
        Some((value, name)) => format!("{value} ({name})"),
        None => "—".into(),
    }
}

/// APIs side by side for one physical device. Rows where two APIs report different values
/// for the same concept are marked, because a porting assumption breaks exactly there.
pub fn render_cross(views: &[ApiLimits], md: bool) -> String {
    let mut b = Builder::default();
    let mut head = vec!["concept".to_string()];
    let promises = |api: Api| !api.info().guarantees.is_empty();
    for v in views {
        head.push(v.device.api.to_string());
        if promises(v.device.api) {
            head.push(format!("{} guarantees ≥", v.device.api));
        }
    }
    head.push("differs".into());
    b.push_record(head);
    for c in ROWS {
        let vals: Vec<Option<(String, String)>> = views.iter().map(|v| (c.get)(v)).collect();
        let mut row = vec![c.label.to_string()];
        for (v, val) in views.iter().zip(&vals) {
            row.push(cell(val));
            if promises(v.device.api) {
                row.push(v.device.api.guarantee(c.concept).unwrap_or("—").into());
            }
        }
        let present: Vec<&String> = vals.iter().flatten().map(|(v, _)| v).collect();
        row.push(if present.windows(2).any(|w| w[0] != w[1]) {
            "≠".into()
        } else {
            String::new()
        });
        b.push_record(row);
    }
    let mut out = String::new();
    for v in views {
        out.push_str(&format!(
            "{}: {} ({}, driver {})\n",
            v.device.api, v.device.name, v.device.kind, v.device.driver
        ));
    }
    out.push('\n');
    out.push_str(&table(b, md));
    out.push_str(
        "\n\n≠ marks concepts on which the APIs report different values for this device. \
         \"guarantees ≥\" is the minimum the specification promises on every conformant device \
         (docs/limits.md names the sections); a portable program may assume no more.\n",
    );
    out
}

/// Every limit one API reports, in full, under its native names.
pub fn render_single(v: &ApiLimits, md: bool) -> String {
    let mut b = Builder::default();
    b.push_record(["concept", "value", "native name"]);
    for c in ROWS {
        if let Some((value, name)) = (c.get)(v) {
            b.push_record([c.label.to_string(), value, name]);
        }
    }
    if let Some(cc) = &v.limits.compute_capability {
        b.push_record([
            "compute capability".into(),
            format!("{}.{}", cc.value.0, cc.value.1),
            cc.name.clone(),
        ]);
    }
    if let Some(t) = &v.limits.theoretical_gbps {
        b.push_record([
            "theoretical DRAM bandwidth".into(),
            format!("{:.0} GB/s", t.value),
            t.name.clone(),
        ]);
    }
    if let Some(m) = &v.limits.mp_model {
        b.push_record([
            "residency model".into(),
            format!("{} warps, {} blocks per MP", m.max_warps, m.max_blocks),
            m.source.clone(),
        ]);
    }
    for (k, val) in &v.limits.extra {
        b.push_record([String::new(), val.clone(), k.clone()]);
    }
    for (k, val) in &v.kernel.extra {
        b.push_record(["kernel".into(), val.clone(), k.clone()]);
    }
    let d = &v.device;
    let mut out = format!(
        "{}: {} ({}, vendor {}, driver {}, {} {}{})\nKernel compiled by {}\n\n",
        d.api,
        d.name,
        d.kind,
        d.vendor,
        d.driver,
        d.api,
        d.api_version,
        d.uuid_string()
            .map(|u| format!(", UUID {u}"))
            .unwrap_or_default(),
        v.kernel.compiled_by
    );
    out.push_str(&table(b, md));
    out.push('\n');
    out
}
