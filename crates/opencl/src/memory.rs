//! Buffers: the frame's four planes (allocated, uploaded, poisoned and read back, into the
//! caller's memory or into a mapped host buffer lent out) and the two buffers of the copy
//! ceiling, with the untimed fill, write and read they need; and the byte copies of a user's
//! kernel's buffers. Every command here waits for itself before returning.

use std::ffi::c_void;
use std::ptr::{self, NonNull};

use blocksweep_core::Frame;
use opencl3::command_queue::{
    enqueue_fill_buffer, enqueue_map_buffer, enqueue_read_buffer, enqueue_unmap_mem_object,
    enqueue_write_buffer, retain_command_queue, CL_BLOCKING,
};
use opencl3::event::wait_for_events;
use opencl3::memory::{
    create_buffer, CL_MAP_READ, CL_MAP_WRITE, CL_MEM_ALLOC_HOST_PTR, CL_MEM_READ_ONLY,
    CL_MEM_READ_WRITE,
};
use opencl3::types::{cl_mem_flags, cl_uint};

use crate::context::{wait, DeviceContext};
use crate::error::{map_alloc, map_create, map_enqueue, OpenClError};
use crate::handles::{record_release_error, Context, Event, Mem, Queue};

/// The four planes of one uploaded frame.
pub(crate) struct Planes {
    pub r: Mem,
    pub g: Mem,
    pub b: Mem,
    pub out: Mem,
    pub pixels: u64,
    /// The frame's sides, for the 2-D kernel's arguments.
    pub width: cl_uint,
    pub height: cl_uint,
    host: HostCopy,
}

/// The mapped host buffer that `read_output_lent` lends, made at its first call for a frame
/// and kept with that frame's planes.
enum HostCopy {
    Untried,
    Mapped(HostPlane),
    /// The driver refused the buffer or its mapping: nothing is lent for this frame.
    Refused,
}

impl Planes {
    /// Allocates the four planes for `frame` and writes its three inputs. The caller frees the
    /// previous frame's planes first.
    pub fn upload(ctx: &DeviceContext, frame: &Frame) -> Result<Planes, OpenClError> {
        let pixels = frame.pixels();
        if [&frame.r, &frame.g, &frame.b]
            .iter()
            .any(|p| p.len() as u64 != pixels)
        {
            return Err(OpenClError::Usage(format!(
                "frame of {} x {} = {pixels} pixels has planes of {}, {} and {} values",
                frame.width,
                frame.height,
                frame.r.len(),
                frame.g.len(),
                frame.b.len()
            )));
        }
        let bytes = pixels * 4;
        let alloc = |flags| alloc(&ctx.context, flags, bytes);
        let planes = Planes {
            r: alloc(CL_MEM_READ_ONLY)?,
            g: alloc(CL_MEM_READ_ONLY)?,
            b: alloc(CL_MEM_READ_ONLY)?,
            out: alloc(CL_MEM_READ_WRITE)?,
            pixels,
            width: frame.width,
            height: frame.height,
            host: HostCopy::Untried,
        };
        write(&ctx.queue, &planes.r, &frame.r)?;
        write(&ctx.queue, &planes.g, &frame.g)?;
        write(&ctx.queue, &planes.b, &frame.b)?;
        Ok(planes)
    }

    /// Fills the output plane with the NaN poison on the device, and waits.
    pub fn poison(&self, ctx: &DeviceContext) -> Result<(), OpenClError> {
        let poison = f32::from_bits(blocksweep_core::verify::POISON_BITS);
        fill(&ctx.queue, &self.out, poison, (self.pixels * 4) as usize)
    }

    /// Copies the whole output plane into `out`, which must hold one value per pixel.
    pub fn read_output(&self, ctx: &DeviceContext, out: &mut [f32]) -> Result<(), OpenClError> {
        if out.len() as u64 != self.pixels {
            return Err(OpenClError::Usage(format!(
                "read_output into {} pixels, but the frame on the device has {}",
                out.len(),
                self.pixels
            )));
        }
        read(&ctx.queue, &self.out, out)
    }

