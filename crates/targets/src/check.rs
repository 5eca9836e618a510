//! A launch's needs held against one target: `launches`, `refused: <limit> = <value>
//! (<source>)`, or `unknown: <target> does not state <limit>`. Each limit is checked only where
//! the target's API has it (push constants on Vulkan, argument bytes where arguments pass by
//! value), and an unknown need is never taken to fit.

use std::fmt;

use serde::Serialize;

use crate::model::{Key, Source, Target, Value};
use crate::need::Needs;
use crate::occupancy;

/// The verdict's word.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Word {
    Launches,
    Unknown,
    Refused,
}

impl Word {
    pub fn as_str(self) -> &'static str {
        match self {
            Word::Launches => "launches",
            Word::Unknown => "unknown",
            Word::Refused => "refused",
        }
    }
}

/// One limit that refuses the launch, or that cannot say.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Finding {
    pub word: Word,
    pub key: Key,
    /// The limit's name in the target's API.
    pub name: String,
    /// What the target states; `None` where it states nothing.
    pub value: Option<Value>,
    /// What the launch needs, in words ("1024 threads").
    pub need: String,
    pub source: Option<Source>,
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.value, &self.source) {
            (Some(v), Some(s)) => write!(f, "{} = {v} ({})", self.name, s.cite()),
            (Some(v), None) => write!(f, "{} = {v}", self.name),
            (None, _) => write!(f, "{}", self.name),
        }
    }
}

/// What one target says of one launch.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Verdict {
    pub target: String,
    pub word: Word,
    /// The limits that refuse it or cannot say, the deciding one first.
    pub findings: Vec<Finding>,
    /// What else the reader should know (an opt-in the launch needs).
    pub notes: Vec<String>,
}

impl Verdict {
    /// "launches", "refused: maxComputeInvocationsPerWorkgroup = 256 (W3C …)", "unknown:
    /// roadmap-2022 does not state maxComputeSharedMemorySize".
    pub fn line(&self) -> String {
        let Some(first) = self.findings.first() else {
            return self.word.as_str().to_string();
        };
        match (first.word, &first.value, &first.source) {
            (Word::Refused, Some(_), _) => format!("refused: {first}; needs {}", first.need),
            (Word::Refused, None, _) => format!("refused: {}", first.need),
            (_, None, None) => format!("unknown: {} does not state {}", self.target, first.name),
            _ => format!("unknown: {}", first.need),
        }
    }

    /// The cell's short form: "launches", "refused: maxComputeWorkGroupInvocations = 128",
    /// "unknown: maxComputeSharedMemorySize".
    pub fn short(&self) -> String {
        match self.findings.first() {
            None => self.word.as_str().to_string(),
            Some(f) => match &f.value {
                Some(v) if f.word == Word::Refused => format!("refused: {} = {v}", f.name),
                None if f.word == Word::Refused => format!("refused: {}", f.name),
                _ => format!("unknown: {}", f.name),
            },
        }
    }
}

/// Checks `needs` against `target`.
pub fn check(target: &Target, needs: &Needs) -> Verdict {
    let mut c = Checker {
        target,
        findings: Vec::new(),
        notes: Vec::new(),
    };
    let threads = needs.threads();
    c.count(Key::ThreadsPerBlock, threads, &format!("{threads} threads"));
    c.dims(Key::BlockDims, needs.block, "block");
    // OpenCL bounds no count of work-groups per dimension (only the global size's type).
    if let Some(grid) = needs.grid.filter(|_| target.api != "opencl") {
        c.dims(Key::GridDims, grid, "grid");
    }
    if let Some(s) = needs.shared_bytes.filter(|&s| s > 0) {
        c.shared(s);
    }
    let api = target.api.as_str();
    if let Some(p) = needs
        .push_constant_bytes
        .filter(|&p| p > 0 && api == "vulkan")
    {
        c.count(Key::PushConstantBytes, p, &format!("{p} bytes of scalars"));
    }
    if let Some(p) = needs
        .parameter_bytes
        .filter(|_| matches!(api, "cuda" | "opencl"))
    {
        if target.get(Key::ParameterBytes).is_some() {
            c.count(Key::ParameterBytes, p, &format!("{p} bytes of arguments"));
        }
    }
    if let Some(n) = needs
        .storage_buffers
        .filter(|_| matches!(api, "vulkan" | "webgpu"))
    {
        c.count(Key::StorageBuffers, n, &format!("{n} storage buffers"));
    }
    if let Some(b) = needs.largest_buffer_bytes {
        if target.get(Key::StorageBindingBytes).is_some() || api != "cuda" {
            c.count(
                Key::StorageBindingBytes,
                b,
                &format!("a buffer of {b} bytes"),
            );
        }
    }
    if target.get(Key::RegistersPerBlock).is_some() {
        c.registers(needs, threads);
    }
    if let Some(s) = needs.subgroup_size {
        c.subgroup(s);
    }
    c.findings.sort_by_key(|f| std::cmp::Reverse(f.word));
    let word = c.findings.first().map_or(Word::Launches, |f| f.word);
    Verdict {
        target: target.name.clone(),
        word,
        findings: c.findings,
        notes: c.notes,
    }
}

struct Checker<'a> {
    target: &'a Target,
    findings: Vec<Finding>,
    notes: Vec<String>,
}

