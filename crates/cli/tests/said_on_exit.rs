//! End to end, what a run says about itself beyond its rows: an interrupted `sweep -o FILE`
//! says how many rows the file kept, and a sweep under `--vk-validation` says, in its text and
//! its JSON, that the validation layer was on.

#![warn(clippy::undocumented_unsafe_blocks)]

mod support;
use std::os::unix::process::ExitStatusExt;
use std::time::{Duration, Instant};

use support::{available, read_json, scratch, succeeds, succeeds_json, words};

/// Rows that ran, over every API of the report in `path`.
fn rows_in(path: &std::path::Path) -> usize {
    let v = read_json(path);
    let results = v["results"].as_array().unwrap();
    let rows = results.iter().flat_map(|r| r["rows"].as_array().unwrap());
    rows.filter(|r| !r["timing"].is_null()).count()
}

#[test]
fn an_interrupted_sweep_says_what_its_file_kept() {
    if !available("opencl") {
        return;
    }
    let file = scratch("interrupted").join("int.json");
    // Long enough on PoCL to be interrupted after its first rows.
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("blocksweep"))
        .args(["sweep", "--backend", "opencl", "--size", "1920x1080"])
        .args(["--blocks", "16..1024:16", "--no-copy", "-o"])
        .arg(&file)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(120);
    while !file.exists() {
        assert!(Instant::now() < deadline, "no row saved in 120 s");
        assert!(child.try_wait().unwrap().is_none(), "the sweep ended first");
        std::thread::sleep(Duration::from_millis(20));
    }
    // SAFETY: a signal to the child this test started, by its id.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGINT) }, 0);
    let out = child.wait_with_output().unwrap();
    // Exit by SIGINT's default action, as before: a shell's $? is 130.
    assert_eq!(out.status.signal(), Some(libc::SIGINT), "{:?}", out.status);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let line = stderr
        .lines()
        .find(|l| l.contains("interrupted: "))
        .unwrap_or_else(|| panic!("nothing said: {stderr}"));
    let n = rows_in(&file);
    let want = match n {
        1 => format!("blocksweep: interrupted: 1 row kept in {}", file.display()),
        n => format!(
            "blocksweep: interrupted: {n} rows kept in {}",
            file.display()
        ),
    };
    assert_eq!(line, want, "{stderr}");
    assert!((1..64).contains(&n), "{n}");
}

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
