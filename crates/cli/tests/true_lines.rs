//! Lines a user reads that once said something false (issue 40), each checked against the
//! binary's own output.

mod support;

use serde_json::Value;
use support::{available_apis, succeeds};

/// validate's row 8 (a 1x1x65 block) is about an extent: who guarantees it names OpenCL's
/// CL_DEVICE_MAX_WORK_ITEM_SIZES (it named only CL_DEVICE_MAX_WORK_GROUP_SIZE).
#[test]
fn validate_names_the_extent_limit_for_a_1x1x65_block() {
    if available_apis().is_empty() {
        return;
    }
    let doc: Value = serde_json::from_str(&succeeds(&["validate", "--format", "json"])).unwrap();
    let row = doc["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["assumption"]["claim"] == "a 1x1x65 block is rejected")
        .unwrap();
    let said = row["assumption"]["guarantee"].as_str().unwrap();
    assert!(
        said.contains(
            "OpenCL (CL_DEVICE_MAX_WORK_GROUP_SIZE ≥ 1; CL_DEVICE_MAX_WORK_ITEM_SIZES ≥ (1, 1, 1))"
        ),
        "{said}"
    );
}
