//! A sweep report for people: the answer first (the fastest size per API, the sizes within
//! 95 % everywhere), one paragraph on what a CPU device can and cannot teach, then per API the
//! header that says what was measured and how, the seed's table in the API's own words, and
//! the summary lines the seed grades on; with several APIs, the merged table last.

use super::layout::{wrap, Column, Layout, Notes, Table};
use super::{merged, Envelope, Failure, Render, Report};
use crate::backend::{Api, DeviceKind};
use crate::sweep::{SweepResult, SweepRow};

const MIB: f64 = 1024.0 * 1024.0;

impl Render for Report {
    fn text(&self, layout: Layout, md: bool) -> String {
        render(self, layout, md)
    }
    fn csv(&self) -> String {
        super::csv::render(self)
    }
    /// The envelope (the run's own tool and date), then the report's fields.
    fn json(&self) -> String {
        let devices = self.results.iter().map(|r| &r.device);
        Envelope::at(&self.tool, &self.date, "sweep", devices).document(self)
    }
}

/// Paragraphs separated by blank lines, each wrapped at the layout's width.
pub(crate) struct Doc {
    parts: Vec<String>,
    pub(crate) layout: Layout,
    pub(crate) md: bool,
}

impl Doc {
    pub(crate) fn new(layout: Layout, md: bool) -> Doc {
        Doc {
            parts: Vec::new(),
            layout,
            md,
        }
    }

    /// Prose: wrapped.
    pub(crate) fn para(&mut self, text: impl AsRef<str>) {
        let t = text.as_ref().trim_end_matches('\n');
        if !t.is_empty() {
            self.parts.push(wrap(t, self.layout.width));
        }
    }

    /// Lines of prose kept as lines (a markdown hard break between them).
    pub(crate) fn lines(&mut self, lines: &[String]) {
        let sep = if self.md { "  \n" } else { "\n" };
        self.para(lines.join(sep));
    }

    /// A list: "- item" each (markdown renders it as one).
    pub(crate) fn list(&mut self, items: &[String]) {
        let text: Vec<String> = items.iter().map(|i| format!("- {i}")).collect();
        self.para(text.join("\n"));
    }

    /// Already laid out (a table).
    pub(crate) fn raw(&mut self, text: impl Into<String>) {
        let t: String = text.into();
        if !t.trim().is_empty() {
            self.parts.push(t.trim_end_matches('\n').to_string());
        }
    }

    /// A heading: `#`s in markdown, an underlined line in text.
    pub(crate) fn heading(&mut self, level: usize, text: &str) {
        match self.md {
            true => self.parts.push(format!("{} {text}", "#".repeat(level))),
            false => {
                let t = wrap(text, self.layout.width);
                let under = if level <= 1 { '=' } else { '-' };
                let n = super::layout::max_line_width(&t);
                self.parts
                    .push(format!("{t}\n{}", under.to_string().repeat(n)));
            }
        }
    }

    /// A table with the footnotes and legend under it.
    pub(crate) fn table(&mut self, table: &Table, legend: &str, notes: &Notes) {
        self.raw(table.to_text(self.layout, self.md));
        let mut under = Vec::new();
        if !legend.is_empty() {
            under.push(wrap(legend, self.layout.width));
        }
        if !notes.is_empty() {
            under.push(notes.render(self.layout, self.md));
        }
        if !under.is_empty() {
            self.parts
                .push(under.join(if self.md { "\n\n" } else { "\n" }));
        }
    }

    pub(crate) fn finish(self) -> String {
        let mut s = self.parts.join("\n\n");
        s.push('\n');
        s
    }
}

fn render(report: &Report, layout: Layout, md: bool) -> String {
    let mut doc = Doc::new(layout, md);
    if md {
        doc.heading(1, "blocksweep results");
        doc.para(format!("{} · {}", report.tool, report.date));
    }
    answer(report, &mut doc);
    if let Some(p) = cpu_paragraph(report) {
        doc.para(p);
    }
    let ceiling = report.theoretical_gbps();
    for r in &report.results {
        api_section(r, ceiling, &report.failures, &mut doc);
    }
    if report.results.len() > 1 {
        merged::render(report, &mut doc);
    }
    let failed: Vec<String> = report
        .failures
        .iter()
        .map(|f| format!("{}: FAILED: {}", f.api, f.message))
        .collect();
    match md {
        true if !failed.is_empty() => doc.list(&failed),
        _ => doc.lines(&failed),
    }
    doc.finish()
}

