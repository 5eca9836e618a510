//! blocksweep's core: everything that is the same for CUDA, Vulkan and OpenCL, and the
//! measurement library under the CLI.
//!
//! Each API crate implements [`Provider`] (its static facts, probe, open) and [`Backend`] (device
//! identity and limits, upload, poison, a back-to-back timed batch, read-back). The measurement
//! protocol, verification, launch-limit rules, grid sizing, orchestration across APIs
//! ([`session`]) and every result as data ([`report`]) live here, once, so that every API is
//! measured and checked by the same code (the BabelStream lesson). Drawing the results (tables,
//! markdown, CSV, JSON) is blocksweep-render's. docs/architecture.md draws the layers.

#![warn(clippy::undocumented_unsafe_blocks)]

pub mod answer;
pub mod api;
pub mod backend;
pub mod blocks;
pub mod builtin;
pub mod claim;
pub mod clocks;
pub mod flush;
pub mod frame;
pub mod grid;
pub mod guarantee;
pub mod hostmem;
pub mod lab;
pub mod language;
pub mod launch_cost;
pub mod limits;
pub mod measure;
pub mod options;
pub mod parallel;
pub mod physical;
pub mod program;
pub mod provider;
pub mod report;
pub mod session;
pub mod spec;
pub mod stance;
pub mod stderr;

pub mod subgroup;
pub mod subgroup_probe;
pub mod sweep;
/// Host test doubles (a backend that runs the kernels on the CPU, one that replays scripted
/// times, three made-up APIs) for the core's own tests and, through the `test-support`
/// feature, for the conformance kit's tests of itself. Not part of the library's API.
#[cfg(any(test, feature = "test-support"))]
#[doc(hidden)]
pub mod testing;
pub mod trace;
pub mod tune;
pub mod uuid;
pub mod validate;
pub mod verify;
pub mod words;
pub mod worker;
pub mod workload;

pub use api::{Api, ApiInfo, Conduct, Vocabulary};
pub use backend::{
    Backend, BackendError, BackendResult, BatchTimes, DeviceIdentity, DeviceKind, ErrorKind, Fill,
    GridSize, KernelFacts, KernelVariant, Launch, OccupancySuggestion, Residency, Stamps,
    TimerInfo, Work,
};
pub use blocks::{BlockListError, BlockSize};
pub use flush::{Caches, Flush};
pub use frame::{Frame, BYTES_PER_PIXEL, WEIGHTS};
pub use grid::GridPolicy;
pub use guarantee::{Amount, Guarantee};
pub use limits::{Concept, Limits, Named};
pub use measure::{Discipline, Protocol, Reps};
pub use options::{ApiOption, OpenOptions, OptionKind};
pub use program::{Language, ProgramArg, ProgramSource, ScalarType};
pub use provider::{ApiChoice, ApiProvider, Provider, Registry, Targets};
pub use spec::{KernelSpec, SpecError};
pub use sweep::{SweepConfig, SweepError, SweepResult, SweepRow};
