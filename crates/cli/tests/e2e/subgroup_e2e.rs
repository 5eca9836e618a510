//! `validate`'s subgroup rows on the CPU drivers here, end to end: on lavapipe the probe runs
//! at every block and required size and agrees with itself and with subgroupSizeControl's
//! range; on PoCL (no cl_khr_subgroups, no NVIDIA query) the rows say there is no subgroup
//! query rather than failing. Text, JSON and CSV carry the same verdicts.

use crate::support::{available, succeeds, succeeds_json};
use blocksweep_core::subgroup::{ApiSubgroups, SUBGROUP_ASSUMPTIONS};

fn validate_json(key: &str) -> Vec<serde_json::Value> {
    let v = succeeds_json(&["validate", "--backend", key, "--format", "json"]);
    assert_eq!(v["command"], "validate");
    v["checks"].as_array().unwrap().clone()
}

/// The API's subgroup verdict rows (one per assumption) and its probe.
fn subgroup_rows(all: &[serde_json::Value], key: &str) -> (Vec<serde_json::Value>, ApiSubgroups) {
    let mine = |r: &&serde_json::Value| r["api"] == key;
    let rows: Vec<_> = all
        .iter()
        .filter(mine)
        .filter(|r| !r["subgroups"].is_null())
        .cloned()
        .collect();
    assert_eq!(rows.len(), SUBGROUP_ASSUMPTIONS.len(), "{rows:?}");
    let probe = all
        .iter()
        .filter(mine)
        .find(|r| !r["subgroup_probe"].is_null())
        .expect("a subgroup_probe row");
    let probe = serde_json::from_value(probe["subgroup_probe"].clone()).unwrap();
    (rows, probe)
}

#[test]
fn vulkan_subgroups_measured_agree_with_themselves_and_the_claims() {
    if !available("vulkan") {
        return;
    }
    let all = validate_json("vulkan");
    let (rows, s) = subgroup_rows(&all, "vulkan");
    assert_eq!(s.unmeasured, None);
    s.self_consistent().unwrap();
    let claimed = s.claims.claimed().expect("subgroupSize");
    // At the default size the reported size is subgroupSize and the ballots agree.
    for d in s.at(None) {
        assert_eq!(d.reported(), [claimed], "{d:?}");
        assert_eq!(d.width(), Some(claimed.min(d.block)), "{d:?}");
    }
    // Each size the pipeline may require ran as required.
    let (min, max) = s
        .claims
        .range
        .expect("lavapipe states minSubgroupSize..maxSubgroupSize");
    for &r in &s.claims.required {
        assert!(r >= min && r <= max);
        assert!(s.at(Some(r)).all(|d| d.reported() == [r]));
    }
    // The claim held everywhere it was judged (lavapipe does not lie about its width).
    for r in &rows {
        let v = &r["subgroups"];
        assert_ne!(v["verdict"], "the claim does not hold", "{r}");
        assert!(
            v["claims"].as_str().unwrap().starts_with("claims")
                || v["claims"].as_str().unwrap().starts_with("may"),
            "{r}"
        );
    }
    let text = succeeds(&["validate", "--backend", "vulkan"]);
    assert!(
        text.contains("Subgroups: what each API claims, and what ran"),
        "{text}"
    );
    assert!(
        text.contains(&format!("claims {claimed}, measured")),
        "{text}"
    );
    let csv = succeeds(&["validate", "--backend", "vulkan", "--format", "csv"]);
    assert!(
        csv.lines()
            .any(|l| l.starts_with("vulkan,") && l.contains("a warp is 32 lanes")),
        "{csv}"
    );
    assert!(
        csv.lines()
            .any(|l| l.contains("subgroup probe") && l.contains(",100,1,")),
        "{csv}"
    );
}

#[test]
fn opencl_without_subgroups_says_so_in_every_row() {
    if !available("opencl") {
        return;
    }
    let all = validate_json("opencl");
    let (rows, s) = subgroup_rows(&all, "opencl");
    // PoCL builds neither probe here: no cl_khr_subgroups, no __opencl_c_subgroups, not NVIDIA.
    // A device that has sub-groups is measured instead, and must agree with itself.
    match &s.unmeasured {
        Some(why) => {
            assert!(
                why.starts_with("no subgroup query in this API on this device"),
                "{why}"
            );
            assert!(s.dispatches.is_empty());
            for r in &rows[..4] {
                assert_eq!(r["subgroups"]["holds"], serde_json::Value::Null, "{r}");
                let v = r["subgroups"]["verdict"].as_str().unwrap();
                assert_eq!(v, "no subgroup query in this API on this device", "{r}");
            }
        }
        None => s.self_consistent().unwrap(),
    }
    // The checks before it still ran.
    assert!(all
        .iter()
        .any(|r| r["api"] == "opencl" && r["outcome"]["kind"] == "verified"));
}
