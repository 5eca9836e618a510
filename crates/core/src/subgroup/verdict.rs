//! The subgroup assumptions people port, each judged on one API: what it claims, what ran,
//! and whether the assumption (and the claim) held.

use serde::Serialize;

use super::{join, ApiSubgroups, Dispatch};
use crate::api::{named_in_words, Api};
use crate::stance::each_api;

/// An assumption about subgroups carried from one API or GPU to another.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SubgroupAssumption {
    Warp32,
    Fixed,
    Last100,
    Two48,
    Required,
}

/// Each assumption and its words.
pub const SUBGROUP_ASSUMPTIONS: [(SubgroupAssumption, &str); 5] = [
    (SubgroupAssumption::Warp32, "a warp is 32 lanes"),
    (SubgroupAssumption::Fixed, "the subgroup size is fixed"),
    (
        SubgroupAssumption::Last100,
        "a 100-thread block's last subgroup has 4 active lanes",
    ),
    (
        SubgroupAssumption::Two48,
        "a block of 48 on a 32-wide machine is two subgroups",
    ),
    (
        SubgroupAssumption::Required,
        "a pipeline gets the subgroup size it requires",
    ),
];

/// Who promises `which`, in each API's own words ([`crate::Conduct`]), over every API of
/// this process.
pub fn promise(which: SubgroupAssumption) -> String {
    let apis = Api::known();
    let each = |say: &dyn Fn(Api) -> String| each_api(&apis, |api| format!("{api}: {}", say(api)));
    match which {
        SubgroupAssumption::Warp32 => {
            "nobody: the width is each device's (S2 says what each API fixes)".into()
        }
        SubgroupAssumption::Fixed => each(&|api| api.conduct().subgroup_size.to_string()),
        SubgroupAssumption::Last100 => format!(
            "follows from the width where subgroups are consecutive invocations: {}",
            each(&|api| api
                .conduct()
                .subgroup_layout
                .unwrap_or("not promised")
                .to_string())
        ),
        SubgroupAssumption::Two48 => "the same layout, where the width is 32".into(),
        SubgroupAssumption::Required => {
            let (can, cannot): (Vec<Api>, Vec<Api>) = apis
                .iter()
                .partition(|api| api.conduct().subgroup_request.is_some());
            let mut said: Vec<String> = can
                .iter()
                .map(|api| format!("{api}: {}", api.conduct().subgroup_request.unwrap_or("")))
                .collect();
            if !cannot.is_empty() {
                said.push(format!("no such request in {}", named_in_words(&cannot)));
            }
            said.join("; ")
        }
    }
}

/// One assumption on one API.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Cell {
    pub claims: String,
    pub measured: String,
    /// Whether the assumption held: `None` where it does not apply or was not measured.
    pub holds: Option<bool>,
    pub verdict: String,
}

impl Cell {
    fn new(claims: String, measured: String, holds: Option<bool>, verdict: &str) -> Cell {
        Cell {
            claims,
            measured,
            holds,
            verdict: verdict.into(),
        }
    }

    /// "claims 32, measured 32: holds".
    pub fn text(&self) -> String {
        match self.measured.is_empty() {
            true => format!("{}: {}", self.claims, self.verdict),
            false => format!("{}, {}: {}", self.claims, self.measured, self.verdict),
        }
    }
}

fn claims_size(s: &ApiSubgroups) -> String {
    match (s.claims.claimed(), &s.claims.hint) {
        (Some(c), _) => format!("claims {c}"),
        // A hint (OpenCL's preferred multiple) is named in the footnote, never judged.
        (None, _) => "claims no size".into(),
    }
}

/// Ceil(block / width) subgroups, the last with what is left: what a claimed width predicts.
fn predicted(block: u32, width: u32) -> (u32, u32) {
    let n = block.div_ceil(width.max(1));
    (n, block - (n - 1) * width)
}

/// Judges `which` on one API's probe.
pub fn evaluate(s: &ApiSubgroups, which: SubgroupAssumption) -> Cell {
    if which == SubgroupAssumption::Required {
        return required(s);
    }
    let claims = claims_size(s);
    if let Some(why) = &s.unmeasured {
        let short = why
            .split(" (")
            .next()
            .unwrap_or(why)
            .split(':')
            .next()
            .unwrap_or(why);
        return Cell::new(claims, String::new(), None, short);
    }
    match which {
        SubgroupAssumption::Warp32 => warp32(s, claims),
        SubgroupAssumption::Fixed => fixed(s),
        SubgroupAssumption::Last100 => partial(s, claims, 100),
        SubgroupAssumption::Two48 => partial(s, claims, 48),
        SubgroupAssumption::Required => required(s),
    }
}

