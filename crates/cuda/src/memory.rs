//! Device memory: a program's buffers and the copies in and out of them, the page-locked host
//! memory a staged read-back lends, and the copy ceiling's two buffers.
//!
//! Allocation is plain `cuMemAlloc` (no stream-ordered pools): it happens outside every timed
//! region, and it needs nothing newer than the floor. Every buffer is freed on drop.

use std::ffi::c_void;
use std::ptr::NonNull;

use blocksweep_core::{Fill, ProgramArg};
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

/// A program's device buffers, one per argument (`None` for a scalar or local one), each with
/// its guard band's size: the kernel's part starts `guard` bytes in.
pub(crate) struct Buffers {
    slots: Vec<Option<(DeviceBuffer, u64)>>,
}

impl Buffers {
    /// One device buffer per buffer argument, after checking that they fit the free memory.
    pub(crate) fn alloc(args: &[ProgramArg]) -> Result<Buffers, CudaError> {
        let total = args
            .iter()
            .map(ProgramArg::allocation)
            .fold(0u64, u64::saturating_add);
        if total > 0 {
            check_free(total, &format!("the kernel's buffers need {total} bytes"))?;
        }
        let slots = args
            .iter()
            .enumerate()
            .map(|(arg, a)| match *a {
                ProgramArg::Buffer { bytes: 0, .. } => Err(CudaError::Usage(format!(
                    "argument {arg}: a buffer of 0 bytes"
                ))),
                ProgramArg::Buffer { guard, .. } => {
                    let bytes = a.allocation();
                    let len = usize::try_from(bytes).map_err(|_| {
                        CudaError::TooLarge(format!(
                            "argument {arg}: {bytes} bytes do not fit usize"
                        ))
                    })?;
                    Ok(Some((DeviceBuffer::alloc(len)?, guard)))
                }
                _ => Ok(None),
            })
            .collect::<Result<_, _>>()?;
        Ok(Buffers { slots })
    }

    /// Each argument's device pointer as the kernel sees it (past the guard band), where it
    /// is a buffer.
    pub(crate) fn kernel_pointers(&self) -> Vec<Option<CUdeviceptr>> {
        let at = |(b, guard): &(DeviceBuffer, u64)| b.ptr() + guard;
        self.slots.iter().map(|s| s.as_ref().map(at)).collect()
    }

    /// The kernel's part of argument `arg`'s buffer: its device pointer and length, the guard
    /// bands left out.
    pub(crate) fn kernel_part(&self, arg: usize) -> Result<(CUdeviceptr, usize), CudaError> {
        let buf = self.buffer(arg, None, "read_buffer_staged")?;
        let guard = self.slots[arg].as_ref().map_or(0, |s| s.1);
        // Below usize: the allocation, guards included, fits one.
        Ok((buf.ptr() + guard, buf.bytes() - 2 * guard as usize))
    }

    /// Enqueues a copy of `bytes` (the whole buffer) into argument `arg`'s buffer. From
    /// pageable memory the driver returns once `bytes` is staged (CUDA's "API synchronization
    /// behavior"), so `bytes` is not read after this returns; the caller waits for the copy.
    pub(crate) fn write(&self, arg: usize, bytes: &[u8], stream: &Stream) -> Result<(), CudaError> {
        let buf = self.buffer(arg, Some(bytes.len()), "write_buffer")?;
        // SAFETY: `buf` holds exactly `bytes.len()` bytes; the source is staged before return.
        unsafe {
            cu!(cuMemcpyHtoDAsync_v2(
                buf.ptr(),
                bytes.as_ptr().cast::<c_void>(),
                bytes.len(),
                stream.raw()
            ))
        }
        .or_map(map_driver)
    }

    /// The device address of argument `arg`'s whole buffer, for a write of `len` bytes (which
    /// must fill it).
    pub(crate) fn whole(&self, arg: usize, len: usize) -> Result<CUdeviceptr, CudaError> {
        Ok(self.buffer(arg, Some(len), "write_buffer")?.ptr())
    }

