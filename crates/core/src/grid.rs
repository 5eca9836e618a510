//! Grid policies and the residency (blocks per multiprocessor) model.
//!
//! CUDA answers "how many blocks of this kernel fit on one SM" with its occupancy API. OpenCL
//! and Vulkan have no such call, so for them the core models it from the per-multiprocessor
//! limits the device exposes (or, on NVIDIA, the published limits of its compute capability)
//! and the kernel's register count: the minimum of the three limiters the CUDA occupancy
//! calculator uses (warp slots, block slots, registers). Shared memory is not a limiter here
//! because the grayscale kernel uses none.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

use crate::blocks::BlockSize;
use crate::limits::MultiprocessorModel;

/// How the sweep picks the grid for each block size.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GridPolicy {
    /// The default: one full wave, resident blocks per multiprocessor x
    /// multiprocessors, capped at ceil(n / T) and at least 1.
    #[default]
    Wave,
    /// One thread per pixel: ceil(n / T) blocks.
    Data,
    /// The same number of blocks for every row.
    Fixed(u32),
    /// A fraction or multiple of one wave, in hundredths (`0.5w` is 50, `2w` 200): the grid
    /// axis of a tune (`--grid 0.5w,1w,2w`), capped like the wave at one thread per item.
    Waves(u32),
}

impl fmt::Display for GridPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GridPolicy::Wave => f.write_str("wave"),
            GridPolicy::Data => f.write_str("data"),
            GridPolicy::Fixed(n) => write!(f, "{n}"),
            GridPolicy::Waves(h) => write!(f, "{}w", *h as f64 / 100.0),
        }
    }
}

impl FromStr for GridPolicy {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim() {
            "wave" => Ok(GridPolicy::Wave),
            "data" => Ok(GridPolicy::Data),
            t if t.ends_with('w') => parse_waves(t),
            t => match t.parse::<u32>() {
                Ok(0) => Err("grid 0: a launch needs at least one block".into()),
                Ok(n) => Ok(GridPolicy::Fixed(n)),
                Err(_) => Err(format!(
                    "'{t}' is not a grid policy (expected wave, data, a number of waves such as 0.5w or 2w, or a number of blocks from 1 to {})",
                    u32::MAX
                )),
            },
        }
    }
}

/// `0.5w`, `2w`: waves in hundredths, from 0.01w to 1000w.
fn parse_waves(t: &str) -> Result<GridPolicy, String> {
    let n = t.trim_end_matches('w').trim();
    match n.parse::<f64>() {
        Ok(w) if (0.01..=1000.0).contains(&w) && ((w * 100.0).round() - w * 100.0).abs() < 1e-6 => {
            Ok(GridPolicy::Waves((w * 100.0).round() as u32))
        }
        _ => Err(format!(
            "'{t}' is not a number of waves (from 0.01w to 1000w, in hundredths: 0.5w, 1w, 2w)"
        )),
    }
}

/// A `--grid` list: one policy (a plain sweep) or several (the grid axis of a tune: every
/// block size runs at every grid). Duplicates are refused: each would be measured twice.
pub fn parse_grid_list(s: &str) -> Result<Vec<GridPolicy>, String> {
    let mut out: Vec<GridPolicy> = Vec::new();
    for part in s.split(',') {
        let g: GridPolicy = part.parse()?;
        if out.contains(&g) {
            return Err(format!("grid '{}' is listed twice", part.trim()));
        }
        out.push(g);
    }
    Ok(out)
}

/// ceil(n / t) in 64 bits.
pub fn blocks_to_cover(pixels: u64, threads: u64) -> u64 {
    pixels.div_ceil(threads.max(1))
}

impl GridPolicy {
    /// A wave or a number of waves: the grids made from residency.
    pub fn is_waves(&self) -> bool {
        matches!(self, GridPolicy::Wave | GridPolicy::Waves(_))
    }

