//! A tune drawn as every report is ([`Render`]): the answer first, then what was refused,
//! found wrong and searched, then one row per configuration with each API's time and its
//! fraction of that API's best, laid out by [`crate::layout::Table`]; its CSV has one line per
//! configuration and API, and its JSON is the sweep's document (docs/json-schema.md).

use crate::layout::{Column, Layout, Overflow, Table};
use crate::text::Doc;
use crate::{to_csv, Render};
use blocksweep_core::api::Api;
use blocksweep_core::report::envelope::EnvelopeDevice;
use blocksweep_core::tune::{document, params_text, Config, Measurement, Outcome, TuneReport};
use blocksweep_core::words::fraction;

/// A tune's reports (one per share of the space), and the devices its document lists.
pub struct Tunes<'a> {
    pub reports: &'a [TuneReport],
    pub devices: Vec<EnvelopeDevice>,
}

impl Render for Tunes<'_> {
    fn text(&self, layout: Layout, md: bool) -> String {
        let each: Vec<String> = self
            .reports
            .iter()
            .map(|r| render_text(r, layout, md))
            .collect();
        each.join("\n")
    }

    /// One line per configuration and API: what a spreadsheet wants.
    fn csv(&self) -> String {
        let mut rec = vec![[
            "api",
            "params",
            "block",
            "grid",
            "blocks",
            "ms",
            "gbps",
            "outcome",
            "why",
            "cached",
            "interrupted",
        ]
        .map(String::from)
        .to_vec()];
        for r in self.reports {
            rec.extend(r.measurements.iter().map(|m| csv_record(r, m)));
        }
        to_csv(&rec)
    }

    fn json(&self) -> String {
        document::document_listing(self.reports, self.devices.clone())
    }
}

/// One report as text or markdown.
fn render_text(r: &TuneReport, layout: Layout, md: bool) -> String {
    let mut doc = Doc::new(layout, md);
    let title = format!("Answer ({})", r.kernel);
    if let Some(line) = r.partial.line("parameter sets") {
        doc.para(crate::text::emphasised(line, md));
    }
    match md {
        true => doc.para(format!("**{title}**")),
        false => doc.para(title),
    }
    doc.list(&answer_lines(r));
    let mut facts = Vec::new();
    facts.extend(r.devices.iter().map(|d| format!("Device: {d}")));
    facts.push(search_line(r));
    facts.push(format!("Caches: {}", r.caches.describe()));
    facts.push(rejected_line(r));
    for w in &r.wrong {
        let p = params_text(&w.params);
        facts.push(format!("Never ranked: {} at {p}: {}", w.api, w.detail));
    }
    for e in &r.errors {
        facts.push(format!("Not swept: {e}"));
    }
    doc.lines(&facts);
    doc.table(
        &table(r),
        "ms: mean per dispatch; of best: that API's fastest time ÷ this row's, rounded down (≈: within the \
         measurement noise of it); wrong: its parameters' output differs from the first \
         configuration's; -: refused before launch or not run (the lines above say why).",
        &Default::default(),
    );
    doc.finish()
}

fn answer_lines(r: &TuneReport) -> Vec<String> {
    let mut lines = Vec::new();
    let apis = r.apis();
    let names = crate::and_list(&apis.iter().map(|a| a.to_string()).collect::<Vec<_>>());
    match (r.answer.portable.len(), &r.answer.choice) {
        (0, _) => lines.push(format!(
            "No configuration is within 95 % of each API's best on all of {names}."
        )),
        (n, _) => lines.push(format!(
            "Within 95 % of each API's best on all of {names} ({n}): {}.",
            list(&r.answer.portable, 8)
        )),
    }
    if let Some(c) = &r.answer.choice {
        let regret: Vec<String> = c
            .regret
            .iter()
            .map(|x| format!("{} {:.2}", x.api, x.regret))
            .collect();
        let what = if c.portable {
            "Portable choice"
        } else {
            "Least-regret choice (not portable)"
        };
        lines.push(format!(
            "{what}: {}; regret (its time ÷ each API's best): {}.",
            c.config,
            regret.join(", ")
        ));
    }
    for b in &r.answer.best {
        let gbps = b
            .gbps
            .map(|g| format!(" ({g:.1} GB/s)"))
            .unwrap_or_default();
        let tied = match b.tied.len() {
            0 => String::new(),
            _ => format!("; tied (≈): {}", list(&b.tied, 4)),
        };
        let held = match &b.held {
            Some(h) if h.held => format!("; measured twice: {:.5} ms, held", h.second_ms),
            Some(h) => format!(
                "; measured twice: {:.5} ms, did not hold (more than 5 % slower)",
                h.second_ms
            ),
            None => String::new(),
        };
        lines.push(format!(
            "{}: fastest {}, {:.5} ms{gbps}{tied}; {} of {} within 95 %{held}.",
            b.api, b.config, b.ms, b.good, b.ranked
        ));
    }
    lines
}

