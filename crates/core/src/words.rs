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