    /// Copies the whole output plane into a mapped host buffer this frame keeps, waits, and
    /// lends it; `None` where the driver refuses that buffer or its mapping (the caller then
    /// reads into memory of its own). A failed copy is an error.
    pub fn read_output_lent(&mut self, ctx: &DeviceContext) -> Result<Option<&[f32]>, OpenClError> {
        if let HostCopy::Untried = self.host {
            let len = self.pixels as usize;
            self.host = HostPlane::new(ctx, len).map_or(HostCopy::Refused, HostCopy::Mapped);
        }
        match &mut self.host {
            HostCopy::Mapped(host) => host.fill_from(&ctx.queue, &self.out).map(Some),
            HostCopy::Untried | HostCopy::Refused => Ok(None),
        }
    }
}

/// A buffer the driver allocates in host memory (CL_MEM_ALLOC_HOST_PTR: page-locked on
/// NVIDIA), mapped once for the host and kept mapped. A blocking clEnqueueReadBuffer whose
/// destination is this mapping is the fast path for transfers in NVIDIA's OpenCL Best
/// Practices Guide: the DMA engine writes it directly, where a read into pageable memory goes
/// through the driver's staging. Unmapped and released on drop.
struct HostPlane {
    ptr: NonNull<f32>,
    len: usize,
    // Declaration order is drop order: the buffer is released before the queue reference.
    mem: Mem,
    /// A reference of its own to the queue, which the unmap at drop is enqueued on.
    queue: Queue,
}

// SAFETY: the mapping is host memory owned by this value alone, valid until its drop unmaps
// it; the OpenCL objects may be used from any thread (see handles.rs).
unsafe impl Send for HostPlane {}

impl HostPlane {
    /// A host buffer of `len` values, mapped for reading and writing. Its values are only
    /// ever seen through [`HostPlane::fill_from`], so memory no read has written is never read.
    fn new(ctx: &DeviceContext, len: usize) -> Result<HostPlane, OpenClError> {
        let bytes = len * std::mem::size_of::<f32>();
        let flags = CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR;
        // SAFETY: no host pointer is passed; the driver allocates the memory (ALLOC_HOST_PTR).
        let raw = unsafe { create_buffer(ctx.context.raw(), flags, bytes, ptr::null_mut()) }
            .map_err(map_alloc("clCreateBuffer", bytes as u64))?;
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
                bytes,
                &mut mapped,
                0,
                ptr::null(),
            )
        }
        .map_err(map_enqueue("clEnqueueMapBuffer"))?;
        drop(Event::from_raw(event));
        let ptr = NonNull::new(mapped.cast::<f32>()).ok_or_else(|| {
            OpenClError::Usage("clEnqueueMapBuffer succeeded with a null pointer".into())
        })?;
        let plane = HostPlane {
            ptr,
            len,
            mem,
            queue,
        };
        // OpenCL maps are aligned for any built-in type (CL_DEVICE_MEM_BASE_ADDR_ALIGN);
        // checked anyway, as the slices need it. A misaligned plane is unmapped by its drop.
        if !plane.ptr.as_ptr().is_aligned() {
            return Err(OpenClError::Usage(
                "clEnqueueMapBuffer: misaligned mapping".into(),
            ));
        }
        Ok(plane)
    }

    /// Copies the whole of `src` (at least `len` values) here, waits, and lends the values.
    fn fill_from(&mut self, queue: &Queue, src: &Mem) -> Result<&[f32], OpenClError> {
        // SAFETY: the mapping holds `len` values and is borrowed mutably until the slice
        // below is made; the read is blocking.
        unsafe { read_into(queue, src, self.ptr.as_ptr(), self.len) }?;
        // SAFETY: `len` aligned f32 values, every one written by the finished read, in a
        // mapping that lives as long as `self`; the borrow of `self` keeps the next read out
        // while the slice lives.
        Ok(unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) })
    }
}

