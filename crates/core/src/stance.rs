//! Where each API's specification stands on a claim ([`Stance`]), and "who guarantees it" made
//! from every API's figures: the judgement over the APIs that [`crate::guarantee`]'s promises
//! feed (`validate`, the lab, the subgroup notes).

use crate::api::Api;
use crate::guarantee::{Guarantee, Need};

/// Where one API's specification stands on a claim.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stance {
    /// Every device of the API allows every need (each guarantee named here covers one).
    Runs(&'static Guarantee),
    /// A fixed limit is below a need: every device refuses it.
    Refused(&'static Guarantee),
    /// Up to the device: every guarantee that falls short of a need (a 1x1x65 block is short of
    /// both a minimum of threads and a minimum of extents), or none where the API states none.
    DeviceSpecific(Vec<&'static Guarantee>),
}

/// Where `api`'s specification stands on a claim that needs all of `needs`.
pub fn stance(api: Api, needs: &[Need]) -> Stance {
    let mut runs = None;
    let mut short = Vec::new();
    let mut unstated = false;
    for need in needs {
        let Some(g) = api.guarantee(need.concept) else {
            unstated = true;
            continue;
        };
        match g.amount.allows(need.amount) {
            Some(true) => runs = runs.or(Some(g)),
            _ if g.fixed => return Stance::Refused(g),
            _ => short.push(g),
        }
    }
    match (short.is_empty() && !unstated, runs) {
        (true, Some(g)) => Stance::Runs(g),
        _ => Stance::DeviceSpecific(short),
    }
}

/// "CUDA (CU_… = 1024, cc ≥ 2.0)"; several guarantees in one parenthesis, joined by "; ".
fn cited(api: Api, gs: &[&Guarantee]) -> String {
    if gs.is_empty() {
        return format!("{api} (its specification states no figure)");
    }
    let each: Vec<String> = gs
        .iter()
        .map(|g| match g.condition {
            Some(c) => format!("{}, {c}", g.stated()),
            None => g.stated(),
        })
        .collect();
    format!("{api} ({})", each.join("; "))
}

/// What each API says, in its turn, joined into one note: "CUDA …; Vulkan …; OpenCL …".
pub fn each_api(apis: &[Api], say: impl Fn(Api) -> String) -> String {
    let said: Vec<String> = apis.iter().map(|&api| say(api)).collect();
    said.join("; ")
}

/// Who guarantees a claim, made from each API's figures: "every device runs it: CUDA (…),
/// Vulkan (…); device-specific: OpenCL (…)". Groups with no API are left out.
pub fn who_guarantees(apis: &[Api], needs: &[Need]) -> String {
    let mut groups: [(&str, Vec<String>); 3] = [
        ("every device runs it", vec![]),
        ("every device refuses it", vec![]),
        ("device-specific", vec![]),
    ];
    for &api in apis {
        let (i, gs) = match stance(api, needs) {
            Stance::Runs(g) => (0, vec![g]),
            Stance::Refused(g) => (1, vec![g]),
            Stance::DeviceSpecific(gs) => (2, gs),
        };
        groups[i].1.push(cited(api, &gs));
    }
    let said: Vec<String> = groups
        .iter()
        .filter(|(_, apis)| !apis.is_empty())
        .map(|(lead, apis)| format!("{lead}: {}", apis.join(", ")))
        .collect();
    said.join("; ")
}

#[cfg(test)]
#[path = "stance_tests.rs"]
mod tests;
