//! The one-line answer to the user's question across APIs: which block sizes stay within 95 %
//! of each API's own best on every API that ran, and where an API falls short.

use serde::{Deserialize, Serialize};

use super::Report;
use crate::backend::Api;
use crate::blocks::BlockSize;

/// Rows at least this fraction of their API's best count as "good" (the seed's 95 percent).
pub const GOOD_FRACTION: f64 = 0.95;

/// A block size that is good on some APIs but not on all of them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Shortfall {
    pub block: BlockSize,
    /// Each API that falls short, with its of-best (`None`: the row did not run there).
    pub short: Vec<(Api, Option<f64>)>,
}

/// The portable answer of one report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PortableAnswer {
    pub fraction: f64,
    pub apis: Vec<Api>,
    /// Block sizes within `fraction` of each API's best on every API.
    pub everywhere: Vec<BlockSize>,
    /// Block sizes good on at least one API but not on all.
    pub exceptions: Vec<Shortfall>,
}

impl PortableAnswer {
    /// Computed from every result that has a best row; `None` when none has.
    pub fn of(report: &Report, fraction: f64) -> Option<PortableAnswer> {
        let results: Vec<_> = report
            .results
            .iter()
            .filter(|r| r.best().is_some())
            .collect();
        if results.is_empty() {
            return None;
        }
        let mut blocks: Vec<BlockSize> = Vec::new();
        for r in &results {
            for row in &r.rows {
                if !blocks.contains(&row.block) {
                    blocks.push(row.block);
                }
            }
        }
        let mut everywhere = Vec::new();
        let mut exceptions = Vec::new();
        for block in blocks {
            let of_best: Vec<(Api, Option<f64>)> = results
                .iter()
                .map(|r| {
                    let o = r
                        .rows
                        .iter()
                        .find(|x| x.block == block)
                        .and_then(|x| x.of_best);
                    (r.api, o)
                })
                .collect();
            let good = |o: &Option<f64>| o.is_some_and(|o| o >= fraction);
            let n_good = of_best.iter().filter(|(_, o)| good(o)).count();
            if n_good == of_best.len() {
                everywhere.push(block);
            } else if n_good > 0 {
                exceptions.push(Shortfall {
                    block,
                    short: of_best.into_iter().filter(|(_, o)| !good(o)).collect(),
                });
            }
        }
        Some(PortableAnswer {
            fraction,
            apis: results.iter().map(|r| r.api).collect(),
            everywhere,
            exceptions,
        })
    }

    /// "Within 95 % of each API's best on all three APIs (CUDA, Vulkan, OpenCL): 64, 96, 128
    /// threads", then the exceptions, one sentence.
    pub fn sentences(&self) -> Vec<String> {
        let pct = (self.fraction * 100.0).round();
        let names: Vec<String> = self.apis.iter().map(|a| a.to_string()).collect();
        let on = match self.apis.len() {
            1 => format!("on {}", names[0]),
            2 => format!("on both APIs ({})", names.join(", ")),
            3 => format!("on all three APIs ({})", names.join(", ")),
            n => format!("on all {n} APIs ({})", names.join(", ")),
        };
        let list = |b: &[BlockSize]| {
            b.iter()
                .map(|x| x.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        };
        let mut out = vec![match self.everywhere.is_empty() {
            true => format!("No block size is within {pct} % of each API's best {on}."),
            false => format!(
                "Within {pct} % of each API's best {on}: {} threads per block.",
                list(&self.everywhere)
            ),
        }];
        if !self.exceptions.is_empty() && self.apis.len() > 1 {
            let parts: Vec<String> = self
                .exceptions
                .iter()
                .map(|e| {
                    let who: Vec<String> = e
                        .short
                        .iter()
                        .map(|(api, o)| match o {
                            Some(o) => format!("{api} {o:.2}"),
                            None => format!("{api} did not run"),
                        })
                        .collect();
                    format!("{} ({})", e.block, who.join(", "))
                })
                .collect();
            out.push(format!(
                "Good on some APIs only (of best where short): {}.",
                parts.join("; ")
            ));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::Report;
    use crate::sweep::{SweepResult, SweepRow};
    use crate::testing::{TEST_API_A, TEST_API_B};

    /// A result whose rows have these of-best values (`None`: skipped).
    fn result(api: Api, of_best: &[(u32, Option<f64>)]) -> SweepResult {
        let mut r = crate::testing::empty_result(api);
        for &(threads, o) in of_best {
            let mut row: SweepRow = crate::testing::empty_row(BlockSize::linear(threads));
            if let Some(o) = o {
                row.timing = Some(crate::testing::timing(1.0 / o));
                row.of_best = Some(o);
            } else {
                row.skipped = Some("limit".into());
            }
            r.rows.push(row);
        }
        r
    }

    #[test]
    fn sizes_good_everywhere_and_the_exceptions() {
        let mut rep = Report::new("t", "d");
        rep.results.push(result(
            TEST_API_A,
            &[
                (32, Some(0.80)),
                (64, Some(0.99)),
                (128, Some(1.0)),
                (2048, None),
            ],
        ));
        rep.results.push(result(
            TEST_API_B,
            &[
                (32, Some(0.96)),
                (64, Some(0.95)),
                (128, Some(1.0)),
                (2048, Some(0.97)),
            ],
        ));
        let a = PortableAnswer::of(&rep, GOOD_FRACTION).unwrap();
        let blocks = |v: &[BlockSize]| v.iter().map(|b| b.x).collect::<Vec<_>>();
        assert_eq!(
            blocks(&a.everywhere),
            [64, 128],
            "0.95 counts as good, 0.80 does not"
        );
        let short: Vec<_> = a
            .exceptions
            .iter()
            .map(|e| (e.block.x, e.short.clone()))
            .collect();
        assert_eq!(
            short,
            [
                (32, vec![(TEST_API_A, Some(0.80))]),
                (2048, vec![(TEST_API_A, None)])
            ]
        );
        let s = a.sentences();
        assert_eq!(
            s[0],
            "Within 95 % of each API's best on both APIs (Alpha, Beta): 64, 128 threads per block."
        );
        assert_eq!(
            s[1],
            "Good on some APIs only (of best where short): 32 (Alpha 0.80); 2048 (Alpha did not run)."
        );
    }

    #[test]
    fn no_result_no_answer_and_nothing_good_says_so() {
        assert!(PortableAnswer::of(&Report::new("t", "d"), GOOD_FRACTION).is_none());
        let mut rep = Report::new("t", "d");
        rep.results
            .push(result(TEST_API_A, &[(64, Some(1.0)), (32, Some(0.5))]));
        rep.results
            .push(result(TEST_API_B, &[(64, Some(0.9)), (32, Some(1.0))]));
        let a = PortableAnswer::of(&rep, GOOD_FRACTION).unwrap();
        assert!(a.everywhere.is_empty());
        assert!(
            a.sentences()[0].starts_with("No block size is within 95 %"),
            "{:?}",
            a.sentences()
        );
    }
}
