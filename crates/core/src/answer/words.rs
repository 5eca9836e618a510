//! The answer in sentences, as a report's "Answer" opens: the configurations good on every
//! API, then where each other one falls short.

use super::{Answer, Config};

impl Answer {
    /// Whether every configuration named is a block alone (no parameter set, one grid
    /// policy): a plain sweep, whose configurations are named by their blocks.
    pub fn plain(&self) -> bool {
        let named = self
            .best
            .iter()
            .map(|b| &b.config)
            .chain(&self.portable)
            .chain(self.exceptions.iter().map(|e| &e.config));
        let mut grid = None;
        for c in named {
            if !c.params.is_empty() || grid.is_some_and(|g| g != &c.grid) {
                return false;
            }
            grid = Some(&c.grid);
        }
        true
    }

    /// A configuration as this answer names it: "64" in a plain sweep, else in full.
    pub fn label(&self, c: &Config) -> String {
        match self.plain() {
            true => c.block.to_string(),
            false => c.to_string(),
        }
    }

    /// "Within 95 % of each API's best on all three APIs (CUDA, Vulkan, OpenCL): 64, 96, 128
    /// threads per block.", then the exceptions in one sentence.
    pub fn sentences(&self) -> Vec<String> {
        self.sentences_on("device")
    }

    /// The sentences, an answer across devices calling each a `noun` ("GPU" where every one
    /// is known to be: [`crate::report::across::device_noun`]).
    pub fn sentences_on(&self, noun: &str) -> Vec<String> {
        let pct = (self.fraction * 100.0).round();
        let each = match self.gpus.is_empty() {
            true => "each API's".to_string(),
            false => format!("each {noun}'s and each API's"),
        };
        let names: Vec<String> = self.apis.iter().map(|a| a.to_string()).collect();
        let on = match self.apis.len() {
            _ if !self.gpus.is_empty() => format!(
                "on every {noun} ({}) through every API it ran ({})",
                self.gpus.join(", "),
                names.join(", ")
            ),
            1 => format!("on {}", names[0]),
            2 => format!("on both APIs ({})", names.join(", ")),
            3 => format!("on all three APIs ({})", names.join(", ")),
            n => format!("on all {n} APIs ({})", names.join(", ")),
        };
        let (what, unit) = match self.plain() {
            true => ("block size", " threads per block"),
            false => ("configuration", ""),
        };
        let list = |v: &[Config]| {
            let v: Vec<String> = v.iter().map(|c| self.label(c)).collect();
            v.join(", ")
        };
        let stopped: Vec<String> = self
            .stopped
            .iter()
            .map(|s| {
                let c = column(s.gpu.as_deref(), s.api);
                format!("{c} {}: {}", words(s.kind), s.message)
            })
            .collect();
        let mut out = vec![match (self.stopped.is_empty(), self.portable.is_empty()) {
            (false, _) => format!("No {what} is known good {on}: {}.", stopped.join("; ")),
            (true, true) => format!("No {what} is within {pct} % of {each} best {on}."),
            (true, false) => format!(
                "Within {pct} % of {each} best {on}: {}{unit}.",
                list(&self.portable)
            ),
        }];
        out.extend(self.not_portable());
        out
    }

    /// "Not portable (where each API falls short): ...", each configuration once; `None`
    /// where there is no exception.
    fn not_portable(&self) -> Vec<String> {
        if self.exceptions.is_empty() {
            return Vec::new();
        }
        // The configurations only stopped APIs did not reach, one list per set of those
        // APIs after the others (it was said once per configuration: 12 times in one line;
        // then once per API, twice where two stopped before it).
        let mut unreached: Vec<(String, Vec<String>)> = Vec::new();
        let mut unmeasured: Vec<(String, Vec<String>)> = Vec::new();
        let mut parts: Vec<String> = Vec::new();
        for e in &self.exceptions {
            let stopped = |s: &super::Short| s.why == super::rank::STOPPED_EARLIER;
            let label = self.label(&e.config);
            // A configuration that also fell short elsewhere says it all in one place (it
            // was listed twice: once with its shortfall, once among the unreached).
            if e.short.is_empty() {
                continue;
            }
            // A configuration some column never measured (a sweep beside a map of another
            // GPU asks fewer grids) is not ranked: said once, grouped, not configuration by
            // configuration with every column's "did not run".
            let never = |s: &&super::Short| s.of_best.is_none() && s.why == NOT_RUN;
            if e.short.iter().any(|s| never(&s)) {
                let who: Vec<String> = e.short.iter().filter(never).map(who_short).collect();
                group(&mut unmeasured, who.join(", "), label);
                continue;
            }
            if e.short.iter().all(stopped) {
                let who: Vec<String> = e.short.iter().map(who_short).collect();
                group(&mut unreached, who.join(", "), label);
                continue;
            }
            let why: Vec<String> = (e.short.iter())
                .map(|s| format!("{}: {}", who_short(s), s.why))
                .collect();
            parts.push(format!("{label} ({})", why.join("; ")));
        }
        parts.extend(
            unreached.iter().map(|(who, c)| {
                format!("{} ({who}: {})", c.join(", "), super::rank::STOPPED_EARLIER)
            }),
        );
        let mut said = Vec::new();
        if !parts.is_empty() {
            said.push(format!(
                "Not portable (where each API falls short): {}.",
                parts.join("; ")
            ));
        }
        for (who, c) in &unmeasured {
            said.push(format!(
                "Not measured by every API, so not ranked ({who}: did not run {}): {}.",
                match c.len() {
                    1 => "it",
                    _ => "them",
                },
                first_of(c, UNMEASURED_SHOWN)
            ));
        }
        said
    }
}

/// Adds `label` to the group of `who`, made where it is new (groups in first-seen order).
fn group(groups: &mut Vec<(String, Vec<String>)>, who: String, label: String) {
    match groups.iter_mut().find(|(a, _)| *a == who) {
        Some((_, c)) => c.push(label),
        None => groups.push((who, vec![label])),
    }
}

/// A column's plain "did not run": it never measured the configuration (no stop, no refusal).
const NOT_RUN: &str = "did not run";

/// How many configurations a column never measured are named; the rest are counted.
const UNMEASURED_SHOWN: usize = 8;

/// "a, b, c" or "a, b, ... and 40 more".
fn first_of(labels: &[String], shown: usize) -> String {
    match labels.len() > shown {
        true => format!(
            "{} and {} more",
            labels[..shown].join(", "),
            labels.len() - shown
        ),
        false => labels.join(", "),
    }
}

/// "H100 CUDA" where the answer spans GPUs, else "CUDA".
pub fn column(gpu: Option<&str>, api: crate::backend::Api) -> String {
    match gpu {
        Some(g) => format!("{g} {api}"),
        None => api.to_string(),
    }
}

fn who_short(s: &super::Short) -> String {
    column(s.gpu.as_deref(), s.api)
}

fn words(kind: super::StopKind) -> &'static str {
    match kind {
        super::StopKind::Failed => "failed",
        super::StopKind::Stopped => "stopped",
        super::StopKind::Interrupted => "interrupted",
    }
}
