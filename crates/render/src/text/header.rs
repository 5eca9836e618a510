//! What each API's table was measured on and how: the full header (verbose), and the brief
//! line a short report gives each API.

use super::cells::{ms, spread};
use blocksweep_core::report::Failure;
use blocksweep_core::sweep::{kernel_limit_violation, SweepResult, SweepRow};

const MIB: f64 = 1024.0 * 1024.0;

/// The device, then how it was measured: a line for each.
pub(super) fn header(r: &SweepResult) -> Vec<String> {
    let mut h = device_lines(r);
    h.push(work_line(r));
    h.push(timing_line(r));
    h.push(format!("Caches: {}", r.protocol.caches.describe()));
    h.extend(super::clocks::clocks_line(r).map(|c| format!("Clocks: {c}")));
    h.extend(cache_note(r));
    h.push(format!("Grid: {} ({})", r.policy, r.grid_source));
    h.push(kernel_line(r));
    if let Some(c) = &r.copy {
        h.push(format!(
            "Copy ceiling: {:.1} GB/s (read + write), {:.1} MiB copied in {} ms {} by {}, same protocol",
            c.gbps,
            c.bytes as f64 / MIB,
            ms(c.timing.stats.mean),
            spread(&c.timing),
            c.method
        ));
    }
    h
}

/// A short report's lines for one API: its device and clock, the copy ceiling, and what the
/// side-by-side table cannot show (validation, a frame held in cache, sizes past the kernel's
/// limit).
pub(super) fn brief(r: &SweepResult, failures: &[Failure]) -> Vec<String> {
    // The copy's method up to its qualifiers: "vkCmdCopyBuffer", "cuMemcpyDtoDAsync".
    let copy = r
        .copy
        .as_ref()
        .map(|c| {
            let method = c.method.split([',', '(']).next().unwrap_or("").trim();
            format!("; copy ceiling {:.1} GB/s ({method})", c.gbps)
        })
        .unwrap_or_default();
    let d = &r.device;
    let mut lines = vec![format!(
        "{}: {} ({}{}; driver {}); timed on the device's clock, resolution {} ns{copy}",
        r.api,
        d.name,
        d.kind,
        capability(r),
        d.driver_version,
        r.timer.resolution_ns
    )];
    lines.extend(super::clocks::clocks_line(r).map(|c| format!("  clocks {c}")));
    lines.extend(validation_line(r, failures).map(|v| format!("  {v}")));
    lines.extend(r.protocol.caches.brief().map(|c| format!("  {c}")));
    lines.extend(
        cache_note(r)
            .filter(|_| cache_held(r))
            .map(|c| format!("  {c}")),
    );
    let past: Vec<String> = above_kernel_limit(r).map(|x| x.block.to_string()).collect();
    if !past.is_empty() {
        lines.push(format!(
            "  Sizes {} ran above the kernel's own stated limit and the driver accepted them \
             (--verbose names the limit)",
            past.join(", ")
        ));
    }
    lines
}

/// The rows that ran above the kernel's own stated limit (a row's note may say other things,
/// such as which row is the reference).
pub(super) fn above_kernel_limit(r: &SweepResult) -> impl Iterator<Item = &SweepRow> {
    r.rows
        .iter()
        .filter(|x| x.ran() && kernel_limit_violation(&r.kernel, x.block).is_some())
}

/// ", compute capability 9.0" where the API has one.
fn capability(r: &SweepResult) -> String {
    r.limits
        .compute_capability
        .as_ref()
        .map(|c| format!(", compute capability {}.{}", c.value.0, c.value.1))
        .unwrap_or_default()
}

/// "NVIDIA H200 (GPU, compute capability 9.0; driver 580.159.04; CUDA 13.0)".
fn device_words(r: &SweepResult) -> String {
    let d = &r.device;
    let version = d.api_version_named();
    format!(
        "{} ({}{}; driver {}; {version})",
        d.name,
        d.kind,
        capability(r),
        d.driver_version
    )
}