    /// Enqueues each of `fills` in argument `arg`'s buffer (cuMemsetD8Async), after checking
    /// them all; the caller waits for them, once.
    pub(crate) fn fill(
        &self,
        arg: usize,
        fills: &[Fill],
        stream: &Stream,
    ) -> Result<(), CudaError> {
        let buf = self.buffer(arg, None, "fill_buffer")?;
        let size = buf.bytes() as u64;
        if let Some(f) = fills
            .iter()
            .find(|f| f.offset.checked_add(f.len).is_none_or(|e| e > size))
        {
            return Err(CudaError::Usage(format!(
                "fill_buffer({arg}): {} bytes at {} of a {size}-byte buffer",
                f.len, f.offset
            )));
        }
        for f in fills {
            // SAFETY: the range lies in the buffer (checked above).
            unsafe {
                cu!(cuMemsetD8Async(
                    buf.ptr() + f.offset,
                    f.byte,
                    f.len as usize,
                    stream.raw()
                ))
            }
            .or_map(map_driver)?;
        }
        Ok(())
    }

    /// Copies `out.len()` bytes of argument `arg`'s buffer from `offset` into `out`. Into
    /// pageable memory the driver returns only once the copy has completed, so `out` is not
    /// written after this returns.
    pub(crate) fn read(
        &self,
        arg: usize,
        offset: u64,
        out: &mut [u8],
        stream: &Stream,
    ) -> Result<(), CudaError> {
        let buf = self.buffer(arg, None, "read_buffer")?;
        let end = offset.checked_add(out.len() as u64);
        if end.is_none_or(|e| e > buf.bytes() as u64) {
            return Err(CudaError::Usage(format!(
                "read_buffer({arg}): {} bytes at {offset} of a {}-byte buffer",
                out.len(),
                buf.bytes()
            )));
        }
        // SAFETY: the range [offset, offset + out.len()) lies in the buffer (checked above);
        // `out` is complete on return (above).
        unsafe {
            cu!(cuMemcpyDtoHAsync_v2(
                out.as_mut_ptr().cast::<c_void>(),
                buf.ptr() + offset,
                out.len(),
                stream.raw()
            ))
        }
        .or_map(map_driver)
    }

    /// Argument `arg`'s buffer, if it is a buffer (of `len` bytes, where given).
    fn buffer(
        &self,
        arg: usize,
        len: Option<usize>,
        call: &str,
    ) -> Result<&DeviceBuffer, CudaError> {
        let buf = match self.slots.get(arg) {
            Some(Some((buf, _))) => buf,
            Some(None) => {
                return Err(CudaError::Usage(format!(
                    "{call}({arg}): argument {arg} is not a buffer"
                )))
            }
            None => {
                return Err(CudaError::Usage(format!(
                    "{call}({arg}): the kernel has {} arguments",
                    self.slots.len()
                )))
            }
        };
        if let Some(len) = len.filter(|&l| l != buf.bytes()) {
            return Err(CudaError::Usage(format!(
                "{call}({arg}): {len} bytes for a {}-byte buffer",
                buf.bytes()
            )));
        }
        Ok(buf)
    }
}

/// The piece a staged write copies on the host while the one before it crosses the bus.
const WRITE_PIECE: usize = 64 << 20;

/// `len` bytes of page-locked host memory (`cuMemAllocHost`), freed on drop. The DMA engine
/// writes it directly at the bus's speed, where a copy into pageable memory goes through the
/// driver's staging (about 11 GB/s on an H200).
struct PinnedHost {
    ptr: NonNull<u8>,
    len: usize,
}

// SAFETY: host memory owned by this value alone; the driver touches it only during the copies
// `Staging` issues and waits for, with the backend's context bound.
unsafe impl Send for PinnedHost {}

