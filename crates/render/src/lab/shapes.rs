//! `blocksweep shapes` drawn: per thread count, one table of every block shape with a
//! GB/s column per API, what each shape does to a warp's loads, and each API's fastest and
//! slowest shape.

use blocksweep_core::frame::FrameInfo;
use blocksweep_core::lab::report::ShapeReport;
use blocksweep_core::lab::row::LabRow;
use blocksweep_core::lab::shapes::{
    beyond_parts, coalescing, Coalescing, ShapeMeasured, ShapeResult,
};
use blocksweep_core::lab::{guaranteed_block_dims, guaranteed_threads};
use blocksweep_core::measure::Protocol;
use blocksweep_core::words::fraction;

use crate::layout::{Column, Notes, Table};
use crate::text::Doc;

use super::{
    device_lines, made_of_fields, measured_cell, measured_csv, opt, protocol_words, stopped_line,
    LabReport,
};

/// One thread count's section: its devices, the table, the warp's loads, each API's range.
fn render_shapes(threads: u32, results: &[&ShapeResult], protocol: &Protocol, doc: &mut Doc) {
    let Some(first) = results.first() else { return };
    let f = first.frame;
    doc.heading(
        2,
        &format!(
            "Block shapes of {threads} threads: the 2-D kernel on a {} x {} frame",
            f.width, f.height
        ),
    );
    doc.lines(&device_lines(results.iter().map(|r| {
        let warp = r
            .warp
            .map(|w| format!(" ({} {w} lanes)", r.api.words().warp))
            .unwrap_or_default();
        (r.api, r.device.name.as_str(), warp)
    })));
    let warp = results.iter().find_map(|r| r.warp);
    let mut t = Table::new(shape_columns(results));
    let mut notes = Notes::new();
    let mut words: Vec<String> = Vec::new();
    for (i, row) in first.rows.iter().enumerate() {
        let k = warp.map(|w| coalescing(row.row.block, w));
        if let Some(k) = &k {
            let b = row.row.block;
            let w = format!("{}x{}: {}", b.x, b.y, k.words);
            if !words.contains(&w) {
                words.push(w);
            }
        }
        t.push(shape_cells(i, row, &f, k.as_ref(), results, &mut notes));
    }
    doc.table(&t, &shape_legend(warp, results, protocol), &notes);
    if !words.is_empty() {
        doc.para("What each shape does to a warp's loads:");
        doc.list(&words);
    }
    doc.lines(&summary(results));
}

fn shape_columns(results: &[&ShapeResult]) -> Vec<Column> {
    let mut cols = vec![
        Column::left("shape\nx × y").key(),
        Column::right("grid"),
        Column::right("idle\nthreads").drop(3),
        Column::right("rows/\nwarp"),
        Column::right("B/row").drop(2),
        Column::right("sectors\n(used)").drop(1),
    ];
    cols.extend(
        results
            .iter()
            .map(|r| Column::right(format!("{}\nGB/s (of best)", r.api))),
    );
    cols.push(Column::left("beyond the\nspec's promise").wrap(12).drop(4));
    cols
}

/// Row `i`: the shape and what it does to a warp, each API's GB/s, and which APIs' promises
/// it goes beyond.
fn shape_cells(
    i: usize,
    row: &ShapeMeasured,
    frame: &FrameInfo,
    k: Option<&Coalescing>,
    results: &[&ShapeResult],
    notes: &mut Notes,
) -> Vec<String> {
    let b = row.row.block;
    let pixels = frame.pixels.max(1);
    let idle = row.row.threads.saturating_sub(pixels) as f64 / row.row.threads.max(1) as f64;
    let mut cells = vec![
        format!("{}x{}", b.x, b.y),
        format!("{}x{}", row.row.grid.x, row.row.grid.y),
        format!("{:.1}%", idle * 100.0),
        k.map_or("—".into(), |k| k.rows.to_string()),
        k.map_or("—".into(), |k| k.bytes_per_row.to_string()),
        k.map_or("—".into(), |k| {
            format!("{} ({}%)", k.sectors, k.percent_used())
        }),
    ];
    let mut beyond = Vec::new();
    for r in results {
        cells.push(match r.rows.get(i) {
            Some(m) => measured_cell(r.api, &m.measurement(), notes),
            None => "—".into(),
        });
        let parts = beyond_parts(r.api, b);
        if !parts.is_empty() {
            beyond.push(format!("{}: {}", r.api, parts.join(", ")));
        }
    }
    cells.push(if beyond.is_empty() {
        "—".into()
    } else {
        beyond.join("; ")
    });
    cells
}

