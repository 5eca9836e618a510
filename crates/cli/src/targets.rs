//! `--target`: the list resolved against the catalogue (bad input is one line, exit 2), and
//! the kernel's needs gathered from the local builds for the targets crate to check.

use blocksweep_core::limits::KernelFacts;
use blocksweep_core::program::ProgramArg;
use blocksweep_core::spec::GridMode;
use blocksweep_core::workload::Work;
use blocksweep_core::{builtin, Api, BlockSize, KernelVariant};
use blocksweep_targets::report::{report, Kernel, TargetReport};
use blocksweep_targets::write::{target_file, View};
use blocksweep_targets::{launches, Catalogue, Target};

use crate::usage;

/// The targets `--target` names; `None` without the flag.
pub fn select(list: Option<&str>) -> anyhow::Result<Option<Vec<Target>>> {
    let Some(list) = list else {
        return Ok(None);
    };
    let catalogue = Catalogue::embedded().map_err(|e| anyhow::anyhow!("the catalogue: {e}"))?;
    catalogue
        .select(list)
        .map(Some)
        .map_err(|e| usage(e.to_string()))
}

/// What the local builds say of a kernel (each API's facts), its arguments, and the subgroup
/// size its spec says it rests on.
pub fn kernel(
    builds: &[(Api, KernelFacts)],
    args: Vec<ProgramArg>,
    subgroup: Option<u64>,
) -> Kernel {
    let mut k = Kernel::from_builds(builds.iter().map(|(a, f)| (a.to_string(), f)), args);
    k.subgroup_size = subgroup;
    k
}

/// `validate`'s assumptions against `targets`.
pub fn validate(
    targets: &[Target],
    kernel: &Kernel,
    dynamic: &dyn Fn(BlockSize) -> u64,
) -> TargetReport {
    let rows = launches::assumptions(kernel, dynamic);
    report(
        "validate's assumptions, numbered as in its table",
        targets,
        &rows,
        &launches::assumption_blocks(),
        kernel.from_words(),
    )
}

/// The devices of `report` written to `to` as a target file (`limits -o mygpu.toml`); said
/// on stderr; false when the write failed.
pub fn write_file(
    to: &crate::output::OutputTarget,
    report: &blocksweep_core::report::limits::LimitsReport,
    tool: &str,
    date: &str,
) -> bool {
    let views: Vec<View> = report
        .views()
        .map(|v| View {
            device: &v.device,
            limits: &v.limits,
        })
        .collect();
    let family = to
        .path()
        .file_stem()
        .map_or("devices".into(), |s| s.to_string_lossy().into_owned());
    let text = target_file(&family, &views, tool, date);
    match to.write(text.as_bytes()) {
        Ok(()) => {
            crate::output::stdio::eprint_line(&format!(
                "blocksweep: wrote {} ({} targets: --target {} checks against them)",
                to.path().display(),
                views.len(),
                to.path().display()
            ));
            true
        }
        Err(e) => {
            warn!("error: {e}");
            false
        }
    }
}

/// What `sweep --target` needs besides the runs: the targets, the kernel's arguments, its
/// dynamic shared memory at a block, the subgroup size it rests on, and, for a 2-D kernel
/// launched one item per thread, its work (the grid in x and y follows from it).
pub struct SweepTargets {
    pub targets: Vec<Target>,
    pub args: Vec<ProgramArg>,
    pub subgroup: Option<u64>,
    pub shared: Box<dyn Fn(BlockSize) -> u64 + Send + Sync>,
    pub data_2d: Option<(u64, u64)>,
}

impl SweepTargets {
    /// The first device's sweep held against the targets, its portable answer split by them.
    pub fn report(&self, runs: &[blocksweep_core::report::Report]) -> Option<TargetReport> {
        let run = runs.first()?;
        let builds: Vec<(Api, KernelFacts)> = run
            .results
            .iter()
            .map(|r| (r.api, r.kernel.clone()))
            .collect();
        let kernel = kernel(&builds, self.args.clone(), self.subgroup);
        let mut blocks: Vec<BlockSize> = Vec::new();
        for row in run.results.iter().flat_map(|r| &r.rows) {
            if !blocks.contains(&row.block) {
                blocks.push(row.block);
            }
        }
        let grid = |b: BlockSize| -> Option<[u64; 3]> {
            if let Some((w, h)) = self.data_2d {
                return Some([w.div_ceil(b.x.into()), h.div_ceil(b.y.into()), 1]);
            }
            let rows = run.results.iter().flat_map(|r| &r.rows);
            rows.filter(|r| r.block == b)
                .map(|r| r.grid)
                .max()
                .map(|g| [g, 1, 1])
        };
        let rows = launches::blocks(&kernel, &blocks, &grid, self.shared.as_ref());
        let threads: Vec<u64> = blocks.iter().map(|b| b.threads()).collect();
        let mut r = report(
            "the sweep's block sizes, each at the largest grid any API launched it with",
            &self.targets,
            &rows,
            &threads,
            kernel.from_words(),
        );
        let portable: Vec<String> = run
            .answer
            .as_ref()
            .map(|a| a.portable.iter().map(|c| c.block.to_string()).collect())
            .unwrap_or_default();
        r.answer(&portable);
        Some(r)
    }
}

/// `sweep --target`'s context: the kernel's shape at its sizes, or the frame's.
pub fn for_sweep(targets: Vec<Target>, work: &Work) -> anyhow::Result<SweepTargets> {
    match work {
        Work::Kernel { spec, sizes } => {
            let shape = spec.shape(sizes).map_err(|e| usage(e.to_string()))?;
            let data_2d = (shape.grid == GridMode::Data && shape.work.1 > 1).then_some(shape.work);
            Ok(SweepTargets {
                targets,
                args: shape.args.clone(),
                subgroup: shape.subgroup_size,
                shared: Box::new(move |b| shape.shared_bytes(b)),
                data_2d,
            })
        }
        Work::Frame { width, height, .. } => Ok(SweepTargets {
            targets,
            args: builtin::args(KernelVariant::GridStride, *width, *height),
            subgroup: None,
            shared: Box::new(|_| 0),
            data_2d: None,
        }),
    }
}
