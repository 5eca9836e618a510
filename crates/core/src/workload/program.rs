//! A user's kernel as a workload: the spec's sources built on each API, its buffers filled,
//! and every row checked twice before it is timed (docs/kernels.md, "What each check means"):
//! against the same API's output at the first size that ran (the kernel must not depend on
//! the launch), and against the first API's output (other APIs agree within the tolerance).

use std::sync::Mutex;

use super::diagnosis::{self, OwnRows};
use super::dispatch::KernelCheck;
use super::references::References;
use super::{guard, Swept};
use crate::backend::{Api, Backend, BackendError, DeviceKind, ErrorKind, GridSize, Launch};
use crate::frame::FrameInfo;
use crate::limits::Limits;
use crate::measure::Timing;
use crate::program::ProgramArg;
use crate::spec::{GridMode, Instance, KernelSpec};
use crate::sweep::{
    self, skip_rejected, Dispatched, Plan, PlannedRow, ProgramInfo, RowResult, SweepConfig,
    SweepError, SweepResult, SweepRow, SweepRun,
};

/// One spec at one choice of sizes, shared by every API of the run.
pub struct ProgramWorkload {
    pub spec: KernelSpec,
    pub instance: Instance,
    /// The first API's outputs, which every later API is checked against.
    pub(super) references: Mutex<References>,
    /// Read-back buffers a checked dispatch has finished with, for the next one: a fresh 33 MB
    /// buffer cost each row its page faults and its release again.
    pub(super) spare: Mutex<Vec<Vec<u8>>>,
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
            spare: Mutex::new(Vec::new()),
        }
    }

    /// The buffers of `spec` at `sizes` as the host-memory model counts them (guard bands
    /// included), before any is made.
    pub fn planned_buffers(
        spec: &KernelSpec,
        sizes: &crate::spec::Sizes,
    ) -> Result<Vec<crate::hostmem::KernelBuffer>, crate::spec::SpecError> {
        Ok(spec
            .buffer_sizes(sizes)?
            .into_iter()
            .map(|(bytes, written)| crate::hostmem::KernelBuffer {
                bytes: guard::allocated(bytes),
                written,
            })
            .collect())
    }

    /// How a written buffer is compared, in words: "exact", "within 3e-7", "sum, within
    /// 1e-5 of the magnitudes".
    fn how_compared(&self, b: &crate::spec::BufferInstance) -> String {
        let t = &self.instance.tolerance;
        let mut within = Vec::new();
        if b.decl.ty.is_float() {
            if t.ulps > 0 {
                within.push(format!("{} ulps", t.ulps));
            }
            if let Some(a) = t.abs {
                within.push(format!("{a:e} absolute"));
            }
            if let Some(r) = t
                .rel
                .filter(|_| b.decl.compare == crate::spec::CompareMode::Exact)
            {
                within.push(format!("{r:e} relative"));
            }
        }
        let how = match (b.decl.compare, within.is_empty()) {
            (crate::spec::CompareMode::Sum, _) => format!(
                "sum, within {:e} of the magnitudes{}",
                t.sum_rel(b.decl.ty),
                t.abs.map(|a| format!(" + {a:e}")).unwrap_or_default()
            ),
            (_, true) => "exact".to_string(),
            (_, false) => format!("element by element, within {}", within.join(" or ")),
        };
        match &b.decl.reference {
            Some(file) => format!("{how}, against the reference file {file}"),
            None => how,
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
                .map(|b| format!("{} ({})", b.decl.name, self.how_compared(b)))
                .collect(),
            bytes_known: self.instance.bytes_moved.is_some(),
            reference_files: (self.instance.written())
                .filter_map(|b| Some((b.decl.name.clone(), b.decl.reference.clone()?)))
                .collect(),
            spec_hash: Some(super::work::spec_hash(&self.spec, &self.instance.sizes)),
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

    /// Every row of `plan`: its launch, then one checked dispatch ([`sweep::checked_dispatch`]:
    /// checked from reset outputs, then, where it matched, the timed batches).
    fn run_rows(
        &self,
        backend: &mut dyn Backend,
        plan: &Plan,
        how: &mut SweepRun<'_>,
        result: &mut SweepResult,
    ) -> RowResult {
        let api = backend.api();
        let protocol = how.config.protocol.clone();
        let mut own = OwnRows::weighed();
        let ran = how.each_row(backend, plan, result, |backend, planned, row| {
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
            let first = own.first.is_none();
            let mut check = KernelCheck::new(self, &mut own, true);
            let dispatched = sweep::checked_dispatch(backend, launch, Some(&protocol), &mut check);
            let timing = match dispatched {
                Err(SweepError::Backend(e)) => return skip_rejected(api, row, e.at(launch)),
                Err(e) => return Err(e),
                Ok(Dispatched::Refused(e)) => return skip_rejected(api, row, e),
                Ok(Dispatched::Failed(e)) => return Err(e.at(launch).into()),
                Ok(Dispatched::Ran(_, Err(wrong))) => {
                    return Err(self.loop_cap_hint(backend, launch, wrong))
                }
                Ok(Dispatched::Ran(timing, Ok(()))) => timing,
            };
            self.record(row, timing, api, first);
            if own.pending(diagnosis::at(launch)) {
                row.verified = false;
                row.note = Some(diagnosis::PENDING.to_string());
            }
            Ok(())
        });
        let mut refs = self.references.lock().unwrap_or_else(|p| p.into_inner());
        let Some(settled) = refs.settle(api, &self.instance, &mut own) else {
            return ran;
        };
        for row in &mut result.rows {
            let here = (row.block, row.grid);
            if let Some((_, why)) = settled.wrong.iter().find(|(at, _)| *at == here) {
                diagnosis::mark_wrong(row, why);
            } else if settled.right.contains(&here) {
                row.verified = !self.instance.timing_only;
                row.note = diagnosis::unpending(row.note.take());
            }
        }
        result.fill_relative();
        // The first difference came before anything that stopped the rows after it.
        Err(self.loop_cap_hint(backend, settled.launch, settled.error))
    }

    /// A row that matched: verified (unless the spec is timing-only), its timing and GB/s, and
    /// whether it is the API's reference.
    fn record(&self, row: &mut SweepRow, timing: Option<Timing>, api: Api, first: bool) {
        row.verified = !self.instance.timing_only;
        row.note = match (self.instance.timing_only, first) {
            (true, _) => Some("not checked: the spec is timing-only".into()),
            (false, true) => Some(format!(
                "the reference: {api}'s other sizes are compared with this row's output"
            )),
            (false, false) => None,
        };
        row.gbps = (self.instance.bytes_moved)
            .zip(timing.as_ref())
            .map(|(b, t)| b / (t.stats.mean * 1e6));
        row.timing = timing;
    }
}

impl ProgramWorkload {
    /// Each API's reference outputs (its first row's), once it has run: what a tune
    /// compares across parameter sets.
    pub fn first_outputs(&self) -> Vec<(Api, Vec<Vec<u8>>)> {
        let refs = self.references.lock().unwrap_or_else(|p| p.into_inner());
        refs.firsts()
    }

    /// The APIs whose outputs the others contradict, once every API has run.
    pub fn blames(&self) -> Vec<crate::report::Failure> {
        let refs = self.references.lock().unwrap_or_else(|p| p.into_inner());
        refs.conclude(&self.instance)
    }
}

/// The kernel as the sweep's task sees it ([`super::Workload`]).
impl ProgramWorkload {
    /// "kernel 'saxpy' at n=16777216".
    pub fn describe(&self) -> String {
        self.spec.at(&self.instance.sizes)
    }

    /// The kernel's work items, the sweep's grids planned from them.
    pub fn items(&self) -> u64 {
        self.instance.work_items()
    }

    /// Whether one API's device holds every buffer; `Err` names the limit that refuses it.
    pub fn fits(&self, limits: &Limits) -> Result<(), String> {
        let buffers: Vec<(String, u64)> = (self.instance.buffers.iter())
            .map(|b| {
                (
                    b.decl.name.clone(),
                    guard::allocated(b.initial.len() as u64),
                )
            })
            .collect();
        limits.program_fits(&buffers)
    }

    /// The device memory one API's copy holds: the buffers with their guard bands.
    pub fn device_bytes(&self) -> u64 {
        (self.instance.buffers.iter())
            .map(|b| guard::allocated(b.initial.len() as u64))
            .fold(0, u64::saturating_add)
    }

    /// Whether the host has the memory for the run with these APIs in it.
    pub fn check_host(&self, apis: &[(Api, DeviceKind)]) -> Result<(), String> {
        // Checked in full before the buffers were made (by the command, with the targets'
        // kinds); here, what is still to come with the APIs that opened.
        let buffers: Vec<_> = self
            .instance
            .buffers
            .iter()
            .map(|b| crate::hostmem::KernelBuffer {
                bytes: guard::allocated(b.initial.len() as u64),
                written: b.decl.written,
            })
            .collect();
        crate::hostmem::check_kernel(&self.describe(), &buffers, apis, true)
            .map_err(|e| e.to_string())
    }

    /// Builds the kernel on an opened backend and fills its buffers, untimed.
    pub fn prepare(&self, backend: &mut dyn Backend) -> Result<(), BackendError> {
        let api = backend.api();
        let source = self.spec.sources_for(api.key()).ok_or_else(|| {
            BackendError::new(
                api,
                ErrorKind::Unavailable,
                self.spec.no_source(api.name(), api.key()),
            )
        })?;
        backend.load_program(&source, &self.instance.args)?;
        for b in &self.instance.buffers {
            backend.write_buffer(b.decl.index, &guard::padded(&b.initial))?;
        }
        Ok(())
    }

    /// Measures and checks every planned row on one backend, as `how` says (`prepared`:
    /// whether [`Self::prepare`] succeeded on it, else it is tried again here so that its
    /// error lands in the API's result). Returns the rows measured so far and the error that
    /// stopped the API, if one did.
    pub fn measure(
        &self,
        backend: &mut dyn Backend,
        prepared: bool,
        mut how: SweepRun<'_>,
    ) -> Swept {
        let config = how.config;
        let empty = Plan {
            rows: Vec::new(),
            policy: config.grid,
            grid_source: String::new(),
        };
        // Stopped before its first row: the API's result with no rows, and why.
        let stopped = |backend: &dyn Backend, e: BackendError| -> Swept {
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
        if err.is_none() {
            // A kernel that declares no bytes moved has no ceiling to compare with.
            let bytes = self.instance.bytes_moved.map_or(0, |b| (b / 2.0) as u64);
            let resident = self.instance.args.iter().map(ProgramArg::allocation).sum();
            match sweep::copy_ceiling(backend, &result, bytes, resident, config, how.observer) {
                Ok(c) => result.copy = c,
                Err(e) => err = Some(e.into()),
            }
        }
        result.fill_relative();
        if let Some(e) = &err {
            result.error = Some(e.to_string());
        }
        (result, err)
    }
}
