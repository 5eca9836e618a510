//! What a run measures, said once: the built-in grayscale frame or a user's kernel from a spec
//! file ([`Work`]), and its workload made on a thread of its own ([`Making`]) while the drivers
//! load, probe, open the devices and build the kernels.

use std::thread::{Scope, ScopedJoinHandle};

use super::{ProgramWorkload, Workload};
use crate::backend::{Api, DeviceKind};
use crate::blocks::BlockSize;
use crate::frame::{CheckedFrame, HostAllocError};
use crate::hostmem;
use crate::session::{SessionError, Source};
use crate::spec::{Instance, KernelSpec, Sizes, SpecError, TuneDecl};
use crate::trace;

/// The frame or a user's kernel: what every sweep and tune of a run measures.
#[derive(Debug, Clone)]
pub enum Work {
    /// The built-in grayscale frame, its pixels made from `seed`.
    Frame { width: u32, height: u32, seed: u64 },
    /// A user's kernel from a spec file, at these sizes.
    Kernel { spec: Box<KernelSpec>, sizes: Sizes },
}

impl Work {
    /// "kernel 'saxpy' at n=1024", "grayscale frame 1280x720": the work in messages and reports.
    pub fn describe(&self) -> String {
        match self {
            Work::Frame { width, height, .. } => format!("grayscale frame {width}x{height}"),
            Work::Kernel { spec, sizes } => spec.at(sizes),
        }
    }

    /// Whether it is a user's code, which runs where its faults cannot end the process.
    pub fn is_users(&self) -> bool {
        matches!(self, Work::Kernel { .. })
    }

    /// The block sizes the work asks for itself (a spec's `blocks`), where it does.
    pub fn blocks(&self) -> Option<&[BlockSize]> {
        match self {
            Work::Kernel { spec, .. } => spec.blocks.as_deref(),
            Work::Frame { .. } => None,
        }
    }

    /// The grid the work dictates, where it does: a spec's `grid = "data"` launches the grid
    /// covering its work whatever `--grid` says, and every output names that policy.
    pub fn grid(&self) -> Option<crate::grid::GridPolicy> {
        match self {
            Work::Kernel { spec, .. } if spec.grid == crate::spec::GridMode::Data => {
                Some(crate::grid::GridPolicy::Data)
            }
            _ => None,
        }
    }

    /// The kernel's own parameters to tune (a spec's `[tune]`), where it has any.
    pub fn tune(&self) -> Option<&TuneDecl> {
        match self {
            Work::Kernel { spec, .. } => spec.tune.as_ref(),
            Work::Frame { .. } => None,
        }
    }

    /// The work's sizes as a tune's space reads them (the frame has none of its own).
    pub fn sizes(&self) -> Sizes {
        match self {
            Work::Kernel { sizes, .. } => sizes.clone(),
            Work::Frame { .. } => Sizes::default(),
        }
    }

    /// The same work with a tune's parameters set (the frame has none).
    pub fn at_params(&self, params: &std::collections::BTreeMap<String, u64>) -> Work {
        match self {
            Work::Kernel { spec, sizes } => Work::Kernel {
                spec: Box::new(spec.at_params(&Sizes(params.clone()))),
                sizes: sizes.clone(),
            },
            Work::Frame { .. } => self.clone(),
        }
    }

    /// Whether the host has the memory for every buffer of the run with these APIs, checked
    /// before anything is made; `Err` says why not, in one line.
    pub fn check_host(&self, apis: &[(Api, DeviceKind)]) -> Result<(), String> {
        match self {
            Work::Frame { width, height, .. } => {
                hostmem::check_frame(*width, *height, apis).map_err(|e| e.to_string())
            }
            Work::Kernel { spec, sizes } => {
                let buffers =
                    ProgramWorkload::planned_buffers(spec, sizes).map_err(|e| e.to_string())?;
                hostmem::check_kernel(&self.describe(), &buffers, apis, false)
                    .map_err(|e| e.to_string())
            }
        }
    }