/// The first `n` configurations, then how many more.
fn list(configs: &[Config], n: usize) -> String {
    let mut parts: Vec<String> = configs.iter().take(n).map(|c| c.to_string()).collect();
    if configs.len() > n {
        parts.push(format!("and {} more", configs.len() - n));
    }
    parts.join("; ")
}

fn search_line(r: &TuneReport) -> String {
    let s = &r.search;
    let share = match s.wall_s > 0.0 {
        true => format!(
            ", {:.0} % of the {:.2} s wall",
            100.0 * s.compile_s / s.wall_s,
            s.wall_s
        ),
        false => String::new(),
    };
    let stopped = s
        .stopped
        .as_ref()
        .map(|w| format!("; {w}"))
        .unwrap_or_default();
    format!(
        "Search: {}, {} of {} configurations; {} measured, {} from the cache; {} compiled \
         ({:.2} s from each start to its first timed row: opening and building{share}){stopped}",
        s.order,
        s.covered,
        s.space,
        s.measured,
        s.from_cache,
        match s.compiles {
            1 => "1 sweep".to_string(),
            n => format!("{n} sweeps"),
        },
        s.compile_s
    )
}

fn rejected_line(r: &TuneReport) -> String {
    let counts = r.rejected_by_reason();
    let refused: usize = r
        .measurements
        .iter()
        .filter(|e| matches!(e.outcome, Outcome::Refused { .. }))
        .count();
    let mut parts: Vec<String> = counts.iter().map(|(n, w)| format!("{n} by {w}")).collect();
    if refused > 0 {
        let mut why: Vec<String> = Vec::new();
        for e in &r.measurements {
            if let Outcome::Refused { why: w } = &e.outcome {
                let w = format!("{}: {w}", e.api);
                if !why.contains(&w) {
                    why.push(w);
                }
            }
        }
        parts.push(format!(
            "{refused} (configuration, API) pairs by a device or kernel limit ({})",
            why.into_iter().take(3).collect::<Vec<_>>().join("; ")
        ));
    }
    match parts.is_empty() {
        true => "Rejected before compiling or launching: none".into(),
        false => format!(
            "Rejected before compiling or launching: {}",
            parts.join("; ")
        ),
    }
}

fn table(r: &TuneReport) -> Table {
    let apis = r.apis();
    let has_params = !r.params.is_empty();
    let mut columns = Vec::new();
    if has_params {
        columns.push(Column::left("params").key());
    }
    columns.extend([
        Column::right("block").key(),
        Column::right("grid").key(),
        Column::right("blocks").drop(1),
    ]);
    for a in &apis {
        columns.push(Column::right(format!("{} ms", short(*a))));
        columns.push(Column::right("of best"));
    }
    let mut t = Table::new(columns).overflow(Overflow::Split);
    let mut configs: Vec<&Config> = Vec::new();
    for m in &r.measurements {
        if !configs.contains(&&m.config) {
            configs.push(&m.config);
        }
    }
    // Parameters, then block, then the grids in the order the run listed them.
    let at = |g: &str| r.grids.iter().position(|x| x == g).unwrap_or(usize::MAX);
    configs.sort_by(|a, b| {
        (&a.params, a.block, at(&a.grid.0)).cmp(&(&b.params, b.block, at(&b.grid.0)))
    });
    for c in configs {
        let of = |a: Api| r.measurements.iter().find(|m| m.api == a && &m.config == c);
        let blocks = apis
            .iter()
            .filter_map(|a| of(*a).map(|m| m.grid_blocks))
            .find(|&b| b > 0)
            .unwrap_or(0);
        let mut row: Vec<String> = Vec::new();
        if has_params {
            row.push(c.params_text());
        }
        row.extend([c.block.to_string(), c.grid.0.clone(), blocks.to_string()]);
        for &a in &apis {
            let (ms, rel) = cells(r, a, of(a));
            row.push(ms);
            row.push(rel);
        }
        t.push(row);
    }
    t
}

