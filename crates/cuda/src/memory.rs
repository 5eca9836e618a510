//! Device memory: the frame's four planes, upload, poison, read-back (into the caller's
//! memory, or into page-locked host memory lent out), and the copy ceiling's two buffers.
//!
//! Allocation is plain `cuMemAlloc` (no stream-ordered pools): it happens outside every timed
//! region, and it needs nothing newer than the floor. Every buffer is freed on drop.

use std::ffi::c_void;
use std::mem::size_of;
use std::ptr::NonNull;

use blocksweep_core::Frame;
use cudarc::driver::sys::CUdeviceptr;

use crate::context::Stream;
use crate::entry_points::cu;
use crate::error::{map_alloc, map_driver, CudaError, OrMap};

/// One device allocation of `bytes` bytes, freed on drop.
pub(crate) struct DeviceBuffer {
    ptr: CUdeviceptr,
    bytes: usize,
}

// SAFETY: a device pointer is an address in the context's space, valid from any thread that
// binds the context; the backend does so before every use and before dropping its fields.
unsafe impl Send for DeviceBuffer {}

impl DeviceBuffer {
    /// `bytes` of uninitialised device memory in the current context.
    pub(crate) fn alloc(bytes: usize) -> Result<Self, CudaError> {
        if bytes == 0 {
            return Err(CudaError::Usage("allocation of 0 bytes".into()));
        }
        let mut ptr: CUdeviceptr = 0;
        // SAFETY: one pointer out; a context is current.
        unsafe { cu!(cuMemAlloc_v2(&mut ptr, bytes)) }
            .map_err(|f| map_alloc(f.call, bytes as u64, f.code))?;
        Ok(DeviceBuffer { ptr, bytes })
    }

    pub(crate) fn ptr(&self) -> CUdeviceptr {
        self.ptr
    }

    pub(crate) fn bytes(&self) -> usize {
        self.bytes
    }
}

impl Drop for DeviceBuffer {
    fn drop(&mut self) {
        // SAFETY: allocated by cuMemAlloc_v2 and freed only here, with the context bound (the
        // backend binds it before its fields drop). A failed free at teardown cannot be acted
        // on, so it is ignored.
        let _ = unsafe { cu!(cuMemFree_v2(self.ptr)) };
    }
}

/// Page-locked host memory for `len` f32 values (`cuMemAllocHost`), freed on drop. The DMA
/// engine writes it directly at the bus's speed, where a copy into pageable memory goes
/// through the driver's staging (about 11 GB/s on an H200). Its values are only ever seen
/// through [`PinnedHost::values`] after [`PinnedHost::fill_from`], so memory the copy has not
/// written is never read.
struct PinnedHost {
    ptr: NonNull<f32>,
    len: usize,
    filled: bool,
}

// SAFETY: host memory owned by this value alone; the driver touches it only during the copies
// `fill_from` issues and waits for, with the backend's context bound.
unsafe impl Send for PinnedHost {}

impl PinnedHost {
    /// Page-locked memory for `len` values in the current context, or the driver's refusal
    /// (out of page-locked memory, typically).
    fn alloc(len: usize) -> Option<Self> {
        let bytes = len.checked_mul(size_of::<f32>()).filter(|&b| b > 0)?;
        let mut raw: *mut c_void = std::ptr::null_mut();
        // SAFETY: one pointer out; a context is current.
        unsafe { cu!(cuMemAllocHost_v2(&mut raw, bytes)) }.ok()?;
        // The driver's host allocations are page-aligned, so f32 alignment holds.
        let ptr = NonNull::new(raw.cast::<f32>()).filter(|p| p.as_ptr().is_aligned());
        if ptr.is_none() && !raw.is_null() {
            // SAFETY: allocated just above by cuMemAllocHost_v2 and never used.
            let _ = unsafe { cu!(cuMemFreeHost(raw)) };
        }
        Some(PinnedHost {
            ptr: ptr?,
            len,
            filled: false,
        })
    }

