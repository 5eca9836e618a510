//! What `blocksweep tail` prints: for one block, one table per series (a row per grid, a GB/s
//! column per API, or a table per API where their waves differ), then each API's GB/s just
//! past a whole wave against the whole wave.

use blocksweep_core::backend::DeviceKind;
use blocksweep_core::lab::report::WaveReport;
use blocksweep_core::lab::row::LabRow;
use blocksweep_core::lab::waves::{show_waves, WaveKernel, WaveResult, WaveRow};

use crate::layout::{Column, Notes, Table};
use crate::text::Doc;

use super::{
    device_lines, made_of_fields, measured_cell, measured_csv, protocol_words, stopped_line,
    LabReport,
};

/// The heading, each API's wave, and one table per series (per API where their waves
/// differ); nothing when no API ran.
fn render_series(report: &WaveReport, doc: &mut Doc) {
    let Some(first) = report.results.first() else {
        return;
    };
    doc.heading(
        2,
        &format!(
            "The tail effect: block {}, grids of {} waves",
            report.block,
            report.spec.to_string().trim_start_matches("waves:")
        ),
    );
    doc.lines(&wave_lines(report));
    let same = report
        .results
        .iter()
        .all(|r| r.wave.blocks == first.wave.blocks);
    let asks = report.spec.points().len();
    for series in WaveKernel::ALL {
        let title = format!(
            "{}, {}: {}",
            series.key(),
            match series {
                WaveKernel::GridStride =>
                    format!("frame {} x {}", first.frame.width, first.frame.height),
                WaveKernel::OnePerThread => "frame of grid x threads pixels".into(),
            },
            series.describe()
        );
        doc.heading(3, &title);
        if same {
            let all: Vec<&WaveResult> = report.results.iter().collect();
            wave_table(&all, series, asks, doc);
        } else {
            for r in &report.results {
                wave_table(&[r], series, asks, doc);
            }
        }
    }
    render_summary(report, doc);
}

/// Each API's device and its wave: "one wave = 8 blocks per SM x 132 SMs = 1056 blocks".
fn wave_lines(report: &WaveReport) -> Vec<String> {
    device_lines(report.results.iter().map(|r| {
        let w = &r.wave;
        let words = r.api.words();
        // A CPU device's unit is its compute unit (a core), whatever the API calls a GPU's.
        let unit = match r.device.kind {
            DeviceKind::Cpu => "compute unit",
            _ => words.multiprocessor,
        };
        let plural = |n: u64, word: &str| match n {
            1 => format!("{n} {word}"),
            _ => format!("{n} {word}s"),
        };
        (
            r.api,
            r.device.name.as_str(),
            format!(
                "; one wave = {} per {} x {} = {} ({})",
                plural(w.blocks_per_mp.into(), words.block),
                unit,
                plural(w.multiprocessors, unit),
                plural(w.blocks, words.block),
                w.source
            ),
        )
    }))
}

/// Just past a whole wave against the whole wave, per API and series, and what the
/// columns mean.
fn render_summary(report: &WaveReport, doc: &mut Doc) {
    let mut summary = Vec::new();
    for r in &report.results {
        summary.extend(tail_lines(r));
        summary.extend(stopped_line(r.api, &r.error));
    }
    if !summary.is_empty() {
        doc.para("Just past a whole wave, against the whole wave:");
        doc.list(&summary);
    }
    doc.para(format!(
        "slots busy: waves / ceil(waves), the share of the block slots busy over the run if \
         every block took the same time and a wave were the unit of scheduling: the sawtooth \
         to read the measured GB/s against. of best: over that series' fastest grid. Timing: \
         {}.",
        protocol_words(&report.protocol)
    ));
}

