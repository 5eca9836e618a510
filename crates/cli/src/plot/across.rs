//! `compare --plot` across GPUs: a heat map per GPU (rows: parameters and block, columns:
//! grid) coloured by each cell's fraction of that GPU's best, worst over its APIs, and the
//! portable map, the worst over every GPU. Cells that did not rank everywhere are grey. The
//! core computes the fractions (report/across.rs); the chart module draws them.

use blocksweep_core::answer::Config;
use blocksweep_core::report::across::{Across, Map};
use blocksweep_core::report::GOOD_FRACTION;

use super::chart::{HeatMap, HeatMaps};

/// The SVG of every map, side by side.
pub fn heat_maps(a: &Across) -> String {
    maps(a).to_svg()
}

fn maps(a: &Across) -> HeatMaps {
    let (rows, columns) = axes(a);
    let map = |m: &Map| {
        let title = match &m.gpu {
            // Short enough to sit above its own map (370 px for five grids).
            Some(g) => format!("{g}: worst of its APIs"),
            None => format!("portable: worst of every {}", a.noun),
        };
        let value = |c: &Config, g: &String| {
            let cell = m.cells.iter().find(|x| {
                x.config.block == c.block && x.config.params == c.params && &x.config.grid.0 == g
            });
            cell.and_then(|x| x.of_best)
        };
        HeatMap {
            title,
            cells: rows
                .iter()
                .map(|(_, c)| columns.iter().map(|g| value(c, g)).collect())
                .collect(),
        }
    };
    let maps = a.maps.iter().map(map).collect();
    // The least-regret choice, outlined in every map: where it stands on each device.
    let choice = a.answer.choice.as_ref().map(|c| &c.config);
    let marked = choice.and_then(|c| {
        let row = rows
            .iter()
            .position(|(_, r)| r.block == c.block && r.params == c.params)?;
        Some((row, columns.iter().position(|g| *g == c.grid.0)?))
    });
    let outlined = match (choice, marked) {
        (Some(c), Some(_)) => format!(" Outlined: the least-regret choice, {c}."),
        _ => String::new(),
    };
    HeatMaps {
        rows: rows.iter().map(|(l, _)| l.clone()).collect(),
        columns,
        maps,
        floor: 0.5,
        bar: GOOD_FRACTION,
        caption: format!(
            "Each cell: its fraction of each API's best on that {n} (fastest time ÷ the cell's), \
             the worst over the APIs; portable: the worst over every {n}.{outlined}",
            n = a.noun
        ),
        marked,
    }
}

/// Row labels (parameters and block, sorted) and column labels (grid policies, first seen).
fn axes(a: &Across) -> (Vec<(String, Config)>, Vec<String>) {
    let mut rows: Vec<(String, Config)> = Vec::new();
    let mut columns: Vec<String> = Vec::new();
    for m in &a.measurements {
        let label = match m.config.params_text() {
            p if p.is_empty() => format!("block {}", m.config.block),
            p => format!("{p} {}", m.config.block),
        };
        if !rows.iter().any(|(l, _)| *l == label) {
            rows.push((label, m.config.clone()));
        }
        if !columns.contains(&m.config.grid.0) {
            columns.push(m.config.grid.0.clone());
        }
    }
    rows.sort_by(|a, b| (&a.1.params, a.1.block).cmp(&(&b.1.params, b.1.block)));
    (rows, columns)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two GPUs' sweeps of made-up APIs: one map per GPU and the portable map, each cell the
    /// worst over the APIs (GPU X at 64: A 1.0/1.0, B 0.5/1.0 → 0.50).
    #[test]
    fn a_map_per_gpu_and_the_portable_map_with_each_cells_worst_fraction() {
        use blocksweep_core::report::across::Input;
        use blocksweep_core::report::Report;
        use blocksweep_core::testing::{empty_result, empty_row, timing, TEST_API_A, TEST_API_B};
        use blocksweep_core::BlockSize;
        let run = |gpu: &str, rows: [(f64, f64); 2]| {
            let mut rep = Report::new("t", "d");
            for (api, pick) in [(TEST_API_A, 0), (TEST_API_B, 1)] {
                let mut r = empty_result(api);
                r.device.name = gpu.into();
                for (threads, ms) in [(64, rows[0]), (128, rows[1])] {
                    let mut row = empty_row(BlockSize::linear(threads));
                    row.timing = Some(timing(if pick == 0 { ms.0 } else { ms.1 }));
                    r.rows.push(row);
                }
                r.fill_relative();
                rep.results.push(r);
            }
            rep.refresh_answer();
            Input::of_sweep(gpu, &rep)
        };
        let mut inputs = run("GPU X", [(1.0, 2.0), (1.25, 1.0)]);
        inputs.extend(run("GPU Y", [(1.0, 1.0), (1.0, 1.0)]));
        let a = Across::of(inputs, true).unwrap().unwrap();
        let h = maps(&a);
        assert_eq!(h.rows, vec!["block 64", "block 128"]);
        assert_eq!(h.columns, vec!["wave"]);
        assert_eq!(h.maps.len(), 3);
        assert!(h.maps[0].title.starts_with("GPU X"));
        // GPU X: 64 → min(1.0, 0.5) = 0.5; 128 → min(0.8, 1.0) = 0.8. GPU Y: 1.0 everywhere.
        assert_eq!(h.maps[0].cells, vec![vec![Some(0.5)], vec![Some(0.8)]]);
        assert_eq!(h.maps[1].cells, vec![vec![Some(1.0)], vec![Some(1.0)]]);
        assert_eq!(
            h.maps[2].cells, h.maps[0].cells,
            "the portable map: the worst"
        );
        // The least-regret choice: 128 (worst 0.8, regret 1.25; 64's is 2.0), outlined in
        // every map and named in the caption.
        assert_eq!(h.marked, Some((1, 0)));
        assert!(
            h.caption
                .ends_with("Outlined: the least-regret choice, block 128 grid wave."),
            "{}",
            h.caption
        );
        let svg = heat_maps(&a);
        assert_eq!(svg.matches("class=\"heat-map\"").count(), 3);
        assert_eq!(svg.matches("class=\"marked\"").count(), 3);
    }
}
