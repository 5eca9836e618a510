//! Every API's grayscale kernel computes the same weighted sum as the CPU reference, in a
//! grid-stride loop. The APIs are the provider list's; each one's source is the file the grayscale
//! spec names for it (examples/kernels/grayscale: the project's own kernels/ and shaders/).

use std::path::{Path, PathBuf};

use blocksweep_core::{KernelSpec, Language, ProgramSource, WEIGHTS};

fn grayscale_spec() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/kernels/grayscale/kernel.toml")
}

/// Each API of the provider list with its grayscale source. An API the spec has no source for
/// (one whose backend runs no user kernel) is said on stderr and not checked.
fn grayscale_sources() -> Vec<(&'static str, ProgramSource)> {
    let path = grayscale_spec();
    for d in blocksweep_apis::all() {
        blocksweep_core::Api::register(d.api());
    }
    let spec = KernelSpec::load(&path).unwrap_or_else(|e| panic!("{e}"));
    let keys: Vec<&'static str> = blocksweep_apis::all()
        .iter()
        .map(|d| d.api().key())
        .collect();
    for key in spec.apis() {
        assert!(
            keys.contains(&key),
            "{key} is in the spec, not in the provider list"
        );
    }
    let mut sources = Vec::new();
    for key in keys {
        match spec.sources_for(key) {
            Some(source) => sources.push((key, source)),
            None => eprintln!("NOT CHECKED: {key} has no source in {}", path.display()),
        }
    }
    assert!(
        !sources.is_empty(),
        "{} names no API's source",
        path.display()
    );
    sources
}

/// The built-in a grid-stride loop strides by: the number of groups in x, per language.
fn group_count_builtin(language: Language) -> Option<&'static str> {
    match language.key {
        "cuda" => Some("gridDim.x"),
        "opencl" => Some("get_num_groups(0)"),
        "glsl" => Some("gl_NumWorkGroups.x"),
        "wgsl" => Some("num_workgroups"),
        _ => None,
    }
}

#[test]
fn every_kernel_uses_the_reference_weights() {
    for (key, source) in grayscale_sources() {
        let (s, path) = (source.text(), &source.origin);
        for w in WEIGHTS {
            let lit = format!("{w}");
            assert!(
                s.contains(&lit),
                "{key}: {path} does not contain the weight {lit}"
            );
        }
        assert!(s.contains("0.299") && s.contains("0.587") && s.contains("0.114"));
    }
}

#[test]
fn every_kernel_is_a_grid_stride_loop() {
    for (key, source) in grayscale_sources() {
        let builtin = group_count_builtin(source.language).unwrap_or_else(|| {
            panic!(
                "{key}: {} is a binary; the spec should name its source",
                source.origin
            )
        });
        assert!(
            source.text().contains(builtin),
            "{key}: {} does not stride by {builtin}",
            source.origin
        );
    }
}
