//! The embedded PTX is nvcc's output for the current kernels/grayscale.cu. These checks need
//! no GPU and no CUDA: they read the files.

use sha2::{Digest, Sha256};

/// SHA-256 of kernels/grayscale.cu when kernels/grayscale.ptx was generated from it (the
/// command is in kernels/README.md, which records the same hash). Editing the .cu without
/// regenerating the PTX fails `source_matches_the_recorded_hash`.
const RECORDED_CU_SHA256: &str = "77d57a6af761fd0f9ad5dbfc3d62defe2f559e3bade8a43863dd2d509b2a423d";

fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn kernels_dir() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../kernels")
}

#[test]
fn source_matches_the_recorded_hash() {
    let cu = std::fs::read(kernels_dir().join("grayscale.cu")).unwrap();
    assert_eq!(
        sha256_hex(&cu),
        RECORDED_CU_SHA256,
        "kernels/grayscale.cu changed since kernels/grayscale.ptx was generated: regenerate \
         the PTX (kernels/README.md) and update the hash here and in kernels/README.md"
    );
    // The crate embeds the same bytes it is tested against.
    assert_eq!(blocksweep_cuda::KERNEL_SOURCE.as_bytes(), &cu[..]);
}

#[test]
fn readme_records_the_same_hash_and_command() {
    let readme = std::fs::read_to_string(kernels_dir().join("README.md")).unwrap();
    assert!(
        readme.contains(RECORDED_CU_SHA256),
        "kernels/README.md lacks the hash"
    );
    assert!(readme
        .contains("nvcc -ptx -arch=compute_75 -O3 -o kernels/grayscale.ptx kernels/grayscale.cu"));
}

#[test]
fn ptx_has_both_entries_for_compute_75() {
    let ptx = std::fs::read_to_string(kernels_dir().join("grayscale.ptx")).unwrap();
    assert_eq!(blocksweep_cuda::KERNEL_PTX, ptx);
    for entry in [
        blocksweep_cuda::GRID_STRIDE_ENTRY,
        blocksweep_cuda::ONE_PER_THREAD_ENTRY,
    ] {
        assert!(
            ptx.contains(&format!(".entry {entry}(")),
            "PTX lacks .entry {entry}"
        );
    }
    // compute_75 PTX from CUDA 13.0 (ISA 9.0): JIT-able by every driver from R580 on, for
    // every GPU CUDA 13 supports.
    assert!(ptx.contains(".target sm_75"));
    assert!(ptx.contains(".version 9.0"));
    assert!(ptx.contains("release 13.0"));
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