    /// The grid for one row. `resident` is blocks per multiprocessor (None when unknown, then
    /// one per multiprocessor is assumed), `mps` the multiprocessor count, `max_grid_x` the
    /// API's grid limit where it has one.
    pub fn grid(
        &self,
        block: BlockSize,
        pixels: u64,
        resident: Option<u32>,
        mps: u64,
        max_grid_x: Option<u64>,
    ) -> u64 {
        // Only x does work in the grayscale kernel, so coverage is measured in x-threads.
        let needed = blocks_to_cover(pixels, block.x as u64);
        let g = match self {
            GridPolicy::Wave => (resident.unwrap_or(1) as u64 * mps.max(1))
                .min(needed)
                .max(1),
            GridPolicy::Data => needed,
            GridPolicy::Fixed(n) => *n as u64,
            GridPolicy::Waves(h) => (resident.unwrap_or(1) as u64 * mps.max(1) * *h as u64)
                .div_ceil(100)
                .min(needed)
                .max(1),
        };
        match max_grid_x {
            // The grid-stride loop keeps any grid correct, so clamping only costs speed.
            Some(m) if self.is_waves() => g.min(m),
            _ => g,
        }
    }
}

/// Per-SM limits of NVIDIA compute capabilities (CUDA C++ Programming Guide, "Compute
/// Capabilities" table): (max resident warps, max resident blocks, 32-bit registers).
pub fn nvidia_sm_limits(major: u32, minor: u32) -> Option<(u32, u32, u32)> {
    let r = match (major, minor) {
        (5, _) | (6, _) => (64, 32, 65536),
        (7, 0) | (7, 2) => (64, 32, 65536),
        (7, 5) => (32, 16, 65536),
        (8, 0) => (64, 32, 65536),
        (8, 6) | (8, 7) => (48, 16, 65536),
        (8, 9) => (48, 24, 65536),
        (9, 0) => (64, 32, 65536),
        (10, _) => (64, 32, 65536),
        (12, _) => (48, 32, 65536),
        _ => return None,
    };
    Some(r)
}

/// NVIDIA's model for a compute capability, for APIs that report the capability but not the
/// per-SM limits (OpenCL with cl_nv_device_attribute_query).
pub fn nvidia_model(major: u32, minor: u32, origin: &str) -> Option<MultiprocessorModel> {
    let (warps, blocks, regs) = nvidia_sm_limits(major, minor)?;
    Some(MultiprocessorModel {
        warp_size: 32,
        max_warps: warps,
        max_blocks: blocks,
        registers: Some(regs),
        register_granularity: 256,
        source: format!("model: sm_{major}{minor} limits ({warps} warps, {blocks} blocks, {regs} registers per SM; {origin})"),
    })
}

/// NVIDIA's model for an API that reports warps per SM but not the compute capability
/// (Vulkan with VK_NV_shader_sm_builtins). Blocks per SM are NVIDIA's for that warp count: 32
/// where an SM holds 64 warps, 16 where it holds 32 or 48 (sm_75, sm_86/87; sm_89's 24 is then
/// under-counted); 64K registers per SM in units of 256 on every architecture since sm_50.
pub fn nvidia_model_from_warps(
    warp_size: u32,
    warps_per_sm: u32,
    origin: &str,
) -> MultiprocessorModel {
    let max_blocks = if warps_per_sm == 32 || warps_per_sm == 48 {
        16
    } else {
        32
    };
    MultiprocessorModel {
        warp_size,
        max_warps: warps_per_sm,
        max_blocks,
        registers: Some(65536),
        register_granularity: 256,
        source: format!(
            "model: {origin} ({warps_per_sm} warps/SM, warp {warp_size}) + assumed {max_blocks} \
             blocks/SM and 65536 registers/SM (NVIDIA's published limits; the API does not \
             expose them)"
        ),
    }
}

