//! What a sweep measures, from its arguments: the grayscale frame at `--size` (or the size the
//! devices suit), or, for `--kernel SPEC.toml`, the kernel at its sizes (the spec read first;
//! bad input is one line naming the file and the key, exit 2).

use std::path::Path;

use blocksweep_core::spec::Sizes;
use blocksweep_core::workload::Work;
use blocksweep_core::{ApiChoice, KernelSpec, Registry};

use crate::args::SweepArgs;
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

/// The run's work: the spec read by [`load`] at its sizes, else the frame.
pub fn of_args(
    args: &SweepArgs,
    spec: Option<(KernelSpec, Sizes)>,
    each: &[blocksweep_core::Targets],
) -> anyhow::Result<Work> {
    Ok(match spec {
        Some((spec, sizes)) => {
            let sizes = kernel_sizes(args, &spec, sizes, each);
            Work::Kernel {
                spec: Box::new(spec),
                sizes,
            }
        }
        None => {
            let (width, height) = frame_size(args, each)?;
            Work::Frame {
                width,
                height,
                seed: args.seed,
            }
        }
    })
}

/// A user's kernel's sizes: `--size` or the spec's own, except that where every target is a
/// CPU device and `--size` is not given, each work dimension is capped (2^20 work items in
/// 1-D, 1024 x 1024 in 2-D), as the built-in frame is, and that is said once: a CPU driver's
/// figures say nothing about a GPU, and the spec's GPU sizes take minutes there.
fn kernel_sizes(
    args: &SweepArgs,
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
fn frame_size(args: &SweepArgs, each: &[blocksweep_core::Targets]) -> anyhow::Result<(u32, u32)> {
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

/// Says on stderr each API the spec has a source for that is unavailable here, when the run
/// asks for more than one API: "CUDA: unavailable: libcuda.so.1 not found (...): the spec's
/// CUDA source is not run" (the others run without it).
pub fn say_unavailable(reg: &Registry, spec: &KernelSpec, choice: &ApiChoice) {
    if matches!(choice, ApiChoice::Only(_)) {
        return;
    }
    let keys = spec.apis();
    for api in reg.apis().filter(|a| keys.contains(&a.key())) {
        if let Some(why) = reg.unavailable(api) {
            warn!("{api}: unavailable: {why}: the spec's {api} source is not run");
        }
    }
}
