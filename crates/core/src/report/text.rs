//! The seed's table, per API: a header that says what was measured and how, the thirteen
//! rows, and the summary lines the seed grades on.

use tabled::builder::Builder;
use tabled::settings::object::Columns;
use tabled::settings::{Alignment, Style};

use super::{merged, Exporter, Report};
use crate::sweep::{SweepResult, SweepRow};

const MIB: f64 = 1024.0 * 1024.0;

/// Plain text for a terminal or a projector.
pub struct TableExporter;
/// The same content as GitHub-flavoured markdown.
pub struct MarkdownExporter;

impl Exporter for TableExporter {
    fn render(&self, report: &Report) -> String {
        render(report, false)
    }
}

impl Exporter for MarkdownExporter {
    fn render(&self, report: &Report) -> String {
        render(report, true)
    }
}

fn render(report: &Report, md: bool) -> String {
    let mut out = String::new();
    if md {
        out.push_str(&format!(
            "# blocksweep results\n\n{} · {}\n\n",
            report.tool, report.date
        ));
    }
    let ceiling = report.theoretical_gbps();
    for r in &report.results {
        out.push_str(&api_section(r, md, ceiling));
        out.push('\n');
    }
    if report.results.len() > 1 {
        out.push_str(&merged::render(report, md));
    }
    for f in &report.failures {
        out.push_str(&format!(
            "{}{}: FAILED: {}\n",
            if md { "- " } else { "" },
            f.api,
            f.message
        ));
    }
    out
}

pub(crate) fn table(builder: Builder, md: bool) -> String {
    let mut t = builder.build();
    if md {
        t.with(Style::markdown());
    } else {
        t.with(Style::blank());
    }
    t.modify(Columns::new(..), Alignment::right());
    t.to_string()
}

/// Milliseconds to four significant figures (0.03612, 1.234, 50.97, 123.4): a 36 µs kernel
/// needs the fourth digit for neighbouring rows to differ on screen.
pub(super) fn ms(v: f64) -> String {
    match v {
        v if v >= 100.0 => format!("{v:.1}"),
        v if v >= 10.0 => format!("{v:.2}"),
        v if v >= 1.0 => format!("{v:.3}"),
        v if v >= 0.1 => format!("{v:.4}"),
        v => format!("{v:.5}"),
    }
}

/// The row's spread: the coefficient of variation of one dispatch, "±1.2%".
pub(super) fn spread(t: &crate::measure::Timing) -> String {
    format!("±{:.1}%", t.stats.cv() * 100.0)
}

/// "0.99", with " ≈" where the row is within the noise of the fastest.
pub(super) fn of_best(row: &SweepRow) -> String {
    match row.of_best {
        Some(o) if row.ties_best => format!("{o:.2} ≈"),
        Some(o) => format!("{o:.2}"),
        None => "—".into(),
    }
}

/// GB/s, flagged with `*` when above the device's theoretical DRAM bandwidth: such a figure
/// means the frame sat in cache, not that DRAM went faster than physics.
pub(super) fn gbps(v: f64, ceiling: Option<f64>) -> String {
    match ceiling {
        Some(c) if v > c => format!("{v:.1}*"),
        _ => format!("{v:.1}"),
    }
}

