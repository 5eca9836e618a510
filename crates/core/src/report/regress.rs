//! `compare --fail-below F`: what fell below `F` of the baseline (the first file), for CI (as
//! nvbench's compare script and clpeak's `--compare` flag regressions): each configuration an
//! API measured in both, and each API's best.

use crate::answer::Measurement;
use crate::backend::Api;

/// One configuration, or an API's best, slower than `floor` of the baseline's, or measured
/// there and not in this run (an API lost, a run stopped early, a row that failed).
#[derive(Debug, Clone, PartialEq)]
pub struct Regression {
    /// The file (its label) that fell short.
    pub label: String,
    pub api: Api,
    /// The configuration ("block 128 grid wave"), or "its best".
    pub what: String,
    /// The baseline's time ÷ this one's (below 1: slower); 0 where this run has no time.
    pub ratio: f64,
    /// This run's time; `None`: not measured here.
    pub ms: Option<f64>,
    pub baseline_ms: f64,
}

impl std::fmt::Display for Regression {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (label, api, what, b) = (&self.label, self.api, &self.what, self.baseline_ms);
        match self.ms {
            Some(ms) => write!(
                f,
                "{label}: {api} {what}: {:.3} of the baseline's ({ms:.5} ms against {b:.5} ms)",
                self.ratio
            ),
            None => write!(
                f,
                "{label}: {api} {what}: not measured in this run (the baseline's {b:.5} ms)"
            ),
        }
    }
}

/// Every measurement of the runs after the first, and every API's best, that is slower than
/// `floor` × the first run's at the same API and configuration. Runs are (label, measurements).
pub fn regressions(runs: &[(String, Vec<Measurement>)], floor: f64) -> Vec<Regression> {
    let Some((_, base)) = runs.first() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (label, ms) in &runs[1..] {
        // Every configuration the baseline measured: slower here, or not measured here.
        for b in base {
            let Some(bt) = b.ms() else { continue };
            let t = same(ms, b).and_then(Measurement::ms);
            if t.is_none_or(|t| bt / t < floor) {
                out.push(Regression {
                    label: label.clone(),
                    api: b.api,
                    what: b.config.to_string(),
                    ratio: t.map_or(0.0, |t| bt / t),
                    ms: t,
                    baseline_ms: bt,
                });
            }
        }
        let mut apis: Vec<Api> = base.iter().map(|m| m.api).collect();
        apis.dedup();
        for api in apis {
            let Some(bt) = best(base, api) else { continue };
            let t = best(ms, api);
            if t.is_none_or(|t| bt / t < floor) {
                out.push(Regression {
                    label: label.clone(),
                    api,
                    what: "its best".into(),
                    ratio: t.map_or(0.0, |t| bt / t),
                    ms: t,
                    baseline_ms: bt,
                });
            }
        }
    }
    out
}

fn same<'a>(base: &'a [Measurement], m: &Measurement) -> Option<&'a Measurement> {
    base.iter().find(|b| b.api == m.api && b.config == m.config)
}

/// An API's fastest time in `ms`.
fn best(ms: &[Measurement], api: Api) -> Option<f64> {
    ms.iter()
        .filter(|m| m.api == api)
        .filter_map(Measurement::ms)
        .min_by(f64::total_cmp)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::answer::{Config, Outcome};
    use crate::blocks::BlockSize;
    use crate::grid::GridPolicy;
    use crate::measure::TimeStats;
    use crate::testing::{TEST_API_A as A, TEST_API_B as B};

    fn ran(api: Api, block: u32, ms: f64) -> Measurement {
        Measurement {
            api,
            gpu: None,
            config: Config {
                params: Default::default(),
                block: BlockSize::linear(block),
                grid: GridPolicy::Wave.into(),
            },
            grid_blocks: 1,
            outcome: Outcome::Ran {
                stats: TimeStats::of(&[ms; 10], None).unwrap(),
                reps: 10,
                resolution_ms: 1e-6,
                gbps: None,
            },
            cached: false,
        }
    }

    /// Baseline Alpha 64: 1.0 ms, 128: 1.0 ms; Beta 64: 2.0 ms. The new run: Alpha 64 at 1.25
    /// ms (0.80 of the baseline's), 128 at 1.02 (0.98), Beta 64 at 2.0 (1.00). Below 0.95: Alpha
    /// 64 alone; Alpha's best, 1.02 against 1.0, is 0.98: not below.
    #[test]
    fn what_falls_below_the_floor_of_the_baseline_is_named() {
        let base = vec![ran(A, 64, 1.0), ran(A, 128, 1.0), ran(B, 64, 2.0)];
        let new = vec![ran(A, 64, 1.25), ran(A, 128, 1.02), ran(B, 64, 2.0)];
        let runs = vec![("old".to_string(), base), ("new".to_string(), new)];
        let r = regressions(&runs, 0.95);
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!((r[0].api, r[0].ratio), (A, 0.8));
        assert_eq!(
            r[0].to_string(),
            "new: Alpha block 64 grid wave: 0.800 of the baseline's (1.25000 ms against 1.00000 ms)"
        );
        // At 0.99 the best falls below too: 1.0 / 1.02 = 0.980.
        let r = regressions(&runs, 0.99);
        let whats: Vec<&str> = r.iter().map(|x| x.what.as_str()).collect();
        assert_eq!(
            whats,
            ["block 64 grid wave", "block 128 grid wave", "its best"]
        );
        assert!(
            regressions(&runs[..1], 0.99).is_empty(),
            "the baseline alone"
        );
    }

    /// A run that lost an API, or stopped before a configuration, falls short there: Beta
    /// missing entirely, Alpha's 128 not measured. (They passed before: only configurations
    /// both runs measured were compared.)
    #[test]
    fn what_the_baseline_measured_and_this_run_did_not_falls_short() {
        let base = vec![ran(A, 64, 1.0), ran(A, 128, 1.0), ran(B, 64, 2.0)];
        let new = vec![ran(A, 64, 1.0)];
        let runs = vec![("old".to_string(), base), ("new".to_string(), new)];
        let r = regressions(&runs, 0.5);
        let said: Vec<String> = r.iter().map(ToString::to_string).collect();
        assert_eq!(
            said,
            [
                "new: Alpha block 128 grid wave: not measured in this run (the baseline's 1.00000 ms)",
                "new: Beta block 64 grid wave: not measured in this run (the baseline's 2.00000 ms)",
                "new: Beta its best: not measured in this run (the baseline's 2.00000 ms)",
            ]
        );
    }
}
