//! Which of two rows is wrong when a row's output differs from its API's reference (the
//! output at its first size). The reference is not always the right one: a kernel wrong at
//! block 16 alone makes the first row the odd one out, and calling its values "expected"
//! sends the user after the rows that are right. So a sweep does not stop at the first
//! difference: the rows after it are checked too, each against the reference and the first
//! row that differed, and once they have run the evidence is weighed ([`References::settle`]):
//! another API's output (which its own checks showed is its output at every size) where one
//! agrees with one side, else the API's own rows, where most agree with each other and not
//! with the first. `validate` fails at the first difference ([`OwnRows::weigh`] off).

use super::references::{Checked, References};
use crate::backend::{Api, Launch};
use crate::blocks::BlockSize;
use crate::spec::{compare, CompareMode, Instance};
use crate::sweep::{SweepError, SweepRow};

/// The note of a row that differed from its API's reference, until the rows are weighed.
pub(crate) const PENDING: &str = "differs from the reference row: weighed once every size has run";

/// A row's note without [`PENDING`] (a right row's, once weighed).
pub(crate) fn unpending(note: Option<String>) -> Option<String> {
    let rest = note?.replacen(PENDING, "", 1);
    let rest = rest.trim_start_matches("; ");
    (!rest.is_empty()).then(|| rest.to_string())
}

/// Where a row ran: its block and its grid's blocks (a tune has several grids per block).
pub(crate) type At = (BlockSize, u64);

/// One API's rows as compared so far.
#[derive(Default)]
pub(crate) struct OwnRows {
    /// The reference: the output at the API's first size, and its launch.
    pub first: Option<(Checked, Launch)>,
    /// Whether a row that differs from the reference waits for the other rows (a sweep), or
    /// fails at once (off: `validate`).
    pub weigh: bool,
    /// The first row that differed, and the rows checked since, while the API's rows run.
    pub dissent: Option<Dissent>,
}

/// A row that differed from the reference, and how the rows since compare with both.
pub(crate) struct Dissent {
    /// Its outputs.
    row: Checked,
    /// Its launch.
    launch: Launch,
    /// The written buffer (its place among the written ones) that first differed.
    buffer: usize,
    /// What the row fails with if the reference is the right one.
    error: SweepError,
    /// Rows since that agree with the reference.
    with_first: Vec<At>,
    /// Rows that agree with the dissenting row, itself first.
    with_row: Vec<At>,
    /// Rows that agree with neither.
    neither: Vec<At>,
}

/// What the weighing found: the error the API stops with and the launch it names, the rows
/// whose output is wrong, and the rows found right after all.
pub(crate) struct Settled {
    pub error: SweepError,
    pub launch: Launch,
    pub wrong: Vec<(At, String)>,
    pub right: Vec<At>,
}

impl OwnRows {
    /// A sweep's: rows that differ from the reference are weighed once every row has run.
    pub fn weighed() -> OwnRows {
        OwnRows {
            weigh: true,
            ..OwnRows::default()
        }
    }

    /// Whether the row at `at` differed from the reference and waits to be weighed.
    pub fn pending(&self, at: At) -> bool {
        (self.dissent.as_ref()).is_some_and(|d| d.with_row.contains(&at) || d.neither.contains(&at))
    }

    /// Notes one row's output `here` that `differs` from the reference (its buffer and the
    /// error it would fail with), or agrees with it (`None`): `Err` where it fails at once.
    pub fn note(
        &mut self,
        instance: &Instance,
        here: &Checked,
        launch: Launch,
        differs: Option<(usize, SweepError)>,
    ) -> Result<(), SweepError> {
        let at = at(launch);
        match (differs, &mut self.dissent) {
            (None, Some(d)) => d.with_first.push(at),
            (None, None) => {}
            (Some((_, error)), _) if !self.weigh => return Err(error),
            (Some(_), Some(d)) => match first_difference(instance, &d.row, here) {
                None => d.with_row.push(at),
                Some(_) => d.neither.push(at),
            },
            (Some((buffer, error)), None) => {
                self.dissent = Some(Dissent {
                    row: here.clone(),
                    launch,
                    buffer,
                    error,
                    with_first: Vec::new(),
                    with_row: vec![at],
                    neither: Vec::new(),
                })
            }
        }
        Ok(())
    }
}

/// The first written buffer where `b`'s outputs differ from `a`'s, with how.
pub(crate) fn first_difference(
    instance: &Instance,
    a: &Checked,
    b: &Checked,
) -> Option<(usize, crate::spec::Mismatch)> {
    (instance.written().enumerate()).find_map(|(j, buf)| {
        compare(&buf.decl, &a.outputs[j], &b.outputs[j], &instance.tolerance)
            .err()
            .map(|m| (j, m))
    })
}

