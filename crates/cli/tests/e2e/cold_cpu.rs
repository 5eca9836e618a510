//! `--cold` on the CPU drivers here (PoCL, lavapipe): the sweep, the sweep of a user's kernel
//! and a tune run with the last-level cache flushed before each timed dispatch, every output
//! says cold and how much was written, and the JSON conforms to its schema; without it, every
//! output says hot.

use crate::support::schemas::{conforms, repo};
use crate::support::{available_apis, blocksweep, csv_field, csv_rows, stderr, words};
use serde_json::Value;

/// Runs `line` on the APIs here (all of them at once); returns stdout.
fn run(line: &str) -> String {
    let args = [words(line), vec!["--backend", "all"]].concat();
    let out = blocksweep().args(&args).output().expect("run blocksweep");
    assert!(out.status.success(), "{line}: {}", stderr(&out));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Each result's flush, its rows and copy all timed after it, one dispatch at a time.
fn assert_cold(doc: &Value, apis: usize) {
    let results = doc["results"].as_array().unwrap();
    assert_eq!(results.len(), apis, "{doc}");
    for r in results {
        let caches = &r["protocol"]["caches"];
        assert_eq!(caches["mode"], "cold", "{caches}");
        let bytes = caches["flush"]["bytes"].as_u64().unwrap();
        assert!(bytes >= 8 << 20, "{caches}");
        assert!(caches["flush"]["llc_source"].as_str().unwrap().len() > 3);
        assert_eq!(r["protocol"]["discipline"], "each");
        let rows = r["rows"].as_array().unwrap();
        let timed = rows.iter().map(|x| &x["timing"]).filter(|t| t.is_object());
        let timed: Vec<&Value> = timed.chain(r["copy"].get("timing")).collect();
        assert!(timed.len() >= 2, "{r}");
        for t in timed {
            assert_eq!(t["flush_bytes"].as_u64(), Some(bytes), "{t}");
            assert_eq!(t["discipline"], "each");
        }
    }
}

#[test]
fn a_cold_sweep_runs_on_every_api_and_every_output_says_so() {
    let apis = available_apis();
    if apis.is_empty() {
        eprintln!("no CPU driver here: nothing to run");
        return;
    }
    let sweep = "sweep --cold --size 256x256 --blocks 64,256";
    let text = run(sweep);
    assert!(
        text.contains("caches cold: the last-level cache flushed"),
        "{text}"
    );
    let said = text.matches("cold: LLC flushed (").count();
    assert_eq!(said, apis.len(), "one line per API:\n{text}");
    assert!(!text.contains("this run measures the cache"), "{text}");
    let doc = conforms("sweep", &run(&format!("{sweep} --format json")));
    assert_cold(&doc, apis.len());
    let csv = run(&format!("{sweep} --format csv"));
    let rows = csv_rows(&csv);
    for row in &rows[1..] {
        assert_eq!(csv_field(&rows[0], row, "caches"), "cold", "{row:?}");
        assert!(csv_field(&rows[0], row, "flush_bytes")
            .parse::<u64>()
            .is_ok());
    }
    let verbose = run(&format!("{sweep} --verbose"));
    let lines = verbose
        .lines()
        .filter(|l| l.starts_with("Caches: cold: LLC flushed"));
    assert_eq!(lines.count(), apis.len(), "{verbose}");
}

#[test]
fn a_users_kernel_sweeps_cold_too_and_hot_is_said_without_the_flag() {
    let apis = available_apis();
    if apis.is_empty() {
        eprintln!("no CPU driver here: nothing to run");
        return;
    }
    let spec = repo().join("examples/kernels/saxpy/kernel.toml");
    let spec = spec.to_str().unwrap();
    let line = format!("sweep --kernel {spec} --size 65536 --blocks 64,256 --format json");
    let doc = conforms("sweep", &run(&format!("{line} --cold")));
    assert_cold(&doc, apis.len());
    let hot = conforms("sweep", &run(&line));
    for r in hot["results"].as_array().unwrap() {
        assert_eq!(r["protocol"]["caches"]["mode"], "hot");
        let rows = r["rows"].as_array().unwrap();
        assert!(rows
            .iter()
            .all(|x| x["timing"].get("flush_bytes").is_none()));
    }
    // A tune (a grid list) runs its sweeps cold and says so.
    let tune = "sweep --cold --grid 1w,data --size 256x256 --blocks 64 --no-cache";
    let doc = conforms("sweep", &run(&format!("{tune} --format json")));
    assert_eq!(doc["caches"]["mode"], "cold", "{doc}");
    assert!(run(tune).contains("Caches: cold: LLC flushed before each dispatch"));
    let text = run("sweep --size 96x64 --reps 2 --warmups 0 --blocks 32");
    assert!(text.contains("caches hot (--cold flushes"), "{text}");
}

/// Vulkan's flushes under the validation layer with synchronization validation: the fill, its
/// barrier and the stamps around each dispatch raise no message (where the layer is here).
#[test]
fn vulkans_flushes_pass_synchronization_validation() {
    if !available_apis().contains(&"vulkan") {
        eprintln!("no Vulkan driver here: nothing to run");
        return;
    }
    let line = "sweep --cold --size 96x64 --blocks 64 --backend vulkan --vk-validation";
    let out = blocksweep()
        .args(words(line))
        .output()
        .expect("run blocksweep");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}{}", stderr(&out));
    if !text.contains("Validation: VK_LAYER_KHRONOS_validation on, with synchronization") {
        eprintln!("no validation layer with synchronization validation here: {text}");
        return;
    }
    assert!(text.contains("it raised no message"), "{text}");
    assert!(text.contains("cold: LLC flushed ("), "{text}");
}
