//! What a sweep measures, from its arguments: the grayscale frame at `--size` (or the size the
//! devices suit), or, for `--kernel SPEC.toml`, the kernel at its sizes (the spec read first;
//! bad input is one line naming the file and the key, exit 2).

use std::path::Path;

use blocksweep_core::spec::Sizes;
use blocksweep_core::workload::Work;
use blocksweep_core::{ApiChoice, KernelSpec, Registry};

use crate::args::SweepArgs;
use crate::usage;

/// Reads the spec at `path`, with the reference files `--reference` gives (BUFFER=FILE), and
/// the sizes `--size` asks for, else its defaults (each work dimension capped at `cap`, where
/// given).
pub fn load(
    path: &Path,
    references: &[String],
    size: Option<&str>,
    cap: Option<u64>,
) -> anyhow::Result<(KernelSpec, Sizes)> {
    let mut spec = KernelSpec::load(path).map_err(|e| usage(e.to_string()))?;
    for r in references {
        spec.with_reference(r).map_err(|e| usage(e.to_string()))?;
    }
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
        Some((mut spec, sizes)) => {
            let sizes = kernel_sizes(args, &mut spec, sizes, each);
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

/// A user's kernel's work on a CPU: each dimension at most 2^20 work items in 1-D, 1024 in
/// each of 2-D and up (as the frame is at frame::CPU_DEFAULT_SIZE there).
const CPU_WORK_CAP: (u64, u64) = (1 << 20, 1 << 10);

/// Whether the run is sized for a CPU: every target is a CPU device and `--size` is not given
/// (a CPU driver's figures say nothing about a GPU, and GPU sizes take minutes there).
fn cpu_sized(args: &SweepArgs, each: &[blocksweep_core::Targets]) -> bool {
    let devices = || each.iter().flat_map(|t| &t.devices);
    args.size.is_none() && devices().all(|d| d.kind != blocksweep_core::DeviceKind::Gpu)
}

/// Says once, unless `--quiet`, that `what` is measured instead of `instead` on a CPU.
fn say_cpu_sized(args: &SweepArgs, what: &str, instead: &str, size_hint: &str) {
    if !args.quiet {
        crate::output::stdio::eprint_line(&format!(
            "blocksweep: no GPU among the devices: {what} instead of {instead} (a CPU driver's \
             figures say nothing about a GPU; {size_hint})"
        ));
    }
}

/// A user's kernel's sizes: `--size` or the spec's own, each work dimension capped at
/// [`CPU_WORK_CAP`] where the run is [`cpu_sized`] (its reference files then unused).
fn kernel_sizes(
    args: &SweepArgs,
    spec: &mut KernelSpec,
    sizes: Sizes,
    each: &[blocksweep_core::Targets],
) -> Sizes {
    if !cpu_sized(args, each) {
        return sizes;
    }
    let per_dim = match spec.work.len() {
        1 => CPU_WORK_CAP.0,
        _ => CPU_WORK_CAP.1,
    };
    let capped = spec.capped_sizes(per_dim);
    if capped != sizes {
        let what = format!("{} at {capped}", spec.name);
        say_cpu_sized(args, &what, &format!("its {sizes}"), "--size for another");
        unused_references(spec, &capped, args.quiet);
    }
    capped
}

/// Drops the spec's reference files for a run at `sizes` that blocksweep chose, not the
/// user or the spec (the files hold the outputs at the spec's sizes), saying so unless `quiet`.
pub fn unused_references(spec: &mut KernelSpec, sizes: &Sizes, quiet: bool) {
    let dropped = spec.without_references();
    if dropped.is_empty() || quiet {
        return;
    }
    let names: Vec<String> = dropped.iter().map(|b| format!("'{b}'")).collect();
    warn!(
        "the reference file of {} is not used at {sizes}, which blocksweep chose: it holds the \
         output at the spec's {} (--size for it)",
        blocksweep_core::words::and_list(&names),
        spec.sizes
    );
}

/// The frame's size: `--size`, else the default 4K frame, or frame::CPU_DEFAULT_SIZE where
/// the run is [`cpu_sized`] (there the 4K sweep takes about a minute on two cores).
fn frame_size(args: &SweepArgs, each: &[blocksweep_core::Targets]) -> anyhow::Result<(u32, u32)> {
    if !cpu_sized(args, each) {
        return args.frame_size().map_err(crate::usage);
    }
    let (w, h) = blocksweep_core::frame::CPU_DEFAULT_SIZE;
    let default = crate::args::default_size();
    let instead = format!("the default {default}");
    say_cpu_sized(
        args,
        &format!("a {w}x{h} frame"),
        &instead,
        &format!("--size {default} for it"),
    );
    Ok((w, h))
}

/// Keeps the devices of the APIs `spec` has a source for, and returns the line that says each
/// other is not run, as docs/kernels.md promises ("An API without a source is reported as
/// having none, and the others run"), for the caller to say once the input is known good (bad
/// input is one line). Asked for by name, or with no API left, it is bad input.
pub fn keep_sourced(
    spec: &KernelSpec,
    choice: &ApiChoice,
    each: &mut Vec<blocksweep_core::Targets>,
) -> anyhow::Result<Vec<String>> {
    let keys = spec.apis();
    let file = &spec.file;
    if let ApiChoice::Only(api) = choice {
        if !keys.contains(&api.key()) {
            return Err(usage(spec.no_source(api.name(), api.key())));
        }
    }
    let mut said: Vec<blocksweep_core::Api> = Vec::new();
    for t in each.iter_mut() {
        for d in t.devices.iter().filter(|d| !keys.contains(&d.api.key())) {
            if !said.contains(&d.api) {
                said.push(d.api);
            }
        }
        t.devices.retain(|d| keys.contains(&d.api.key()));
    }
    each.retain(|t| !t.devices.is_empty());
    if each.is_empty() {
        return Err(usage(format!(
            "{file} has a source for no API that sees a device here (its [sources]: {})",
            keys.join(", ")
        )));
    }
    let line = |api: blocksweep_core::Api| {
        let key = api.key();
        format!("{api}: not run: {file} has no source for it (its [sources] has no '{key}')")
    };
    Ok(said.into_iter().map(line).collect())
}

/// Says each of `lines` on stderr (the APIs [`keep_sourced`] left out).
pub fn say(lines: &[String]) {
    for line in lines {
        warn!("{line}");
    }
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
