//! Portable sizing assumptions, tested: which launches each API runs, which it rejects and with
//! what error. Each launch that runs is verified like a sweep row, so "it launched" also means
//! "it covered every pixel".

use serde::Serialize;

use crate::backend::{Api, Backend, BackendError, DeviceIdentity, KernelVariant, Launch};
use crate::blocks::BlockSize;
use crate::frame::Frame;
use crate::guarantee::{Amount, Need};
use crate::lab::resources::ResourceResult;
use crate::limits::Concept;
use crate::stance::who_guarantees;
use crate::subgroup::{self, ApiSubgroups};
use crate::sweep::{checked_dispatch, limit_violation, FrameCheck, FrameReadback};

pub use crate::claim::{verdict_word, Expect, LaunchOutcome};
pub use task::{Validated, Validation, FRAME};

mod task;

/// A sizing assumption people carry from one API or GPU to another. Who guarantees it is
/// made from each API's own figures ([`crate::guarantee`]); `note` adds what they cannot say.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(into = "Stated")]
pub struct Assumption {
    pub claim: &'static str,
    pub note: Option<&'static str>,
    /// What the claim says the API does with the launch.
    pub expects: Expect,
    /// Whether the claim is about the block or the grid (the other is incidental).
    pub about: Subject,
    pub launch: Launch,
}

/// What a claim is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Subject {
    Block,
    Grid,
}

/// An assumption as the JSON carries it: claim, who guarantees it, launch.
#[derive(Serialize)]
struct Stated {
    claim: &'static str,
    expects: Expect,
    guarantee: String,
    launch: Launch,
}

impl From<Assumption> for Stated {
    fn from(a: Assumption) -> Stated {
        Stated {
            claim: a.claim,
            expects: a.expects,
            guarantee: a.guarantee(),
            launch: a.launch,
        }
    }
}

impl Assumption {
    /// What the claim asks of each limit: threads per block and each extent, or the grid.
    pub fn needs(&self) -> Vec<Need> {
        let b = self.launch.block;
        let g = self.launch.grid;
        match self.about {
            Subject::Block => vec![
                Need::new(Concept::MaxThreadsPerBlock, Amount::Count(b.threads())),
                Need::new(
                    Concept::MaxBlockDims,
                    Amount::Dims([b.x, b.y, b.z].map(u64::from)),
                ),
            ],
            Subject::Grid => vec![Need::new(
                Concept::MaxGridDims,
                Amount::Dims([g.x.into(), g.y.into(), 1]),
            )],
        }
    }

    /// Who guarantees it, over every API of this process, and the note.
    pub fn guarantee(&self) -> String {
        let who = who_guarantees(&Api::known(), &self.needs());
        match self.note {
            Some(note) => format!("{who}. {note}"),
            None => who,
        }
    }
}

const fn a(
    claim: &'static str,
    note: Option<&'static str>,
    block: [u32; 3],
    grid: u32,
) -> Assumption {
    let [x, y, z] = block;
    Assumption {
        claim,
        note,
        expects: expects(claim),
        about: Subject::Block,
        launch: Launch::linear(BlockSize { x, y, z }, grid),
    }
}

/// A claim says "... rejected" or "... run(s) ...": what it expects, read from its words so the
/// two cannot disagree.
const fn expects(claim: &str) -> Expect {
    let b = claim.as_bytes();
    let word = b"rejected";
    let mut i = 0;
    while i + word.len() <= b.len() {
        let mut j = 0;
        while j < word.len() && b[i + j] == word[j] {
            j += 1;
        }
        if j == word.len() {
            return Expect::Refused;
        }
        i += 1;
    }
    Expect::Runs
}

/// A claim about the grid, launched with blocks of 32.
const fn grid(claim: &'static str, x: u32, y: u32) -> Assumption {
    Assumption {
        claim,
        note: None,
        expects: expects(claim),
        about: Subject::Grid,
        launch: Launch::new(
            BlockSize { x: 32, y: 1, z: 1 },
            crate::backend::GridSize { x, y },
        ),
    }
}

