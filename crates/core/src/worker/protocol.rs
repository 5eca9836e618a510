//! What the parent asks a worker and what it answers: one JSON value per line each way.
//! Buffer contents never travel here: they are in the shared region ([`super::shared`]).

use serde::{Deserialize, Serialize};

use crate::backend::{
    BatchTimes, DeviceIdentity, ErrorKind, Fill, KernelFacts, KernelVariant, Launch,
    OccupancySuggestion, Residency, Span, Stamps, TimerInfo, Work,
};
use crate::blocks::BlockSize;
use crate::limits::Limits;
use crate::options::OpenOptions;
use crate::program::{ProgramArg, ProgramSource};

/// The [`crate::Backend`] calls that cross to the worker as they are: one request whose fields
/// are the call's arguments, owned, and one reply. This list is the one place such a call is
/// written: `forwarded!(m)` hands it to macro `m`, which writes one side of the protocol (the
/// request enum below, the remote's methods, the worker's dispatch), so a call here is on
/// every side or none. Each entry: the method and its parameters; its return type; the
/// request variant, each field made from the parameters; the worker's call, on backend `b`,
/// of the fields; the reply variant; how long the parent waits (a method of `Waits`).
macro_rules! forwarded {
    ($then:ident) => {
        $then! {
            residency(block: BlockSize) -> Option<Residency>
                = Residency { block: BlockSize = block }
                => |b| b.residency(block), Residency, slow();
            occupancy_suggestion() -> Option<OccupancySuggestion>
                = Suggestion {}
                => |b| b.occupancy_suggestion(), Suggestion, slow();
            run_batch(work: Work, count: u32, stamps: Stamps) -> BatchTimes
                = RunBatch { work: Work = work, count: u32 = count, stamps: Stamps = stamps }
                => |b| b.run_batch(work, count, stamps), Times, dispatch();
            run_batch_flushed(work: Work, count: u32, flush_bytes: u64) -> BatchTimes
                = RunBatchFlushed { work: Work = work, count: u32 = count, flush_bytes: u64 = flush_bytes }
                => |b| b.run_batch_flushed(work, count, flush_bytes), Times,
                transfer(flush_bytes.saturating_mul(count as u64));
            set_scalar(arg: usize, bytes: &[u8]) -> ()
                = SetScalar { arg: usize = arg, bytes: Vec<u8> = bytes.to_vec() }
                => |b| b.set_scalar(arg, &bytes), Set, slow();
            fill_buffer(arg: usize, fills: &[Fill]) -> bool
                = FillBuffer { arg: usize = arg, fills: Vec<Fill> = fills.to_vec() }
                => |b| b.fill_buffer(arg, &fills), Filled,
                transfer(fills.iter().map(|f| f.len).sum());
            release() -> ()
                = Release {}
                => |b| b.release(), Released, slow();
        }
    };
}
pub(crate) use forwarded;

/// Writes [`Request`]: the forwarded calls' variants and those the worker handles itself.
macro_rules! request_enum {
    ($($method:ident($($param:ident: $pty:ty),*) -> $ret:ty
        = $variant:ident { $($field:ident: $fty:ty = $make:expr),* }
        => |$b:ident| $call:expr, $reply:ident, $wait:ident($($warg:expr),*);)*) => {
        #[derive(Debug, Serialize, Deserialize)]
        pub(crate) enum Request {
            /// The first request: open this device with these options.
            Open {
                device: DeviceIdentity,
                options: OpenOptions,
            },
            /// Map the shared region at `path`, `len` bytes (replacing any earlier one).
            Map { path: String, len: u64 },
            $($variant { $($field: $fty),* },)*
            /// [`crate::Backend::prepare`]; answered when done.
            Prepare { blocks: Vec<BlockSize> },
            LoadProgram {
                source: ProgramSource,
                args: Vec<ProgramArg>,
            },
            /// The shared region's first `len` bytes into argument `arg`'s buffer.
            WriteBuffer { arg: usize, len: u64 },
            /// The kernel's part of argument `arg`'s buffer into the shared region's start,
            /// through the backend's staging where it has one
            /// ([`crate::Backend::read_buffer_staged`]).
            ReadStaged { arg: usize },
            /// `len` bytes of argument `arg`'s buffer from `offset` into the shared region's
            /// start.
            ReadBuffer { arg: usize, offset: u64, len: u64 },
            /// [`crate::Backend::run_checked`]: the writes' bytes in the shared region where
            /// [`RegionReset::Write`] says, the reads into it one after another from its start.
            RunChecked {
                resets: Vec<RegionReset>,
                launch: Option<Launch>,
                reads: Vec<Span>,
            },
            Diagnostics,
            Close,
        }

        /// The names of the [`crate::Backend`] methods forwarded as they are.
        #[cfg(test)]
        pub(crate) const FORWARDED: &[&str] = &[$(stringify!($method)),*];
    };
}
forwarded!(request_enum);

/// A [`crate::backend::Reset`] on the wire: a write's bytes are in the shared region.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) enum RegionReset {
    Fill {
        arg: usize,
        fills: Vec<Fill>,
    },
    /// The region's `len` bytes from `at` into the whole allocation of argument `arg`.
    Write {
        arg: usize,
        at: u64,
        len: u64,
    },
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
    /// A scalar set ([`crate::Backend::set_scalar`]).
    Set(()),
    /// The program's memory freed ([`crate::Backend::release`]).
    Released(()),
    /// The kernel facts after a request that changes the current kernel.
    Facts(KernelFacts),
    Times(BatchTimes),
    /// Whether a fill was done on the device ([`crate::Backend::fill_buffer`]).
    Filled(bool),
    Diagnostics(Vec<String>),
    /// A [`Request::RunChecked`] done: `None` with every read in the region, else the
    /// dispatch's own error (nothing read).
    Checked(Option<(ErrorKind, String)>),
    Error {
        kind: ErrorKind,
        message: String,
    },
}