    /// Copies the whole of `src` here on `stream` and waits.
    fn fill_from(&mut self, src: &DeviceBuffer, stream: &Stream) -> Result<(), CudaError> {
        let bytes = self.len * size_of::<f32>();
        if src.bytes() != bytes {
            return Err(CudaError::Usage(format!(
                "a {bytes}-byte host copy of a {}-byte plane",
                src.bytes()
            )));
        }
        self.filled = false;
        // SAFETY: this memory holds exactly `bytes` bytes and is borrowed mutably until the
        // copy is waited for below; nothing else writes it.
        unsafe {
            cu!(cuMemcpyDtoHAsync_v2(
                self.ptr.as_ptr().cast::<c_void>(),
                src.ptr(),
                bytes,
                stream.raw()
            ))
        }
        .or_map(map_driver)?;
        stream.synchronize()?;
        self.filled = true;
        Ok(())
    }

    /// The values the last finished [`PinnedHost::fill_from`] wrote.
    fn values(&self) -> Option<&[f32]> {
        // SAFETY: `len` aligned f32 values, every one written by a finished copy; the borrow
        // of `self` keeps the memory alive and unwritten while the slice lives.
        self.filled
            .then(|| unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) })
    }
}

impl Drop for PinnedHost {
    fn drop(&mut self) {
        // SAFETY: allocated by cuMemAllocHost_v2 and freed only here, with the context bound
        // (the backend binds it before its fields drop); no copy into it is pending (each is
        // waited for). A failed free at teardown cannot be acted on, so it is ignored.
        let _ = unsafe { cu!(cuMemFreeHost(self.ptr.as_ptr().cast::<c_void>())) };
    }
}

/// The page-locked copy of the output plane that `read_output_staged` lends, made at its first
/// call for a frame and kept with that frame's planes.
enum HostCopy {
    Untried,
    Pinned(PinnedHost),
    /// The driver refused the memory: `read_output_staged` lends nothing for this frame.
    Refused,
}

/// Free and total device memory (`cuMemGetInfo`).
pub(crate) fn mem_get_info() -> Result<(u64, u64), CudaError> {
    let (mut free, mut total) = (0usize, 0usize);
    // SAFETY: two size_t out; a context is current.
    unsafe { cu!(cuMemGetInfo_v2(&mut free, &mut total)) }.or_map(map_driver)?;
    Ok((free as u64, total as u64))
}

/// Refuses `bytes` of new allocations that cuMemGetInfo says cannot fit.
pub(crate) fn check_free(bytes: u64, what: &str) -> Result<(), CudaError> {
    let (free, total) = mem_get_info()?;
    if bytes > free {
        return Err(CudaError::TooLarge(format!(
            "{what}; cuMemGetInfo reports {free} bytes free of {total}"
        )));
    }
    Ok(())
}

/// The frame's four planes on the device.
pub(crate) struct Planes {
    pub r: DeviceBuffer,
    pub g: DeviceBuffer,
    pub b: DeviceBuffer,
    pub out: DeviceBuffer,
    pub pixels: u64,
    host: HostCopy,
}

impl Planes {
    /// Allocates four planes for `frame` and uploads its three inputs, after checking that
    /// they fit the free memory; waits for the copies.
    pub(crate) fn upload(frame: &Frame, stream: &Stream) -> Result<Planes, CudaError> {
        let pixels = frame.pixels();
        let plane_bytes = pixels * size_of::<f32>() as u64;
        check_free(
            4 * plane_bytes,
            &format!("frame needs 4 x {plane_bytes} bytes"),
        )?;
        let len = usize::try_from(pixels)
            .map_err(|_| CudaError::TooLarge(format!("{pixels} pixels do not fit usize")))?;
        if [&frame.r, &frame.g, &frame.b]
            .iter()
            .any(|p| p.len() != len)
        {
            return Err(CudaError::Usage(format!(
                "frame planes hold {}, {}, {} values for {pixels} pixels",
                frame.r.len(),
                frame.g.len(),
                frame.b.len()
            )));
        }
        let upload = |host: &[f32]| -> Result<DeviceBuffer, CudaError> {
            let dev = DeviceBuffer::alloc(std::mem::size_of_val(host))?;
            // SAFETY: `dev` holds exactly the host slice's bytes; the host slice outlives the
            // copy because this function waits for the stream before returning.
            unsafe {
                cu!(cuMemcpyHtoDAsync_v2(
                    dev.ptr(),
                    host.as_ptr().cast::<c_void>(),
                    dev.bytes(),
                    stream.raw()
                ))
            }
            .or_map(map_driver)?;
            Ok(dev)
        };
        let planes = Planes {
            r: upload(&frame.r)?,
            g: upload(&frame.g)?,
            b: upload(&frame.b)?,
            out: DeviceBuffer::alloc(len * size_of::<f32>())?,
            pixels,
            host: HostCopy::Untried,
        };
        stream.synchronize()?;
        Ok(planes)
    }

