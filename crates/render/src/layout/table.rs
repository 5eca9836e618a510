//! A table's columns and rows, and the policy that fits it to a width: which columns give
//! way (left out by rank, or the table split into parts that repeat the key columns) and how
//! wide each is. tabled draws the result ([`super::draw`]).

use super::wrap::{is_native_name, wrap};
use super::{width_of, Layout};

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
pub(super) enum Row {
    Cells(Vec<String>),
    /// A line of its own across the table (a group's title).
    Section(String),
}

/// A table of text cells, laid out for a terminal or as GitHub markdown.
#[derive(Debug, Clone)]
pub struct Table {
    pub(super) columns: Vec<Column>,
    pub(super) rows: Vec<Row>,
    pub(super) overflow: Overflow,
}

pub(super) const SEP: &str = "  ";

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

    /// The table as plain text at most `layout.width` wide where it can be: columns left
    /// out ([`Overflow::Drop`], with a line naming them) or the table split in parts.
    pub fn render(&self, layout: Layout) -> String {
        let n = self.columns.len();
        let natural: Vec<usize> = (0..n).map(|c| self.natural(c)).collect();
        let all: Vec<usize> = (0..n).collect();
        let full = Self::total(&natural, &all);
        match full <= layout.width || self.overflow == Overflow::Drop {
            true => self.render_dropping(&natural, full, layout.width),
            false => self.render_split(&natural, layout.width),
        }
    }

    /// Leaves columns out, highest rank first (rightmost first among equals), until the
    /// table fits; says which, and how to see them.
    fn render_dropping(&self, natural: &[usize], full: usize, width: usize) -> String {
        let all: Vec<usize> = (0..self.columns.len()).collect();
        let mut shown = all.clone();
        let mut widths = natural.to_vec();
        self.shrink(&mut widths, &shown, width);
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
            widths = natural.to_vec();
            self.shrink(&mut widths, &shown, width);
        }
        let mut out = self.lines(&shown, &widths, width);
        let hidden: Vec<String> = all
            .iter()
            .filter(|c| !shown.contains(c))
            .map(|&c| self.columns[c].flat_head())
            .collect();
        if !hidden.is_empty() {
            let (them, it) = match hidden.len() {
                1 => ("it", "column"),
                _ => ("them", "columns"),
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
        out
    }

    /// Several tables, each with the key columns and as many others, in order, as fit.
    fn render_split(&self, natural: &[usize], width: usize) -> String {
        let n = self.columns.len();
        let keys: Vec<usize> = (0..n).filter(|&c| self.columns[c].key).collect();
        // A wrap column needs only its longest word (or its minimum) to be placed.
        let fitted: Vec<usize> = (0..n)
            .map(|c| match self.columns[c].wrap_min {
                Some(m) => natural[c].min(m.max(self.longest_word(c))),
                None => natural[c],
            })
            .collect();
        let mut parts: Vec<Vec<usize>> = Vec::new();
        let mut cur = keys.clone();
        for c in (0..n).filter(|&c| !self.columns[c].key) {
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
                let mut widths = natural.to_vec();
                self.shrink(&mut widths, shown, width);
                self.lines(shown, &widths, width)
            })
            .collect();
        texts.join("\n\n")
    }

    /// Text or markdown.
    pub fn to_text(&self, layout: Layout, md: bool) -> String {
        match md {
            true => self.markdown(),
            false => self.render(layout),
        }
    }
}
