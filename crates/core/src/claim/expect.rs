//! What a claim says an API does with its launch, and whether an outcome bears it out: the
//! verdict word a cell leads with, as the subgroup rows' "holds".

use serde::Serialize;

use super::LaunchOutcome;

/// The behaviour a claim states.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Expect {
    /// The launch runs (and, being verified, gives the right output).
    Runs,
    /// The API refuses the launch with an error.
    Refused,
}

impl Expect {
    /// Whether `outcome` bears the claim out; `None` where it says nothing of it (the launch
    /// was not handed over, or the API failed in another way).
    pub fn holds(self, outcome: &LaunchOutcome) -> Option<bool> {
        match (self, outcome) {
            (_, LaunchOutcome::NotLaunched { .. } | LaunchOutcome::Failed { .. }) => None,
            (Expect::Runs, LaunchOutcome::Ran | LaunchOutcome::Unchecked { .. }) => Some(true),
            (Expect::Refused, LaunchOutcome::Rejected { .. }) => Some(true),
            _ => Some(false),
        }
    }
}

/// The cell's and the CSV's word for a verdict.
pub fn verdict_word(holds: Option<bool>) -> &'static str {
    match holds {
        Some(true) => "holds",
        Some(false) => "does not hold",
        None => "",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refusal_bears_out_a_refused_claim_and_breaks_a_runs_claim() {
        let rejected = LaunchOutcome::Rejected {
            message: "CL_INVALID_WORK_GROUP_SIZE".into(),
        };
        assert_eq!(Expect::Refused.holds(&rejected), Some(true));
        assert_eq!(Expect::Runs.holds(&rejected), Some(false));
        assert_eq!(Expect::Refused.holds(&LaunchOutcome::Ran), Some(false));
        assert_eq!(Expect::Runs.holds(&LaunchOutcome::Ran), Some(true));
        assert_eq!(
            Expect::Runs.holds(&LaunchOutcome::Wrong {
                index: Some(3),
                detail: None
            }),
            Some(false)
        );
        let failed = LaunchOutcome::Failed {
            message: "device lost".into(),
        };
        assert_eq!(Expect::Runs.holds(&failed), None);
    }
}
