//! Planning: which blocks the limits allow, residency per block, and each row's grid.

use super::{Plan, PlannedRow, SweepConfig};
use crate::backend::{Backend, BackendError, DeviceKind, KernelFacts, Residency};
use crate::blocks::BlockSize;
use crate::grid::{model_blocks_per_mp, GridPolicy};
use crate::limits::Limits;

/// Why a block cannot run on this backend, from its limits and the kernel's facts; `None` if
/// nothing rules it out. Names the limit so the user can look it up.
pub fn limit_violation(limits: &Limits, kernel: &KernelFacts, block: BlockSize) -> Option<String> {
    device_limit_violation(limits, block).or_else(|| kernel_limit_violation(kernel, block))
}

/// The compiled kernel's own limit, which some drivers report but do not enforce.
pub fn kernel_limit_violation(kernel: &KernelFacts, block: BlockSize) -> Option<String> {
    let k = kernel.max_block.as_ref()?;
    // The registers are what usually sets this limit below the device's: say them.
    let registers = kernel
        .registers
        .as_ref()
        .map(|r| format!(" ({} registers per thread, {})", r.value, r.name))
        .unwrap_or_default();
    (block.threads() > k.value).then(|| {
        format!(
            "{} threads > {} = {} for this kernel{registers}",
            block.threads(),
            k.name,
            k.value
        )
    })
}

/// Why a launch's shared memory cannot fit: the compiled kernel's static shared memory (its
/// facts) plus the launch's dynamic `dynamic` bytes above the device's limit per block. Checked
/// before anything is dispatched, since some drivers answer such a launch by losing the device
/// (NVIDIA's Vulkan did, with a 64 KiB shared array against 48 KiB).
pub fn shared_violation(limits: &Limits, kernel: &KernelFacts, dynamic: u64) -> Option<String> {
    let max = limits.shared_mem_per_block.as_ref()?;
    let fixed = kernel.shared_bytes.as_ref();
    let total = fixed.map_or(0, |f| f.value) + dynamic;
    if total <= max.value {
        return None;
    }
    let parts = match (fixed.filter(|f| f.value > 0), dynamic) {
        (Some(f), 0) => format!(
            "the kernel's static shared memory, {} bytes ({})",
            f.value, f.name
        ),
        (Some(f), d) => format!(
            "the kernel's static shared memory ({} bytes, {}) plus the launch's {d} bytes of \
             dynamic shared memory, {total} bytes",
            f.value, f.name
        ),
        (None, d) => format!("the launch's {d} bytes of dynamic shared memory"),
    };
    Some(format!(
        "{parts}, > {} = {} (refused before the driver)",
        max.name, max.value
    ))
}

/// The device's limits on block shape and size.
pub fn device_limit_violation(limits: &Limits, block: BlockSize) -> Option<String> {
    let t = block.threads();
    if let Some(m) = &limits.max_threads_per_block {
        if t > m.value {
            return Some(format!("{t} threads > {} = {}", m.name, m.value));
        }
    }
    if let Some(d) = &limits.max_block_dims {
        for (axis, (&want, &max)) in ["x", "y", "z"]
            .iter()
            .zip([block.x, block.y, block.z].iter().zip(&d.value.0))
        {
            if want as u64 > max {
                return Some(format!("{axis} = {want} > {}[{axis}] = {max}", d.name));
            }
        }
    }
    None
}

/// Residency from the model in the core, for APIs without an occupancy query.
pub fn modelled_residency(
    limits: &Limits,
    kernel: &KernelFacts,
    block: BlockSize,
) -> Option<Residency> {
    let m = limits.mp_model.as_ref()?;
    let regs = kernel.registers.as_ref().map(|r| r.value);
    let n = model_blocks_per_mp(m, block.threads(), regs);
    let reg_note = match &kernel.registers {
        Some(r) => format!(" + {} registers/thread ({})", r.value, r.name),
        None => " (register count unknown: not counted)".into(),
    };
    Some(Residency {
        blocks_per_mp: n,
        source: format!("{}{}", m.source, reg_note),
    })
}

/// Which of `backends`, all on one physical device, plans for every one of them: the first
/// that answers residency for `block` itself (an occupancy API), else the first (the core's
/// model then plans); `None` when there are none. Without a block, the first.
pub fn planner<'a, B: Backend + ?Sized + 'a>(
    backends: impl IntoIterator<Item = &'a mut B>,
    block: Option<BlockSize>,
) -> Result<Option<usize>, BackendError> {
    let mut first = None;
    for (i, b) in backends.into_iter().enumerate() {
        first = first.or(Some(i));
        let Some(block) = block else { break };
        if b.residency(block)?.is_some() {
            return Ok(Some(i));
        }
    }
    Ok(first)
}

