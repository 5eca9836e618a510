//! How far a run had got in a document saved before it ended. Every `--output` file is
//! rewritten as the run measures, so a Ctrl-C, a kill or a crash leaves the last one behind:
//! each such save carries `interrupted: true` and where the run stood (`stopped_at`), and
//! only the write at the end says `false`. A file is then never read as a whole run.

use serde::{Deserialize, Serialize};

use crate::backend::Api;

/// Where a run stood when its document was saved.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoppedAt {
    /// The API in its turn (or the last to have had one); null where the unit of the run is
    /// not one API's (a tune's parameter set runs every API) or none had begun.
    pub api: Option<Api>,
    /// What it had measured, of what was planned (null where not known ahead: the tail's
    /// points depend on each API's wave): that API's rows in a sweep and the lab, a tune's
    /// parameter sets.
    pub kept: usize,
    pub planned: Option<usize>,
    /// The APIs asked that had not begun.
    #[serde(default)]
    pub not_reached: Vec<Api>,
}

impl StoppedAt {
    /// True when the API in its turn had not measured everything planned for it.
    pub fn part_way(&self) -> bool {
        self.planned.is_some_and(|p| self.kept < p)
    }

    /// "in OpenCL's turn, 3 of its 8 rows measured; CUDA not reached" (`unit`: what `kept`
    /// counts, plural).
    pub fn words(&self, unit: &str) -> String {
        let of = self.planned.map(|p| format!(" of {p}")).unwrap_or_default();
        // "1 row measured"; "1 of 7 rows measured".
        let unit = match (self.planned, self.kept) {
            (None, 1) => unit.strip_suffix('s').unwrap_or(unit),
            _ => unit,
        };
        let mut out = match self.api {
            Some(api) => format!("in {api}'s turn, {}{of} {unit} measured", self.kept),
            None => format!("{}{of} {unit} measured", self.kept),
        };
        if !self.not_reached.is_empty() {
            let names: Vec<String> = self.not_reached.iter().map(|a| a.to_string()).collect();
            out.push_str(&format!("; {} not reached", names.join(", ")));
        }
        out
    }
}

/// The mark every resumable document carries: whether it was saved before its run ended, and
/// where the run stood then. Flattened into the document (`interrupted`, `stopped_at`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Partial {
    /// True in a document saved before the run ended; the final write says false.
    #[serde(default)]
    pub interrupted: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped_at: Option<StoppedAt>,
}

impl Partial {
    /// The mark of a document saved at `at`, before the run ended.
    pub fn at(at: StoppedAt) -> Partial {
        Partial {
            interrupted: true,
            stopped_at: Some(at),
        }
    }

    /// The line a text or markdown document leads with when it is partial ("Interrupted: in
    /// OpenCL's turn, 3 of its 8 rows measured. ..."), `unit` as in [`StoppedAt::words`].
    pub fn line(&self, unit: &str) -> Option<String> {
        if !self.interrupted {
            return None;
        }
        let at = self
            .stopped_at
            .as_ref()
            .map(|a| format!(" {}", a.words(unit)))
            .unwrap_or_default();
        Some(format!(
            "Interrupted:{at}. The run did not finish: what follows, the answer too, is over \
             what it had measured."
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{TEST_API_A, TEST_API_B};

    #[test]
    fn a_partial_document_says_where_it_stood() {
        let at = StoppedAt {
            api: Some(TEST_API_A),
            kept: 3,
            planned: Some(8),
            not_reached: vec![TEST_API_B],
        };
        assert!(at.part_way());
        let words = at.words("rows");
        assert!(words.contains("3 of 8 rows measured"), "{words}");
        assert!(
            words.ends_with(&format!("{TEST_API_B} not reached")),
            "{words}"
        );
        let json = serde_json::to_value(Partial::at(at.clone())).unwrap();
        assert_eq!(json["interrupted"], true);
        assert_eq!(json["stopped_at"]["kept"], 3);
        assert_eq!(Partial::default().line("rows"), None);
        let uncounted = StoppedAt {
            kept: 1,
            planned: None,
            not_reached: Vec::new(),
            ..at
        };
        assert!(!uncounted.part_way());
        assert!(uncounted.words("rows").ends_with("turn, 1 row measured"));
        let whole = serde_json::to_value(Partial::default()).unwrap();
        assert_eq!(whole, serde_json::json!({"interrupted": false}));
    }
}
