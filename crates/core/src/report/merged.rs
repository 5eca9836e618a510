//! The merged table: one row per block size, each API's time side by side, and each API's
//! speed as a ratio to the reference API (CUDA where it ran, else the first API).

use tabled::builder::Builder;

use super::text::{gbps, ms, of_best, summary, table};
use super::Report;
use crate::blocks::BlockSize;
use crate::sweep::SweepResult;

/// The API the others are compared with: the first in API order (results are sorted).
fn reference(report: &Report) -> Option<&SweepResult> {
    report.results.first()
}

pub(super) fn render(report: &Report, md: bool) -> String {
    let Some(base) = reference(report) else {
        return String::new();
    };
    let ceiling = report.theoretical_gbps();
    let mut out = String::new();
    let apis: Vec<String> = report.results.iter().map(|r| r.api.to_string()).collect();
    if md {
        out.push_str("## All APIs on one device\n\n");
    }
    let how = if report.shared_plan {
        "the same physical device, identical (block, grid) per row"
    } else {
        "DIFFERENT devices, each API with its own grids: the ratios compare devices, not APIs"
    };
    out.push_str(&format!(
        "Merged: {} on {how}{}; ratio = API GB/s / {} GB/s.\n\n",
        apis.join(", "),
        report
            .device_match
            .as_ref()
            .map(|m| format!(" ({m})"))
            .unwrap_or_default(),
        base.api
    ));
    let mut head = vec!["thr/blk".to_string(), "grid".to_string()];
    for r in &report.results {
        head.push(format!("{} ms", r.api));
        head.push(format!("{} GB/s", r.api));
        head.push(format!("{} of best", r.api));
        if r.copy.is_some() {
            head.push(format!("{} % copy", r.api));
        }
        if r.api != base.api {
            head.push(format!("{}/{}", r.api, base.api));
        }
    }
    let mut b = Builder::default();
    b.push_record(head);
    let mut blocks: Vec<BlockSize> = Vec::new();
    for r in &report.results {
        for row in &r.rows {
            if !blocks.contains(&row.block) {
                blocks.push(row.block);
            }
        }
    }
    for block in blocks {
        let mut grids: Vec<String> = Vec::new();
        for r in &report.results {
            if let Some(g) = r
                .rows
                .iter()
                .find(|x| x.block == block)
                .map(|x| x.grid.to_string())
            {
                if !grids.contains(&g) {
                    grids.push(g);
                }
            }
        }
        let mut cells = vec![block.to_string(), grids.join(" / ")];
        let base_gbps = base
            .rows
            .iter()
            .find(|x| x.block == block)
            .and_then(|x| x.gbps);
        for r in &report.results {
            let row = r.rows.iter().find(|x| x.block == block);
            let dash = || "—".to_string();
            match row.and_then(|x| x.stats().map(|s| (x, s))) {
                Some((x, s)) => {
                    cells.push(ms(s.mean));
                    cells.push(x.gbps.map(|g| gbps(g, ceiling)).unwrap_or_else(dash));
                    cells.push(of_best(x));
                    if r.copy.is_some() {
                        cells.push(
                            x.of_copy
                                .map(|o| format!("{:.0}%", o * 100.0))
                                .unwrap_or_else(dash),
                        );
                    }
                    if r.api != base.api {
                        cells.push(
                            x.gbps
                                .zip(base_gbps)
                                .map(|(g, bg)| format!("{:.2}", g / bg))
                                .unwrap_or_else(dash),
                        );
                    }
                }
                None => {
                    let n = 3 + usize::from(r.copy.is_some()) + usize::from(r.api != base.api);
                    cells.push(match row.and_then(|x| x.skipped.as_ref()) {
                        Some(_) => "skipped".into(),
                        None => dash(),
                    });
                    cells.extend(std::iter::repeat_n(dash(), n - 1));
                }
            }
        }
        b.push_record(cells);
    }
    out.push_str(&table(b, md));
    out.push_str("\n\n");
    if let Some(a) = &report.portable {
        for line in a.sentences() {
            match md {
                true => out.push_str(&format!("**{line}**\n")),
                false => out.push_str(&format!("{line}\n")),
            }
        }
        out.push('\n');
    }
    for r in &report.results {
        for line in summary(r) {
            out.push_str(&format!(
                "{}{}: {line}\n",
                if md { "- " } else { "" },
                r.api
            ));
        }
    }
    out
}
