//! What `sweep` does with its output paths and with several devices, through the real binary:
//! paths are checked before measuring, a run that measured nothing leaves files alone, special
//! files are written through, and `--device all` gives one report per device that `compare`
//! reads directly.

use crate::support::{
    available, available_apis, bad_input, bad_input_before_any_phase, blocksweep, physical_devices,
    read_json, scratch, stderr, succeeds, words,
};

const QUICK: [&str; 6] = ["--size", "96x64", "--blocks", "64", "--reps", "2"];

#[test]
fn output_paths_are_checked_before_anything_is_measured() {
    if !available("opencl") {
        return;
    }
    // Refused before any phase ran (no probe, no open, no 4K frame): with tracing on, the
    // error is the only line. A wall-clock bound said the same, and failed on a loaded machine.
    let d = scratch("check");
    let missing = d.join("no-such-dir/run.json");
    let mut args = vec!["sweep", "--backend", "opencl", "--size", "3840x2160"];
    args.extend(["-o", missing.to_str().unwrap()]);
    bad_input_before_any_phase(&args, "does not exist");
    let svg = d.join("no-such-dir/p.svg");
    let args = [
        "sweep",
        "--backend",
        "opencl",
        "--plot",
        svg.to_str().unwrap(),
    ];
    bad_input_before_any_phase(&args, "does not exist");
    let args = ["sweep", "--backend", "opencl", "-o", d.to_str().unwrap()];
    bad_input_before_any_phase(&args, "directory");
    // The trace does speak when a phase runs: a block no device can run is refused after the
    // APIs were probed.
    let out = blocksweep()
        .env("BLOCKSWEEP_TRACE", "1")
        .args(words("sweep --backend opencl --size 64x64 --blocks 99999"))
        .output()
        .unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("blocksweep trace") && err.contains("opencl probe"),
        "{err}"
    );
}

#[test]
fn a_run_that_measures_nothing_keeps_the_old_file_and_a_fifo_stays_a_fifo() {
    if !available("opencl") {
        return;
    }
    let d = scratch("keep");
    let keep = d.join("keep.json");
    let mut args: Vec<&str> = vec!["sweep", "--backend", "opencl"];
    args.extend(QUICK);
    let keep_s = keep.to_str().unwrap().to_string();
    let mut good = args.clone();
    good.extend(["-o", &keep_s]);
    succeeds(&good);
    let before = std::fs::read(&keep).unwrap();
    let mut nothing = words("sweep --backend opencl --size 96x64 --blocks 99999 -o");
    nothing.push(&keep_s);
    bad_input(&nothing, "no block size can run");
    assert_eq!(
        std::fs::read(&keep).unwrap(),
        before,
        "keep.json was rewritten"
    );

    let fifo = d.join("results.fifo");
    let status = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(status.success());
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read_to_string(fifo).unwrap())
    };
    let mut to_fifo = args.clone();
    let fifo_s = fifo.to_str().unwrap().to_string();
    to_fifo.extend(["--format", "csv", "-o", &fifo_s]);
    succeeds(&to_fifo);
    let text = reader.join().unwrap();
    assert!(text.starts_with("api,device,block"), "{text}");
    assert_eq!(
        text.matches("api,device,block").count(),
        1,
        "written once: {text}"
    );
    use std::os::unix::fs::FileTypeExt;
    assert!(std::fs::metadata(&fifo).unwrap().file_type().is_fifo());
}

#[test]
fn device_all_sweeps_each_device_into_one_file_that_compare_reads() {
    if available_apis().is_empty() {
        return;
    }
    let d = scratch("all");
    let out = d.join("fleet.json");
    let out_s = out.to_str().unwrap().to_string();
    let mut args: Vec<&str> = vec!["sweep", "--backend", "all", "--device", "all"];
    args.extend(QUICK);
    args.extend(["-o", &out_s]);
    succeeds(&args);
    let v = read_json(&out);
    let physical = physical_devices().len();
    let runs = match v["runs"].as_array() {
        Some(r) => r.clone(),
        None => vec![v.clone()],
    };
    assert_eq!(runs.len(), physical, "one report per device: {v}");
    for r in &runs {
        for result in r["results"].as_array().unwrap() {
            assert!(result["rows"][0]["verified"].as_bool().unwrap());
        }
    }
    let cmp = succeeds(&["compare", &out_s, &out_s]);
    // The same file twice: two files of one stem are named by their paths.
    let columns = (cmp.lines())
        .filter(|l| l.starts_with('[') && l.contains("fleet.json#"))
        .count();
    let results: usize = runs
        .iter()
        .map(|r| r["results"].as_array().unwrap().len())
        .sum();
    assert_eq!(
        columns,
        2 * results,
        "compare shows every device's runs:\n{cmp}"
    );
}
