//! `sweep --plot` for a tune: a heat map per API (rows: parameters and block, columns: grid)
//! coloured by the fraction of that API's best, and the portable map, the worst fraction over
//! the APIs. Cells that did not rank (refused, not run, wrong) are grey.

use std::fmt::Write;

use blocksweep_core::tune::{Config, TuneReport};
use blocksweep_core::Api;

use super::chart::esc;

const CELL_W: usize = 44;
const CELL_H: usize = 18;
const LEFT: usize = 130;

/// The SVG of every map, side by side.
pub fn heat_maps(r: &TuneReport) -> String {
    let (rows, cols) = axes(r);
    let apis = r.apis();
    let map_w = LEFT + cols.len() * CELL_W + 20;
    let map_h = 60 + rows.len() * CELL_H + 20;
    let total_w = map_w * (apis.len() + 1);
    let mut s = String::new();
    let _ = write!(
        s,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{total_w}\" height=\"{map_h}\" \
         font-family=\"sans-serif\" font-size=\"11\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
    );
    for (i, api) in apis.iter().enumerate() {
        let title = format!("{api}: fraction of its best");
        map(&mut s, i * map_w, &title, &rows, &cols, |c| {
            fraction(r, *api, c)
        });
    }
    let title = "portable: worst fraction over the APIs".to_string();
    map(&mut s, apis.len() * map_w, &title, &rows, &cols, |c| {
        apis.iter()
            .map(|a| fraction(r, *a, c))
            .try_fold(1.0f64, |m, f| f.map(|f| m.min(f)))
    });
    s.push_str("</svg>\n");
    s
}

/// Row labels (parameters and block) and column labels (grid), in report order.
fn axes(r: &TuneReport) -> (Vec<(String, Config)>, Vec<String>) {
    let mut rows: Vec<(String, Config)> = Vec::new();
    for e in &r.entries {
        let label = match e.config.params_text() {
            p if p.is_empty() => format!("block {}", e.config.block),
            p => format!("{p} {}", e.config.block),
        };
        if !rows.iter().any(|(l, _)| *l == label) {
            rows.push((label, e.config.clone()));
        }
    }
    rows.sort_by(|a, b| (&a.1.params, a.1.block).cmp(&(&b.1.params, b.1.block)));
    (rows, r.grids.clone())
}

/// An API's best time ÷ this configuration's, where it ranked.
fn fraction(r: &TuneReport, api: Api, c: &Config) -> Option<f64> {
    let best = r.answer.per_api.iter().find(|b| b.api == api)?;
    if r.is_wrong(api, &c.params) {
        return None;
    }
    let e = r.entries.iter().find(|e| e.api == api && &e.config == c)?;
    Some(best.ms / e.ms()?)
}

fn map(
    s: &mut String,
    x0: usize,
    title: &str,
    rows: &[(String, Config)],
    cols: &[String],
    value: impl Fn(&Config) -> Option<f64>,
) {
    let _ = writeln!(
        s,
        "<text x=\"{}\" y=\"20\" font-weight=\"bold\">{}</text>",
        x0 + 10,
        esc(title)
    );
    for (j, g) in cols.iter().enumerate() {
        let x = x0 + LEFT + j * CELL_W + CELL_W / 2;
        let _ = writeln!(
            s,
            "<text x=\"{x}\" y=\"50\" text-anchor=\"middle\">{}</text>",
            esc(g)
        );
    }
    for (i, (label, c)) in rows.iter().enumerate() {
        let y = 60 + i * CELL_H;
        let _ = writeln!(
            s,
            "<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>",
            x0 + LEFT - 6,
            y + 13,
            esc(label)
        );
        for (j, g) in cols.iter().enumerate() {
            let cell = Config {
                grid: blocksweep_core::tune::GridPolicyKey(g.clone()),
                ..c.clone()
            };
            let v = value(&cell);
            let x = x0 + LEFT + j * CELL_W;
            let _ = writeln!(
                s,
                "<rect x=\"{x}\" y=\"{y}\" width=\"{CELL_W}\" height=\"{CELL_H}\" fill=\"{}\" stroke=\"white\"/>",
                colour(v)
            );
            if let Some(v) = v {
                let ink = if v >= 0.95 { "white" } else { "black" };
                let _ = writeln!(
                    s,
                    "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" fill=\"{ink}\">{v:.2}</text>",
                    x + CELL_W / 2,
                    y + 13
                );
            }
        }
    }
}

/// Dark green at the best, through yellow, to pale at half the best and below; grey: none.
fn colour(v: Option<f64>) -> String {
    let Some(v) = v else {
        return "#d0d0d0".into();
    };
    let t = ((v - 0.5) / 0.5).clamp(0.0, 1.0);
    let lerp = |a: f64, b: f64| (a + (b - a) * t).round() as u8;
    format!(
        "#{:02x}{:02x}{:02x}",
        lerp(255.0, 0x1b as f64),
        lerp(247.0, 0x78 as f64),
        lerp(188.0, 0x37 as f64)
    )
}
