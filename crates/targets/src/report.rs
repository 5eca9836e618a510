//! A command's launches held against the targets asked for: one verdict per launch and target,
//! the register arithmetic per target that states a multiprocessor, and the idle lanes of each
//! block's last subgroup per target. Plain data; crates/render draws it.

use serde::Serialize;

use blocksweep_core::limits::KernelFacts;
use blocksweep_core::program::ProgramArg;

use crate::check::{check, Verdict, Word};
use crate::model::{Kind, Target};
use crate::need::{push_constant_bytes, Needs};
use crate::occupancy::{figures, largest_block, register_steps, residency, Figures};
use crate::occupancy::{RegisterSteps, Residency};

/// One launch the command makes or assumes.
#[derive(Debug, Clone, Serialize)]
pub struct Launch {
    /// "3", or the block size for a sweep's row.
    pub id: String,
    pub claim: String,
    pub needs: Needs,
}

/// A launch's verdict on every target, in the targets' order.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    pub id: String,
    pub claim: String,
    pub needs: Needs,
    pub verdicts: Vec<Verdict>,
}

/// A target as the report names it.
#[derive(Debug, Clone, Serialize)]
pub struct Named {
    pub name: String,
    pub title: String,
    pub api: String,
    pub kind: Kind,
    pub file: String,
}

/// The register arithmetic on one target: the largest block the kernel's registers allow and
/// its residency at each block.
#[derive(Debug, Clone, Serialize)]
pub struct Registers {
    pub target: String,
    pub registers: u64,
    pub largest_block: Option<u64>,
    pub residency: Vec<Residency>,
}

/// The register arithmetic where no local build reports the kernel's registers per thread:
/// per block, at the counts where its residency changes; targets of the same figures and the
/// same steps together.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct IfRegisters {
    pub targets: Vec<String>,
    pub figures: Figures,
    pub blocks: Vec<RegisterSteps>,
}

/// Idle lanes of each block's last subgroup on one target.
#[derive(Debug, Clone, Serialize)]
pub struct Idle {
    pub target: String,
    /// The subgroup size the count is for (the default, else the largest).
    pub subgroup: u64,
    /// Whether the driver may pick another size (min < max).
    pub variable: bool,
    /// (threads per block, idle lanes).
    pub blocks: Vec<(u64, u64)>,
}

/// Every launch against every target.
#[derive(Debug, Clone, Serialize)]
pub struct TargetReport {
    /// What the launches are, in words ("validate's assumptions, numbered as above").
    pub launches: String,
    pub targets: Vec<Named>,
    pub rows: Vec<Row>,
    pub registers: Vec<Registers>,
    /// Where `registers` is empty (no count known): the arithmetic at the counts that matter.
    pub if_registers: Vec<IfRegisters>,
    pub idle: Vec<Idle>,
    /// Where the kernel's needs came from, in words.
    pub needs_from: Vec<String>,
    /// A sweep's portable answer held against the targets; `None` for other commands.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub answer: Option<TargetAnswer>,
}

/// A sweep's portable sizes (within the bar of each API's best on every API here), split by
/// whether every target asked launches them.
#[derive(Debug, Clone, Serialize)]
pub struct TargetAnswer {
    /// Every size swept that launches on every target, fast or not.
    pub launch_everywhere: Vec<String>,
    /// Whether any size is portable here at all (within the bar on every API).
    pub any_portable_here: bool,
    /// Portable here and launching on every target.
    pub portable: Vec<String>,
    /// Portable here, refused or unknown on some target: the size and, per such target, why.
    pub elsewhere: Vec<(String, Vec<String>)>,
}

impl TargetReport {
    /// Splits `portable` (row ids: the block sizes) by the targets' verdicts.
    pub fn answer(&mut self, portable: &[String]) {
        let mut answer = TargetAnswer {
            launch_everywhere: self
                .rows
                .iter()
                .filter(|r| r.verdicts.iter().all(|v| v.word == Word::Launches))
                .map(|r| r.id.clone())
                .collect(),
            any_portable_here: !portable.is_empty(),
            portable: Vec::new(),
            elsewhere: Vec::new(),
        };
        for id in portable {
            let Some(row) = self.rows.iter().find(|r| &r.id == id) else {
                continue;
            };
            let why: Vec<String> = row
                .verdicts
                .iter()
                .filter(|v| v.word != Word::Launches)
                .map(|v| {
                    let f = &v.findings[0];
                    let limit = match f.value {
                        Some(x) => format!("{} {x}", f.name),
                        None => f.name.clone(),
                    };
                    format!("{} by {} ({limit})", v.word.as_str(), v.target)
                })
                .collect();
            match why.is_empty() {
                true => answer.portable.push(id.clone()),
                false => answer.elsewhere.push((id.clone(), why)),
            }
        }
        self.answer = Some(answer);
    }
}

impl TargetReport {
    /// Whether every target launches `id`'s launch.
    pub fn launches_everywhere(&self, id: &str) -> bool {
        self.rows
            .iter()
            .find(|r| r.id == id)
            .is_some_and(|r| r.verdicts.iter().all(|v| v.word == Word::Launches))
    }
}

