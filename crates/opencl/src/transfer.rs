//! Fills, writes and reads of device buffers in pieces that every driver takes.
//!
//! Each command covers at most [`PIECE`] bytes: NVIDIA's driver fails a single command above
//! about 4 GiB with its own -9999 (one clEnqueueFillBuffer over a 10 GB plane on the H200),
//! and 1 GiB is far below that and far above where the per-command cost (microseconds)
//! shows. The pieces are enqueued without blocking on the in-order queue and waited for once,
//! at the last piece's event; [`Pieces`] keeps the wait on every path, so host memory a piece
//! reads or writes is never touched by the device after the function that lent it returns.
//! A fill is the API's own memset in pieces, no extra build or launch shape, except past
//! 4 GiB (fill.rs).

use std::ffi::c_void;
use std::ptr;

use opencl3::command_queue::{
    enqueue_fill_buffer, enqueue_read_buffer, enqueue_write_buffer, finish, CL_NON_BLOCKING,
};
use opencl3::types::{cl_event, cl_int};

use crate::context::wait;
use crate::error::{map_enqueue, OpenClError};
use crate::handles::{Event, Mem, Queue};

/// The largest piece one command moves or fills, in bytes (a multiple of 4).
pub(crate) const PIECE: usize = 1 << 30;

/// The byte ranges (offset, length) that cover `bytes` in pieces of at most `piece`.
pub(crate) fn pieces(bytes: usize, piece: usize) -> impl Iterator<Item = (usize, usize)> {
    (0..bytes)
        .step_by(piece.max(1))
        .map(move |at| (at, piece.min(bytes - at)))
}

/// Commands enqueued on one in-order queue and not yet waited for. Dropped without
/// [`Pieces::wait`] (an enqueue failed half-way), it finishes the queue, so that no command
/// still uses host memory its caller is about to give back.
pub(crate) struct Pieces<'q> {
    pub queue: &'q Queue,
    last: Option<Event>,
    unwaited: bool,
}

impl<'q> Pieces<'q> {
    pub fn new(queue: &'q Queue) -> Self {
        Pieces {
            queue,
            last: None,
            unwaited: false,
        }
    }

    /// Keeps the newest command's event (the queue is in order: it finishes last).
    pub fn push(&mut self, raw: cl_event) {
        self.last = Some(Event::from_raw(raw));
        self.unwaited = true;
    }

    /// Enqueues one command per piece of `bytes` (in pieces of at most `piece`), each by
    /// `enqueue(offset, length)`, keeping its event; `call` names the command in an error.
    pub fn enqueue_each(
        &mut self,
        bytes: usize,
        piece: usize,
        call: &'static str,
        mut enqueue: impl FnMut(usize, usize) -> Result<cl_event, cl_int>,
    ) -> Result<(), OpenClError> {
        for (at, len) in pieces(bytes, piece) {
            let raw = enqueue(at, len).map_err(map_enqueue(call))?;
            self.push(raw);
        }
        Ok(())
    }

    /// Waits for every command pushed; `what` names them in an error.
    pub fn wait(mut self, what: &'static str) -> Result<(), OpenClError> {
        let Some(last) = self.last.take() else {
            return Ok(());
        };
        let waited = wait(&last, what);
        if waited.is_ok() {
            self.unwaited = false;
        }
        // Else a failed piece says nothing about the ones after it: the drop waits for all.
        waited
    }
}

impl Drop for Pieces<'_> {
    fn drop(&mut self) {
        if self.unwaited {
            // Only reached on an error path, which reports its own error.
            let _ = finish(self.queue.raw());
        }
    }
}

/// Fills the first `bytes` bytes of `mem` (a multiple of 4, within the buffer) with copies
/// of `pattern`, and waits.
pub(crate) fn fill(
    queue: &Queue,
    mem: &Mem,
    pattern: f32,
    bytes: usize,
) -> Result<(), OpenClError> {
    let mut pending = Pieces::new(queue);
    enqueue_fill(&mut pending, mem, &pattern.to_ne_bytes(), (0, bytes), PIECE)?;
    pending.wait("fill")
}

