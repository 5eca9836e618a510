//! The lab's reports, in every format the commands offer ([`Render`]): the shape sweep
//! (`blocksweep shapes`), the grid sweep (`blocksweep tail`), and the resource rows that
//! `validate` adds under its table.

use serde::{Deserialize, Serialize};

use crate::backend::Api;
use crate::blocks::BlockSize;
use crate::measure::Protocol;
use crate::report::layout::{Column, Layout, Notes, Table};
use crate::report::text::Doc;
use crate::report::{to_csv, Envelope, Failure, Render};
use crate::validate::Outcome;

use super::resources::{ResourceResult, RESOURCE_CHECKS};
use super::shapes::{ShapeMeasured, ShapeResult};
use super::waves::{show_waves, Series, WaveResult, WaveRow, WaveSpec};

/// "12.34" GB/s, with the row's share of the API's best: "3210.5 (0.97)".
fn gbps_cell(gbps: Option<f64>, of_best: Option<f64>) -> String {
    match (gbps, of_best) {
        (Some(g), Some(o)) => format!("{g:.1} ({o:.2})"),
        (Some(g), None) => format!("{g:.1}"),
        _ => "—".into(),
    }
}

fn protocol_words(p: &Protocol) -> String {
    let reps = match p.reps {
        crate::measure::Reps::Fixed(n) => format!("{n} timed dispatches"),
        crate::measure::Reps::Adaptive {
            min, min_time_ms, ..
        } => format!(
            "at least {min} timed dispatches, aiming at {min_time_ms} ms of device time from the \
             warm-ups' pace"
        ),
    };
    format!(
        "{} warm-ups, then {reps} per row ({} timing), on each API's device clock; the output \
         poisoned with NaN before each row and every pixel verified after it",
        p.warmups, p.discipline
    )
}

fn device_lines<'a>(items: impl Iterator<Item = (Api, &'a str, String)>) -> Vec<String> {
    items
        .map(|(api, name, extra)| format!("{api}: {name}{extra}"))
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Shapes

/// What `blocksweep shapes` prints: every API's shape sweep for each thread count.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ShapeReport {
    pub tool: String,
    pub date: String,
    pub protocol: Protocol,
    /// Per thread count, per API, in the order run.
    pub results: Vec<ShapeResult>,
    pub failures: Vec<Failure>,
}

impl ShapeReport {
    /// Whether any API's sweep stopped on an error (a wrong pixel, a driver error).
    pub fn failed(&self) -> bool {
        !self.failures.is_empty() || self.results.iter().any(|r| r.error.is_some())
    }

    fn thread_counts(&self) -> Vec<u32> {
        let mut t: Vec<u32> = self.results.iter().map(|r| r.threads).collect();
        t.dedup();
        t
    }

    fn render_text(&self, layout: Layout, md: bool) -> String {
        let mut doc = Doc::new(layout, md);
        if md {
            doc.heading(1, "blocksweep shapes");
            doc.para(format!("{} · {}", self.tool, self.date));
        }
        for threads in self.thread_counts() {
            let results: Vec<&ShapeResult> = self
                .results
                .iter()
                .filter(|r| r.threads == threads)
                .collect();
            render_shapes(threads, &results, &self.protocol, &mut doc);
        }
        for f in &self.failures {
            doc.para(format!("{}: {}", f.api, f.message));
        }
        doc.finish()
    }
}

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
    let mut t = Table::new(cols);
    let mut notes = Notes::new();
    let mut words: Vec<String> = Vec::new();
    for (i, row) in first.rows.iter().enumerate() {
        let b = row.row.block;
        let pixels = f.pixels.max(1);
        let idle = row.row.threads.saturating_sub(pixels) as f64 / row.row.threads.max(1) as f64;
        let k = warp.map(|w| super::shapes::coalescing(b, w));
        let mut cells = vec![
            format!("{}x{}", b.x, b.y),
            format!("{}x{}", row.row.grid.x, row.row.grid.y),
            format!("{:.1}%", idle * 100.0),
            k.as_ref().map_or("—".into(), |k| k.rows.to_string()),
            k.as_ref()
                .map_or("—".into(), |k| k.bytes_per_row.to_string()),
            k.as_ref().map_or("—".into(), |k| {
                format!("{} ({:.0}%)", k.sectors, k.sector_use * 100.0)
            }),
        ];
        if let Some(k) = &k {
            let w = format!("{}x{}: {}", b.x, b.y, k.words);
            if !words.contains(&w) {
                words.push(w);
            }
        }
        let mut beyond = Vec::new();
        for r in results {
            cells.push(match r.rows.get(i) {
                Some(m) => shape_cell(r.api, m, &mut notes),
                None => "—".into(),
            });
            let parts = super::shapes::beyond_parts(r.api, b);
            if !parts.is_empty() {
                beyond.push(format!("{}: {}", r.api, parts.join(", ")));
            }
        }
        cells.push(if beyond.is_empty() {
            "—".into()
        } else {
            beyond.join("; ")
        });
        t.push(cells);
    }
    let legend = format!(
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
    );
    doc.table(&t, &legend, &notes);
    if !words.is_empty() {
        doc.para("What each shape does to a warp's loads:");
        doc.list(&words);
    }
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
                "{}: fastest {} at {:.1} GB/s; slowest {} at {:.2} of it.",
                r.api,
                shape_name(best),
                best.gbps.unwrap_or(0.0),
                shape_name(worst),
                worst.of_best.unwrap_or(0.0)
            ));
        }
        if let Some(e) = &r.error {
            summary.push(format!("{}: stopped: {e}", r.api));
        }
    }
    doc.lines(&summary);
}

