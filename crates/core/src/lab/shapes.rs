//! The shape sweep: one thread count, every power-of-two block shape of the 2-D kernel.
//!
//! For 256 threads: 256x1, 128x2, 64x4, 32x8, 16x16, 8x32, 4x64, 2x128, 1x256. Every API runs
//! the same (shape, grid) pairs on the same frame. What changes from row to row is how a warp
//! (subgroup, sub-group) meets memory: the threads of a block are numbered x first, then y, and
//! a warp is 32 consecutive threads in that order, so a block narrower than the warp spreads
//! each warp over several image rows, and each row's piece is narrower than a memory sector.
//!
//! The grid is sized to the data, `(ceil(width / x), ceil(height / y))`, the same for every
//! API. Why not one wave, as in the default sweep: the kernel loops in x and y, so a wave-sized
//! grid is correct too, but it must be split into a 2-D grid somehow, and that split (how many
//! blocks across, how many down) would be a second variable changing with the shape. A
//! data-sized grid gives every shape one pixel per thread, the way image kernels are usually
//! launched, so the shape is the only thing that changes. Each extent is capped at 65535 blocks,
//! which every API allows in every dimension (CUDA's gridDim.y and z, Vulkan's guaranteed
//! maxComputeWorkGroupCount); the grid-stride loops cover what a capped grid leaves.

use serde::{Deserialize, Serialize};

use crate::api::Api;
use crate::backend::{DeviceIdentity, GridSize, KernelFacts};
use crate::blocks::BlockSize;
use crate::frame::FrameInfo;
use crate::limits::Limits;
use crate::measure::Timing;
use crate::sweep::device_limit_violation;

/// The largest grid extent every API accepts in every dimension.
pub const PORTABLE_GRID_EXTENT: u32 = 65535;

/// Bytes one thread reads from each plane per pixel (an f32).
pub const BYTES_PER_THREAD: u64 = 4;

/// The unit in which NVIDIA GPUs move data between L2 and the SMs (and DRAM and L2): a 32-byte
/// sector of a 128-byte cache line (CUDA C++ Best Practices Guide, "Coalesced Access to Global
/// Memory").
pub const SECTOR_BYTES: u64 = 32;

/// The most threads the shape sweep takes: 2^16 (far above any device's block limit, so a
/// device's own refusal can be seen, while the list stays at 17 shapes).
pub const MAX_SHAPE_THREADS: u32 = 1 << 16;

/// Every power-of-two shape `x` by `y` (z = 1) with `x * y = threads`, widest first.
/// `threads` must be a power of two from 1 to [`MAX_SHAPE_THREADS`].
pub fn shapes(threads: u32) -> Result<Vec<BlockSize>, String> {
    if threads == 0 || !threads.is_power_of_two() {
        return Err(format!(
            "--threads {threads}: the shape sweep needs a power of two (32, 64, 128, 256, 512, 1024, ...) \
             so that every x by y split is whole"
        ));
    }
    if threads > MAX_SHAPE_THREADS {
        return Err(format!(
            "--threads {threads}: at most {MAX_SHAPE_THREADS} threads per block (no device allows more than a few thousand)"
        ));
    }
    let k = threads.trailing_zeros();
    Ok((0..=k)
        .map(|j| BlockSize {
            x: threads >> j,
            y: 1 << j,
            z: 1,
        })
        .collect())
}

/// Parses `--threads` for the shape sweep: one power of two.
pub fn parse_threads(text: &str) -> Result<u32, String> {
    let t = text.trim();
    let n: u32 = t.parse().map_err(|_| {
        format!("'{t}' is not a thread count (expected a power of two such as 256)")
    })?;
    shapes(n).map(|_| n)
}

/// The grid of one shape on a `width` x `height` frame: `(ceil(width / x), ceil(height / y))`,
/// each extent capped at [`PORTABLE_GRID_EXTENT`].
pub fn shape_grid(block: BlockSize, width: u32, height: u32) -> GridSize {
    let extent = |pixels: u32, size: u32| {
        (pixels as u64)
            .div_ceil(size.max(1) as u64)
            .clamp(1, PORTABLE_GRID_EXTENT as u64) as u32
    };
    GridSize {
        x: extent(width, block.x),
        y: extent(height, block.y),
    }
}