/// The answer, before any table: which sizes are good on every API (several APIs), and each
/// API's fastest size with the sizes the noise cannot tell from it.
fn answer(report: &Report, doc: &mut Doc) {
    let ran: Vec<&SweepResult> = report
        .results
        .iter()
        .filter(|r| r.best().is_some())
        .collect();
    let mut items = Vec::new();
    if let Some(a) = report.portable.as_ref().filter(|a| a.apis.len() > 1) {
        items.extend(a.sentences());
    }
    if ran.is_empty() && items.is_empty() {
        return;
    }
    let name_device = ran.len() == 1 || !report.shared_plan;
    for r in &ran {
        items.push(fastest_sentence(r, name_device));
    }
    let title = match doc.md {
        true => "**Answer**",
        false => "Answer",
    };
    let text: Vec<String> = items.iter().map(|i| format!("- {i}")).collect();
    doc.para(format!("{title}\n{}", text.join("\n")));
    if let Some(w) = noise_warning(report) {
        doc.para(w);
    }
}

/// Said once when the spreads are past what can rank the rows (hyperfine's outlier warning):
/// some row reads below 95 % of its best yet the noise cannot tell it from the best.
pub(crate) fn noise_warning(report: &Report) -> Option<String> {
    let unranked: Vec<String> = report
        .results
        .iter()
        .flat_map(|r| {
            r.rows_unranked()
                .into_iter()
                .map(move |x| format!("{} {}", r.api, x.block))
        })
        .collect();
    if unranked.is_empty() {
        return None;
    }
    let (api, row, cv) = report
        .results
        .iter()
        .filter_map(|r| r.widest_spread().map(|(x, cv)| (r.api, x.block, cv)))
        .max_by(|a, b| a.2.total_cmp(&b.2))?;
    Some(format!(
        "Warning: the measurements are too noisy to rank every row. Spreads reach ±{:.1}% \
         ({api} {row}), and {} row(s) read below 95 % of their best yet cannot be told from \
         it (marked ?): {}. Nothing counts them as good. Run on a quieter machine (nothing \
         else busy), or give each batch more device time (--min-time 20, in ms, or --reps).",
        cv * 100.0,
        unranked.len(),
        unranked.join(", ")
    ))
}

/// "OpenCL (on pthread-haswell-AMD EPYC): fastest 100 work-items per work-group, 0.3433 ms
/// (10.7 GB/s); within the noise of it (≈): 96, 160; 1 of 13 sizes within 95 % of it."
pub(super) fn fastest_sentence(r: &SweepResult, name_device: bool) -> String {
    let w = r.api.words();
    let who = match name_device {
        true => format!("{} on {} ({})", r.api, r.device.name, r.device.kind),
        false => r.api.to_string(),
    };
    let Some(best) = r.best() else {
        return format!("{who}: no size ran");
    };
    let tied = tied_with_best(r);
    let ties = match tied.is_empty() {
        true => "no other size is within the measurement noise of it".to_string(),
        false => format!(
            "within the measurement noise of it (≈): {}",
            tied.join(", ")
        ),
    };
    // A user's kernel that declares no bytes moved has times only.
    let gbps = best
        .gbps
        .map(|g| format!(" ({g:.1} GB/s)"))
        .unwrap_or_default();
    format!(
        "{who}: fastest {} {}s per {}, {} ms{gbps}; {ties}; {} of {} sizes within 95 % of it.",
        best.block,
        w.thread,
        w.block,
        ms(best.mean_ms().unwrap_or(0.0)),
        r.rows_good(),
        r.rows_run()
    )
}

fn tied_with_best(r: &SweepResult) -> Vec<String> {
    let Some(best) = r.best() else {
        return Vec::new();
    };
    r.rows
        .iter()
        .filter(|x| x.verdict == Some(crate::sweep::Verdict::Tied) && x.block != best.block)
        .map(|x| x.block.to_string())
        .collect()
}

