//! `run_batch_flushed` (`--cold`): before each dispatch, a vkCmdFillBuffer over a scratch
//! buffer kept while its size stays the same, all in one command buffer. A barrier after the
//! fill holds the dispatch until the fill is done, and timestamps at BOTTOM_OF_PIPE after the
//! fill and after the dispatch give the dispatch's interval alone; the core sizes the fill from
//! the last-level cache.

use std::sync::Arc;

use ash::vk;
use blocksweep_core::{BatchTimes, Named};

use crate::command::{between_dispatches, Commands};
use crate::context::DeviceContext;
use crate::error::VulkanResult;
use crate::memory::{Buffer, MemoryKind};
use crate::timing::Timestamps;

/// The buffer each flush writes.
pub(crate) struct Scratch {
    buffer: Buffer,
}

impl Scratch {
    /// `current` where it has `bytes`, else a new device-local buffer of `bytes` (the old one
    /// freed first).
    pub fn sized(
        current: Option<Scratch>,
        device: &Arc<DeviceContext>,
        bytes: u64,
        max_alloc: Option<&Named<u64>>,
    ) -> VulkanResult<Scratch> {
        match current {
            Some(s) if s.buffer.size == bytes => Ok(s),
            old => {
                drop(old);
                let usage = vk::BufferUsageFlags::TRANSFER_DST;
                let kind = MemoryKind::DeviceLocal;
                let buffer = Buffer::new(device, bytes, usage, kind, max_alloc)?;
                Ok(Scratch { buffer })
            }
        }
    }
}

/// `count` copies of `record` in one command buffer, each after a fill of `scratch` (a new
/// word each time) and a barrier; one stamp after the fill's barrier and one after the
/// dispatch, so dispatch i's interval is its own. Submits once and waits.
pub(crate) fn flushed_batch(
    timestamps: &mut Timestamps,
    commands: &mut Commands,
    scratch: &Scratch,
    count: u32,
    record: impl Fn(&ash::Device, vk::CommandBuffer),
) -> VulkanResult<BatchTimes> {
    if count == 0 {
        return Ok(BatchTimes::default());
    }
    let stamps = 2 * count;
    let queries = timestamps.pool(commands, stamps)?;
    let buffer = scratch.buffer.raw;
    // SAFETY: called only inside `commands.run`'s closure below, on the buffer it records; `q`
    // is below `stamps`, which `pool` made the pool hold.
    let stamp = |d: &ash::Device, cb, q: u32| unsafe {
        d.cmd_write_timestamp(cb, vk::PipelineStageFlags::BOTTOM_OF_PIPE, queries, q)
    };
    commands.run(|d, cb| {
        // SAFETY: `cb` is being recorded by `Commands::run`; the pool holds `stamps` queries.
        unsafe { d.cmd_reset_query_pool(cb, queries, 0, stamps) };
        for i in 0..count {
            if i > 0 {
                between_dispatches(d, cb);
            }
            let word = u32::from_ne_bytes([(i % 255 + 1) as u8; 4]);
            // SAFETY: `buffer` is the scratch buffer, live, made with TRANSFER_DST usage;
            // WHOLE_SIZE fills its whole words, whatever its size.
            unsafe { d.cmd_fill_buffer(cb, buffer, 0, vk::WHOLE_SIZE, word) };
            // The dispatch waits for the fill: without it, the two could overlap.
            between_dispatches(d, cb);
            stamp(d, cb, 2 * i);
            record(d, cb);
            stamp(d, cb, 2 * i + 1);
        }
    })?;
    let ticks = timestamps.ticks(stamps)?;
    Ok(BatchTimes {
        batch_ms: None,
        each_ms: ticks.chunks(2).map(|w| timestamps.ms(w[0], w[1])).collect(),
    })
}
