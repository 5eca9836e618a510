//! `run_batch_flushed` (`--cold`): before each launch, a cuMemsetD8Async over a scratch buffer
//! kept while its size stays the same. Stream order runs the memset to its end before the
//! launch starts, and events recorded after the memset and after the launch give the launch's
//! interval alone; the core sizes the memset from the last-level cache
//! (CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE).

use std::time::Duration;

use blocksweep_core::BatchTimes;

use crate::context::Stream;
use crate::entry_points::cu;
use crate::error::{map_driver, CudaError, OrMap};
use crate::memory::{check_free, DeviceBuffer};
use crate::timing::EventTimer;

/// The buffer each flush writes.
pub(crate) struct Scratch {
    buffer: DeviceBuffer,
}

impl Scratch {
    /// `current` where it has `bytes`, else a new buffer of `bytes` (the old one freed first).
    pub fn sized(current: Option<Scratch>, bytes: u64) -> Result<Scratch, CudaError> {
        match current {
            Some(s) if s.buffer.bytes() as u64 == bytes => Ok(s),
            old => {
                drop(old);
                check_free(bytes, &format!("--cold's flush needs {bytes} bytes"))?;
                let len = usize::try_from(bytes)
                    .map_err(|_| CudaError::TooLarge(format!("{bytes} bytes do not fit usize")))?;
                Ok(Scratch {
                    buffer: DeviceBuffer::alloc(len)?,
                })
            }
        }
    }

    /// Issues one memset of the whole buffer to `byte` on the stream (no wait).
    fn enqueue(&self, stream: &Stream, byte: u8) -> Result<(), CudaError> {
        let (ptr, len) = (self.buffer.ptr(), self.buffer.bytes());
        // SAFETY: `ptr` is a live allocation of `len` bytes in the current context.
        unsafe { cu!(cuMemsetD8Async(ptr, byte, len, stream.raw())) }.or_map(map_driver)
    }
}

/// `count` runs of `op`, each after a memset of `scratch` (a new byte each time), timed one by
/// one ([`EventTimer::run_each_after`]); the wait ends at `limit`.
pub(crate) fn flushed_batch(
    timer: &mut EventTimer,
    stream: &Stream,
    scratch: &Scratch,
    (count, limit): (u32, Duration),
    op: &mut dyn FnMut() -> Result<(), CudaError>,
) -> Result<BatchTimes, CudaError> {
    let mut byte = 0u8;
    let mut flush = || {
        byte = byte.wrapping_add(1);
        scratch.enqueue(stream, byte)
    };
    timer.run_each_after(stream, (count, limit), &mut flush, op)
}
