//! The one small interface every GPU API implements.
//!
//! A backend is one API's handle to one device, which runs programs: a compiled kernel, its
//! buffers and scalars, a launch. blocksweep's own grayscale kernels are programs too, whose
//! sources each backend supplies ([`crate::builtin`]). Everything else (which launches to try,
//! timing statistics, verification, reports) is the core's job.

use serde::{Deserialize, Serialize};

pub use crate::api::Api;
use crate::blocks::BlockSize;
use crate::limits::Limits;
pub use crate::program::{ProgramArg, ProgramSource};
pub use crate::uuid::{format_uuid, parse_uuid, uuid_text};

pub(crate) mod checked;
mod error;
mod identity;
mod launch;

pub use checked::{CheckedRun, Dispatch, Reset, Span};
pub use error::{BackendError, BackendResult, ErrorKind};
pub use identity::{pci_bus_id, vendor_name, DeviceIdentity, DeviceKind, KernelFacts, TimerInfo};
pub use launch::{GridSize, Launch, OccupancySuggestion, Residency};

/// What one timed batch runs, many times over.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Work {
    /// The current program with this launch, on its buffers.
    Kernel(Launch),
    /// A device-to-device copy of `bytes` bytes between two buffers the backend allocates
    /// (and initialises) on first use and keeps while the size stays the same. Bytes read plus
    /// bytes written count as traffic.
    Copy { bytes: u64 },
}

/// One byte range of a buffer set to one value ([`Backend::fill_buffer`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Fill {
    pub offset: u64,
    pub len: u64,
    pub byte: u8,
}

/// Which device timestamps a batch takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Stamps {
    /// None: warm-ups.
    None,
    /// One interval from before the first dispatch to after the last.
    Batch,
    /// One interval around each dispatch (still enqueued back to back).
    Each,
}

/// Device-clock intervals of one batch, in milliseconds.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct BatchTimes {
    /// With [`Stamps::Batch`]: the whole batch.
    pub batch_ms: Option<f64>,
    /// With [`Stamps::Each`]: one per dispatch, in order.
    pub each_ms: Vec<f64>,
}

/// One API's handle to one device, ready to run programs.
///
/// A backend gives device primitives only; the measurement protocol (warm-ups, batches,
/// statistics, ceilings), verification and every launch-limit rule live in the core, once.
///
/// Contract, which the core relies on:
/// - [`run_batch`](Backend::run_batch) enqueues `count` runs of the work back to back, ordered
///   on the device (CUDA stream order, a Vulkan compute-to-compute barrier in one command
///   buffer, an in-order OpenCL queue) with no host wait between them, waits once at the end,
///   and returns the device-clock intervals `stamps` asks for. It must refuse (with
///   [`ErrorKind::LaunchRejected`]) rather than hand the driver a launch that would be
///   undefined behaviour in its API; anything else it passes to the API, whose own refusal is
///   the answer.
/// - buffer copies and fills wait for themselves; a program's buffers live until the next
///   `load_program`.
/// - with no program loaded, [`kernel_facts`](Backend::kernel_facts) is empty, residency is
///   `None` and a kernel batch is an error.
pub trait Backend: Send {
    fn identity(&self) -> &DeviceIdentity;
    fn limits(&self) -> &Limits;
    /// Facts about the current program ([`Backend::load_program`]).
    fn kernel_facts(&self) -> &KernelFacts;
    fn timer(&self) -> TimerInfo;

    fn api(&self) -> Api {
        self.identity().api
    }

    /// Resident blocks per multiprocessor for this block size, from the best source this
    /// API offers; `None` where it cannot be known (the core then falls back to its model).
    fn residency(&mut self, block: BlockSize) -> BackendResult<Option<Residency>>;

    /// What the API's occupancy calculator suggests, where it has one.
    fn occupancy_suggestion(&mut self) -> BackendResult<Option<OccupancySuggestion>> {
        Ok(None)
    }

