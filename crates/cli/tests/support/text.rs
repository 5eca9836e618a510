//! Reading the text the binary prints: phrases across wrapped lines, a table's rows, widths.

/// `text` with every run of whitespace made one space, so that a wrapped phrase reads whole.
pub fn flat(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The first line of `text` that starts with `start` after its indentation (a table's row or
/// header); panics showing `text` when there is none.
pub fn line_starting<'a>(text: &'a str, start: &str) -> &'a str {
    text.lines()
        .find(|l| l.trim_start().starts_with(start))
        .unwrap_or_else(|| panic!("no line starting {start:?}:\n{text}"))
}

/// CSV text as rows of fields, the header first.
pub fn csv_rows(text: &str) -> Vec<Vec<String>> {
    text.lines()
        .map(|l| l.split(',').map(str::to_string).collect())
        .collect()
}

/// The widest line, in characters, with the line itself for the message.
pub fn widest(text: &str) -> (usize, String) {
    text.lines()
        .map(|l| (l.chars().count(), l.to_string()))
        .max_by_key(|(n, _)| *n)
        .unwrap_or_default()
}

pub fn assert_fits(text: &str, width: usize, what: &str) {
    let (n, line) = widest(text);
    assert!(
        n <= width,
        "{what}: a line of {n} characters:\n{line}\n\n{text}"
    );
}
