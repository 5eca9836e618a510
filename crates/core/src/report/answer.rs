//! The answer to the user's question across APIs: which block sizes are good ([`Verdict`]) on
//! every API that was asked, and for each other size, which API fell short and why.
//!
//! Every API asked stays in the answer: one that refused a size (with the limit, its name and
//! value), skipped it, failed part-way or failed to open makes that size not portable.

use serde::{Deserialize, Serialize};

use super::Report;
use crate::backend::Api;
use crate::blocks::BlockSize;
use crate::sweep::{SweepResult, Verdict};

pub use crate::sweep::GOOD_FRACTION;

/// One API's row at a size that is not good everywhere.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Short {
    pub api: Api,
    /// Its of-best where the row ran (below the band, or unranked).
    pub of_best: Option<f64>,
    /// Why it is not good: the refusal or skip reason, "cannot be ranked: ...", "did not run:
    /// ...", or the API's failure.
    pub why: String,
}

/// A block size that is not good on every API asked.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Shortfall {
    pub block: BlockSize,
    pub short: Vec<Short>,
}

/// The portable answer of one report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PortableAnswer {
    pub fraction: f64,
    /// Every API asked: those with results and those that failed.
    pub apis: Vec<Api>,
    /// Block sizes good ([`Verdict::good`]) on every API asked.
    pub everywhere: Vec<BlockSize>,
    /// Block sizes good on at least one API, or refused by one, but not good on all.
    pub exceptions: Vec<Shortfall>,
    /// APIs that failed to open, or whose run stopped on an error (a mismatch, a fault): while
    /// any did, no size is portable, whatever the rows that ran say.
    #[serde(default)]
    pub stopped: Vec<Short>,
}

/// Why an API has no row at a size: it stopped on an error before it (said once per API).
const STOPPED_EARLIER: &str = "did not run: the API stopped earlier";

/// Where one API stands at one block size.
fn standing(r: &SweepResult, block: BlockSize) -> Result<(), Short> {
    let short = |of_best, why: String| Short {
        api: r.api,
        of_best,
        why,
    };
    let Some(row) = r.rows.iter().find(|x| x.block == block) else {
        let why = match &r.error {
            Some(_) => STOPPED_EARLIER.to_string(),
            None => "did not run".to_string(),
        };
        return Err(short(None, why));
    };
    if let Some(reason) = &row.skipped {
        return Err(short(None, reason.clone()));
    }
    match (row.verdict, row.of_best) {
        (Some(v), _) if v.good() => Ok(()),
        (Some(Verdict::Unranked), o) => {
            let spread = row.stats().map(|s| s.cv() * 100.0).unwrap_or(0.0);
            Err(short(o, format!("cannot be ranked: spread ±{spread:.1}%")))
        }
        (_, Some(o)) => Err(short(Some(o), format!("{o:.2} of its best"))),
        _ => Err(short(None, "did not run".into())),
    }
}

impl PortableAnswer {
    /// Computed over every API the report asked; `None` when it asked none.
    pub fn of(report: &Report, fraction: f64) -> Option<PortableAnswer> {
        let mut apis: Vec<Api> = report.results.iter().map(|r| r.api).collect();
        for f in &report.failures {
            if !apis.contains(&f.api) {
                apis.push(f.api);
            }
        }
        if apis.is_empty() {
            return None;
        }
        let mut blocks: Vec<BlockSize> = Vec::new();
        for row in report.results.iter().flat_map(|r| &r.rows) {
            if !blocks.contains(&row.block) {
                blocks.push(row.block);
            }
        }
        // An API with no result at all failed to open or to start; one whose result has an
        // error stopped part-way.
        let mut stopped: Vec<Short> = report
            .failures
            .iter()
            .filter(|f| !report.results.iter().any(|r| r.api == f.api))
            .map(|f| Short {
                api: f.api,
                of_best: None,
                why: format!("failed: {}", f.message),
            })
            .collect();
        stopped.extend(report.results.iter().filter_map(|r| {
            r.error.as_ref().map(|e| {
                // A backend's error names its API already.
                let e = e.strip_prefix(&format!("{}: ", r.api)).unwrap_or(e);
                Short {
                    api: r.api,
                    of_best: None,
                    why: format!("stopped: {e}"),
                }
            })
        }));
        let mut everywhere = Vec::new();
        let mut exceptions = Vec::new();
        for block in blocks {
            let standings: Vec<Result<(), Short>> =
                report.results.iter().map(|r| standing(r, block)).collect();
            let n_good = standings.iter().filter(|s| s.is_ok()).count();
            let short: Vec<Short> = standings.into_iter().filter_map(Result::err).collect();
            let refused = short.iter().any(|s| s.of_best.is_none());
            if short.is_empty() {
                if stopped.is_empty() {
                    everywhere.push(block);
                }
            } else if n_good > 0 || refused {
                exceptions.push(Shortfall { block, short });
            }
        }
        Some(PortableAnswer {
            fraction,
            apis,
            everywhere,
            exceptions,
            stopped,
        })
    }

