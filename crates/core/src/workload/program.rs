//! A user's kernel as a workload: the spec's sources built on each API, its buffers filled,
//! and every row checked twice before it is timed (docs/kernels.md, "What each check means"):
//! against the same API's output at the first size that ran (the kernel must not depend on
//! the launch), and against the first API's output (other APIs agree within the tolerance).

use std::sync::Mutex;

use super::references::{Checked, References};
use super::{guard, own, Measured, Workload};
use crate::backend::{Api, Backend, BackendError, DeviceKind, ErrorKind, GridSize, Launch, Stamps};
use crate::frame::FrameInfo;
use crate::limits::Limits;
use crate::measure::measure;
use crate::program::ProgramArg;
use crate::spec::{BufferInstance, GridMode, Instance, KernelSpec};
use crate::sweep::{
    self, measure_copy, skip_rejected, Plan, PlannedRow, ProgramInfo, RowResult, SweepConfig,
    SweepError, SweepResult, SweepRun,
};
use crate::Work;

/// One checked dispatch's buffers as read back: each written buffer whole (guard bands
/// included), and the two bands of each other buffer, in buffer order.
#[derive(Default)]
struct Readback {
    written: Vec<Vec<u8>>,
    bands: Vec<(Vec<u8>, Vec<u8>)>,
}

/// One spec at one choice of sizes, shared by every API of the run.
pub struct ProgramWorkload {
    pub spec: KernelSpec,
    pub instance: Instance,
    /// The first API's outputs, which every later API is checked against.
    pub(super) references: Mutex<References>,
}

impl ProgramWorkload {
    pub fn new(spec: KernelSpec, mut instance: Instance) -> Self {
        for a in &mut instance.args {
            if let ProgramArg::Buffer { guard, .. } = a {
                *guard = guard::GUARD;
            }
        }
        ProgramWorkload {
            spec,
            instance,
            references: Mutex::new(References::default()),
        }
    }

    fn info(&self, api: Api) -> ProgramInfo {
        let source = self
            .spec
            .sources_for(api.key())
            .map(|s| format!("{} ({}), entry {}", s.origin, s.language, s.entry))
            .unwrap_or_default();
        ProgramInfo {
            name: self.spec.name.clone(),
            spec: self.spec.file.clone(),
            sizes: self.instance.sizes.to_string(),
            source,
            checked: self
                .instance
                .written()
                .map(|b| format!("{} ({})", b.decl.name, b.decl.compare))
                .collect(),
            bytes_known: self.instance.bytes_moved.is_some(),
        }
    }

    /// The launch of one planned row: the data grid where the kernel needs one work item per
    /// element, else the plan's, capped at the spec's `max_grid`.
    fn launch(&self, planned: &PlannedRow) -> Result<Launch, String> {
        let b = planned.block;
        let grid = match self.instance.grid {
            GridMode::Data => self.data_grid(b).ok_or_else(|| {
                format!("the grid covering the work at block {b} does not fit 32 bits")
            })?,
            GridMode::Stride => {
                let g = match self.instance.max_grid {
                    Some(cap) => planned.grid.min(cap),
                    None => planned.grid,
                };
                GridSize::linear(
                    u32::try_from(g).map_err(|_| format!("grid {g} does not fit 32 bits"))?,
                )
            }
        };
        let shared = self.instance.shared_bytes(b).map_err(|e| e.to_string())?;
        Ok(Launch::new(b, grid).with_shared(shared))
    }

    /// Makes the written buffers what a checked dispatch must start from: a poisoned output
    /// ([`own::poisoned`]) filled with `poison` bytes, so an element the kernel skips shows;
    /// every other written buffer its initial contents (a kernel that reads what it writes
    /// gets the same input every time, and a sum-compared buffer's unused slots add nothing).
    /// Guard bands around each, refilled.
    fn reset_outputs(&self, backend: &mut dyn Backend, poison: u8) -> Result<(), BackendError> {
        for b in self.instance.written() {
            let image = match own::poisoned(b) {
                true => guard::padded(&vec![poison; b.initial.len()]),
                false => guard::padded(&b.initial),
            };
            backend.write_buffer(b.decl.index, &image)?;
        }
        Ok(())
    }

    /// One dispatch from reset outputs, not checked.
    pub(super) fn unchecked_dispatch(
        &self,
        backend: &mut dyn Backend,
        launch: Launch,
    ) -> Result<(), BackendError> {
        self.reset_outputs(backend, own::POISON)?;
        backend.run_batch(Work::Kernel(launch), 1, Stamps::None)?;
        Ok(())
    }