/// Threads the launch starts, in 64 bits.
pub fn threads_launched(block: BlockSize, grid: GridSize) -> u64 {
    block.threads().saturating_mul(grid.blocks())
}

/// How one warp of a shape meets memory, for one plane (each of the four planes is accessed
/// the same way). Assumes, as NVIDIA's drivers do in every API, that a warp is made of
/// consecutive threads in x-then-y order, and that rows start on a sector boundary (true when
/// the width in bytes is a multiple of 32, as for 3840 or 1920 pixels of f32).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Coalescing {
    /// Lanes in a warp (subgroup) on this device.
    pub warp: u64,
    /// Threads in the first warp of the block: the warp size, or fewer in a block smaller than
    /// one warp.
    pub lanes: u64,
    /// Distinct image rows one warp touches: ceil(warp / x) when x < warp, else 1 (never more
    /// than the block's y).
    pub rows: u64,
    /// Contiguous bytes of one row that the warp reads from one plane: min(x, warp) x 4.
    pub bytes_per_row: u64,
    /// 32-byte sectors one warp-wide load of one plane touches.
    pub sectors: u64,
    /// Bytes the warp uses over bytes in those sectors.
    pub sector_use: f64,
    /// What that does to coalescing, in words.
    pub words: String,
}

impl Coalescing {
    /// `sector_use` as a whole percentage, rounded half up: the one figure the table and the
    /// words both print.
    pub fn percent_used(&self) -> u64 {
        (self.sector_use * 100.0).round() as u64
    }
}

/// The coalescing facts of `block` with a warp of `warp` lanes.
pub fn coalescing(block: BlockSize, warp: u64) -> Coalescing {
    let warp = warp.max(1);
    let x = block.x.max(1) as u64;
    let lanes = warp.min(block.threads().max(1));
    let per_row = x.min(lanes);
    let rows = lanes.div_ceil(per_row).min(block.y.max(1) as u64).max(1);
    let bytes_per_row = per_row * BYTES_PER_THREAD;
    let sectors_per_row = bytes_per_row.div_ceil(SECTOR_BYTES).max(1);
    let sectors = rows * sectors_per_row;
    let used = lanes * BYTES_PER_THREAD;
    let sector_use = used as f64 / (sectors * SECTOR_BYTES) as f64;
    let pct = (sector_use * 100.0).round() as u64;
    let words = if rows == 1 && bytes_per_row >= 128 {
        format!(
            "coalesced: one row, {bytes_per_row} contiguous bytes per plane ({sectors} sectors, all used)"
        )
    } else if rows == 1 {
        format!("one row of {bytes_per_row} bytes: {sectors} sector(s), {pct}% of their bytes used")
    } else if bytes_per_row >= SECTOR_BYTES {
        format!(
            "{rows} rows of {bytes_per_row} bytes: every sector fully used, but {rows} separate \
             pieces of memory per load instead of one"
        )
    } else {
        format!(
            "{rows} rows of {bytes_per_row} bytes: each piece is less than a {SECTOR_BYTES}-byte \
             sector, so {sectors} sectors move for {used} bytes ({pct}% used; the rest only helps \
             if a neighbouring block reads it while it is still cached)"
        )
    };
    Coalescing {
        warp,
        lanes,
        rows,
        bytes_per_row,
        sectors,
        sector_use,
        words,
    }
}

/// The device limit a shape passes, naming it (the per-dimension limits, which the total does
/// not imply: Vulkan guarantees only 128 in y, and a device may cap y below x).
pub fn limit_passed(limits: &Limits, block: BlockSize) -> Option<String> {
    device_limit_violation(limits, block)
}

