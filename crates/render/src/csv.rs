use blocksweep_core::report::Report;

use crate::to_csv;

/// The sweep's CSV header: one line per (API, block size) follows.
pub const COLUMNS: [&str; 35] = [
    "api",
    "device",
    "block",
    "threads",
    "warps",
    "idle",
    "blocks_per_sm",
    "warps_per_sm",
    "occupancy",
    "grid",
    // The row's time (batch interval / count under `batch`), then the per-dispatch samples'
    // statistics, all from one batch (the second one under `batch`).
    "ms_mean",
    "each_ms_mean",
    "each_ms_min",
    "each_ms_median",
    "each_ms_max",
    "each_ms_cv",
    "reps",
    "discipline",
    "gbps",
    "of_best",
    "ties_best",
    "of_copy",
    "verified",
    "skipped",
    // Which of two identical GPUs (`sweep --device all`): the name alone cannot say.
    "device_uuid",
    "device_pci",
    "verdict",
    // The API's turn's SM clock at its start and end, and why its rows are marked (empty where
    // the clocks held or were not read).
    "sm_mhz_start",
    "sm_mhz_end",
    "clocks_moved",
    // The SM clock read right after this row, and whether it was below 75 % of the stated
    // clock twice (the row measured again and still slow).
    "row_sm_mhz",
    "slow_clock",
    // hot or cold (--cold), and the bytes written before each timed dispatch when cold.
    "caches",
    "flush_bytes",
    // True on every line of a file saved before its run ended (Ctrl-C): not a whole run. Last.
    "interrupted",
];

fn opt<T: ToString>(v: Option<T>) -> String {
    v.map(|v| v.to_string()).unwrap_or_default()
}

/// The sweep's CSV: one line per (API, block size). Its columns are a contract
/// (benches/summarize.py and tools read them, docs/json-schema.md lists them).
pub(super) fn render(report: &Report) -> String {
    let mut records: Vec<Vec<String>> = vec![COLUMNS.iter().map(|s| s.to_string()).collect()];
    for r in &report.results {
        for row in &r.rows {
            let s = row.stats();
            let t = row.timing.as_ref();
            records.push(vec![
                r.api.key().into(),
                r.device.name.clone(),
                row.block.to_string(),
                row.threads.to_string(),
                opt(row.warps),
                opt(row.idle_lanes),
                opt(row.blocks_per_mp),
                opt(row.warps_per_mp),
                opt(row.occupancy.map(|o| format!("{o:.4}"))),
                row.grid.to_string(),
                opt(s.map(|s| format!("{:.6}", s.mean))),
                opt(s.map(|s| format!("{:.6}", s.sample_mean))),
                opt(s.map(|s| format!("{:.6}", s.min))),
                opt(s.map(|s| format!("{:.6}", s.median))),
                opt(s.map(|s| format!("{:.6}", s.max))),
                opt(s.map(|s| format!("{:.4}", s.cv()))),
                opt(t.map(|t| t.reps)),
                opt(t.map(|t| t.discipline)),
                opt(row.gbps.map(|g| format!("{g:.2}"))),
                opt(row.of_best.map(|o| format!("{o:.4}"))),
                row.ties_best.to_string(),
                opt(row.of_copy.map(|o| format!("{o:.4}"))),
                row.verified.to_string(),
                row.skipped.clone().unwrap_or_default(),
                r.device.uuid_string().unwrap_or_default(),
                r.device.pci_bus_id.clone().unwrap_or_default(),
                opt(row.verdict.map(|v| v.key())),
                opt(r.clocks.as_ref().map(|c| c.start.sm_mhz)),
                opt(r.clocks.as_ref().map(|c| c.end.sm_mhz)),
                r.clocks_moved.clone().unwrap_or_default(),
                opt(row.sm_mhz),
                row.slow_clock.to_string(),
                r.protocol.caches.key().into(),
                opt(t.and_then(|t| t.flush_bytes)),
                report.partial.interrupted.to_string(),
            ]);
        }
    }
    to_csv(&records)
}
