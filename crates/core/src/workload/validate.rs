//! `validate --kernel`: the portable sizing assumptions launched with a user's kernel, each
//! with the API's own answer, what the queried limits (the device's and this compiled
//! kernel's) say, and the output checked like a sweep row's.

use super::dispatch::KernelCheck;
use super::program::ProgramWorkload;
use crate::backend::{Api, DeviceKind};
use crate::backend::{Backend, BackendError, ErrorKind, GridSize, Launch};
use crate::limits::Limits;
use crate::report::Failure;
use crate::session::{Ran, Task, Turn};
use crate::spec::GridMode;
use crate::sweep::{checked_dispatch, limit_violation, Dispatched, SweepError};
use crate::validate::{Check, LaunchOutcome, Validated, ASSUMPTIONS};

impl ProgramWorkload {
    /// Every assumption of [`ASSUMPTIONS`] launched with the kernel (prepared already). A
    /// kernel that needs one work item per element gets a grid covering its work at each
    /// block, except in the checks that are about the grid; its shared memory is the spec's at
    /// that block.
    pub fn validate(&self, backend: &mut dyn Backend) -> Result<Vec<Check>, BackendError> {
        let mut own = super::diagnosis::OwnRows::default();
        let mut checks = Vec::new();
        for asm in ASSUMPTIONS {
            let block = asm.launch.block;
            let about_grid = asm.claim.contains("grid");
            let grid = match (self.instance.grid, about_grid) {
                (GridMode::Data, false) => self.data_grid(block).unwrap_or(asm.launch.grid),
                _ => asm.launch.grid,
            };
            let shared = self.instance.shared_bytes(block).unwrap_or(0);
            let launch = Launch::new(block, grid).with_shared(shared);
            let limits_say = limit_violation(backend.limits(), backend.kernel_facts(), block);
            let outcome = self.outcome(backend, launch, &mut own);
            // A fault ends the API (CUDA's context is gone after one); the checks made before
            // it stay.
            let fault = matches!(&outcome, LaunchOutcome::Failed { message } if !message.starts_with("ran, but"));
            let launched = (grid != asm.launch.grid).then(|| format!("{block} x {grid}"));
            checks.push(Check {
                api: backend.api(),
                assumption: asm,
                limits_say,
                outcome,
                launched,
            });
            if fault {
                break;
            }
        }
        Ok(checks)
    }

    /// What one launch does: not handed over, run without a check, or run and checked (one
    /// untimed checked dispatch, [`checked_dispatch`]).
    fn outcome(
        &self,
        backend: &mut dyn Backend,
        launch: Launch,
        own: &mut super::diagnosis::OwnRows,
    ) -> LaunchOutcome {
        if let Some(why) = self.not_launched_because(launch) {
            return LaunchOutcome::NotLaunched { why };
        }
        let dynamic = launch.shared_bytes as u64;
        if let Some(why) =
            crate::sweep::shared_violation(backend.limits(), backend.kernel_facts(), dynamic)
        {
            return LaunchOutcome::Rejected {
                message: format!("{why}: the launch would be invalid"),
            };
        }
        let unchecked = self.unchecked_because(launch);
        let mut check = KernelCheck::new(self, own, unchecked.is_none());
        let dispatched = checked_dispatch(backend, launch, None, &mut check);
        match (dispatched, unchecked) {
            (Ok(Dispatched::Ran(_, _)), Some(why)) => LaunchOutcome::Unchecked { why },
            (Ok(Dispatched::Ran(_, Ok(()))), None) => LaunchOutcome::Ran,
            (Ok(Dispatched::Ran(_, Err(wrong))), None) => LaunchOutcome::Wrong {
                index: None,
                detail: Some(wrong.detail()),
            },
            (Ok(Dispatched::Refused(e) | Dispatched::Failed(e)), _)
            | (Err(SweepError::Backend(e)), _) => match e.kind {
                ErrorKind::LaunchRejected => LaunchOutcome::Rejected { message: e.message },
                _ => LaunchOutcome::Failed { message: e.message },
            },
            (Err(e), _) => LaunchOutcome::Failed {
                message: e.detail(),
            },
        }
    }

