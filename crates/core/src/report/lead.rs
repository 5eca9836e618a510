//! The answer a sweep's screen leads with, as data (the JSON's `answer`): each API's fastest
//! size with its time, GB/s and the sizes tied with it; the sizes good on every API; and the
//! APIs that stopped, so a script needs no walk over the rows to say what the screen says.

use serde::{Deserialize, Serialize};

use super::Report;
use crate::backend::Api;
use crate::blocks::BlockSize;
use crate::sweep::Verdict;

/// One API's fastest size, as the screen's "fastest ..." line gives it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ApiBest {
    pub api: Api,
    pub device: String,
    pub block: BlockSize,
    /// The row's mean time, in milliseconds.
    pub ms: f64,
    /// Null for a user kernel that declares no bytes moved.
    pub gbps: Option<f64>,
    /// The other sizes whose verdict is `tied` (within 95 % and within the noise of it).
    pub tied: Vec<BlockSize>,
    /// How many sizes are good (`best`, `tied` or `good`), of how many that ran.
    pub good: usize,
    pub ran: usize,
}

/// How an API stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopKind {
    /// It failed to open or to start: no rows.
    Failed,
    /// It stopped part-way on an error (a mismatch, a fault); the rows before it are kept.
    Stopped,
}

/// An API the answer gives no speed for, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Stop {
    pub api: Api,
    pub kind: StopKind,
    pub message: String,
}

/// What the screen leads with.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepAnswer {
    /// Each API that ran to the end and has a fastest row, in API order.
    pub best: Vec<ApiBest>,
    /// The bar of `portable`: 0.95 of each API's own best.
    pub fraction: f64,
    /// Sizes good on every API asked (the portable answer's `everywhere`); empty while any
    /// API stopped.
    pub portable: Vec<BlockSize>,
    pub stopped: Vec<Stop>,
}

impl SweepAnswer {
    /// Made from a report whose rows and portable answer are current.
    pub fn of(report: &Report) -> SweepAnswer {
        let best = report
            .results
            .iter()
            .filter(|r| r.error.is_none())
            .filter_map(|r| {
                let b = r.best()?;
                let tied = r
                    .rows
                    .iter()
                    .filter(|x| x.verdict == Some(Verdict::Tied) && x.block != b.block);
                Some(ApiBest {
                    api: r.api,
                    device: r.device.name.clone(),
                    block: b.block,
                    ms: b.mean_ms()?,
                    gbps: b.gbps,
                    tied: tied.map(|x| x.block).collect(),
                    good: r.rows_good(),
                    ran: r.rows_run(),
                })
            })
            .collect();
        let mut stopped: Vec<Stop> = report
            .failures
            .iter()
            .filter(|f| !report.results.iter().any(|r| r.api == f.api))
            .map(|f| Stop {
                api: f.api,
                kind: StopKind::Failed,
                message: f.message.clone(),
            })
            .collect();
        stopped.extend(report.results.iter().filter_map(|r| {
            let e = r.error.as_ref()?;
            // A backend's error names its API already.
            let e = e.strip_prefix(&format!("{}: ", r.api)).unwrap_or(e);
            Some(Stop {
                api: r.api,
                kind: StopKind::Stopped,
                message: e.to_string(),
            })
        }));
        let portable = report.portable.as_ref();
        SweepAnswer {
            best,
            fraction: portable.map_or(super::GOOD_FRACTION, |p| p.fraction),
            portable: portable.map(|p| p.everywhere.clone()).unwrap_or_default(),
            stopped,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::Failure;
    use crate::sweep::SweepRow;
    use crate::testing::{TEST_API_A, TEST_API_B, TEST_API_C};

    fn result(api: Api, means: &[(u32, f64)]) -> crate::sweep::SweepResult {
        let mut r = crate::testing::empty_result(api);
        for &(threads, mean) in means {
            let mut row: SweepRow = crate::testing::empty_row(BlockSize::linear(threads));
            row.timing = Some(crate::testing::timing(mean));
            r.rows.push(row);
        }
        r.fill_relative();
        r
    }

    /// The answer says what the screen's lines say: each API's fastest and its ties, the
    /// portable sizes, and which API stopped with its own words.
    #[test]
    fn the_answer_names_each_best_its_ties_and_what_stopped() {
        let mut rep = Report::new("t", "d");
        rep.results
            .push(result(TEST_API_A, &[(64, 1.0), (128, 1.001), (256, 2.0)]));
        let mut b = result(TEST_API_B, &[(64, 1.0)]);
        b.error = Some(format!("{TEST_API_B}: output differs at block 128"));
        rep.results.push(b);
        rep.failures.push(Failure::new(
            TEST_API_C,
            crate::report::FailureKind::Unavailable,
            "could not open",
        ));
        rep.refresh_answer();
        let a = rep.answer.clone().expect("an answer");
        assert_eq!(a.best.len(), 1, "a stopped API is given no speed: {a:?}");
        let best = &a.best[0];
        assert_eq!((best.api, best.block.x, best.ms), (TEST_API_A, 64, 1.0));
        assert_eq!(best.tied, [BlockSize::linear(128)]);
        assert_eq!((best.good, best.ran), (2, 3));
        assert!(a.portable.is_empty(), "an API stopped: nothing is portable");
        let stops: Vec<(Api, StopKind, &str)> = a
            .stopped
            .iter()
            .map(|s| (s.api, s.kind, s.message.as_str()))
            .collect();
        assert_eq!(
            stops,
            [
                (TEST_API_C, StopKind::Failed, "could not open"),
                (TEST_API_B, StopKind::Stopped, "output differs at block 128")
            ]
        );
    }
}