fn shape_legend(warp: Option<u64>, results: &[&ShapeResult], protocol: &Protocol) -> String {
    format!(
        "Grid: data-sized, (ceil(width / x), ceil(height / y)) blocks, the same on every API \
         (idle threads: those past the frame's edge, which the guard leaves idle). rows/warp: \
         image rows one {}-lane warp touches (threads are numbered x first, then y); B/row: the \
         contiguous bytes of one row it reads from each plane; sectors: 32-byte memory sectors \
         one warp-wide load of one plane touches, and the share of their bytes it uses. GB/s \
         counts 16 bytes per pixel; of best: over that API's fastest shape. Beyond the spec's \
         promise: the extents (x, y) or the total (threads) above what the API's specification \
         promises every device ({}), so a portable program cannot count on the shape even \
         where this device runs it. Timing: {}.",
        warp.map_or("?".into(), |w| w.to_string()),
        promises(results),
        protocol_words(protocol)
    )
}

/// Each API's fastest shape and its slowest against it, or where its sweep stopped.
fn summary(results: &[&ShapeResult]) -> Vec<String> {
    let mut summary = Vec::new();
    for r in results {
        if let (Some(best), Some(worst)) = (
            r.best(),
            r.rows
                .iter()
                .filter(|m| m.gbps.is_some())
                .min_by(|a, b| a.gbps.unwrap_or(0.0).total_cmp(&b.gbps.unwrap_or(0.0))),
        ) {
            summary.push(format!(
                "{}: fastest {} at {:.1} GB/s; slowest {} at {} of it.",
                r.api,
                shape_name(best),
                best.gbps.unwrap_or(0.0),
                shape_name(worst),
                fraction(worst.of_best.unwrap_or(0.0))
            ));
        }
        summary.extend(stopped_line(r.api, &r.error));
    }
    summary
}

fn shape_name(m: &ShapeMeasured) -> String {
    format!("{}x{}", m.row.block.x, m.row.block.y)
}

/// "Vulkan promises (128, 128, 64) and 128 threads per workgroup": each API's promise, for
/// the legend of the "beyond" column.
fn promises(results: &[&ShapeResult]) -> String {
    let mut out = Vec::new();
    for r in results {
        let dims = guaranteed_block_dims(r.api);
        let threads = guaranteed_threads(r.api);
        if dims.is_none() && threads.is_none() {
            continue;
        }
        let mut p = Vec::new();
        if let Some([x, y, z]) = dims {
            p.push(format!("({x}, {y}, {z})"));
        }
        if let Some(t) = threads {
            let s = if t == 1 { "" } else { "s" };
            p.push(format!(
                "{t} {}{s} per {}",
                r.api.words().thread,
                r.api.block_word()
            ));
        }
        out.push(format!("{} promises {}", r.api, p.join(" and ")));
    }
    out.join("; ")
}

