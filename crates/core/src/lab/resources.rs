//! Resources in `validate`: launches within every thread limit that ask a block for more shared
//! memory or more registers than it may have, the fourth launch limit ("too many resources
//! requested for launch").
//!
//! Two kernels carry the probes. The shared-memory kernel takes its shared (local) memory size
//! at launch (CUDA: cuLaunchKernel's sharedMemBytes; OpenCL: a `__local` argument of that size;
//! Vulkan: a specialization constant sizing a `shared` array, one pipeline per size), fills all
//! of it and still computes grayscale. The register-heavy kernel keeps about a hundred values
//! live per thread, so that at the largest block the register file cannot hold them. Each API
//! answers in its own way: CUDA refuses the launch, OpenCL refuses it above the kernel's own
//! work-group limit or its local memory, and Vulkan, which has no error for either, makes
//! blocksweep refuse a shared size above `maxComputeSharedMemorySize` before the driver (that
//! dispatch is undefined behaviour) and must itself run any workgroup up to
//! `maxComputeWorkGroupInvocations`, spilling registers if it has to.

use serde::{Deserialize, Serialize};

use crate::api::{named_in_words, Api};
use crate::backend::{KernelFacts, Launch};
use crate::blocks::BlockSize;
use crate::claim::{Expect, LaunchOutcome};
use crate::limits::Limits;

use crate::guarantee::{bytes_in_words, Amount, Need};
use crate::limits::Concept;
use crate::stance::{each_api, who_guarantees};

/// Threads per block of the shared-memory probes: 256, or the device's maximum if lower.
pub const SHARED_PROBE_THREADS: u32 = 256;

/// Blocks per probe launch: small, and the grid-stride loop covers the frame.
pub const PROBE_GRID: u32 = 64;

/// How much shared memory a probe asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SharedSize {
    /// This many bytes on every device.
    Bytes(u64),
    /// Exactly the device's per-block limit.
    DeviceLimit,
    /// The device's per-block limit plus this many bytes.
    AboveDeviceLimit(u64),
}

/// Which block the register-heavy probe launches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BlockPick {
    /// The compiled kernel's own limit (CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
    /// CL_KERNEL_WORK_GROUP_SIZE; Vulkan has none, so the device's).
    KernelLimit,
    /// The device's limit on threads per block.
    DeviceLimit,
}

/// Which resource a probe asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Probe {
    /// The shared-memory kernel with this much shared memory per block.
    Shared(SharedSize),
    /// The register-heavy kernel at this block.
    Registers(BlockPick),
}

/// The kernel a resource probe runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProbeKernel {
    /// Shared memory of a size given at launch (CUDA `grayscale_shared`).
    Shared,
    /// About a hundred registers per thread (CUDA `grayscale_registers`).
    Registers,
}

impl Probe {
    pub fn kernel(self) -> ProbeKernel {
        match self {
            Probe::Shared(_) => ProbeKernel::Shared,
            Probe::Registers(_) => ProbeKernel::Registers,
        }
    }
}

/// A resource assumption, as `validate` states it; who guarantees it is made from each API's
/// figures and words ([`ResourceCheck::guarantee`]).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ResourceCheck {
    pub claim: &'static str,
    /// What the claim says the API does (`None`: the row explores, it claims nothing).
    pub expects: Option<Expect>,
    pub probe: Probe,
}

impl ResourceCheck {
    /// Who guarantees it, over every API of this process.
    pub fn guarantee(&self) -> String {
        let apis = Api::known();
        let each = |say: &dyn Fn(Api) -> String| each_api(&apis, say);
        match self.probe {
            Probe::Shared(SharedSize::Bytes(bytes)) => {
                let need = Need::new(Concept::SharedMemPerBlock, Amount::Bytes(bytes));
                who_guarantees(&apis, &[need])
            }
            Probe::Shared(SharedSize::DeviceLimit) => format!(
                "each device's own figure: {}",
                each(&|api| match api.guarantee(Concept::SharedMemPerBlock) {
                    Some(g) => format!("{api} {}", g.name),
                    None => format!("{api} (not stated)"),
                })
            ),
            Probe::Shared(SharedSize::AboveDeviceLimit(_)) => {
                let (undefined, refuse): (Vec<Api>, Vec<Api>) = apis
                    .iter()
                    .partition(|api| api.conduct().undefined_beyond_limits);
                let mut said = vec![];
                if !refuse.is_empty() {
                    said.push(format!(
                        "{} refuse the launch with an error",
                        named_in_words(&refuse)
                    ));
                }
                if !undefined.is_empty() {
                    said.push(format!(
                        "in {} it is invalid usage (undefined behaviour), refused by blocksweep \
                         before the driver",
                        named_in_words(&undefined)
                    ));
                }
                format!("beyond the limit the device states: {}", said.join("; "))
            }
            Probe::Registers(BlockPick::KernelLimit) => format!(
                "the compiled kernel's own limit: {}",
                each(&|api| match api.conduct().kernel_block_query {
                    Some(q) => format!("{api} {q}"),
                    None => format!("{api} has no such query (the device's limit instead)"),
                })
            ),
            Probe::Registers(BlockPick::DeviceLimit) => format!(
                "within the thread limit, not the register file: {}",
                each(&|api| format!("{api}: {}", api.conduct().too_many_registers))
            ),
        }
    }
}