/// The report of `launches` on `targets`; `blocks` are the block sizes (threads) the
/// register arithmetic and the idle lanes are shown for.
pub fn report(
    launches_are: &str,
    targets: &[Target],
    launches: &[Launch],
    blocks: &[u64],
    from: Vec<String>,
) -> TargetReport {
    let rows = launches
        .iter()
        .map(|l| Row {
            id: l.id.clone(),
            claim: l.claim.clone(),
            needs: l.needs.clone(),
            verdicts: targets.iter().map(|t| check(t, &l.needs)).collect(),
        })
        .collect();
    let known = launches.iter().find_map(|l| l.needs.registers_per_thread);
    let shared_at = |threads: u64| {
        launches
            .iter()
            .find(|l| l.needs.threads() == threads)
            .and_then(|l| l.needs.shared_bytes)
            .unwrap_or(0)
    };
    let registers = match known {
        None => Vec::new(),
        Some(r) => targets
            .iter()
            .filter_map(|t| {
                let per_block = blocks
                    .iter()
                    .filter_map(|&b| residency(t, b, Some(r), shared_at(b)))
                    .collect::<Vec<_>>();
                (!per_block.is_empty()).then(|| Registers {
                    target: t.name.clone(),
                    registers: r,
                    largest_block: largest_block(t, r),
                    residency: per_block,
                })
            })
            .collect(),
    };
    let if_registers = match known {
        Some(_) => Vec::new(),
        None => if_registers(targets, blocks, shared_at),
    };
    let idle = targets
        .iter()
        .filter_map(|t| {
            let s = t.subgroup.as_ref()?;
            let size = s.default.or(s.max)?;
            Some(Idle {
                target: t.name.clone(),
                subgroup: size,
                variable: s.fixed().is_none(),
                blocks: blocks
                    .iter()
                    .map(|&b| (b, b.div_ceil(size) * size - b))
                    .collect(),
            })
        })
        .collect();
    TargetReport {
        launches: launches_are.to_string(),
        targets: targets
            .iter()
            .map(|t| Named {
                name: t.name.clone(),
                title: t.title.clone(),
                api: t.api.clone(),
                kind: t.kind,
                file: t.file.clone(),
            })
            .collect(),
        rows,
        registers,
        if_registers,
        idle,
        needs_from: from,
        answer: None,
    }
}

/// [`IfRegisters`] of every target that states a multiprocessor, at `blocks`.
fn if_registers(
    targets: &[Target],
    blocks: &[u64],
    shared_at: impl Fn(u64) -> u64,
) -> Vec<IfRegisters> {
    let mut out: Vec<IfRegisters> = Vec::new();
    for t in targets {
        let Some(figures) = figures(t) else { continue };
        let steps: Vec<RegisterSteps> = (blocks.iter())
            .filter_map(|&b| register_steps(t, b, shared_at(b)))
            .collect();
        if steps.is_empty() {
            continue;
        }
        match (out.iter_mut()).find(|g| g.figures == figures && g.blocks == steps) {
            Some(g) => g.targets.push(t.name.clone()),
            None => out.push(IfRegisters {
                targets: vec![t.name.clone()],
                figures,
                blocks: steps,
            }),
        }
    }
    out
}

/// What the local builds tell of a kernel, gathered over the APIs that built it.
#[derive(Debug, Clone, Default)]
pub struct Kernel {
    /// Registers per thread, the largest any build reports, with the name it came under.
    pub registers: Option<(u64, String)>,
    /// Static shared memory per block, the largest any build reports.
    pub static_shared: u64,
    /// The arguments, in order.
    pub args: Vec<ProgramArg>,
    /// The subgroup size its correctness rests on.
    pub subgroup_size: Option<u64>,
}

impl Kernel {
    /// The kernel's facts from each API's build, and its arguments.
    pub fn from_builds<'a>(
        builds: impl IntoIterator<Item = (String, &'a KernelFacts)>,
        args: Vec<ProgramArg>,
    ) -> Kernel {
        let mut k = Kernel {
            args,
            ..Kernel::default()
        };
        for (api, facts) in builds {
            if let Some(r) = &facts.registers {
                if k.registers.as_ref().is_none_or(|(have, _)| r.value > *have) {
                    k.registers = Some((r.value, format!("{api}: {}", r.name)));
                }
            }
            if let Some(s) = &facts.shared_bytes {
                k.static_shared = k.static_shared.max(s.value);
            }
        }
        k
    }

    /// Where the needs came from, in words.
    pub fn from_words(&self) -> Vec<String> {
        let mut out = Vec::new();
        match &self.registers {
            Some((r, from)) => out.push(format!("registers per thread: {r} ({from})")),
            None => out.push(
                "registers per thread: unknown (no local build reports them; a GPU's CUDA or \
                 NVIDIA OpenCL build does)"
                    .into(),
            ),
        }
        out
    }

    /// One launch's needs: `block`, the grid where it is in question, and `dynamic` bytes of
    /// shared memory beside the static.
    pub fn needs(&self, block: [u64; 3], grid: Option<[u64; 3]>, dynamic: u64) -> Needs {
        let scalars: Vec<u64> = self
            .args
            .iter()
            .filter_map(|a| match a {
                ProgramArg::Scalar { ty, .. } => Some(ty.size() as u64),
                _ => None,
            })
            .collect();
        let buffers: Vec<u64> = self
            .args
            .iter()
            .filter_map(|a| match a {
                ProgramArg::Buffer { bytes, .. } => Some(*bytes),
                _ => None,
            })
            .collect();
        Needs {
            block,
            grid,
            shared_bytes: Some(self.static_shared + dynamic),
            push_constant_bytes: Some(push_constant_bytes(&scalars)),
            parameter_bytes: Some(8 * buffers.len() as u64 + scalars.iter().sum::<u64>()),
            storage_buffers: Some(buffers.len() as u64),
            largest_buffer_bytes: buffers.iter().copied().max(),
            registers_per_thread: self.registers.as_ref().map(|(r, _)| *r),
            registers_from: self.registers.as_ref().map(|(_, f)| f.clone()),
            subgroup_size: self.subgroup_size,
        }
    }
}