impl LabReport for ShapeReport {
    const COLUMNS: &'static [&'static str] = &[
        "api",
        "device",
        "threads",
        "block_x",
        "block_y",
        "grid_x",
        "grid_y",
        "threads_launched",
        "warp",
        "rows_per_warp",
        "bytes_per_row",
        "sectors",
        "sector_use",
        "mean_ms",
        "gbps",
        "of_best",
        "verified",
        "skipped",
        "beyond_guarantee",
    ];

    made_of_fields!("shapes");

    /// Per thread count, its section.
    fn body(&self, doc: &mut Doc) {
        for threads in self.thread_counts() {
            let results: Vec<&ShapeResult> = self
                .results
                .iter()
                .filter(|r| r.threads == threads)
                .collect();
            render_shapes(threads, &results, &self.protocol, doc);
        }
    }

    /// One line per (API, thread count, shape).
    fn csv_lines(&self) -> Vec<Vec<String>> {
        let mut rec = Vec::new();
        for r in &self.results {
            for m in &r.rows {
                let k = m.coalescing.as_ref();
                let mut line = vec![
                    r.api.key().into(),
                    r.device.name.clone(),
                    r.threads.to_string(),
                    m.row.block.x.to_string(),
                    m.row.block.y.to_string(),
                    m.row.grid.x.to_string(),
                    m.row.grid.y.to_string(),
                    m.row.threads.to_string(),
                    opt(r.warp.map(|w| w.to_string())),
                    opt(k.map(|k| k.rows.to_string())),
                    opt(k.map(|k| k.bytes_per_row.to_string())),
                    opt(k.map(|k| k.sectors.to_string())),
                    opt(k.map(|k| format!("{:.4}", k.sector_use))),
                ];
                line.extend(measured_csv(&m.measurement()));
                line.push(opt(m.beyond_guarantee.clone()));
                rec.push(line);
            }
        }
        rec
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{host_run, quick};
    use super::*;
    use crate::{Layout, Render};
    use blocksweep_core::lab::run::run_shapes;
    use blocksweep_core::lab::shapes;

    #[test]
    fn shapes_run_verify_and_render_on_the_host_backend() {
        let (mut b, frame, reference) = host_run(160, 90, 1);
        let rows = shapes::plan(256, 160, 90).unwrap();
        let r = run_shapes(
            &mut b,
            &frame,
            &reference,
            (256, &rows),
            &quick(),
            &mut |_| {},
        );
        assert_eq!(r.error, None);
        assert_eq!(r.rows.len(), 9);
        assert!(r.rows.iter().all(|m| m.verified && m.gbps.is_some()));
        assert_eq!(r.warp, Some(32));
        let report = ShapeReport {
            partial: Default::default(),
            tool: "blocksweep test".into(),
            date: "today".into(),
            protocol: quick(),
            results: vec![r],
            failures: Vec::new(),
        };
        let text = report.table(Layout::default());
        assert!(text.contains("Block shapes of 256 threads"), "{text}");
        assert!(text.contains("1x256"), "{text}");
        assert!(text.contains("rows/"), "{text}");
        // 1x256 uses 4 of every 32 bytes: 12.5 %, one figure in the table and the words.
        assert!(text.contains("32 (13%)"), "{text}");
        assert!(text.contains("(13% used"), "{text}");
        let csv = report.csv();
        assert_eq!(csv.lines().count(), 10, "{csv}");
        let back: ShapeReport = serde_json::from_str(&report.json()).unwrap();
        assert_eq!(back.results[0].rows.len(), 9);
    }

    #[test]
    fn a_shape_above_the_limits_is_skipped_by_name() {
        let (mut b, frame, reference) = host_run(64, 64, 1);
        // 2048 threads: above the host's 1024; 1x2048 also above its y limit.
        let rows = shapes::plan(2048, 64, 64).unwrap();
        let r = run_shapes(
            &mut b,
            &frame,
            &reference,
            (2048, &rows),
            &quick(),
            &mut |_| {},
        );
        assert!(r.rows.iter().all(|m| m
            .skipped
            .as_deref()
            .is_some_and(|s| s.contains("HOST_MAX_THREADS"))));
    }
}