/// Said once when any API ran on a CPU: what such a run teaches about GPUs and what it does
/// not.
pub(crate) fn cpu_paragraph(report: &Report) -> Option<String> {
    let cpus: Vec<String> = report
        .results
        .iter()
        .filter(|r| r.device.kind == DeviceKind::Cpu)
        .map(|r| format!("{} on {}", r.api, r.device.name))
        .collect();
    if cpus.is_empty() {
        return None;
    }
    let which = match (cpus.len(), report.results.len()) {
        (1, 1) => format!("This ran on a CPU, not a GPU ({}).", cpus[0]),
        (n, m) if n == m => format!("These ran on CPUs, not GPUs ({}).", cpus.join("; ")),
        _ => format!(
            "Part of this ran on a CPU, not a GPU ({}).",
            cpus.join("; ")
        ),
    };
    Some(format!(
        "{which} What carries over to a GPU: the method (a grid-stride kernel that is correct \
         for any launch, timing on the device's clock, ratios within one run), the verification \
         of every output at every size, and each API's launch limits and how it enforces them. \
         What does not: a CPU driver runs a block as a loop on one core, with no warps, \
         multiprocessors or occupancy (those columns are left out; the warp column counts \
         SIMD groups), so which block size is fastest here says nothing about a GPU. The \
         guide's exercise (where does the curve go flat, and why not at full occupancy?) \
         needs a GPU."
    ))
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

/// "0.99", with the verdict's mark: " ≈" where the data cannot tell the row from the
/// fastest, " ?" where it cannot rank the row at all ([`crate::sweep::Verdict`]).
pub(super) fn of_best(row: &SweepRow) -> String {
    match row.of_best {
        Some(o) => format!("{o:.2}{}", row.verdict.map(|v| v.mark()).unwrap_or("")),
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

fn header(r: &SweepResult) -> Vec<String> {
    let d = &r.device;
    let l = &r.limits;
    let w = r.api.words();
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
        .unwrap_or_else(|| format!("{} count not exposed", w.multiprocessor));
    match &l.mp_model {
        Some(m) => h.push(format!(
            "  {mps}; resident {}s/{} {}, resident {}s/{} {} ({})",
            w.warp, w.multiprocessor, m.max_warps, w.block, w.multiprocessor, m.max_blocks, m.source
        )),
        None => h.push(format!(
            "  {mps}; a {} device has no {} slots or residency limits, so those columns are left out{}",
            d.kind,
            w.warp,
            l.warp_size
                .as_ref()
                .map(|x| format!("; '{}s' counts groups of {} = {}", w.warp, x.name, x.value))
                .unwrap_or_default()
        )),
    }
    let f = &r.frame;
    h.push(match &r.program {
        Some(p) => program_line(p, f),
        None => format!(
            "Image: {} x {}, {} pixels, {:.1} MiB moved per pass (seed {})",
            f.width,
            f.height,
            f.pixels,
            f.bytes_per_pass as f64 / MIB,
            f.seed
        ),
    });
    h.push(timing_line(r));
    if let Some(note) = cache_note(r) {
        h.push(note);
    }
    h.push(format!("Grid: {} ({})", r.policy, r.grid_source));
    let k = &r.kernel;
    let mut kf = vec![format!("compiled by {}", k.compiled_by)];
    if let Some(x) = &k.registers {
        kf.push(format!("{} registers/{} ({})", x.value, w.thread, x.name));
    }
    if let Some(x) = &k.max_block {
        kf.push(format!("max {} {} ({})", w.block, x.value, x.name));
    }
    // A user's kernel: every limit of its own, next to the device's.
    if r.program.is_some() {
        for (what, x) in [
            ("static shared bytes", &k.shared_bytes),
            ("private bytes", &k.private_bytes),
            ("preferred multiple", &k.preferred_multiple),
        ] {
            if let Some(x) = x {
                kf.push(format!("{what} {} ({})", x.value, x.name));
            }
        }
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
    h
}

/// "Validation: VK_LAYER_KHRONOS_validation on, with synchronization validation; it raised no
/// message", where the API's checking layer was on (its `validation` extra limit).
fn validation_line(r: &SweepResult, failures: &[Failure]) -> Option<String> {
    let (_, on) = r.limits.extra.iter().find(|(k, _)| k == "validation")?;
    let said = failures
        .iter()
        .filter(|f| f.api == r.api)
        .find_map(|f| f.message.split_once(" validation message(s)"))
        .map(|(n, _)| n);
    Some(match said {
        None => format!("Validation: {on}; it raised no message"),
        Some("1") => format!("Validation: {on}; it raised 1 message (listed at the end)"),
        Some(n) => format!("Validation: {on}; it raised {n} messages (listed at the end)"),
    })
}

/// "Your kernel: saxpy (examples/kernels/saxpy/kernel.toml) at n=16777216, 16777216 work items,
/// 192.0 MiB moved per dispatch; source saxpy.cu (CUDA C++), entry saxpy; checked: y (exact)".
fn program_line(p: &crate::sweep::ProgramInfo, f: &crate::frame::FrameInfo) -> String {
    let moved = match p.bytes_known {
        true => format!(
            "{:.1} MiB moved per dispatch",
            f.bytes_per_pass as f64 / MIB
        ),
        false => "bytes moved not declared (no GB/s)".to_string(),
    };
    format!(
        "Your kernel: {} ({}) at {}, {} work items, {moved}; source {}; checked at every size \
         against its first size and the first API: {}",
        p.name,
        p.spec,
        p.sizes,
        f.pixels,
        p.source,
        p.checked.join(", ")
    )
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
    format!(
        "Timing ({}): {}; {n} timed dispatches per row ({}) after {} warm-ups; {}, resolution {} ns",
        p.discipline,
        p.discipline.describe(),
        reps_words(&p.reps),
        p.warmups,
        r.timer.method,
        r.timer.resolution_ns
    )
}

/// "fixed by --reps" or "adaptive: at least 10, aiming at 2 ms of device time per batch".
pub(super) fn reps_words(reps: &crate::measure::Reps) -> String {
    match reps {
        crate::measure::Reps::Fixed(_) => "fixed by --reps".to_string(),
        crate::measure::Reps::Adaptive {
            min, min_time_ms, ..
        } => {
            format!(
                "adaptive: at least {min}, aiming at {min_time_ms} ms of device time per batch \
                 from the warm-ups' pace"
            )
        }
    }
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
    words: &crate::api::Vocabulary,
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
                (false, _) => "NOT VERIFIED".into(),
            });
        }
        None => {
            let n = if s.copy { 5 } else { 4 };
            c.extend(std::iter::repeat_n("—".to_string(), n));
            let why = row.skipped.as_deref().unwrap_or("not run");
            c.push(format!(
                "skipped {}",
                notes.mark(format!("{} {}s: skipped: {why}", row.block, words.thread))
            ));
        }
    }
    c
}