impl References {
    /// Once an API's rows have run: which side of a difference with its reference is wrong
    /// (see the module's notes), or `None` where no row differed. The API fails either way.
    pub fn settle(&mut self, api: Api, instance: &Instance, own: &mut OwnRows) -> Option<Settled> {
        let d = own.dissent.take()?;
        let (first, first_launch) = own.first.as_ref()?;
        // Other APIs that passed: each one's first output is its output at every size.
        let buf = instance.written().nth(d.buffer)?;
        let mut backs_row = Vec::new();
        let mut backs_first = Vec::new();
        for (other, outputs) in self.firsts().into_iter().filter(|(a, _)| *a != api) {
            if buf.decl.compare == CompareMode::Sum {
                break; // partials depend on the launch: no other API's say which is right
            }
            let agrees = |c: &Checked| {
                compare(
                    &buf.decl,
                    &outputs[d.buffer],
                    &c.outputs[d.buffer],
                    &instance.tolerance,
                )
                .is_ok()
            };
            match (agrees(first), agrees(&d.row)) {
                (false, true) => backs_row.push(other),
                (true, false) => backs_first.push(other),
                _ => {}
            }
        }
        self.fail(api);
        let others = d.with_first.len() + d.with_row.len() + d.neither.len();
        let rows_say =
            d.with_first.is_empty() && d.with_row.len() >= 2 && d.with_row.len() * 2 > others;
        // Other APIs decide where they take a side; the API's own rows only where none does.
        let first_wrong = match (backs_row.len(), backs_first.len()) {
            (0, 0) => rows_say,
            (row, first) => row > first,
        };
        if !first_wrong {
            let why = format!(
                "wrong output: differs from {api}'s reference row (block {})",
                first.block
            );
            let wrong = d
                .with_row
                .iter()
                .chain(&d.neither)
                .map(|&at| (at, why.clone()));
            return Some(Settled {
                error: d.error,
                launch: d.launch,
                wrong: wrong.collect(),
                right: Vec::new(),
            });
        }
        let error = first_is_wrong(api, instance, first, &d, &backs_row);
        let why = "wrong output: this first size's output differs from the later rows' (the \
                   API's error says which, and who agrees with them)";
        let mut wrong = vec![(at(*first_launch), why.to_string())];
        let other = format!(
            "wrong output: differs from the rows at block {}",
            d.row.block
        );
        wrong.extend(
            d.with_first
                .iter()
                .chain(&d.neither)
                .map(|&at| (at, other.clone())),
        );
        Some(Settled {
            error,
            launch: *first_launch,
            wrong,
            right: d.with_row,
        })
    }
}

/// The error of an API whose first size's row is the wrong one: its values are what the other
/// rows (and `backing`, other APIs that agree with them) do not hold.
fn first_is_wrong(
    api: Api,
    instance: &Instance,
    first: &Checked,
    d: &Dissent,
    backing: &[Api],
) -> SweepError {
    let buf = instance.written().nth(d.buffer);
    let name = buf.map(|b| b.decl.name.clone()).unwrap_or_default();
    let how = buf
        .and_then(|b| {
            compare(
                &b.decl,
                &d.row.outputs[d.buffer],
                &first.outputs[d.buffer],
                &instance.tolerance,
            )
            .err()
        })
        .map(|m| m.to_string())
        .unwrap_or_default();
    let mut blocks: Vec<String> = Vec::new();
    for (b, _) in &d.with_row {
        if !blocks.contains(&b.to_string()) {
            blocks.push(b.to_string());
        }
    }
    let witnesses: Vec<String> = backing.iter().map(|a| format!("{a}'s")).collect();
    let (list, by) = (
        crate::words::and_list(&blocks),
        crate::words::and_list(&witnesses),
    );
    let against = match (blocks.len(), witnesses.is_empty()) {
        (1, false) => format!("its output at block {list}, which agrees with {by}"),
        (_, true) => format!("its outputs at blocks {list}, which agree with each other"),
        (_, false) => {
            format!("its outputs at blocks {list}, which agree with each other and with {by}")
        }
    };
    SweepError::Output {
        api,
        block: first.block,
        grid: first.grid.clone(),
        buffer: name,
        against,
        detail: format!(
            "{how}. This row, {api}'s first size, is the wrong one, not the rows compared \
             with it: the kernel's result depends on the launch and is wrong at block {} \
             (look for what that block changes: a block smaller than a subgroup, a tile or \
             a reduction sized for other blocks)",
            first.block
        ),
    }
}

/// Marks a row whose output was found wrong: not verified, and no speed (its time is not
/// the kernel's at that launch).
pub(crate) fn mark_wrong(row: &mut SweepRow, why: &str) {
    row.verified = false;
    row.note = Some(why.to_string());
    row.timing = None;
    row.gbps = None;
    row.of_best = None;
    row.ties_best = false;
    row.verdict = None;
    row.of_copy = None;
}

/// The launch a row of `launch` ran at, as [`At`].
pub(crate) fn at(launch: Launch) -> At {
    (launch.block, launch.grid.blocks())
}

#[cfg(test)]
#[path = "diagnosis_tests.rs"]
mod tests;