    /// Gets ready to launch the current kernel with each of `blocks` (a sweep's rows, known
    /// before the first): an API that compiles per launch shape (Vulkan: a pipeline per
    /// workgroup size) can do it now, in parallel, instead of row by row. Never required:
    /// `run_batch` still builds what is missing.
    fn prepare(&mut self, _blocks: &[BlockSize]) {}

    fn run_batch(&mut self, work: Work, count: u32, stamps: Stamps) -> BackendResult<BatchTimes>;

    /// [`run_batch`](Backend::run_batch) with [`Stamps::Each`], each run preceded by a write of
    /// `flush_bytes` bytes to a scratch buffer the backend allocates on first use and keeps
    /// while the size stays the same (`--cold`: the core sizes it from the last-level cache, in
    /// whole 4 KiB pages).
    /// The write is ordered on the device after the run before and before this one, and lies
    /// outside this run's interval, which covers the run alone. Unavailable by default.
    fn run_batch_flushed(
        &mut self,
        _work: Work,
        _count: u32,
        _flush_bytes: u64,
    ) -> BackendResult<BatchTimes> {
        Err(BackendError::new(
            self.api(),
            ErrorKind::Unavailable,
            "this backend cannot flush its cache between dispatches (--cold)",
        ))
    }

    /// Frees the current program with its buffers (and the copy's and staging memory), keeping
    /// the device open: the APIs of one GPU that cannot all hold a task at once take turns
    /// holding it. The next `load_program` builds again. Nothing to free: nothing done.
    fn release(&mut self) -> BackendResult<()> {
        Ok(())
    }

    /// How [`Work::Copy`] copies, in words (e.g. "cuMemcpyDtoDAsync").
    fn copy_method(&self) -> String;

    /// Messages the driver's own checking raised so far (Vulkan validation layers); a clean
    /// run has none. Empty where the API has no such channel.
    fn diagnostics(&self) -> Vec<String> {
        Vec::new()
    }

    /// This backend's source of the built-in `kernel`, written to the program contract with
    /// the arguments [`crate::builtin`] lists; `None` where it has none.
    fn builtin(&self, _kernel: KernelVariant) -> Option<ProgramSource> {
        None
    }

    /// Sets scalar argument `arg` of the current program to `bytes` (its little-endian value,
    /// of the type `load_program` was given) for the launches after this call.
    fn set_scalar(&mut self, _arg: usize, _bytes: &[u8]) -> BackendResult<()> {
        Err(BackendError::new(
            self.api(),
            ErrorKind::Unavailable,
            "this backend cannot set a scalar after loading",
        ))
    }

    /// The kernel's part of buffer `arg` (its guard bands left out), copied back into host
    /// memory this backend owns (page-locked or mapped, so the copy runs at the bus's speed)
    /// and lent until the next call on the backend; `None` where it has no such memory (the
    /// core then calls [`Backend::read_buffer`] with a buffer of its own). Staged or not, the
    /// bytes are the same.
    fn read_buffer_staged(&mut self, _arg: usize) -> BackendResult<Option<&[u8]>> {
        Ok(None)
    }

    /// Builds a program (a user's kernel, or a built-in from [`Backend::builtin`]) from `source`
    /// for this device, frees the previous one, allocates one device buffer per
    /// [`ProgramArg::Buffer`] (contents undefined until [`Backend::write_buffer`]) and binds
    /// every argument in order ([`crate::program`] states the contract). The program becomes
    /// the current kernel: [`Work::Kernel`] dispatches run it and [`Backend::kernel_facts`] and
    /// [`Backend::residency`] describe it, until the next `load_program`.
    ///
    /// A compile error is [`ErrorKind::Build`] with the compiler's own log in the message; an
    /// argument list that the compiled kernel contradicts (OpenCL `CL_KERNEL_NUM_ARGS`, the
    /// SPIR-V's bindings) is [`ErrorKind::Build`] too, saying both counts.
    fn load_program(&mut self, _source: &ProgramSource, _args: &[ProgramArg]) -> BackendResult<()> {
        Err(BackendError::new(
            self.api(),
            ErrorKind::Unavailable,
            "this backend does not run user kernels",
        ))
    }

