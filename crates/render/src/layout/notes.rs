//! Footnotes: text too long for a cell, numbered under the table.

use super::wrap::wrap_line;
use super::Layout;

/// Numbered footnotes for text too long for a cell: the cell shows `[n]`, the text goes under
/// the table. The same text gets the same number.
#[derive(Debug, Clone, Default)]
pub struct Notes {
    items: Vec<String>,
}

impl Notes {
    pub fn new() -> Notes {
        Notes::default()
    }

    /// The marker for `text`: "\[1\]".
    pub fn mark(&mut self, text: impl Into<String>) -> String {
        let text = text.into();
        let n = match self.items.iter().position(|t| *t == text) {
            Some(i) => i + 1,
            None => {
                self.items.push(text);
                self.items.len()
            }
        };
        format!("[{n}]")
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// "\[1\] text", one per line, wrapped under their own indentation; empty when there are
    /// none. Markdown: a list.
    pub fn render(&self, layout: Layout, md: bool) -> String {
        let mut out = Vec::new();
        for (i, t) in self.items.iter().enumerate() {
            let mark = format!("[{}] ", i + 1);
            match md {
                true => out.push(format!("- {mark}{t}")),
                false => out.push(wrap_line(
                    &format!("{mark}{t}"),
                    layout.width,
                    &" ".repeat(mark.len()),
                )),
            }
        }
        out.join("\n")
    }
}
