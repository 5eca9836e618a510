//! A real Slurm run: tools/slurm/local-cluster.sh starts munged, slurmctld and slurmd on this
//! machine, submits tools/slurm/blocksweep-array.sbatch (one array task per API of the driver
//! list) with the built `blocksweep` binary, waits, runs `blocksweep compare` on the tasks' JSON
//! files and stops the daemons. The test checks that Slurm ran every task (each task's Slurm
//! log), that every API `blocksweep apis` finds available wrote a complete, verified sweep, that
//! every other API left a `.skipped` note instead, and that compare's output names every run.
//!
//! Without Slurm and munge installed (apt-get install slurmctld slurmd slurm-client munge) or
//! without root, it prints SKIPPED, unless BLOCKSWEEP_REQUIRE names `slurm` (CI), then it fails.
//! The binary is the one cargo built beside this test (target/<profile>/blocksweep, which
//! `cargo test --workspace` builds) or BLOCKSWEEP_BIN.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

const BLOCKS: [u64; 2] = [64, 256];

fn required() -> bool {
    std::env::var("BLOCKSWEEP_REQUIRE")
        .unwrap_or_default()
        .split(',')
        .any(|s| s.trim().eq_ignore_ascii_case("slurm"))
}

/// Fails when CI requires Slurm, else says why the test does not run (a line `make test`
/// counts).
fn skip(why: &str) {
    if required() {
        panic!("slurm is required by BLOCKSWEEP_REQUIRE but {why}");
    }
    blocksweep_conformance::note_skip(&format!(
        "{why}; set BLOCKSWEEP_REQUIRE=slurm to make this fail"
    ));
}

/// The commands the script needs that are on neither PATH nor the sbin directories.
fn missing_commands() -> Vec<&'static str> {
    let mut dirs: Vec<PathBuf> =
        std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()).collect();
    dirs.extend(["/usr/local/sbin", "/usr/sbin", "/sbin"].map(PathBuf::from));
    [
        "munged",
        "slurmctld",
        "slurmd",
        "sbatch",
        "squeue",
        "sinfo",
        "scontrol",
    ]
    .into_iter()
    .filter(|c| !dirs.iter().any(|d| d.join(c).is_file()))
    .collect()
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false)
}

/// The `blocksweep` binary of this test's own profile (target/<profile>/deps/slurm-<hash> is
/// this test), or BLOCKSWEEP_BIN.
fn blocksweep_bin() -> PathBuf {
    if let Some(p) = std::env::var_os("BLOCKSWEEP_BIN") {
        return PathBuf::from(p);
    }
    let exe = std::env::current_exe().unwrap();
    let profile_dir = exe.parent().and_then(Path::parent).unwrap();
    let bin = profile_dir.join("blocksweep");
    assert!(
        bin.is_file(),
        "{} is missing: build it first (`cargo build -p blocksweep-cli`, or run `cargo test --workspace`, \
         which builds it), or point BLOCKSWEEP_BIN at a blocksweep binary",
        bin.display()
    );
    bin
}

/// The provider list's keys, in order: array task i sweeps the i-th.
fn api_keys() -> Vec<&'static str> {
    blocksweep_apis::all()
        .iter()
        .map(|d| d.api().key())
        .collect()
}

