//! Several physical devices measured in one run (`--device all`, or a list): one [`Report`]
//! per GPU, kept whole (each with its own shared plan and portable answer), written together
//! (blocksweep-render's `Runs` draws them).

use serde::{Deserialize, Serialize};

use super::{Report, SCHEMA_VERSION};

/// The reports of one multi-device run, one per physical device, in device order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Fleet {
    pub schema_version: u32,
    pub tool: String,
    pub date: String,
    /// True where a run was saved before it ended (the devices after it are then absent).
    #[serde(default)]
    pub interrupted: bool,
    pub runs: Vec<Report>,
}

impl Fleet {
    pub fn new(runs: Vec<Report>) -> Fleet {
        let (tool, date) = runs
            .first()
            .map(|r| (r.tool.clone(), r.date.clone()))
            .unwrap_or_default();
        Fleet {
            schema_version: SCHEMA_VERSION,
            tool,
            date,
            interrupted: runs.iter().any(|r| r.partial.interrupted),
            runs,
        }
    }
}
