//! The GPU clocks on a machine of CPU drivers: nothing is read and nothing said. A sweep and
//! `limits` on the CPU devices print no word of clocks on stderr or stdout, and their JSON has
//! no `clocks` (NVML is asked only where a GPU is among the devices).

use crate::support::{available_apis, blocksweep, csv_field, csv_rows, stderr, words};
use serde_json::Value;

/// Runs `line` on the CPU APIs here; returns stdout and stderr.
fn run(line: &str, apis: &[&str]) -> (String, String) {
    let backend = match apis.len() {
        1 => apis[0].to_string(),
        _ => "all".to_string(),
    };
    let args = [words(line), vec!["--backend", &backend]].concat();
    let out = blocksweep().args(&args).output().expect("run blocksweep");
    assert!(out.status.success(), "{line}: {}", stderr(&out));
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr(&out),
    )
}

#[test]
fn a_cpu_run_reads_no_clocks_and_says_nothing_of_them() {
    let apis = available_apis();
    if apis.is_empty() {
        eprintln!("no CPU driver here: nothing to run");
        return;
    }
    let quick = "--size 96x64 --reps 2 --warmups 0 --blocks 32,64";
    let (json, said) = run(&format!("sweep {quick} --format json"), &apis);
    assert!(!said.contains("clocks"), "{said}");
    let v: Value = serde_json::from_str(&json).unwrap();
    let results = v["results"].as_array().unwrap();
    assert!(!results.is_empty(), "{json}");
    for r in results {
        let r = r.as_object().unwrap();
        assert!(
            !r.contains_key("clocks") && !r.contains_key("clocks_moved"),
            "{r:?}"
        );
    }
    let (text, said) = run(&format!("sweep {quick}"), &apis);
    assert!(
        !said.contains("clocks") && !text.contains("clocks"),
        "{said}\n{text}"
    );
    let (csv, _) = run(&format!("sweep {quick} --format csv"), &apis);
    let rows = csv_rows(&csv);
    assert!(rows.len() > 1, "{csv}");
    for row in &rows[1..] {
        for column in ["sm_mhz_start", "sm_mhz_end", "clocks_moved"] {
            assert_eq!(csv_field(&rows[0], row, column), "", "{column}: {row:?}");
        }
    }
    let (limits, said) = run("limits --format json", &apis);
    assert!(
        !said.contains("clocks") && !limits.contains("NVML"),
        "{said}\n{limits}"
    );
}
