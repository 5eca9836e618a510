//! The answer across GPUs (`compare` of runs on different GPUs): the one [`Answer`] with each
//! (GPU, API) pair a column. Per column its best and ties; the portable set, within 95 % of
//! each GPU's and each API's own best everywhere; the least-regret choice with its regret on
//! every column. Runs of identical GPUs (the same name: shards, `--device all`) merge into one
//! GPU; runs of different kernels or specs are refused, of different sizes or timing warned.
//! An API that failed to open on a GPU is no column of it (the GPU's `apis` say which ran); one
//! that stopped part-way leaves nothing known portable, as in one run.

use serde::Serialize;

use super::Report;
use crate::answer::{measurements_of, Answer, Asked, Config, Measurement, Stop};
use crate::backend::{Api, DeviceKind};

/// What the words call the devices of a comparison: "GPU" where every run's device is known
/// to be one, else "device" (a CPU driver's; a tune's file records no kind).
pub fn device_noun(kinds: impl IntoIterator<Item = Option<DeviceKind>>) -> &'static str {
    let mut kinds = kinds.into_iter().peekable();
    match kinds.peek().is_some() && kinds.all(|k| k == Some(DeviceKind::Gpu)) {
        true => "GPU",
        false => "device",
    }
}

/// One run read for the answer: a file's measurements on one GPU, and what it measured (a
/// tune's: [`crate::tune::TuneReport::input`]).
#[derive(Debug, Clone)]
pub struct Input {
    /// The file's label (its stem).
    pub file: String,
    /// The GPU's name: runs of one name merge.
    pub gpu: String,
    /// What the device is, where the file says (a sweep's does; a tune's does not).
    pub kind: Option<DeviceKind>,
    /// The kernel ("grayscale", a spec's name): runs of two are refused.
    pub kernel: String,
    /// Its sizes ("3840x2160 seed 42", "n=16777216"): runs of two are warned about.
    pub size: String,
    /// The spec's hash, where the file has one.
    pub spec_hash: Option<String>,
    /// How it was timed ("batch"), where the file says.
    pub discipline: Option<String>,
    pub measurements: Vec<Measurement>,
    pub stops: Vec<Stop>,
}

impl Input {
    /// A sweep's runs, one per GPU it measured (a report holds one).
    pub fn of_sweep(file: &str, report: &Report) -> Vec<Input> {
        let mut out: Vec<Input> = Vec::new();
        let asked = report.asked();
        for r in &report.results {
            let gpu = r.device.name.clone();
            let mut ms = measurements_of(r, &Default::default(), r.policy);
            ms.iter_mut().for_each(|m| m.gpu = Some(gpu.clone()));
            let stops: Vec<Stop> = asked
                .stops
                .iter()
                .filter(|s| s.api == r.api)
                .map(|s| Stop {
                    gpu: Some(gpu.clone()),
                    ..s.clone()
                })
                .collect();
            let (kernel, size, spec_hash) = match &r.program {
                Some(p) => (p.name.clone(), p.sizes.clone(), p.spec_hash.clone()),
                None => {
                    let f = &r.frame;
                    let size = format!("{}x{} seed {}", f.width, f.height, f.seed);
                    ("grayscale".to_string(), size, None)
                }
            };
            let run = Input {
                file: file.to_string(),
                gpu,
                kind: Some(r.device.kind),
                kernel,
                size,
                spec_hash,
                discipline: Some(r.protocol.discipline.to_string()),
                measurements: ms,
                stops,
            };
            match out.iter_mut().find(|i| i.gpu == run.gpu) {
                Some(i) => {
                    i.measurements.extend(run.measurements);
                    i.stops.extend(run.stops);
                }
                None => out.push(run),
            }
        }
        out
    }
}

/// One GPU's runs: the files that measured it and the APIs they ran.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Gpu {
    pub name: String,
    pub files: Vec<String>,
    pub apis: Vec<Api>,
}

/// One cell of a map: a configuration and its fraction of the best (none where it did not rank).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MapCell {
    pub config: Config,
    pub of_best: Option<f64>,
}

/// Per configuration, its fraction of one GPU's best, worst over that GPU's APIs (`gpu`
/// null: the portable map, worst over every GPU).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Map {
    pub gpu: Option<String>,
    pub cells: Vec<MapCell>,
}

