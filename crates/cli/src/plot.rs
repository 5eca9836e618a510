//! The SVG plots: `sweep --plot` draws GB/s against block size ([`sweep`]), `tail --plot` GB/s
//! against waves ([`waves`]). Each turns its report into a [`chart::Chart`]; `chart` draws any
//! chart as SVG, so a new kind of plot is a new function that builds a `Chart`.

pub(crate) mod chart;
pub mod sweep;
pub mod waves;

pub use sweep::render_svg;

use chart::{Colour, Glyph, Note};

/// Colour-blind-safe (ColorBrewer Dark2), one per API in the order they ran.
const COLOURS: [Colour; 4] = [
    Colour(0x1b, 0x9e, 0x77),
    Colour(0xd9, 0x5f, 0x02),
    Colour(0x75, 0x70, 0xb3),
    Colour(0xe7, 0x29, 0x8a),
];

/// The colour of the `i`-th API of a report.
fn api_colour(i: usize) -> Colour {
    COLOURS[i % COLOURS.len()]
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
