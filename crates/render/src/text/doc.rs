//! A report as paragraphs, lists, headings and tables, for the terminal or markdown.

use crate::layout::{max_line_width, wrap, Layout, Notes, Table};

/// Paragraphs separated by blank lines, each wrapped at the layout's width.
pub(crate) struct Doc {
    parts: Vec<String>,
    pub(crate) layout: Layout,
    pub(crate) md: bool,
}

impl Doc {
    pub(crate) fn new(layout: Layout, md: bool) -> Doc {
        Doc {
            parts: Vec::new(),
            layout,
            md,
        }
    }

    /// Prose: wrapped.
    pub(crate) fn para(&mut self, text: impl AsRef<str>) {
        let t = text.as_ref().trim_end_matches('\n');
        if !t.is_empty() {
            self.parts.push(wrap(t, self.layout.width));
        }
    }

    /// Lines of prose kept as lines (a markdown hard break between them).
    pub(crate) fn lines(&mut self, lines: &[String]) {
        let sep = if self.md { "  \n" } else { "\n" };
        self.para(lines.join(sep));
    }

    /// A list: "- item" each (markdown renders it as one).
    pub(crate) fn list(&mut self, items: &[String]) {
        let text: Vec<String> = items.iter().map(|i| format!("- {i}")).collect();
        self.para(text.join("\n"));
    }

    /// Already laid out (a table).
    pub(crate) fn raw(&mut self, text: impl Into<String>) {
        let t: String = text.into();
        if !t.trim().is_empty() {
            self.parts.push(t.trim_end_matches('\n').to_string());
        }
    }

    /// A heading: `#`s in markdown, an underlined line in text.
    pub(crate) fn heading(&mut self, level: usize, text: &str) {
        match self.md {
            true => self.parts.push(format!("{} {text}", "#".repeat(level))),
            false => {
                let t = wrap(text, self.layout.width);
                let under = if level <= 1 { '=' } else { '-' };
                let n = max_line_width(&t);
                self.parts
                    .push(format!("{t}\n{}", under.to_string().repeat(n)));
            }
        }
    }

    /// A table with the footnotes and legend under it.
    pub(crate) fn table(&mut self, table: &Table, legend: &str, notes: &Notes) {
        self.raw(table.to_text(self.layout, self.md));
        let mut under = Vec::new();
        if !legend.is_empty() {
            under.push(wrap(legend, self.layout.width));
        }
        if !notes.is_empty() {
            under.push(notes.render(self.layout, self.md));
        }
        if !under.is_empty() {
            self.parts
                .push(under.join(if self.md { "\n\n" } else { "\n" }));
        }
    }

    pub(crate) fn finish(self) -> String {
        let mut s = self.parts.join("\n\n");
        s.push('\n');
        s
    }
}
