//! One API's table in its own words (the sweep's columns), its legend, and the summary lines
//! under it.

use super::answer::tied_with_best;
use super::cells::{gbps, ms, of_best, spread};
use super::header::{above_kernel_limit, header, validation_line};
use super::Doc;
use crate::layout::{Column, Notes, Table};
use blocksweep_core::backend::Api;
use blocksweep_core::report::Failure;
use blocksweep_core::sweep::{SweepResult, SweepRow};

/// Short forms of the vocabulary's words for column headers (each explained in the legend
/// under the table). A word not listed is used whole.
fn abbr(word: &str) -> &str {
    match word {
        "thread" => "thr",
        "invocation" => "inv",
        "work-item" => "wi",
        "thread block" | "block" => "blk",
        "workgroup" | "work-group" => "wg",
        "workgroup count" | "number of work-groups" => "wg count",
        "subgroup" | "sub-group" => "sg",
        "warp" => "warp",
        "compute unit" => "CU",
        "multiprocessor" => "MP",
        w => w,
    }
}

/// The column headers of one API's table, in that API's words.
pub(super) struct Heads {
    pub size: String,
    pub warps: String,
    pub per_mp: String,
    pub warps_per_mp: String,
    pub grid: String,
}

pub(super) fn heads(api: Api) -> Heads {
    let w = api.words();
    let mp = abbr(w.multiprocessor);
    let warps = match abbr(w.warp) {
        "warp" => "warps".to_string(),
        _ => format!("{}s", w.warp),
    };
    let warp_short = match abbr(w.warp) {
        "warp" => "warps",
        s => s,
    };
    Heads {
        size: format!("{}/{}", abbr(w.thread), abbr(w.block)),
        warps,
        per_mp: format!("{}/{mp}", abbr(w.block)),
        warps_per_mp: format!("{warp_short}/{mp}"),
        // "wg count" on two lines: the cells are numbers of four to six digits.
        grid: abbr(w.grid).replace(' ', "\n"),
    }
}

fn opt<T: ToString>(v: Option<T>) -> String {
    v.map(|v| v.to_string()).unwrap_or_else(|| "—".into())
}

/// Which optional columns a result's table has.
struct Shape {
    residency: bool,
    copy: bool,
}

fn shape(r: &SweepResult) -> Shape {
    Shape {
        residency: r.limits.mp_model.is_some() || r.rows.iter().any(|x| x.occupancy.is_some()),
        copy: r.copy.is_some(),
    }
}

fn row_cells(
    row: &SweepRow,
    ceiling: Option<f64>,
    s: &Shape,
    notes: &mut Notes,
    words: &blocksweep_core::api::Vocabulary,
) -> Vec<String> {
    let mut c = vec![row.block.to_string(), opt(row.warps), opt(row.idle_lanes)];
    if s.residency {
        c.push(opt(row.blocks_per_mp));
        c.push(opt(row.warps_per_mp));
        c.push(opt(row.occupancy.map(|o| format!("{:.0}%", o * 100.0))));
    }
    c.push(row.grid.to_string());
    match &row.timing {
        Some(t) => {
            c.push(ms(t.stats.mean));
            c.push(spread(t));
            c.push(opt(row.gbps.map(|g| gbps(g, ceiling))));
            c.push(of_best(row));
            if s.copy {
                c.push(opt(row.of_copy.map(|o| format!("{:.0}%", o * 100.0))));
            }
            c.push(match (row.verified, &row.note) {
                (true, None) => "ok".into(),
                (true, Some(n)) => format!("ok {}", notes.mark(format!("{}: {n}", row.block))),
                (false, Some(n)) if n.starts_with("not checked") => "not checked".into(),
                (false, _) => "NOT VERIFIED".into(),
            });
        }
        None => {
            let n = if s.copy { 5 } else { 4 };
            c.extend(std::iter::repeat_n("—".to_string(), n));
            // A row that ran and was found wrong has no time, and its note says why.
            let wrong = row.note.as_ref().filter(|_| row.skipped.is_none());
            c.push(match wrong {
                Some(n) => format!(
                    "WRONG {}",
                    notes.mark(format!("{} {}s: {n}", row.block, words.thread))
                ),
                None => {
                    let why = row.skipped.as_deref().unwrap_or("not run");
                    format!(
                        "skipped {}",
                        notes.mark(format!("{} {}s: skipped: {why}", row.block, words.thread))
                    )
                }
            });
        }
    }
    c
}