/// Blocks of `threads` threads, each thread using `regs_per_thread` registers, that fit on one
/// multiprocessor at once. Zero means the block cannot be resident at all.
pub fn model_blocks_per_mp(
    m: &MultiprocessorModel,
    threads: u64,
    regs_per_thread: Option<u64>,
) -> u32 {
    let warp = m.warp_size.max(1) as u64;
    let warps_per_block = threads.div_ceil(warp);
    if warps_per_block == 0 {
        return 0;
    }
    let by_warps = m.max_warps as u64 / warps_per_block;
    let mut fit = by_warps.min(m.max_blocks as u64);
    if let (Some(regs_mp), Some(rpt)) = (m.registers, regs_per_thread) {
        if rpt > 0 {
            let g = m.register_granularity.max(1) as u64;
            let per_warp = (rpt * warp).div_ceil(g) * g;
            let warps_by_regs = regs_mp as u64 / per_warp;
            fit = fit.min(warps_by_regs / warps_per_block);
        }
    }
    fit as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nvidia_block_slots_follow_warp_slots() {
        let m = |warps| nvidia_model_from_warps(32, warps, "VK_NV_shader_sm_builtins");
        assert_eq!(m(64).max_blocks, 32);
        assert_eq!(m(32).max_blocks, 16);
        assert_eq!(m(48).max_blocks, 16);
        assert!(m(64)
            .source
            .contains("VK_NV_shader_sm_builtins (64 warps/SM"));
    }

    fn t4() -> MultiprocessorModel {
        nvidia_model(7, 5, "test").unwrap()
    }

    /// The published T4 table (docs/guide.md): blk/SM for each of the thirteen sizes.
    #[test]
    fn reproduces_the_seeds_t4_column() {
        let want = [16, 16, 16, 10, 8, 8, 6, 5, 4, 2, 2, 1, 1];
        let got: Vec<u32> = crate::blocks::DEFAULT_BLOCKS
            .iter()
            .map(|&t| model_blocks_per_mp(&t4(), t as u64, Some(16)))
            .collect();
        assert_eq!(got, want);
    }

    #[test]
    fn registers_limit_residency() {
        // 1024 threads x 64 registers fills a 64K register file exactly: one block.
        let m = nvidia_model(9, 0, "test").unwrap();
        assert_eq!(model_blocks_per_mp(&m, 1024, Some(64)), 1);
        assert_eq!(model_blocks_per_mp(&m, 1024, Some(65)), 0);
        assert_eq!(model_blocks_per_mp(&m, 256, Some(16)), 8);
    }

    #[test]
    fn wave_grid_matches_seed() {
        // T4: 40 SMs, 256 threads -> 4 blocks/SM -> 160 blocks.
        let g = GridPolicy::Wave.grid(BlockSize::linear(256), 3840 * 2160, Some(4), 40, None);
        assert_eq!(g, 160);
        // Capped at ceil(n/T) on a tiny frame, and at least 1.
        assert_eq!(
            GridPolicy::Wave.grid(BlockSize::linear(256), 300, Some(4), 40, None),
            2
        );
        assert_eq!(
            GridPolicy::Data.grid(BlockSize::linear(100), 1001, None, 1, None),
            11
        );
        assert_eq!(
            GridPolicy::Fixed(7).grid(BlockSize::linear(100), 1001, None, 1, None),
            7
        );
    }

    #[test]
    fn parses_policies() {
        assert_eq!("wave".parse::<GridPolicy>(), Ok(GridPolicy::Wave));
        assert_eq!("640".parse::<GridPolicy>(), Ok(GridPolicy::Fixed(640)));
        assert!("0".parse::<GridPolicy>().is_err());
        assert!("many".parse::<GridPolicy>().is_err());
        assert_eq!("0.5w".parse::<GridPolicy>(), Ok(GridPolicy::Waves(50)));
        assert_eq!(GridPolicy::Waves(50).to_string(), "0.5w");
        assert_eq!(GridPolicy::Waves(400).to_string(), "4w");
        assert!("0w".parse::<GridPolicy>().is_err());
        assert!("0.001w".parse::<GridPolicy>().is_err());
        let list = parse_grid_list("0.5w,1w,data,4096").unwrap();
        assert_eq!(list.len(), 4);
        assert!(parse_grid_list("1w,1w").unwrap_err().contains("twice"));
    }

    #[test]
    fn waves_scale_the_wave_and_stay_capped() {
        let b = BlockSize::linear(256);
        // T4: 4 blocks/SM x 40 SMs = 160 blocks a wave.
        let g = |h| GridPolicy::Waves(h).grid(b, 3840 * 2160, Some(4), 40, None);
        assert_eq!((g(50), g(100), g(400)), (80, 160, 640));
        // Never more blocks than one thread per item needs, and the API's limit caps it.
        assert_eq!(GridPolicy::Waves(400).grid(b, 1000, Some(4), 40, None), 4);
        assert_eq!(
            GridPolicy::Waves(400).grid(b, 1 << 30, Some(4), 40, Some(500)),
            500
        );
    }
}
