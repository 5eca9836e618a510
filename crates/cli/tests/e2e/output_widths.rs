//! Issue 12, through the real binary: every command's text fits 100 columns at `COLUMNS=100`
//! (and `validate` 80), and `--wide` or BLOCKSWEEP_WIDE lifts the width.

use crate::support::{
    assert_fits, available_apis, blocksweep, quick_sweep, scratch, succeeds_at, widest, words,
};

#[test]
fn every_command_fits_100_columns() {
    let apis = available_apis();
    if apis.is_empty() {
        return;
    }
    let d = scratch("fit");
    let (a, b) = (d.join("a.json"), d.join("b.json"));
    let (a, b) = (a.to_str().unwrap(), b.to_str().unwrap());
    let mut runs: Vec<Vec<&str>> = [
        "devices",
        "limits",
        "validate",
        "limits --backend all",
        "validate --backend all",
    ]
    .map(words)
    .to_vec();
    for api in &apis {
        runs.push(vec!["limits", "--backend", api]);
        runs.push(quick_sweep(api, &[]));
    }
    let merged = quick_sweep("all", &[]);
    runs.push(merged.clone());
    for (path, size) in [(a, "320x180"), (b, "160x90")] {
        let mut args = merged.clone();
        args[4] = size;
        args.extend(["-o", path]);
        runs.push(args);
    }
    for args in &runs {
        let s = succeeds_at("100", args);
        assert_fits(&s, 100, &args.join(" "));
    }
    let cmp = succeeds_at("100", &["compare", a, b]);
    assert_fits(&cmp, 100, "compare");
    // And narrower still, where a terminal is 80 wide.
    let s = succeeds_at("80", &["validate"]);
    assert_fits(&s, 80, "validate at 80");
}

#[test]
fn wide_lifts_the_width() {
    let apis = available_apis();
    if apis.is_empty() {
        return;
    }
    let narrow = succeeds_at("60", &["limits", "--backend", apis[0]]);
    assert_fits(&narrow, 60, "limits at 60");
    let wide = succeeds_at("60", &["limits", "--backend", apis[0], "--wide"]);
    assert!(widest(&wide).0 > 60, "--wide does not wrap:\n{wide}");
    let out = blocksweep()
        .env("COLUMNS", "60")
        .env("BLOCKSWEEP_WIDE", "1")
        .args(["limits", "--backend", apis[0]])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), wide);
}
