//! Words every layer puts in its sentences, below every module that writes one (the API's own
//! facts, the guarantees, the reports), so that none of them reaches up for them.

/// "A", "A and B", "A, B and C": a list in a sentence.
pub fn and_list<S: AsRef<str>>(items: &[S]) -> String {
    let items: Vec<&str> = items.iter().map(AsRef::as_ref).collect();
    match items.split_last() {
        None => String::new(),
        Some((last, [])) => last.to_string(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
    }
}

/// Milliseconds to four significant figures (0.03612, 1.234, 50.97, 123.4): a 36 µs kernel
/// needs the fourth digit for neighbouring rows to differ on screen.
pub fn ms(v: f64) -> String {
    match v {
        v if v >= 100.0 => format!("{v:.1}"),
        v if v >= 10.0 => format!("{v:.2}"),
        v if v >= 1.0 => format!("{v:.3}"),
        v if v >= 0.1 => format!("{v:.4}"),
        v => format!("{v:.5}"),
    }
}

/// A fraction of a best to two places, rounded down: the figure shown is never above the value,
/// so a row short of the 0.95 bar (0.9455, 0.9499) reads 0.94, never 0.95. The rounding is
/// checked against the value as stored, so 0.29 reads 0.29, not 0.28.
pub fn fraction(v: f64) -> String {
    let mut hundredths = (v * 100.0).round();
    if hundredths / 100.0 > v {
        hundredths -= 1.0;
    }
    format!("{:.2}", hundredths / 100.0)
}

#[cfg(test)]
mod tests {
    use super::fraction;

    #[test]
    fn a_fraction_is_rounded_down_so_the_bar_reads_only_when_reached() {
        let shown: Vec<String> = [0.9455, 0.9499, 0.95, 0.951, 1.0, 0.29, 0.996]
            .into_iter()
            .map(fraction)
            .collect();
        assert_eq!(
            shown,
            ["0.94", "0.94", "0.95", "0.95", "1.00", "0.29", "0.99"]
        );
        for v in (0..=10_000).map(|i| i as f64 / 10_000.0) {
            let s = fraction(v);
            assert!(s.parse::<f64>().unwrap() <= v, "{v} reads {s}");
            assert!(v - s.parse::<f64>().unwrap() < 0.01, "{v} reads {s}");
        }
    }
}
