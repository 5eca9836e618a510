//! The cells the sweep's tables share: times, spreads, ratios to the best, GB/s.

use crate::sweep::SweepRow;

/// Milliseconds to four significant figures (0.03612, 1.234, 50.97, 123.4): a 36 µs kernel
/// needs the fourth digit for neighbouring rows to differ on screen.
pub(crate) fn ms(v: f64) -> String {
    match v {
        v if v >= 100.0 => format!("{v:.1}"),
        v if v >= 10.0 => format!("{v:.2}"),
        v if v >= 1.0 => format!("{v:.3}"),
        v if v >= 0.1 => format!("{v:.4}"),
        v => format!("{v:.5}"),
    }
}

/// The row's spread: the coefficient of variation of one dispatch, "±1.2%".
pub(crate) fn spread(t: &crate::measure::Timing) -> String {
    format!("±{:.1}%", t.stats.cv() * 100.0)
}

/// "0.99", with the verdict's mark: " ≈" where the data cannot tell the row from the
/// fastest, " ?" where it cannot rank the row at all ([`crate::sweep::Verdict`]).
pub(crate) fn of_best(row: &SweepRow) -> String {
    match row.of_best {
        Some(o) => format!("{o:.2}{}", row.verdict.map(|v| v.mark()).unwrap_or("")),
        None => "—".into(),
    }
}

/// GB/s, flagged with `*` when above the device's theoretical DRAM bandwidth: such a figure
/// means the frame sat in cache, not that DRAM went faster than physics.
pub(crate) fn gbps(v: f64, ceiling: Option<f64>) -> String {
    match ceiling {
        Some(c) if v > c => format!("{v:.1}*"),
        _ => format!("{v:.1}"),
    }
}
