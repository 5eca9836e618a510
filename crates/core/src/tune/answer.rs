//! A tune's answer: per API the best configuration and those tied with it, the portable set
//! (within 95 % of each API's best on every API), the portable choice with its regret on each
//! API (its time ÷ that API's best), and whether each winner held when measured again.

use serde::{Deserialize, Serialize};

use super::{Config, Entry, Outcome, TuneReport};
use crate::api::Api;
use crate::measure::ties;
use crate::sweep::GOOD_FRACTION;

/// One API's best and what the data cannot tell from it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ApiBest {
    pub api: Api,
    pub best: Config,
    pub ms: f64,
    pub gbps: Option<f64>,
    /// Within 95 % of the best and within the measurement noise of it.
    pub tied: Vec<Config>,
    /// Configurations within 95 % of the best, and how many were ranked.
    pub good: usize,
    pub ranked: usize,
    /// The winner measured a second time, where it was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub held: Option<Held>,
}

/// The winner measured twice: held when the second time is within 5 % of the first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Held {
    pub api: Api,
    pub config: Config,
    pub first_ms: f64,
    pub second_ms: f64,
    pub held: bool,
}

impl Held {
    pub fn new(api: Api, config: Config, first_ms: f64, second_ms: f64) -> Held {
        Held {
            api,
            config,
            first_ms,
            second_ms,
            held: second_ms * GOOD_FRACTION <= first_ms,
        }
    }
}

/// The one configuration to launch everywhere: the one whose worst regret is least.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PortableChoice {
    pub config: Config,
    /// Per API: its time ÷ that API's best (1.0 is that API's best).
    #[serde(with = "super::fields::regret")]
    pub regret: Vec<(Api, f64)>,
    /// Whether it is in the portable set (else no configuration is good on every API).
    pub portable: bool,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TuneAnswer {
    pub per_api: Vec<ApiBest>,
    /// Within 95 % of each API's best on every API that ran, in configuration order.
    pub portable: Vec<Config>,
    pub choice: Option<PortableChoice>,
}

/// The entries an API ranks: ran, and not of a parameter set found wrong there.
fn ranked(r: &TuneReport, api: Api) -> Vec<&Entry> {
    r.entries
        .iter()
        .filter(|e| e.api == api && e.ms().is_some() && !r.is_wrong(api, &e.config.params))
        .collect()
}

fn best_of(api: Api, rows: &[&Entry], held: &[Held]) -> Option<ApiBest> {
    let best = rows.iter().min_by(|a, b| {
        a.ms()
            .unwrap_or(f64::MAX)
            .total_cmp(&b.ms().unwrap_or(f64::MAX))
    })?;
    let Outcome::Ran {
        stats: bs, gbps, ..
    } = &best.outcome
    else {
        return None;
    };
    let mut tied = Vec::new();
    let mut good = 0;
    for e in rows {
        let Outcome::Ran {
            stats,
            reps,
            resolution_ms,
            ..
        } = &e.outcome
        else {
            continue;
        };
        if bs.mean / stats.mean >= GOOD_FRACTION {
            good += 1;
            if e.config != best.config && ties(stats, bs, *resolution_ms, *reps) {
                tied.push(e.config.clone());
            }
        }
    }
    Some(ApiBest {
        api,
        best: best.config.clone(),
        ms: bs.mean,
        gbps: *gbps,
        tied,
        good,
        ranked: rows.len(),
        held: held.iter().find(|h| h.api == api).cloned(),
    })
}