/// The grid of a wave `policy` on a GPU with no compute-unit count: the blocks covering the work
/// (clamped to the device's maximum; the grid-stride loop keeps any grid correct), scaled for a
/// fraction or multiple of a wave and never past the covering grid.
fn covering_wave(policy: GridPolicy, block: BlockSize, pixels: u64, max_x: Option<u64>) -> u64 {
    let cover = GridPolicy::Data.grid(block, pixels, None, 1, None);
    let wave = cover.min(max_x.unwrap_or(u64::MAX)).max(1);
    match policy {
        GridPolicy::Waves(h) => (wave * u64::from(h)).div_ceil(100).min(wave).max(1),
        _ => wave,
    }
}

/// Plans the rows for `backend`: grid from `policy`, residency from the backend (or the model).
pub fn plan(
    backend: &mut dyn Backend,
    pixels: u64,
    config: &SweepConfig,
) -> Result<Plan, BackendError> {
    let limits = backend.limits().clone();
    let kernel = backend.kernel_facts().clone();
    let mps = Limits::value(&limits.multiprocessors).unwrap_or(1);
    let max_grid_x = limits.max_grid_dims.as_ref().map(|d| d.value.0[0]);
    // A GPU whose API states no compute units (WebGPU) has no wave to size: one block per
    // unit of 1 unit would run the frame on one block. Its wave is the covering grid instead.
    let no_units = limits.multiprocessors.is_none() && backend.identity().kind == DeviceKind::Gpu;
    let mut rows = Vec::new();
    let mut sources: Vec<String> = Vec::new();
    let axis = !config.pairs.is_empty();
    for (block, policy) in config.launches() {
        let blocked = match config.strict_kernel_limit {
            false => device_limit_violation(&limits, block),
            true => limit_violation(&limits, &kernel, block),
        };
        let residency = if blocked.is_some() {
            None
        } else {
            match backend.residency(block)? {
                Some(r) => Some(r),
                None => modelled_residency(&limits, &kernel, block),
            }
        };
        if let Some(r) = &residency {
            if !sources.contains(&r.source) {
                sources.push(r.source.clone());
            }
        }
        let resident = residency.as_ref().map(|r| r.blocks_per_mp.max(1));
        let mut grid = match no_units && policy.is_waves() {
            true => covering_wave(policy, block, pixels, max_grid_x),
            false => policy.grid(block, pixels, resident, mps, max_grid_x),
        };
        if let (true, Some(cap)) = (policy.is_waves(), &limits.max_loop_iterations) {
            // A driver that ends loops early needs enough threads that none loops past it.
            let floor = pixels.div_ceil(block.x as u64 * cap.value.max(1));
            if floor > grid {
                grid = floor;
                let note = format!(
                    "raised to at least ceil(pixels / (block x {} = {}))",
                    cap.name, cap.value
                );
                if !sources.contains(&note) {
                    sources.push(note);
                }
            }
        }
        rows.push(PlannedRow {
            block,
            grid,
            residency,
            policy: axis.then_some(policy),
        });
    }
    let who = format!("{} on {}", backend.api(), backend.identity().name);
    let grid_source = match config.grid {
        GridPolicy::Wave | GridPolicy::Waves(_) if no_units => format!(
            "{who}: the API states no compute-unit count, so a wave is the covering grid, \
             ceil(work / block){}",
            max_grid_x.map_or(String::new(), |m| format!(", at most {m}"))
        ),
        GridPolicy::Wave if sources.is_empty() => format!(
            "{who}: no occupancy data for this device (a {} device has no warp slots to model); \
             wave = 1 {} per compute unit x {mps} compute units",
            backend.identity().kind,
            backend.api().block_word()
        ),
        GridPolicy::Wave => format!("{who}: {}", sources.join("; ")),
        GridPolicy::Data => {
            "the blocks covering the work: ceil(work / block) in each dimension".into()
        }
        GridPolicy::Fixed(n) => format!("fixed: {n} blocks for every row"),
        GridPolicy::Waves(_) => format!("{who}: {}", sources.join("; ")),
    };
    Ok(Plan {
        rows,
        policy: config.grid,
        grid_source,
    })
}
