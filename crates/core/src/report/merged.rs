//! The merged table: one row per block size, each API's speed side by side in neutral words
//! (a legend maps them to each API's), each API's of-best, and each API's GB/s as a ratio to
//! the reference API's (CUDA where it ran, else the first API). Per-API times, spreads and
//! copy ratios are in the per-API tables above it.

use super::layout::{Column, Notes, Overflow, Table};
use super::text::{gbps, of_best, Doc};
use super::Report;
use crate::blocks::BlockSize;
use crate::sweep::SweepResult;

/// The API the others are compared with: the first in API order (results are sorted).
fn reference(report: &Report) -> Option<&SweepResult> {
    report.results.first()
}

/// True when every block size ran with one grid on every API.
fn same_grids(report: &Report, blocks: &[BlockSize]) -> bool {
    blocks.iter().all(|b| {
        let mut grids = report
            .results
            .iter()
            .filter_map(|r| r.rows.iter().find(|x| x.block == *b).map(|x| x.grid));
        let first = grids.next();
        grids.all(|g| Some(g) == first)
    })
}

/// The heading and the sentence that say whether the APIs shared one device.
fn scope(report: &Report) -> (String, String) {
    let apis: Vec<String> = report.results.iter().map(|r| r.api.to_string()).collect();
    if report.shared_plan {
        let device = report
            .results
            .first()
            .map(|r| r.device.name.clone())
            .unwrap_or_default();
        let how = report
            .device_match
            .clone()
            .unwrap_or_else(|| device.clone());
        (
            "All APIs on one device".into(),
            format!(
                "{} on one device, {how}: every API ran the same (block, grid) pairs, so a \
                 ratio compares the APIs.",
                apis.join(", ")
            ),
        )
    } else {
        let on: Vec<String> = report
            .results
            .iter()
            .map(|r| format!("{} on {} ({})", r.api, r.device.name, r.device.kind))
            .collect();
        let how = report
            .device_match
            .as_ref()
            .map(|m| format!(" How the devices were chosen: {m}."))
            .unwrap_or_default();
        (
            "APIs side by side, each on its own device".into(),
            format!(
                "Each API ran on its own device: {}. Each planned its own grids, so the ratios \
                 compare devices as much as APIs.{how}",
                on.join("; ")
            ),
        )
    }
}

pub(super) fn render(report: &Report, doc: &mut Doc) {
    let Some(base) = reference(report) else {
        return;
    };
    let ceiling = report.theoretical_gbps();
    let (title, sentence) = scope(report);
    doc.heading(2, &title);
    doc.para(sentence);

    let mut blocks: Vec<BlockSize> = Vec::new();
    for r in &report.results {
        for row in &r.rows {
            if !blocks.contains(&row.block) {
                blocks.push(row.block);
            }
        }
    }
    let one_grid = same_grids(report, &blocks);
    let portable = report.portable.as_ref();
    let mut cols = vec![Column::right("block").key()];
    if one_grid {
        cols.push(Column::right("grid").key());
    }
    for r in &report.results {
        let a = r.api.to_string();
        if !one_grid {
            cols.push(Column::right(format!("{a}\ngrid")));
        }
        cols.push(Column::right(format!("{a}\nGB/s")));
        cols.push(Column::right(format!("{a}\nof best")));
        if r.api != base.api {
            cols.push(Column::right(format!("{a}\n÷{}", base.api)));
        }
    }
    if portable.is_some() {
        cols.push(Column::right("all\n≥95%"));
    }
    let mut t = Table::new(cols).overflow(Overflow::Split);
    for block in &blocks {
        let mut cells = vec![block.to_string()];
        if one_grid {
            let g = report
                .results
                .iter()
                .find_map(|r| r.rows.iter().find(|x| x.block == *block))
                .map(|x| x.grid.to_string())
                .unwrap_or_else(|| "—".into());
            cells.push(g);
        }
        let base_gbps = base
            .rows
            .iter()
            .find(|x| x.block == *block)
            .and_then(|x| x.gbps);
        for r in &report.results {
            let row = r.rows.iter().find(|x| x.block == *block);
            let dash = || "—".to_string();
            if !one_grid {
                cells.push(row.map(|x| x.grid.to_string()).unwrap_or_else(dash));
            }
            match row.filter(|x| x.ran()) {
                Some(x) => {
                    cells.push(x.gbps.map(|g| gbps(g, ceiling)).unwrap_or_else(dash));
                    cells.push(of_best(x));
                }
                None => {
                    cells.push(match row.and_then(|x| x.skipped.as_ref()) {
                        Some(_) => "skipped".into(),
                        None => dash(),
                    });
                    cells.push(dash());
                }
            }
            if r.api != base.api {
                cells.push(
                    row.and_then(|x| x.gbps)
                        .zip(base_gbps)
                        .map(|(g, bg)| format!("{:.2}", g / bg))
                        .unwrap_or_else(dash),
                );
            }
        }
        if let Some(p) = portable {
            cells.push(match p.everywhere.contains(block) {
                true => "yes".into(),
                false => String::new(),
            });
        }
        t.push(cells);
    }
    let words: Vec<String> = report
        .results
        .iter()
        .map(|r| {
            let w = r.api.words();
            format!("{} {} of {}s", r.api, w.block, w.thread)
        })
        .collect();
    let ratios: Vec<String> = report
        .results
        .iter()
        .filter(|r| r.api != base.api)
        .map(|r| format!("{}/{}", r.api, base.api))
        .collect();
    let mut legend = vec![format!("block: threads per block ({})", words.join(", "))];
    legend.push(match one_grid {
        true => "grid: blocks launched, the same on every API".to_string(),
        false => "grid: blocks launched, per API: each API planned its own on its device (its Grid: line above says how)".to_string(),
    });
    legend.push(
        "of best: that API's fastest time ÷ this row's (≈: within the measurement noise of it)"
            .into(),
    );
    if !ratios.is_empty() {
        legend.push(format!(
            "÷{}: the ratio of GB/s at the same block size ({})",
            base.api,
            ratios.join(", ")
        ));
    }
    if portable.is_some() {
        legend.push("all ≥95%: within 95 % of its own best on every API".into());
    }
    let legend = format!(
        "{}. Times, spreads and copy ratios are in each API's table above.",
        legend.join("; ")
    );
    doc.table(&t, &legend, &Notes::new());
}
