//! Buffers: the frame's four planes (allocated, uploaded, poisoned and read back, into the
//! caller's memory or into a mapped host buffer lent out) and the two buffers of the copy
//! ceiling, with the untimed fill, write and read they need; and the byte copies of a user's
//! kernel's buffers. Every command here waits for itself before returning; fills, writes and
//! reads go in pieces (transfer.rs).

use std::ffi::c_void;
use std::ptr::{self, NonNull};

use blocksweep_core::Frame;
use opencl3::command_queue::{
    enqueue_map_buffer, enqueue_unmap_mem_object, enqueue_write_buffer, flush,
    retain_command_queue, CL_BLOCKING, CL_NON_BLOCKING,
};
use opencl3::event::wait_for_events;
use opencl3::memory::{
    create_buffer, CL_MAP_READ, CL_MAP_WRITE, CL_MEM_ALLOC_HOST_PTR, CL_MEM_READ_ONLY,
    CL_MEM_READ_WRITE,
};
use opencl3::types::{cl_mem_flags, cl_uint};

use crate::context::{wait, DeviceContext};
use crate::error::{map_alloc, map_create, map_enqueue, map_wait, OpenClError};
use crate::handles::{record_release_error, Context, Event, Mem, Queue};
use crate::transfer::{enqueue_write, fill, pieces, read_into, Pieces, PIECE};
pub(crate) use crate::transfer::{read_range, write_bytes};

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
    /// The poison kernel, built the first time a plane above 4 GiB is poisoned.
    fill: std::cell::OnceCell<crate::fill::FillKernel>,
}

/// The mapped host buffer that `read_output_staged` lends, made at upload (which stages the
/// frame through it) and kept with that frame's planes.
enum HostCopy {
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
        let mut planes = Planes {
            r: alloc(CL_MEM_READ_ONLY)?,
            g: alloc(CL_MEM_READ_ONLY)?,
            b: alloc(CL_MEM_READ_ONLY)?,
            out: alloc(CL_MEM_READ_WRITE)?,
            pixels,
            width: frame.width,
            height: frame.height,
            // The host buffer the read-back lends is made now, to stage the upload through.
            host: HostPlane::new(ctx, pixels as usize).map_or(HostCopy::Refused, HostCopy::Mapped),
            fill: std::cell::OnceCell::new(),
        };
        let inputs = [
            (&planes.r, &frame.r[..]),
            (&planes.g, &frame.g[..]),
            (&planes.b, &frame.b[..]),
        ];
        match &mut planes.host {
            HostCopy::Mapped(host) => host.stage(&ctx.queue, inputs)?,
            HostCopy::Refused => write_direct(&ctx.queue, inputs)?,
        }
        Ok(planes)
    }

    /// Fills the output plane with the NaN poison on the device, and waits: the driver's fill
    /// up to 4 GiB, a kernel of ours above (see `fill.rs`).
    pub fn poison(&self, ctx: &DeviceContext) -> Result<(), OpenClError> {
        let bits = blocksweep_core::verify::POISON_BITS;
        let bytes = self.pixels * 4;
        if bytes > crate::fill::KERNEL_FILL_ABOVE {
            if self.fill.get().is_none() {
                let k = crate::fill::FillKernel::build(ctx)?;
                let _ = self.fill.set(k);
            }
            if let Some(k) = self.fill.get() {
                return k.run(ctx, &self.out, self.pixels, bits);
            }
        }
        fill(&ctx.queue, &self.out, f32::from_bits(bits), bytes as usize)
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
        // SAFETY: `out` is exclusively borrowed for the call and holds the plane's bytes.
        unsafe {
            read_into(
                &ctx.queue,
                &self.out,
                out.as_mut_ptr().cast(),
                size_of_val(out),
            )
        }
    }

    /// Copies the whole output plane into a mapped host buffer this frame keeps, waits, and
    /// lends it; `None` where the driver refuses that buffer or its mapping (the caller then
    /// reads into memory of its own). A failed copy is an error.
    pub fn read_output_staged(
        &mut self,
        ctx: &DeviceContext,
    ) -> Result<Option<&[f32]>, OpenClError> {
        match &mut self.host {
            HostCopy::Mapped(host) => host.fill_from(&ctx.queue, &self.out).map(Some),
            HostCopy::Refused => Ok(None),
        }
    }
}