    /// One dispatch from outputs reset with `poison`: every written buffer read back whole
    /// (bands included), and the bands of every other buffer.
    fn dispatch_and_read(
        &self,
        backend: &mut dyn Backend,
        launch: Launch,
        poison: u8,
    ) -> Result<Readback, BackendError> {
        let api = backend.api();
        let t = crate::trace::span(api.key(), "checked dispatch: reset the outputs");
        self.reset_outputs(backend, poison)?;
        t.end();
        backend.run_batch(Work::Kernel(launch), 1, Stamps::None)?;
        let _t = crate::trace::span(api.key(), "checked dispatch: read back");
        let mut read = Readback::default();
        for b in &self.instance.buffers {
            let len = b.initial.len() as u64;
            if b.decl.written {
                let mut whole = vec![0u8; (len + 2 * guard::GUARD) as usize];
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

    /// One dispatch from reset outputs, read back, checked on its own (guard bands, elements
    /// never written, NaN and Inf), then against the API's own reference; the API's first
    /// checked dispatch becomes that reference.
    pub(super) fn checked_dispatch(
        &self,
        backend: &mut dyn Backend,
        launch: Launch,
        own: &mut Option<Checked>,
    ) -> Result<Result<(), SweepError>, BackendError> {
        let api = backend.api();
        let read = self.dispatch_and_read(backend, launch, own::POISON)?;
        // The reference row of an integer output is read twice, from two poisons.
        let second = match own.is_none() && self.instance.written().any(own::needs_second_poison) {
            true => Some(self.dispatch_and_read(backend, launch, own::SECOND_POISON)?),
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
            outputs: read
                .written
                .iter()
                .map(|w| guard::data(w).to_vec())
                .collect(),
        };
        Ok(refs.check(launch, &self.instance, here, own))
    }

    /// The checks a row's output must pass on its own; `Err` says what it did, in words.
    fn row_checks(&self, read: &Readback, second: Option<&Readback>) -> Result<(), String> {
        let g = guard::GUARD as usize;
        let mut written = read.written.iter();
        let mut bands = read.bands.iter();
        for (k, b) in self.instance.buffers.iter().enumerate() {
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
            let _ = k;
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
        let never = match (own::poisoned(b), b.decl.ty.is_float(), again) {
            (false, _, _) => None,
            (true, true, _) => own::holding(b.decl.ty, data, own::POISON),
            (true, false, Some(again)) => {
                own::holding_both(b.decl.ty, data, again, (own::POISON, own::SECOND_POISON))
            }
            // A later row of an integer output: its reference showed every element written,
            // so an unwritten one shows as a difference from it.
            (true, false, None) => None,
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

    fn new_result(&self, backend: &dyn Backend, plan: &Plan, config: &SweepConfig) -> SweepResult {
        let (w, h) = self.instance.work;
        let work = FrameInfo {
            width: u32::try_from(w).unwrap_or(u32::MAX),
            height: u32::try_from(h).unwrap_or(u32::MAX),
            pixels: self.instance.work_items(),
            seed: 0,
            bytes_per_pass: self.instance.bytes_moved.unwrap_or(0.0) as u64,
        };
        let mut r = sweep::new_result(backend, work, plan, config);
        r.program = Some(self.info(backend.api()));
        r
    }

    /// Every row of `plan`: its launch, then a checked dispatch, then (where it matched) the
    /// timed batches.
    fn run_rows(
        &self,
        backend: &mut dyn Backend,
        plan: &Plan,
        how: &mut SweepRun<'_>,
        result: &mut SweepResult,
    ) -> RowResult {
        let api = backend.api();
        let protocol = how.config.protocol;
        let mut own = None;
        how.each_row(backend, plan, result, |backend, planned, row| {
            let launch = match self.launch(planned) {
                Ok(l) => l,
                Err(why) => {
                    row.skipped = Some(why);
                    return Ok(());
                }
            };
            row.grid = launch.grid.blocks();
            let dynamic = launch.shared_bytes as u64;
            let kernel = backend.kernel_facts();
            if let Some(why) = sweep::shared_violation(backend.limits(), kernel, dynamic) {
                row.skipped = Some(why);
                return Ok(());
            }
            let first = own.is_none();
            match self.checked_dispatch(backend, launch, &mut own) {
                Err(e) => return skip_rejected(api, row, e.at(launch)),
                Ok(Err(mismatch)) => return Err(mismatch),
                Ok(Ok(())) => {}
            }
            let timing =
                measure(backend, Work::Kernel(launch), &protocol).map_err(|e| e.at(launch))?;
            row.verified = !self.instance.timing_only;
            row.note = match (self.instance.timing_only, first) {
                (true, _) => Some("not checked: the spec is timing-only".into()),
                (false, true) => Some(format!(
                    "the reference: {api}'s other sizes are compared with this row's output"
                )),
                (false, false) => None,
            };
            row.gbps = self
                .instance
                .bytes_moved
                .map(|b| b / (timing.stats.mean * 1e6));
            row.timing = Some(timing);
            Ok(())
        })
    }
}

impl ProgramWorkload {
    /// The APIs whose outputs the others contradict, once every API has run.
    pub fn blames(&self) -> Vec<super::Blame> {
        let refs = self.references.lock().unwrap_or_else(|p| p.into_inner());
        refs.conclude(&self.instance)
    }
}

impl Workload for ProgramWorkload {
    fn conclude(&self) -> Vec<super::Blame> {
        self.blames()
    }

    fn describe(&self) -> String {
        format!("kernel '{}' at {}", self.spec.name, self.instance.sizes)
    }

    fn items(&self) -> u64 {
        self.instance.work_items()
    }

    fn fits(&self, limits: &Limits) -> Result<(), String> {
        for b in &self.instance.buffers {
            let bytes = b.initial.len() as u64 + 2 * guard::GUARD;
            for limit in [&limits.max_alloc_bytes, &limits.max_buffer_binding_bytes]
                .into_iter()
                .flatten()
            {
                if bytes > limit.value {
                    return Err(format!(
                        "buffer '{}' is {bytes} bytes > {} = {}",
                        b.decl.name, limit.name, limit.value
                    ));
                }
            }
        }
        Ok(())
    }

    fn check_host(&self, _apis: &[(Api, DeviceKind)]) -> Result<(), String> {
        // The buffers are made already: what remains is one read-back of each written buffer
        // and each API's first outputs, bounded by the same sizes.
        Ok(())
    }

    fn prepare(&self, backend: &mut dyn Backend) -> Result<(), BackendError> {
        let api = backend.api();
        let source = self.spec.sources_for(api.key()).ok_or_else(|| {
            BackendError::new(
                api,
                ErrorKind::Unavailable,
                format!(
                    "{} has no source for {api} (its [sources] has no '{}')",
                    self.spec.file,
                    api.key()
                ),
            )
        })?;
        backend.load_program(&source, &self.instance.args)?;
        for b in &self.instance.buffers {
            backend.write_buffer(b.decl.index, &guard::padded(&b.initial))?;
        }
        Ok(())
    }

    fn measure(
        &self,
        backend: &mut dyn Backend,
        prepared: bool,
        mut how: SweepRun<'_>,
    ) -> Measured {
        let config = how.config;
        let empty = Plan {
            rows: Vec::new(),
            policy: config.grid,
            grid_source: String::new(),
        };
        // Stopped before its first row: the API's result with no rows, and why.
        let stopped = |backend: &dyn Backend, e: BackendError| -> Measured {
            let mut r = self.new_result(backend, &empty, config);
            r.error = Some(e.message.clone());
            (r, Some(e.into()))
        };
        if !prepared {
            if let Err(e) = self.prepare(backend) {
                return stopped(backend, e);
            }
        }
        // Static shared memory over the device's limit refuses every launch: the API's
        // failure, named, before anything is dispatched.
        if let Some(why) = sweep::shared_violation(backend.limits(), backend.kernel_facts(), 0) {
            let e = BackendError::new(backend.api(), ErrorKind::LaunchRejected, why);
            return stopped(backend, e);
        }
        let plan = match how.plan(backend, self.items()) {
            Ok(p) => p,
            Err(e) => return stopped(backend, e),
        };
        let mut result = self.new_result(backend, &plan, config);
        let mut err = self.run_rows(backend, &plan, &mut how, &mut result).err();
        if err.is_none() && config.copy {
            if let Some(bytes) = self.instance.bytes_moved.filter(|b| *b >= 2.0) {
                match measure_copy(backend, (bytes / 2.0) as u64, config) {
                    Ok(c) => result.copy = Some(c),
                    Err(e) => err = Some(e.into()),
                }
            }
        }
        result.fill_relative();
        if let Some(e) = &err {
            result.error = Some(e.to_string());
        }
        (result, err)
    }
}