/// One series as a table: a row per grid, a GB/s column per API; `asks` points were asked
/// for, and the legend says how many grids they gave where some merged.
fn wave_table(results: &[&WaveResult], series: WaveKernel, asks: usize, doc: &mut Doc) {
    let Some(first) = results.first() else { return };
    let mut cols = vec![
        Column::right("waves\nasked").key(),
        Column::right("grid"),
        Column::right("waves").drop(2),
        Column::right("slots\nbusy").drop(1),
    ];
    if series == WaveKernel::OnePerThread {
        cols.push(Column::right("pixels").drop(3));
    }
    cols.extend(
        results
            .iter()
            .map(|r| Column::right(format!("{}\nGB/s (of best)", r.api))),
    );
    let mut t = Table::new(cols);
    let mut notes = Notes::new();
    let rows: Vec<&WaveRow> = first
        .rows
        .iter()
        .filter(|r| r.point.series == series)
        .collect();
    let grids = rows.len();
    for row in rows {
        let p = &row.point;
        let asked = match p.asked_last {
            Some(last) if last != p.asked => {
                format!("{}–{}", show_waves(p.asked), show_waves(last))
            }
            _ => show_waves(p.asked),
        };
        let mut cells = vec![
            asked,
            p.grid.to_string(),
            format!("{:.3}", p.waves),
            format!("{:.2}", row.slots_busy),
        ];
        if series == WaveKernel::OnePerThread {
            cells.push(p.pixels().to_string());
        }
        for r in results {
            let m = r
                .rows
                .iter()
                .find(|x| x.point.series == series && x.point.grid == p.grid);
            cells.push(match m {
                Some(m) => measured_cell(r.api, &m.measurement(), &mut notes),
                None => "—".into(),
            });
        }
        t.push(cells);
    }
    let mut legend = Vec::new();
    if results.len() == 1 {
        legend.push(format!(
            "{} only (its wave differs from the other APIs').",
            first.api
        ));
    }
    if grids < asks {
        legend.push(merged_words(asks, grids, first));
    }
    doc.table(&t, &legend.join(" "), &notes);
}

/// Why fewer rows than points asked: asks that round to one whole number of blocks are one
/// launch, measured once.
fn merged_words(asks: usize, grids: usize, r: &WaveResult) -> String {
    let block = r.api.words().block;
    format!(
        "{asks} points asked gave {grids} grids: a wave here is {} {block}{}, so asks that \
         round to the same number of {block}s are one launch, measured once ('waves asked' \
         gives the range each grid stands for).",
        r.wave.blocks,
        if r.wave.blocks == 1 { "" } else { "s" }
    )
}

/// "CUDA, grid_stride: 1.1 waves (grid 1162) at 0.71 of 1 wave (grid 1056); slots busy 0.55".
fn tail_lines(r: &WaveResult) -> Vec<String> {
    let mut out = Vec::new();
    for series in WaveKernel::ALL {
        // The row that stands for an ask (its first, or one merged into it).
        let at = |asked: u64| {
            r.rows.iter().find(|x| {
                let p = &x.point;
                let last = p.asked_last.unwrap_or(p.asked);
                p.series == series && (p.asked..=last).contains(&asked) && x.gbps.is_some()
            })
        };
        for k in 1..=3u64 {
            let pair = (at(k * 1000), at(k * 1000 + 100));
            if let (Some(whole), Some(past)) = pair {
                if whole.point.grid == past.point.grid {
                    continue;
                }
                let ratio = past.gbps.unwrap_or(0.0) / whole.gbps.unwrap_or(1.0);
                out.push(format!(
                    "{}, {}: {} waves (grid {}) at {:.2} of {} waves (grid {}); slots busy {:.2}",
                    r.api,
                    series.key(),
                    show_waves(k * 1000 + 100),
                    past.point.grid,
                    ratio,
                    k,
                    whole.point.grid,
                    past.slots_busy
                ));
            }
        }
    }
    out
}