impl Drop for HostPlane {
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

/// Fills `bytes` bytes of `mem` with copies of `pattern` on the device, and waits.
fn fill(queue: &Queue, mem: &Mem, pattern: f32, bytes: usize) -> Result<(), OpenClError> {
    // SAFETY: the pattern outlives the call (the driver copies it before returning); `bytes`
    // is a multiple of its size and within the buffer.
    let raw = unsafe {
        enqueue_fill_buffer(
            queue.raw(),
            mem.raw(),
            (&pattern as *const f32).cast::<c_void>(),
            std::mem::size_of::<f32>(),
            0,
            bytes,
            0,
            ptr::null(),
        )
    }
    .map_err(map_enqueue("clEnqueueFillBuffer"))?;
    wait(&Event::from_raw(raw), "fill")
}

/// Copies `data` into the start of `mem`; returns when the copy is done.
fn write(queue: &Queue, mem: &Mem, data: &[f32]) -> Result<(), OpenClError> {
    // SAFETY: blocking write: `data` is read before the call returns, and the buffer holds at
    // least `size_of_val(data)` bytes (the caller allocated it for this frame).
    let raw = unsafe {
        enqueue_write_buffer(
            queue.raw(),
            mem.raw(),
            CL_BLOCKING,
            0,
            std::mem::size_of_val(data),
            data.as_ptr().cast::<c_void>(),
            0,
            ptr::null(),
        )
    }
    .map_err(map_enqueue("clEnqueueWriteBuffer"))?;
    drop(Event::from_raw(raw));
    Ok(())
}

/// Copies the start of `mem` into `out`; returns when the copy is done.
fn read(queue: &Queue, mem: &Mem, out: &mut [f32]) -> Result<(), OpenClError> {
    // SAFETY: `out` is exclusively borrowed for the call and holds `out.len()` values; the
    // buffer holds at least as many (the caller checked).
    unsafe { read_into(queue, mem, out.as_mut_ptr(), out.len()) }
}

/// Copies the first `len` values of `mem` to `dst`; returns when the copy is done.
///
/// # Safety
///
/// `dst` is valid for writes of `len` values, and nothing else accesses them during the call;
/// `mem` holds at least `len` values.
unsafe fn read_into(
    queue: &Queue,
    mem: &Mem,
    dst: *mut f32,
    len: usize,
) -> Result<(), OpenClError> {
    // SAFETY: a blocking read into `dst`, which the caller vouches for.
    let raw = unsafe {
        enqueue_read_buffer(
            queue.raw(),
            mem.raw(),
            CL_BLOCKING,
            0,
            len * std::mem::size_of::<f32>(),
            dst.cast::<c_void>(),
            0,
            ptr::null(),
        )
    }
    .map_err(map_enqueue("clEnqueueReadBuffer"))?;
    drop(Event::from_raw(raw));
    Ok(())
}

/// The largest piece one transfer moves: NVIDIA's driver fails single transfers above about
/// 4 GiB with its own -9999, so larger buffers go in pieces of this size.
const TRANSFER_PIECE: usize = 1 << 30;

/// Copies `data` into the start of `mem` (which holds at least as many bytes: the caller
/// checked), in blocking pieces of at most [`TRANSFER_PIECE`].
pub(crate) fn write_bytes(queue: &Queue, mem: &Mem, data: &[u8]) -> Result<(), OpenClError> {
    for at in (0..data.len()).step_by(TRANSFER_PIECE) {
        let piece = &data[at..data.len().min(at + TRANSFER_PIECE)];
        // SAFETY: a blocking write: `piece` is read before the call returns, into bytes
        // at..at + piece.len() of the buffer, which holds data.len().
        let raw = unsafe {
            enqueue_write_buffer(
                queue.raw(),
                mem.raw(),
                CL_BLOCKING,
                at,
                piece.len(),
                piece.as_ptr().cast::<c_void>(),
                0,
                ptr::null(),
            )
        }
        .map_err(map_enqueue("clEnqueueWriteBuffer"))?;
        drop(Event::from_raw(raw));
    }
    Ok(())
}

/// Copies the start of `mem` (at least `out.len()` bytes: the caller checked) into `out`, in
/// blocking pieces of at most [`TRANSFER_PIECE`].
pub(crate) fn read_bytes(queue: &Queue, mem: &Mem, out: &mut [u8]) -> Result<(), OpenClError> {
    let len = out.len();
    for at in (0..len).step_by(TRANSFER_PIECE) {
        let piece = &mut out[at..len.min(at + TRANSFER_PIECE)];
        // SAFETY: a blocking read into `piece`, exclusively borrowed for the call, from bytes
        // at..at + piece.len() of the buffer, which holds `len`.
        let raw = unsafe {
            enqueue_read_buffer(
                queue.raw(),
                mem.raw(),
                CL_BLOCKING,
                at,
                piece.len(),
                piece.as_mut_ptr().cast::<c_void>(),
                0,
                ptr::null(),
            )
        }
        .map_err(map_enqueue("clEnqueueReadBuffer"))?;
        drop(Event::from_raw(raw));
    }
    Ok(())
}