/// The answer across GPUs (compare's `across`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Across {
    /// The kernel every run measured.
    pub kernel: String,
    /// What the words call the devices ([`device_noun`]): the JSON keeps its `gpu` names.
    #[serde(skip)]
    pub noun: &'static str,
    pub gpus: Vec<Gpu>,
    pub answer: Answer,
    pub maps: Vec<Map>,
    /// Ways the runs differ that change what their ratios mean, each file named (said with
    /// the comparison's own warnings).
    #[serde(skip)]
    pub warnings: Vec<String>,
    /// Every configuration on every column, as answered (a CSV's lines).
    #[serde(skip)]
    pub measurements: Vec<Measurement>,
}

impl Across {
    /// The answer over `inputs`: `None` where they name one GPU only (they merge as before);
    /// an error naming each file where they measured different kernels or specs. `sides`:
    /// the side-by-side table warns of different frames and timing already.
    pub fn of(mut inputs: Vec<Input>, sides: bool) -> Result<Option<Across>, String> {
        refuse(&inputs)?;
        one_wave_alike(&mut inputs);
        let mut warnings = warn(&inputs, sides);
        let mut gpus: Vec<Gpu> = Vec::new();
        let mut all: Vec<Measurement> = Vec::new();
        let mut stops: Vec<Stop> = Vec::new();
        for i in &inputs {
            let gpu = match gpus.iter_mut().find(|g| g.name == i.gpu) {
                Some(g) => g,
                None => {
                    gpus.push(Gpu {
                        name: i.gpu.clone(),
                        files: Vec::new(),
                        apis: Vec::new(),
                    });
                    gpus.last_mut().expect("pushed")
                }
            };
            if !gpu.files.contains(&i.file) {
                gpu.files.push(i.file.clone());
            }
            for m in &i.measurements {
                if !gpu.apis.contains(&m.api) {
                    gpu.apis.push(m.api);
                }
                // Identical GPUs merge: the first file's measurement of a configuration stands.
                let seen = |x: &Measurement| x.column() == m.column() && x.config == m.config;
                if !all.iter().any(seen) {
                    all.push(m.clone());
                }
            }
            stops.extend(i.stops.iter().cloned());
        }
        if gpus.len() < 2 {
            return Ok(None);
        }
        let noun = device_noun(inputs.iter().map(|i| i.kind));
        if gpus.iter().any(|g| g.name.is_empty()) {
            warnings.push(format!(
                "A run names no {noun}: its measurements are a {noun} of their own."
            ));
        }
        let asked = Asked {
            stops,
            ..Asked::default()
        };
        let answer = Answer::of(&all, &asked);
        let maps = maps(&answer, &all, &gpus);
        Ok(Some(Across {
            kernel: inputs[0].kernel.clone(),
            noun,
            gpus,
            answer,
            maps,
            warnings,
            measurements: all,
        }))
    }
}

/// "a: grayscale; b: saxpy" for a value that differs between runs, else `None`.
fn differs(inputs: &[Input], value: impl Fn(&Input) -> Option<String>) -> Option<String> {
    let mut named: Vec<(String, String)> = Vec::new();
    for i in inputs {
        let v = value(i).unwrap_or_else(|| "unknown".into());
        if !named.iter().any(|(f, x)| *f == i.file && *x == v) {
            named.push((i.file.clone(), v));
        }
    }
    let first = &named.first()?.1;
    named.iter().any(|(_, v)| v != first).then(|| {
        let parts: Vec<String> = named.iter().map(|(f, v)| format!("{f}: {v}")).collect();
        parts.join("; ")
    })
}

fn refuse(inputs: &[Input]) -> Result<(), String> {
    if let Some(d) = differs(inputs, |i| Some(i.kernel.clone())) {
        return Err(format!(
            "the runs measured different kernels ({d}): compare runs of one kernel"
        ));
    }
    let known: Vec<Input> = inputs
        .iter()
        .filter(|i| i.spec_hash.is_some())
        .cloned()
        .collect();
    let short = |i: &Input| {
        i.spec_hash
            .as_ref()
            .map(|h| h[..h.len().min(12)].to_string())
    };
    // The hash covers the sizes too: runs of one spec at two sizes differ by it, and are
    // warned about as sizes; within one size, a different hash is a different spec.
    let sizes: std::collections::BTreeSet<&str> = known.iter().map(|i| i.size.as_str()).collect();
    for size in sizes {
        let same: Vec<Input> = (known.iter().filter(|i| i.size == size).cloned()).collect();
        if let Some(d) = differs(&same, short) {
            return Err(format!(
                "the runs measured different specs of '{}' at {size} (by hash: {d}): compare \
                 runs of one spec",
                inputs[0].kernel
            ));
        }
    }
    Ok(())
}

