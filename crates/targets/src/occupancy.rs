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

/// The figures the register arithmetic takes from a target, as the catalogue states them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Figures {
    pub warp: u64,
    pub threads_per_sm: u64,
    pub blocks_per_sm: u64,
    pub registers_per_sm: u64,
    pub registers_per_block: u64,
    /// Registers are given to a warp in multiples of this.
    pub register_unit: u64,
    /// The most registers one thread may use.
    pub registers_per_thread: u64,
}

/// The figures of a target that states a multiprocessor and its registers per thread.
pub fn figures(t: &Target) -> Option<Figures> {
    let sm = Sm::of(t)?;
    Some(Figures {
        warp: sm.warp,
        threads_per_sm: sm.warp_slots * sm.warp,
        blocks_per_sm: sm.blocks,
        registers_per_sm: sm.registers,
        registers_per_block: sm.registers_per_block,
        register_unit: sm.register_unit,
        registers_per_thread: t.one(Key::RegistersPerThread)?,
    })
}

/// One block where the kernel's registers per thread are unknown: its residency where
/// registers do not bound it, the most registers per thread that keep that residency, and the
/// most at which one block still launches, with its residency there.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RegisterSteps {
    pub threads: u64,
    /// The residency with the register limit left out (blocks, warps, shared memory).
    pub unbound: Residency,
    /// The most registers per thread at which as many blocks stay resident.
    pub kept_up_to: u64,
    /// The most registers per thread at which one block fits the registers per block (at
    /// most the target's registers per thread).
    pub launches_up_to: u64,
    /// The residency at `launches_up_to`.
    pub at_launch_limit: Residency,
}

/// [`RegisterSteps`] of `threads` with `shared` bytes per block on `target`; `None` where the
/// target states no multiprocessor or the block exceeds its threads per block.
pub fn register_steps(target: &Target, threads: u64, shared: u64) -> Option<RegisterSteps> {
    let most = figures(target)?.registers_per_thread;
    if target
        .one(Key::ThreadsPerBlock)
        .is_some_and(|m| threads > m)
    {
        return None;
    }
    let unbound = residency(target, threads, None, shared)?;
    let at = |r: u64| residency(target, threads, Some(r), shared);
    let kept_up_to = (1..=most)
        .rev()
        .find(|&r| at(r).is_some_and(|x| x.blocks_per_sm == unbound.blocks_per_sm))?;
    let launches_up_to = (1..=most)
        .rev()
        .find(|&r| largest_block(target, r).is_some_and(|b| threads <= b))?;
    Some(RegisterSteps {
        threads,
        unbound,
        kept_up_to,
        launches_up_to,
        at_launch_limit: at(launches_up_to)?,
    })
}