/// Where a shape goes beyond what `api`'s specification promises every device (a program
/// that must run anywhere cannot count on it), naming the dimension; `None` when within. The
/// limits' native names (`maxComputeWorkGroupSize`, `CL_DEVICE_MAX_WORK_ITEM_SIZES`) name the
/// dimension in the sentence.
pub fn beyond_guarantee(api: Api, block: BlockSize, limits: &Limits) -> Option<String> {
    let dims_name = limits
        .max_block_dims
        .as_ref()
        .map(|d| d.name.clone())
        .unwrap_or_else(|| "the block's extents".into());
    let mut over = Vec::new();
    if let Some(g) = super::guaranteed_threads(api) {
        if block.threads() > g {
            let name = limits
                .max_threads_per_block
                .as_ref()
                .map(|n| n.name.clone())
                .unwrap_or_else(|| "threads per block".into());
            over.push(format!("{} threads > {g} ({name})", block.threads()));
        }
    }
    if let Some(d) = super::guaranteed_block_dims(api) {
        for (axis, (want, g)) in ["x", "y", "z"]
            .iter()
            .zip([block.x, block.y, block.z].iter().zip(d))
        {
            if *want as u64 > g {
                over.push(format!("{axis} = {want} > {g} ({dims_name}[{axis}])"));
            }
        }
    }
    (!over.is_empty()).then(|| {
        format!(
            "beyond what {api} guarantees every device: {}",
            over.join(", ")
        )
    })
}

/// The parts of a shape beyond `api`'s promises, in short: "x", "y", "z", "threads"; empty
/// when within (or when the API promises nothing).
pub fn beyond_parts(api: Api, block: BlockSize) -> Vec<&'static str> {
    let mut parts = Vec::new();
    if let Some(d) = super::guaranteed_block_dims(api) {
        for (axis, (want, g)) in ["x", "y", "z"]
            .into_iter()
            .zip([block.x, block.y, block.z].into_iter().zip(d))
        {
            if want as u64 > g {
                parts.push(axis);
            }
        }
    }
    if super::guaranteed_threads(api).is_some_and(|g| block.threads() > g) {
        parts.push("threads");
    }
    parts
}

/// One planned row of the shape sweep: the same on every API.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ShapeRow {
    pub block: BlockSize,
    pub grid: GridSize,
    /// Threads launched: more than the pixels where the grid overhangs the frame (the guard's
    /// idle threads), fewer where an extent was capped (the loops do the rest).
    pub threads: u64,
}

/// The shape sweep for `threads` on a `width` x `height` frame.
pub fn plan(threads: u32, width: u32, height: u32) -> Result<Vec<ShapeRow>, String> {
    Ok(shapes(threads)?
        .into_iter()
        .map(|block| {
            let grid = shape_grid(block, width, height);
            ShapeRow {
                block,
                grid,
                threads: threads_launched(block, grid),
            }
        })
        .collect())
}

/// One shape as one API ran it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ShapeMeasured {
    #[serde(flatten)]
    pub row: ShapeRow,
    /// How one warp meets memory (for this API's warp size, where known).
    pub coalescing: Option<Coalescing>,
    /// Where the shape goes beyond what this API's specification promises every device.
    pub beyond_guarantee: Option<String>,
    pub timing: Option<Timing>,
    /// 16 bytes per pixel over the mean time, 10^9 bytes per second.
    pub gbps: Option<f64>,
    /// This row's GB/s over the fastest shape's.
    pub of_best: Option<f64>,
    pub verified: bool,
    /// Why the shape did not run: a device limit named, or the API's refusal.
    pub skipped: Option<String>,
}

/// One API's shape sweep for one thread count.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ShapeResult {
    pub api: Api,
    pub device: DeviceIdentity,
    pub threads: u32,
    /// The warp (subgroup) size the coalescing columns use.
    pub warp: Option<u64>,
    /// The 2-D kernel's facts on this device.
    pub kernel: KernelFacts,
    pub frame: FrameInfo,
    pub rows: Vec<ShapeMeasured>,
    /// Set when the sweep stopped early (a wrong pixel, a driver error); rows before it kept.
    pub error: Option<String>,
}

impl ShapeResult {
    /// Fills `of_best` from the fastest shape.
    pub fn fill_relative(&mut self) {
        super::row::fill_of_best(self.rows.iter_mut());
    }

    /// The fastest shape that ran.
    pub fn best(&self) -> Option<&ShapeMeasured> {
        self.rows
            .iter()
            .filter(|r| r.gbps.is_some())
            .max_by(|a, b| a.gbps.unwrap_or(0.0).total_cmp(&b.gbps.unwrap_or(0.0)))
    }
}

#[cfg(test)]
#[path = "shapes_tests.rs"]
mod tests;