/// The APIs `blocksweep apis` says are available here; it lists the provider list's APIs, in order,
/// as the job script reads them.
fn available_apis(bin: &Path) -> BTreeSet<String> {
    let out = Command::new(bin)
        .args(["apis", "--format", "json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "blocksweep apis failed: {out:?}");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let apis = v["apis"].as_array().unwrap();
    let keys: Vec<&str> = apis.iter().map(|a| a["key"].as_str().unwrap()).collect();
    assert_eq!(
        keys,
        api_keys(),
        "blocksweep apis against the provider list"
    );
    apis.iter()
        .filter(|a| a["available"] == true)
        .map(|a| a["key"].as_str().unwrap().to_owned())
        .collect()
}

/// One finished task's JSON: one API, the small frame, every block size run and verified.
fn check_run(path: &Path, api: &str) {
    let text = fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{}: {e} (the {api} task wrote no JSON)", path.display()));
    let v: Value = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("{} is not complete JSON: {e}", path.display()));
    let name = path.display();
    assert_eq!(
        v["schema_version"],
        blocksweep_core::report::SCHEMA_VERSION,
        "{name}"
    );
    assert_eq!(
        v["failures"].as_array().map(Vec::len),
        Some(0),
        "{name}: failures {}",
        v["failures"]
    );
    let results = v["results"].as_array().expect("results");
    assert_eq!(results.len(), 1, "{name}: one API per task");
    let r = &results[0];
    assert_eq!(r["api"], api, "{name}");
    assert!(r["error"].is_null(), "{name}: error {}", r["error"]);
    assert_eq!(r["frame"]["width"], 256, "{name}");
    assert_eq!(r["frame"]["height"], 256, "{name}");
    let rows = r["rows"].as_array().expect("rows");
    assert!(!rows.is_empty(), "{name}: no rows");
    let threads: Vec<u64> = rows
        .iter()
        .map(|row| row["threads"].as_u64().unwrap())
        .collect();
    assert_eq!(threads, BLOCKS, "{name}: the block sizes asked for");
    for row in rows {
        assert!(row["skipped"].is_null(), "{name}: row skipped: {row}");
        assert_eq!(row["verified"], true, "{name}: row not verified: {row}");
        let timing = &row["timing"];
        let samples = timing["samples_ms"].as_array().expect("samples_ms");
        assert_eq!(
            samples.len() as u64,
            timing["reps"].as_u64().unwrap(),
            "{name}"
        );
        assert!(row["gbps"].as_f64().unwrap() > 0.0, "{name}: {row}");
    }
}

#[test]
fn array_job_on_a_local_slurm_sweeps_every_api_and_compares() {
    let missing = missing_commands();
    if !missing.is_empty() {
        return skip(&format!(
            "Slurm or munge is not installed (no {}: apt-get install slurmctld slurmd slurm-client munge)",
            missing.join(", ")
        ));
    }
    if !is_root() {
        return skip("the local Slurm cluster runs its daemons as root, and this is not root");
    }
    let bin = blocksweep_bin();
    let available = available_apis(&bin);
    let results =
        std::env::temp_dir().join(format!("blocksweep-slurm-test-{}", std::process::id()));
    let _ = fs::remove_dir_all(&results);
    fs::create_dir_all(&results).unwrap();

    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut cmd = Command::new("bash");
    cmd.arg(root.join("tools/slurm/local-cluster.sh"))
        .env("BLOCKSWEEP_BIN", &bin)
        .env("BLOCKSWEEP_RESULTS", &results)
        .env("BLOCKSWEEP_ARGS", "--size 256x256 --blocks 64,256")
        .env("SLURM_LOCAL_TIMEOUT", "240");
    // Inside a Slurm job (or a shell set up for another cluster) these would steer sbatch.
    for (k, _) in std::env::vars_os() {
        let k = k.to_string_lossy();
        if k.starts_with("SLURM_") || k.starts_with("SBATCH_") {
            cmd.env_remove(&*k);
        }
    }
    let out = cmd.output().expect("bash runs local-cluster.sh");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let report = format!("--- stdout ---\n{stdout}--- stderr ---\n{stderr}");
    assert!(
        out.status.success(),
        "local-cluster.sh failed: {}\n{report}",
        out.status
    );

    // The files the array wrote: <job id>-<api>-<task>.json / .skipped, slurm-<job>_<task>.out.
    let names: BTreeSet<String> = fs::read_dir(&results)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    let jobs: Vec<&str> = names
        .iter()
        .filter_map(|n| n.strip_prefix("slurm-")?.strip_suffix("_0.out"))
        .collect();
    assert_eq!(
        jobs.len(),
        1,
        "one array job's logs in {}: {names:?}\n{report}",
        results.display()
    );
    let job = jobs[0];
    let task_logs = names
        .iter()
        .filter(|n| n.starts_with(&format!("slurm-{job}_")))
        .count();
    assert_eq!(
        task_logs,
        api_keys().len(),
        "one array task per API of the list: {names:?}\n{report}"
    );
    let mut stems = Vec::new();
    for (task, api) in api_keys().into_iter().enumerate() {
        let log = results.join(format!("slurm-{job}_{task}.out"));
        let log_text = fs::read_to_string(&log).unwrap_or_else(|e| {
            panic!(
                "{}: {e}: Slurm did not run task {task}\n{report}",
                log.display()
            )
        });
        assert!(
            log_text.contains(&format!("job {job} task {task} ({api})")),
            "{} is not task {task}'s log:\n{log_text}",
            log.display()
        );
        let stem = format!("{job}-{api}-{task}");
        let json = results.join(format!("{stem}.json"));
        let skipped = results.join(format!("{stem}.skipped"));
        if available.contains(api) {
            check_run(&json, api);
            assert!(!skipped.exists(), "{api} is available but was skipped");
            stems.push(stem);
        } else {
            assert!(
                !json.exists(),
                "{api} is unavailable yet wrote {}",
                json.display()
            );
            let note = fs::read_to_string(&skipped)
                .unwrap_or_else(|e| panic!("{}: {e}\n{report}", skipped.display()));
            assert!(note.contains("unavailable"), "{note}");
        }
    }
    // By the provider list and key: nothing in this binary registers an API, so a lookup through
    // the registry would find none and the loop would never run.
    let required_apis = blocksweep_apis::all()
        .iter()
        .map(|d| d.api())
        .filter(|a| blocksweep_conformance::required(*a));
    for api in required_apis {
        assert!(
            stems
                .iter()
                .any(|s| s.contains(&format!("-{}-", api.key()))),
            "{api} is required by BLOCKSWEEP_REQUIRE but no Slurm task swept it\n{report}"
        );
    }
    if stems.len() >= 2 {
        for stem in &stems {
            assert!(
                stdout.contains(&format!("] {stem}: ")),
                "compare's output does not name {stem}\n{report}"
            );
        }
        let saved = fs::read_to_string(results.join(format!("{job}-compare.txt"))).unwrap();
        assert_eq!(
            saved, stdout,
            "the saved compare output is what was printed"
        );
    } else {
        eprintln!("only {stems:?} ran: nothing to compare");
    }
    let _ = fs::remove_dir_all(&results);
}
