//! One launch's shape (grid and block), and what the API says about residency.

use serde::{Deserialize, Serialize};
use std::fmt;

use crate::blocks::BlockSize;

/// The number of blocks in a launch, in x and y (z is always 1: no kernel here needs it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct GridSize {
    pub x: u32,
    pub y: u32,
}

impl GridSize {
    pub const fn linear(x: u32) -> GridSize {
        GridSize { x, y: 1 }
    }

    /// Blocks in the whole grid.
    pub fn blocks(self) -> u64 {
        self.x as u64 * self.y as u64
    }
}

impl fmt::Display for GridSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.y {
            1 => write!(f, "{}", self.x),
            y => write!(f, "{}x{y}", self.x),
        }
    }
}

/// One launch: a (possibly 3-D) block, a grid of blocks, and the dynamic shared memory per
/// block the shared-memory kernel asks for.
///
/// The 1-D kernels index with x only; a block with y or z above 1 still covers every pixel
/// (its extra threads repeat x's work), so multi-dimensional blocks are legal launches used to
/// test limits there. The 2-D kernel ([`crate::KernelVariant::GridStride2D`]) indexes with x and y.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Launch {
    pub block: BlockSize,
    pub grid: GridSize,
    /// Bytes of shared (local) memory per block for [`crate::KernelVariant::SharedProbe`]: CUDA's
    /// `sharedMemBytes`, an OpenCL `__local` argument of that size, the size of the Vulkan
    /// shader's `shared` array (a specialization constant). Every other kernel ignores it.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub shared_bytes: u32,
}

fn is_zero(v: &u32) -> bool {
    *v == 0
}

impl Launch {
    pub const fn linear(block: BlockSize, grid: u32) -> Launch {
        Launch {
            block,
            grid: GridSize::linear(grid),
            shared_bytes: 0,
        }
    }

    /// A launch with a 2-D grid.
    pub const fn new(block: BlockSize, grid: GridSize) -> Launch {
        Launch {
            block,
            grid,
            shared_bytes: 0,
        }
    }

    /// The same launch asking for `bytes` of shared memory per block.
    pub const fn with_shared(self, bytes: u32) -> Launch {
        Launch {
            shared_bytes: bytes,
            ..self
        }
    }

    /// Threads in the whole launch, or `None` if the product does not fit 64 bits.
    pub fn threads(&self) -> Option<u64> {
        self.block.threads().checked_mul(self.grid.blocks())
    }
}

impl fmt::Display for Launch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "block {} x grid {}", self.block, self.grid)?;
        if self.shared_bytes > 0 {
            write!(f, " with {} bytes of shared memory", self.shared_bytes)?;
        }
        Ok(())
    }
}

/// How many blocks of a given size can be resident on one multiprocessor, and who said so.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Residency {
    pub blocks_per_mp: u32,
    /// e.g. "cuOccupancyMaxActiveBlocksPerMultiprocessor" or "model: sm_90 limits + 16 registers".
    pub source: String,
}

/// What an occupancy API suggests (CUDA's cuOccupancyMaxPotentialBlockSize).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OccupancySuggestion {
    pub block: u32,
    pub min_grid: u32,
    pub source: String,
}