/// The assumptions checked: the pitfalls of porting a launch, and the specifications' minimums.
pub const ASSUMPTIONS: [Assumption; 12] = [
    a("128 threads per block run", None, [128, 1, 1], 8),
    a("256 threads per block run", None, [256, 1, 1], 8),
    a("1024 threads per block run", None, [1024, 1, 1], 4),
    a("1025 threads per block are rejected", None, [1025, 1, 1], 4),
    a("a 32x32 block (1024 threads) runs", None, [32, 32, 1], 4),
    a(
        "a 32x32x2 block is rejected",
        Some("Each dimension fits, the product (2048) does not"),
        [32, 32, 2],
        4,
    ),
    a("a 1x1x64 block runs", None, [1, 1, 64], 64),
    a("a 1x1x65 block is rejected", None, [1, 1, 65], 64),
    a(
        "100 threads per block run (not a multiple of 32)",
        Some("No API asks for a multiple of the warp; on a 32-wide machine 28 lanes idle in each block's last warp"),
        [100, 1, 1],
        16,
    ),
    grid("a grid of 65535 blocks runs", 65535, 1),
    grid("a grid of 65536 blocks runs", 65536, 1),
    grid("a grid of 65536 blocks in y runs", 1, 65536),
];

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Check {
    pub api: Api,
    pub assumption: Assumption,
    /// What the queried limits say about the launch (None: within every limit).
    pub limits_say: Option<String>,
    pub outcome: LaunchOutcome,
    /// The launch handed to the API where it is not the assumption's own ("100 x 41": a user
    /// kernel whose grid covers its work); absent where it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub launched: Option<String>,
}

impl Check {
    /// Whether the outcome bears the claim out (`None`: it says nothing of it).
    pub fn holds(&self) -> Option<bool> {
        self.assumption.expects.holds(&self.outcome)
    }

    /// The launch ran and left a wrong output: the run fails (exit code 1).
    pub fn went_wrong(&self) -> bool {
        matches!(
            self.outcome,
            LaunchOutcome::Wrong { .. } | LaunchOutcome::Failed { .. }
        )
    }
}

/// What `validate` learns from one API: the assumptions launched, the resource rows
/// (docs/lab.md), its subgroups claimed against measured, and what the API's own checking
/// layer said meanwhile (a clean run: nothing).
pub struct ApiValidation {
    pub checks: Vec<Check>,
    /// The facts of the grid-stride kernel the assumptions launched (registers, shared memory):
    /// what `--target` holds against other GPUs.
    pub kernel: crate::limits::KernelFacts,
    pub resources: Vec<ResourceResult>,
    pub subgroups: ApiSubgroups,
}

/// Runs every check of `validate` on one backend.
pub fn run_api(
    backend: &mut dyn Backend,
    frame: &Frame,
    reference: &[f32],
) -> Result<ApiValidation, BackendError> {
    let checks = run(backend, frame, reference)?;
    crate::builtin::load_kernel(backend, KernelVariant::GridStride, 1, 1)?;
    let kernel = backend.kernel_facts().clone();
    let resources = crate::lab::run::run_resources(backend, frame, reference)?;
    // Last: the probe is a user kernel, and stays the current kernel.
    let subgroups = subgroup::probe(backend);
    Ok(ApiValidation {
        checks,
        kernel,
        resources,
        subgroups,
    })
}

/// Hands every assumption's launch to `backend` (device limits are not pre-checked here: the
/// point is to see what the API itself does) and verifies those that run.
pub fn run(
    backend: &mut dyn Backend,
    frame: &Frame,
    reference: &[f32],
) -> Result<Vec<Check>, BackendError> {
    let mut kept = FrameReadback::untimed(backend.api());
    let mut checks = Vec::new();
    let mut loaded = crate::builtin::Loaded::default();
    for asm in ASSUMPTIONS {
        // A grid in y runs the 2-D kernel: the 1-D one ignores blockIdx.y, so every row of
        // blocks would redo the whole frame (65536 times over: 39 s on PoCL) and its output
        // could not show whether the rows past the first ran at all.
        let kernel = match asm.launch.grid.y > 1 {
            true => KernelVariant::GridStride2D,
            false => KernelVariant::GridStride,
        };
        loaded.ensure(backend, kernel, frame)?;
        let limits_say =
            limit_violation(backend.limits(), backend.kernel_facts(), asm.launch.block);
        let mut check = FrameCheck::new(&mut kept, reference);
        let dispatched = checked_dispatch(backend, asm.launch, None, &mut check);
        let outcome = LaunchOutcome::of_frame(dispatched)?;
        checks.push(Check {
            api: backend.api(),
            assumption: asm,
            limits_say,
            outcome,
            launched: None,
        });
    }
    Ok(checks)
}

