//! The merged table: one row per block size, each API's speed side by side in neutral words
//! (a legend maps them to each API's), each API's of-best, and each API's GB/s as a ratio to
//! the reference API's (CUDA where it ran, else the first API). Per-API times, spreads and
//! copy ratios are in the per-API tables above it.

use super::{gbps, ms, of_best, Doc};
use crate::layout::{Column, Notes, Overflow, Table};
use blocksweep_core::blocks::BlockSize;
use blocksweep_core::report::Report;
use blocksweep_core::sweep::{SweepResult, SweepRow};

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
fn scope(report: &Report, verbose: bool) -> (String, String) {
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
        let devices = by_device(report);
        if devices.len() < report.results.len() {
            return several_on_one(&devices, report.device_match.as_deref().filter(|_| verbose));
        }
        let on: Vec<String> = report
            .results
            .iter()
            .map(|r| format!("{} on {} ({})", r.api, r.device.name, r.device.kind))
            .collect();
        let title = "APIs side by side, each on its own device".to_string();
        if !verbose {
            return (
                title,
                "Each API ran on its own device and planned its own grids, so the ratios \
                 compare devices as much as APIs."
                    .into(),
            );
        }
        let how = report
            .device_match
            .as_ref()
            .map(|m| format!(" How the devices were chosen: {m}."))
            .unwrap_or_default();
        (
            title,
            format!(
                "Each API ran on its own device: {}. Each planned its own grids, so the ratios \
                 compare devices as much as APIs.{how}",
                on.join("; ")
            ),
        )
    }
}

/// The run's devices, each with the APIs that ran on it, in the report's order (one device:
/// the same name and PCI address, as the physical grouping matched them).
fn by_device(report: &Report) -> Vec<(String, Vec<String>)> {
    // (name and kind, PCI address, APIs): the address tells two cards of one name apart.
    let mut devices: Vec<(String, Option<&str>, Vec<String>)> = Vec::new();
    for r in &report.results {
        let d = &r.device;
        let name = format!("{} ({})", d.name, d.kind);
        let pci = d.pci_bus_id.as_deref();
        match devices.iter_mut().find(|(n, p, _)| *n == name && *p == pci) {
            Some((_, _, apis)) => apis.push(r.api.to_string()),
            None => devices.push((name, pci, vec![r.api.to_string()])),
        }
    }
    devices
        .into_iter()
        .map(|(name, _, apis)| (name, apis))
        .collect()
}

/// Some APIs shared a device and others did not (Vulkan and WebGPU on lavapipe, OpenCL on
/// PoCL): which ran where, and that ratios across devices compare devices too.
fn several_on_one(devices: &[(String, Vec<String>)], how: Option<&str>) -> (String, String) {
    let on: Vec<String> = (devices.iter())
        .map(|(name, apis)| format!("{} on {name}", crate::and_list(apis)))
        .collect();
    let title = format!("APIs side by side, on {} devices", devices.len());
    (
        title,
        format!(
            "The APIs ran on {} devices: {}. The APIs of one device ran the same grids; a \
             ratio between devices compares the devices as much as the APIs.{}",
            devices.len(),
            on.join("; "),
            how.map(|m| format!(" How the devices were chosen: {m}."))
                .unwrap_or_default()
        ),
    )
}

pub(super) fn render(report: &Report, doc: &mut Doc) {
    let Some(base) = reference(report) else {
        return;
    };
    let (title, sentence) = scope(report, doc.layout.verbose);
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
    let shape = Shape {
        one_grid: same_grids(report, &blocks),
        // A user's kernel that declares no bytes has times only.
        gbps: report
            .results
            .iter()
            .any(|r| r.rows.iter().any(|x| x.gbps.is_some())),
        portable: report.answer.is_some(),
    };
    let mut t = Table::new(columns(report, base, &shape)).overflow(Overflow::Split);
    let mut notes = Notes::new();
    for block in &blocks {
        t.push(row_cells(report, base, &shape, *block, &mut notes));
    }
    doc.table(
        &t,
        &legend(report, base, &shape, doc.layout.verbose),
        &notes,
    );
}

/// What the merged table has: one grid column or one per API; GB/s or times; the
/// everywhere column.
struct Shape {
    one_grid: bool,
    gbps: bool,
    portable: bool,
}

/// The results `r` is compared with: the base (the first API), and the API it runs over where
/// it is a layer (WebGPU over Vulkan: the cost of the layer), where that ran too.
fn references<'a>(
    report: &'a Report,
    base: &'a SweepResult,
    r: &SweepResult,
) -> Vec<&'a SweepResult> {
    let mut refs = Vec::new();
    if r.api != base.api {
        refs.push(base);
    }
    let over = r.api.info().over;
    let under = report.results.iter().find(|u| Some(u.api.key()) == over);
    if let Some(u) = under.filter(|u| u.api != base.api && u.api != r.api) {
        refs.push(u);
    }
    refs
}

