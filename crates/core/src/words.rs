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
