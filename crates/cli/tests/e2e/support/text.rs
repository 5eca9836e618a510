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

/// CSV text as rows of fields, the header first. A quoted field keeps its commas (a device
/// name such as "llvmpipe (LLVM 15.0.6, 256 bits)"); `""` inside one is a quote.
pub fn csv_rows(text: &str) -> Vec<Vec<String>> {
    text.lines().map(csv_fields).collect()
}

fn csv_fields(line: &str) -> Vec<String> {
    let (mut fields, mut field, mut quoted) = (Vec::new(), String::new(), false);
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' if quoted && chars.peek() == Some(&'"') => {
                field.push('"');
                chars.next();
            }
            '"' => quoted = !quoted,
            ',' if !quoted => fields.push(std::mem::take(&mut field)),
            c => field.push(c),
        }
    }
    fields.push(field);
    fields
}

/// The field of `row` under the header's `column`; panics naming the column when it is absent.
pub fn csv_field<'a>(header: &[String], row: &'a [String], column: &str) -> &'a str {
    let i = header
        .iter()
        .position(|h| h == column)
        .unwrap_or_else(|| panic!("no CSV column {column:?} in {header:?}"));
    &row[i]
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