/// Sets each range (offset, length, byte) of `mem` (the caller checked them), in pieces;
/// returns when all are done, after one wait.
pub(crate) fn fill_bytes(
    queue: &Queue,
    mem: &Mem,
    ranges: &[(usize, usize, u8)],
) -> Result<(), OpenClError> {
    let mut pending = Pieces::new(queue);
    for &(offset, len, byte) in ranges {
        enqueue_fill(&mut pending, mem, &[byte], (offset, len), PIECE)?;
    }
    pending.wait("fill")
}

/// Enqueues copies of `pattern` over `len` bytes of `mem` from `offset`, in pieces of
/// `piece` bytes (both a multiple of the pattern's size), without waiting.
fn enqueue_fill(
    pending: &mut Pieces,
    mem: &Mem,
    pattern: &[u8],
    (offset, len): (usize, usize),
    piece: usize,
) -> Result<(), OpenClError> {
    let queue = pending.queue;
    pending.enqueue_each(len, piece, "clEnqueueFillBuffer", |at, n| {
        // SAFETY: the driver copies the pattern before returning (OpenCL 3.0, 5.2.3);
        // offset + at .. + n lies within the buffer and both are multiples of the pattern's
        // size.
        unsafe {
            enqueue_fill_buffer(
                queue.raw(),
                mem.raw(),
                pattern.as_ptr().cast::<c_void>(),
                pattern.len(),
                offset + at,
                n,
                0,
                ptr::null(),
            )
        }
    })
}

/// Copies `data` into the start of `mem` (which holds at least as many bytes: the caller
/// checked); returns when the copy is done.
pub(crate) fn write_bytes(queue: &Queue, mem: &Mem, data: &[u8]) -> Result<(), OpenClError> {
    let mut pending = Pieces::new(queue);
    // SAFETY: `data` is borrowed for this call, and `pending` waits for the pieces before
    // the call returns, on every path.
    unsafe { enqueue_write(&mut pending, mem, 0, data) }?;
    pending.wait("write")
}

/// Enqueues writes of `data` into `mem` at byte `offset` onwards, in pieces, without waiting.
///
/// # Safety
///
/// `data` stays valid and unwritten until `pending` has waited (or been dropped); `mem`
/// holds `offset + data.len()` bytes.
pub(crate) unsafe fn enqueue_write(
    pending: &mut Pieces<'_>,
    mem: &Mem,
    offset: usize,
    data: &[u8],
) -> Result<(), OpenClError> {
    // SAFETY: as the caller vouches.
    unsafe { enqueue_write_in_pieces(pending, mem, offset, data, PIECE) }
}

/// [`enqueue_write`] in pieces of `piece` bytes.
///
/// # Safety
///
/// As for [`enqueue_write`].
unsafe fn enqueue_write_in_pieces(
    pending: &mut Pieces<'_>,
    mem: &Mem,
    offset: usize,
    data: &[u8],
    piece: usize,
) -> Result<(), OpenClError> {
    let queue = pending.queue;
    pending.enqueue_each(data.len(), piece, "clEnqueueWriteBuffer", |at, len| {
        // SAFETY: a non-blocking write of data[at..at + len], which the caller keeps alive
        // until `pending` has waited, into bytes the buffer holds.
        unsafe {
            enqueue_write_buffer(
                queue.raw(),
                mem.raw(),
                CL_NON_BLOCKING,
                offset + at,
                len,
                data.as_ptr().add(at).cast::<c_void>(),
                0,
                ptr::null(),
            )
        }
    })
}

/// Copies `out.len()` bytes of `mem` from byte `offset` into `out`; returns when done. The
/// range must lie in `mem`.
pub(crate) fn read_range(
    queue: &Queue,
    mem: &Mem,
    offset: usize,
    out: &mut [u8],
) -> Result<(), OpenClError> {
    // SAFETY: `out` is exclusively borrowed for the call and holds `out.len()` bytes; the
    // caller keeps the range inside `mem`.
    unsafe { read_into_pieces(queue, mem, offset, out.as_mut_ptr(), out.len(), PIECE) }
}

