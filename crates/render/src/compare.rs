//! `blocksweep compare` drawn: one column per API result of each run, one line per block size.

use blocksweep_core::report::compare::{Cell, Comparison};
use blocksweep_core::report::Envelope;
use blocksweep_core::words::fraction;

use crate::layout::{Column, Layout, Notes, Overflow, Table};
use crate::text::{ms, Doc};
use crate::{to_csv, Render};

fn cell_text(c: &Cell, notes: &mut Notes) -> String {
    match c {
        Cell::Ran {
            of_best,
            verdict: Some(v),
            ..
        } => format!("{}{}", fraction(*of_best), v.mark()),
        Cell::Ran {
            of_best, tie: true, ..
        } => format!("{} ≈", fraction(*of_best)),
        Cell::Ran { of_best, .. } => fraction(*of_best),
        Cell::Skipped { why } => format!("skipped {}", notes.mark(why.clone())),
        Cell::NotSwept => "not swept".into(),
    }
}

fn render_text(c: &Comparison, layout: Layout, md: bool) -> String {
    let mut doc = Doc::new(layout, md);
    if !c.warnings.is_empty() {
        let w: Vec<String> = c.warnings.iter().map(|w| format!("Warning: {w}")).collect();
        match md {
            true => doc.list(&w),
            false => doc.lines(&w),
        }
    }
    if !c.runs.is_empty() {
        side_by_side(c, &mut doc, md);
    }
    if let Some(a) = &c.across {
        crate::across::text(a, &mut doc, md);
    }
    doc.finish()
}

/// Each run's fraction of its own best per block size, one column per (run, API).
fn side_by_side(c: &Comparison, doc: &mut Doc, md: bool) {
    doc.para(format!(
        "Each cell: that run's mean time at its own best block size ÷ its time at this size \
         (rounded down; 1.00 = its fastest; ≈: within the noise of its fastest). Runs on \
         different {}s compare by shape, not by speed.",
        c.noun()
    ));
    let legend: Vec<String> = c
        .runs
        .iter()
        .enumerate()
        .map(|(i, r)| format!("[{}] {}: {} {}", i + 1, r.label, r.api, r.device))
        .collect();
    match md {
        true => doc.list(&legend),
        false => doc.lines(&legend),
    }
    let mut cols = vec![Column::right("block").key()];
    cols.extend((1..=c.runs.len()).map(|i| Column::right(format!("[{i}]\nof best"))));
    let mut t = Table::new(cols).overflow(Overflow::Split);
    let mut notes = Notes::new();
    for line in &c.rows {
        let mut row = vec![line.block.to_string()];
        row.extend(line.cells.iter().map(|c| cell_text(c, &mut notes)));
        t.push(row);
    }
    let mut fastest = vec!["fastest".to_string()];
    fastest.extend(c.runs.iter().map(|r| {
        r.fastest
            .map(|b| b.to_string())
            .unwrap_or_else(|| "—".into())
    }));
    t.push(fastest);
    doc.table(&t, "", &notes);
    let summary: Vec<String> = c
        .runs
        .iter()
        .enumerate()
        .filter_map(|(i, r)| {
            Some(format!(
                "[{}] fastest {} at {} ms; {} of {} sizes within 95 percent",
                i + 1,
                r.fastest?,
                ms(r.fastest_ms?),
                r.within_95,
                r.rows_run
            ))
        })
        .collect();
    doc.lines(&summary);
}

impl Render for Comparison {
    fn text(&self, layout: Layout, md: bool) -> String {
        render_text(self, layout, md)
    }
    /// One line per (column, block size); across GPUs, one per configuration on each (GPU,
    /// API) instead (the answer's lines: every ratio the side-by-side table has).
    fn csv(&self) -> String {
        if let Some(a) = &self.across {
            return to_csv(&crate::across::csv(a));
        }
        let mut rec: Vec<Vec<String>> = vec![[
            "column",
            "label",
            "api",
            "device",
            "frame",
            "discipline",
            "block",
            "threads",
            "of_best",
            "ties_best",
            "status",
        ]
        .map(String::from)
        .to_vec()];
        for line in &self.rows {
            for (i, (r, c)) in self.runs.iter().zip(&line.cells).enumerate() {
                let (of_best, tie, status) = match c {
                    Cell::Ran { of_best, tie, .. } => {
                        (format!("{of_best:.4}"), tie.to_string(), "ran".to_string())
                    }
                    Cell::Skipped { why } => {
                        (String::new(), String::new(), format!("skipped: {why}"))
                    }
                    Cell::NotSwept => (String::new(), String::new(), "not swept".into()),
                };
                rec.push(vec![
                    (i + 1).to_string(),
                    r.label.clone(),
                    r.api.key().into(),
                    r.device.clone(),
                    format!("{}x{}", r.frame.0, r.frame.1),
                    r.protocol.discipline.to_string(),
                    line.block.to_string(),
                    line.block.threads().to_string(),
                    of_best,
                    tie,
                    status,
                ]);
            }
        }
        to_csv(&rec)
    }
    /// The envelope (its devices: those the runs measured, or the tune files listed), then
    /// `runs`, `rows`, `warnings` and, across GPUs, `across`.
    fn json(&self) -> String {
        let mut envelope = Envelope::now("compare", &self.devices);
        for d in &self.listed {
            if !envelope.devices.contains(d) {
                envelope.devices.push(d.clone());
            }
        }
        envelope.document(self)
    }
}