pub(super) fn answer(r: &TuneReport, held: &[Held]) -> TuneAnswer {
    let apis = r.apis();
    let per_api: Vec<ApiBest> = apis
        .iter()
        .filter_map(|&a| best_of(a, &ranked(r, a), held))
        .collect();
    // Every configuration ranked on every API that has a best, with its regret there.
    let mut configs: Vec<&Config> = Vec::new();
    for e in &r.entries {
        if !configs.contains(&&e.config) {
            configs.push(&e.config);
        }
    }
    let mut scored: Vec<(Config, Vec<(Api, f64)>)> = Vec::new();
    for c in configs {
        let regret: Option<Vec<(Api, f64)>> = per_api
            .iter()
            .map(|b| {
                ranked(r, b.api)
                    .into_iter()
                    .find(|e| &e.config == c)
                    .and_then(Entry::ms)
                    .map(|ms| (b.api, ms / b.ms))
            })
            .collect();
        if let Some(regret) = regret.filter(|v| !v.is_empty()) {
            scored.push((c.clone(), regret));
        }
    }
    let worst = |v: &[(Api, f64)]| v.iter().map(|x| x.1).fold(0.0, f64::max);
    let portable: Vec<Config> = scored
        .iter()
        .filter(|(_, v)| v.iter().all(|x| 1.0 / x.1 >= GOOD_FRACTION))
        .map(|(c, _)| c.clone())
        .collect();
    // An API that stopped (nothing ranked) leaves no portable set: nothing is shown good there.
    let all_ranked = per_api.len() == apis.len();
    let choice = scored
        .iter()
        .min_by(|a, b| worst(&a.1).total_cmp(&worst(&b.1)))
        .map(|(c, v)| PortableChoice {
            config: c.clone(),
            regret: v.clone(),
            portable: all_ranked && portable.contains(c),
        });
    TuneAnswer {
        per_api,
        portable: if all_ranked { portable } else { Vec::new() },
        choice,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::blocks::BlockSize;
    use crate::grid::GridPolicy;
    use crate::measure::TimeStats;
    use crate::testing::{TEST_API_A as A, TEST_API_B as B};
    use crate::tune::{Entry, Outcome, Search, Wrong};

    fn config(elems: u64, block: u32) -> Config {
        Config {
            params: [("ELEMS".to_string(), elems)].into_iter().collect(),
            block: BlockSize::linear(block),
            grid: GridPolicy::Wave.into(),
        }
    }

    /// Steady samples: the noise cannot tie rows 5 % apart.
    fn ran(api: Api, c: Config, ms: f64) -> Entry {
        let stats = TimeStats::of(&[ms; 20], None).unwrap();
        let outcome = Outcome::Ran {
            stats,
            reps: 20,
            resolution_ms: 1e-6,
            gbps: None,
        };
        Entry {
            api,
            config: c,
            grid_blocks: 1,
            outcome,
            cached: false,
        }
    }

    fn report(entries: Vec<Entry>, wrong: Vec<Wrong>) -> TuneReport {
        TuneReport {
            tool: String::new(),
            date: String::new(),
            kernel: String::new(),
            params: Vec::new(),
            restrict: Vec::new(),
            grids: Vec::new(),
            blocks: Vec::new(),
            devices: Vec::new(),
            answer: TuneAnswer::default(),
            search: Search::default(),
            rejected: Vec::new(),
            wrong,
            errors: Vec::new(),
            entries,
        }
    }

    #[test]
    fn portable_set_regret_and_a_wrong_set_never_ranked() {
        let entries = vec![
            ran(A, config(1, 64), 1.00),
            ran(B, config(1, 64), 2.00),
            ran(A, config(1, 256), 1.02),
            ran(B, config(1, 256), 1.03),
            ran(A, config(2, 64), 1.30),
            ran(B, config(2, 64), 1.00),
            // The fastest on A, but its set is wrong there: never ranked.
            ran(A, config(4, 64), 0.50),
            ran(B, config(4, 64), 1.50),
        ];
        let wrong = vec![Wrong {
            api: A,
            params: config(4, 64).params,
            detail: "differs".into(),
        }];
        let a = answer(&report(entries, wrong), &[]);
        let best = |api| a.per_api.iter().find(|b| b.api == api).unwrap();
        assert_eq!(best(A).best, config(1, 64));
        assert_eq!(best(A).ranked, 3);
        assert_eq!(best(B).best, config(2, 64));
        // Only 256 is within 95 % on both (A: 1/1.02, B: 1/1.03).
        assert_eq!(a.portable, vec![config(1, 256)]);
        let c = a.choice.unwrap();
        assert_eq!(c.config, config(1, 256));
        assert!(c.portable);
        assert!((c.regret[0].1 - 1.02).abs() < 1e-9 && (c.regret[1].1 - 1.03).abs() < 1e-9);
    }

    #[test]
    fn a_winner_holds_within_five_percent() {
        assert!(Held::new(A, config(1, 64), 1.0, 1.04).held);
        assert!(!Held::new(A, config(1, 64), 1.0, 1.10).held);
    }
}