/// The checks of one device's APIs, and those APIs with their device names.
#[derive(Debug, Clone, Serialize)]
pub struct ValidateGroup {
    /// "physical device 0 (NVIDIA H200, matched by UUID)"; shown when a call covers several.
    pub heading: Option<String>,
    pub apis: Vec<(Api, String)>,
    /// The devices behind `apis` (for the JSON's envelope).
    pub devices: Vec<DeviceIdentity>,
    pub checks: Vec<Check>,
    /// The resource rows (shared memory and registers per block: `lab::resources`).
    pub resources: Vec<ResourceResult>,
    /// Each API's subgroups, claimed against measured (`crate::subgroup`).
    pub subgroups: Vec<ApiSubgroups>,
}

impl ValidateGroup {
    /// The name of the device `api` ran on in this group ("" if it did not run).
    pub fn device_name(&self, api: Api) -> String {
        self.apis
            .iter()
            .find(|(a, _)| *a == api)
            .map(|(_, n)| n.clone())
            .unwrap_or_default()
    }
}

/// What `validate` prints. JSON: the envelope, then every check as one flat array, `checks`.
#[derive(Debug, Clone, Serialize)]
pub struct ValidateReport {
    pub groups: Vec<ValidateGroup>,
    /// A user's kernel and the sizes it was launched at ("scale (scale/kernel.toml) at
    /// n=4096"), with why where they are not its own; `None`: the built-in kernels.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kernel: Option<String>,
}

impl ValidateReport {
    pub fn checks(&self) -> impl Iterator<Item = &Check> {
        self.groups.iter().flat_map(|g| &g.checks)
    }

    pub fn resources(&self) -> impl Iterator<Item = &ResourceResult> {
        self.groups.iter().flat_map(|g| &g.resources)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{HostBackend, TEST_API_A};

    /// Every check and resource check runs (what the checking layer said reaches the user
    /// through the session's pipeline, not through this).
    #[test]
    fn validate_runs_the_checks_and_the_resource_checks() {
        let frame = Frame::generate(61, 7, 3);
        let reference = frame.reference();
        let mut b = HostBackend::new(TEST_API_A);
        let v = run_api(&mut b, &frame, &reference).unwrap();
        assert!(!v.checks.is_empty() && !v.resources.is_empty());
    }

    /// A dispatch that fails (not a refusal) is that claim's outcome, in the API's words, and
    /// the claims after it still run: the one policy of validate's launches and resource rows.
    #[test]
    fn a_failed_dispatch_is_its_claims_outcome_and_the_next_claims_run() {
        let frame = Frame::generate(61, 7, 3);
        let reference = frame.reference();
        let mut b = HostBackend::new(TEST_API_A);
        b.fault = Some(256);
        let checks = run(&mut b, &frame, &reference).unwrap();
        let failed: Vec<&Check> = checks
            .iter()
            .filter(|c| matches!(&c.outcome, LaunchOutcome::Failed { message } if message.contains("HOST_FAULT")))
            .collect();
        assert_eq!(failed.len(), 1, "{checks:?}");
        assert_eq!(failed[0].assumption.launch.block.threads(), 256);
        assert!(failed[0].went_wrong());
        let last = checks.last().unwrap();
        assert_eq!(last.outcome, LaunchOutcome::Ran, "{checks:?}");
        assert_eq!(checks.len(), ASSUMPTIONS.len());
    }

    /// An API that ran only the grid's first row of blocks fails the claim about a grid in y
    /// (the 1-D kernel's output could not show it), and no other claim.
    #[test]
    fn a_grid_in_y_whose_rows_did_not_all_run_is_wrong() {
        let frame = Frame::generate(61, 7, 3);
        let reference = frame.reference();
        let mut good = HostBackend::new(TEST_API_A);
        let checks = run(&mut good, &frame, &reference).unwrap();
        let y = checks
            .iter()
            .find(|c| c.assumption.launch.grid.y > 1)
            .unwrap();
        assert_eq!(y.outcome, LaunchOutcome::Ran, "{checks:?}");
        assert!(!checks.iter().any(Check::went_wrong), "{checks:?}");
        let mut dropped = HostBackend::new(TEST_API_A);
        dropped.first_block_row_only = true;
        let checks = run(&mut dropped, &frame, &reference).unwrap();
        let wrong: Vec<&str> = checks
            .iter()
            .filter(|c| matches!(c.outcome, LaunchOutcome::Wrong { .. }))
            .map(|c| c.assumption.claim)
            .collect();
        assert_eq!(wrong, ["a grid of 65536 blocks in y runs"], "{checks:?}");
    }
}
