//! Fitting text output to a width (hyperfine, clinfo and vulkaninfo stay readable in an
//! 80–100 column terminal): tables that drop their least useful columns or split, long per-row
//! text moved into numbered footnotes, cells of text columns wrapped, prose wrapped.
//!
//! This file is the fitting policy (which columns wrap, drop or split, the footnotes); tabled
//! draws the tables.
//!
//! Widths are counted in characters: every glyph the reports use (≈, ≠, ≥, ±, —, ×, ÷) is one
//! column wide in a terminal.

use tabled::builder::Builder;
use tabled::settings::object::{Columns, Rows};
use tabled::settings::{Alignment, Padding, Span, Style};

/// Where the terminal width cannot be known (a pipe, a file, no `COLUMNS`).
pub const DEFAULT_WIDTH: usize = 100;

/// Narrower than this, tables cannot be made to fit; text is laid out for this width.
pub const MIN_WIDTH: usize = 40;

/// How wide text output may be, and how much of it. Machine formats (CSV, JSON) ignore it and
/// hold everything; markdown uses the width for prose only (GitHub lays tables out itself, so
/// markdown tables keep every column).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    pub width: usize,
    /// Everything: each API's own table under several APIs, how each was timed and built
    /// (`--verbose`, and every file). Off, a report says its answer and its evidence only.
    pub verbose: bool,
}

impl Layout {
    /// No limit: every column, no wrapping (`COLUMNS=1000`, `--wide`).
    pub const WIDE: Layout = Layout {
        width: usize::MAX,
        verbose: false,
    };

    /// `width` columns, at least [`MIN_WIDTH`].
    pub fn new(width: usize) -> Layout {
        Layout {
            width: width.max(MIN_WIDTH),
            verbose: false,
        }
    }

    /// The same width, with everything or not.
    pub fn verbose(self, verbose: bool) -> Layout {
        Layout { verbose, ..self }
    }
}

impl Default for Layout {
    fn default() -> Self {
        Layout::new(DEFAULT_WIDTH)
    }
}

/// Display width of `s` in a terminal.
pub fn width_of(s: &str) -> usize {
    s.chars().count()
}

/// The widest line of `text`, in characters.
pub fn max_line_width(text: &str) -> usize {
    text.lines().map(width_of).max().unwrap_or(0)
}

/// Wraps every line of `text` at `width`; a continuation line is indented two spaces deeper
/// than the line it continues. A markdown hard break (two trailing spaces) stays at the end.
pub fn wrap(text: &str, width: usize) -> String {
    let mut out = String::with_capacity(text.len() + 16);
    for (i, line) in text.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let lead = line.len() - line.trim_start_matches(' ').len();
        let hang = " ".repeat(lead + 2);
        out.push_str(&wrap_line(line, width, &hang));
    }
    out
}

/// Wraps one line at `width`, continuation lines starting with `hang`. Words longer than a
/// line are cut.
pub fn wrap_line(line: &str, width: usize, hang: &str) -> String {
    let hard_break = line.ends_with("  ") && !line.trim().is_empty();
    let body = if hard_break { line.trim_end() } else { line };
    if width_of(body) <= width {
        return line.to_string();
    }
    let lead_len = body.len() - body.trim_start_matches(' ').len();
    let lead = &body[..lead_len];
    let mut lines: Vec<String> = Vec::new();
    let mut cur = lead.to_string();
    let mut cur_has_word = false;
    for word in body[lead_len..].split(' ').filter(|w| !w.is_empty()) {
        let room = width.saturating_sub(width_of(&cur) + usize::from(cur_has_word));
        if width_of(word) <= room {
            if cur_has_word {
                cur.push(' ');
            }
            cur.push_str(word);
            cur_has_word = true;
            continue;
        }
        if cur_has_word {
            lines.push(std::mem::take(&mut cur));
            cur = hang.to_string();
        }
        // Cut a word that does not fit on a line of its own.
        let mut rest: Vec<char> = word.chars().collect();
        let avail = width.saturating_sub(width_of(&cur)).max(1);
        while rest.len() > avail {
            let head: String = rest.drain(..avail).collect();
            cur.push_str(&head);
            lines.push(std::mem::take(&mut cur));
            cur = hang.to_string();
        }
        cur.push_str(&rest.into_iter().collect::<String>());
        cur_has_word = true;
    }
    if cur_has_word || lines.is_empty() {
        lines.push(cur);
    }
    let mut s = lines.join("\n");
    if hard_break {
        s.push_str("  ");
    }
    s
}

