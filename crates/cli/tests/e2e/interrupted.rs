//! End to end, issue 39's "interrupted means marked": a sweep, a tune and `shapes`, each
//! started on the CPU drivers with `-o f.json -o f.md -o f.csv` and interrupted with SIGINT
//! after its first save, leave every file marked interrupted (where the run stood, in JSON,
//! markdown and CSV) and say on stderr what they kept.
//!
//! `BLOCKSWEEP_HOLD_AFTER_SAVE` stops the run after its first save until the signal comes, so
//! the signal lands after a row and before the end however fast or loaded the machine: no
//! race with the run's end, no timing. The poll's 300 s is a hang guard only.

#![warn(clippy::undocumented_unsafe_blocks)]

use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::support::schemas::violations;
use crate::support::{available_apis, read_json, scratch};
use serde_json::Value;

/// A run's three files, in the order given to `-o`.
struct Files {
    json: PathBuf,
    md: PathBuf,
    csv: PathBuf,
}

impl Files {
    fn in_dir(dir: &Path, stem: &str) -> Files {
        let at = |ext: &str| dir.join(format!("{stem}.{ext}"));
        Files {
            json: at("json"),
            md: at("md"),
            csv: at("csv"),
        }
    }
}

/// Runs `args` with the files, holds it after its first save, interrupts it with SIGINT, and
/// returns its stderr once it has ended by that signal (a shell's `$?` is 130).
fn interrupt(args: &[&str], files: &Files) -> String {
    let mut child = Command::new(assert_cmd::cargo::cargo_bin("blocksweep"))
        .args(args)
        .args(
            [&files.json, &files.md, &files.csv]
                .iter()
                .flat_map(|f| [Path::new("-o"), f]),
        )
        .env("BLOCKSWEEP_HOLD_AFTER_SAVE", "1")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Each file is renamed into place whole; the last one written means the save is done.
    let deadline = Instant::now() + Duration::from_secs(300);
    while !files.csv.exists() {
        if let Some(status) = child.try_wait().unwrap() {
            let out = child.wait_with_output().unwrap();
            let err = String::from_utf8_lossy(&out.stderr);
            panic!("{args:?} ended before its first save ({status}): {err}");
        }
        assert!(Instant::now() < deadline, "{args:?}: no save in 300 s");
        std::thread::sleep(Duration::from_millis(20));
    }
    // SAFETY: a signal to the child this test started, by its id; it has not been waited for.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGINT) }, 0);
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(
        out.status.signal(),
        Some(libc::SIGINT),
        "{args:?}: {:?}: {stderr}",
        out.status
    );
    assert_eq!(128 + libc::SIGINT, 130);
    stderr
}

/// The line a signal's exit says: "blocksweep: interrupted: N rows kept in A, B and C".
fn said_kept(stderr: &str, rows: usize, files: &Files) {
    let names = format!(
        "{}, {} and {}",
        files.json.display(),
        files.md.display(),
        files.csv.display()
    );
    let want = match rows {
        1 => format!("blocksweep: interrupted: 1 row kept in {names}"),
        n => format!("blocksweep: interrupted: {n} rows kept in {names}"),
    };
    assert!(
        stderr.lines().any(|l| l == want),
        "want {want:?} in: {stderr}"
    );
}

/// The document `files.json` holds, checked against `schema` (the mark is in the schemas).
fn document(files: &Files, schema: &str) -> Value {
    let v = read_json(&files.json);
    let bad = violations(schema, &v);
    assert!(bad.is_empty(), "{}: {v}", bad.join("\n"));
    v
}

/// The markdown leads with the mark; every CSV line ends with `interrupted` = true.
fn md_and_csv_marked(files: &Files, words: &str) {
    let md = std::fs::read_to_string(&files.md).unwrap();
    assert!(md.contains("**Interrupted: "), "{md}");
    assert!(md.contains(words), "{words:?} not in: {md}");
    let csv = std::fs::read_to_string(&files.csv).unwrap();
    let mut lines = csv.lines();
    assert!(lines.next().unwrap().ends_with(",interrupted"), "{csv}");
    let rows: Vec<&str> = lines.collect();
    assert!(!rows.is_empty(), "{csv}");
    assert!(rows.iter().all(|l| l.ends_with(",true")), "{csv}");
}

#[test]
fn an_interrupted_sweep_marks_its_files_and_ranks_no_api_it_did_not_finish() {
    let apis = available_apis();
    let Some(&first) = apis.first() else {
        return;
    };
    let files = Files::in_dir(&scratch("interrupted-sweep"), "f");
    let quick = [
        "--size",
        "160x90",
        "--reps",
        "2",
        "--warmups",
        "0",
        "--no-copy",
    ];
    let args = [
        &["sweep", "--backend", "all", "--blocks", "32,64,128"][..],
        &quick,
    ]
    .concat();
    let stderr = interrupt(&args, &files);
    said_kept(&stderr, 1, &files);
    let v = document(&files, "sweep");
    assert_eq!(v["interrupted"], true, "{v}");
    // The first API in its turn after its first row of three; the others not begun.
    let at = &v["stopped_at"];
    assert_eq!(at["api"], first, "{at}");
    assert_eq!(
        (at["kept"].as_u64(), at["planned"].as_u64()),
        (Some(1), Some(3))
    );
    assert_eq!(at["not_reached"], Value::from(apis[1..].to_vec()), "{at}");
    // No API is ranked on a part of its sweep, and the answer says why.
    let answer = &v["answer"];
    assert_eq!(answer["best"], Value::Array(vec![]), "{answer}");
    assert_eq!(answer["apis"], Value::from(apis.clone()), "{answer}");
    let stopped = answer["stopped"].as_array().unwrap();
    assert_eq!(stopped.len(), apis.len(), "{answer}");
    assert!(
        stopped.iter().all(|s| s["kind"] == "interrupted"),
        "{answer}"
    );
    assert_eq!(stopped[0]["message"], "after 1 of its 3 rows", "{answer}");
    md_and_csv_marked(&files, "1 of 3 rows measured");
}