fn shape_name(m: &ShapeMeasured) -> String {
    format!("{}x{}", m.row.block.x, m.row.block.y)
}

fn shape_cell(api: Api, m: &ShapeMeasured, notes: &mut Notes) -> String {
    match (&m.skipped, m.gbps) {
        (Some(why), _) if why == "WRONG" => "WRONG".to_string(),
        (Some(why), _) => format!("skipped {}", notes.mark(format!("{api}: {why}"))),
        (None, g) => gbps_cell(g, m.of_best),
    }
}

/// "Vulkan promises (128, 128, 64) and 128 threads per workgroup": each API's promise, for
/// the legend of the "beyond" column.
fn promises(results: &[&ShapeResult]) -> String {
    let mut out = Vec::new();
    for r in results {
        let dims = super::guaranteed_block_dims(r.api);
        let threads = super::guaranteed_threads(r.api);
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

impl Render for ShapeReport {
    fn text(&self, layout: Layout, md: bool) -> String {
        self.render_text(layout, md)
    }
    /// One line per (API, thread count, shape).
    fn csv(&self) -> String {
        let mut rec: Vec<Vec<String>> = vec![[
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
        ]
        .map(String::from)
        .to_vec()];
        let opt = |v: Option<String>| v.unwrap_or_default();
        for r in &self.results {
            for m in &r.rows {
                let k = m.coalescing.as_ref();
                rec.push(vec![
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
                    opt(m.timing.as_ref().map(|t| format!("{:.6}", t.stats.mean))),
                    opt(m.gbps.map(|g| format!("{g:.2}"))),
                    opt(m.of_best.map(|o| format!("{o:.4}"))),
                    m.verified.to_string(),
                    opt(m.skipped.clone()),
                    opt(m.beyond_guarantee.clone()),
                ]);
            }
        }
        to_csv(&rec)
    }
    fn json(&self) -> String {
        let devices = self.results.iter().map(|r| &r.device);
        Envelope::at(&self.tool, &self.date, "shapes", devices).document(self)
    }
}

// ---------------------------------------------------------------------------------------------
// Waves

/// What `blocksweep tail` prints: every API's grid sweep for one block.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WaveReport {
    pub tool: String,
    pub date: String,
    pub spec: WaveSpec,
    pub block: BlockSize,
    pub protocol: Protocol,
    /// Whether every API ran the same grids (one physical device, one wave).
    pub shared_wave: bool,
    pub results: Vec<WaveResult>,
    pub failures: Vec<Failure>,
}

impl WaveReport {
    pub fn failed(&self) -> bool {
        !self.failures.is_empty() || self.results.iter().any(|r| r.error.is_some())
    }

    fn render_text(&self, layout: Layout, md: bool) -> String {
        let mut doc = Doc::new(layout, md);
        if md {
            doc.heading(1, "blocksweep tail");
            doc.para(format!("{} · {}", self.tool, self.date));
        }
        let Some(first) = self.results.first() else {
            for f in &self.failures {
                doc.para(format!("{}: {}", f.api, f.message));
            }
            return doc.finish();
        };
        doc.heading(
            2,
            &format!(
                "The tail effect: block {}, grids of {} waves",
                self.block,
                self.spec.to_string().trim_start_matches("waves:")
            ),
        );
        doc.lines(&device_lines(self.results.iter().map(|r| {
            let w = &r.wave;
            let words = r.api.words();
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
                    words.multiprocessor,
                    plural(w.multiprocessors, words.multiprocessor),
                    plural(w.blocks, words.block),
                    w.source
                ),
            )
        })));
        let same = self
            .results
            .iter()
            .all(|r| r.wave.blocks == first.wave.blocks);
        for series in Series::ALL {
            let title = format!(
                "{}, {}: {}",
                series.key(),
                match series {
                    Series::GridStride =>
                        format!("frame {} x {}", first.frame.width, first.frame.height),
                    Series::OnePerThread => "frame of grid x threads pixels".into(),
                },
                series.describe()
            );
            doc.heading(3, &title);
            if same {
                let all: Vec<&WaveResult> = self.results.iter().collect();
                wave_table(&all, series, &mut doc);
            } else {
                for r in &self.results {
                    wave_table(&[r], series, &mut doc);
                }
            }
        }
        let mut summary = Vec::new();
        for r in &self.results {
            summary.extend(tail_lines(r));
            if let Some(e) = &r.error {
                summary.push(format!("{}: stopped: {e}", r.api));
            }
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
            protocol_words(&self.protocol)
        ));
        for f in &self.failures {
            doc.para(format!("{}: {}", f.api, f.message));
        }
        doc.finish()
    }
}

