//! Where each API's specification stands on a claim ([`Stance`]), and "who guarantees it" made
//! from every API's figures: the judgement over the APIs that [`crate::guarantee`]'s promises
//! feed (`validate`, the lab, the subgroup notes).

use crate::api::Api;
use crate::guarantee::{Guarantee, Need};

/// Where one API's specification stands on a claim.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stance {
    /// Every device of the API allows every need (each guarantee named here covers one).
    Runs(&'static Guarantee),
    /// A fixed limit is below a need: every device refuses it.
    Refused(&'static Guarantee),
    /// Up to the device: the guarantee that falls short, or none where the API states none.
    DeviceSpecific(Option<&'static Guarantee>),
}

/// Where `api`'s specification stands on a claim that needs all of `needs`.
pub fn stance(api: Api, needs: &[Need]) -> Stance {
    let mut runs = None;
    let mut short = None;
    for need in needs {
        let Some(g) = api.guarantee(need.concept) else {
            short = short.or(Some(None));
            continue;
        };
        match g.amount.allows(need.amount) {
            Some(true) => runs = runs.or(Some(g)),
            _ if g.fixed => return Stance::Refused(g),
            _ => short = short.or(Some(Some(g))),
        }
    }
    match (short, runs) {
        (Some(g), _) => Stance::DeviceSpecific(g),
        (None, Some(g)) => Stance::Runs(g),
        (None, None) => Stance::DeviceSpecific(None),
    }
}

/// "CUDA (CU_… = 1024, cc ≥ 2.0)".
fn cited(api: Api, g: Option<&Guarantee>) -> String {
    match g {
        Some(g) => match g.condition {
            Some(c) => format!("{api} ({}, {c})", g.stated()),
            None => format!("{api} ({})", g.stated()),
        },
        None => format!("{api} (its specification states no figure)"),
    }
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
        let (i, g) = match stance(api, needs) {
            Stance::Runs(g) => (0, Some(g)),
            Stance::Refused(g) => (1, Some(g)),
            Stance::DeviceSpecific(g) => (2, g),
        };
        groups[i].1.push(cited(api, g));
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