fn columns(report: &Report, base: &SweepResult, s: &Shape) -> Vec<Column> {
    let mut cols = vec![Column::right("block").key()];
    if s.one_grid {
        cols.push(Column::right("grid").key());
    }
    let speed = if s.gbps { "GB/s" } else { "ms" };
    for r in &report.results {
        let a = r.api.to_string();
        if !s.one_grid {
            cols.push(Column::right(format!("{a}\ngrid")));
        }
        cols.push(Column::right(format!("{a}\n{speed}")));
        cols.push(Column::right(format!("{a}\nof best")));
        for reference in references(report, base, r) {
            cols.push(Column::right(format!("{a}\n÷{}", reference.api)));
        }
    }
    if s.portable {
        cols.push(Column::right("all\n≥95%"));
    }
    cols
}

/// The speed the table compares: GB/s, or the time where no bytes are declared.
fn speed(row: &SweepRow, s: &Shape) -> Option<f64> {
    match s.gbps {
        true => row.gbps,
        false => row.mean_ms(),
    }
}

fn row_cells(
    report: &Report,
    base: &SweepResult,
    s: &Shape,
    block: BlockSize,
    notes: &mut Notes,
) -> Vec<String> {
    let ceiling = report.theoretical_gbps();
    let find = |r: &'_ SweepResult| r.rows.iter().find(|x| x.block == block).cloned();
    let dash = || "—".to_string();
    let mut cells = vec![block.to_string()];
    if s.one_grid {
        let g = report
            .results
            .iter()
            .find_map(find)
            .map(|x| x.grid.to_string());
        cells.push(g.unwrap_or_else(dash));
    }
    for r in &report.results {
        let row = find(r);
        if !s.one_grid {
            cells.push(
                row.as_ref()
                    .map(|x| x.grid.to_string())
                    .unwrap_or_else(dash),
            );
        }
        match row.as_ref().filter(|x| x.ran()) {
            Some(x) => {
                cells.push(match s.gbps {
                    true => x.gbps.map(|g| gbps(g, ceiling)).unwrap_or_else(dash),
                    false => x.mean_ms().map(ms).unwrap_or_else(dash),
                });
                cells.push(of_best(x));
            }
            None => {
                cells.push(match row.as_ref().and_then(|x| x.skipped.as_ref()) {
                    Some(why) => format!(
                        "skipped {}",
                        notes.mark(format!("{} {block}: {why}", r.api))
                    ),
                    None => dash(),
                });
                cells.push(dash());
            }
        }
        for reference in references(report, base, r) {
            let reference_speed = find(reference)
                .filter(|x| x.ran())
                .and_then(|x| speed(&x, s));
            let ratio = row
                .as_ref()
                .filter(|x| x.ran())
                .and_then(|x| speed(x, s))
                .zip(reference_speed);
            // Times: the reference's time ÷ this one's, so that above 1 is faster here too.
            cells.push(match (ratio, s.gbps) {
                (Some((v, b)), true) => format!("{:.2}", v / b),
                (Some((v, b)), false) => format!("{:.2}", b / v),
                (None, _) => dash(),
            });
        }
    }
    if s.portable {
        let good = report
            .answer
            .as_ref()
            .is_some_and(|a| a.portable.iter().any(|c| c.block == block));
        cells.push(if good { "yes" } else { "no" }.into());
    }
    cells
}

fn legend(report: &Report, base: &SweepResult, s: &Shape, verbose: bool) -> String {
    let words: Vec<String> = report
        .results
        .iter()
        .map(|r| {
            let w = r.api.words();
            format!("{} {} of {}s", r.api, w.block, w.thread)
        })
        .collect();
    let ratios: Vec<String> = (report.results.iter())
        .flat_map(|r| {
            let refs = references(report, base, r);
            refs.into_iter()
                .map(move |u| format!("{}/{}", r.api, u.api))
        })
        .collect();
    let mut legend = vec![format!("block: threads per block ({})", words.join(", "))];
    legend.push(match s.one_grid {
        true => "grid: blocks launched, the same on every API".to_string(),
        false => "grid: blocks launched, per API: each API planned its own on its device (its Grid: line says how)".to_string(),
    });
    if !s.gbps {
        legend.push("ms: mean per dispatch".into());
    }
    legend.push(
        "of best: that API's fastest time ÷ this row's, rounded down (≈: within the noise)".into(),
    );
    if !ratios.is_empty() {
        let what = if s.gbps { "GB/s" } else { "speed (time⁻¹)" };
        let mut heads: Vec<String> = vec![format!("÷{}", base.api)];
        for r in &report.results {
            for u in references(report, base, r) {
                let head = format!("÷{}", u.api);
                if !heads.contains(&head) {
                    heads.push(head);
                }
            }
        }
        let layered = match ratios.len() > report.results.len() - 1 {
            true => {
                "; an API that runs over another is compared with it too: the cost of the layer"
            }
            false => "",
        };
        legend.push(format!(
            "{}: the ratio of {what} at the same block size ({}){layered}",
            heads.join(", "),
            ratios.join(", "),
        ));
    }
    if s.portable {
        legend.push("all ≥95%: within 95 % of its best on every API".into());
    }
    let more = match verbose {
        true => " Times, spreads and copy ratios are in each API's table above.",
        false => "",
    };
    format!("{}.{more}", legend.join("; "))
}
