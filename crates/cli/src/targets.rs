//! `--target`: the list resolved against the catalogue (bad input is one line, exit 2), and
//! the kernel's needs gathered from the local builds for the targets crate to check.

use blocksweep_core::limits::KernelFacts;
use blocksweep_core::program::ProgramArg;
use blocksweep_core::{Api, BlockSize};
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