fn warn(inputs: &[Input], sides: bool) -> Vec<String> {
    let mut w = Vec::new();
    let is_kernel = inputs.iter().any(|i| i.spec_hash.is_some());
    let unknown: Vec<&str> = inputs
        .iter()
        .filter(|i| is_kernel && i.spec_hash.is_none())
        .map(|i| i.file.as_str())
        .collect();
    if !unknown.is_empty() {
        w.push(format!(
            "{} records no spec hash (written before it was kept): whether it ran the same \
             spec is unknown.",
            unknown.join(", ")
        ));
    }
    if sides {
        return w;
    }
    // A tune's file records no seed: where one run has none, sizes compare without it.
    let seedless = inputs.iter().any(|i| !i.size.contains(" seed "));
    let size = |i: &Input| match seedless {
        true => i.size.split(" seed ").next().map(str::to_string),
        false => Some(i.size.clone()),
    };
    if let Some(d) = differs(inputs, size) {
        let spec = match is_kernel {
            true => {
                " Their spec hashes cover the sizes, so whether they ran one spec is not \
                     checked."
            }
            false => "",
        };
        w.push(format!(
            "The runs measured different sizes ({d}): a size that fits in cache or too small \
             to fill the device changes the answer.{spec}"
        ));
    }
    // Runs whose files do not say how they were timed (a tune's) are not counted as different.
    let timed: Vec<Input> = inputs
        .iter()
        .filter(|i| i.discipline.is_some())
        .cloned()
        .collect();
    if let Some(d) = differs(&timed, |i| i.discipline.clone()) {
        let names: Vec<String> = timed.iter().filter_map(|i| i.discipline.clone()).collect();
        w.push(format!(
            "The runs were timed differently ({d}): {}",
            super::compare::timing_words(&names)
        ));
    }
    w
}

/// A sweep's one-wave grid (`wave`) is a tune's `1w`: where the runs mix the two namings,
/// the sweep's takes the tune's, so that one launch is one configuration.
fn one_wave_alike(inputs: &mut [Input]) {
    let tuned = inputs
        .iter()
        .flat_map(|i| &i.measurements)
        .any(|m| m.config.grid.0.ends_with('w'));
    if !tuned {
        return;
    }
    let one = crate::answer::GridPolicyKey::from(crate::grid::GridPolicy::Waves(100));
    for m in inputs.iter_mut().flat_map(|i| i.measurements.iter_mut()) {
        if m.config.grid.0 == crate::grid::GridPolicy::Wave.to_string() {
            m.config.grid = one.clone();
        }
    }
}

/// Each GPU's map, then the portable one: per configuration, the worst of its fractions.
fn maps(answer: &Answer, all: &[Measurement], gpus: &[Gpu]) -> Vec<Map> {
    let mut configs: Vec<&Config> = Vec::new();
    for m in all {
        if !configs.contains(&&m.config) {
            configs.push(&m.config);
        }
    }
    let fraction = |gpu: &str, c: &Config| -> Option<f64> {
        let bests = answer.best.iter().filter(|b| b.gpu.as_deref() == Some(gpu));
        let mut worst: Option<f64> = None;
        for b in bests {
            let at = |m: &&Measurement| m.column() == (Some(gpu), b.api) && &m.config == c;
            let f = b.ms / all.iter().find(at)?.ms()?;
            worst = Some(worst.map_or(f, |w| w.min(f)));
        }
        worst
    };
    let map = |gpu: Option<&str>| Map {
        gpu: gpu.map(str::to_string),
        cells: configs
            .iter()
            .map(|&c| MapCell {
                config: c.clone(),
                of_best: match gpu {
                    Some(g) => fraction(g, c),
                    None => gpus
                        .iter()
                        .try_fold(1.0f64, |w, g| fraction(&g.name, c).map(|f| w.min(f))),
                },
            })
            .collect(),
    };
    let mut out: Vec<Map> = gpus.iter().map(|g| map(Some(&g.name))).collect();
    out.push(map(None));
    out
}

#[cfg(test)]
#[path = "across_tests.rs"]
mod tests;