/// One API's two cells for a configuration.
fn cells(r: &TuneReport, api: Api, e: Option<&Measurement>) -> (String, String) {
    let Some(e) = e else {
        return ("".into(), "".into());
    };
    let Some(ms) = e.ms() else {
        return ("-".into(), "".into());
    };
    let ms = format!("{ms:.5}");
    if r.is_wrong(api, &e.config.params) {
        return (ms, "wrong".into());
    }
    let Some(best) = r.answer.best.iter().find(|b| b.api == api) else {
        return (ms, "".into());
    };
    let rel = best.ms / e.ms().unwrap_or(f64::MAX);
    let mark = if best.config == e.config || best.tied.contains(&e.config) {
        " ≈"
    } else {
        ""
    };
    (ms, format!("{}{mark}", fraction(rel)))
}

/// A short column name: the API's name up to its first space ("OpenCL", "CUDA").
fn short(a: Api) -> String {
    a.to_string().split(' ').next().unwrap_or("").to_string()
}

/// One configuration on one API, as a CSV line.
fn csv_record(r: &TuneReport, m: &Measurement) -> Vec<String> {
    let (kind, why, gbps) = match &m.outcome {
        Outcome::Ran { gbps, .. } if r.is_wrong(m.api, &m.config.params) => ("wrong", "", *gbps),
        Outcome::Ran { gbps, .. } => ("ran", "", *gbps),
        Outcome::Refused { why } => ("refused", why.as_str(), None),
        Outcome::NotRun { why } => ("not_run", why.as_str(), None),
    };
    vec![
        m.api.key().to_string(),
        m.config.params_text(),
        m.config.block.to_string(),
        m.config.grid.0.clone(),
        m.grid_blocks.to_string(),
        m.ms().map(|x| x.to_string()).unwrap_or_default(),
        gbps.map(|g| g.to_string()).unwrap_or_default(),
        kind.to_string(),
        why.to_string(),
        m.cached.to_string(),
        r.partial.interrupted.to_string(),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Format;

    /// The H200's 48-configuration tune of three APIs (schema 4, read back).
    fn h200() -> (Vec<TuneReport>, Vec<EnvelopeDevice>) {
        let text =
            include_str!("../../../docs/results/h200-2026-12-02/call14/tune/reduce-elems.json");
        document::read(text).expect("a tune")
    }

    /// Every format through `Render`: markdown is a table (no code fence), the terminal's is
    /// laid out by the table layout, the CSV has a line per configuration and API.
    #[test]
    fn a_tune_renders_in_every_format_through_the_table_layout() {
        let (reports, devices) = h200();
        let tunes = Tunes {
            reports: &reports,
            devices,
        };
        let md = tunes.render(Format::Markdown, Layout::new(100));
        assert!(!md.contains("```"), "{md}");
        assert!(md.starts_with("**Answer (kernel 'reduce-elems'"), "{md}");
        assert!(md.contains("| params  | block | grid | blocks |"), "{md}");
        assert!(
            md.contains("| ELEMS=1 |    32 |   1w |   4224 | 0.05148 |"),
            "{md}"
        );
        assert!(
            md.contains("- Portable choice: ELEMS=4 block 96 grid 1w"),
            "{md}"
        );
        let text = tunes.render(Format::Table, Layout::new(100));
        assert!(
            text.lines().all(|l| crate::layout::width_of(l) <= 100),
            "{text}"
        );
        // An API not registered here is named by its key.
        assert!(text.contains("cuda ms"), "{text}");
        let csv = tunes.render(Format::Csv, Layout::default());
        assert_eq!(csv.lines().count(), 1 + reports[0].measurements.len());
        let json: serde_json::Value =
            serde_json::from_str(&tunes.render(Format::Json, Layout::default())).unwrap();
        assert_eq!(json["command"], "tune");
        assert_eq!(json["answer"]["best"].as_array().unwrap().len(), 3);
    }
}
