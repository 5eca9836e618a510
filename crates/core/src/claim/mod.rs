//! A claim about a launch and what an API did with it: the [`LaunchOutcome`] of handing the launch
//! over and whether it bears the claim out ([`Expect`]); blocksweep-render draws the claim →
//! outcome table of `validate` and the lab's resource rows.

use serde::{Deserialize, Serialize};

use crate::backend::BackendError;
use crate::sweep::{Dispatched, SweepError};
use crate::verify::Mismatch;

mod expect;

pub use expect::{verdict_word, Expect};

/// What happened when one API was handed one launch. JSON: one object whose `kind` is one
/// of a closed set (docs/json-schema.md, "validate"), with that kind's details beside it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum LaunchOutcome {
    /// It ran and every pixel matched.
    #[serde(rename = "verified")]
    Ran,
    /// It ran and its output is wrong: the frame's first wrong pixel `index`, or what a user
    /// kernel's check found (`detail`: the buffer, the first bad index and the values).
    Wrong {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        index: Option<u64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        detail: Option<String>,
    },
    /// The API (or, where dispatching would be undefined behaviour, the backend on its behalf)
    /// refused it; the message is the API's own.
    Rejected { message: String },
    /// The API failed in another way; its words are kept and the next check still runs.
    Failed { message: String },
    /// It ran; its output is not a check of the launch, for the reason given (a 1-D kernel in
    /// a 2-D block repeats x's work in y).
    #[serde(rename = "ran_unchecked")]
    Unchecked { why: String },
    /// Not handed to the API: the kernel cannot take it (a grid above the spec's `max_grid`
    /// would write past a buffer of one slot per block).
    NotLaunched { why: String },
}

impl LaunchOutcome {
    /// A claim's outcome from one untimed checked dispatch of the frame: a refusal, a failed
    /// dispatch and a wrong pixel are outcomes (the next claim still runs), as is a read-back
    /// buffer the host has no memory for; failing to poison or to read back is returned.
    pub(crate) fn of_frame(
        dispatched: Result<Dispatched<Mismatch>, SweepError>,
    ) -> Result<LaunchOutcome, BackendError> {
        Ok(match dispatched {
            Ok(Dispatched::Refused(e)) => LaunchOutcome::Rejected { message: e.message },
            Ok(Dispatched::Failed(e)) => LaunchOutcome::Failed { message: e.message },
            Ok(Dispatched::Ran(_, Ok(()))) => LaunchOutcome::Ran,
            Ok(Dispatched::Ran(_, Err(m))) => LaunchOutcome::Wrong {
                index: Some(m.index),
                detail: None,
            },
            Err(SweepError::Backend(e)) => return Err(e),
            Err(e) => LaunchOutcome::Failed {
                message: e.to_string(),
            },
        })
    }
}