/// Summary lines like the seed's: the occupancy API's suggestion, the fastest row, the count
/// within 95 percent.
pub(super) fn summary(r: &SweepResult) -> Vec<String> {
    let mut s = Vec::new();
    let w = r.api.words();
    if let Some(sg) = &r.suggestion {
        s.push(format!(
            "{} suggests {} {}s per {} and a {} of {} {}s.",
            sg.source, sg.block, w.thread, w.block, w.grid, sg.min_grid, w.block
        ));
    }
    if let Some(best) = r.best() {
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
    let past = r
        .rows
        .iter()
        .filter(|x| x.note.is_some() && x.ran())
        .count();
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
    parts.push("of best: fastest time ÷ this row's (≈: within the measurement noise of it)".into());
    if s.copy {
        parts.push("% copy: GB/s ÷ the copy ceiling's".into());
    }
    format!("{}.", parts.join("; "))
}

fn api_section(r: &SweepResult, ceiling: Option<f64>, failures: &[Failure], doc: &mut Doc) {
    if doc.md {
        doc.heading(2, &format!("{} — {}", r.api, r.device.name));
    }
    let mut h = header(r);
    h.extend(validation_line(r, failures));
    doc.lines(&h);
    let s = shape(r);
    let h = heads(r.api);
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
    let mut t = Table::new(cols);
    let mut notes = Notes::new();
    for row in &r.rows {
        t.push(row_cells(row, ceiling, &s, &mut notes, r.api.words()));
    }
    doc.table(&t, &legend(r, &h, &s), &notes);
    let mut sum = summary(r);
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
