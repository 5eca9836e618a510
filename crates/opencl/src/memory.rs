//! Buffers: the mapped host buffer a staged read-back lands in and is lent from, the two
//! buffers of the copy ceiling, and device allocation. Every command here waits for itself
//! before returning; fills and reads go in pieces (transfer.rs).

use std::ffi::c_void;
use std::ptr::{self, NonNull};

use opencl3::command_queue::{
    enqueue_map_buffer, enqueue_unmap_mem_object, retain_command_queue, CL_BLOCKING,
};
use opencl3::event::wait_for_events;
use opencl3::memory::{
    create_buffer, CL_MAP_READ, CL_MAP_WRITE, CL_MEM_ALLOC_HOST_PTR, CL_MEM_READ_WRITE,
};
use opencl3::types::cl_mem_flags;

use crate::context::DeviceContext;
use crate::error::{map_alloc, map_create, map_enqueue, OpenClError};
use crate::handles::{record_release_error, Context, Event, Mem, Queue};
use crate::transfer::{enqueue_write, fill, pieces, read_into, Pieces, PIECE};
pub(crate) use crate::transfer::{read_range, write_bytes};

/// Where `read_buffer_staged` lands: a mapped host buffer kept while the size stays the same.
pub(crate) enum Staging {
    Mapped(HostBuffer),
    /// The driver refused a buffer (or its mapping) of this many bytes: nothing is lent, and
    /// it is not asked again for this size.
    Refused(usize),
}

impl Staging {
    /// The staging a write of `bytes` goes through: `current` if it has that size, a new one
    /// where there is none yet; `None` (the write goes direct, `current` stays) where it has
    /// another size, so that a user kernel's writes (guard bands included) and reads (without
    /// them) do not make it again each time.
    pub fn for_write<'a>(
        current: &'a mut Option<Staging>,
        ctx: &DeviceContext,
        bytes: usize,
    ) -> Option<&'a mut HostBuffer> {
        if current.as_ref().is_none_or(|s| s.bytes() == bytes) {
            let staging = Staging::sized(current.take(), ctx, bytes);
            if let Staging::Mapped(host) = current.insert(staging) {
                return Some(host);
            }
        }
        None
    }

    /// Staging for `bytes`: `current` if it has that size, else a new mapped buffer (the old
    /// one freed first) or, where the driver refuses it, `Refused`.
    pub fn sized(current: Option<Staging>, ctx: &DeviceContext, bytes: usize) -> Staging {
        match current {
            Some(s) if s.bytes() == bytes => s,
            old => {
                drop(old);
                HostBuffer::new(ctx, bytes).map_or(Staging::Refused(bytes), Staging::Mapped)
            }
        }
    }

    fn bytes(&self) -> usize {
        match self {
            Staging::Mapped(h) => h.len,
            Staging::Refused(bytes) => *bytes,
        }
    }
}

/// A buffer the driver allocates in host memory (CL_MEM_ALLOC_HOST_PTR: page-locked on
/// NVIDIA), mapped once for the host and kept mapped. A read whose host side is this mapping
/// is the fast path for transfers in NVIDIA's OpenCL Best Practices Guide: the DMA engine
/// writes it directly, where a read into pageable memory goes through the driver's staging.
/// Unmapped and released on drop.
pub(crate) struct HostBuffer {
    ptr: NonNull<u8>,
    len: usize,
    // Declaration order is drop order: the buffer is released before the queue reference.
    mem: Mem,
    /// A reference of its own to the queue, which the unmap at drop is enqueued on.
    queue: Queue,
}

// SAFETY: the mapping is host memory owned by this value alone, valid until its drop unmaps
// it; the OpenCL objects may be used from any thread (see handles.rs).
unsafe impl Send for HostBuffer {}

impl HostBuffer {
    /// A host buffer of `len` bytes (at least one), mapped for reading and writing. Its bytes
    /// are only ever read after [`HostBuffer::fill_from`] has written them.
    fn new(ctx: &DeviceContext, len: usize) -> Result<HostBuffer, OpenClError> {
        let flags = CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR;
        // SAFETY: no host pointer is passed; the driver allocates the memory (ALLOC_HOST_PTR).
        let raw = unsafe { create_buffer(ctx.context.raw(), flags, len.max(1), ptr::null_mut()) }
            .map_err(map_alloc("clCreateBuffer", len as u64))?;
        let mem = Mem::from_raw(raw);
        // SAFETY: the queue is live; the reference taken here is given back by `Queue`'s drop.
        unsafe { retain_command_queue(ctx.queue.raw()) }
            .map_err(map_create("clRetainCommandQueue"))?;
        let queue = Queue::from_raw(ctx.queue.raw());
        let mut mapped = ptr::null_mut();
        let map = CL_MAP_READ | CL_MAP_WRITE;
        // SAFETY: blocking map of the whole buffer, which this function owns.
        let event = unsafe {
            enqueue_map_buffer(
                queue.raw(),
                mem.raw(),
                CL_BLOCKING,
                map,
                0,
                len.max(1),
                &mut mapped,
                0,
                ptr::null(),
            )
        }
        .map_err(map_enqueue("clEnqueueMapBuffer"))?;
        drop(Event::from_raw(event));
        let ptr = NonNull::new(mapped.cast::<u8>()).ok_or_else(|| {
            OpenClError::Usage("clEnqueueMapBuffer succeeded with a null pointer".into())
        })?;
        Ok(HostBuffer {
            ptr,
            len,
            mem,
            queue,
        })
    }

