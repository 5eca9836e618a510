//! What a row of either lab sweep measures: the shape sweep's rows ([`ShapeMeasured`]) and the
//! grid sweep's ([`WaveRow`]) keep the same measured fields under the same names, and are run,
//! ranked and rendered through this one view of them.

use crate::measure::Timing;

use super::shapes::ShapeMeasured;
use super::waves::WaveRow;

/// What measuring one launch gave: its timing and GB/s, or why it did not run, or the first
/// wrong pixel.
pub enum Measured {
    Ran(Timing, f64),
    Refused(String),
    Wrong(String),
}

/// A row's measured fields, borrowed.
pub struct Measurement<'a> {
    pub timing: Option<&'a Timing>,
    pub gbps: Option<f64>,
    pub of_best: Option<f64>,
    pub verified: bool,
    /// "WRONG", or why the row did not run.
    pub skipped: Option<&'a str>,
}

/// A row of a lab sweep.
pub trait LabRow {
    fn measurement(&self) -> Measurement<'_>;
    /// Writes `m` into the row's fields; returns the mismatch that stops the sweep.
    fn record(&mut self, m: Measured) -> Option<String>;
    fn set_of_best(&mut self, of_best: Option<f64>);
}

/// [`LabRow`] for row types with the measured fields `timing`, `gbps`, `of_best`, `verified`
/// and `skipped`.
macro_rules! lab_row {
    ($($row:ty),*) => {$(
        impl LabRow for $row {
            fn measurement(&self) -> Measurement<'_> {
                Measurement {
                    timing: self.timing.as_ref(),
                    gbps: self.gbps,
                    of_best: self.of_best,
                    verified: self.verified,
                    skipped: self.skipped.as_deref(),
                }
            }
            fn record(&mut self, m: Measured) -> Option<String> {
                match m {
                    Measured::Ran(t, g) => {
                        (self.timing, self.gbps, self.verified) = (Some(t), Some(g), true);
                        None
                    }
                    Measured::Refused(why) => {
                        self.skipped = Some(why);
                        None
                    }
                    Measured::Wrong(why) => {
                        self.skipped = Some("WRONG".into());
                        Some(why)
                    }
                }
            }
            fn set_of_best(&mut self, of_best: Option<f64>) {
                self.of_best = of_best;
            }
        }
    )*};
}

lab_row!(ShapeMeasured, WaveRow);

/// Fills each row's `of_best`: its GB/s over the fastest of `rows`.
pub(crate) fn fill_of_best<'a, R: LabRow + 'a>(rows: impl Iterator<Item = &'a mut R>) {
    let mut rows: Vec<&mut R> = rows.collect();
    let best = rows
        .iter()
        .filter_map(|r| r.measurement().gbps)
        .fold(None, |a: Option<f64>, g| Some(a.map_or(g, |a| a.max(g))));
    for r in &mut rows {
        let of_best = best.zip(r.measurement().gbps).map(|(b, g)| g / b);
        r.set_of_best(of_best);
    }
}