    /// Fills the output plane with `bits` in every 32-bit word and waits.
    pub(crate) fn poison(&self, bits: u32, stream: &Stream) -> Result<(), CudaError> {
        memset_d32(stream, &self.out, bits)?;
        stream.synchronize()
    }

    /// Copies the whole output plane into `out` and waits.
    pub(crate) fn read_output(&self, out: &mut [f32], stream: &Stream) -> Result<(), CudaError> {
        if out.len() as u64 != self.pixels {
            return Err(CudaError::Usage(format!(
                "read_output into {} floats; the frame has {} pixels",
                out.len(),
                self.pixels
            )));
        }
        // SAFETY: `out` holds exactly the plane's bytes and outlives the copy (we wait below).
        unsafe {
            cu!(cuMemcpyDtoHAsync_v2(
                out.as_mut_ptr().cast::<c_void>(),
                self.out.ptr(),
                self.out.bytes(),
                stream.raw()
            ))
        }
        .or_map(map_driver)?;
        stream.synchronize()
    }

    /// Copies the whole output plane into page-locked host memory this frame keeps and
    /// waits, where the driver grants that memory (else nothing); a failed copy is an error.
    /// Split from [`Planes::staged`] so that the caller can act on an error before lending.
    pub(crate) fn fill_staged(&mut self, stream: &Stream) -> Result<(), CudaError> {
        if let HostCopy::Untried = self.host {
            let len = self.out.bytes() / size_of::<f32>();
            self.host = PinnedHost::alloc(len).map_or(HostCopy::Refused, HostCopy::Pinned);
        }
        match &mut self.host {
            HostCopy::Pinned(host) => host.fill_from(&self.out, stream),
            HostCopy::Untried | HostCopy::Refused => Ok(()),
        }
    }

    /// What the last [`Planes::fill_staged`] copied; `None` where the driver refused the memory.
    pub(crate) fn staged(&self) -> Option<&[f32]> {
        match &self.host {
            HostCopy::Pinned(host) => host.values(),
            HostCopy::Untried | HostCopy::Refused => None,
        }
    }
}

/// The copy ceiling's two buffers, kept while the size stays the same.
pub(crate) struct CopyBuffers {
    pub src: DeviceBuffer,
    pub dst: DeviceBuffer,
}

impl CopyBuffers {
    /// Two buffers of `bytes`; the source is zeroed so the timed copies read initialised
    /// memory. Waits for the memset.
    pub(crate) fn new(bytes: u64, stream: &Stream) -> Result<CopyBuffers, CudaError> {
        check_free(2 * bytes, &format!("copy needs 2 x {bytes} bytes"))?;
        let len = usize::try_from(bytes)
            .map_err(|_| CudaError::TooLarge(format!("{bytes} bytes do not fit usize")))?;
        let buffers = CopyBuffers {
            src: DeviceBuffer::alloc(len)?,
            dst: DeviceBuffer::alloc(len)?,
        };
        // SAFETY: `src` is a live allocation of `len` bytes in the current context.
        unsafe { cu!(cuMemsetD8Async(buffers.src.ptr(), 0, len, stream.raw())) }
            .or_map(map_driver)?;
        stream.synchronize()?;
        Ok(buffers)
    }

    pub(crate) fn bytes(&self) -> u64 {
        self.src.bytes() as u64
    }

    /// Issues one device-to-device copy of the whole buffer on the stream (no wait).
    pub(crate) fn copy(&self, stream: &Stream) -> Result<(), CudaError> {
        // SAFETY: both are live, distinct allocations of the same size in this context.
        unsafe {
            cu!(cuMemcpyDtoDAsync_v2(
                self.dst.ptr(),
                self.src.ptr(),
                self.src.bytes(),
                stream.raw()
            ))
        }
        .or_map(map_driver)
    }
}

/// Fills every 32-bit word of `buffer` with `value` on the stream (no wait).
fn memset_d32(stream: &Stream, buffer: &DeviceBuffer, value: u32) -> Result<(), CudaError> {
    let words = buffer.bytes() / size_of::<u32>();
    // SAFETY: the buffer holds at least `words` 32-bit words.
    unsafe { cu!(cuMemsetD32Async(buffer.ptr(), value, words, stream.raw())) }.or_map(map_driver)
}
