//! Will it launch there? The targets a kernel may be ported to (each API's guaranteed
//! minimums, Vulkan profiles, WebGPU's limits, CUDA's compute capabilities, real GPUs of other
//! vendors, and files of the user's own), each value with its source, and a launch's needs
//! checked against them. The catalogue is data (catalogue/*.toml, embedded at build time;
//! FORMAT.md says its shape, docs/targets.md what each limit means).

#![warn(clippy::undocumented_unsafe_blocks)]

pub mod catalogue;
pub mod check;
pub mod launches;
mod load;
pub mod model;
pub mod need;
pub mod occupancy;
pub mod report;
pub mod write;

pub use catalogue::{Catalogue, SelectError};
pub use check::{check, Verdict, Word};
pub use load::FileError;
pub use model::{Key, Kind, Source, Stated, Subgroup, Target, Value};
pub use need::Needs;
pub use report::{Kernel, TargetReport};