fn header(r: &SweepResult, md: bool) -> String {
    let d = &r.device;
    let l = &r.limits;
    let mut h = Vec::new();
    let cc = l
        .compute_capability
        .as_ref()
        .map(|c| format!(", compute capability {}.{}", c.value.0, c.value.1))
        .unwrap_or_default();
    // Some APIs' version strings already start with the API's name ("OpenCL 3.0 PoCL ...").
    let version = if d.api_version.starts_with(&r.api.to_string()) {
        d.api_version.clone()
    } else {
        format!("{} {}", r.api, d.api_version)
    };
    h.push(format!(
        "{}: {} ({}{cc}; driver {}; {version})",
        r.api, d.name, d.kind, d.driver
    ));
    if let Some(u) = d.uuid_string() {
        h.push(format!(
            "  UUID {u}{}",
            d.pci_bus_id
                .as_ref()
                .map(|p| format!(", PCI {p}"))
                .unwrap_or_default()
        ));
    }
    let mps = l
        .multiprocessors
        .as_ref()
        .map(|m| format!("{} {}", m.value, m.name))
        .unwrap_or_else(|| "multiprocessor count not exposed".into());
    match &l.mp_model {
        Some(m) => h.push(format!("  {mps}; resident warps/SM {}, resident blocks/SM {} ({})", m.max_warps, m.max_blocks, m.source)),
        None => h.push(format!(
            "  {mps}; a {} device has no warp slots or residency limits: blk/SM, warps/SM and occ do not apply{}",
            d.kind,
            l.warp_size.as_ref().map(|w| format!("; 'warps' counts groups of {} = {}", w.name, w.value)).unwrap_or_default()
        )),
    }
    let f = &r.frame;
    h.push(format!(
        "Image: {} x {}, {} pixels, {:.1} MiB moved per pass (seed {})",
        f.width,
        f.height,
        f.pixels,
        f.bytes_per_pass as f64 / MIB,
        f.seed
    ));
    h.push(timing_line(r));
    if let Some(note) = cache_note(r) {
        h.push(note);
    }
    h.push(format!("Grid: {} ({})", r.policy, r.grid_source));
    let k = &r.kernel;
    let mut kf = vec![format!("compiled by {}", k.compiled_by)];
    if let Some(x) = &k.registers {
        kf.push(format!("{} registers/thread ({})", x.value, x.name));
    }
    if let Some(x) = &k.max_block {
        kf.push(format!("max block {} ({})", x.value, x.name));
    }
    h.push(format!("Kernel: {}", kf.join(", ")));
    if let Some(c) = &r.copy {
        h.push(format!(
            "Copy ceiling: {:.1} GB/s (read + write), {:.1} MiB copied in {} ms {} by {}, same protocol",
            c.gbps,
            c.bytes as f64 / MIB,
            ms(c.timing.stats.mean),
            spread(&c.timing),
            c.method
        ));
    }
    let sep = if md { "  \n" } else { "\n" };
    let mut s = h.join(sep);
    s.push_str("\n\n");
    s
}

/// "Timing: <discipline in words>; 140 timed dispatches per row (adaptive: >= 5 ms) after 3
/// warm-ups; <timer>, resolution 500 ns".
pub(super) fn timing_line(r: &SweepResult) -> String {
    let p = &r.protocol;
    let counts: Vec<u32> = r
        .rows
        .iter()
        .filter_map(|x| x.timing.as_ref().map(|t| t.reps))
        .collect();
    let (lo, hi) = (counts.iter().min(), counts.iter().max());
    let n = match (lo, hi) {
        (Some(a), Some(b)) if a == b => format!("{a}"),
        (Some(a), Some(b)) => format!("{a}–{b}"),
        _ => "no".into(),
    };
    let how = match p.reps {
        crate::measure::Reps::Fixed(_) => "fixed by --reps".to_string(),
        crate::measure::Reps::Adaptive {
            min, min_time_ms, ..
        } => {
            format!("adaptive: at least {min} and {min_time_ms} ms of device time per batch")
        }
    };
    format!(
        "Timing ({}): {}; {n} timed dispatches per row ({how}) after {} warm-ups; {}, resolution {} ns",
        p.discipline,
        p.discipline.describe(),
        p.warmups,
        r.timer.method,
        r.timer.resolution_ns
    )
}

/// Whether the frame's traffic fits in the last-level cache: then the run measures the cache,
/// not DRAM, and says so.
pub(super) fn cache_note(r: &SweepResult) -> Option<String> {
    let l2 = r.limits.l2_bytes.as_ref()?;
    if l2.value == 0 {
        return None;
    }
    let traffic = r.frame.bytes_per_pass;
    let ratio = traffic as f64 / l2.value as f64;
    Some(if ratio <= 1.0 {
        format!(
            "Cache: the {:.1} MiB a pass moves fits in the {:.1} MiB last-level cache ({}): this run measures the cache, not DRAM",
            traffic as f64 / MIB,
            l2.value as f64 / MIB,
            l2.name
        )
    } else if ratio < 4.0 {
        format!(
            "Cache: a pass moves {ratio:.1}x the {:.1} MiB last-level cache ({}): mostly DRAM, part cache; use a larger --size for a pure DRAM figure",
            l2.value as f64 / MIB,
            l2.name
        )
    } else {
        return None;
    })
}

fn opt<T: ToString>(v: Option<T>) -> String {
    v.map(|v| v.to_string()).unwrap_or_else(|| "—".into())
}

