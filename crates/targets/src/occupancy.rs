//! The seed's occupancy arithmetic, worked out for a target that states a multiprocessor's
//! figures (CUDA's compute capabilities): resident blocks per SM as the least of the block,
//! warp, register and shared-memory limits, and the largest block a register count allows.
//! The same arithmetic as NVIDIA's occupancy calculator (cuda_occupancy.h), without its
//! per-partition refinements; docs/targets.md works one example by hand.

use serde::Serialize;

use crate::model::{Key, Target};

/// What bounds the resident blocks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Limiter {
    Blocks,
    Warps,
    Registers,
    SharedMemory,
}

impl Limiter {
    pub fn word(self) -> &'static str {
        match self {
            Limiter::Blocks => "blocks",
            Limiter::Warps => "warps",
            Limiter::Registers => "registers",
            Limiter::SharedMemory => "shared memory",
        }
    }
}

/// Residency of one block size on one target's multiprocessor.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Residency {
    pub threads: u64,
    pub warps_per_block: u64,
    pub blocks_per_sm: u64,
    pub warps_per_sm: u64,
    /// Resident warps ÷ the SM's warp slots.
    pub occupancy: f64,
    pub limiter: Limiter,
    /// Registers one warp is given (the count per thread × the warp, rounded up to the
    /// allocation unit); `None` where no register count is known.
    pub registers_per_warp: Option<u64>,
}

/// The figures the arithmetic needs, where the target states them all.
struct Sm {
    warp: u64,
    warp_slots: u64,
    blocks: u64,
    registers: u64,
    register_unit: u64,
    registers_per_block: u64,
    shared: u64,
    shared_reserved: u64,
    shared_unit: u64,
}

impl Sm {
    fn of(t: &Target) -> Option<Sm> {
        let warp = t.subgroup.as_ref()?.fixed()?;
        Some(Sm {
            warp,
            warp_slots: t.one(Key::ThreadsPerSm)? / warp,
            blocks: t.one(Key::BlocksPerSm)?,
            registers: t.one(Key::RegistersPerSm)?,
            register_unit: t.one(Key::RegisterGranularity).unwrap_or(1).max(1),
            registers_per_block: t.one(Key::RegistersPerBlock)?,
            shared: t.one(Key::SharedBytesPerSm)?,
            shared_reserved: t.one(Key::SharedReservedPerBlock).unwrap_or(0),
            shared_unit: t.one(Key::SharedGranularity).unwrap_or(1).max(1),
        })
    }

    fn registers_per_warp(&self, per_thread: u64) -> u64 {
        (per_thread * self.warp).div_ceil(self.register_unit) * self.register_unit
    }
}

/// Resident blocks of `threads` per SM on `target`, with `registers` per thread (`None`:
/// unknown, and the register limit is left out, which the caller must say) and `shared` bytes
/// per block. `None` where the target states no multiprocessor, or a block does not fit at all.
pub fn residency(
    target: &Target,
    threads: u64,
    registers: Option<u64>,
    shared: u64,
) -> Option<Residency> {
    let sm = Sm::of(target)?;
    let warps = threads.div_ceil(sm.warp).max(1);
    let mut limits = vec![
        (sm.blocks, Limiter::Blocks),
        (sm.warp_slots / warps, Limiter::Warps),
    ];
    let per_warp = registers.map(|r| sm.registers_per_warp(r));
    if let Some(w) = per_warp.filter(|&w| w > 0) {
        limits.push(((sm.registers / w) / warps, Limiter::Registers));
    }
    if shared > 0 {
        let per_block = (shared + sm.shared_reserved).div_ceil(sm.shared_unit) * sm.shared_unit;
        limits.push((sm.shared / per_block, Limiter::SharedMemory));
    }
    let (blocks, limiter) = limits.into_iter().min_by_key(|(n, _)| *n)?;
    if blocks == 0 {
        return None;
    }
    Some(Residency {
        threads,
        warps_per_block: warps,
        blocks_per_sm: blocks,
        warps_per_sm: blocks * warps,
        occupancy: (blocks * warps) as f64 / sm.warp_slots as f64,
        limiter,
        registers_per_warp: per_warp,
    })
}

/// The largest block (a whole number of warps, within the target's threads per block) whose
/// registers fit one block's register limit, at `registers` per thread.
pub fn largest_block(target: &Target, registers: u64) -> Option<u64> {
    let sm = Sm::of(target)?;
    let per_warp = sm.registers_per_warp(registers);
    let by_registers = match per_warp {
        0 => u64::MAX,
        w => (sm.registers_per_block / w) * sm.warp,
    };
    let cap = target.one(Key::ThreadsPerBlock).unwrap_or(u64::MAX);
    Some(by_registers.min(cap))
}
