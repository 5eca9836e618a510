//! `run_batch_flushed` (`--cold`): before each dispatch, a clEnqueueFillBuffer over a scratch
//! buffer kept while its size stays the same. The in-order queue runs the fill to its end
//! before the dispatch starts, and the dispatch's profiling event (START to END) covers the
//! dispatch alone; the core sizes the fill from the last-level cache.

use std::ffi::c_void;
use std::ptr;
use std::time::Duration;

use blocksweep_core::{BatchTimes, Stamps};
use opencl3::command_queue::enqueue_fill_buffer;
use opencl3::memory::CL_MEM_READ_WRITE;

use crate::context::DeviceContext;
use crate::error::{map_enqueue, OpenClError};
use crate::handles::{Event, Mem, Queue};
use crate::memory::alloc;

/// The buffer each flush writes.
pub(crate) struct Scratch {
    mem: Mem,
    bytes: u64,
}

impl Scratch {
    /// `current` where it has `bytes`, else a new buffer of `bytes` (the old one freed first).
    pub fn sized(
        current: Option<Scratch>,
        ctx: &DeviceContext,
        bytes: u64,
    ) -> Result<Scratch, OpenClError> {
        match current {
            Some(s) if s.bytes == bytes => Ok(s),
            old => {
                drop(old);
                let mem = alloc(&ctx.context, CL_MEM_READ_WRITE, bytes)?;
                Ok(Scratch { mem, bytes })
            }
        }
    }

    /// Enqueues one fill of the whole buffer with `byte`, without waiting.
    fn enqueue(&self, queue: &Queue, byte: u8) -> Result<(), OpenClError> {
        let pattern = [byte; 4];
        // Whole patterns only (the core sizes a flush in whole pages, so nothing is left out);
        // the buffer was allocated with this size, so it fits size_t.
        let size = self.bytes as usize / pattern.len() * pattern.len();
        // SAFETY: the driver copies the 4-byte pattern before returning (OpenCL 3.0, 5.2.3); the
        // range is the whole buffer, a multiple of the pattern's size; there is no wait list.
        let raw = unsafe {
            enqueue_fill_buffer(
                queue.raw(),
                self.mem.raw(),
                pattern.as_ptr().cast::<c_void>(),
                pattern.len(),
                0,
                size,
                0,
                ptr::null(),
            )
        }
        .map_err(map_enqueue("clEnqueueFillBuffer"))?;
        // Released at once: the fill still runs, in queue order.
        drop(Event::from_raw(raw));
        Ok(())
    }
}

/// `count` commands made by `enqueue`, each after a fill of `scratch` (a new byte each time),
/// timed one by one ([`Stamps::Each`] of [`crate::timing::run_batch`]).
pub(crate) fn flushed_batch(
    ctx: &DeviceContext,
    scratch: &Scratch,
    count: u32,
    (what, deadline): (&'static str, Option<Duration>),
    mut enqueue: impl FnMut(bool) -> Result<Option<Event>, OpenClError>,
) -> Result<BatchTimes, OpenClError> {
    let mut byte = 0u8;
    crate::timing::run_batch(ctx, count, Stamps::Each, (what, deadline), |want| {
        byte = byte.wrapping_add(1);
        scratch.enqueue(&ctx.queue, byte)?;
        enqueue(want)
    })
}