/// A buffer the driver allocates in host memory (CL_MEM_ALLOC_HOST_PTR: page-locked on
/// NVIDIA), mapped once for the host and kept mapped. A read or write whose host side is this
/// mapping is the fast path for transfers in NVIDIA's OpenCL Best
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
    /// ever read after [`HostPlane::stage`] or [`HostPlane::fill_from`] has written them.
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
        let bytes = self.len * size_of::<f32>();
        // SAFETY: the mapping holds `len` values and is borrowed mutably until the slice
        // below is made; read_into returns once every piece has landed.
        unsafe { read_into(queue, src, self.ptr.as_ptr().cast(), bytes) }?;
        // SAFETY: `len` aligned f32 values, every one written by the finished read, in a
        // mapping that lives as long as `self`; the borrow of `self` keeps the next read out
        // while the slice lives.
        Ok(unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) })
    }
}

impl HostPlane {
    /// Writes each (device plane, values) pair through this mapping: piece by piece, each
    /// copied here on every core and then written from here without blocking, so the host
    /// copies overlap the DMA of the pieces before them (a mapped, page-locked source is the
    /// fast path; NVIDIA reads pageable memory through a staging copy of its own). Each piece
    /// of the mapping is rewritten only once the write that last read it has finished.
    fn stage(&mut self, queue: &Queue, inputs: [(&Mem, &[f32]); 3]) -> Result<(), OpenClError> {
        let per_piece = PIECE / size_of::<f32>();
        let mut slots: Vec<Option<Event>> = pieces(self.len, per_piece).map(|_| None).collect();
        let mut guard = Pieces::new(queue);
        let mut last = 0;
        for (mem, data) in inputs {
            if data.len() != self.len {
                return Err(OpenClError::Usage(format!(
                    "a plane of {} values staged through a host buffer of {}",
                    data.len(),
                    self.len
                )));
            }
            for (k, (at, n)) in pieces(self.len, per_piece).enumerate() {
                if let Some(event) = slots[k].take() {
                    wait(&event, "upload")?;
                }
                // SAFETY: values at..at + n of the mapping, which no command reads now (the
                // write that last read them has finished) and which `self` owns.
                let region =
                    unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr().add(at), n) };
                blocksweep_core::frame::copy_parallel(region, &data[at..at + n]);
                // SAFETY: a non-blocking write from the region, which stays untouched until
                // its event (kept in `slots`, or finished by `guard`) says the write is done.
                let raw = unsafe {
                    enqueue_write_buffer(
                        queue.raw(),
                        mem.raw(),
                        CL_NON_BLOCKING,
                        at * size_of::<f32>(),
                        n * size_of::<f32>(),
                        region.as_ptr().cast::<c_void>(),
                        0,
                        ptr::null(),
                    )
                }
                .map_err(map_enqueue("clEnqueueWriteBuffer"))?;
                guard.enqueued();
                slots[k] = Some(Event::from_raw(raw));
                last = k;
                // Submitted now, so it runs while the next piece is copied.
                flush(queue.raw()).map_err(map_wait("clFlush", "upload"))?;
            }
        }
        if let Some(event) = slots[last].take() {
            // The queue is in order: the last write finishes after every other.
            wait(&event, "upload")?;
        }
        guard.done();
        Ok(())
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

/// The frame's three inputs written straight from the caller's memory, where no mapped host
/// buffer could be had: pieces enqueued without blocking, one wait.
fn write_direct(queue: &Queue, inputs: [(&Mem, &[f32]); 3]) -> Result<(), OpenClError> {
    let mut pending = Pieces::new(queue);
    for (mem, data) in inputs {
        // SAFETY: `data` is borrowed for this call, and `pending` waits before it returns.
        unsafe { enqueue_write(&mut pending, mem, 0, bytes_of(data)) }?;
    }
    pending.wait("upload")
}

/// The bytes of `values`.
fn bytes_of(values: &[f32]) -> &[u8] {
    // SAFETY: any f32 is four initialised bytes; u8 has no alignment; same lifetime.
    unsafe { std::slice::from_raw_parts(values.as_ptr().cast::<u8>(), size_of_val(values)) }
}