    /// Copies `bytes` into the whole buffer of argument `arg` (an index into the arguments
    /// given to `load_program`), guard bands included, and waits for it.
    fn write_buffer(&mut self, _arg: usize, _bytes: &[u8]) -> BackendResult<()> {
        Err(BackendError::new(
            self.api(),
            ErrorKind::Unavailable,
            "this backend does not run user kernels",
        ))
    }

    /// Sets each of `fills` (byte ranges of the buffer of argument `arg`, from the start of
    /// its allocation, guard bands included) on the device, and waits once. `Ok(false)`, with
    /// nothing changed, where this backend cannot (the default), and the core writes the bytes
    /// with [`Backend::write_buffer`] instead: a checked dispatch poisons every output and
    /// refills its bands before it runs, and a fill spares a row the output's crossing of the
    /// bus.
    fn fill_buffer(&mut self, _arg: usize, _fills: &[Fill]) -> BackendResult<bool> {
        Ok(false)
    }

    /// Copies `out.len()` bytes of the buffer of argument `arg`, from `offset` into its
    /// allocation (guard bands included: the kernel's first element is at the guard), back
    /// into `out`, and waits for it.
    fn read_buffer(&mut self, _arg: usize, _offset: u64, _out: &mut [u8]) -> BackendResult<()> {
        Err(BackendError::new(
            self.api(),
            ErrorKind::Unavailable,
            "this backend does not run user kernels",
        ))
    }

    /// One checked dispatch's device side in one call ([`CheckedRun`]): the resets, the launch
    /// once untimed, then `out[i]` filled with `run.reads[i]` (the caller sizes each). `Ok(Err)`
    /// is the dispatch's own failure, after which nothing was read. By default the calls it is
    /// made of; a backend in a worker process sends it as one request.
    fn run_checked(&mut self, run: &CheckedRun, out: &mut [Vec<u8>]) -> BackendResult<Dispatch> {
        checked::run_checked(self, run, out)
    }
}

/// blocksweep's built-in kernels, each a program whose source every backend supplies
/// ([`Backend::builtin`]; their arguments: [`crate::builtin`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum KernelVariant {
    /// The grayscale kernel: a grid-stride loop, correct for any launch.
    #[default]
    GridStride,
    /// One pixel per thread with an `i < n` guard: correct only when grid * block >= n. Tests
    /// launch it one block short and watch verification fail; the lab's grid sweep launches it
    /// with a data-sized grid.
    OnePixelPerThread,
    /// The lab's 2-D kernel: the frame as width x height, a grid-stride loop in x and in y,
    /// correct for any 2-D block and grid (CUDA `grayscale_2d`).
    GridStride2D,
    /// The grid-stride loop with its weights read from shared (local) memory of the launch's
    /// [`Launch::shared_bytes`], all of it written first (CUDA `grayscale_shared`).
    SharedProbe,
    /// The grid-stride loop plus about a hundred live values per thread, so the largest block
    /// overflows the register file (CUDA `grayscale_registers`).
    RegisterHeavy,
}

impl KernelVariant {
    pub const ALL: [KernelVariant; 5] = [
        KernelVariant::GridStride,
        KernelVariant::OnePixelPerThread,
        KernelVariant::GridStride2D,
        KernelVariant::SharedProbe,
        KernelVariant::RegisterHeavy,
    ];

    /// The entry point's name in kernels/grayscale.cu and kernels/grayscale.cl (Vulkan's shaders
    /// are one file each, shaders/<entry>.spv).
    pub fn entry(self) -> &'static str {
        match self {
            KernelVariant::GridStride => "grayscale",
            KernelVariant::OnePixelPerThread => "grayscale_one_per_thread",
            KernelVariant::GridStride2D => "grayscale_2d",
            KernelVariant::SharedProbe => "grayscale_shared",
            KernelVariant::RegisterHeavy => "grayscale_registers",
        }
    }

    /// Whether the kernel loops over the whole frame (any grid covers it).
    pub fn grid_stride(self) -> bool {
        self != KernelVariant::OnePixelPerThread
    }
}
