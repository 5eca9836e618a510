//! A user kernel's check of one dispatch ([`KernelCheck`], run by the one checked dispatch,
//! `sweep::checked_dispatch`): outputs reset (poisoned or restored) inside fresh guard bands;
//! after the launch, every written buffer read back whole and every other buffer's bands, then
//! the row's own checks ([`super::guard`], [`super::own`]) before the comparison with the
//! API's reference. Reset, dispatch and read-back are one [`Backend::run_checked`], so a
//! worker process answers a checked dispatch in one request.

use super::diagnosis::OwnRows;
use super::program::ProgramWorkload;
use super::references::Checked;
use super::{guard, own};
use crate::backend::{Backend, BackendError, CheckedRun, Dispatch, ErrorKind, Launch, Reset, Span};
use crate::spec::BufferInstance;
use crate::sweep::{Matched, OutputCheck, RowFault, SweepError};

/// What a row's own checks found: the fault, in words, and the written buffer it left wholly
/// unwritten, where it did (the inputs are then read back for a hint).
type Fault = (RowFault, String, Option<String>);

/// What elements left unwritten say of a launch, unless an input changed instead.
const NOT_REACHED: &str = ": the kernel does not reach every element at this launch";

/// One checked dispatch's buffers as read back: each written buffer whole (guard bands
/// included), and the two bands of each other buffer, in buffer order.
#[derive(Default)]
struct Readback {
    written: Vec<Vec<u8>>,
    bands: Vec<(Vec<u8>, Vec<u8>)>,
}

/// A user kernel's check of one dispatch ([`OutputCheck`]): its outputs reset inside fresh
/// guard bands, then read back and checked on their own and against the API's reference
/// (`own`, its first checked dispatch's outputs). A kernel may read what it writes, so it
/// is checked from reset outputs before it is timed. Reset, dispatch and read-back are one
/// [`Backend::run_checked`] (one request to a worker process).
pub(super) struct KernelCheck<'a> {
    work: &'a ProgramWorkload,
    own: &'a mut OwnRows,
    /// Whether the output says anything of the launch: `false` resets and dispatches only
    /// (`validate --kernel` of a launch whose threads repeat each other's work).
    reads_output: bool,
    /// What the last dispatch left, read back with it, for [`OutputCheck::verify`].
    read: Option<Readback>,
}

impl<'a> KernelCheck<'a> {
    pub(super) fn new(
        work: &'a ProgramWorkload,
        own: &'a mut OwnRows,
        reads_output: bool,
    ) -> KernelCheck<'a> {
        KernelCheck {
            work,
            own,
            reads_output,
            read: None,
        }
    }
}

impl OutputCheck for KernelCheck<'_> {
    type Wrong = SweepError;

    fn reset(&mut self, backend: &mut dyn Backend) -> Result<(), BackendError> {
        self.read = None;
        let images = self.work.images();
        let run = self.work.run(&images, own::POISON, None, false);
        backend
            .run_checked(&run, &mut [])
            .and_then(|nothing_dispatched| nothing_dispatched)
    }

    fn reset_and_dispatch(
        &mut self,
        backend: &mut dyn Backend,
        launch: Launch,
    ) -> Result<Dispatch, BackendError> {
        self.read = None;
        let (dispatched, read) =
            (self.work).checked_run(backend, launch, own::POISON, self.reads_output)?;
        self.read = read;
        Ok(dispatched)
    }

    fn verify(
        &mut self,
        backend: &mut dyn Backend,
        launch: Launch,
    ) -> Result<Matched<SweepError>, SweepError> {
        match (self.reads_output, self.read.take()) {
            (true, Some(read)) => Ok(self.work.verify_output(backend, launch, self.own, read)?),
            (true, None) => {
                let why = "a checked dispatch's output was verified without being read back";
                Err(BackendError::new(backend.api(), ErrorKind::Driver, why).into())
            }
            (false, _) => Ok(Ok(())),
        }
    }

    fn checks_timed_output(&self) -> bool {
        false
    }
}

impl ProgramWorkload {
    /// The whole allocation each written buffer that is not poisoned starts from: its initial
    /// contents between fresh bands (a kernel that reads what it writes gets the same input
    /// every time, and a sum-compared buffer's unused slots add nothing).
    fn images(&self) -> Vec<(usize, Vec<u8>)> {
        (self.instance.written())
            .filter(|b| !own::poisoned(b))
            .map(|b| (b.decl.index, guard::padded(&b.initial)))
            .collect()
    }

