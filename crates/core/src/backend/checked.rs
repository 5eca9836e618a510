//! A checked dispatch's device side as one call ([`super::Backend::run_checked`]): buffers
//! reset, the launch dispatched once untimed, byte ranges read back. In one process it is the
//! calls it is made of ([`run_checked`]); a worker's backend sends it as one request, so a
//! check costs one round trip instead of one per buffer and band.

use serde::{Deserialize, Serialize};

use super::{Backend, BackendError, BackendResult, Fill, Launch, Stamps, Work};

/// One buffer made what a checked dispatch starts from.
#[derive(Debug, Clone, PartialEq)]
pub enum Reset<'a> {
    /// Set on the device by `fills`, which cover the allocation from its start (bands
    /// included); where the backend cannot fill, the bytes they describe are written instead.
    Fill { arg: usize, fills: Vec<Fill> },
    /// The whole allocation written with `bytes`.
    Write { arg: usize, bytes: &'a [u8] },
}

/// A byte range of the buffer of argument `arg`, from the start of its allocation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Span {
    pub arg: usize,
    pub offset: u64,
    pub len: u64,
}

/// What one [`super::Backend::run_checked`] does, in this order: every reset, then `launch`
/// dispatched once without timestamps (none: nothing dispatched), then every read.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckedRun<'a> {
    pub resets: Vec<Reset<'a>>,
    pub launch: Option<Launch>,
    pub reads: Vec<Span>,
}

/// How far a [`CheckedRun`] went: `Ok` with every read done, or the dispatch's own error
/// (a refusal, a fault), after which nothing was read. A failed reset or read is the call's
/// `Err`, as it was of the call it replaces.
pub type Dispatch = Result<(), BackendError>;

/// The bytes `fills` describe, as one allocation (for a backend that cannot fill).
pub fn image(fills: &[Fill]) -> Vec<u8> {
    let end = fills.iter().map(|f| f.offset + f.len).max().unwrap_or(0);
    let mut bytes = vec![0u8; end as usize];
    for f in fills {
        bytes[f.offset as usize..(f.offset + f.len) as usize].fill(f.byte);
    }
    bytes
}

/// Applies each reset: a fill where the backend fills, else a write.
pub fn reset<B: Backend + ?Sized>(backend: &mut B, resets: &[Reset]) -> BackendResult<()> {
    for r in resets {
        match r {
            Reset::Fill { arg, fills } => {
                if !backend.fill_buffer(*arg, fills)? {
                    backend.write_buffer(*arg, &image(fills))?;
                }
            }
            Reset::Write { arg, bytes } => backend.write_buffer(*arg, bytes)?,
        }
    }
    Ok(())
}

/// The launch dispatched once, untimed; nothing where there is none.
pub fn dispatch<B: Backend + ?Sized>(backend: &mut B, launch: Option<Launch>) -> Dispatch {
    match launch {
        Some(l) => backend
            .run_batch(Work::Kernel(l), 1, Stamps::None)
            .map(|_| ()),
        None => Ok(()),
    }
}

/// Reads below this go straight through `read_buffer`; above it, a whole allocation's kernel
/// part is worth lending (a band is a few KiB; an output, megabytes).
const STAGED_FROM: u64 = 1 << 20;

/// Reads `span` into `out` (its length): a whole allocation of a large buffer through the
/// backend's own staging ([`super::Backend::read_buffer_staged`]: pinned or mapped memory,
/// copied out on every core) with its two bands read apart; anything else, or where nothing is
/// lent, through `read_buffer`. A 33 MB output read into pageable memory cost a checked
/// dispatch most of its time.
pub fn read_span<B: Backend + ?Sized>(
    backend: &mut B,
    span: Span,
    out: &mut [u8],
) -> BackendResult<()> {
    if span.offset == 0 && span.len >= STAGED_FROM {
        if let Some(view) = backend.read_buffer_staged(span.arg)? {
            let (len, whole) = (view.len() as u64, span.len);
            // The allocation is band, kernel part, band: equal bands on either side.
            if len <= whole && (whole - len) % 2 == 0 {
                let g = ((whole - len) / 2) as usize;
                crate::parallel::copy_parallel(&mut out[g..g + view.len()], view);
                let tail = g + len as usize;
                if g > 0 {
                    backend.read_buffer(span.arg, 0, &mut out[..g])?;
                    backend.read_buffer(span.arg, tail as u64, &mut out[tail..])?;
                }
                return Ok(());
            }
        }
    }
    backend.read_buffer(span.arg, span.offset, out)
}

/// [`super::Backend::run_checked`] in terms of the backend's other calls: `out[i]` receives
/// `run.reads[i]` (each sized by the caller to its span's length).
pub fn run_checked<B: Backend + ?Sized>(
    backend: &mut B,
    run: &CheckedRun,
    out: &mut [Vec<u8>],
) -> BackendResult<Dispatch> {
    reset(backend, &run.resets)?;
    if let Err(e) = dispatch(backend, run.launch) {
        return Ok(Err(e));
    }
    for (span, out) in run.reads.iter().zip(out) {
        read_span(backend, *span, out)?;
    }
    Ok(Ok(()))
}
