//! End to end, what a run says about itself beyond its rows: a sweep under `--vk-validation`
//! says, in its text and its JSON, that the validation layer was on (what an interrupted run
//! says is in interrupted.rs).

use crate::support::{available, succeeds, succeeds_json, words};

#[test]
fn validation_on_is_in_the_json_and_absent_without_it() {
    if !available("vulkan") {
        return;
    }
    let quick = words("sweep --backend vulkan --size 96x64 --blocks 64");
    let json = |extra: &[&str]| -> serde_json::Value {
        succeeds_json(&[&quick[..], &["--reps", "2", "--format", "json"], extra].concat())
    };
    let on = json(&["--vk-validation"]);
    let extra = on["results"][0]["limits"]["extra"].as_array().unwrap();
    let said = extra.iter().find(|e| e[0] == "validation");
    assert_eq!(
        said.map(|e| e[1].clone()),
        Some("VK_LAYER_KHRONOS_validation on, with synchronization validation".into()),
        "{extra:?}"
    );
    assert!(on["failures"].as_array().unwrap().is_empty(), "{on}");
    let off = json(&[]);
    let extra = off["results"][0]["limits"]["extra"].as_array().unwrap();
    assert!(extra.iter().all(|e| e[0] != "validation"), "{extra:?}");
    let text = succeeds(&[&quick[..], &["--reps", "2"]].concat());
    assert!(!text.contains("Validation:"), "{text}");
}