    /// A checked dispatch of `launch` (none: a reset alone) as one [`CheckedRun`]: a poisoned
    /// output ([`own::poisoned`]) filled with `poison` bytes inside fresh bands, so an element
    /// the kernel skips shows; every other written buffer written as `images` holds; then, if
    /// `reads`, every written buffer read back whole and both bands of every other buffer.
    fn run<'i>(
        &self,
        images: &'i [(usize, Vec<u8>)],
        poison: u8,
        launch: Option<Launch>,
        reads: bool,
    ) -> CheckedRun<'i> {
        let fills = (self.instance.written())
            .filter(|b| own::poisoned(b))
            .map(|b| Reset::Fill {
                arg: b.decl.index,
                fills: guard::fills(b.initial.len() as u64, poison),
            });
        let writes = (images.iter()).map(|(arg, bytes)| Reset::Write { arg: *arg, bytes });
        let resets = fills.chain(writes).collect();
        let mut spans = Vec::new();
        for b in self.instance.buffers.iter().filter(|_| reads) {
            let (arg, len) = (b.decl.index, b.initial.len() as u64);
            match b.decl.written {
                true => spans.push(Span {
                    arg,
                    offset: 0,
                    len: guard::allocated(len),
                }),
                false => spans.extend([0, guard::GUARD + len].map(|offset| Span {
                    arg,
                    offset,
                    len: guard::GUARD,
                })),
            }
        }
        CheckedRun {
            resets,
            launch,
            reads: spans,
        }
    }

    /// Outputs reset with `poison`, `launch` dispatched once untimed, and (where `reads`)
    /// the buffers read back ([`Self::run`]), in one call: the dispatch's own failure, and
    /// what was read.
    fn checked_run(
        &self,
        backend: &mut dyn Backend,
        launch: Launch,
        poison: u8,
        reads: bool,
    ) -> Result<(Dispatch, Option<Readback>), BackendError> {
        let _t = crate::trace::span(
            backend.api().key(),
            "checked dispatch: reset, dispatch, read back",
        );
        let images = self.images();
        let run = self.run(&images, poison, Some(launch), reads);
        let mut out: Vec<Vec<u8>> = run.reads.iter().map(|s| self.read_buffer(s.len)).collect();
        if let Err(e) = backend.run_checked(&run, &mut out)? {
            return Ok((Err(e), None));
        }
        Ok((Ok(()), reads.then(|| self.readback(out))))
    }

    /// The reads of [`Self::run`] sorted back into their buffers.
    fn readback(&self, out: Vec<Vec<u8>>) -> Readback {
        let mut read = Readback::default();
        let mut out = out.into_iter();
        for b in &self.instance.buffers {
            match b.decl.written {
                true => read.written.extend(out.next()),
                false => {
                    if let (Some(lead), Some(tail)) = (out.next(), out.next()) {
                        read.bands.push((lead, tail));
                    }
                }
            }
        }
        read
    }

    /// The dispatch's output as `read` back, checked on its own (guard bands, elements never
    /// written, NaN and Inf), then against the API's own reference; the API's first checked
    /// dispatch becomes that reference.
    fn verify_output(
        &self,
        backend: &mut dyn Backend,
        launch: Launch,
        own: &mut OwnRows,
        read: Readback,
    ) -> Result<Result<(), SweepError>, BackendError> {
        let api = backend.api();
        // Elements that hold the poison after the dispatch were never written, or were
        // written with the poison's bits (an integer -1, a NaN carried over from something
        // the kernel read): the same dispatch from a second poison tells the two apart.
        let suspect = self.instance.written().zip(&read.written).any(|(b, w)| {
            own::poisoned(b) && own::holding(b.decl.ty, guard::data(w), own::POISON).is_some()
        });
        let second = match suspect {
            true => {
                let (dispatched, again) =
                    self.checked_run(backend, launch, own::SECOND_POISON, true)?;
                dispatched?;
                again
            }
            false => None,
        };
        let _t = crate::trace::span(api.key(), "checked dispatch: compare");
        let mut refs = self.references.lock().unwrap_or_else(|p| p.into_inner());
        if let Err((fault, mut detail, wholly)) = self.row_checks(&read, second.as_ref()) {
            refs.fail(api);
            if let Some(hint) = wholly.and_then(|b| self.argument_order_hint(backend, &b)) {
                // Not a launch that falls short: the kernel wrote elsewhere.
                detail = detail.replacen(NOT_REACHED, "", 1) + &hint;
            }
            return Ok(Err(SweepError::Row {
                api,
                block: launch.block,
                grid: launch.grid.to_string(),
                fault,
                detail,
            }));
        }
        let here = Checked {
            api,
            block: launch.block,
            grid: launch.grid.to_string(),
            outputs: std::sync::Arc::new(
                read.written
                    .into_iter()
                    .map(guard::Output::banded)
                    .collect(),
            ),
        };
        Ok(match refs.check(launch, &self.instance, here, own) {
            Ok(done) => {
                let mut spare = self.spare.lock().unwrap_or_else(|p| p.into_inner());
                // Unshared outputs only: the first row's are the API's reference.
                let unshared = done.and_then(|c| std::sync::Arc::try_unwrap(c.outputs).ok());
                spare.extend(
                    unshared
                        .into_iter()
                        .flatten()
                        .map(guard::Output::into_whole),
                );
                Ok(())
            }
            Err(e) => Err(e),
        })
    }

    /// A buffer of `len` bytes for a read-back: a spare of that length (its bytes are all
    /// overwritten by the read), else a new one.
    fn read_buffer(&self, len: u64) -> Vec<u8> {
        let mut spare = self.spare.lock().unwrap_or_else(|p| p.into_inner());
        match spare.iter().position(|b| b.len() as u64 == len) {
            Some(i) => spare.swap_remove(i),
            None => vec![0u8; len as usize],
        }
    }

    /// The checks a row's output must pass on its own; `Err` says what it did, in words.
    fn row_checks(&self, read: &Readback, second: Option<&Readback>) -> Result<(), Fault> {
        let lost = |m: &str| (RowFault::Unwritten, m.to_string(), None);
        let g = guard::GUARD as usize;
        let mut written = read.written.iter();
        let mut bands = read.bands.iter();
        for b in &self.instance.buffers {
            let (lead, tail) = match b.decl.written {
                true => {
                    let w = written
                        .next()
                        .ok_or_else(|| lost("a written buffer was not read"))?;
                    (&w[..g], &w[w.len() - g..])
                }
                false => {
                    let (l, t) = bands
                        .next()
                        .ok_or_else(|| lost("a buffer's bands were not read"))?;
                    (&l[..], &t[..])
                }
            };
            if let Some(breach) = guard::breach(b.decl.ty, b.elements, lead, tail) {
                let detail = breach.describe(&b.decl.name, b.elements);
                return Err((RowFault::OutOfBounds, detail, None));
            }
        }
        let seconds = second.map(|s| s.written.iter());
        let mut seconds = seconds.into_iter().flatten();
        for (b, whole) in self.instance.written().zip(&read.written) {
            let data = guard::data(whole);
            let again = seconds.next().map(|w| guard::data(w));
            self.own_checks(b, data, again)?;
        }
        Ok(())
    }

    /// Elements never written and non-finite values of one written buffer.
    fn own_checks(
        &self,
        b: &BufferInstance,
        data: &[u8],
        again: Option<&[u8]>,
    ) -> Result<(), Fault> {
        let name = &b.decl.name;
        let never = match (own::poisoned(b), again) {
            (true, Some(again)) => {
                own::holding_both(b.decl.ty, data, again, (own::POISON, own::SECOND_POISON))
            }
            _ => None,
        };
        if let Some((n, first)) = never {
            let detail = format!(
                "left {n} of {} elements of '{name}' unwritten (they still hold the poison; \
                 first at index {first}){NOT_REACHED}",
                b.elements
            );
            let wholly = (n == b.elements).then(|| name.clone());
            return Err((RowFault::Unwritten, detail, wholly));
        }
        if b.decl.ty.is_float() && !self.instance.nonfinite_allowed {
            let skip = own::poisoned(b).then_some(own::POISON);
            if let Some(found) = own::nonfinite(b.decl.ty, data, skip) {
                let detail = format!(
                    "{}; a spec whose outputs may hold them says [check] nonfinite = \"allowed\"",
                    found.describe(name, b.elements)
                );
                return Err((RowFault::NonFinite, detail, None));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
#[path = "dispatch_tests.rs"]
mod tests;