fn row_cells(row: &SweepRow, ceiling: Option<f64>, with_copy: bool) -> Vec<String> {
    let mut c = vec![
        row.block.to_string(),
        opt(row.warps),
        opt(row.idle_lanes),
        opt(row.blocks_per_mp),
        opt(row.warps_per_mp),
        opt(row.occupancy.map(|o| format!("{:.0}%", o * 100.0))),
        row.grid.to_string(),
    ];
    match &row.timing {
        Some(t) => {
            c.push(ms(t.stats.mean));
            c.push(spread(t));
            c.push(opt(row.gbps.map(|g| gbps(g, ceiling))));
            c.push(of_best(row));
            if with_copy {
                c.push(opt(row.of_copy.map(|o| format!("{:.0}%", o * 100.0))));
            }
            c.push(match (row.verified, &row.note) {
                (true, None) => "ok".into(),
                (true, Some(n)) => format!("ok; {n}"),
                (false, _) => "NOT VERIFIED".into(),
            });
        }
        None => {
            let n = if with_copy { 5 } else { 4 };
            c.extend(std::iter::repeat_n("—".to_string(), n));
            c.push(format!(
                "skipped: {}",
                row.skipped.as_deref().unwrap_or("not run")
            ));
        }
    }
    c
}

/// Summary lines like the seed's: the occupancy API's suggestion, the fastest row, the count
/// within 95 percent.
pub(super) fn summary(r: &SweepResult) -> Vec<String> {
    let mut s = Vec::new();
    if let Some(sg) = &r.suggestion {
        s.push(format!(
            "{} suggests {} threads per block and a grid of {} blocks.",
            sg.source, sg.block, sg.min_grid
        ));
    }
    if let Some(best) = r.best() {
        let w = r.api.block_word();
        let tied: Vec<String> = r
            .rows
            .iter()
            .filter(|x| x.ties_best && x.block != best.block)
            .map(|x| x.block.to_string())
            .collect();
        let ties = match tied.len() {
            0 => " No other row is within the measurement noise of it.".to_string(),
            _ => format!(
                " Within the measurement noise of it (≈): {}; the data cannot rank these.",
                tied.join(", ")
            ),
        };
        s.push(format!(
            "Fastest measured: {} {}s per {w} at {} ms ({:.1} GB/s{}).{ties}",
            best.block,
            r.api.words().thread,
            ms(best.mean_ms().unwrap_or(0.0)),
            best.gbps.unwrap_or(0.0),
            best.of_copy
                .map(|o| format!(", {:.0}% of copy", o * 100.0))
                .unwrap_or_default()
        ));
        s.push(format!(
            "{} of {} configurations reach at least 95 percent of that row.",
            r.rows_within(0.95),
            r.rows_run()
        ));
    }
    let past = r
        .rows
        .iter()
        .filter(|x| x.note.is_some() && x.ran())
        .count();
    if past > 0 {
        s.push(format!(
            "{past} configuration(s) ran above the kernel's own stated limit, and the driver accepted them (see the last column)."
        ));
    }
    let skipped = r.rows.iter().filter(|x| x.skipped.is_some()).count();
    if skipped > 0 {
        s.push(format!(
            "{skipped} configuration(s) skipped (reason in the last column)."
        ));
    }
    if let Some(e) = &r.error {
        s.push(format!("STOPPED: {e}"));
    }
    s
}

fn api_section(r: &SweepResult, md: bool, ceiling: Option<f64>) -> String {
    let mut out = String::new();
    if md {
        out.push_str(&format!("## {} — {}\n\n", r.api, r.device.name));
    }
    out.push_str(&header(r, md));
    let with_copy = r.copy.is_some();
    let mut b = Builder::default();
    let mut head = vec![
        "thr/blk", "warps", "idle", "blk/SM", "warps/SM", "occ", "grid", "ms", "spread", "GB/s",
        "of best",
    ];
    if with_copy {
        head.push("% copy");
    }
    head.push("check");
    b.push_record(head);
    for row in &r.rows {
        b.push_record(row_cells(row, ceiling, with_copy));
    }
    out.push_str(&table(b, md));
    out.push_str("\n\n");
    for line in summary(r) {
        out.push_str(&line);
        out.push('\n');
    }
    if r.rows
        .iter()
        .any(|x| x.gbps.zip(ceiling).is_some_and(|(g, c)| g > c))
    {
        out.push_str(&format!(
            "* above the device's theoretical DRAM bandwidth ({:.0} GB/s): the frame was cache-resident, not a DRAM figure.\n",
            ceiling.unwrap_or(0.0)
        ));
    }
    out
}