/// The resource checks: shared memory at each API's minimum and at the device's own limit,
/// and a register-heavy kernel at the kernel's and the device's block limits.
pub const RESOURCE_CHECKS: [ResourceCheck; 7] = [
    ResourceCheck {
        claim: "16 KiB of shared memory per block run",
        expects: Some(Expect::Runs),
        probe: Probe::Shared(SharedSize::Bytes(16 << 10)),
    },
    ResourceCheck {
        claim: "32 KiB of shared memory per block run",
        expects: Some(Expect::Runs),
        probe: Probe::Shared(SharedSize::Bytes(32 << 10)),
    },
    ResourceCheck {
        claim: "48 KiB of shared memory per block run",
        expects: Some(Expect::Runs),
        probe: Probe::Shared(SharedSize::Bytes(48 << 10)),
    },
    ResourceCheck {
        claim: "the device's own shared-memory limit per block runs",
        expects: Some(Expect::Runs),
        probe: Probe::Shared(SharedSize::DeviceLimit),
    },
    ResourceCheck {
        claim: "1 KiB above that limit is refused",
        expects: Some(Expect::Refused),
        probe: Probe::Shared(SharedSize::AboveDeviceLimit(1 << 10)),
    },
    ResourceCheck {
        claim: "the register-heavy kernel runs at its own block limit",
        expects: Some(Expect::Runs),
        probe: Probe::Registers(BlockPick::KernelLimit),
    },
    ResourceCheck {
        claim: "the register-heavy kernel at the device's largest block",
        expects: None,
        probe: Probe::Registers(BlockPick::DeviceLimit),
    },
];

/// One probe made concrete for one device: the launch, and what the queried limits predict.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResourceLaunch {
    pub kernel: ProbeKernel,
    pub block: BlockSize,
    pub grid: u32,
    /// Shared (local) memory per block the launch asks for; 0 for the register probe.
    pub shared_bytes: u64,
    /// What the device's and kernel's limits say about it, naming them; `None` when it is
    /// within every limit known.
    pub limits_say: Option<String>,
}

/// The launch `probe` makes on a device with `limits`, with `kernel` the facts of the probe's
/// own kernel there. An error when the device does not report what the probe needs (no
/// shared-memory limit to stand on).
pub fn resolve(
    probe: Probe,
    limits: &Limits,
    kernel: &KernelFacts,
) -> Result<ResourceLaunch, String> {
    match probe {
        Probe::Shared(size) => resolve_shared(size, limits),
        Probe::Registers(pick) => resolve_registers(pick, limits, kernel),
    }
}

/// The shared-memory probe: [`SHARED_PROBE_THREADS`] (or the device's fewer) asking for `size`.
fn resolve_shared(size: SharedSize, limits: &Limits) -> Result<ResourceLaunch, String> {
    let threads = Limits::value(&limits.max_threads_per_block)
        .map_or(SHARED_PROBE_THREADS as u64, |m| {
            m.min(SHARED_PROBE_THREADS as u64)
        })
        .max(1) as u32;
    let limit = limits.shared_mem_per_block.as_ref();
    let bytes = match size {
        SharedSize::Bytes(b) => b,
        SharedSize::DeviceLimit => {
            limit
                .ok_or("the device reports no shared-memory limit per block")?
                .value
        }
        SharedSize::AboveDeviceLimit(extra) => limit
            .ok_or("the device reports no shared-memory limit per block")?
            .value
            .saturating_add(extra),
    };
    let limits_say = limit.filter(|l| bytes > l.value).map(|l| {
        format!(
            "{} > {} = {}",
            bytes_in_words(bytes),
            l.name,
            bytes_in_words(l.value)
        )
    });
    Ok(ResourceLaunch {
        kernel: ProbeKernel::Shared,
        block: BlockSize::linear(threads),
        grid: PROBE_GRID,
        shared_bytes: bytes,
        limits_say,
    })
}

