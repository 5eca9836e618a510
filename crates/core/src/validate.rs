//! Portable sizing assumptions, tested: which launches each API runs, which it rejects and with
//! what error. Each launch that runs is verified like a sweep row, so "it launched" also means
//! "it covered every pixel".

use serde::{Deserialize, Serialize};
use tabled::builder::Builder;

use crate::backend::{Api, Backend, BackendError, ErrorKind, Launch, Stamps, Work};
use crate::blocks::BlockSize;
use crate::frame::Frame;
use crate::report::text::table;
use crate::sweep::limit_violation;
use crate::verify::verify;

/// A sizing assumption people carry from one API or GPU to another.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Assumption {
    pub claim: &'static str,
    /// Who promises it, if anyone.
    pub guarantee: &'static str,
    pub launch: Launch,
}

const fn a(
    claim: &'static str,
    guarantee: &'static str,
    x: u32,
    y: u32,
    z: u32,
    grid: u32,
) -> Assumption {
    Assumption {
        claim,
        guarantee,
        launch: Launch::linear(BlockSize { x, y, z }, grid),
    }
}

/// The assumptions checked, from the seed's pitfalls and the specifications' minimums.
pub const ASSUMPTIONS: [Assumption; 11] = [
    a(
        "128 threads per block run",
        "Vulkan (maxComputeWorkGroupInvocations >= 128); OpenCL promises 1",
        128,
        1,
        1,
        8,
    ),
    a(
        "256 threads per block run",
        "CUDA (every compute capability); Vulkan and OpenCL: device-specific",
        256,
        1,
        1,
        8,
    ),
    a(
        "1024 threads per block run",
        "CUDA since compute capability 2.0; elsewhere device-specific",
        1024,
        1,
        1,
        4,
    ),
    a(
        "1025 threads per block are rejected",
        "above CUDA's fixed 1024",
        1025,
        1,
        1,
        4,
    ),
    a(
        "a 32x32 block (1024 threads) runs",
        "CUDA; Vulkan only if maxComputeWorkGroupSize[1] >= 32 and invocations >= 1024",
        32,
        32,
        1,
        4,
    ),
    a(
        "a 32x32x2 block is rejected",
        "each dimension fits, the product (2048) does not",
        32,
        32,
        2,
        4,
    ),
    a(
        "a 1x1x64 block runs",
        "CUDA (z <= 64); Vulkan (maxComputeWorkGroupSize[2] >= 64)",
        1,
        1,
        64,
        64,
    ),
    a(
        "a 1x1x65 block is rejected",
        "above CUDA's z limit of 64",
        1,
        1,
        65,
        64,
    ),
    a(
        "100 threads per block run (not a multiple of 32)",
        "legal everywhere; on NVIDIA 28 lanes idle in every block",
        100,
        1,
        1,
        16,
    ),
    a(
        "a grid of 65535 blocks runs",
        "Vulkan (maxComputeWorkGroupCount[0] >= 65535); CUDA 2^31-1",
        32,
        1,
        1,
        65535,
    ),
    a(
        "a grid of 65536 blocks runs",
        "CUDA (2^31-1 in x); above Vulkan's guarantee",
        32,
        1,
        1,
        65536,
    ),
];

/// What happened when one API was handed one launch.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// It ran and every pixel matched.
    Ran,
    /// It ran and left pixel `index` wrong.
    Wrong { index: u64 },
    /// The API (or, where dispatching would be undefined behaviour, the backend on its behalf)
    /// refused it; the message is the API's own.
    Rejected { message: String },
    /// The API failed in another way; its words are kept and the next check still runs.
    Failed { message: String },
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Check {
    pub api: Api,
    pub assumption: Assumption,
    /// What the queried limits say about the launch (None: within every limit).
    pub limits_say: Option<String>,
    pub outcome: Outcome,
}

/// Hands every assumption's launch to `backend` (device limits are not pre-checked here: the
/// point is to see what the API itself does) and verifies those that run.
pub fn run(
    backend: &mut dyn Backend,
    frame: &Frame,
    reference: &[f32],
) -> Result<Vec<Check>, BackendError> {
    backend.upload(frame)?;
    let mut out = vec![0f32; frame.pixels() as usize];
    let mut checks = Vec::new();
    for asm in ASSUMPTIONS {
        let limits_say =
            limit_violation(backend.limits(), backend.kernel_facts(), asm.launch.block);
        backend.poison_output()?;
        let outcome = match backend.run_batch(Work::Kernel(asm.launch), 1, Stamps::None) {
            Ok(_) => {
                backend.read_output(&mut out)?;
                match verify(&out, reference) {
                    Ok(()) => Outcome::Ran,
                    Err(m) => Outcome::Wrong { index: m.index },
                }
            }
            Err(e) if e.kind == ErrorKind::LaunchRejected => {
                Outcome::Rejected { message: e.message }
            }
            Err(e) => return Err(e),
        };
        checks.push(Check {
            api: backend.api(),
            assumption: asm,
            limits_say,
            outcome,
        });
    }
    Ok(checks)
}

fn cell(c: &Check) -> String {
    let verdict = match &c.outcome {
        Outcome::Ran => "runs, verified".to_string(),
        Outcome::Wrong { index } => format!("RUNS BUT WRONG from pixel {index}"),
        Outcome::Rejected { message } => format!("rejected: {message}"),
        Outcome::Failed { message } => format!("FAILED: {message}"),
    };
    match (&c.limits_say, &c.outcome) {
        // The interesting disagreement: a limit says no, and the API ran it anyway.
        (Some(l), Outcome::Ran) => format!("{verdict} (although {l})"),
        _ => verdict,
    }
}

/// One row per assumption, one column per API.
pub fn render(checks: &[Check], apis: &[(Api, String)], md: bool) -> String {
    let mut b = Builder::default();
    let mut head = vec!["assumption".to_string(), "who guarantees it".to_string()];
    head.extend(apis.iter().map(|(api, name)| format!("{api} ({name})")));
    b.push_record(head);
    for asm in ASSUMPTIONS {
        let mut row = vec![
            format!(
                "{} [{} x grid {}]",
                asm.claim, asm.launch.block, asm.launch.grid
            ),
            asm.guarantee.to_string(),
        ];
        for (api, _) in apis {
            let c = checks
                .iter()
                .find(|c| c.api == *api && c.assumption.claim == asm.claim);
            row.push(c.map(cell).unwrap_or_else(|| "—".into()));
        }
        b.push_record(row);
    }
    let mut s = table(b, md);
    s.push_str(
        "\n\nEach launch was handed to the API as is; a launch that ran was verified pixel by pixel. \
         Vulkan launches beyond a device limit are refused by blocksweep before the driver sees them \
         (dispatching them is undefined behaviour), naming the limit.\n",
    );
    s
}
