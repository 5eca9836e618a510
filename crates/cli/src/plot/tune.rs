//! `sweep --plot` for a tune: a heat map per API (rows: parameters and block, columns: grid)
//! coloured by the fraction of that API's best, and the portable map, the worst fraction over
//! the APIs. Cells that did not rank (refused, not run, wrong) are grey. The chart module
//! draws them ([`HeatMaps`]); this file only turns the report into maps.

use blocksweep_core::report::GOOD_FRACTION;
use blocksweep_core::tune::{Config, GridPolicyKey, TuneReport};
use blocksweep_core::Api;

use super::chart::{HeatMap, HeatMaps};

/// The SVG of every map, side by side.
pub fn heat_maps(r: &TuneReport) -> String {
    maps(r).to_svg()
}

/// Each API's map, then the portable one.
fn maps(r: &TuneReport) -> HeatMaps {
    let (rows, columns) = axes(r);
    let apis = r.apis();
    let map = |title: String, value: &dyn Fn(&Config) -> Option<f64>| HeatMap {
        title,
        cells: rows
            .iter()
            .map(|(_, c)| {
                columns
                    .iter()
                    .map(|g| {
                        value(&Config {
                            grid: GridPolicyKey(g.clone()),
                            ..c.clone()
                        })
                    })
                    .collect()
            })
            .collect(),
    };
    let mut maps: Vec<HeatMap> = apis
        .iter()
        .map(|&a| map(format!("{a}: fraction of its best"), &|c| fraction(r, a, c)))
        .collect();
    maps.push(map(
        "portable: worst fraction over the APIs".to_string(),
        &|c| {
            apis.iter()
                .map(|a| fraction(r, *a, c))
                .try_fold(1.0f64, |m, f| f.map(|f| m.min(f)))
        },
    ));
    HeatMaps {
        rows: rows.into_iter().map(|(l, _)| l).collect(),
        columns,
        maps,
        floor: 0.5,
        bar: GOOD_FRACTION,
        caption: "Each cell: its fraction of the API's best (fastest time ÷ the cell's); \
                  portable: the worst over the APIs."
            .into(),
        marked: None,
    }
}

/// Row labels (parameters and block) and column labels (grid), in report order.
fn axes(r: &TuneReport) -> (Vec<(String, Config)>, Vec<String>) {
    let mut rows: Vec<(String, Config)> = Vec::new();
    for m in &r.measurements {
        let label = match m.config.params_text() {
            p if p.is_empty() => format!("block {}", m.config.block),
            p => format!("{p} {}", m.config.block),
        };
        if !rows.iter().any(|(l, _)| *l == label) {
            rows.push((label, m.config.clone()));
        }
    }
    rows.sort_by(|a, b| (&a.1.params, a.1.block).cmp(&(&b.1.params, b.1.block)));
    (rows, r.grids.clone())
}

/// An API's best time ÷ this configuration's, where it ranked.
fn fraction(r: &TuneReport, api: Api, c: &Config) -> Option<f64> {
    let best = r.answer.best.iter().find(|b| b.api == api)?;
    if r.is_wrong(api, &c.params) {
        return None;
    }
    let m = r
        .measurements
        .iter()
        .find(|m| m.api == api && &m.config == c)?;
    Some(best.ms / m.ms()?)
}
