//! The lab: the three questions a block-size sweep leaves open, asked of every API on
//! the same device (docs/lab.md).
//!
//! - [`shapes`]: for one thread count, every power-of-two block shape (256x1 ... 1x256) of the
//!   2-D kernel, with what each shape does to a warp's memory access and which per-dimension
//!   limits and specification guarantees it passes;
//! - [`waves`]: for one block, grids from a fraction of a wave to several waves, so the tail
//!   effect (a grid of 1.1 waves spends its last tenth running on almost nothing) shows;
//! - [`resources`]: launches within the thread limits that ask for more shared memory or more
//!   registers than a block may have, and what each API answers.
//!
//! Everything here is planning and report data, the same for every API; the backends only
//! run the launches.

pub mod report;
pub mod resources;
pub mod row;
pub mod run;
pub mod shapes;
pub mod task;
pub mod waves;

use crate::api::Api;
use crate::limits::Concept;

/// What `api`'s specification promises for each extent of a block, where it promises them.
pub fn guaranteed_block_dims(api: Api) -> Option<[u64; 3]> {
    api.guarantee(Concept::MaxBlockDims)?.amount.dims()
}

/// What `api`'s specification promises for threads per block, where it promises a number.
pub fn guaranteed_threads(api: Api) -> Option<u64> {
    api.guarantee(Concept::MaxThreadsPerBlock)?.amount.count()
}
