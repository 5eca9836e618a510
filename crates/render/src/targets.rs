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

/// A report with its launches held against targets.
pub struct Targeted<'a, R: Render> {
    pub report: &'a R,
    pub targets: Option<&'a TargetReport>,
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
        let Some(t) = self.targets else {
            return inner;
        };
        match serde_json::from_str::<serde_json::Value>(&inner) {
            Ok(serde_json::Value::Object(mut doc)) => {
                doc.insert(
                    "targets".into(),
                    serde_json::to_value(t).unwrap_or(serde_json::Value::Null),
                );
                let mut s = serde_json::to_string_pretty(&doc).unwrap_or(inner);
                s.push('\n');
                s
            }
            _ => inner,
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
        (Word::Refused, None, _) => format!("{}: refused: {}", v.target, f.need),
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
    registers(r, doc);
    idle(r, doc);
}

/// Per target that states a multiprocessor: the largest block the registers allow, and the
/// resident blocks and occupancy at each block.
fn registers(r: &TargetReport, doc: &mut Doc) {
    let Some(first) = r.registers.first() else {
        return;
    };
    doc.heading(3, &format!("Registers: {} per thread", first.registers));
    let blocks: Vec<u64> = first.residency.iter().map(|x| x.threads).collect();
    let mut cols = vec![Column::left("target"), Column::right("largest block")];
    cols.extend(blocks.iter().map(|b| Column::right(b.to_string())));
    let mut table = Table::new(cols);
    for reg in &r.registers {
        let mut cells = vec![
            reg.target.clone(),
            reg.largest_block.map_or("—".into(), |b| b.to_string()),
        ];
        for b in &blocks {
            let c = reg.residency.iter().find(|x| x.threads == *b);
            cells.push(c.map_or("—".into(), |x| {
                format!("{}·{:.0}%", x.blocks_per_sm, x.occupancy * 100.0)
            }));
        }
        table.push(cells);
    }
    doc.table(
        &table,
        "largest block: threads per block the kernel's registers allow (whole warps within the \
         registers per block); each block's cell: resident blocks per SM · occupancy (warps \
         resident ÷ the SM's warp slots), the least of the block, warp, register and shared-memory \
         limits, as the seed works it out.",
        &Notes::new(),
    );
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
