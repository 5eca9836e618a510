//! `validate`'s tables: the assumptions (one row each, one column per API, the APIs' own words
//! as footnotes) in text, markdown, CSV and JSON.

use super::*;
use crate::claim::{Answer, ClaimTable};
use blocksweep_core::validate::ASSUMPTIONS;

/// One row per assumption, one column per API; the APIs' messages and who guarantees each
/// assumption under the table.
pub(super) fn render_group(checks: &[Check], apis: &[(Api, String)], doc: &mut Doc) {
    let devices: Vec<String> = apis
        .iter()
        .map(|(api, name)| format!("{api}: {name}"))
        .collect();
    doc.lines(&devices);
    let ids: Vec<Api> = apis.iter().map(|(api, _)| *api).collect();
    let mut t = ClaimTable::new("assumption [block x grid]", &ids, Some(14));
    for (i, asm) in ASSUMPTIONS.iter().enumerate() {
        // The launch handed over: the assumption's, or a user kernel's covering grid.
        let launched = checks
            .iter()
            .find(|c| c.assumption.claim == asm.claim)
            .and_then(|c| c.launched.clone())
            .unwrap_or_else(|| format!("{} x {}", asm.launch.block, asm.launch.grid));
        let claim = format!("{} [{launched}]", asm.claim);
        t.row(&(i + 1).to_string(), claim, &asm.guarantee(), |api| {
            let c = checks
                .iter()
                .find(|c| c.api == api && c.assumption.claim == asm.claim)?;
            Some(Answer {
                api,
                outcome: &c.outcome,
                holds: c.holds(),
                limits_say: c.limits_say.as_deref(),
                launch: None,
            })
        });
    }
    t.render(doc);
    let mut said = "Each launch was handed to the API as is; a launch that ran was verified \
                    pixel by pixel."
        .to_string();
    if checks.iter().any(|c| c.launched.is_some()) {
        said.push_str(
            " The kernel's grid covers its work: a launch's grid is that of its block, not the \
             assumption's, except where the assumption is about the grid.",
        );
    }
    if checks
        .iter()
        .any(|c| matches!(c.outcome, LaunchOutcome::NotLaunched { .. }))
    {
        said.push_str(
            " A launch marked 'not launched' was not handed over: the spec rules it out (its \
             note says which rule).",
        );
    }
    let undefined: Vec<Api> = ids
        .iter()
        .copied()
        .filter(|api| api.conduct().undefined_beyond_limits)
        .collect();
    if !undefined.is_empty() {
        said.push_str(&format!(
            " {} launches beyond a device limit are refused by blocksweep before the driver \
             sees them (dispatching them is undefined behaviour), naming the limit.",
            blocksweep_core::api::named_in_words(&undefined)
        ));
    }
    doc.para(&said);
}

impl Render for ValidateReport {
    fn text(&self, layout: Layout, md: bool) -> String {
        render_text(self, layout, md)
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
            "holds",
            "message",
        ]
        .map(String::from)
        .to_vec()];
        for g in &self.groups {
            for c in &g.checks {
                let device = g.device_name(c.api);
                let (outcome, message) = outcome_words(&c.outcome);
                rec.push(vec![
                    c.api.key().into(),
                    device,
                    c.assumption.claim.into(),
                    c.assumption.launch.block.to_string(),
                    c.assumption.launch.grid.to_string(),
                    c.assumption.guarantee(),
                    c.limits_say.clone().unwrap_or_default(),
                    outcome.into(),
                    verdict_word(c.holds()).into(),
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
                    r.assumption.guarantee.clone(),
                    r.limits_say.clone().unwrap_or_default(),
                    outcome.into(),
                    verdict_word(r.holds()).into(),
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
        let with_holds = |mut v: serde_json::Value, holds: Option<bool>| {
            if let Some(o) = v.as_object_mut() {
                o.insert("holds".into(), holds.into());
            }
            v
        };
        let mut rows: Vec<serde_json::Value> = self
            .checks()
            .map(|c| with_holds(serde_json::to_value(c).unwrap_or_default(), c.holds()))
            .collect();
        rows.extend(
            self.resources()
                .map(|r| with_holds(serde_json::to_value(r).unwrap_or_default(), r.holds())),
        );
        let subgroups = self.groups.iter().flat_map(|g| &g.subgroups);
        rows.extend(subgroups.flat_map(subgroup::json_rows));
        let devices = self.groups.iter().flat_map(|g| &g.devices);
        let mut payload = serde_json::json!({ "checks": rows });
        if let Some(k) = &self.kernel {
            payload["kernel"] = k.clone().into();
        }
        Envelope::now("validate", devices).document(&payload)
    }
}

/// The CSV's outcome and message columns.
fn outcome_words(o: &LaunchOutcome) -> (&'static str, String) {
    match o {
        LaunchOutcome::Ran => ("ran", String::new()),
        LaunchOutcome::Wrong { index, detail } => ("wrong", wrong_words(*index, detail)),
        LaunchOutcome::Rejected { message } => ("rejected", message.clone()),
        LaunchOutcome::Failed { message } => ("failed", message.clone()),
        LaunchOutcome::Unchecked { why } => ("unchecked", why.clone()),
        LaunchOutcome::NotLaunched { why } => ("not launched", why.clone()),
    }
}

/// What a wrong output was: the frame's first wrong pixel, or a kernel check's words.
pub(crate) fn wrong_words(index: Option<u64>, detail: &Option<String>) -> String {
    match (detail, index) {
        (Some(d), _) => d.clone(),
        (None, Some(i)) => format!("first wrong pixel {i}"),
        (None, None) => "its output is wrong".into(),
    }
}
