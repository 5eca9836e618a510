//! A user kernel's check of one dispatch ([`KernelCheck`], run by the one checked dispatch,
//! `sweep::checked_dispatch`): outputs reset (poisoned or restored) inside fresh guard bands;
//! after the launch, every written buffer read back whole and every other buffer's bands, then
//! the row's own checks ([`super::guard`], [`super::own`]) before the comparison with the
//! API's reference.

use super::program::ProgramWorkload;
use super::references::Checked;
use super::{guard, own};
use crate::backend::{Backend, BackendError, Launch, Stamps, Work};
use crate::spec::BufferInstance;
use crate::sweep::{Matched, OutputCheck, SweepError};

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
/// is checked from reset outputs before it is timed.
pub(super) struct KernelCheck<'a> {
    pub(super) work: &'a ProgramWorkload,
    pub(super) own: &'a mut Option<Checked>,
    /// Whether the output says anything of the launch: `false` resets and dispatches only
    /// (`validate --kernel` of a launch whose threads repeat each other's work).
    pub(super) reads_output: bool,
}

impl OutputCheck for KernelCheck<'_> {
    type Wrong = SweepError;

    fn reset(&mut self, backend: &mut dyn Backend) -> Result<(), BackendError> {
        match self.reads_output {
            true => self.work.reset_traced(backend, own::POISON),
            false => self.work.reset_outputs(backend, own::POISON),
        }
    }

    fn verify(
        &mut self,
        backend: &mut dyn Backend,
        launch: Launch,
    ) -> Result<Matched<SweepError>, SweepError> {
        match self.reads_output {
            true => Ok(self.work.verify_output(backend, launch, self.own)?),
            false => Ok(Ok(())),
        }
    }

    fn checks_timed_output(&self) -> bool {
        false
    }
}

impl ProgramWorkload {
    /// Makes the written buffers what a checked dispatch must start from: a poisoned output
    /// ([`own::poisoned`]) filled with `poison` bytes, so an element the kernel skips shows;
    /// every other written buffer its initial contents (a kernel that reads what it writes
    /// gets the same input every time, and a sum-compared buffer's unused slots add nothing).
    /// Guard bands around each, refilled.
    fn reset_outputs(&self, backend: &mut dyn Backend, poison: u8) -> Result<(), BackendError> {
        for b in self.instance.written() {
            let arg = b.decl.index;
            let len = b.initial.len() as u64;
            if own::poisoned(b) && guard::fill(backend, arg, len, poison)? {
                continue;
            }
            let image = match own::poisoned(b) {
                true => guard::filled(b.initial.len(), poison),
                false => guard::padded(&b.initial),
            };
            backend.write_buffer(arg, &image)?;
        }
        Ok(())
    }

    /// [`Self::reset_outputs`], traced as a checked dispatch's phase.
    fn reset_traced(&self, backend: &mut dyn Backend, poison: u8) -> Result<(), BackendError> {
        let _t = crate::trace::span(backend.api().key(), "checked dispatch: reset the outputs");
        self.reset_outputs(backend, poison)
    }

    /// Every written buffer read back whole (bands included), and the bands of every other
    /// buffer.
    fn read_back(&self, backend: &mut dyn Backend) -> Result<Readback, BackendError> {
        let _t = crate::trace::span(backend.api().key(), "checked dispatch: read back");
        let mut read = Readback::default();
        for b in &self.instance.buffers {
            let len = b.initial.len() as u64;
            if b.decl.written {
                let mut whole = vec![0u8; guard::allocated(len) as usize];
                backend.read_buffer(b.decl.index, 0, &mut whole)?;
                read.written.push(whole);
            } else {
                let mut lead = vec![0u8; guard::GUARD as usize];
                let mut tail = lead.clone();
                backend.read_buffer(b.decl.index, 0, &mut lead)?;
                backend.read_buffer(b.decl.index, guard::GUARD + len, &mut tail)?;
                read.bands.push((lead, tail));
            }
        }
        Ok(read)
    }

    /// The dispatch's output read back, checked on its own (guard bands, elements never
    /// written, NaN and Inf), then against the API's own reference; the API's first checked
    /// dispatch becomes that reference.
    fn verify_output(
        &self,
        backend: &mut dyn Backend,
        launch: Launch,
        own: &mut Option<Checked>,
    ) -> Result<Result<(), SweepError>, BackendError> {
        let api = backend.api();
        let read = self.read_back(backend)?;
        // Elements that hold the poison after the dispatch were never written, or were
        // written with the poison's bits (an integer -1, a NaN carried over from something
        // the kernel read): the same dispatch from a second poison tells the two apart.
        let suspect = self.instance.written().zip(&read.written).any(|(b, w)| {
            own::poisoned(b) && own::holding(b.decl.ty, guard::data(w), own::POISON).is_some()
        });
        let second = match suspect {
            true => {
                self.reset_traced(backend, own::SECOND_POISON)?;
                backend.run_batch(Work::Kernel(launch), 1, Stamps::None)?;
                Some(self.read_back(backend)?)
            }
            false => None,
        };
        let _t = crate::trace::span(api.key(), "checked dispatch: compare");
        let mut refs = self.references.lock().unwrap_or_else(|p| p.into_inner());
        if let Err(detail) = self.row_checks(&read, second.as_ref()) {
            refs.fail(api);
            return Ok(Err(SweepError::Row {
                api,
                block: launch.block,
                grid: launch.grid.to_string(),
                detail,
            }));
        }
        let here = Checked {
            api,
            block: launch.block,
            grid: launch.grid.to_string(),
            outputs: read.written.into_iter().map(guard::into_data).collect(),
        };
        Ok(refs.check(launch, &self.instance, here, own))
    }

    /// The checks a row's output must pass on its own; `Err` says what it did, in words.
    fn row_checks(&self, read: &Readback, second: Option<&Readback>) -> Result<(), String> {
        let g = guard::GUARD as usize;
        let mut written = read.written.iter();
        let mut bands = read.bands.iter();
        for b in &self.instance.buffers {
            let (lead, tail) = match b.decl.written {
                true => {
                    let w = written.next().ok_or("a written buffer was not read")?;
                    (&w[..g], &w[w.len() - g..])
                }
                false => {
                    let (l, t) = bands.next().ok_or("a buffer's bands were not read")?;
                    (&l[..], &t[..])
                }
            };
            if let Some(breach) = guard::breach(b.decl.ty, b.elements, lead, tail) {
                return Err(breach.describe(&b.decl.name, b.elements));
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
    ) -> Result<(), String> {
        let name = &b.decl.name;
        let never = match (own::poisoned(b), again) {
            (true, Some(again)) => {
                own::holding_both(b.decl.ty, data, again, (own::POISON, own::SECOND_POISON))
            }
            _ => None,
        };
        if let Some((n, first)) = never {
            return Err(format!(
                "left {n} of {} elements of '{name}' unwritten (they still hold the poison; \
                 first at index {first}): the kernel does not reach every element at this \
                 launch",
                b.elements
            ));
        }
        if b.decl.ty.is_float() && !self.instance.nonfinite_allowed {
            let skip = own::poisoned(b).then_some(own::POISON);
            if let Some(found) = own::nonfinite(b.decl.ty, data, skip) {
                return Err(format!(
                    "{}; a spec whose outputs may hold them says [check] nonfinite = \"allowed\"",
                    found.describe(name, b.elements)
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
#[path = "dispatch_tests.rs"]
mod tests;