/// An API's own name for something: `CL_DEVICE_MAX_WORK_GROUP_SIZE`, `CU_FUNC_ATTRIBUTE_NUM_REGS`,
/// `VK_KHR_...`, `cl_khr_subgroups`, `maxComputeWorkGroupInvocations` (maybe in brackets).
fn is_native_name(word: &str) -> bool {
    let w = word.trim_matches(|c: char| !c.is_ascii_alphanumeric() && c != '_');
    let prefixed = ["CL_", "CU_", "VK_", "cl_", "vk", "cu"]
        .iter()
        .any(|p| w.starts_with(p));
    let camel = w.len() >= 8
        && w.starts_with(|c: char| c.is_ascii_lowercase())
        && w.chars().any(|c| c.is_ascii_uppercase())
        && w.chars().all(|c| c.is_ascii_alphanumeric());
    (prefixed && w.len() >= 6) || camel
}

/// How a column's cells are aligned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Align {
    Left,
    Right,
}

/// What a table does when it is wider than the layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Overflow {
    /// Leave out the columns with the highest `drop` rank, and say which.
    Drop,
    /// Print the columns in several tables, each repeating the `key` columns.
    Split,
}

/// One column: its header (lines separated by `\n`, bottom-aligned), alignment, and how it
/// gives way when the table is too wide.
#[derive(Debug, Clone)]
pub struct Column {
    pub head: String,
    pub align: Align,
    /// 0: never left out; otherwise higher ranks are left out first ([`Overflow::Drop`]).
    pub drop: u8,
    /// Repeated in every part of a split table.
    pub key: bool,
    /// A text column whose cells may wrap onto several lines, down to this many characters.
    pub wrap_min: Option<usize>,
}

impl Column {
    pub fn right(head: impl Into<String>) -> Column {
        Column {
            head: head.into(),
            align: Align::Right,
            drop: 0,
            key: false,
            wrap_min: None,
        }
    }

    pub fn left(head: impl Into<String>) -> Column {
        Column {
            align: Align::Left,
            ..Column::right(head)
        }
    }

    /// Left out first at narrow widths (rank 1 goes before nothing else; higher goes earlier).
    pub fn drop(mut self, rank: u8) -> Column {
        self.drop = rank;
        self
    }

    pub fn key(mut self) -> Column {
        self.key = true;
        self
    }

    /// Cells wrap when the table is too wide, down to `min` characters.
    pub fn wrap(mut self, min: usize) -> Column {
        self.wrap_min = Some(min);
        self
    }

    /// The header on one line, for markdown and for "left out" notes.
    pub fn flat_head(&self) -> String {
        self.head
            .split('\n')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .collect::<Vec<_>>()
            .join(" ")
    }
}

#[derive(Debug, Clone)]
enum Row {
    Cells(Vec<String>),
    /// A line of its own across the table (a group's title).
    Section(String),
}

/// A table of text cells, laid out for a terminal or as GitHub markdown.
#[derive(Debug, Clone)]
pub struct Table {
    columns: Vec<Column>,
    rows: Vec<Row>,
    overflow: Overflow,
}

const SEP: &str = "  ";

impl Table {
    pub fn new(columns: Vec<Column>) -> Table {
        Table {
            columns,
            rows: Vec::new(),
            overflow: Overflow::Drop,
        }
    }

    pub fn overflow(mut self, overflow: Overflow) -> Table {
        self.overflow = overflow;
        self
    }

    pub fn push(&mut self, cells: Vec<String>) {
        debug_assert_eq!(cells.len(), self.columns.len(), "{cells:?}");
        self.rows.push(Row::Cells(cells));
    }