/// The device, its UUID and PCI address, its multiprocessors and what is resident on one.
fn device_lines(r: &SweepResult) -> Vec<String> {
    let d = &r.device;
    let l = &r.limits;
    let w = r.api.words();
    let mut h = vec![format!("{}: {}", r.api, device_words(r))];
    if let Some(u) = d.uuid_string() {
        h.push(format!(
            "  UUID {u}{}",
            d.pci_bus_id
                .as_ref()
                .map(|p| format!(", PCI {p}"))
                .unwrap_or_default()
        ));
    }
    let mps = l
        .multiprocessors
        .as_ref()
        .map(|m| format!("{} {}", m.value, m.name))
        .unwrap_or_else(|| format!("{} count not exposed", w.multiprocessor));
    match &l.mp_model {
        Some(m) => h.push(format!(
            "  {mps}; resident {}s/{} {}, resident {}s/{} {} ({})",
            w.warp, w.multiprocessor, m.max_warps, w.block, w.multiprocessor, m.max_blocks, m.source
        )),
        None => h.push(format!(
            "  {mps}; a {} device has no {} slots or residency limits, so those columns are left out{}",
            d.kind,
            w.warp,
            l.warp_size
                .as_ref()
                .map(|x| format!("; '{}s' counts groups of {} = {}", w.warp, x.name, x.value))
                .unwrap_or_default()
        )),
    }
    h
}

/// What every row of these APIs computed: the first's [`work_line`], naming each API's source
/// where they ran different ones ("sources scale.comp (GLSL), entry main (Vulkan); scale.cl
/// (OpenCL C), entry scale (OpenCL)").
pub(super) fn work_line_of(results: &[SweepResult]) -> Option<String> {
    let first = results.first()?;
    let sources: Vec<(String, &str)> = results
        .iter()
        .filter_map(|r| r.program.as_ref().map(|p| (p.source.clone(), r.api.name())))
        .collect();
    let several = sources.iter().any(|(s, _)| *s != sources[0].0);
    Some(match (&first.program, several) {
        (Some(p), true) => {
            let each: Vec<String> = sources.iter().map(|(s, a)| format!("{s} ({a})")).collect();
            program_line(p, &first.frame, &format!("sources {}", each.join("; ")))
        }
        _ => work_line(first),
    })
}

/// The frame, or the user's kernel and its sizes: what every row computed.
pub(super) fn work_line(r: &SweepResult) -> String {
    let f = &r.frame;
    match &r.program {
        Some(p) => program_line(p, f, &format!("source {}", p.source)),
        None => format!(
            "Image: {} x {}, {} pixels, {:.1} MiB moved per pass (seed {})",
            f.width,
            f.height,
            f.pixels,
            f.bytes_per_pass as f64 / MIB,
            f.seed
        ),
    }
}

/// "Kernel: compiled by ..., 16 registers/thread (...), max thread block 1024 (...)".
fn kernel_line(r: &SweepResult) -> String {
    let k = &r.kernel;
    let w = r.api.words();
    let mut kf = vec![format!("compiled by {}", k.compiled_by)];
    if let Some(x) = &k.registers {
        kf.push(format!("{} registers/{} ({})", x.value, w.thread, x.name));
    }
    if let Some(x) = &k.max_block {
        kf.push(format!("max {} {} ({})", w.block, x.value, x.name));
    }
    // A user's kernel: every limit of its own, next to the device's.
    if r.program.is_some() {
        for (what, x) in [
            ("static shared bytes", &k.shared_bytes),
            ("private bytes", &k.private_bytes),
            ("preferred multiple", &k.preferred_multiple),
        ] {
            if let Some(x) = x {
                kf.push(format!("{what} {} ({})", x.value, x.name));
            }
        }
    }
    // A frame too large for one allocation, split by the backend: said where it happened.
    if let Some((_, planes)) = k.extra.iter().find(|(key, _)| key == "planes") {
        kf.push(format!("planes {planes}"));
    }
    format!("Kernel: {}", kf.join(", "))
}

/// "Validation: VK_LAYER_KHRONOS_validation on, with synchronization validation; it raised no
/// message", where the API's checking layer was on (its `validation` extra limit).
pub(super) fn validation_line(r: &SweepResult, failures: &[Failure]) -> Option<String> {
    let (_, on) = r.limits.extra.iter().find(|(k, _)| k == "validation")?;
    let said = failures
        .iter()
        .filter(|f| f.api == r.api)
        .find_map(|f| f.message.split_once(" validation message(s)"))
        .map(|(n, _)| n);
    Some(match said {
        None => format!("Validation: {on}; it raised no message"),
        Some("1") => format!("Validation: {on}; it raised 1 message (listed at the end)"),
        Some(n) => format!("Validation: {on}; it raised {n} messages (listed at the end)"),
    })
}