/// Copies `bytes` bytes of `mem` from byte `offset` to `dst`, in pieces; returns when all
/// are done.
///
/// # Safety
///
/// `dst` is valid for writes of `bytes` bytes, and nothing else accesses them during the
/// call; `mem` holds at least `offset + bytes` bytes.
pub(crate) unsafe fn read_into(
    queue: &Queue,
    mem: &Mem,
    offset: usize,
    dst: *mut u8,
    bytes: usize,
) -> Result<(), OpenClError> {
    // SAFETY: as the caller vouches.
    unsafe { read_into_pieces(queue, mem, offset, dst, bytes, PIECE) }
}

/// [`read_into`] in pieces of `piece` bytes.
///
/// # Safety
///
/// As for [`read_into`].
unsafe fn read_into_pieces(
    queue: &Queue,
    mem: &Mem,
    offset: usize,
    dst: *mut u8,
    bytes: usize,
    piece: usize,
) -> Result<(), OpenClError> {
    let mut pending = Pieces::new(queue);
    pending.enqueue_each(bytes, piece, "clEnqueueReadBuffer", |at, len| {
        // SAFETY: a non-blocking read into dst[at..at + len], which the caller vouches for
        // until this call returns; `pending` waits for it before then on every path.
        unsafe {
            enqueue_read_buffer(
                queue.raw(),
                mem.raw(),
                CL_NON_BLOCKING,
                offset + at,
                len,
                dst.add(at).cast::<c_void>(),
                0,
                ptr::null(),
            )
        }
    })?;
    pending.wait("read")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Fill, write and read in pieces of 3 values over a buffer of 10 (the last piece short),
    /// on the first OpenCL device here: every byte lands once, at its own offset.
    #[test]
    fn pieces_land_at_their_offsets_on_a_device() {
        let Some((ctx, mem)) = crate::memory::first_device_for_tests() else {
            return;
        };
        let piece = 12;
        let mut pending = Pieces::new(&ctx.queue);
        enqueue_fill(&mut pending, &mem, &7.5f32.to_ne_bytes(), (0, 40), piece).unwrap();
        pending.wait("fill").unwrap();
        let mut out = [0f32; 10];
        let read = |out: &mut [f32; 10]| {
            // SAFETY: `out` is exclusively borrowed and holds 40 bytes.
            unsafe { read_into_pieces(&ctx.queue, &mem, 0, out.as_mut_ptr().cast(), 40, piece) }
                .unwrap()
        };
        read(&mut out);
        assert_eq!(out, [7.5; 10]);
        let data: Vec<f32> = (0..9).map(|i| i as f32).collect();
        let bytes: Vec<u8> = data.iter().flat_map(|v| v.to_ne_bytes()).collect();
        let mut pending = Pieces::new(&ctx.queue);
        // SAFETY: `bytes` outlives the wait below; 4 + 36 bytes fit the buffer.
        unsafe { enqueue_write_in_pieces(&mut pending, &mem, 4, &bytes, piece) }.unwrap();
        pending.wait("write").unwrap();
        read(&mut out);
        assert_eq!(out, [7.5, 0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]);
    }

    #[test]
    fn pieces_cover_every_byte_once_past_4_gib() {
        // 10 GB: the plane NVIDIA refused in one fill, and a size past 2^32.
        let bytes = 10_000_000_000usize;
        let all: Vec<_> = pieces(bytes, PIECE).collect();
        assert_eq!(all.len(), 10);
        assert_eq!(all[0], (0, 1 << 30));
        assert!(all.iter().all(|&(_, len)| len <= PIECE && len % 4 == 0));
        assert!(all.windows(2).all(|w| w[0].0 + w[0].1 == w[1].0));
        let (at, len) = *all.last().unwrap();
        assert_eq!(at + len, bytes);
        assert!(at > u32::MAX as usize);
        assert_eq!(pieces(0, PIECE).count(), 0);
        assert_eq!(pieces(7, 4).collect::<Vec<_>>(), [(0, 4), (4, 3)]);
    }
}
