//! The claim → outcome table `validate` draws for its assumptions and for the lab's resource
//! rows: one row per claim, one column per API, each cell a short verdict with the API's own
//! words as a footnote, and who guarantees each claim under the table.

use crate::layout::{Column, Notes, Table};
use crate::text::Doc;
use blocksweep_core::api::Api;

use blocksweep_core::claim::{verdict_word, LaunchOutcome};

/// What one API did with one claim, as its cell shows it.
pub(crate) struct Answer<'a> {
    pub api: Api,
    pub outcome: &'a LaunchOutcome,
    /// What the queried limits say about the launch (None: within every limit).
    pub limits_say: Option<&'a str>,
    /// Whether the outcome bears the claim out (`None`: no verdict, the cell says why).
    pub holds: Option<bool>,
    /// The launch the device made of the claim ("256 x 64, 49 KiB") and what its kernel holds
    /// (", 105 regs"); `None` where the claim itself names the launch.
    pub launch: Option<(String, String)>,
}

/// The cell: the verdict ("holds", "does not hold"), then what the API did, its own words,
/// when there are any, as a footnote.
fn cell(a: &Answer, notes: &mut Notes) -> String {
    let did = what_it_did(a, notes);
    match a.holds {
        Some(h) => format!("{}: {did}", verdict_word(Some(h))),
        None => did,
    }
}

/// What the API did with the launch, as the cell shows it after the verdict.
fn what_it_did(a: &Answer, notes: &mut Notes) -> String {
    let api = a.api;
    let (launch, detail) = match &a.launch {
        Some((launch, held)) => (launch.as_str(), format!(" ({launch}{held})")),
        None => ("it", String::new()),
    };
    match (a.outcome, a.limits_say) {
        // The interesting disagreement: a limit says no, and the API ran it anyway.
        (LaunchOutcome::Ran, Some(l)) => format!(
            "runs{detail} {}",
            notes.mark(format!("{api} ran it although {l}"))
        ),
        // "verified" goes without saying: a launch that ran and is not marked WRONG or "not
        // checked" matched (the line under the table says so).
        (LaunchOutcome::Ran, None) => format!("runs{detail}"),
        (LaunchOutcome::Wrong { index, detail }, _) => {
            let what = match (detail, index) {
                (Some(d), _) => format!("{api} ran {launch} but its output is wrong: {d}"),
                (None, Some(i)) => format!("{api} ran {launch} but left pixel {i} wrong"),
                (None, None) => format!("{api} ran {launch} but its output is wrong"),
            };
            format!("WRONG {}", notes.mark(what))
        }
        (LaunchOutcome::Rejected { message }, _) => format!(
            "rejected{detail} {}",
            notes.mark(format!("{api}: {message}"))
        ),
        (LaunchOutcome::Failed { message }, _) => {
            format!("FAILED {}", notes.mark(format!("{api}: {message}")))
        }
        (LaunchOutcome::Unchecked { why }, _) => {
            format!("runs, not checked {}", notes.mark(format!("{api}: {why}")))
        }
        (LaunchOutcome::NotLaunched { why }, _) => {
            format!("not launched {}", notes.mark(format!("{api}: {why}")))
        }
    }
}

/// One claim table in the making.
pub(crate) struct ClaimTable {
    apis: Vec<Api>,
    table: Table,
    notes: Notes,
    who: Vec<String>,
}

impl ClaimTable {
    /// A table headed `claim_head`, one column per API (wrapped from `api_wrap` columns on).
    pub fn new(claim_head: &str, apis: &[Api], api_wrap: Option<usize>) -> ClaimTable {
        let mut cols = vec![Column::right("#"), Column::left(claim_head).wrap(20)];
        cols.extend(apis.iter().map(|api| {
            let col = Column::left(api.to_string());
            match api_wrap {
                Some(min) => col.wrap(min),
                None => col,
            }
        }));
        ClaimTable {
            apis: apis.to_vec(),
            table: Table::new(cols),
            notes: Notes::new(),
            who: Vec::new(),
        }
    }

    /// The row of claim `id`: each API's answer ("—" where it gave none), and who guarantees
    /// the claim for the lines under the table.
    pub fn row<'a>(
        &mut self,
        id: &str,
        claim: String,
        guarantee: &str,
        answer: impl Fn(Api) -> Option<Answer<'a>>,
    ) {
        let mut row = vec![id.to_string(), claim];
        for &api in &self.apis {
            row.push(answer(api).map_or_else(|| "—".into(), |a| cell(&a, &mut self.notes)));
        }
        self.table.push(row);
        self.who.push(format!("{id}. {guarantee}"));
    }

    /// The table, what each API said, and who guarantees each claim.
    pub fn render(self, doc: &mut Doc) {
        doc.raw(self.table.to_text(doc.layout, doc.md));
        if !self.notes.is_empty() {
            doc.raw(format!(
                "What each API said:\n{}",
                self.notes.render(doc.layout, doc.md)
            ));
        }
        let mut who_text = vec!["Who guarantees it:".to_string()];
        who_text.extend(self.who);
        doc.lines(&who_text);
    }
}