/// One series as a table: a row per grid, a GB/s column per API.
fn wave_table(results: &[&WaveResult], series: Series, doc: &mut Doc) {
    let Some(first) = results.first() else { return };
    let mut cols = vec![
        Column::right("waves\nasked").key(),
        Column::right("grid"),
        Column::right("waves").drop(2),
        Column::right("slots\nbusy").drop(1),
    ];
    if series == Series::OnePerThread {
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
    for row in rows {
        let p = &row.point;
        let mut cells = vec![
            show_waves(p.asked),
            p.grid.to_string(),
            format!("{:.3}", p.waves),
            format!("{:.2}", row.slots_busy),
        ];
        if series == Series::OnePerThread {
            cells.push(p.pixels().to_string());
        }
        for r in results {
            let m = r
                .rows
                .iter()
                .find(|x| x.point.series == series && x.point.grid == p.grid);
            cells.push(match m {
                Some(m) => match &m.skipped {
                    Some(w) if w == "WRONG" => "WRONG".into(),
                    Some(w) => format!("skipped {}", notes.mark(format!("{}: {w}", r.api))),
                    None => gbps_cell(m.gbps, m.of_best),
                },
                None => "—".into(),
            });
        }
        t.push(cells);
    }
    let legend = if results.len() == 1 {
        format!(
            "{} only (its wave differs from the other APIs').",
            first.api
        )
    } else {
        String::new()
    };
    doc.table(&t, &legend, &notes);
}

/// "CUDA, grid_stride: 1.1 waves (grid 1162) at 0.71 of 1 wave (grid 1056); slots busy 0.55".
fn tail_lines(r: &WaveResult) -> Vec<String> {
    let mut out = Vec::new();
    for series in Series::ALL {
        let at = |asked: u64| {
            r.rows
                .iter()
                .find(|x| x.point.series == series && x.point.asked == asked && x.gbps.is_some())
        };
        for k in 1..=3u64 {
            if let (Some(whole), Some(past)) = (at(k * 1000), at(k * 1000 + 100)) {
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

impl Render for WaveReport {
    fn text(&self, layout: Layout, md: bool) -> String {
        self.render_text(layout, md)
    }
    /// One line per (API, series, grid).
    fn csv(&self) -> String {
        let mut rec: Vec<Vec<String>> = vec![[
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
        ]
        .map(String::from)
        .to_vec()];
        let opt = |v: Option<String>| v.unwrap_or_default();
        for r in &self.results {
            for row in &r.rows {
                let p = &row.point;
                rec.push(vec![
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
                    opt(row.timing.as_ref().map(|t| format!("{:.6}", t.stats.mean))),
                    opt(row.gbps.map(|g| format!("{g:.2}"))),
                    opt(row.of_best.map(|o| format!("{o:.4}"))),
                    row.verified.to_string(),
                    opt(row.skipped.clone()),
                ]);
            }
        }
        to_csv(&rec)
    }
    fn json(&self) -> String {
        let devices = self.results.iter().map(|r| &r.device);
        Envelope::at(&self.tool, &self.date, "tail", devices).document(self)
    }
}

// ---------------------------------------------------------------------------------------------
// Resources (validate's second table)

/// The cell for one API's answer to one resource check; its own words as a footnote.
fn resource_cell(r: &ResourceResult, notes: &mut Notes) -> String {
    let api = r.api;
    let regs = r
        .registers
        .filter(|_| r.assumption.kernel == super::resources::ProbeKernel::Registers)
        .map(|n| format!(", {n} regs"))
        .unwrap_or_default();
    let launch = r.launch_text();
    match (&r.outcome, &r.limits_say) {
        (Outcome::Ran, Some(l)) => format!(
            "runs, verified ({launch}{regs}) {}",
            notes.mark(format!("{api} ran it although {l}"))
        ),
        (Outcome::Ran, None) => format!("runs, verified ({launch}{regs})"),
        (Outcome::Wrong { index }, _) => format!(
            "WRONG {}",
            notes.mark(format!("{api} ran {launch} but left pixel {index} wrong"))
        ),
        (Outcome::Rejected { message }, _) => format!(
            "rejected ({launch}{regs}) {}",
            notes.mark(format!("{api}: {message}"))
        ),
        (Outcome::Failed { message }, _) => {
            format!("FAILED {}", notes.mark(format!("{api}: {message}")))
        }
        (Outcome::Unchecked { why }, _) => {
            format!("runs, not checked {}", notes.mark(format!("{api}: {why}")))
        }
        (Outcome::NotLaunched { why }, _) => {
            format!("not launched {}", notes.mark(format!("{api}: {why}")))
        }
    }
}

/// The resource rows of `validate`: one row per check, one column per API, the APIs' words and
/// who guarantees each check under the table. Nothing when there are no results.
pub(crate) fn render_resources(results: &[ResourceResult], apis: &[Api], doc: &mut Doc) {
    if results.is_empty() {
        return;
    }
    doc.heading(3, "Resources: shared memory and registers per block");
    let mut cols = vec![Column::right("#"), Column::left("assumption").wrap(24)];
    cols.extend(
        apis.iter()
            .map(|api| Column::left(api.to_string()).wrap(16)),
    );
    let mut t = Table::new(cols);
    let mut notes = Notes::new();
    let mut who = Vec::new();
    for (i, check) in RESOURCE_CHECKS.iter().enumerate() {
        let mut row = vec![format!("R{}", i + 1), check.claim.to_string()];
        for api in apis {
            let r = results
                .iter()
                .find(|r| r.api == *api && r.assumption.claim == check.claim);
            row.push(r.map_or_else(|| "—".into(), |r| resource_cell(r, &mut notes)));
        }
        t.push(row);
        who.push(format!("R{}. {}", i + 1, check.guarantee));
    }
    doc.raw(t.to_text(doc.layout, doc.md));
    if !notes.is_empty() {
        doc.raw(format!(
            "What each API said:\n{}",
            notes.render(doc.layout, doc.md)
        ));
    }
    let mut who_text = vec!["Who guarantees it:".to_string()];
    who_text.extend(who);
    doc.lines(&who_text);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::{DeviceKind, Residency};
    use crate::frame::Frame;
    use crate::lab::run::{run_resources, run_shapes, run_waves, wave_of};
    use crate::lab::shapes;
    use crate::lab::waves::Wave;
    use crate::measure::Reps;
    use crate::testing::{HostBackend, TEST_API_A};

    fn quick() -> Protocol {
        Protocol {
            warmups: 0,
            reps: Reps::Fixed(2),
            ..Protocol::default()
        }
    }

    #[test]
    fn shapes_run_verify_and_render_on_the_host_backend() {
        let mut b = HostBackend::new(TEST_API_A);
        let frame = Frame::generate(160, 90, 1);
        let reference = frame.reference();
        let rows = shapes::plan(256, 160, 90).unwrap();
        let r = run_shapes(&mut b, &frame, &reference, 256, &rows, &quick());
        assert_eq!(r.error, None);
        assert_eq!(r.rows.len(), 9);
        assert!(r.rows.iter().all(|m| m.verified && m.gbps.is_some()));
        assert_eq!(r.warp, Some(32));
        let report = ShapeReport {
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
        let csv = report.csv();
        assert_eq!(csv.lines().count(), 10, "{csv}");
        let back: ShapeReport = serde_json::from_str(&report.json()).unwrap();
        assert_eq!(back.results[0].rows.len(), 9);
    }

    #[test]
    fn a_shape_above_the_limits_is_skipped_by_name() {
        let mut b = HostBackend::new(TEST_API_A);
        let frame = Frame::generate(64, 64, 1);
        let reference = frame.reference();
        // 2048 threads: above the host's 1024; 1x2048 also above its y limit.
        let rows = shapes::plan(2048, 64, 64).unwrap();
        let r = run_shapes(&mut b, &frame, &reference, 2048, &rows, &quick());
        assert!(r.rows.iter().all(|m| m
            .skipped
            .as_deref()
            .is_some_and(|s| s.contains("HOST_MAX_THREADS"))));
    }

    #[test]
    fn waves_run_both_series_with_the_same_grids() {
        let mut b = HostBackend::new(TEST_API_A);
        let wave = wave_of(&mut b, BlockSize::linear(128)).unwrap();
        // The host's model: sm_75, 16 registers, 4 MPs -> 8 blocks of 128 per MP.
        assert_eq!((wave.blocks_per_mp, wave.blocks), (8, 32));
        let frame = Frame::generate(200, 100, 3);
        let reference = frame.reference();
        let spec: WaveSpec = "0.5..2:0.25".parse().unwrap();
        let r = run_waves(&mut b, &frame, &reference, &spec, &wave, &quick(), 5);
        assert_eq!(r.error, None);
        let gs: Vec<u64> = r
            .rows
            .iter()
            .filter(|x| x.point.series == Series::GridStride)
            .map(|x| x.point.grid)
            .collect();
        let op: Vec<u64> = r
            .rows
            .iter()
            .filter(|x| x.point.series == Series::OnePerThread)
            .map(|x| x.point.grid)
            .collect();
        assert_eq!(gs, [16, 24, 32, 40, 48, 56, 64]);
        assert_eq!(gs, op);
        assert!(r.rows.iter().all(|x| x.verified), "{:?}", r.rows);
        let report = WaveReport {
            tool: "t".into(),
            date: "d".into(),
            spec,
            block: BlockSize::linear(128),
            protocol: quick(),
            shared_wave: false,
            results: vec![r],
            failures: Vec::new(),
        };
        let text = report.markdown(Layout::default());
        assert!(
            text.contains("one wave = 8 blocks per MP x 4 MPs = 32 blocks"),
            "{text}"
        );
        assert!(text.contains("slots busy"), "{text}");
        assert_eq!(report.csv().lines().count(), 15);
    }

    #[test]
    fn resources_name_what_each_limit_says() {
        let mut b = HostBackend::new(TEST_API_A);
        let frame = Frame::generate(509, 253, 3);
        let reference = frame.reference();
        let r = run_resources(&mut b, &frame, &reference).unwrap();
        assert_eq!(r.len(), RESOURCE_CHECKS.len());
        let outcome = |i: usize| &r[i].outcome;
        // 16, 32, 48 KiB and the limit (48 KiB) run; 49 KiB is refused by the "API".
        for x in &r[..4] {
            assert_eq!(x.outcome, Outcome::Ran, "{x:?}");
        }
        assert!(matches!(outcome(4), Outcome::Rejected { .. }), "{:?}", r[4]);
        assert!(r[4].limits_say.as_deref().unwrap().contains("HOST_SHARED"));
        // The register-heavy kernel at the device's 1024: 100 x 1024 registers > 65536.
        assert!(matches!(outcome(6), Outcome::Rejected { .. }), "{:?}", r[6]);
        let json = serde_json::to_value(&r[4]).unwrap();
        assert_eq!(json["assumption"]["launch"]["shared_bytes"], 49 << 10);
        let mut doc = Doc::new(Layout::default(), false);
        render_resources(&r, &[TEST_API_A], &mut doc);
        let text = doc.finish();
        assert!(text.contains("R5"), "{text}");
        assert!(text.contains("HOST_OUT_OF_RESOURCES"), "{text}");
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
}
