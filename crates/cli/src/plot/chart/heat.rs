//! Heat maps side by side: per map a title, row labels down the left, column labels on top,
//! and one cell per (row, column) coloured by its value from `floor` (pale) to 1.0 (dark
//! green), grey where it has none; each cell prints its value, in white from `bar` up.
//!
//! The SVG names what a reader looks for: `class="heat-map"` on each map's group (with
//! `data-title`), `class="cell"` on every cell (with `data-row`, `data-column` and, where it
//! has one, `data-value`).

use std::fmt::Write;

use super::{esc, Colour};

const CELL_W: usize = 44;
const CELL_H: usize = 18;
const LEFT: usize = 130;
const TOP: usize = 60;

/// One map: a value (or none) per row and column.
#[derive(Debug, Clone, PartialEq)]
pub struct HeatMap {
    pub title: String,
    /// `cells[row][column]`.
    pub cells: Vec<Vec<Option<f64>>>,
}

/// Maps that share their rows and columns.
#[derive(Debug, Clone, PartialEq)]
pub struct HeatMaps {
    pub rows: Vec<String>,
    pub columns: Vec<String>,
    pub maps: Vec<HeatMap>,
    /// The value at and below which a cell is palest.
    pub floor: f64,
    /// The value from which a cell's number is printed in white (the dark cells).
    pub bar: f64,
}

impl HeatMaps {
    /// The maps as one SVG document, left to right.
    pub fn to_svg(&self) -> String {
        let map_w = LEFT + self.columns.len() * CELL_W + 20;
        let map_h = TOP + self.rows.len() * CELL_H + 20;
        let total_w = map_w * self.maps.len().max(1);
        let mut s = String::new();
        let _ = write!(
            s,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{total_w}\" height=\"{map_h}\" \
             font-family=\"sans-serif\" font-size=\"11\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
        );
        for (i, m) in self.maps.iter().enumerate() {
            self.map(&mut s, i * map_w, m);
        }
        s.push_str("</svg>\n");
        s
    }

    fn map(&self, s: &mut String, x0: usize, m: &HeatMap) {
        let title = esc(&m.title);
        let _ = writeln!(s, "<g class=\"heat-map\" data-title=\"{title}\">");
        let _ = writeln!(
            s,
            "<text x=\"{}\" y=\"20\" font-weight=\"bold\">{title}</text>",
            x0 + 10
        );
        for (j, c) in self.columns.iter().enumerate() {
            let x = x0 + LEFT + j * CELL_W + CELL_W / 2;
            let _ = writeln!(
                s,
                "<text x=\"{x}\" y=\"50\" text-anchor=\"middle\">{}</text>",
                esc(c)
            );
        }
        for (i, label) in self.rows.iter().enumerate() {
            let y = TOP + i * CELL_H;
            let _ = writeln!(
                s,
                "<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>",
                x0 + LEFT - 6,
                y + 13,
                esc(label)
            );
            for (j, column) in self.columns.iter().enumerate() {
                let v = m.cells.get(i).and_then(|r| r.get(j)).copied().flatten();
                self.cell(s, (x0 + LEFT + j * CELL_W, y), (label, column), v);
            }
        }
        s.push_str("</g>\n");
    }

    fn cell(
        &self,
        s: &mut String,
        (x, y): (usize, usize),
        (row, col): (&str, &str),
        v: Option<f64>,
    ) {
        let value = v
            .map(|v| format!(" data-value=\"{v}\""))
            .unwrap_or_default();
        let _ = writeln!(
            s,
            "<rect class=\"cell\" data-row=\"{}\" data-column=\"{}\"{value} x=\"{x}\" y=\"{y}\" \
             width=\"{CELL_W}\" height=\"{CELL_H}\" fill=\"{}\" stroke=\"white\"/>",
            esc(row),
            esc(col),
            self.colour(v).css()
        );
        if let Some(v) = v {
            let ink = if v >= self.bar { "white" } else { "black" };
            let _ = writeln!(
                s,
                "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" fill=\"{ink}\">{v:.2}</text>",
                x + CELL_W / 2,
                y + 13
            );
        }
    }

    /// Dark green at 1.0, through yellow, to pale at `floor` and below; grey: none.
    fn colour(&self, v: Option<f64>) -> Colour {
        let Some(v) = v else {
            return Colour(0xd0, 0xd0, 0xd0);
        };
        let t = ((v - self.floor) / (1.0 - self.floor)).clamp(0.0, 1.0);
        let lerp = |a: f64, b: f64| (a + (b - a) * t).round() as u8;
        Colour(lerp(255.0, 27.0), lerp(247.0, 120.0), lerp(188.0, 55.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_are_coloured_by_value_and_named() {
        let maps = HeatMaps {
            rows: vec!["block 64".into(), "block <128>".into()],
            columns: vec!["1w".into(), "data".into()],
            maps: vec![HeatMap {
                title: "Alpha".into(),
                cells: vec![vec![Some(1.0), Some(0.5)], vec![None, Some(0.97)]],
            }],
            floor: 0.5,
            bar: 0.95,
        };
        let svg = maps.to_svg();
        assert_eq!(svg.matches("class=\"cell\"").count(), 4, "{svg}");
        assert!(
            svg.contains("data-row=\"block &lt;128&gt;\" data-column=\"1w\" x="),
            "{svg}"
        );
        assert!(
            svg.contains("fill=\"#1b7837\""),
            "1.0 is the darkest: {svg}"
        );
        assert!(
            svg.contains("fill=\"#fff7bc\""),
            "the floor is the palest: {svg}"
        );
        assert!(svg.contains("fill=\"#d0d0d0\""), "no value is grey: {svg}");
        assert!(svg.contains("fill=\"white\">0.97</text>"), "{svg}");
        assert!(svg.contains("fill=\"black\">0.50</text>"), "{svg}");
    }
}