impl LabReport for WaveReport {
    const COLUMNS: &'static [&'static str] = &[
        "api",
        "device",
        "block",
        "wave_blocks",
        "series",
        "waves_asked",
        "grid",
        "waves",
        "slots_busy",
        "pixels",
        "mean_ms",
        "gbps",
        "of_best",
        "verified",
        "skipped",
    ];

    made_of_fields!("tail");

    fn body(&self, doc: &mut Doc) {
        render_series(self, doc);
    }

    /// One line per (API, series, grid).
    fn csv_lines(&self) -> Vec<Vec<String>> {
        let mut rec = Vec::new();
        for r in &self.results {
            for row in &r.rows {
                let p = &row.point;
                let mut line = vec![
                    r.api.key().into(),
                    r.device.name.clone(),
                    r.wave.block.to_string(),
                    r.wave.blocks.to_string(),
                    p.series.key().into(),
                    show_waves(p.asked),
                    p.grid.to_string(),
                    format!("{:.4}", p.waves),
                    format!("{:.4}", row.slots_busy),
                    p.pixels().to_string(),
                ];
                line.extend(measured_csv(&row.measurement()));
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
    use blocksweep_core::backend::Residency;
    use blocksweep_core::lab::run::{run_waves, wave_of};
    use blocksweep_core::lab::waves::{Wave, WaveSpec};
    use blocksweep_core::BlockSize;

    /// One API's wave sweep of block 128 as its report.
    fn report_of(r: WaveResult, spec: WaveSpec) -> WaveReport {
        WaveReport {
            partial: Default::default(),
            tool: "t".into(),
            date: "d".into(),
            spec,
            block: BlockSize::linear(128),
            protocol: quick(),
            shared_wave: false,
            results: vec![r],
            failures: Vec::new(),
        }
    }

    /// The host backend's wave sweep of `spec` over a 200x100 frame, its wave from `wave`, its
    /// device said to be of `kind`.
    fn swept(
        spec: &WaveSpec,
        kind: DeviceKind,
        wave: impl FnOnce(&mut blocksweep_core::testing::HostBackend) -> Wave,
    ) -> WaveResult {
        let (mut b, frame, reference) = host_run(200, 100, 3);
        let wave = wave(&mut b);
        let (input, plan) = ((&frame, &reference[..]), (spec, &wave));
        let mut r = run_waves(&mut b, input, plan, &quick(), 5, &mut |_| {});
        r.device.kind = kind;
        r
    }

    #[test]
    fn waves_run_both_series_with_the_same_grids() {
        let spec: WaveSpec = "0.5..2:0.25".parse().unwrap();
        // The host backend models a GPU's occupancy (its device says CPU).
        let r = swept(&spec, DeviceKind::Gpu, |b| {
            let wave = wave_of(b, BlockSize::linear(128)).unwrap();
            // The host's model: sm_75, 16 registers, 4 MPs -> 8 blocks of 128 per MP.
            assert_eq!((wave.blocks_per_mp, wave.blocks), (8, 32));
            wave
        });
        assert_eq!(r.error, None);
        let grids = |series| -> Vec<u64> {
            r.rows
                .iter()
                .filter(|x| x.point.series == series)
                .map(|x| x.point.grid)
                .collect()
        };
        let gs = grids(WaveKernel::GridStride);
        assert_eq!(gs, [16, 24, 32, 40, 48, 56, 64]);
        assert_eq!(gs, grids(WaveKernel::OnePerThread));
        assert!(r.rows.iter().all(|x| x.verified), "{:?}", r.rows);
        let report = report_of(r, spec);
        let text = report.markdown(Layout::default());
        assert!(
            text.contains("one wave = 8 blocks per MP x 4 MPs = 32 blocks"),
            "{text}"
        );
        assert!(text.contains("slots busy"), "{text}");
        assert_eq!(report.csv().lines().count(), 15);
    }

    #[test]
    fn a_cpu_wave_is_one_block_per_compute_unit() {
        let w = Wave::new(BlockSize::linear(64), None, 2, DeviceKind::Cpu);
        assert_eq!(w.blocks, 2);
        let r = Residency {
            blocks_per_mp: 2,
            source: "x".into(),
        };
        assert_eq!(
            Wave::new(BlockSize::linear(1024), Some(&r), 132, DeviceKind::Gpu).blocks,
            264
        );
    }

    /// Asks that round to one grid are one row that says its range, the legend says how many
    /// grids the asks gave, and a CPU device's wave is counted in compute units, not SMs.
    #[test]
    fn merged_asks_are_said_and_a_cpu_wave_is_in_compute_units() {
        let spec: WaveSpec = "0.5..4:0.1".parse().unwrap();
        let r = swept(&spec, DeviceKind::Cpu, |_| {
            Wave::new(BlockSize::linear(128), None, 2, DeviceKind::Cpu)
        });
        let grid_stride = r
            .rows
            .iter()
            .filter(|x| x.point.series == WaveKernel::GridStride)
            .count();
        assert_eq!(grid_stride, 8);
        let report = report_of(r, spec);
        let text = report.markdown(Layout::default());
        assert!(text.contains("36 points asked gave 8 grids"), "{text}");
        assert!(text.contains("0.8–1.2"), "{text}");
        assert!(
            text.contains("per compute unit x 2 compute units = 2 blocks"),
            "{text}"
        );
        assert!(!text.contains(" MPs"), "{text}");
    }
}
