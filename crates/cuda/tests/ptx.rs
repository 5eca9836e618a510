//! The embedded PTX is NVRTC 12.0's output for the current kernels/grayscale.cu. These checks
//! need no GPU and no CUDA: they read the files. (tools/ci/regen-ptx.sh --check, run by
//! tools/ci/cuda-floor-check.sh, goes further and regenerates it byte for byte.)

use sha2::{Digest, Sha256};

fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn kernels_dir() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../kernels")
}

/// The hash tools/ci/regen-ptx.sh wrote into the PTX's header: of the .cu it compiled.
fn recorded_source_hash(ptx: &str) -> &str {
    let line = ptx
        .lines()
        .find(|l| l.starts_with("// source: kernels/grayscale.cu, sha256 "))
        .expect(
            "kernels/grayscale.ptx has no source line: regenerate it with tools/ci/regen-ptx.sh",
        );
    line.rsplit(' ').next().unwrap_or_default()
}

#[test]
fn ptx_was_generated_from_the_current_source() {
    let cu = std::fs::read(kernels_dir().join("grayscale.cu")).unwrap();
    let ptx = std::fs::read_to_string(kernels_dir().join("grayscale.ptx")).unwrap();
    assert_eq!(
        recorded_source_hash(&ptx),
        sha256_hex(&cu),
        "kernels/grayscale.cu changed since kernels/grayscale.ptx was generated: run \
         tools/ci/regen-ptx.sh"
    );
    // The crate embeds the same bytes it is tested against.
    assert_eq!(blocksweep_cuda::KERNEL_SOURCE.as_bytes(), &cu[..]);
    assert_eq!(blocksweep_cuda::KERNEL_PTX, ptx);
}

#[test]
fn readme_says_how_to_regenerate() {
    let readme = std::fs::read_to_string(kernels_dir().join("README.md")).unwrap();
    assert!(
        readme.contains("tools/ci/regen-ptx.sh"),
        "kernels/README.md"
    );
}

#[test]
fn ptx_has_every_entry_and_loads_on_every_driver_since_cuda_12_0() {
    let ptx = blocksweep_cuda::KERNEL_PTX;
    for entry in blocksweep_core::KernelVariant::ALL.map(|k| k.entry()) {
        assert!(
            ptx.contains(&format!(".entry {entry}(")),
            "PTX lacks .entry {entry}"
        );
    }
    // NVRTC 12.0's compute_50 PTX (ISA 8.0): R525 (CUDA 12.0) and every later driver JITs it
    // for every GPU it supports; an ISA above a driver's own is refused
    // (CUDA_ERROR_UNSUPPORTED_PTX_VERSION).
    assert!(ptx.contains("\n.version 8.0\n"));
    assert!(ptx.contains("\n.target sm_50\n"));
    assert!(ptx.contains("release 12.0, V12.0.140"));
    assert!(ptx.contains("options: --gpu-architecture=compute_50 --std=c++17"));
}

#[test]
fn ptx_and_source_use_the_core_weights() {
    let ptx = blocksweep_cuda::KERNEL_PTX;
    for (w, literal) in blocksweep_core::WEIGHTS
        .iter()
        .zip(["0.299f", "0.587f", "0.114f"])
    {
        assert!(blocksweep_cuda::KERNEL_SOURCE.contains(literal));
        // PTX writes f32 constants as 0f + the IEEE bits.
        let bits = format!("0f{:08X}", w.to_bits());
        assert!(ptx.contains(&bits), "PTX lacks {bits} ({w})");
    }
}