    /// "Within 95 % of each API's best on all three APIs (CUDA, Vulkan, OpenCL): 64, 96, 128
    /// threads per block.", then the exceptions in one sentence.
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
        let stopped: Vec<String> = self
            .stopped
            .iter()
            .map(|s| format!("{} {}", s.api, s.why))
            .collect();
        let mut out = vec![
            match (self.stopped.is_empty(), self.everywhere.is_empty()) {
                (false, _) => format!("No block size is known good {on}: {}.", stopped.join("; ")),
                (true, true) => format!("No block size is within {pct} % of each API's best {on}."),
                (true, false) => format!(
                    "Within {pct} % of each API's best {on}: {} threads per block.",
                    list(&self.everywhere)
                ),
            },
        ];
        if !self.exceptions.is_empty() {
            // The sizes an API did not reach, one list per API after the others.
            let mut unreached: Vec<(Api, Vec<String>)> = Vec::new();
            let mut parts: Vec<String> = Vec::new();
            for e in &self.exceptions {
                let mut who: Vec<String> = Vec::new();
                for s in &e.short {
                    match s.why == STOPPED_EARLIER {
                        true => match unreached.iter_mut().find(|(a, _)| *a == s.api) {
                            Some((_, b)) => b.push(e.block.to_string()),
                            None => unreached.push((s.api, vec![e.block.to_string()])),
                        },
                        false => who.push(format!("{}: {}", s.api, s.why)),
                    }
                }
                if !who.is_empty() {
                    parts.push(format!("{} ({})", e.block, who.join("; ")));
                }
            }
            parts.extend(
                (unreached.iter())
                    .map(|(api, b)| format!("{} ({api}: {STOPPED_EARLIER})", b.join(", "))),
            );
            out.push(format!(
                "Not portable (where each API falls short): {}.",
                parts.join("; ")
            ));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{Failure, Report};
    use crate::sweep::SweepRow;
    use crate::testing::{TEST_API_A, TEST_API_B, TEST_API_C};

    /// A result whose rows run at these speeds relative to 1.0 (`None`: refused by a limit).
    fn result(api: Api, of_best: &[(u32, Option<f64>)]) -> SweepResult {
        let mut r = crate::testing::empty_result(api);
        for &(threads, o) in of_best {
            let mut row: SweepRow = crate::testing::empty_row(BlockSize::linear(threads));
            match o {
                Some(o) => row.timing = Some(crate::testing::timing(1.0 / o)),
                None => {
                    row.skipped = Some(format!("{threads} threads > maxLimit = 1024"));
                }
            }
            r.rows.push(row);
        }
        r.fill_relative();
        r
    }

    fn blocks(v: &[BlockSize]) -> Vec<u32> {
        v.iter().map(|b| b.x).collect()
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
        assert_eq!(blocks(&a.everywhere), [64, 128], "0.95 is good, 0.80 not");
        let short: Vec<_> = a
            .exceptions
            .iter()
            .map(|e| (e.block.x, e.short.clone()))
            .collect();
        assert_eq!(short.len(), 2, "{short:?}");
        assert_eq!(short[0].0, 32);
        assert_eq!(short[0].1[0].api, TEST_API_A);
        assert!((short[0].1[0].of_best.unwrap() - 0.80).abs() < 1e-9);
        assert_eq!(
            short[1],
            (
                2048,
                vec![Short {
                    api: TEST_API_A,
                    of_best: None,
                    why: "2048 threads > maxLimit = 1024".into()
                }]
            )
        );
        let s = a.sentences();
        assert_eq!(
            s[0],
            "Within 95 % of each API's best on both APIs (Alpha, Beta): 64, 128 threads per block."
        );
        assert_eq!(
            s[1],
            "Not portable (where each API falls short): 32 (Alpha: 0.80 of its best); \
             2048 (Alpha: 2048 threads > maxLimit = 1024)."
        );
    }

    /// An API that refused every size it was asked stays in the answer,
    /// and the size it refused is not portable.
    #[test]
    fn a_size_one_api_refused_is_never_portable() {
        let mut rep = Report::new("t", "d");
        rep.results.push(result(TEST_API_A, &[(2048, None)]));
        rep.results.push(result(TEST_API_B, &[(2048, Some(1.0))]));
        let a = PortableAnswer::of(&rep, GOOD_FRACTION).unwrap();
        assert_eq!(a.apis, [TEST_API_A, TEST_API_B]);
        assert!(a.everywhere.is_empty(), "{a:?}");
        assert_eq!(a.exceptions.len(), 1);
        let s = a.sentences();
        assert!(s[0].starts_with("No block size is within 95 %"), "{s:?}");
        assert!(
            s[1].contains("2048 (Alpha: 2048 threads > maxLimit = 1024)"),
            "{s:?}"
        );
    }

    #[test]
    fn an_api_that_failed_keeps_every_size_from_being_portable() {
        let mut rep = Report::new("t", "d");
        rep.results.push(result(TEST_API_A, &[(64, Some(1.0))]));
        rep.failures.push(Failure {
            api: TEST_API_C,
            message: "could not open".into(),
        });
        let a = PortableAnswer::of(&rep, GOOD_FRACTION).unwrap();
        assert_eq!(a.apis, [TEST_API_A, TEST_API_C]);
        assert!(a.everywhere.is_empty());
        assert_eq!(a.stopped[0].why, "failed: could not open");
        assert!(a.sentences()[0].starts_with("No block size is known good on both APIs"));
    }

    /// A row below the band that the noise cannot tell from the best is
    /// neither good nor listed as tied.
    #[test]
    fn an_unranked_row_is_not_good_anywhere() {
        let mut r = crate::testing::empty_result(TEST_API_A);
        for (threads, mean, spread) in [(64, 1.0, 0.0), (128, 1.5, 3.0)] {
            let mut row = crate::testing::empty_row(BlockSize::linear(threads));
            let samples: Vec<f64> = (0..10)
                .map(|i| mean * (1.0 + spread * (i as f64 - 4.5) / 4.5))
                .map(|t: f64| t.abs())
                .collect();
            let mut t = crate::testing::timing(mean);
            t.stats = crate::measure::TimeStats::of(&samples, Some(mean)).unwrap();
            row.timing = Some(t);
            r.rows.push(row);
        }
        r.fill_relative();
        assert_eq!(r.rows[1].verdict, Some(Verdict::Unranked));
        assert!(
            r.rows[1].ties_best,
            "the noise cannot tell it from the best"
        );
        assert_eq!(r.rows_good(), 1, "only the best is good");
        let mut rep = Report::new("t", "d");
        rep.results.push(r.clone());
        rep.results
            .push(result(TEST_API_B, &[(64, Some(1.0)), (128, Some(1.0))]));
        let a = PortableAnswer::of(&rep, GOOD_FRACTION).unwrap();
        assert_eq!(blocks(&a.everywhere), [64]);
        assert!(a.exceptions[0].short[0].why.starts_with("cannot be ranked"));
    }

    /// A mismatch part-way stops an API: the sizes before it ran, yet nothing is portable.
    #[test]
    fn an_api_that_stopped_on_an_error_makes_nothing_portable() {
        let mut rep = Report::new("t", "d");
        let mut a = result(TEST_API_A, &[(64, Some(1.0))]);
        a.error = Some("output 'y' at block 128 differs".into());
        rep.results.push(a);
        rep.results
            .push(result(TEST_API_B, &[(64, Some(1.0)), (128, Some(1.0))]));
        let p = PortableAnswer::of(&rep, GOOD_FRACTION).unwrap();
        assert!(p.everywhere.is_empty(), "{p:?}");
        assert_eq!(p.stopped[0].api, TEST_API_A);
        let s = p.sentences();
        assert!(
            s[0].contains("Alpha stopped: output 'y' at block 128 differs"),
            "{s:?}"
        );
    }

    /// An API that stopped part-way is said once with the sizes it did not reach, not once per
    /// size ("did not run: the API stopped earlier" was repeated 12 times in one line).
    #[test]
    fn the_sizes_an_api_did_not_reach_are_said_once() {
        let mut rep = Report::new("t", "d");
        let mut a = result(TEST_API_A, &[(64, Some(1.0))]);
        a.error = Some("output 'y' at block 128 differs".into());
        rep.results.push(a);
        rep.results.push(result(
            TEST_API_B,
            &[
                (64, Some(1.0)),
                (128, Some(1.0)),
                (256, Some(0.5)),
                (512, Some(1.0)),
            ],
        ));
        let s = PortableAnswer::of(&rep, GOOD_FRACTION).unwrap().sentences();
        assert_eq!(
            s[1],
            "Not portable (where each API falls short): 256 (Beta: 0.50 of its best); \
             128, 256, 512 (Alpha: did not run: the API stopped earlier).",
            "{s:?}"
        );
    }

    #[test]
    fn no_api_no_answer_and_nothing_good_says_so() {
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