impl Checker<'_> {
    fn find(&mut self, word: Word, key: Key, need: String) {
        let stated = self.target.get(key);
        self.findings.push(Finding {
            word,
            key,
            name: stated.map_or_else(
                || key.name_in(&self.target.api).to_string(),
                |s| s.name.clone(),
            ),
            value: stated.map(|s| s.value),
            need,
            source: stated.map(|s| s.source.clone()),
        });
    }

    /// `need` against a one-number limit: above it refused, unstated unknown.
    fn count(&mut self, key: Key, need: u64, words: &str) {
        match self.target.one(key) {
            Some(v) if need > v => self.find(Word::Refused, key, words.to_string()),
            Some(_) => {}
            None => self.find(Word::Unknown, key, words.to_string()),
        }
    }

    fn dims(&mut self, key: Key, need: [u64; 3], what: &str) {
        let [x, y, z] = need;
        let words = format!("a {what} of ({x}, {y}, {z})");
        match self.target.dims(key) {
            Some(v) if need.iter().zip(v).any(|(n, l)| *n > l) => {
                self.find(Word::Refused, key, words)
            }
            Some(_) => {}
            None => self.find(Word::Unknown, key, words),
        }
    }

    /// Shared memory: within the default limit; else within the opt-in one (said); else refused.
    fn shared(&mut self, need: u64) {
        let words = format!("{need} bytes of shared memory");
        let optin = self.target.one(Key::SharedBytesOptin);
        match self.target.one(Key::SharedBytes) {
            Some(v) if need <= v => {}
            Some(_) if optin.is_some_and(|o| need <= o) => self.notes.push(format!(
                "{need} bytes of shared memory need the opt-in ({} = {})",
                self.target
                    .get(Key::SharedBytesOptin)
                    .map_or("", |s| s.name.as_str()),
                optin.unwrap_or_default()
            )),
            Some(_) => match optin {
                Some(_) => self.find(Word::Refused, Key::SharedBytesOptin, words),
                None => self.find(Word::Refused, Key::SharedBytes, words),
            },
            None => self.find(Word::Unknown, Key::SharedBytes, words),
        }
    }

    /// Registers: the count the local builds give against the per-thread and per-block limits;
    /// with no count, the block is judged at the worst count the target allows, and where that
    /// would not fit, the verdict is unknown and says up to what count it launches.
    fn registers(&mut self, needs: &Needs, threads: u64) {
        let t = self.target;
        let per_block = t.one(Key::RegistersPerBlock).unwrap_or(0);
        match needs.registers_per_thread {
            Some(r) => {
                if t.one(Key::RegistersPerThread).is_some_and(|m| r > m) {
                    let need = format!("{r} registers per thread");
                    self.find(Word::Refused, Key::RegistersPerThread, need);
                    return;
                }
                if occupancy::largest_block(t, r).is_some_and(|b| threads > b) {
                    let one = occupancy::residency(t, 1, Some(r), 0);
                    let per_warp = one.as_ref().and_then(|x| x.registers_per_warp).unwrap_or(r);
                    let warp = t.subgroup.as_ref().and_then(|s| s.fixed()).unwrap_or(32);
                    let warps = threads.div_ceil(warp);
                    self.find(
                        Word::Refused,
                        Key::RegistersPerBlock,
                        format!(
                            "{threads} threads × {r} registers: {warps} warps × {per_warp} = {}",
                            warps * per_warp
                        ),
                    );
                }
            }
            None => {
                let worst = t.one(Key::RegistersPerThread).unwrap_or(255);
                if occupancy::largest_block(t, worst).is_some_and(|b| threads > b) {
                    let most = (1..=worst)
                        .rev()
                        .find(|&r| occupancy::largest_block(t, r).is_some_and(|b| threads <= b));
                    let need = match most {
                        Some(r) => format!(
                            "no local build reports the kernel's registers per thread; {threads} \
                             threads launch at most with {r} ({} = {per_block})",
                            t.get(Key::RegistersPerBlock)
                                .map_or("", |s| s.name.as_str())
                        ),
                        None => "no local build reports the kernel's registers".to_string(),
                    };
                    self.findings.push(Finding {
                        word: Word::Unknown,
                        key: Key::RegistersPerThread,
                        name: "registers per thread".into(),
                        value: t.get(Key::RegistersPerBlock).map(|s| s.value),
                        need,
                        source: t.get(Key::RegistersPerBlock).map(|s| s.source.clone()),
                    });
                }
            }
        }
    }

    /// A kernel whose correctness rests on subgroups of `size`.
    fn subgroup(&mut self, size: u64) {
        let Some(s) = &self.target.subgroup else {
            self.findings.push(Finding {
                word: Word::Unknown,
                key: Key::ThreadsPerBlock,
                name: "its subgroup size".into(),
                value: None,
                need: format!("subgroups of {size}"),
                source: None,
            });
            return;
        };
        let range = s.range();
        let above = s.max.is_some_and(|m| size > m);
        let word = match (size < s.min || above, s.fixed()) {
            (true, _) => Word::Refused,
            (false, Some(_)) => return,
            (false, None) => Word::Unknown,
        };
        let need = match word {
            Word::Refused => format!("subgroups of {size}; it runs subgroups of {range}"),
            _ => format!(
                "it may run subgroups of {range}; only a pipeline that requires {size} \
                 (subgroup size control) gets it"
            ),
        };
        self.findings.push(Finding {
            word,
            key: Key::ThreadsPerBlock,
            name: s.name.clone(),
            value: None,
            need,
            source: Some(s.source.clone()),
        });
    }
}