    /// Writes `data` (this buffer's size) into the start of `dst` through this mapping: piece
    /// by piece, each copied here on every core and then written from here without blocking,
    /// so the host copies overlap the DMA of the pieces before them (page-locked memory is
    /// NVIDIA's fast path: it reads pageable memory through a staging copy of its own). Waits.
    pub fn write_into(&mut self, dst: &Mem, data: &[u8]) -> Result<(), OpenClError> {
        if data.len() != self.len {
            return Err(OpenClError::Usage(format!(
                "{} bytes staged through a host buffer of {}",
                data.len(),
                self.len
            )));
        }
        let mut pending = Pieces::new(&self.queue);
        for (at, n) in pieces(self.len, PIECE) {
            // SAFETY: bytes at..at + n of the mapping, which `self` owns and no command uses:
            // each piece is written here once per call, and the last call waited.
            let region = unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr().add(at), n) };
            blocksweep_core::frame::copy_parallel(region, &data[at..at + n]);
            // SAFETY: the region stays untouched until `pending` has waited, below or at its
            // drop; `dst` holds the whole buffer (the caller checked its size).
            unsafe { enqueue_write(&mut pending, dst, at, region) }?;
            crate::context::flush_queue(&self.queue, "write")?;
        }
        pending.wait("write")
    }

    /// Copies `len` bytes of `src` from byte `offset` here, waits, and lends them. OpenCL maps
    /// are aligned for any built-in type (CL_DEVICE_MEM_BASE_ADDR_ALIGN), so the core can
    /// read the bytes as values in place.
    pub fn fill_from(&mut self, src: &Mem, offset: usize) -> Result<&[u8], OpenClError> {
        // SAFETY: the mapping holds `len` bytes and is borrowed mutably until the slice
        // below is made; read_into returns once every piece has landed.
        unsafe { read_into(&self.queue, src, offset, self.ptr.as_ptr(), self.len) }?;
        // SAFETY: `len` bytes, every one written by the finished read, in a mapping that
        // lives as long as `self`; the borrow of `self` keeps the next read out while the
        // slice lives.
        Ok(unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) })
    }
}

impl Drop for HostBuffer {
    fn drop(&mut self) {
        let mapped = self.ptr.as_ptr().cast::<c_void>();
        // SAFETY: `mapped` is the pointer clEnqueueMapBuffer returned for this buffer, unmapped
        // only here; nothing reads it afterwards. The unmap is waited for before the buffer is
        // released; a failure is recorded as a failed release (handles.rs).
        let unmap = unsafe {
            enqueue_unmap_mem_object(self.queue.raw(), self.mem.raw(), mapped, 0, ptr::null())
        };
        match unmap.map(Event::from_raw) {
            Ok(event) => {
                if let Err(code) = wait_for_events(&[event.raw()]) {
                    record_release_error("clWaitForEvents (unmap)", code);
                }
            }
            Err(code) => record_release_error("clEnqueueUnmapMemObject", code),
        }
    }
}

/// The two buffers of the copy ceiling, kept while the size stays the same.
pub(crate) struct CopyBuffers {
    pub src: Mem,
    pub dst: Mem,
    pub bytes: u64,
}

impl CopyBuffers {
    /// Two buffers of `bytes`, each written once, so the timed copies read initialised memory
    /// and the driver commits the pages outside the timing.
    pub fn new(ctx: &DeviceContext, bytes: u64) -> Result<CopyBuffers, OpenClError> {
        if bytes == 0 {
            return Err(OpenClError::Usage("a copy of 0 bytes".into()));
        }
        let src = alloc(&ctx.context, CL_MEM_READ_WRITE, bytes)?;
        let dst = alloc(&ctx.context, CL_MEM_READ_WRITE, bytes)?;
        let words = (bytes as usize) / 4 * 4;
        if words > 0 {
            fill(&ctx.queue, &src, 0.0, words)?;
            fill(&ctx.queue, &dst, 0.0, words)?;
        }
        Ok(CopyBuffers { src, dst, bytes })
    }
}

/// A device buffer of `bytes` bytes, uninitialised.
pub(crate) fn alloc(
    context: &Context,
    flags: cl_mem_flags,
    bytes: u64,
) -> Result<Mem, OpenClError> {
    let size = usize::try_from(bytes).map_err(|_| OpenClError::OutOfMemory {
        detail: format!("{bytes} bytes do not fit this host's size_t"),
    })?;
    // SAFETY: no host pointer is passed and the flags name none, so the driver owns the memory.
    let raw = unsafe { create_buffer(context.raw(), flags, size, ptr::null_mut()) }
        .map_err(map_alloc("clCreateBuffer", bytes))?;
    Ok(Mem::from_raw(raw))
}

/// The first OpenCL device here with a 40-byte buffer, for the crate's unit tests on a device;
/// `None` (a skip: a failure under BLOCKSWEEP_REQUIRE=opencl, else a SKIPPED line `make test`
/// counts) where there is none.
#[cfg(test)]
pub(crate) fn first_device_for_tests() -> Option<(DeviceContext, crate::handles::Mem)> {
    let Some(entry) = crate::device::enumerate("test")
        .ok()
        .and_then(|e| e.into_iter().next())
    else {
        blocksweep_conformance::skip_unavailable(crate::API, "no OpenCL device is here");
        return None;
    };
    let ctx = DeviceContext::new(crate::handles::DeviceId(entry.device)).unwrap();
    let flags = opencl3::memory::CL_MEM_READ_WRITE;
    let mem = alloc(&ctx.context, flags, 40).unwrap();
    Some((ctx, mem))
}
