//! What a sweep measures, made on a thread of its own while the drivers load, probe, open the
//! devices and build the kernels: the grayscale frame with its CPU reference, or, for
//! `--kernel SPEC.toml`, the kernel's buffers (the spec read first; bad input is one line
//! naming the file and the key, exit 2).

use std::path::Path;
use std::thread::{Scope, ScopedJoinHandle};

use blocksweep_core::frame::HostAllocError;
use blocksweep_core::session::SessionError;
use blocksweep_core::session::Source;
use blocksweep_core::spec::{Instance, Sizes};
use blocksweep_core::workload::{FrameWorkload, ProgramWorkload, Workload};
use blocksweep_core::{trace, Frame, KernelSpec, SpecError};

use crate::usage;

/// Reads the spec at `path` and the sizes `--size` asks for, else its defaults (each work
/// dimension capped at `cap`, where given).
pub fn load(
    path: &Path,
    size: Option<&str>,
    cap: Option<u64>,
) -> anyhow::Result<(KernelSpec, Sizes)> {
    let spec = KernelSpec::load(path).map_err(|e| usage(e.to_string()))?;
    let sizes = match (size, cap) {
        (Some(s), _) => spec.with_size(s).map_err(|e| usage(e.to_string()))?,
        (None, Some(per_dim)) => spec.capped_sizes(per_dim),
        (None, None) => spec.sizes.clone(),
    };
    Ok((spec, sizes))
}

/// The kernel's instance (its buffers generated), made once and waited for once.
pub struct KernelJob<'scope> {
    making: Option<(
        KernelSpec,
        ScopedJoinHandle<'scope, Result<Instance, SpecError>>,
    )>,
    made: Option<ProgramWorkload>,
}

impl<'scope> KernelJob<'scope> {
    pub fn spawn<'env>(s: &'scope Scope<'scope, 'env>, spec: KernelSpec, sizes: Sizes) -> Self {
        let for_thread = spec.clone();
        let handle = s.spawn(move || {
            let _t = trace::span("core", "the kernel's buffers");
            for_thread.instantiate(&sizes)
        });
        KernelJob {
            making: Some((spec, handle)),
            made: None,
        }
    }
}

impl KernelJob<'_> {
    /// The workload once made (after the sweep asked for it): its reference outputs.
    pub fn made(&self) -> Option<&ProgramWorkload> {
        self.made.as_ref()
    }
}

impl Source<dyn Workload> for KernelJob<'_> {
    fn task(&mut self) -> Result<&(dyn Workload + 'static), SessionError> {
        if let Some((spec, job)) = self.making.take() {
            let instance = job
                .join()
                .map_err(|_| SessionError::Failed("making the kernel's buffers panicked".into()))?
                .map_err(|e| SessionError::Input(e.to_string()))?;
            self.made = Some(ProgramWorkload::new(spec, instance));
        }
        self.made
            .as_ref()
            .map(|w| w as &dyn Workload)
            .ok_or_else(|| SessionError::Failed("the kernel's buffers were not made".into()))
    }
}

/// The frame and its CPU reference: made on a thread of their own, waited for once.
pub struct FrameJob<'scope> {
    making: Option<ScopedJoinHandle<'scope, Result<FrameWorkload, HostAllocError>>>,
    made: Option<FrameWorkload>,
}

impl<'scope> FrameJob<'scope> {
    pub fn spawn<'env>(s: &'scope Scope<'scope, 'env>, (w, h): (u32, u32), seed: u64) -> Self {
        let handle = s.spawn(move || {
            let _t = trace::span("core", "frame and CPU reference");
            let frame = Frame::try_generate(w, h, seed)?;
            let reference = frame.try_reference()?;
            Ok(FrameWorkload { frame, reference })
        });
        FrameJob {
            making: Some(handle),
            made: None,
        }
    }
}

impl Source<dyn Workload> for FrameJob<'_> {
    fn task(&mut self) -> Result<&(dyn Workload + 'static), SessionError> {
        if let Some(job) = self.making.take() {
            let made = job
                .join()
                .map_err(|_| SessionError::Failed("generating the frame panicked".into()))?
                .map_err(|e| SessionError::Input(e.to_string()))?;
            self.made = Some(made);
        }
        self.made
            .as_ref()
            .map(|w| w as &dyn Workload)
            .ok_or_else(|| SessionError::Failed("the frame was not made".into()))
    }
}

/// A user's kernel's sizes: `--size` or the spec's own, except that where every target is a
/// CPU device and `--size` is not given, each work dimension is capped (2^20 work items in
/// 1-D, 1024 x 1024 in 2-D), as the built-in frame is, and that is said once: a CPU driver's
/// figures say nothing about a GPU, and the spec's GPU sizes take minutes there.
pub fn kernel_sizes(
    args: &crate::args::SweepArgs,
    spec: &KernelSpec,
    sizes: Sizes,
    each: &[blocksweep_core::Targets],
) -> Sizes {
    if args.size.is_some() || !cpu_only(each) {
        return sizes;
    }
    let per_dim = match spec.work.len() {
        1 => 1 << 20,
        _ => 1 << 10,
    };
    let capped = spec.capped_sizes(per_dim);
    if capped != sizes && !args.quiet {
        crate::output::stdio::eprint_line(&format!(
            "blocksweep: no GPU among the devices: {} at {capped} instead of its {sizes} (a CPU \
             driver's figures say nothing about a GPU; --size for another)",
            spec.name
        ));
    }
    capped
}

/// Whether every target of the run is a CPU device.
fn cpu_only(each: &[blocksweep_core::Targets]) -> bool {
    each.iter()
        .flat_map(|t| &t.devices)
        .all(|d| d.kind != blocksweep_core::DeviceKind::Gpu)
}

/// The frame's size: `--size`, else the default 4K frame on a GPU and a 1280x720 one where
/// every target is a CPU device (said once): there the 4K sweep takes about a minute on two
/// cores, and no frame size makes a CPU's figures say anything about a GPU.
pub fn frame_size(
    args: &crate::args::SweepArgs,
    each: &[blocksweep_core::Targets],
) -> anyhow::Result<(u32, u32)> {
    if args.size.is_some() || !cpu_only(each) {
        return args.frame_size().map_err(crate::usage);
    }
    let (w, h) = blocksweep_core::frame::CPU_DEFAULT_SIZE;
    if !args.quiet {
        crate::output::stdio::eprint_line(&format!(
            "blocksweep: no GPU among the devices: a {w}x{h} frame instead of the default \
             3840x2160 (a CPU driver's figures say nothing about a GPU; --size 3840x2160 for it)"
        ));
    }
    Ok((w, h))
}
