//! The two references a user's kernel is checked against at every size: the same API's output
//! at the first size that ran, and the first API's output. Outputs compared by their sum
//! (partials per block, which depend on the launch) are checked against the first API's at the
//! same block only; element-wise outputs against its first size, which its own check showed is
//! the output at every size.

use crate::backend::{Api, Launch};
use crate::blocks::BlockSize;
use crate::spec::{compare, BufferInstance, CompareMode, Instance};
use crate::sweep::SweepError;

/// The written buffers' contents after one checked dispatch, in written-buffer order.
#[derive(Clone)]
pub(crate) struct Checked {
    pub api: Api,
    pub block: BlockSize,
    pub outputs: Vec<Vec<u8>>,
}

#[derive(Default)]
pub(crate) struct References {
    /// The first API's output at its first size.
    first: Option<Checked>,
    /// The first API's outputs at each block, kept for the sum-compared buffers only.
    sums: Vec<(BlockSize, Vec<Vec<u8>>)>,
}

impl References {
    /// Checks one dispatch's `outputs`; the first call of an API (`own` empty) makes them its
    /// own reference, and the first API's first call makes them everyone's.
    pub fn check(
        &mut self,
        api: Api,
        launch: Launch,
        instance: &Instance,
        outputs: Vec<Vec<u8>>,
        own: &mut Option<Checked>,
    ) -> Result<(), SweepError> {
        let written: Vec<&BufferInstance> = instance.written().collect();
        let mismatch =
            |buffer: &BufferInstance, against: String, detail: String| SweepError::Output {
                api,
                block: launch.block,
                grid: launch.grid.to_string(),
                buffer: buffer.decl.name.clone(),
                against,
                detail,
            };
        let here = Checked {
            api,
            block: launch.block,
            outputs,
        };
        match own {
            Some(o) => {
                let against = format!("its own output at block {}", o.block);
                for (j, b) in written.iter().enumerate() {
                    let (want, got) = (&o.outputs[j], &here.outputs[j]);
                    compare(&b.decl, want, got, &instance.tolerance).map_err(|m| {
                        let detail = format!(
                            "{m}. The kernel's result depends on the launch: a loop that misses \
                             elements, or a kernel that needs the grid to cover the work \
                             (docs/kernels.md, \"What each check means\")"
                        );
                        mismatch(b, against.clone(), detail)
                    })?;
                }
            }
            None => *own = Some(here.clone()),
        }
        let first = self.first.get_or_insert_with(|| here.clone());
        if first.api == api {
            let kept = written
                .iter()
                .enumerate()
                .map(|(j, b)| match b.decl.compare {
                    CompareMode::Sum => here.outputs[j].clone(),
                    CompareMode::Exact => Vec::new(),
                })
                .collect();
            self.sums.push((launch.block, kept));
            return Ok(());
        }
        for (j, b) in written.iter().enumerate() {
            let (expected, against) = match b.decl.compare {
                CompareMode::Exact => (
                    &first.outputs[j],
                    format!("{}'s output (block {})", first.api, first.block),
                ),
                CompareMode::Sum => match self.sums.iter().find(|(k, _)| *k == launch.block) {
                    Some((_, kept)) => (
                        &kept[j],
                        format!("{}'s output at the same block", first.api),
                    ),
                    None => continue,
                },
            };
            compare(&b.decl, expected, &here.outputs[j], &instance.tolerance)
                .map_err(|m| mismatch(b, against, m.to_string()))?;
        }
        Ok(())
    }
}