/// The register-heavy probe at the block `pick` names, with what the kernel's block limit and
/// the register file say about it.
fn resolve_registers(
    pick: BlockPick,
    limits: &Limits,
    kernel: &KernelFacts,
) -> Result<ResourceLaunch, String> {
    let device = Limits::value(&limits.max_threads_per_block)
        .ok_or("the device reports no limit on threads per block")?;
    let threads = match pick {
        BlockPick::DeviceLimit => device,
        BlockPick::KernelLimit => kernel
            .max_block
            .as_ref()
            .map_or(device, |k| k.value.min(device)),
    };
    let threads = u32::try_from(threads.max(1)).unwrap_or(u32::MAX);
    let mut say = Vec::new();
    if let Some(k) = kernel
        .max_block
        .as_ref()
        .filter(|k| threads as u64 > k.value)
    {
        say.push(format!("{threads} threads > {} = {}", k.name, k.value));
    }
    if let (Some(r), Some(file)) = (
        kernel.registers.as_ref(),
        limits.registers_per_block.as_ref(),
    ) {
        let need = r.value.saturating_mul(threads as u64);
        if need > file.value {
            say.push(format!(
                "{} registers x {threads} threads = {need} > {} = {}",
                r.value, file.name, file.value
            ));
        }
    }
    Ok(ResourceLaunch {
        kernel: ProbeKernel::Registers,
        block: BlockSize::linear(threads),
        grid: PROBE_GRID,
        shared_bytes: 0,
        limits_say: (!say.is_empty()).then(|| say.join("; ")),
    })
}

/// A resource check as one device made it: the claim, who promises it, and the launch.
/// Serialised like `validate`'s other assumptions (claim, guarantee, launch), so that its JSON
/// rows read the same.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ResourceAssumption {
    pub claim: &'static str,
    pub expects: Option<Expect>,
    pub guarantee: String,
    /// `None` when the probe could not be formed on this device.
    pub launch: Option<Launch>,
    pub kernel: ProbeKernel,
    pub probe: Probe,
}

/// What one API did with one resource check.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ResourceResult {
    pub api: Api,
    pub assumption: ResourceAssumption,
    /// What the queried limits say about the launch (None: within every limit known).
    pub limits_say: Option<String>,
    /// Registers per thread of the probe's kernel on this device, where the API tells.
    pub registers: Option<u64>,
    pub outcome: LaunchOutcome,
}

impl ResourceResult {
    /// Whether the outcome bears the claim out (`None`: no claim, or no verdict).
    pub fn holds(&self) -> Option<bool> {
        self.assumption.expects?.holds(&self.outcome)
    }

    pub fn new(
        api: Api,
        check: ResourceCheck,
        launch: Option<ResourceLaunch>,
        registers: Option<u64>,
        outcome: LaunchOutcome,
    ) -> ResourceResult {
        let limits_say = launch.as_ref().and_then(|l| l.limits_say.clone());
        ResourceResult {
            api,
            assumption: ResourceAssumption {
                claim: check.claim,
                expects: check.expects,
                guarantee: check.guarantee(),
                launch: launch.map(|l| {
                    Launch::linear(l.block, l.grid)
                        .with_shared(u32::try_from(l.shared_bytes).unwrap_or(u32::MAX))
                }),
                kernel: check.probe.kernel(),
                probe: check.probe,
            },
            limits_say,
            registers,
            outcome,
        }
    }

    /// "block 256 x grid 64 with 49 KiB shared", for the table.
    pub fn launch_text(&self) -> String {
        match &self.assumption.launch {
            None => "—".into(),
            Some(l) if l.shared_bytes > 0 => format!(
                "{} x {}, {}",
                l.block,
                l.grid,
                bytes_in_words(l.shared_bytes as u64)
            ),
            Some(l) => format!("{} x {}", l.block, l.grid),
        }
    }
}

#[cfg(test)]
#[path = "resources_tests.rs"]
mod tests;