#[test]
fn an_interrupted_tune_marks_its_files_and_says_what_it_kept() {
    let apis = available_apis();
    if apis.is_empty() {
        return;
    }
    let files = Files::in_dir(&scratch("interrupted-tune"), "t");
    let spec = crate::kernel_support::example("reduce-elems");
    let args = [
        "sweep",
        "--kernel",
        spec.to_str().unwrap(),
        "--size",
        "8192",
        "--blocks",
        "64,256",
        "--grid",
        "1w,2w",
        "--no-cache",
        "--reps",
        "2",
        "--warmups",
        "0",
        "--no-copy",
    ];
    let stderr = interrupt(&args, &files);
    let v = document(&files, "sweep");
    assert_eq!(v["command"], "tune", "{v}");
    assert_eq!(v["interrupted"], true, "{v}");
    // After the first of reduce-elems' four parameter sets: 2 blocks x 2 grids on each API.
    let at = &v["stopped_at"];
    assert_eq!(
        (at["kept"].as_u64(), at["planned"].as_u64()),
        (Some(1), Some(4))
    );
    let kept = v["measurements"].as_array().unwrap().len();
    assert_eq!(kept, 4 * apis.len(), "{v}");
    said_kept(&stderr, kept, &files);
    md_and_csv_marked(&files, "1 of 4 parameter sets measured");
}

#[test]
fn an_interrupted_shapes_run_marks_its_files_and_says_what_it_kept() {
    let apis = available_apis();
    let Some(&first) = apis.first() else {
        return;
    };
    let files = Files::in_dir(&scratch("interrupted-shapes"), "s");
    let args = [
        "shapes",
        "--backend",
        "all",
        "--threads",
        "64",
        "--size",
        "160x90",
        "--reps",
        "2",
        "--warmups",
        "0",
    ];
    let stderr = interrupt(&args, &files);
    said_kept(&stderr, 1, &files);
    let v = document(&files, "shapes");
    assert_eq!(v["command"], "shapes", "{v}");
    assert_eq!(v["interrupted"], true, "{v}");
    // 64 threads have seven shapes: the first API had measured one of them.
    let at = &v["stopped_at"];
    assert_eq!(at["api"], first, "{at}");
    assert_eq!(
        (at["kept"].as_u64(), at["planned"].as_u64()),
        (Some(1), Some(7))
    );
    assert_eq!(at["not_reached"], Value::from(apis[1..].to_vec()), "{at}");
    md_and_csv_marked(&files, "1 of 7 rows measured");
}

#[test]
fn an_interrupted_tail_run_marks_its_files_without_a_count_it_cannot_know() {
    let apis = available_apis();
    let Some(&first) = apis.first() else {
        return;
    };
    let files = Files::in_dir(&scratch("interrupted-tail"), "w");
    let args = [
        "tail",
        "--backend",
        "all",
        "--block",
        "64",
        "--waves",
        "waves:0.5..1:0.5",
        "--size",
        "96x64",
        "--reps",
        "2",
        "--warmups",
        "0",
    ];
    let stderr = interrupt(&args, &files);
    said_kept(&stderr, 1, &files);
    let v = document(&files, "tail");
    assert_eq!(v["interrupted"], true, "{v}");
    // How many points an API plans depends on its wave: none is claimed.
    let at = &v["stopped_at"];
    assert_eq!(at["api"], first, "{at}");
    assert_eq!(
        (at["kept"].as_u64(), &at["planned"]),
        (Some(1), &Value::Null)
    );
    md_and_csv_marked(
        &files,
        &format!("in {}'s turn, 1 row measured", api_name(first)),
    );
}

/// An API's name as the text says it ("Vulkan").
fn api_name(key: &str) -> String {
    crate::support::api(key).to_string()
}

/// The same runs not interrupted say `interrupted: false`, and nothing of a stop (the mark is
/// not always on).
#[test]
fn a_run_that_finishes_is_not_marked() {
    let apis = available_apis();
    let Some(&first) = apis.first() else {
        return;
    };
    let dir = scratch("not-interrupted");
    let (json, csv) = (dir.join("f.json"), dir.join("f.csv"));
    let out = crate::support::blocksweep()
        .args([
            "sweep",
            "--backend",
            first,
            "--blocks",
            "32,64",
            "--size",
            "96x64",
        ])
        .args([
            "--reps",
            "2",
            "--warmups",
            "0",
            "--no-copy",
            "--quiet",
            "-o",
        ])
        .arg(&json)
        .arg("-o")
        .arg(&csv)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", crate::support::stderr(&out));
    let v = read_json(&json);
    assert_eq!(v["interrupted"], false, "{v}");
    assert!(v.get("stopped_at").is_none(), "{v}");
    let text = std::fs::read_to_string(&csv).unwrap();
    assert!(
        text.lines().skip(1).all(|l| l.ends_with(",false")),
        "{text}"
    );
}
