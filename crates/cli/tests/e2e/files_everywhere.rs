//! `-o` on every command that prints results (limits, validate, devices, compare, replay, as on
//! sweep and the lab), text and markdown files at one width whatever the terminal, and replay
//! remaking a saved H200 run's outputs: only the APIs asked for, its figures unchanged, its plot.

use std::path::{Path, PathBuf};

use crate::support::{bad_input, blocksweep, read_json, run_at, scratch, stderr};

/// A three-API H200 run committed with its device call (docs/results/README.md, call4).
fn h200_run() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../docs/results/h200-2026-12-02/call4/wall/now-1.json")
}

#[test]
fn files_are_the_same_at_80_and_200_columns() {
    let dir = scratch("files-width");
    let run = h200_run();
    let run = run.to_str().unwrap();
    let mut texts = Vec::new();
    for cols in ["80", "200"] {
        let md = dir.join(format!("replay-{cols}.md"));
        let txt = dir.join(format!("replay-{cols}.txt"));
        let (code, out, err) = run_at(
            cols,
            &[
                "replay",
                run,
                "-q",
                "-o",
                md.to_str().unwrap(),
                "-o",
                txt.to_str().unwrap(),
            ],
        );
        assert_eq!(code, Some(0), "{err}");
        assert!(out.is_empty(), "-q with files prints nothing: {out}");
        texts.push((std::fs::read(&md).unwrap(), std::fs::read(&txt).unwrap()));
    }
    assert_eq!(texts[0], texts[1], "the files depend on COLUMNS");
    let txt = String::from_utf8(texts[0].1.clone()).unwrap();
    assert!(
        txt.lines().all(|l| l.chars().count() <= 100),
        "a line past 100 columns"
    );
}

#[test]
fn replay_keeps_the_runs_figures_for_the_apis_asked_and_plots_them() {
    let dir = scratch("replay-files");
    let (json, svg) = (dir.join("cuda.json"), dir.join("cuda.svg"));
    let out = blocksweep()
        .args([
            "replay",
            h200_run().to_str().unwrap(),
            "--backend",
            "cuda",
            "-q",
            "-o",
        ])
        .arg(&json)
        .arg("--plot")
        .arg(&svg)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let replayed = read_json(&json);
    let original = read_json(&h200_run());
    let results = replayed["results"].as_array().unwrap();
    assert_eq!(results.len(), 1, "{replayed}");
    assert_eq!(results[0]["api"], "cuda");
    let cuda = original["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["api"] == "cuda")
        .unwrap();
    assert_eq!(
        results[0]["rows"], cuda["rows"],
        "the rows' figures changed"
    );
    let plot = std::fs::read_to_string(&svg).unwrap();
    assert!(plot.starts_with("<svg") && plot.trim_end().ends_with("</svg>"));
    assert!(
        plot.contains("CUDA") && !plot.contains("OpenCL"),
        "one API plotted"
    );
    // A plot alone is a file too: with --quiet nothing goes to stdout.
    let only_plot = dir.join("only.svg");
    let out = blocksweep()
        .args(["replay", h200_run().to_str().unwrap(), "-q", "--plot"])
        .arg(&only_plot)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(out.stdout.is_empty(), "-q with --plot printed the results");
    assert!(only_plot.exists());
    bad_input(
        &["replay", h200_run().to_str().unwrap(), "--backend", "metal"],
        "no such API",
    );
}

#[test]
fn limits_validate_and_devices_write_their_files() {
    let dir = scratch("files-commands");
    let limits = dir.join("limits.json");
    let devices = dir.join("devices.csv");
    let validate = dir.join("validate.md");
    for (args, file) in [
        (vec!["limits", "-q", "-o"], &limits),
        (vec!["devices", "-q", "-o"], &devices),
        (vec!["validate", "-q", "-o"], &validate),
    ] {
        let out = blocksweep().args(&args).arg(file).output().unwrap();
        // validate exits 1 where an assumption went wrong on a device: the file is written
        // either way.
        assert!(
            out.status.code().is_some_and(|c| c <= 1),
            "{args:?}: {}",
            stderr(&out)
        );
        assert!(out.stdout.is_empty(), "{args:?}: -q printed");
        assert!(stderr(&out).contains(&format!("wrote {}", file.display())));
        // validate builds kernels meant to fail; PoCL's compiler counted their errors on the
        // process's stderr ("1 error generated.") until builds ran with it redirected.
        assert!(
            !stderr(&out).contains(" generated."),
            "{args:?}: a compiler's words leaked: {}",
            stderr(&out)
        );
    }
    assert_eq!(read_json(&limits)["command"], "limits");
    let csv = std::fs::read_to_string(&devices).unwrap();
    assert!(csv.starts_with("api,index,name"), "{csv}");
    let md = std::fs::read_to_string(&validate).unwrap();
    assert!(md.contains('|'), "a markdown table: {md}");
    bad_input(
        &["limits", "-o", dir.join("x.xlsx").to_str().unwrap()],
        ".xlsx names no output format",
    );
}
