//! The SVG plots: `sweep --plot` draws GB/s against block size ([`sweep`]), `tail --plot` GB/s
//! against waves ([`waves`]). Each turns its report into a [`chart::Chart`]; `chart` draws any
//! chart as SVG, so a new kind of plot is a new function that builds a `Chart`.

pub mod across;
pub(crate) mod chart;
pub mod sweep;
pub mod tune;
pub mod waves;

pub use sweep::render_svg;

use chart::{Colour, Glyph, Marker, Note};

/// Colour-blind-safe (ColorBrewer Dark2), one per API key, so an API has its colour and
/// marker in every plot whichever APIs ran and in whatever order.
const API_STYLES: [(&str, Colour, Marker); 3] = [
    ("cuda", Colour(0x1b, 0x9e, 0x77), Marker::Circle),
    ("vulkan", Colour(0xd9, 0x5f, 0x02), Marker::Square),
    ("opencl", Colour(0x75, 0x70, 0xb3), Marker::Diamond),
];

/// The rest of Dark2, for keys the table does not know.
const OTHER_COLOURS: [Colour; 4] = [
    Colour(0xe7, 0x29, 0x8a),
    Colour(0x66, 0xa6, 0x1e),
    Colour(0xa6, 0x76, 0x1d),
    Colour(0xe6, 0xab, 0x02),
];

/// The colour and marker of the API `key`: from the table, or for an unknown key picked by a
/// hash of the key, so it too is the same in every plot.
fn api_style(key: &str) -> (Colour, Marker) {
    if let Some(&(_, c, m)) = API_STYLES.iter().find(|(k, _, _)| *k == key) {
        return (c, m);
    }
    let h = key
        .bytes()
        .fold(0usize, |h, b| h.wrapping_mul(31).wrapping_add(b as usize));
    (OTHER_COLOURS[h % OTHER_COLOURS.len()], Marker::Triangle)
}

fn api_colour(key: &str) -> Colour {
    api_style(key).0
}

/// The legend's line for the whiskers, the same on every plot.
fn whiskers_note() -> Note {
    Note {
        glyph: Glyph::Whisker,
        text: "whiskers: ±1 sd of one dispatch".into(),
    }
}

/// A whisker of ±1 sd around `y`, from a coefficient of variation, never below 0.
fn whisker(y: f64, cv: f64) -> (f64, f64) {
    ((y * (1.0 - cv)).max(0.0), y * (1.0 + cv))
}

#[cfg(test)]
mod tests {
    use super::*;
    use blocksweep_core::lab::waves::WaveKernel;

    #[test]
    fn each_api_key_has_one_style_and_unknown_keys_a_stable_one() {
        assert_eq!(api_style("vulkan").0, Colour(0xd9, 0x5f, 0x02));
        let colours: Vec<Colour> = API_STYLES.iter().map(|s| s.1).collect();
        assert!(!colours[1..].contains(&colours[0]) && colours[1] != colours[2]);
        assert_eq!(api_style("metal"), api_style("metal"));
        assert!(!colours.contains(&api_style("metal").0));
    }

    /// docs/guide.md's words for the plots' marks are what the plots draw: each API's colour
    /// and marker on the sweep's plot, and on the tail plot a colour per API with a marker per
    /// kernel (it said OpenCL is purple diamonds "in every plot", the tail plot's included).
    #[test]
    fn the_guide_names_the_marks_each_plot_draws() {
        let guide = include_str!("../../../docs/guide.md");
        let flat = guide.split_whitespace().collect::<Vec<_>>().join(" ");
        let words = |m: Marker| match m {
            Marker::Circle => "circles",
            Marker::Square => "squares",
            Marker::Diamond => "diamonds",
            Marker::Triangle => "triangles",
        };
        let colour = ["green", "orange", "purple"];
        let styles: Vec<String> = (API_STYLES.iter().zip(colour))
            .map(|((key, _, m), c)| {
                let api = match *key {
                    "cuda" => "CUDA",
                    "vulkan" => "Vulkan",
                    _ => "OpenCL",
                };
                format!("{api} {c} {}", words(*m))
            })
            .collect();
        let sweep = format!(
            "on the sweep's plot (and replay's) one colour and marker: {}",
            styles.join(", ")
        );
        assert!(flat.contains(&sweep), "guide.md lacks {sweep:?}");
        let tail = format!(
            "On the `tail` plot each API keeps its colour and the marker tells the kernels apart: \
             {} for the grid-stride kernel, {} for one pixel per thread",
            words(waves::marker(WaveKernel::GridStride)),
            words(waves::marker(WaveKernel::OnePerThread)),
        );
        assert!(flat.contains(&tail), "guide.md lacks {tail:?}");
    }
}