impl PinnedHost {
    /// `len` bytes in the current context, or `None` where the driver refuses them (out of
    /// page-locked memory, typically).
    fn alloc(len: usize) -> Option<Self> {
        let mut raw: *mut c_void = std::ptr::null_mut();
        // SAFETY: one pointer out; a context is current.
        unsafe { cu!(cuMemAllocHost_v2(&mut raw, len)) }.ok()?;
        let ptr = NonNull::new(raw.cast::<u8>())?;
        Some(PinnedHost { ptr, len })
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

/// The page-locked memory `read_buffer_staged` copies into and lends, kept while the size
/// stays the same (the sweep reads one size row after row) and reallocated when it changes.
/// Its bytes are seen only after a finished copy, so memory no copy wrote is never read.
#[derive(Default)]
pub(crate) struct Staging {
    host: Option<PinnedHost>,
    /// Whether `host` holds what the last copy wrote, all of it.
    filled: bool,
    /// A size the driver refused: not asked again until another size is.
    refused: Option<usize>,
}

impl Staging {
    /// Enqueues a copy of the `len` bytes at `src` into this memory, allocated for `len` on
    /// first use; `Ok(false)`, nothing enqueued, where the driver refuses the memory. The
    /// caller waits for the copy, then calls [`Staging::finished`].
    pub(crate) fn enqueue(
        &mut self,
        src: CUdeviceptr,
        len: usize,
        stream: &Stream,
    ) -> Result<bool, CudaError> {
        self.filled = false;
        if self.host.as_ref().is_some_and(|h| h.len != len) {
            // Free the old size first, so the new one does not count against it.
            self.host = None;
        }
        let Some(host) = self.sized(len) else {
            return Ok(false);
        };
        // SAFETY: the host memory holds exactly `len` bytes and is not read until the copy is
        // waited for (`filled` is false until then); `src` is `len` device bytes.
        unsafe {
            cu!(cuMemcpyDtoHAsync_v2(
                host.ptr.as_ptr().cast::<c_void>(),
                src,
                len,
                stream.raw()
            ))
        }
        .or_map(map_driver)?;
        Ok(true)
    }

    /// Enqueues a write of `data` into the `data.len()` device bytes at `dst` through this
    /// memory, piece by piece (each copied here on every core, then sent from here, so the
    /// host copies overlap the DMA of the pieces before them; from page-locked memory the copy
    /// runs at the bus's speed). Only where the memory has this size or there is none yet:
    /// `Ok(false)`, nothing enqueued, otherwise or where the driver refuses it. The caller
    /// waits for the copies.
    pub(crate) fn write(
        &mut self,
        dst: CUdeviceptr,
        data: &[u8],
        stream: &Stream,
    ) -> Result<bool, CudaError> {
        let len = data.len();
        self.filled = false;
        let Some(host) = self.sized(len) else {
            return Ok(false);
        };
        for at in (0..len).step_by(WRITE_PIECE) {
            let n = WRITE_PIECE.min(len - at);
            // SAFETY: bytes at..at + n of the memory, written here once per call; no copy from
            // an earlier call is pending (its caller waited for it).
            let piece = unsafe { std::slice::from_raw_parts_mut(host.ptr.as_ptr().add(at), n) };
            blocksweep_core::frame::copy_parallel(piece, &data[at..at + n]);
            // SAFETY: `n` page-locked bytes, untouched until the caller has waited; `dst`
            // holds `len` device bytes (the caller checked the buffer's size).
            unsafe {
                cu!(cuMemcpyHtoDAsync_v2(
                    dst + at as CUdeviceptr,
                    piece.as_ptr().cast::<c_void>(),
                    n,
                    stream.raw()
                ))
            }
            .or_map(map_driver)?;
        }
        Ok(true)
    }

    /// The memory, where it has `len` bytes: allocated for them where there is none (unless
    /// the driver refused that size before); `None` where it has another size or is refused.
    fn sized(&mut self, len: usize) -> Option<&PinnedHost> {
        if self.host.is_none() && self.refused != Some(len) {
            self.host = PinnedHost::alloc(len);
            self.refused = self.host.is_none().then_some(len);
        }
        self.host.as_ref().filter(|h| h.len == len)
    }

    /// Marks the copy [`Staging::enqueue`] issued as waited for.
    pub(crate) fn finished(&mut self) {
        self.filled = self.host.is_some();
    }

    /// What the last finished copy wrote.
    pub(crate) fn bytes(&self) -> Option<&[u8]> {
        let host = self.host.as_ref().filter(|_| self.filled)?;
        // SAFETY: `len` bytes, every one written by a finished copy; the borrow of `self`
        // keeps the memory alive and unwritten while the slice lives.
        Some(unsafe { std::slice::from_raw_parts(host.ptr.as_ptr(), host.len) })
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