    pub fn section(&mut self, title: impl Into<String>) {
        self.rows.push(Row::Section(title.into()));
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    fn natural(&self, c: usize) -> usize {
        let head = self.columns[c]
            .head
            .split('\n')
            .map(width_of)
            .max()
            .unwrap_or(0);
        self.rows
            .iter()
            .filter_map(|r| match r {
                Row::Cells(cells) => Some(width_of(&cells[c])),
                Row::Section(_) => None,
            })
            .fold(head, usize::max)
    }

    fn total(widths: &[usize], shown: &[usize]) -> usize {
        shown.iter().map(|&c| widths[c]).sum::<usize>() + SEP.len() * shown.len().saturating_sub(1)
    }

    /// The longest word in a column's cells (wrapping never needs to cut below it).
    fn longest_word(&self, c: usize) -> usize {
        self.longest(c, |_| true)
    }

    /// The longest native identifier in a column's cells (`CL_KERNEL_PREFERRED_WORK_GROUP_
    /// SIZE_MULTIPLE`): it is copied and searched for, so it is never cut; a table that cannot
    /// hold it leaves columns out or splits instead.
    fn longest_identifier(&self, c: usize) -> usize {
        self.longest(c, is_native_name)
    }

    fn longest(&self, c: usize, keep: impl Fn(&str) -> bool) -> usize {
        self.rows
            .iter()
            .filter_map(|r| match r {
                Row::Cells(cells) => cells[c].split(' ').filter(|w| keep(w)).map(width_of).max(),
                Row::Section(_) => None,
            })
            .max()
            .unwrap_or(0)
    }

    /// Shrinks wrap columns until `shown` fits `width`, a character at a time from the widest
    /// (so the long texts give way first, evenly): first without cutting a word, then down to
    /// each column's minimum.
    fn shrink(&self, widths: &mut [usize], shown: &[usize], width: usize) {
        let mut total = Self::total(widths, shown);
        // First no word is cut; then no native name; then, where nothing else fits (a very
        // narrow terminal), down to each column's minimum.
        for pass in 0..3 {
            let floor = |c: usize| {
                let min = self.columns[c].wrap_min.unwrap_or(usize::MAX);
                match pass {
                    0 => min.max(self.longest_word(c)),
                    1 => min.max(self.longest_identifier(c)),
                    _ => min,
                }
            };
            let floors: Vec<usize> = (0..widths.len()).map(floor).collect();
            while total > width {
                let Some(&c) = shown
                    .iter()
                    .filter(|&&c| widths[c] > floors[c])
                    .max_by_key(|&&c| widths[c])
                else {
                    break;
                };
                widths[c] -= 1;
                total -= 1;
            }
        }
    }

    /// The table as plain text at most `layout.width` wide where it can be, with a line naming
    /// any columns left out and how to see them.
    pub fn render(&self, layout: Layout) -> String {
        let n = self.columns.len();
        let natural: Vec<usize> = (0..n).map(|c| self.natural(c)).collect();
        let all: Vec<usize> = (0..n).collect();
        let full = Self::total(&natural, &all);
        let width = layout.width;
        if full <= width || self.overflow == Overflow::Drop {
            let mut shown = all.clone();
            let mut widths = natural.clone();
            self.shrink(&mut widths, &shown, width);
            // Leave columns out, highest rank first (rightmost first among equals).
            while Self::total(&widths, &shown) > width {
                let Some(pos) = shown
                    .iter()
                    .enumerate()
                    .filter(|(_, &c)| self.columns[c].drop > 0)
                    .max_by_key(|(i, &c)| (self.columns[c].drop, *i))
                    .map(|(i, _)| i)
                else {
                    break;
                };
                shown.remove(pos);
                widths = natural.clone();
                self.shrink(&mut widths, &shown, width);
            }
            let mut out = self.lines(&shown, &widths, width);
            let hidden: Vec<String> = all
                .iter()
                .filter(|c| !shown.contains(c))
                .map(|&c| self.columns[c].flat_head())
                .collect();
            if !hidden.is_empty() {
                let (them, it) = if hidden.len() == 1 {
                    ("it", "column")
                } else {
                    ("them", "columns")
                };
                out.push('\n');
                out.push_str(&wrap(
                    &format!(
                        "Left out to fit {width} columns ({it} {}): --wide or COLUMNS={full} shows \
                         {them}; CSV and JSON have every column.",
                        hidden.join(", ")
                    ),
                    width,
                ));
            }
            return out;
        }
        // Split: key columns in every part, the others filled in order.
        let keys: Vec<usize> = all
            .iter()
            .copied()
            .filter(|&c| self.columns[c].key)
            .collect();
        // A wrap column needs only its longest word (or its minimum) to be placed.
        let fitted: Vec<usize> = (0..n)
            .map(|c| match self.columns[c].wrap_min {
                Some(m) => natural[c].min(m.max(self.longest_word(c))),
                None => natural[c],
            })
            .collect();
        let mut parts: Vec<Vec<usize>> = Vec::new();
        let mut cur = keys.clone();
        for c in all.iter().copied().filter(|&c| !self.columns[c].key) {
            let mut next = cur.clone();
            next.push(c);
            if Self::total(&fitted, &next) > width && cur.len() > keys.len() {
                parts.push(cur);
                cur = keys.clone();
                cur.push(c);
            } else {
                cur = next;
            }
        }
        if cur.len() > keys.len() || parts.is_empty() {
            parts.push(cur);
        }
        let texts: Vec<String> = parts
            .iter()
            .map(|shown| {
                let mut widths = natural.clone();
                self.shrink(&mut widths, shown, width);
                self.lines(shown, &widths, width)
            })
            .collect();
        texts.join("\n\n")
    }

    /// Draws the `shown` columns with tabled: the header (bottom-aligned, one line per `\n`)
    /// and the rows, cells of wrap columns wrapped at `widths`, columns two spaces apart; a
    /// section's title is a line of its own between the rows.
    fn lines(&self, shown: &[usize], widths: &[usize], width: usize) -> String {
        let mut b = Builder::default();
        // A wrap column's header wraps too, or it would hold the column at its own width.
        let heads: Vec<String> = shown
            .iter()
            .map(|&c| match self.columns[c].wrap_min {
                Some(_) => self.columns[c]
                    .head
                    .split('\n')
                    .map(|l| wrap_line(l, widths[c], ""))
                    .collect::<Vec<_>>()
                    .join("\n"),
                None => self.columns[c].head.clone(),
            })
            .collect();
        let depth = heads
            .iter()
            .map(|h| h.split('\n').count())
            .max()
            .unwrap_or(1);
        b.push_record(heads);
        let heads = depth;
        // Lines each record takes, and the sections to put before data row k.
        let mut heights = vec![heads];
        let mut sections: Vec<(usize, String)> = Vec::new();
        for row in &self.rows {
            match row {
                Row::Section(t) => sections.push((heights.len(), wrap_line(t, width, "  "))),
                Row::Cells(cells) => {
                    let wrapped: Vec<String> = shown
                        .iter()
                        .map(|&c| match self.columns[c].wrap_min {
                            Some(_) if width_of(&cells[c]) > widths[c] => {
                                wrap_line(&cells[c], widths[c], "")
                            }
                            _ => cells[c].clone(),
                        })
                        .collect();
                    heights.push(
                        wrapped
                            .iter()
                            .map(|w| w.split('\n').count())
                            .max()
                            .unwrap_or(1),
                    );
                    b.push_record(wrapped);
                }
            }
        }
        let mut t = b.build();
        t.with(Style::empty())
            .with(Padding::new(0, SEP.len(), 0, 0))
            .modify(Columns::last(), Padding::new(0, 0, 0, 0))
            .modify(Rows::first(), Alignment::bottom());
        for (i, &c) in shown.iter().enumerate() {
            if self.columns[c].align == Align::Right {
                t.modify(Columns::one(i), Alignment::right());
            }
        }
        let drawn = t.to_string();
        let mut lines = drawn.lines().map(|l| l.trim_end().to_string());
        let mut out: Vec<String> = Vec::new();
        for (record, &h) in heights.iter().enumerate() {
            out.extend(
                sections
                    .iter()
                    .filter(|(k, _)| *k == record)
                    .map(|(_, t)| t.clone()),
            );
            out.extend(lines.by_ref().take(h));
        }
        out.extend(
            sections
                .iter()
                .filter(|(k, _)| *k == heights.len())
                .map(|(_, t)| t.clone()),
        );
        out.join("\n")
    }

    /// The table as GitHub-flavoured markdown, drawn by tabled: every column, one header
    /// line, the alignment row, cells padded so the source reads as a table too.
    pub fn markdown(&self) -> String {
        let n = self.columns.len();
        let esc = |s: &str| s.replace('|', "\\|");
        let heads: Vec<String> = self.columns.iter().map(|c| esc(&c.flat_head())).collect();
        let mut widths: Vec<usize> = heads.iter().map(|h| width_of(h).max(3)).collect();
        for row in &self.rows {
            if let Row::Cells(cells) = row {
                for c in 0..n {
                    widths[c] = widths[c].max(width_of(&esc(&cells[c])));
                }
            }
        }
        let mut b = Builder::default();
        b.push_record(heads);
        b.push_record(widths.iter().zip(&self.columns).map(|(w, col)| {
            let dashes = "-".repeat(w.saturating_sub(1));
            match col.align {
                Align::Right => format!("{dashes}:"),
                Align::Left => format!(":{dashes}"),
            }
        }));
        // A section's title spans the row, so that it does not widen the first column.
        let mut sections = Vec::new();
        for row in &self.rows {
            match row {
                Row::Cells(cells) => b.push_record(cells.iter().map(|c| esc(c))),
                Row::Section(t) => {
                    sections.push(b.count_records());
                    let mut v = vec![format!("**{}**", esc(t))];
                    v.resize(n, String::new());
                    b.push_record(v);
                }
            }
        }
        let mut t = b.build();
        t.with(Style::empty().left('|').right('|').vertical('|'));
        for (i, col) in self.columns.iter().enumerate() {
            if col.align == Align::Right {
                t.modify(Columns::one(i), Alignment::right());
            }
        }
        for r in sections {
            t.modify((r, 0), (Span::column(n as isize), Alignment::left()));
        }
        t.to_string()
    }

    /// Text or markdown.
    pub fn to_text(&self, layout: Layout, md: bool) -> String {
        match md {
            true => self.markdown(),
            false => self.render(layout),
        }
    }
}

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

