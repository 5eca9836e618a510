//! `validate`'s tables: the assumptions (one row each, one column per API, the APIs' own words
//! as footnotes) in text, markdown, CSV and JSON.

use super::*;

/// A short verdict for the cell; the API's own words, when there are any, as a footnote.
fn cell(c: &Check, notes: &mut Notes) -> String {
    let api = c.api;
    match (&c.outcome, &c.limits_say) {
        // The interesting disagreement: a limit says no, and the API ran it anyway.
        (Outcome::Ran, Some(l)) => format!(
            "runs, verified {}",
            notes.mark(format!("{api} ran it although {l}"))
        ),
        (Outcome::Ran, None) => "runs, verified".to_string(),
        (Outcome::Wrong { index }, _) => format!(
            "WRONG {}",
            notes.mark(format!("{api} ran it but left pixel {index} wrong"))
        ),
        (Outcome::Rejected { message }, _) => {
            format!("rejected {}", notes.mark(format!("{api}: {message}")))
        }
        (Outcome::Failed { message }, _) => {
            format!("FAILED {}", notes.mark(format!("{api}: {message}")))
        }
        (Outcome::Unchecked { why }, _) => {
            format!("runs, not checked {}", notes.mark(format!("{api}: {why}")))
        }
        (Outcome::NotLaunched { why }, _) => {
            format!("not launched {}", notes.mark(format!("{api}: {why}")))
        }
    }
}

/// One row per assumption, one column per API; the APIs' messages and who guarantees each
/// assumption under the table.
pub(super) fn render_group(checks: &[Check], apis: &[(Api, String)], doc: &mut Doc) {
    let devices: Vec<String> = apis
        .iter()
        .map(|(api, name)| format!("{api}: {name}"))
        .collect();
    doc.lines(&devices);
    let mut cols = vec![
        Column::right("#"),
        Column::left("assumption [block x grid]").wrap(24),
    ];
    cols.extend(apis.iter().map(|(api, _)| Column::left(api.to_string())));
    let mut t = Table::new(cols);
    let mut notes = Notes::new();
    let mut who = Vec::new();
    for (i, asm) in ASSUMPTIONS.iter().enumerate() {
        let mut row = vec![
            (i + 1).to_string(),
            format!("{} [{} x {}]", asm.claim, asm.launch.block, asm.launch.grid),
        ];
        for (api, _) in apis {
            let c = checks
                .iter()
                .find(|c| c.api == *api && c.assumption.claim == asm.claim);
            row.push(c.map(|c| cell(c, &mut notes)).unwrap_or_else(|| "—".into()));
        }
        t.push(row);
        who.push(format!("{}. {}", i + 1, asm.guarantee));
    }
    doc.raw(t.to_text(doc.layout, doc.md));
    if !notes.is_empty() {
        doc.raw(format!(
            "What each API said:\n{}",
            notes.render(doc.layout, doc.md)
        ));
    }
    let mut who_text = vec!["Who guarantees it:".to_string()];
    who_text.extend(who);
    doc.lines(&who_text);
    doc.para(
        "Each launch was handed to the API as is; a launch that ran was verified pixel by \
         pixel. Vulkan launches beyond a device limit are refused by blocksweep before the \
         driver sees them (dispatching them is undefined behaviour), naming the limit.",
    );
}

impl Render for ValidateReport {
    fn text(&self, layout: Layout, md: bool) -> String {
        self.render_text(layout, md)
    }
    /// One line per (API, assumption).
    fn csv(&self) -> String {
        let mut rec: Vec<Vec<String>> = vec![[
            "api",
            "device",
            "assumption",
            "block",
            "grid",
            "guarantee",
            "limits_say",
            "outcome",
            "message",
        ]
        .map(String::from)
        .to_vec()];
        for g in &self.groups {
            for c in &g.checks {
                let device = g.device_name(c.api);
                let (outcome, message) = match &c.outcome {
                    Outcome::Ran => ("ran", String::new()),
                    Outcome::Wrong { index } => ("wrong", format!("first wrong pixel {index}")),
                    Outcome::Rejected { message } => ("rejected", message.clone()),
                    Outcome::Failed { message } => ("failed", message.clone()),
                    Outcome::Unchecked { why } => ("unchecked", why.clone()),
                    Outcome::NotLaunched { why } => ("not launched", why.clone()),
                };
                rec.push(vec![
                    c.api.key().into(),
                    device,
                    c.assumption.claim.into(),
                    c.assumption.launch.block.to_string(),
                    c.assumption.launch.grid.to_string(),
                    c.assumption.guarantee.into(),
                    c.limits_say.clone().unwrap_or_default(),
                    outcome.into(),
                    message,
                ]);
            }
            for r in &g.resources {
                let device = g.device_name(r.api);
                let (outcome, message) = outcome_words(&r.outcome);
                let launch = r.assumption.launch;
                rec.push(vec![
                    r.api.key().into(),
                    device,
                    format!("{} [{}]", r.assumption.claim, r.launch_text()),
                    launch.map(|l| l.block.to_string()).unwrap_or_default(),
                    launch.map(|l| l.grid.to_string()).unwrap_or_default(),
                    r.assumption.guarantee.into(),
                    r.limits_say.clone().unwrap_or_default(),
                    outcome.into(),
                    message,
                ]);
            }
            for s in &g.subgroups {
                let device = g.device_name(s.api);
                rec.extend(subgroup::csv_rows(s, &device));
            }
        }
        to_csv(&rec)
    }
    /// The envelope, then `checks`: every check as one flat array, the resource rows after the
    /// others (same fields: api,
    /// assumption {claim, guarantee, launch}, limits_say, outcome), then the subgroup rows
    /// (api, assumption {claim, guarantee, subgroups}, subgroups {claims, measured, holds,
    /// verdict}) and each API's probe (`subgroup_probe`).
    fn json(&self) -> String {
        let mut rows: Vec<serde_json::Value> = self
            .checks()
            .map(|c| serde_json::to_value(c).unwrap_or_default())
            .collect();
        rows.extend(
            self.resources()
                .map(|r| serde_json::to_value(r).unwrap_or_default()),
        );
        let subgroups = self.groups.iter().flat_map(|g| &g.subgroups);
        rows.extend(subgroups.flat_map(subgroup::json_rows));
        let devices = self.groups.iter().flat_map(|g| &g.devices);
        Envelope::now("validate", devices).document(&serde_json::json!({ "checks": rows }))
    }
}

/// The CSV's outcome and message columns.
fn outcome_words(o: &Outcome) -> (&'static str, String) {
    match o {
        Outcome::Ran => ("ran", String::new()),
        Outcome::Wrong { index } => ("wrong", format!("first wrong pixel {index}")),
        Outcome::Rejected { message } => ("rejected", message.clone()),
        Outcome::Failed { message } => ("failed", message.clone()),
        Outcome::Unchecked { why } => ("unchecked", why.clone()),
        Outcome::NotLaunched { why } => ("not launched", why.clone()),
    }
}

/// One row per assumption, one column per API (the first interface).
pub fn render(checks: &[Check], apis: &[(Api, String)], md: bool) -> String {
    let r = ValidateReport {
        groups: vec![ValidateGroup {
            heading: None,
            apis: apis.to_vec(),
            devices: Vec::new(),
            checks: checks.to_vec(),
            resources: Vec::new(),
            subgroups: Vec::new(),
        }],
    };
    match md {
        true => r.markdown(Layout::default()),
        false => r.table(Layout::default()),
    }
}
