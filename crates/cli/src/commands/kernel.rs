//! `--kernel SPEC.toml`: the spec read (bad input: one line naming the file and the key, exit
//! 2), and the kernel's buffers made on a thread of their own while the APIs open.

use std::path::Path;
use std::thread::{Scope, ScopedJoinHandle};

use blocksweep_core::session::SessionError;
use blocksweep_core::spec::{Instance, Sizes};
use blocksweep_core::workload::{ProgramWorkload, Workload, WorkloadSource};
use blocksweep_core::{trace, KernelSpec, SpecError};

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

impl WorkloadSource for KernelJob<'_> {
    fn workload(&mut self) -> Result<&dyn Workload, SessionError> {
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
