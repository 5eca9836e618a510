//! User kernels' workloads on the made-up API, for the core's tests: `scale` as a spec, or a
//! spec of its arguments around any source.

/// The tests' kernel in this API's language: `y = k * x` over `n` elements, one thread each.
pub(crate) const SCALE_SOURCE: &str = "kernel void scale(device const float *x [[buffer(0)]], \
    device float *y [[buffer(1)]], constant float &k, constant uint &n, \
    uint i [[thread_position_in_grid]]) { if (i < n) y[i] = k * x[i]; }\n";

/// `scale` as a spec of its source, read from a directory holding both, at its default sizes.
pub(crate) fn scale_workload(n: u64) -> crate::workload::ProgramWorkload {
    workload_of(SCALE_SOURCE, n, "")
}

/// `scale`'s spec text (x, y, k, n) at `n` elements: `k` is its scalar's value as TOML (`2.5`,
/// or a parameter's name in quotes), `tune` a `[tune]` table or nothing, `extra` args after n.
pub(crate) fn scale_spec(n: u64, k: &str, tune: &str, extra: &str) -> String {
    format!(
        r#"
name = "scale"
work = "n"
sizes = {{ n = {n} }}
{tune}

[sources]
metal-like = {{ file = "scale.metal", entry = "scale" }}

[[args]]
buffer = "f32"
name = "x"
elements = "n"
init = "random"

[[args]]
buffer = "f32"
name = "y"
elements = "n"
written = true

[[args]]
scalar = "f32"
name = "k"
value = {k}

[[args]]
scalar = "u32"
name = "n"
value = "n"
{extra}
[check]
bytes_per_item = 8
"#
    )
}

/// A spec of `scale`'s arguments (x, y, k, n) with `source` as its kernel and `extra` args
/// after them, at `n` elements.
pub(crate) fn workload_of(source: &str, n: u64, extra: &str) -> crate::workload::ProgramWorkload {
    // The spec's [sources] names this API: it must be known to the process first.
    crate::api::Api::register(super::METAL_LIKE);
    let spec = scale_spec(n, "2.5", "", extra);
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("scale.metal"), source).unwrap();
    let spec = crate::spec::KernelSpec::parse("scale.toml", &spec, dir.path()).unwrap();
    let instance = spec.instantiate_default().unwrap();
    crate::workload::ProgramWorkload::new(spec, instance)
}

/// `work` prepared on `b` and swept over `blocks` (linear), one timed dispatch per row, no
/// copy ceiling.
pub(crate) fn sweep_blocks(
    work: &crate::workload::ProgramWorkload,
    b: &mut super::MetalLikeBackend,
    blocks: &[u32],
) -> crate::workload::Swept {
    work.prepare(b).unwrap();
    let config = crate::sweep::SweepConfig {
        blocks: blocks
            .iter()
            .map(|&t| crate::blocks::BlockSize::linear(t))
            .collect(),
        protocol: crate::measure::Protocol {
            warmups: 0,
            reps: crate::measure::Reps::Fixed(1),
            discipline: crate::measure::Discipline::Batch,
            ..Default::default()
        },
        copy: false,
        ..Default::default()
    };
    let how = crate::sweep::SweepRun {
        config: &config,
        shared: None,
        observer: &mut crate::sweep::Quiet,
        on_row: &mut |_| {},
        clock: None,
    };
    work.measure(b, true, how)
}