    /// Why a launch's output says nothing about it, where it does not: a kernel over a 1-D
    /// work indexes x only (in a taller block or grid its threads repeat each other's work and
    /// race on what they write), and a kernel that takes only some blocks (a fixed tile).
    fn unchecked_because(&self, launch: Launch) -> Option<String> {
        let b = launch.block;
        if self.instance.work.1 == 1 && (b.y * b.z > 1 || launch.grid.y > 1) {
            return Some(format!(
                "the kernel's work is 1-D: in {launch} its threads repeat x's work, so its \
                 output says nothing about the launch"
            ));
        }
        None
    }

    /// Why a launch is not handed to the API at all: a block the spec says the kernel does
    /// not take (a tile kernel in another block writes outside its shared tile: on the H200
    /// that was an illegal address, which ends CUDA), or a grid above the spec's `max_grid`
    /// (a buffer of one slot per block would be written past its end).
    fn not_launched_because(&self, launch: Launch) -> Option<String> {
        let b = launch.block;
        if let Some(takes) = self.instance.blocks.as_ref().filter(|t| !t.contains(&b)) {
            let list: Vec<String> = takes.iter().map(|x| x.to_string()).collect();
            return Some(format!(
                "the spec's [launch] blocks lists only {}: a kernel written for those blocks \
                 may write outside its buffers at another",
                list.join(", ")
            ));
        }
        let cap = self
            .instance
            .max_grid
            .filter(|&c| launch.grid.blocks() > c)?;
        Some(format!(
            "{} blocks > the spec's max_grid = {cap}: the kernel writes one slot per block, so \
             this grid would write past its buffer",
            launch.grid.blocks()
        ))
    }

    /// The grid that reaches every work item at `block`, where it fits 32 bits.
    pub(super) fn data_grid(&self, block: crate::blocks::BlockSize) -> Option<GridSize> {
        let (w, h) = self.instance.work;
        Some(GridSize {
            x: u32::try_from(w.div_ceil(block.x as u64)).ok()?,
            y: u32::try_from(h.div_ceil(block.y as u64)).ok()?,
        })
    }
}

/// `validate --kernel`: the assumptions launched with a user's kernel, its outputs compared
/// across the APIs once all have run.
pub struct KernelValidation {
    pub work: ProgramWorkload,
}

impl Task for KernelValidation {
    type Answer = Validated;
    type Plan = ();
    type Settings = ();

    fn describe(&self) -> String {
        self.work.describe()
    }

    fn fits(&self, limits: &Limits) -> Result<(), String> {
        self.work.fits(limits)
    }

    fn check_host(&self, apis: &[(Api, DeviceKind)]) -> Result<(), String> {
        self.work.check_host(apis)
    }

    fn prepare(&self, backend: &mut dyn Backend) -> Result<(), BackendError> {
        self.work.prepare(backend)
    }

    fn plan(&self, _: &mut dyn Backend, _: &()) -> Result<(), BackendError> {
        Ok(())
    }

    fn turn(&self, backend: &mut dyn Backend, prepared: bool, _: Turn<'_, Self>) -> Ran<Self> {
        let checks = match prepared {
            true => Ok(()),
            false => self.work.prepare(backend),
        }
        .and_then(|()| self.work.validate(backend));
        match checks {
            Ok(checks) => (
                Some(Validated {
                    device: backend.identity().clone(),
                    checks,
                    kernel: backend.kernel_facts().clone(),
                    resources: Vec::new(),
                    subgroups: None,
                }),
                None,
            ),
            Err(e) => (None, Some(e.into())),
        }
    }

    fn conclude(&self) -> Vec<Failure> {
        self.work.blames()
    }
}
