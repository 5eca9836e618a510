//! `launch-cost` on the CPU drivers: a line per API with figures in their order, an API whose
//! limits refuse the block failing under its name while the others' lines stay, and bad
//! counts refused as input.

use crate::support::{
    available_apis, bad_input, blocksweep, csv_field, csv_rows, stderr, succeeds_json, words,
};

fn backend(apis: &[&str]) -> String {
    match apis.len() {
        1 => apis[0].to_string(),
        _ => "all".to_string(),
    }
}

#[test]
fn each_api_has_one_checked_line_with_its_figures() {
    let apis = available_apis();
    if apis.is_empty() {
        return;
    }
    let line = format!(
        "launch-cost --dispatches 100 --round-trips 11 --format csv --backend {}",
        backend(&apis)
    );
    let out = blocksweep().args(words(&line)).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let csv = String::from_utf8_lossy(&out.stdout).into_owned();
    let rows = csv_rows(&csv);
    assert_eq!(rows.len(), 1 + apis.len(), "{csv}");
    for row in &rows[1..] {
        let field = |c: &str| csv_field(&rows[0], row, c);
        let num = |c: &str| field(c).parse::<f64>().unwrap();
        assert!(apis.contains(&field("api")), "{row:?}");
        assert_eq!((field("block"), field("grid")), ("32", "1"));
        assert_eq!((field("dispatches"), field("round_trips")), ("100", "11"));
        assert!(num("device_us") > 0.0 && num("enqueue_us") > 0.0, "{row:?}");
        let (min, median, p90) = (
            num("round_trip_min_us"),
            num("round_trip_median_us"),
            num("round_trip_p90_us"),
        );
        assert!(0.0 < min && min <= median && median <= p90, "{row:?}");
    }
}

#[test]
fn a_block_above_an_apis_limit_fails_that_api_only() {
    let apis = available_apis();
    if apis.is_empty() {
        return;
    }
    let b = backend(&apis);
    // Which APIs take a block of 2048 threads, by their own limits.
    let limits = succeeds_json(&["limits", "--format", "json", "--backend", &b]);
    let views = limits["limits"].as_array().unwrap();
    let takes = |api: &str| {
        views.iter().any(|v| {
            v["device"]["api"] == api
                && v["limits"]["max_threads_per_block"]["value"].as_u64() >= Some(2048)
        })
    };
    let line = format!(
        "launch-cost --block 2048 --dispatches 20 --round-trips 3 --format csv --backend {b}"
    );
    let out = blocksweep().args(words(&line)).output().unwrap();
    let said = stderr(&out);
    let csv = String::from_utf8_lossy(&out.stdout).into_owned();
    let rows = csv_rows(&csv);
    let lines: Vec<&str> = rows[1..].iter().map(|r| r[0].as_str()).collect();
    for api in &apis {
        let name = crate::support::api(api).to_string();
        match takes(api) {
            true => assert!(lines.contains(api), "{api}: {csv}\n{said}"),
            false => {
                assert!(!lines.contains(api), "{api}: {csv}");
                assert!(said.contains(&format!("{name}: ")), "{api}: {said}");
            }
        }
    }
    let all_take = apis.iter().all(|a| takes(a));
    assert_eq!(
        out.status.code(),
        Some(if all_take { 0 } else { 1 }),
        "{said}"
    );
}

#[test]
fn counts_of_zero_are_bad_input() {
    bad_input(&["launch-cost", "--dispatches", "0"], "--dispatches");
    bad_input(&["launch-cost", "--round-trips", "0"], "--round-trips");
    bad_input(&["launch-cost", "--block", "0"], "--block");
}