fn warp32(s: &ApiSubgroups, claims: String) -> Cell {
    let ran: Vec<&Dispatch> = s.at(None).filter(|d| d.subgroups().is_some()).collect();
    let Some(width) = ran.iter().filter_map(|d| d.width()).max() else {
        return Cell::new(claims, "nothing ran".into(), None, "not measured");
    };
    let mut reported: Vec<u32> = ran.iter().flat_map(|d| d.reported()).collect();
    reported.sort_unstable();
    reported.dedup();
    let measured = match reported == [width] {
        true => format!("measured {width}"),
        false => format!("reports {}, ballots count {width}", join(&reported)),
    };
    let (holds, verdict) = match s.claims.claimed() {
        Some(c) if c != width => (false, "the claim does not hold"),
        _ if reported != [width] => (false, "the reported size does not hold"),
        _ if width == 32 => (true, "holds"),
        _ => (false, "not 32"),
    };
    Cell::new(claims, measured, Some(holds), verdict)
}

/// The sizes that ran in full subgroups of `ds`: every subgroup but the last, and the last
/// where its lanes are the size its invocations reported (a block narrower than the width is
/// one partial subgroup, not another size).
fn full_widths<'a>(ds: impl Iterator<Item = &'a Dispatch>) -> Vec<u32> {
    let mut w: Vec<u32> = Vec::new();
    for d in ds {
        let Some(sg) = d.subgroups() else { continue };
        for (i, s) in sg.iter().enumerate() {
            let last = i + 1 == sg.len();
            if !last || s.sizes.contains(&s.active()) {
                w.push(s.active());
            }
        }
    }
    w.sort_unstable();
    w.dedup();
    w
}

fn fixed(s: &ApiSubgroups) -> Cell {
    let claims = match s.claims.range {
        Some((min, max)) => format!("claims {min}..{max}"),
        None => claims_size(s),
    };
    let default = full_widths(s.at(None));
    let mut measured = format!("measured {} at every block", join(&default));
    let mut varied = default.len() > 1;
    let required: Vec<String> = s
        .claims
        .required
        .iter()
        .map(|&r| {
            let w = full_widths(s.at(Some(r)));
            varied |= w != default && !w.is_empty();
            format!("{} when {r} is required", join(&w))
        })
        .collect();
    if !required.is_empty() {
        measured = format!("{measured}; {}", required.join(", "));
    }
    let open = s.claims.range.is_some_and(|(min, max)| min != max);
    let (holds, verdict) = match (default.is_empty(), varied, open) {
        (true, _, _) => (None, "not measured"),
        (false, true, _) => (Some(false), "varies per pipeline"),
        (false, false, true) => (None, "fixed here, but the API allows a range"),
        (false, false, false) => (Some(true), "holds"),
    };
    Cell::new(claims, measured, holds, verdict)
}

/// A partial block: 100 (the last subgroup's lanes) or 48 (how many subgroups).
fn partial(s: &ApiSubgroups, claims: String, block: u32) -> Cell {
    let Some(d) = s.block(block) else {
        return Cell::new(
            claims,
            format!("block {block} not run"),
            None,
            "not measured",
        );
    };
    let (Some(last), Some(width), Some(sg)) = (d.last(), d.width(), d.subgroups()) else {
        return Cell::new(
            claims,
            format!("block {block} did not run"),
            None,
            "not measured",
        );
    };
    let count = sg.len() as u32;
    let as_claimed = s
        .claims
        .claimed()
        .map(|c| predicted(block, c) == (count, last.active()));
    let (measured, holds, verdict) = match block {
        100 => (
            format!(
                "measured {} active in the last of {count} subgroups",
                last.active()
            ),
            Some(last.active() == 4),
            if last.active() == 4 { "holds" } else { "not 4" },
        ),
        _ => {
            let m = format!("measured {count} subgroups ({})", d.lanes_text());
            match (width, count) {
                (32, 2) => (m, Some(true), "holds"),
                (32, _) => (m, Some(false), "not two"),
                _ => (m, None, "not a 32-wide machine"),
            }
        }
    };
    match as_claimed {
        Some(false) => Cell::new(claims, measured, Some(false), "the claim does not hold"),
        _ => Cell::new(claims, measured, holds, verdict),
    }
}

fn required(s: &ApiSubgroups) -> Cell {
    let Some((min, max)) = s.claims.range else {
        return Cell::new(
            "no size control".into(),
            String::new(),
            None,
            "no such request",
        );
    };
    let claims = format!("may require {min}..{max}");
    if let Some(why) = &s.claims.required_not {
        return Cell::new(claims, String::new(), None, why);
    }
    if let Some(why) = &s.unmeasured {
        let short = why.split(':').next().unwrap_or(why);
        return Cell::new(claims, String::new(), None, short);
    }
    let mut ok = true;
    let each: Vec<String> = s
        .claims
        .required
        .iter()
        .map(|&r| {
            let ds: Vec<&Dispatch> = s.at(Some(r)).collect();
            let widths = full_widths(ds.iter().copied());
            let mut reported: Vec<u32> = ds.iter().flat_map(|d| d.reported()).collect();
            reported.sort_unstable();
            reported.dedup();
            ok &= widths == [r] && reported == [r];
            match widths.is_empty() {
                true => format!("nothing when {r} is required"),
                false => format!("{} when {r} is required", join(&widths)),
            }
        })
        .collect();
    let verdict = if ok { "holds" } else { "does not hold" };
    Cell::new(
        claims,
        format!("measured {}", each.join(", ")),
        Some(ok),
        verdict,
    )
}
