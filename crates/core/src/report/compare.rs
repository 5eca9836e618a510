//! Results from different GPUs or machines side by side (the seed's "T4 vs 5090 vs H100"
//! view): per block size, each (file, API)'s fraction of its own best, and each one's fastest
//! size. Absolute times from different GPUs do not compare; ratios within one run do.

use tabled::builder::Builder;

use super::text::table;
use super::Report;
use crate::blocks::BlockSize;

/// One column: a file's label and one API's result in it.
struct Column<'a> {
    label: String,
    result: &'a crate::sweep::SweepResult,
}

/// Renders the comparison of `reports`, each with a label (usually its file name).
pub fn render(reports: &[(String, Report)], md: bool) -> String {
    let mut cols: Vec<Column> = Vec::new();
    for (label, rep) in reports {
        for r in &rep.results {
            cols.push(Column {
                label: format!("{label}: {} {}", r.api, r.device.name),
                result: r,
            });
        }
    }
    let mut blocks: Vec<BlockSize> = cols
        .iter()
        .flat_map(|c| c.result.rows.iter().map(|r| r.block))
        .collect();
    blocks.sort_by_key(|b| (b.threads(), *b));
    blocks.dedup();

    let mut out = String::from("Each cell: that run's mean time at its own best block size / its time at this size (1.00 = its fastest).\n");
    for (i, c) in cols.iter().enumerate() {
        out.push_str(&format!("  [{}] {}\n", i + 1, c.label));
    }
    out.push('\n');
    let mut b = Builder::default();
    let mut head = vec!["thr/blk".to_string()];
    head.extend((1..=cols.len()).map(|i| format!("[{i}] of best")));
    b.push_record(head);
    for block in &blocks {
        let mut row = vec![block.to_string()];
        for c in &cols {
            row.push(match c.result.rows.iter().find(|r| r.block == *block) {
                Some(r) => match (r.of_best, &r.skipped) {
                    (Some(o), _) => format!("{o:.2}"),
                    (None, Some(_)) => "skipped".into(),
                    _ => "—".into(),
                },
                None => "not swept".into(),
            });
        }
        b.push_record(row);
    }
    let mut fastest = vec!["fastest".to_string()];
    for c in &cols {
        fastest.push(
            c.result
                .best()
                .map(|r| r.block.to_string())
                .unwrap_or_else(|| "—".into()),
        );
    }
    b.push_record(fastest);
    out.push_str(&table(b, md));
    out.push('\n');
    for (i, c) in cols.iter().enumerate() {
        let r = c.result;
        if let Some(best) = r.best() {
            out.push_str(&format!(
                "[{}] fastest {} at {:.3} ms; {} of {} sizes within 95 percent\n",
                i + 1,
                best.block,
                best.mean_ms().unwrap_or(0.0),
                r.rows_within(0.95),
                r.rows_run()
            ));
        }
    }
    out
}
