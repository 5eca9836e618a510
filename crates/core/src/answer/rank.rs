//! The answer, one type for a sweep and a tune: per API the best configuration and those tied
//! with it, the portable set (within 95 % of each API's best on every API asked) with where
//! each other configuration falls short, the portable choice with its regret on each API, the
//! APIs that stopped, and whether each winner held when measured again.

use serde::{Deserialize, Serialize};

use super::{Config, Measurement, Outcome, Wrong, GOOD_FRACTION};
use crate::backend::Api;
use crate::measure::{ties, TimeStats};
use crate::words::fraction;

/// One API's best and what the data cannot tell from it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ApiBest {
    pub api: Api,
    /// The GPU, where the answer spans several (`compare`): with the API, the column.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu: Option<String>,
    /// The device's name ("" where the run names none).
    pub device: String,
    pub config: Config,
    /// Its mean time, in milliseconds.
    pub ms: f64,
    /// Null for a user kernel that declares no bytes moved.
    pub gbps: Option<f64>,
    /// Within 95 % of the best and within the measurement noise of it.
    pub tied: Vec<Config>,
    /// Configurations within 95 % of the best, of how many were ranked.
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

/// A configuration's time ÷ an API's best there (1.0 is that API's best).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Regret {
    pub api: Api,
    /// The GPU, where the answer spans several (`compare`): with the API, the column.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu: Option<String>,
    pub regret: f64,
}

/// The one configuration to launch everywhere: the one whose worst regret is least.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PortableChoice {
    pub config: Config,
    pub regret: Vec<Regret>,
    /// Whether it is in the portable set (else no configuration is good on every API).
    pub portable: bool,
}

/// How an API stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopKind {
    /// It failed to open or to start: nothing measured.
    Failed,
    /// It stopped part-way on an error (a mismatch, a fault); what it measured before is kept.
    Stopped,
    /// The run was interrupted (Ctrl-C) before it measured everything: its rows are kept,
    /// not ranked.
    Interrupted,
}

/// An API the answer gives no speed for, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Stop {
    pub api: Api,
    /// The GPU, where the answer spans several (`compare`): with the API, the column.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu: Option<String>,
    pub kind: StopKind,
    pub message: String,
}

/// One API's standing at a configuration that is not good everywhere.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Short {
    pub api: Api,
    /// The GPU, where the answer spans several (`compare`): with the API, the column.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu: Option<String>,
    /// Its of-best where it ran (below the band, or unranked).
    pub of_best: Option<f64>,
    /// Why it is not good: the refusal reason, "cannot be ranked: ...", "0.80 of its best",
    /// "did not run ...", or "wrong output: ...".
    pub why: String,
}

/// A configuration good on at least one API, or refused by one, but not good on every API.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Shortfall {
    pub config: Config,
    pub short: Vec<Short>,
}

/// What a sweep or a tune answers (the JSON's `answer`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Answer {
    /// The bar: 0.95 of each API's own best.
    pub fraction: f64,
    /// Every API asked: those that measured and those that failed, in order.
    pub apis: Vec<Api>,
    /// The GPUs, where the answer spans several (`compare`): then each (GPU, API) pair
    /// measured is a column, and "each API's best" is each column's.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub gpus: Vec<String>,
    /// Each API that was not stopped and has a best, in `apis` order.
    pub best: Vec<ApiBest>,
    /// Configurations good on every API asked, in measurement order; empty while any stopped.
    pub portable: Vec<Config>,
    /// Configurations good on at least one API, or refused by one, but not on all.
    pub exceptions: Vec<Shortfall>,
    pub choice: Option<PortableChoice>,
    pub stopped: Vec<Stop>,
}

/// What the answer is asked over, beside the measurements.
#[derive(Debug, Clone, Default)]
pub struct Asked<'a> {
    /// Every API asked, in order (an API with measurements but not listed is added).
    pub apis: Vec<Api>,
    /// Each API's device name.
    pub devices: Vec<(Api, String)>,
    pub stops: Vec<Stop>,
    /// Parameter sets whose output was wrong on an API: never ranked there.
    pub wrong: &'a [Wrong],
    /// Winners measured a second time.
    pub held: &'a [Held],
}

/// An API's ranked measurements and the best of them.
struct Ranked<'a> {
    gpu: Option<String>,
    api: Api,
    rows: Vec<&'a Measurement>,
    best: Option<(&'a Measurement, &'a TimeStats, u32)>,
}

