//! `--target`: a command's launches against the targets asked for (one column per target,
//! the limit, value and source of each refusal under the table), the register arithmetic per
//! compute capability, and the idle lanes of each block's last subgroup. `Targeted` adds it to
//! any report: under its text, as `targets` in its JSON, as a second table in its CSV.

use blocksweep_targets::check::Word;
use blocksweep_targets::report::TargetReport;
use blocksweep_targets::Verdict;

use crate::layout::{Column, Layout, Notes, Table};
use crate::text::Doc;
use crate::Render;

mod registers;

/// A report with its launches held against targets.
pub struct Targeted<'a, R: Render> {
    pub report: &'a R,
    pub targets: Option<&'a TargetReport>,
}

/// A command's text in `format` with the targets' verdicts added: the answer across the targets
/// first and the section after it (table, markdown), `targets` in the JSON, a second table in
/// the CSV. `inner` unchanged without targets.
pub fn append(
    format: crate::Format,
    inner: String,
    targets: Option<&TargetReport>,
    layout: Layout,
) -> String {
    let Some(t) = targets else {
        return inner;
    };
    match format {
        crate::Format::Json => with_json(inner, t),
        crate::Format::Csv => format!("{inner}\n{}", csv(t)),
        crate::Format::Table | crate::Format::Markdown => {
            let md = format == crate::Format::Markdown;
            let mut lead = Doc::new(layout, md);
            answer(t, &mut lead);
            let mut doc = Doc::new(layout, md);
            render(t, &mut doc);
            let lead = lead.finish();
            let lead = match lead.trim().is_empty() {
                true => String::new(),
                false => format!("{}\n\n", lead.trim_end_matches('\n')),
            };
            format!("{lead}{}\n\n{}", inner.trim_end_matches('\n'), doc.finish())
        }
    }
}

/// The document with `targets` added.
fn with_json(inner: String, t: &impl serde::Serialize) -> String {
    match serde_json::from_str::<serde_json::Value>(&inner) {
        Ok(serde_json::Value::Object(mut doc)) => {
            let v = serde_json::to_value(t).unwrap_or(serde_json::Value::Null);
            doc.insert("targets".into(), v);
            let mut s = serde_json::to_string_pretty(&doc).unwrap_or(inner);
            s.push('\n');
            s
        }
        _ => inner,
    }
}

/// The sweep's portable answer across the targets: the sizes that launch everywhere asked,
/// then each other portable size with the targets that refuse it or cannot say.
fn answer(t: &TargetReport, doc: &mut Doc) {
    let Some(a) = &t.answer else {
        return;
    };
    let names: Vec<&str> = t.targets.iter().map(|x| x.name.as_str()).collect();
    let mut items = vec![match a.launch_everywhere.is_empty() {
        true => format!(
            "No size swept launches on every target asked ({}).",
            names.join(", ")
        ),
        false => format!(
            "Launch on every target asked ({}): {}.",
            names.join(", "),
            a.launch_everywhere.join(", ")
        ),
    }];
    items.push(match (a.any_portable_here, a.portable.is_empty()) {
        (false, _) => "No size is within the bar of each API's best on every API here (the \
                       answer below), so none is portable across the targets either."
            .to_string(),
        (true, true) => "No size within the bar on every API here launches on every target \
                         asked."
            .to_string(),
        (true, false) => format!(
            "Within the bar on every API here and launching on every target asked: {}.",
            a.portable.join(", ")
        ),
    });
    for (size, why) in &a.elsewhere {
        items.push(format!("{size}: {}", why.join(", ")));
    }
    doc.heading(2, "Answer across the targets");
    doc.list(&items);
}

impl<R: Render> Render for Targeted<'_, R> {
    fn text(&self, layout: Layout, md: bool) -> String {
        let inner = self.report.text(layout, md);
        match self.targets {
            None => inner,
            Some(t) => {
                let mut doc = Doc::new(layout, md);
                render(t, &mut doc);
                format!("{}\n\n{}", inner.trim_end_matches('\n'), doc.finish())
            }
        }
    }

    fn csv(&self) -> String {
        match self.targets {
            None => self.report.csv(),
            Some(t) => format!("{}\n{}", self.report.csv(), csv(t)),
        }
    }

    fn json(&self) -> String {
        let inner = self.report.json();
        match self.targets {
            Some(t) => with_json(inner, t),
            None => inner,
        }
    }
}

