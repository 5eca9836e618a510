//! The cells the sweep's tables share: times, spreads, ratios to the best, GB/s.

use blocksweep_core::sweep::SweepRow;

use blocksweep_core::words::fraction;
pub(crate) use blocksweep_core::words::ms;

/// The row's spread: the coefficient of variation of one dispatch, "±1.2%".
pub(crate) fn spread(t: &blocksweep_core::measure::Timing) -> String {
    format!("±{:.1}%", t.stats.cv() * 100.0)
}

/// "0.99" (rounded down: [`fraction`]), with the verdict's mark: " ≈" where the data cannot tell the row from the
/// fastest, " ?" where it cannot rank the row at all ([`blocksweep_core::sweep::Verdict`]).
pub(crate) fn of_best(row: &SweepRow) -> String {
    match row.of_best {
        Some(o) => format!(
            "{}{}",
            fraction(o),
            row.verdict.map(|v| v.mark()).unwrap_or("")
        ),
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

#[cfg(test)]
mod tests {
    use blocksweep_core::testing::empty_row;
    use blocksweep_core::BlockSize;

    /// The table's cell reads below the 0.95 bar wherever the row is below it.
    #[test]
    fn an_of_best_cell_below_the_bar_never_reads_as_the_bar() {
        let cells: Vec<String> = [0.9455, 0.9499, 0.95, 0.951]
            .into_iter()
            .map(|o| {
                let mut row = empty_row(BlockSize::linear(64));
                row.of_best = Some(o);
                super::of_best(&row)
            })
            .collect();
        assert_eq!(cells, ["0.94", "0.94", "0.95", "0.95"]);
    }
}