fn ran(m: &Measurement) -> Option<(&TimeStats, u32, f64)> {
    match &m.outcome {
        Outcome::Ran {
            stats,
            reps,
            resolution_ms,
            ..
        } => Some((stats, *reps, *resolution_ms)),
        _ => None,
    }
}

fn is_wrong<'w>(wrong: &'w [Wrong], m: &Measurement) -> Option<&'w Wrong> {
    wrong
        .iter()
        .find(|w| w.api == m.api && w.params == m.config.params)
}

impl<'a> Ranked<'a> {
    fn of(column: &Column, all: &'a [Measurement], wrong: &[Wrong]) -> Ranked<'a> {
        let (gpu, api) = column.clone();
        let rows: Vec<&Measurement> = all
            .iter()
            .filter(|m| m.column() == (gpu.as_deref(), api))
            .filter(|m| m.ms().is_some() && is_wrong(wrong, m).is_none())
            .collect();
        let best = rows
            .iter()
            .min_by(|a, b| {
                let ms = |m: &Measurement| m.ms().unwrap_or(f64::MAX);
                ms(a).total_cmp(&ms(b))
            })
            .and_then(|m| ran(m).map(|(s, reps, _)| (*m, s, reps)));
        Ranked {
            gpu,
            api,
            rows,
            best,
        }
    }

    fn column(&self) -> (Option<&str>, Api) {
        (self.gpu.as_deref(), self.api)
    }

    /// (of best, good, tied with the best) of a measurement that ran.
    fn standing(&self, m: &Measurement) -> Option<(f64, bool, bool)> {
        let (_, bs, breps) = self.best?;
        let (stats, reps, resolution_ms) = ran(m)?;
        let of_best = bs.mean / stats.mean;
        let tie = ties(stats, bs, resolution_ms, reps.min(breps));
        Some((of_best, of_best >= GOOD_FRACTION, tie))
    }

    fn api_best(&self, asked: &Asked) -> Option<ApiBest> {
        let (bm, bs, _) = self.best?;
        let mut tied = Vec::new();
        let mut good = 0;
        for m in &self.rows {
            if let Some((_, true, tie)) = self.standing(m) {
                good += 1;
                if tie && m.config != bm.config {
                    tied.push(m.config.clone());
                }
            }
        }
        let gbps = match &bm.outcome {
            Outcome::Ran { gbps, .. } => *gbps,
            _ => None,
        };
        let device = asked.devices.iter().find(|d| d.0 == self.api);
        let device = device.map(|d| d.1.clone()).or_else(|| self.gpu.clone());
        Some(ApiBest {
            api: self.api,
            gpu: self.gpu.clone(),
            device: device.unwrap_or_default(),
            config: bm.config.clone(),
            ms: bs.mean,
            gbps,
            tied,
            good,
            ranked: self.rows.len(),
            held: asked
                .held
                .iter()
                .find(|h| h.api == self.api && self.gpu.is_none())
                .cloned(),
        })
    }
}

/// A column: the GPU (where the answer spans several) and the API.
type Column = (Option<String>, Api);

fn stop_column(s: &Stop) -> (Option<&str>, Api) {
    (s.gpu.as_deref(), s.api)
}

/// Why an API has no measurement at a configuration: it stopped on an error before it (the
/// answer's sentence says it once per API, with the configurations it did not reach).
pub const STOPPED_EARLIER: &str = "did not run: the API stopped earlier";

/// Where one API stands at one configuration: good, or short and why.
fn short_at(r: &Ranked, all: &[Measurement], asked: &Asked, c: &Config) -> Result<(), Short> {
    let short = |of_best, why: String| Short {
        api: r.api,
        gpu: r.gpu.clone(),
        of_best,
        why,
    };
    let Some(m) = all
        .iter()
        .find(|m| m.column() == r.column() && &m.config == c)
    else {
        let why = match asked.stops.iter().any(|s| stop_column(s) == r.column()) {
            true => STOPPED_EARLIER,
            false => "did not run",
        };
        return Err(short(None, why.into()));
    };
    if let Some(w) = is_wrong(asked.wrong, m) {
        return Err(short(None, format!("wrong output: {}", w.detail)));
    }
    match (&m.outcome, r.standing(m)) {
        (Outcome::Refused { why }, _) => Err(short(None, why.clone())),
        (_, Some((_, true, _))) => Ok(()),
        (Outcome::Ran { stats, .. }, Some((o, false, true))) => Err(short(
            Some(o),
            format!("cannot be ranked: spread ±{:.1}%", stats.cv() * 100.0),
        )),
        (_, Some((o, false, false))) => Err(short(Some(o), format!("{} of its best", fraction(o)))),
        _ => Err(short(None, "did not run".into())),
    }
}

impl Answer {
    /// Ranks `all` over what was asked; every API asked stays in the answer.
    pub fn of(all: &[Measurement], asked: &Asked) -> Answer {
        let mut columns: Vec<Column> = asked.apis.iter().map(|&a| (None, a)).collect();
        let stopped_columns = asked.stops.iter().map(|s| (s.gpu.clone(), s.api));
        let measured = all.iter().map(|m| (m.gpu.clone(), m.api));
        let mut configs: Vec<&Config> = Vec::new();
        for c in stopped_columns.chain(measured) {
            if !columns.contains(&c) {
                columns.push(c);
            }
        }
        for m in all {
            if !configs.contains(&&m.config) {
                configs.push(&m.config);
            }
        }
        let ranked: Vec<Ranked> = columns
            .iter()
            .map(|c| Ranked::of(c, all, asked.wrong))
            .collect();
        let stopped = |r: &Ranked| asked.stops.iter().any(|s| stop_column(s) == r.column());
        // Nothing measured: failed to open, or interrupted before its turn.
        let failed = |r: &Ranked| {
            let none = || !all.iter().any(|m| (m.gpu.as_deref(), m.api) == r.column());
            let f = |s: &Stop| {
                stop_column(s) == r.column()
                    && (s.kind == StopKind::Failed || (s.kind == StopKind::Interrupted && none()))
            };
            asked.stops.iter().any(f)
        };
        let best: Vec<ApiBest> = ranked
            .iter()
            .filter(|r| !stopped(r))
            .filter_map(|r| r.api_best(asked))
            .collect();
        // Nothing is portable while an API stopped or ranked nothing.
        let all_ranked = asked.stops.is_empty() && best.len() == columns.len();
        let mut portable = Vec::new();
        let mut exceptions = Vec::new();
        let mut scored: Vec<(Config, Vec<Regret>)> = Vec::new();
        for c in configs {
            // An API that failed to open is in `stopped`, not short at every configuration.
            let standings: Vec<Result<(), Short>> = ranked
                .iter()
                .filter(|r| !failed(r))
                .map(|r| short_at(r, all, asked, c))
                .collect();
            let n_good = standings.iter().filter(|s| s.is_ok()).count();
            let short: Vec<Short> = standings.into_iter().filter_map(Result::err).collect();
            if short.is_empty() {
                if all_ranked {
                    portable.push(c.clone());
                }
            } else if n_good > 0 || short.iter().any(|s| s.of_best.is_none()) {
                exceptions.push(Shortfall {
                    config: c.clone(),
                    short,
                });
            }
            if let Some(regret) = regret_of(c, &best, &ranked) {
                scored.push((c.clone(), regret));
            }
        }
        let worst = |v: &[Regret]| v.iter().map(|x| x.regret).fold(0.0, f64::max);
        let choice = scored
            .iter()
            .min_by(|a, b| worst(&a.1).total_cmp(&worst(&b.1)))
            .map(|(c, v)| PortableChoice {
                config: c.clone(),
                regret: v.clone(),
                portable: portable.contains(c),
            });
        let mut apis: Vec<Api> = Vec::new();
        let mut gpus: Vec<String> = Vec::new();
        for (gpu, api) in columns {
            if !apis.contains(&api) {
                apis.push(api);
            }
            if let Some(g) = gpu.filter(|g| !gpus.contains(g)) {
                gpus.push(g);
            }
        }
        Answer {
            fraction: GOOD_FRACTION,
            apis,
            gpus,
            best,
            portable,
            exceptions,
            choice,
            stopped: asked.stops.clone(),
        }
    }
}

/// A configuration's regret on each API that has a best, where it ranked on every one.
fn regret_of(c: &Config, best: &[ApiBest], ranked: &[Ranked]) -> Option<Vec<Regret>> {
    let regret: Option<Vec<Regret>> = best
        .iter()
        .map(|b| {
            let r = ranked
                .iter()
                .find(|r| r.column() == (b.gpu.as_deref(), b.api))?;
            let m = r.rows.iter().find(|m| &m.config == c)?;
            Some(Regret {
                api: b.api,
                gpu: b.gpu.clone(),
                regret: m.ms()? / b.ms,
            })
        })
        .collect();
    regret.filter(|v| !v.is_empty())
}
