//! Buffers: the frame's four planes (allocated, uploaded, poisoned and read back) and the two
//! buffers of the copy ceiling, with the untimed fill, write and read they need. Every command
//! here waits for itself before returning.

use std::ffi::c_void;
use std::ptr;

use blocksweep_core::Frame;
use opencl3::command_queue::{
    enqueue_fill_buffer, enqueue_read_buffer, enqueue_write_buffer, CL_BLOCKING,
};
use opencl3::memory::{create_buffer, CL_MEM_READ_ONLY, CL_MEM_READ_WRITE};
use opencl3::types::cl_mem_flags;

use crate::context::{wait, DeviceContext};
use crate::error::{map_alloc, map_enqueue, OpenClError};
use crate::handles::{Context, Event, Mem, Queue};

/// The four planes of one uploaded frame.
pub(crate) struct Planes {
    pub r: Mem,
    pub g: Mem,
    pub b: Mem,
    pub out: Mem,
    pub pixels: u64,
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
fn alloc(context: &Context, flags: cl_mem_flags, bytes: u64) -> Result<Mem, OpenClError> {
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
    // SAFETY: blocking read into `out`, which is exclusively borrowed for the call; the
    // buffer holds at least `size_of_val(out)` bytes.
    let raw = unsafe {
        enqueue_read_buffer(
            queue.raw(),
            mem.raw(),
            CL_BLOCKING,
            0,
            std::mem::size_of_val(out),
            out.as_mut_ptr().cast::<c_void>(),
            0,
            ptr::null(),
        )
    }
    .map_err(map_enqueue("clEnqueueReadBuffer"))?;
    drop(Event::from_raw(raw));
    Ok(())
}
