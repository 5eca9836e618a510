//! What the parent asks a worker and what it answers: one JSON value per line each way.
//! Buffer contents never travel here: they are in the shared region ([`super::shared`]).

use serde::{Deserialize, Serialize};

use crate::backend::{
    BatchTimes, DeviceIdentity, ErrorKind, Fill, KernelFacts, KernelVariant, OccupancySuggestion,
    Residency, Stamps, TimerInfo, Work,
};
use crate::blocks::BlockSize;
use crate::limits::Limits;
use crate::options::OpenOptions;
use crate::program::{ProgramArg, ProgramSource};

#[derive(Debug, Serialize, Deserialize)]
pub(crate) enum Request {
    /// The first request: open this device with these options.
    Open {
        device: DeviceIdentity,
        options: OpenOptions,
    },
    /// Map the shared region at `path`, `len` bytes (replacing any earlier one).
    Map {
        path: String,
        len: u64,
    },
    Residency {
        block: BlockSize,
    },
    Suggestion,
    Prepare {
        blocks: Vec<BlockSize>,
    },
    RunBatch {
        work: Work,
        count: u32,
        stamps: Stamps,
    },
    LoadProgram {
        source: ProgramSource,
        args: Vec<ProgramArg>,
    },
    /// The shared region's first `len` bytes into argument `arg`'s buffer.
    WriteBuffer {
        arg: usize,
        len: u64,
    },
    /// Byte ranges of argument `arg`'s buffer set on the device ([`crate::Backend::fill_buffer`]).
    FillBuffer {
        arg: usize,
        fills: Vec<Fill>,
    },
    /// Scalar argument `arg` set to `bytes` ([`crate::Backend::set_scalar`]).
    SetScalar {
        arg: usize,
        bytes: Vec<u8>,
    },
    /// The kernel's part of argument `arg`'s buffer into the shared region's start, through
    /// the backend's staging where it has one ([`crate::Backend::read_buffer_staged`]).
    ReadStaged {
        arg: usize,
    },
    /// `len` bytes of argument `arg`'s buffer from `offset` into the shared region's start.
    ReadBuffer {
        arg: usize,
        offset: u64,
        len: u64,
    },
    Diagnostics,
    Close,
}

/// What the worker knows of its backend once it is open.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Opened {
    pub identity: DeviceIdentity,
    pub limits: Limits,
    pub facts: KernelFacts,
    pub timer: TimerInfo,
    pub copy_method: String,
    /// The backend's source of each built-in kernel it has ([`crate::Backend::builtin`]).
    pub builtins: Vec<(KernelVariant, ProgramSource)>,
}

#[derive(Debug, Serialize, Deserialize)]
pub(crate) enum Reply {
    Opened(Box<Opened>),
    Done,
    Residency(Option<Residency>),
    Suggestion(Option<OccupancySuggestion>),
    /// The kernel facts after a request that changes the current kernel.
    Facts(KernelFacts),
    Times(BatchTimes),
    /// Whether a fill was done on the device ([`crate::Backend::fill_buffer`]).
    Filled(bool),
    Diagnostics(Vec<String>),
    Error {
        kind: ErrorKind,
        message: String,
    },
}
