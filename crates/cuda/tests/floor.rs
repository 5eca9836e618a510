//! The CUDA 12.0 floor, checked without a GPU: every entry point blocksweep can call is
//! exported by R535's libcuda.so.1 and by NVRTC 12.0's libnvrtc.so.12.
//!
//! The export lists are vendored under tests/data (each file says how it was made), so this
//! runs everywhere; tools/ci/cuda-floor-check.sh points `BLOCKSWEEP_LIBCUDA_EXPORTS` and
//! `BLOCKSWEEP_LIBNVRTC_EXPORTS` at lists it made from freshly fetched libraries.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use blocksweep_cuda::{DRIVER_ENTRY_POINTS, NVRTC_ENTRY_POINTS, OPTIONAL_DRIVER_ENTRY_POINTS};

/// The list `env` names, else (unset) the vendored one. Set but empty is a caller's mistake,
/// not "the vendored list": it fails naming the variable.
fn exports(env: &str, vendored: &str) -> (PathBuf, BTreeSet<String>) {
    let given = std::env::var_os(env);
    assert!(
        given.as_ref().is_none_or(|p| !p.is_empty()),
        "{env} is set but empty: unset it for the vendored list, or name an export list"
    );
    let path = given.map(PathBuf::from).unwrap_or_else(|| {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data")
            .join(vendored)
    });
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let names = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(str::to_string)
        .collect();
    (path, names)
}

fn missing(wanted: &[&str], exported: &BTreeSet<String>) -> Vec<String> {
    wanted
        .iter()
        .filter(|n| !exported.contains(**n))
        .map(|n| n.to_string())
        .collect()
}

#[test]
fn every_driver_entry_point_is_exported_by_r535() {
    let (path, names) = exports("BLOCKSWEEP_LIBCUDA_EXPORTS", "libcuda-535-exports.txt");
    assert!(
        names.len() > 400,
        "{}: only {} names",
        path.display(),
        names.len()
    );
    // The list really is of a pre-12.8 driver: the symbol that made R580 the floor is absent.
    assert!(names.contains("cuInit"));
    assert!(
        !names.contains("cuEventElapsedTime_v2"),
        "{} is newer than R535",
        path.display()
    );
    // What is optional is so because the floor lacks it (cuFuncGetParamInfo is CUDA 12.4).
    for name in OPTIONAL_DRIVER_ENTRY_POINTS {
        assert!(
            !names.contains(*name),
            "{name} is in R535: make it required"
        );
    }
    let gone = missing(DRIVER_ENTRY_POINTS, &names);
    assert!(
        gone.is_empty(),
        "{} lacks {gone:?}: blocksweep would refuse this driver",
        path.display()
    );
    eprintln!(
        "{} driver entry points, all exported by {}",
        DRIVER_ENTRY_POINTS.len(),
        path.display()
    );
}

#[test]
fn every_nvrtc_entry_point_is_exported_by_nvrtc_12_0() {
    let (path, names) = exports("BLOCKSWEEP_LIBNVRTC_EXPORTS", "libnvrtc-12.0-exports.txt");
    assert!(names.contains("nvrtcVersion"), "{}", path.display());
    let gone = missing(NVRTC_ENTRY_POINTS, &names);
    assert!(gone.is_empty(), "{} lacks {gone:?}", path.display());
}

#[test]
fn the_install_hint_names_the_floor() {
    assert_eq!(
        blocksweep_cuda::MIN_DRIVER,
        "NVIDIA driver R525 or newer (CUDA 12.0)"
    );
    let hint = blocksweep_cuda::API.info().install_hint;
    assert!(
        hint.contains("R525") && hint.contains("CUDA 12.0"),
        "{hint}"
    );
}
