//! Configurations checked against each other: a correct kernel's output does not depend on
//! its parameters, so every parameter set's output must equal the first one's on the same
//! API (and the first set's outputs are checked across APIs by the sweep itself).

use crate::spec::{compare, Instance};

/// Compares one parameter set's written buffers (`got`, in written-buffer order) with the
/// first set's (`expected`) under the spec's tolerance; `Err` names the buffer and how.
pub fn compare_outputs(
    instance: &Instance,
    expected: &[Vec<u8>],
    got: &[Vec<u8>],
) -> Result<(), String> {
    for (j, b) in instance.written().enumerate() {
        let (Some(e), Some(g)) = (expected.get(j), got.get(j)) else {
            return Err(format!("output '{}' is missing", b.decl.name));
        };
        compare(&b.decl, e, g, &instance.tolerance)
            .map_err(|m| format!("output '{}': {m}", b.decl.name))?;
    }
    Ok(())
}