/// "Your kernel: saxpy (examples/kernels/saxpy/kernel.toml) at n=16777216, 16777216 work items,
/// 192.0 MiB moved per dispatch; source saxpy.cu (CUDA C++), entry saxpy; checked: y (exact)",
/// `sources` saying the source or each API's.
fn program_line(
    p: &blocksweep_core::sweep::ProgramInfo,
    f: &blocksweep_core::frame::FrameInfo,
    sources: &str,
) -> String {
    let moved = match p.bytes_known {
        // A small kernel's bytes in KiB: "0.0 MiB" said nothing of 48 KiB.
        true if f.bytes_per_pass < 1 << 20 => format!(
            "{:.1} KiB moved per dispatch",
            f.bytes_per_pass as f64 / 1024.0
        ),
        true => format!(
            "{:.1} MiB moved per dispatch",
            f.bytes_per_pass as f64 / MIB
        ),
        false => "bytes moved not declared (no GB/s)".to_string(),
    };
    let checked = match p.checked.is_empty() {
        true => "not checked (the spec is timing-only)".to_string(),
        false => format!(
            "checked at every size on its own (guard bands, unwritten elements, NaN and Inf), \
             against its first size, and across the APIs: {}",
            p.checked.join(", ")
        ),
    };
    format!(
        "Your kernel: {} ({}) at {}, {} work items, {moved}; {sources}; {checked}",
        p.name, p.spec, p.sizes, f.pixels,
    )
}

/// "Timing: <discipline in words>; 140 timed dispatches per row (adaptive: >= 5 ms) after 3
/// warm-ups; <timer>, resolution 500 ns".
pub(super) fn timing_line(r: &SweepResult) -> String {
    let p = &r.protocol;
    let counts: Vec<u32> = r
        .rows
        .iter()
        .filter_map(|x| x.timing.as_ref().map(|t| t.reps))
        .collect();
    let (lo, hi) = (counts.iter().min(), counts.iter().max());
    let n = match (lo, hi) {
        (Some(a), Some(b)) if a == b => format!("{a}"),
        (Some(a), Some(b)) => format!("{a}–{b}"),
        _ => "no".into(),
    };
    format!(
        "Timing ({}): {}; {n} timed dispatches per row ({}) after {} warm-ups; {}, resolution {} ns{}",
        p.discipline,
        p.discipline.describe(),
        p.reps.words(),
        p.warmups,
        r.timer.method,
        r.timer.resolution_ns,
        clock_words(r)
    )
}

/// "; against the host's clock, each row's timed batch read 0.97 to 1.00 of the host's wait
/// around it (median 0.99)": the device timer checked by an independent clock.
fn clock_words(r: &SweepResult) -> String {
    let mut ratios: Vec<f64> = r
        .rows
        .iter()
        .filter_map(|x| x.timing.as_ref()?.clock.map(|c| c.ratio()))
        .collect();
    if ratios.is_empty() {
        return String::new();
    }
    ratios.sort_by(f64::total_cmp);
    format!(
        "; against the host's clock, each row's timed batch read {:.2} to {:.2} of the host's \
         wait around it (median {:.2}; the host also pays for submitting and waiting)",
        ratios[0],
        ratios[ratios.len() - 1],
        ratios[ratios.len() / 2]
    )
}

/// "fixed by --reps" or "adaptive: at least 10, aiming at 2 ms of device time per batch".
/// Whether the frame's traffic fits in the last-level cache: then the run measures the cache,
/// not DRAM, and says so.
pub(super) fn cache_note(r: &SweepResult) -> Option<String> {
    let l2 = r.limits.l2_bytes.as_ref()?;
    // Cold, the cache is flushed before each dispatch: the Caches line says so.
    if l2.value == 0 || r.protocol.caches.is_cold() {
        return None;
    }
    let traffic = r.frame.bytes_per_pass;
    // A kernel that declares no bytes moved (no `bytes_per_item`): its traffic is unknown, not
    // 0 MiB that fits in the cache.
    if traffic == 0 {
        return None;
    }
    let ratio = traffic as f64 / l2.value as f64;
    Some(if ratio <= 1.0 {
        format!(
            "Cache: the {:.1} MiB a pass moves fits in the {:.1} MiB last-level cache ({}): this run measures the cache, not DRAM (--cold flushes it before each dispatch)",
            traffic as f64 / MIB,
            l2.value as f64 / MIB,
            l2.name
        )
    } else if ratio < 4.0 {
        format!(
            "Cache: a pass moves {ratio:.1}x the {:.1} MiB last-level cache ({}): mostly DRAM, part cache; use a larger --size for a pure DRAM figure",
            l2.value as f64 / MIB,
            l2.name
        )
    } else {
        return None;
    })
}

/// True when a pass fits in the last-level cache: then even the short report says so.
fn cache_held(r: &SweepResult) -> bool {
    !r.protocol.caches.is_cold()
        && r.limits
            .l2_bytes
            .as_ref()
            .is_some_and(|l2| l2.value > 0 && r.frame.bytes_per_pass <= l2.value)
}
