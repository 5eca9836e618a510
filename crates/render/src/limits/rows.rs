//! The concept rows the limits tables show, each read from an API's view, with the key the
//! CSV and JSON name it by; and what each API's specification guarantees for a key.

use blocksweep_core::api::Api;
use blocksweep_core::guarantee::{Amount, Guarantee};
use blocksweep_core::limits::{Concept, Dims, Named};

use super::ApiLimits;

/// A concept row: how to read it from each API's limits. Each API's specification minimum
/// comes from the API itself ([`crate::ApiInfo::guarantees`]).
pub(super) struct Row {
    pub concept: Concept,
    /// The concept in the CSV and JSON: the field of `limits` (or `kernel_` and the field of
    /// `kernel`) the row shows.
    pub key: &'static str,
    pub label: &'static str,
    /// The value as the table shows it, and its native name.
    pub get: fn(&ApiLimits) -> Option<(String, String)>,
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

pub(super) const ROWS: &[Row] = &[
    Row {
        concept: Concept::MaxThreadsPerBlock,
        key: "max_threads_per_block",
        label: "max threads per block",
        get: |a| n(&a.limits.max_threads_per_block),
    },
    Row {
        concept: Concept::MaxBlockDims,
        key: "max_block_dims",
        label: "max block dims",
        get: |a| d(&a.limits.max_block_dims),
    },
    Row {
        concept: Concept::MaxGridDims,
        key: "max_grid_dims",
        label: "max grid dims (blocks)",
        get: |a| d(&a.limits.max_grid_dims),
    },
    Row {
        concept: Concept::WarpSize,
        key: "warp_size",
        label: "warp / subgroup size",
        get: |a| n(&a.limits.warp_size),
    },
    Row {
        concept: Concept::Multiprocessors,
        key: "multiprocessors",
        label: "multiprocessors",
        get: |a| n(&a.limits.multiprocessors),
    },
    Row {
        concept: Concept::MaxThreadsPerMp,
        key: "max_threads_per_mp",
        label: "max resident threads per MP",
        get: |a| n(&a.limits.max_threads_per_mp),
    },
    Row {
        concept: Concept::MaxBlocksPerMp,
        key: "max_blocks_per_mp",
        label: "max resident blocks per MP",
        get: |a| n(&a.limits.max_blocks_per_mp),
    },
    Row {
        concept: Concept::SharedMemPerBlock,
        key: "shared_mem_per_block",
        label: "shared/local memory per block",
        get: |a| bytes(&a.limits.shared_mem_per_block),
    },
    Row {
        concept: Concept::SharedMemPerBlockOptin,
        key: "shared_mem_per_block_optin",
        label: "shared memory per block (opt-in)",
        get: |a| bytes(&a.limits.shared_mem_per_block_optin),
    },
    Row {
        concept: Concept::RegistersPerBlock,
        key: "registers_per_block",
        label: "registers per block",
        get: |a| n(&a.limits.registers_per_block),
    },
    Row {
        concept: Concept::MaxAlloc,
        key: "max_alloc_bytes",
        label: "max single allocation",
        get: |a| bytes(&a.limits.max_alloc_bytes),
    },
    Row {
        concept: Concept::MaxBufferBinding,
        key: "max_buffer_binding_bytes",
        label: "max buffer binding",
        get: |a| bytes(&a.limits.max_buffer_binding_bytes),
    },
    Row {
        concept: Concept::GlobalMemory,
        key: "global_mem_bytes",
        label: "global memory",
        get: |a| bytes(&a.limits.global_mem_bytes),
    },
    Row {
        concept: Concept::LastLevelCache,
        key: "l2_bytes",
        label: "last-level cache",
        get: |a| bytes(&a.limits.l2_bytes),
    },
    Row {
        concept: Concept::TimerResolution,
        key: "timer_resolution_ns",
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
        key: "kernel_max_block",
        label: "kernel: max block size",
        get: |a| n(&a.kernel.max_block),
    },
    Row {
        concept: Concept::KernelRegisters,
        key: "kernel_registers",
        label: "kernel: registers per thread",
        get: |a| n(&a.kernel.registers),
    },
];

/// What `api`'s specification guarantees for the limit the CSV and JSON call `key` (the
/// table's "spec ≥"), where it promises anything.
pub(super) fn guarantee(api: Api, key: &str) -> Option<String> {
    guarantee_of(api, key).map(|g| g.to_string())
}

/// [`guarantee`] in the CSV's notation, its value column's: a count or bytes as a number, an
/// extent as `[x,y,z]` (words such as "(128, 128, 64)" and "16 KiB" are the table's).
pub(super) fn guarantee_in_figures(api: Api, key: &str) -> Option<String> {
    let g = guarantee_of(api, key)?;
    let amount = match g.amount {
        Amount::Count(n) | Amount::Bytes(n) => n.to_string(),
        Amount::Dims([x, y, z]) => format!("[{x},{y},{z}]"),
        Amount::ShareOfGlobal { divisor, floor } => format!("max(global/{divisor}, {floor})"),
    };
    Some(match g.condition {
        Some(c) => format!("{amount} ({c})"),
        None => amount,
    })
}

/// The promise itself behind [`guarantee`].
pub(super) fn guarantee_of(api: Api, key: &str) -> Option<&'static Guarantee> {
    let row = ROWS.iter().find(|r| r.key == key)?;
    api.guarantee(row.concept)
}