/// The cell: ✓ (launches), ✗ (refused) or ? (unknown), with the footnote that says the limit,
/// its value and source, or what is not known.
fn cell(v: &Verdict, notes: &mut Notes) -> String {
    let Some(f) = v.findings.first() else {
        return match v.notes.first() {
            Some(n) => format!("✓ {}", notes.mark(format!("{}: {n}", v.target))),
            None => "✓".into(),
        };
    };
    let text = match (f.word, &f.value, &f.source) {
        (Word::Refused, Some(_), _) => format!("{}: refused: {f}", v.target),
        (Word::Refused, None, Some(src)) => {
            format!("{}: refused: {} ({})", v.target, f.need, src.cite())
        }
        (Word::Refused, None, None) => format!("{}: refused: {}", v.target, f.need),
        (_, None, None) => format!("{}: unknown: it does not state {}", v.target, f.name),
        _ => format!("{}: unknown: {}", v.target, f.need),
    };
    let sign = match v.word {
        Word::Refused => "✗",
        _ => "?",
    };
    format!("{sign} {}", notes.mark(text))
}

pub(crate) fn render(r: &TargetReport, doc: &mut Doc) {
    doc.heading(2, "Where it launches");
    doc.para(format!(
        "Each launch ({}) held against the limits each target states (--target): ✓ launches \
         (within every limit the target states), ✗ refused (a limit below what the launch \
         needs: the footnote names it, its value and source; for a minimum, a device that \
         meets only that minimum may refuse it), ? unknown (the target states nothing about a \
         need, or the local builds cannot tell the need).",
        r.launches
    ));
    let mut cols = vec![Column::left("target").key()];
    cols.extend(r.rows.iter().map(|row| Column::left(row.id.clone())));
    let mut table = Table::new(cols);
    let mut notes = Notes::new();
    for (i, t) in r.targets.iter().enumerate() {
        let mut cells = vec![t.name.clone()];
        cells.extend(r.rows.iter().map(|row| cell(&row.verdicts[i], &mut notes)));
        table.push(cells);
    }
    doc.table(&table, "", &notes);
    let titles: Vec<String> = r
        .targets
        .iter()
        .map(|t| {
            let kind = match t.kind {
                blocksweep_targets::Kind::Minimum => "guaranteed minimums",
                blocksweep_targets::Kind::Device => "one device's report",
            };
            format!("{}: {}; {kind} ({})", t.name, t.title, t.file)
        })
        .collect();
    doc.lines(&titles);
    if !r.needs_from.is_empty() {
        doc.lines(&r.needs_from);
    }
    registers::known(r, doc);
    registers::unknown(r, doc);
    idle(r, doc);
}

/// Idle lanes of each block's last subgroup, per target with subgroup sizes.
fn idle(r: &TargetReport, doc: &mut Doc) {
    let Some(first) = r.idle.first() else {
        return;
    };
    doc.heading(3, "Idle lanes of each block's last subgroup");
    let mut cols = vec![Column::left("target"), Column::right("subgroup")];
    cols.extend(
        first
            .blocks
            .iter()
            .map(|(b, _)| Column::right(b.to_string())),
    );
    let mut table = Table::new(cols);
    for i in &r.idle {
        let size = match i.variable {
            true => format!("{}*", i.subgroup),
            false => i.subgroup.to_string(),
        };
        let mut cells = vec![i.target.clone(), size];
        cells.extend(i.blocks.iter().map(|(_, idle)| idle.to_string()));
        table.push(cells);
    }
    doc.table(
        &table,
        "Lanes of the last subgroup of a block that never run (a 100-thread block on 64-wide \
         wavefronts leaves 28). *: the default of a variable size; the driver may pick another \
         unless the pipeline requires one.",
        &Notes::new(),
    );
}

fn csv(r: &TargetReport) -> String {
    let mut rec = vec![vec![
        "launch".to_string(),
        "claim".into(),
        "target".into(),
        "verdict".into(),
        "limit".into(),
        "value".into(),
        "need".into(),
        "source".into(),
    ]];
    for row in &r.rows {
        for v in &row.verdicts {
            let f = v.findings.first();
            rec.push(vec![
                row.id.clone(),
                row.claim.clone(),
                v.target.clone(),
                v.word.as_str().into(),
                f.map_or(String::new(), |f| f.name.clone()),
                f.and_then(|f| f.value)
                    .map_or(String::new(), |x| x.to_string()),
                f.map_or(String::new(), |f| f.need.clone()),
                f.and_then(|f| f.source.as_ref())
                    .map_or(String::new(), |s| s.cite()),
            ]);
        }
    }
    crate::to_csv(&rec)
}

/// The limits report with the targets' limits beside the devices' own (`limits --target`).
pub struct WithLimits<'a> {
    pub report: &'a blocksweep_core::report::limits::LimitsReport,
    pub targets: Option<&'a [blocksweep_targets::Target]>,
}

impl Render for WithLimits<'_> {
    fn text(&self, layout: Layout, md: bool) -> String {
        let inner = self.report.text(layout, md);
        let Some(targets) = self.targets else {
            return inner;
        };
        let mut doc = Doc::new(layout, md);
        side_by_side(self.report, targets, &mut doc);
        format!("{}\n\n{}", inner.trim_end_matches('\n'), doc.finish())
    }

    fn csv(&self) -> String {
        self.report.csv()
    }

    fn json(&self) -> String {
        let inner = self.report.json();
        match self.targets {
            Some(t) => with_json(inner, &t),
            None => inner,
        }
    }
}

