//! Heat maps side by side: per map a title, row labels down the left, column labels on top,
//! and one cell per (row, column) coloured by its value from `floor` (pale) to 1.0 (dark
//! green), grey where it has none; each cell prints its value, in white from `bar` up.
//!
//! The SVG names what a reader looks for: `class="heat-map"` on each map's group (with
//! `data-title`), `class="cell"` on every cell (with `data-row`, `data-column` and, where it
//! has one, `data-value`).

use std::fmt::Write;

use blocksweep_core::words::fraction;

use super::layout::text_width;
use super::{esc, Colour};

const CELL_W: usize = 44;
const CELL_H: usize = 18;
const LEFT: usize = 130;
const TOP: usize = 60;
const FONT: f64 = 11.0;
/// Room between a map's title and the next map's, and under the maps per caption line.
const GAP: usize = 20;
const LINE_H: usize = 16;

/// A generous width of a bold title: the layout's estimate of regular text a tenth wider, and
/// never under 0.6 em a character.
fn bold_width(text: &str) -> f64 {
    let chars = text.chars().count() as f64 * 0.6 * FONT;
    (text_width(text, FONT) * 1.1).max(chars)
}

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
    /// What a cell's value is, said in one line under the maps (the scale's line follows it).
    pub caption: String,
    /// One (row, column) outlined in every map (the least-regret choice), said by the caller's
    /// caption.
    pub marked: Option<(usize, usize)>,
}

impl HeatMaps {
    /// The maps as one SVG document, left to right.
    pub fn to_svg(&self) -> String {
        // Each map as wide as its cells or its longest title (one column is 194 px, a GPU's
        // title more), so that no title runs into the next map's.
        let titles = self
            .maps
            .iter()
            .map(|m| bold_width(&m.title).ceil() as usize);
        let map_w = titles
            .map(|w| 10 + w + GAP)
            .fold(LEFT + self.columns.len() * CELL_W + 20, usize::max);
        let map_h = TOP + self.rows.len() * CELL_H + 20;
        let captions = self.captions();
        let widest = captions.iter().map(|l| text_width(l, FONT).ceil() as usize);
        let total_w = widest
            .map(|w| 10 + w + 10)
            .fold(map_w * self.maps.len().max(1), usize::max);
        let total_h = map_h + captions.len() * LINE_H;
        let mut s = String::new();
        let _ = write!(
            s,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{total_w}\" height=\"{total_h}\" \
             font-family=\"sans-serif\" font-size=\"11\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
        );
        for (i, m) in self.maps.iter().enumerate() {
            self.map(&mut s, i * map_w, m);
        }
        for (i, line) in captions.iter().enumerate() {
            let _ = writeln!(
                s,
                "<text class=\"caption\" x=\"10\" y=\"{}\">{}</text>",
                map_h + i * LINE_H,
                esc(line)
            );
        }
        s.push_str("</svg>\n");
        s
    }

    /// The caller's line on what a value is, then the scale's.
    fn captions(&self) -> Vec<String> {
        let scale = format!(
            "Colour: pale at {:.2} and below to dark green at 1.00; figures rounded down, in \
             white from {:.2}; grey: no value.",
            self.floor, self.bar
        );
        let mut lines: Vec<String> = Vec::new();
        if !self.caption.is_empty() {
            lines.push(self.caption.clone());
        }
        lines.push(scale);
        lines
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
        // Drawn last, so that no neighbour's white border covers it.
        if let Some((i, j)) = self
            .marked
            .filter(|&(i, j)| i < self.rows.len() && j < self.columns.len())
        {
            let _ = writeln!(
                s,
                "<rect class=\"marked\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" \
                 stroke=\"black\" stroke-width=\"2\"/>",
                x0 + LEFT + j * CELL_W + 1,
                TOP + i * CELL_H + 1,
                CELL_W - 2,
                CELL_H - 2
            );
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
                "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" fill=\"{ink}\">{}</text>",
                x + CELL_W / 2,
                y + 13,
                fraction(v)
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
            caption: String::new(),
            marked: None,
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

    /// Every map's bold title, its x and its generous width (the layout's estimate).
    /// The number in `text`'s first `name="..."` attribute.
    fn attribute(text: &str, name: &str) -> f64 {
        let after = text.split(&format!("{name}=\"")).nth(1).unwrap();
        after.split('"').next().unwrap().parse().unwrap()
    }

    fn titles(svg: &str) -> Vec<(f64, f64, String)> {
        svg.lines()
            .filter(|l| l.contains("font-weight=\"bold\""))
            .map(|l| {
                let x = attribute(l, "x");
                let text = l
                    .split('>')
                    .nth(1)
                    .unwrap()
                    .split('<')
                    .next()
                    .unwrap()
                    .to_string();
                (x, bold_width(&text), text)
            })
            .collect()
    }

    /// One grid column (every plain sweep) and GPU names as long as an H100's: each title
    /// ends before the next begins, and the last within the picture.
    #[test]
    fn titles_of_one_column_maps_do_not_overlap() {
        let title = |g: &str| format!("{g}: worst of its APIs");
        let maps = HeatMaps {
            rows: vec!["block 64".into(), "block 128".into()],
            columns: vec!["wave".into()],
            maps: vec![
                HeatMap {
                    title: title("NVIDIA H100 80GB HBM3"),
                    cells: vec![vec![Some(1.0)], vec![Some(0.9455)]],
                },
                HeatMap {
                    title: title("NVIDIA H200"),
                    cells: vec![vec![Some(1.0)], vec![Some(0.97)]],
                },
                HeatMap {
                    title: "portable: worst of every GPU".into(),
                    cells: vec![vec![Some(1.0)], vec![Some(0.9455)]],
                },
            ],
            floor: 0.5,
            bar: 0.95,
            caption: "Colour: each cell's fraction of the best.".into(),
            marked: None,
        };
        let svg = maps.to_svg();
        let t = titles(&svg);
        assert_eq!(t.len(), 3, "{svg}");
        for w in t.windows(2) {
            assert!(w[0].0 + w[0].1 < w[1].0, "{:?} runs into {:?}", w[0], w[1]);
        }
        let width = attribute(&svg, "width");
        let last = &t[2];
        assert!(last.0 + last.1 <= width, "{last:?} past {width}");
        assert!(
            svg.contains(">0.94</text>"),
            "a cell short of the bar reads below it: {svg}"
        );
        assert!(svg.contains("class=\"caption\""), "{svg}");
    }
}