    /// The bytes that say which work this is (a tune's cache is keyed by their hash): the
    /// spec's file, its sources with their options and the sizes, or the frame's size and seed.
    /// Which spec a user's kernel is ([`spec_hash`]); none for the built-in frame.
    pub fn spec_hash(&self) -> Option<String> {
        match self {
            Work::Kernel { spec, sizes } => Some(spec_hash(spec, sizes)),
            Work::Frame { .. } => None,
        }
    }

    pub fn identity(&self) -> Vec<Vec<u8>> {
        match self {
            Work::Kernel { spec, sizes } => kernel_identity(spec, sizes),
            Work::Frame {
                width,
                height,
                seed,
            } => vec![format!("grayscale {width}x{height} seed {seed}").into_bytes()],
        }
    }

    /// Starts making the workload (the frame and its CPU reference, or the kernel's buffers)
    /// on a thread of `s`; the sweep waits for it once, when it first needs it.
    pub fn spawn<'scope>(&self, s: &'scope Scope<'scope, '_>) -> Making<'scope> {
        let pending = match self.clone() {
            Work::Frame {
                width,
                height,
                seed,
            } => Pending::Frame(s.spawn(move || {
                let _t = trace::span("core", "frame and CPU reference");
                CheckedFrame::try_make(width, height, seed)
            })),
            Work::Kernel { spec, sizes } => {
                let for_thread = spec.clone();
                Pending::Kernel(
                    spec,
                    s.spawn(move || {
                        let _t = trace::span("core", "the kernel's buffers");
                        for_thread.instantiate(&sizes)
                    }),
                )
            }
        };
        Making {
            pending: Some(pending),
            made: None,
        }
    }
}

/// A workload being made on a thread of its own, waited for once.
pub struct Making<'scope> {
    pending: Option<Pending<'scope>>,
    made: Option<Workload>,
}

enum Pending<'scope> {
    Frame(ScopedJoinHandle<'scope, Result<CheckedFrame, HostAllocError>>),
    Kernel(
        Box<KernelSpec>,
        ScopedJoinHandle<'scope, Result<Instance, SpecError>>,
    ),
}

impl Making<'_> {
    /// The user's kernel once made (after the sweep asked for it): its reference outputs.
    pub fn program(&self) -> Option<&ProgramWorkload> {
        self.made.as_ref().and_then(Workload::program)
    }
}

impl Source<Workload> for Making<'_> {
    fn task(&mut self) -> Result<&Workload, SessionError> {
        match self.pending.take() {
            Some(Pending::Frame(job)) => {
                let made = job
                    .join()
                    .map_err(|_| SessionError::Failed("generating the frame panicked".into()))?
                    .map_err(|e| SessionError::Input(e.to_string()))?;
                self.made = Some(Workload::Frame(made));
            }
            Some(Pending::Kernel(spec, job)) => {
                let instance = job
                    .join()
                    .map_err(|_| {
                        SessionError::Failed("making the kernel's buffers panicked".into())
                    })?
                    .map_err(|e| SessionError::Input(e.to_string()))?;
                self.made = Some(ProgramWorkload::new(*spec, instance).into());
            }
            None => {}
        }
        let why = "the workload was not made";
        (self.made.as_ref()).ok_or_else(|| SessionError::Failed(why.into()))
    }
}

/// A user's kernel's identity: the spec's file, its sources with their options, the sizes.
pub fn kernel_identity(spec: &KernelSpec, sizes: &Sizes) -> Vec<Vec<u8>> {
    let text = std::fs::read(&spec.file).unwrap_or_default();
    let mut parts: Vec<Vec<u8>> = vec![text, sizes.to_string().into_bytes()];
    for key in spec.apis() {
        if let Some(src) = spec.sources_for(key) {
            parts.push(src.code.clone());
            parts.push(src.options.join(" ").into_bytes());
        }
    }
    parts
}

/// The hash of a user's kernel's identity: which spec ran (`compare` refuses runs of two).
pub fn spec_hash(spec: &KernelSpec, sizes: &Sizes) -> String {
    let parts = kernel_identity(spec, sizes);
    crate::spec::hash(&parts.iter().map(Vec::as_slice).collect::<Vec<_>>())
}
