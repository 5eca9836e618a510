//! The handle everything else hangs off: a device's primary context, and the one stream all
//! work goes through.
//!
//! The primary context is the one the CUDA runtime would use, so blocksweep shares it with
//! anything else in the process instead of creating a second context on the device. CUDA
//! contexts are current per thread and a backend may be moved between threads, so every
//! public entry of the backend makes its context current first ([`PrimaryContext::bind`]).

use std::ptr;

use cudarc::driver::sys::{CUcontext, CUdevice, CUstream};

use crate::entry_points::cu;
use crate::error::{map_driver, map_init, CudaError, OrMap};

/// `CU_STREAM_NON_BLOCKING`: no implicit ordering with the legacy default stream, which
/// blocksweep never uses, so nothing outside this stream can land inside a timed batch.
const STREAM_NON_BLOCKING: u32 = 1;

/// One retained reference to a device's primary context.
pub(crate) struct PrimaryContext {
    device: CUdevice,
    raw: CUcontext,
}

// SAFETY: a CUcontext may be made current on any thread (CUDA Driver API, "Context
// Management"); the backend owns this one and uses it from one thread at a time (Send, not
// Sync), binding it before each use.
unsafe impl Send for PrimaryContext {}

impl PrimaryContext {
    /// Retains `device`'s primary context (creating it on first use) and makes it current.
    /// `driver` names the driver in a start-up failure's message.
    pub(crate) fn retain(device: CUdevice, driver: &str) -> Result<Self, CudaError> {
        let mut raw: CUcontext = ptr::null_mut();
        // SAFETY: `device` came from cuDeviceGet; one int-sized out-parameter.
        unsafe { cu!(cuDevicePrimaryCtxRetain(&mut raw, device)) }
            .map_err(|f| map_init(f.call, driver, f.code))?;
        let ctx = PrimaryContext { device, raw };
        ctx.bind()?;
        Ok(ctx)
    }

    /// Makes this context current on the calling thread.
    pub(crate) fn bind(&self) -> Result<(), CudaError> {
        // SAFETY: the context is retained until drop.
        unsafe { cu!(cuCtxSetCurrent(self.raw)) }.or_map(map_driver)
    }

    pub(crate) fn device(&self) -> CUdevice {
        self.device
    }
}

impl Drop for PrimaryContext {
    fn drop(&mut self) {
        // SAFETY: releases the one reference `retain` took. A failure here (the driver shut
        // down first at process exit) leaves nothing to clean up, so it is ignored.
        let _ = unsafe { cu!(cuDevicePrimaryCtxRelease_v2(self.device)) };
    }
}

/// A stream of the current context, destroyed on drop.
pub(crate) struct Stream {
    raw: CUstream,
}

// SAFETY: as for the context: used from one thread at a time, with its context bound.
unsafe impl Send for Stream {}

impl Stream {
    /// A non-blocking stream in the current context.
    pub(crate) fn new() -> Result<Self, CudaError> {
        let mut raw: CUstream = ptr::null_mut();
        // SAFETY: one pointer-sized out-parameter; a context is current (PrimaryContext::retain).
        unsafe { cu!(cuStreamCreate(&mut raw, STREAM_NON_BLOCKING)) }.or_map(map_driver)?;
        Ok(Stream { raw })
    }

    pub(crate) fn raw(&self) -> CUstream {
        self.raw
    }

    /// Waits for everything issued on the stream, and reports a kernel fault if one happened.
    pub(crate) fn synchronize(&self) -> Result<(), CudaError> {
        // SAFETY: the stream is live until drop.
        unsafe { cu!(cuStreamSynchronize(self.raw)) }.or_map(map_driver)
    }
}

impl Drop for Stream {
    fn drop(&mut self) {
        // SAFETY: created by cuStreamCreate and destroyed only here; the backend binds its
        // context before its fields drop. Pending work completes before the stream goes
        // (cuStreamDestroy's contract), and a failure leaves nothing to clean up.
        let _ = unsafe { cu!(cuStreamDestroy_v2(self.raw)) };
    }
}