/// Summary lines: the occupancy API's suggestion, the fastest row, the count
/// within 95 percent.
pub(super) fn summary(r: &SweepResult, verbose: bool) -> Vec<String> {
    let mut s = Vec::new();
    let w = r.api.words();
    if let Some(sg) = &r.suggestion {
        s.push(format!(
            "{} suggests {} {}s per {} and a {} of {} {}s.",
            sg.source, sg.block, w.thread, w.block, w.grid, sg.min_grid, w.block
        ));
    }
    if let Some(best) = r.best().filter(|_| verbose) {
        let tied = tied_with_best(r);
        let ties = match tied.len() {
            0 => " No other row is within the measurement noise of it.".to_string(),
            _ => format!(
                " Within the measurement noise of it (≈): {}; the data cannot rank these.",
                tied.join(", ")
            ),
        };
        s.push(format!(
            "Fastest measured: {} {}s per {} at {} ms ({:.1} GB/s{}).{ties}",
            best.block,
            w.thread,
            w.block,
            ms(best.mean_ms().unwrap_or(0.0)),
            best.gbps.unwrap_or(0.0),
            best.of_copy
                .map(|o| format!(", {:.0}% of copy", o * 100.0))
                .unwrap_or_default()
        ));
        s.push(format!(
            "{} of {} configurations reach at least 95 percent of that row.",
            r.rows_good(),
            r.rows_run()
        ));
    }
    let past = above_kernel_limit(r).count();
    if past > 0 {
        s.push(format!(
            "{past} configuration(s) ran above the kernel's own stated limit, and the driver accepted them (notes under the table)."
        ));
    }
    let skipped = r.rows.iter().filter(|x| x.skipped.is_some()).count();
    if skipped > 0 {
        s.push(format!(
            "{skipped} configuration(s) skipped (reasons under the table)."
        ));
    }
    if let Some(e) = &r.error {
        s.push(format!("STOPPED: {e}"));
    }
    s
}

/// The legend under one API's table, in its words.
fn legend(r: &SweepResult, h: &Heads, s: &Shape) -> String {
    let w = r.api.words();
    let warp_size = r
        .limits
        .warp_size
        .as_ref()
        .map(|x| format!(" of {} ({})", x.value, x.name))
        .unwrap_or_default();
    let mut parts = vec![
        format!("{}: {}s per {}", h.size, w.thread, w.block),
        format!("{}: {}s{warp_size} per {}", h.warps, w.warp, w.block),
        format!("idle: lanes of the last {} that never run", w.warp),
    ];
    if s.residency {
        parts.push(format!(
            "{}, {}: resident per {}",
            h.per_mp, h.warps_per_mp, w.multiprocessor
        ));
        parts.push(format!(
            "occ: occupancy ({}s resident ÷ the {}'s {} slots)",
            w.warp, w.multiprocessor, w.warp
        ));
    }
    parts.push(format!(
        "{}: {} ({}s launched)",
        h.grid.replace('\n', " "),
        w.grid,
        w.block
    ));
    parts.push("ms: mean per dispatch; spread: ± one dispatch's coefficient of variation".into());
    parts.push(
        "of best: fastest time ÷ this row's, rounded down (≈: within the measurement noise of it)"
            .into(),
    );
    if s.copy {
        parts.push("% copy: GB/s ÷ the copy ceiling's".into());
    }
    format!("{}.", parts.join("; "))
}

/// One API in full: its header, its table, the summary lines under it.
pub(super) fn api_section(
    r: &SweepResult,
    ceiling: Option<f64>,
    failures: &[Failure],
    doc: &mut Doc,
) {
    if doc.md {
        doc.heading(2, &format!("{} — {}", r.api, r.device.name));
    }
    let mut h = header(r);
    h.extend(validation_line(r, failures));
    doc.lines(&h);
    api_table(r, ceiling, doc);
}

/// One API's table in its own words, the legend and notes under it, then the summary lines
/// (in a short report, only those the answer does not already say).
pub(super) fn api_table(r: &SweepResult, ceiling: Option<f64>, doc: &mut Doc) {
    let s = shape(r);
    let h = heads(r.api);
    let mut t = Table::new(columns(&h, &s));
    let mut notes = Notes::new();
    for row in &r.rows {
        t.push(row_cells(row, ceiling, &s, &mut notes, r.api.words()));
    }
    doc.table(&t, &legend(r, &h, &s), &notes);
    let mut sum = summary(r, doc.layout.verbose);
    if r.rows
        .iter()
        .any(|x| x.gbps.zip(ceiling).is_some_and(|(g, c)| g > c))
    {
        sum.push(format!(
            "* above the device's theoretical DRAM bandwidth ({:.0} GB/s): the frame was cache-resident, not a DRAM figure.",
            ceiling.unwrap_or(0.0)
        ));
    }
    doc.lines(&sum);
}

/// The table's columns, with the order in which a narrow terminal drops them.
fn columns(h: &Heads, s: &Shape) -> Vec<Column> {
    let mut cols = vec![
        Column::right(h.size.clone()),
        Column::right(h.warps.clone()).drop(2),
        Column::right("idle").drop(1),
    ];
    if s.residency {
        cols.push(Column::right(h.per_mp.clone()));
        cols.push(Column::right(h.warps_per_mp.clone()).drop(5));
        cols.push(Column::right("occ"));
    }
    cols.push(Column::right(h.grid.clone()));
    cols.push(Column::right("ms"));
    cols.push(Column::right("spread").drop(3));
    cols.push(Column::right("GB/s"));
    cols.push(Column::right("of best"));
    if s.copy {
        cols.push(Column::right("% copy").drop(4));
    }
    cols.push(Column::left("check"));
    cols
}
