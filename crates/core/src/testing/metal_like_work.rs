//! User kernels' workloads on the made-up API, for the core's tests: `scale` as a spec, or a
//! spec of its arguments around any source.

/// The tests' kernel in this API's language, `y = k * x` over `n` elements (one thread each),
/// read as a spec from a directory holding it and its source, at its default sizes.
pub(crate) fn scale_workload(n: u64) -> crate::workload::ProgramWorkload {
    let source = "kernel void scale(device const float *x [[buffer(0)]], \
    device float *y [[buffer(1)]], constant float &k, constant uint &n, \
    uint i [[thread_position_in_grid]]) { if (i < n) y[i] = k * x[i]; }\n";
    workload_of(source, n, "")
}

/// A spec of `scale`'s arguments (x, y, k, n) with `source` as its kernel and `extra` args
/// after them, at `n` elements.
pub(crate) fn workload_of(source: &str, n: u64, extra: &str) -> crate::workload::ProgramWorkload {
    // The spec's [sources] names this API: it must be known to the process first.
    crate::api::Api::register(super::METAL_LIKE);
    let spec = format!(
        r#"
name = "scale"
work = "n"
sizes = {{ n = {n} }}

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
value = 2.5

[[args]]
scalar = "u32"
name = "n"
value = "n"
{extra}
[check]
bytes_per_item = 8
"#
    );
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("scale.metal"), source).unwrap();
    let spec = crate::spec::KernelSpec::parse("scale.toml", &spec, dir.path()).unwrap();
    let instance = spec.instantiate_default().unwrap();
    crate::workload::ProgramWorkload::new(spec, instance)
}
