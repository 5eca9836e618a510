//! Every kernel source computes the same weighted sum as the CPU reference.

use blocksweep_core::WEIGHTS;

fn source(path: &str) -> String {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(path);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

#[test]
fn every_kernel_uses_the_reference_weights() {
    for path in [
        "kernels/grayscale.cu",
        "kernels/grayscale.cl",
        "shaders/grayscale.comp",
    ] {
        let s = source(path);
        for w in WEIGHTS {
            let lit = format!("{w}");
            assert!(s.contains(&lit), "{path} does not contain the weight {lit}");
        }
        assert!(s.contains("0.299") && s.contains("0.587") && s.contains("0.114"));
    }
}

#[test]
fn every_kernel_is_a_grid_stride_loop() {
    assert!(source("kernels/grayscale.cu").contains("gridDim.x"));
    assert!(source("kernels/grayscale.cl").contains("get_num_groups(0)"));
    assert!(source("shaders/grayscale.comp").contains("gl_NumWorkGroups.x"));
}
