//! Device memory: the frame's four planes, upload, poison, read-back, and the copy
//! ceiling's two buffers.
//!
//! Allocation is plain `cuMemAlloc` (no stream-ordered pools): it happens outside every timed
//! region, and it needs nothing newer than the floor. Every buffer is freed on drop.

use std::ffi::c_void;
use std::mem::size_of;

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