    /// The marker for `text`: "[1]".
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

    /// "[1] text", one per line, wrapped under their own indentation; empty when there are
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wraps_prose_with_a_hanging_indent_and_cuts_long_words() {
        let s = wrap("  one two three four five six", 12);
        assert_eq!(s, "  one two\n    three\n    four\n    five six");
        let s = wrap_line("abcdefghijkl", 5, "");
        assert_eq!(s, "abcde\nfghij\nkl");
        assert_eq!(wrap("short  ", 80), "short  ");
        assert_eq!(wrap("a b c d e f g h  ", 5), "a b c\n  d e\n  f g\n  h  ");
    }

    fn table() -> Table {
        let mut t = Table::new(vec![
            Column::right("block").key(),
            Column::right("aaaaaaaaaa"),
            Column::right("bbbbbbbbbb").drop(1),
            Column::right("cccccccccc").drop(2),
            Column::left("note").wrap(8),
        ]);
        t.push(vec![
            "32".into(),
            "1".into(),
            "2".into(),
            "3".into(),
            "a long note that must wrap onto lines".into(),
        ]);
        t.section("a group");
        t
    }

    #[test]
    fn a_table_fits_by_wrapping_then_leaving_columns_out() {
        let t = table();
        let wide = t.render(Layout::WIDE);
        assert_eq!(wide.lines().count(), 3, "{wide}");
        assert!(wide
            .lines()
            .next()
            .unwrap()
            .starts_with("block  aaaaaaaaaa"));
        let narrow = t.render(Layout::new(40));
        assert!(max_line_width(&narrow) <= 40, "{narrow}");
        let head = narrow.lines().next().unwrap();
        assert!(
            head.contains("note") && !head.contains("cccccccccc"),
            "{narrow}"
        );
        assert!(narrow.contains("a long\n"), "the note wraps: {narrow}");
        assert!(narrow.contains("Left out to fit 40 columns"), "{narrow}");
        assert!(narrow.contains("COLUMNS="), "{narrow}");
        let md = t.markdown();
        assert!(md.starts_with("| block | aaaaaaaaaa |"), "{md}");
        assert!(
            md.contains("\n| **a group**  "),
            "a section spans its row: {md}"
        );
    }