/// One row per limit key, one column per local API view and per target; each row's native
/// names under the table.
fn side_by_side(
    report: &blocksweep_core::report::limits::LimitsReport,
    targets: &[blocksweep_targets::Target],
    doc: &mut Doc,
) {
    use blocksweep_targets::{write, Key, Kind};
    doc.heading(2, "Beside other GPUs, profiles and APIs (--target)");
    doc.para(
        "Each limit under the catalogue's key, one column per API of the devices in hand, then \
         one per target; ≥ marks a guaranteed minimum (a device that meets only it may offer no \
         more), a plain number one device's report; —: not stated. The names each column's API \
         gives a limit are under the table; docs/targets.md gives every value's source.",
    );
    let views: Vec<_> = report.views().collect();
    let mut cols = vec![Column::left("limit").key()];
    cols.extend(
        views
            .iter()
            .map(|v| Column::right(v.device.api.to_string())),
    );
    cols.extend(
        targets
            .iter()
            .map(|t| Column::right(t.name.clone()).wrap(8)),
    );
    let mut table = Table::new(cols);
    let mut names: Vec<(Key, Vec<(String, String)>)> = Vec::new();
    let mut name = |key: Key, who: String, native: String| {
        let at = match names.iter().position(|(k, _)| *k == key) {
            Some(i) => i,
            None => {
                names.push((key, Vec::new()));
                names.len() - 1
            }
        };
        names[at].1.push((native, who));
    };
    let local: Vec<_> = views.iter().map(|v| write::values(&v.limits)).collect();
    for key in Key::ALL {
        let mut cells = vec![key.key().to_string()];
        for (v, vals) in views.iter().zip(&local) {
            let found = vals.iter().find(|(k, _, _)| *k == key);
            if let Some((_, _, n)) = found {
                name(key, v.device.api.to_string(), n.clone());
            }
            cells.push(found.map_or("—".into(), |(_, val, _)| shown(key, &parse(val))));
        }
        for t in targets {
            let cell = match t.get(key) {
                Some(s) => {
                    name(key, t.name.clone(), s.name.clone());
                    let floor = if t.kind == Kind::Minimum { "≥ " } else { "" };
                    format!("{floor}{}", shown(key, &s.value))
                }
                None => "—".into(),
            };
            cells.push(cell);
        }
        if cells[1..].iter().any(|c| c != "—") {
            table.push(cells);
        }
    }
    let mut sub = vec!["subgroup".to_string()];
    for v in &views {
        sub.push(
            write::subgroup(&v.limits).map_or("—".into(), |(min, max, _, _)| {
                if min == max {
                    min.to_string()
                } else {
                    format!("{min}–{max}")
                }
            }),
        );
    }
    sub.extend(
        targets
            .iter()
            .map(|t| t.subgroup.as_ref().map_or("—".into(), |s| s.range())),
    );
    table.push(sub);
    let mut lines = vec!["Native names:".to_string()];
    for (key, list) in names {
        let mut by_name: Vec<(String, Vec<String>)> = Vec::new();
        for (n, who) in list {
            match by_name.iter_mut().find(|(m, _)| *m == n) {
                Some((_, w)) => w.push(who),
                None => by_name.push((n, vec![who])),
            }
        }
        let text: Vec<String> = by_name
            .into_iter()
            .map(|(n, w)| format!("{n} ({})", w.join(", ")))
            .collect();
        lines.push(format!("{}: {}", key.key(), text.join("; ")));
    }
    doc.table(&table, "", &Notes::new());
    doc.lines(&lines);
}

/// A value as the target-file text writes it ("128", "[1, 2, 3]").
fn parse(text: &str) -> blocksweep_targets::Value {
    let nums: Vec<u64> = text
        .trim_matches(|c| c == '[' || c == ']')
        .split(',')
        .filter_map(|n| n.trim().parse().ok())
        .collect();
    match nums[..] {
        [x, y, z] => blocksweep_targets::Value::Dims([x, y, z]),
        [v] => blocksweep_targets::Value::One(v),
        _ => blocksweep_targets::Value::One(0),
    }
}

/// Bytes in KiB, MiB or GiB where whole; the largest signed and unsigned 32-bit values as
/// the specifications write them.
fn shown(key: blocksweep_targets::Key, v: &blocksweep_targets::Value) -> String {
    let one = |n: u64| match n {
        0x7fff_ffff => "2^31-1".to_string(),
        0xffff_ffff => "2^32-1".to_string(),
        n if key.is_bytes() => blocksweep_core::guarantee::bytes_in_words(n),
        n => n.to_string(),
    };
    match *v {
        blocksweep_targets::Value::One(n) => one(n),
        blocksweep_targets::Value::Dims(d) => format!("({})", d.map(one).join(", ")),
    }
}