    #[test]
    fn a_split_table_repeats_its_key_columns() {
        let t = table().overflow(Overflow::Split);
        let s = t.render(Layout::new(40));
        assert!(max_line_width(&s) <= 40, "{s}");
        assert_eq!(s.matches("block").count(), 2, "{s}");
        assert!(s.contains("cccccccccc"), "nothing is dropped: {s}");
    }

    #[test]
    fn native_names_are_never_cut() {
        let mut t = Table::new(vec![
            Column::left("concept").wrap(8),
            Column::left("native name").wrap(10),
        ]);
        t.push(vec![
            "warp / subgroup size".into(),
            "CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE".into(),
        ]);
        let s = t.render(Layout::new(60));
        assert!(
            s.contains("CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE"),
            "{s}"
        );
        assert!(max_line_width(&s) <= 60, "{s}");
        assert!(is_native_name("maxComputeWorkGroupInvocations"));
        assert!(is_native_name("(CU_FUNC_ATTRIBUTE_NUM_REGS)"));
        assert!(!is_native_name("BLOCKSWEEP_KERNEL_grayscale"));
        assert!(!is_native_name("pthread-x86_64-pc-linux-gnu"));
    }

    #[test]
    fn footnotes_number_each_text_once() {
        let mut n = Notes::new();
        assert_eq!(n.mark("x"), "[1]");
        assert_eq!(n.mark("y"), "[2]");
        assert_eq!(n.mark("x"), "[1]");
        assert_eq!(n.render(Layout::default(), false), "[1] x\n[2] y");
    }
}
