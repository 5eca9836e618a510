//! A tune (`sweep` with a grid list, a spec's `[tune]`, `--budget`) through the real binary on
//! the CPU drivers: a constraint refusing configurations before anything compiles, a wrong
//! parameter set named and never ranked, an interrupted tune resumed from its cache, and
//! `--budget`'s sample reproducible from its seed. Sizes are tiny so the file runs in seconds.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::kernel_support::{example, write};
use crate::support::{available, bad_input, blocksweep, both, read_json, scratch, stderr};
use serde_json::Value;

const QUICK: [&str; 6] = ["--reps", "2", "--warmups", "1", "--no-copy", "--quiet"];

/// A tune file's one report: the sweep's document, with the envelope every command's JSON
/// carries (`command: "tune"`, `schema_version`) and, for one GPU's share, the report at the
/// top level with its `measurements` and `answer` as a sweep's.
fn read_tune(path: &Path) -> Value {
    let doc = read_json(path);
    assert_eq!(doc["command"], "tune", "{doc}");
    assert!(doc["schema_version"].is_u64(), "{doc}");
    assert!(doc.get("runs").is_none(), "one GPU, one report: {doc}");
    assert!(
        doc["measurements"].is_array() && doc["answer"].is_object(),
        "{doc}"
    );
    doc
}

/// `sweep --kernel spec` tuned, JSON to `json`, plus `extra`.
fn tune(spec: &Path, json: &Path, extra: &[&str]) -> std::process::Output {
    blocksweep()
        .arg("sweep")
        .arg("--kernel")
        .arg(spec)
        .args(QUICK)
        .arg("-o")
        .arg(json)
        .args(extra)
        .output()
        .expect("run blocksweep")
}

/// The reduce-elems example's sources in `dir`, each edited by `edit`.
fn reduce_elems(dir: &Path, edit: impl Fn(&str, String) -> String) -> PathBuf {
    let from = example("reduce-elems");
    let from = from.parent().unwrap();
    for f in [
        "kernel.toml",
        "reduce.cu",
        "reduce.cl",
        "reduce.comp",
        "reduce.wgsl",
    ] {
        let text = std::fs::read_to_string(from.join(f)).unwrap();
        write(dir, f, &edit(f, text));
    }
    dir.join("kernel.toml")
}

fn configs_of(report: &Value, api: &str) -> Vec<String> {
    let mut v: Vec<String> = report["measurements"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["api"] == api)
        .map(|e| e["config"].to_string())
        .collect();
    v.sort();
    v
}

#[test]
fn a_constraint_refuses_configurations_before_anything_compiles() {
    if !both() {
        return;
    }
    let dir = scratch("tune-restrict");
    let json = dir.join("t.json");
    // n = 2048: block * ELEMS <= n leaves ELEMS 1, 2 at both blocks, ELEMS 4 at 512 only, and
    // no block for ELEMS 8, which is then never compiled.
    let spec = example("reduce-elems");
    let out = tune(
        &spec,
        &json,
        &["--size", "2048", "--blocks", "512,1024", "--no-cache"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let r = read_tune(&json);
    let rejected = r["rejected"].as_array().unwrap();
    assert_eq!(rejected.len(), 3, "{rejected:?}");
    for x in rejected {
        let why = x["why"].as_str().unwrap();
        assert!(why.starts_with("restrict: block * ELEMS <= n ("), "{why}");
    }
    assert_eq!(
        r["search"]["compiles"], 3,
        "ELEMS=8 has no valid block: not compiled"
    );
    assert_eq!(r["search"]["space"], 8);
    for api in ["vulkan", "opencl"] {
        let configs = configs_of(&r, api);
        assert_eq!(configs.len(), 5, "{configs:?}");
        assert!(!configs.iter().any(|c| c.contains("\"ELEMS\":8")));
    }
}

#[test]
fn a_wrong_parameter_set_is_named_and_never_ranked() {
    if !both() {
        return;
    }
    let dir = scratch("tune-wrong");
    // ELEMS = 2 doubles every partial sum: the same at every launch (so each set checks out
    // on its own), different from the first set's output.
    let spec = reduce_elems(&dir, |f, t| {
        let twice = if f.ends_with(".wgsl") {
            "    if (ELEMS == 2) { acc *= 2.0; }\n" // WGSL has no preprocessor; ELEMS is a const
        } else if f.ends_with(".comp") {
            "#if ELEMS == 2\n    acc *= 2.0;\n#endif\n"
        } else {
            "#if ELEMS == 2\n    acc *= 2.0f;\n#endif\n"
        };
        t.replace(
            "    scratch[tid] = acc;",
            &format!("{twice}    scratch[tid] = acc;"),
        )
    });
    let json = dir.join("t.json");
    let txt = dir.join("t.txt");
    let out = blocksweep()
        .arg("sweep")
        .arg("--kernel")
        .arg(&spec)
        .args(QUICK)
        .args(["--size", "4096", "--blocks", "64,256", "--no-cache", "-o"])
        .arg(&json)
        .arg("-o")
        .arg(&txt)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "a wrong configuration fails the run"
    );
    let r = read_tune(&json);
    let wrong = r["wrong"].as_array().unwrap();
    assert_eq!(wrong.len(), 3, "one per API: {wrong:?}");
    for w in wrong {
        assert_eq!(w["params"]["ELEMS"], 2);
        assert!(w["detail"]
            .as_str()
            .unwrap()
            .contains("differs from the first configuration's (ELEMS=1)"));
    }
    for b in r["answer"]["best"].as_array().unwrap() {
        assert_ne!(
            b["config"]["params"]["ELEMS"], 2,
            "a wrong set is never the best"
        );
        for t in b["tied"].as_array().unwrap() {
            assert_ne!(t["params"]["ELEMS"], 2);
        }
    }
    for p in r["answer"]["portable"].as_array().unwrap() {
        assert_ne!(p["params"]["ELEMS"], 2);
    }
    let text = std::fs::read_to_string(&txt).unwrap();
    assert!(text.contains("Never ranked: Vulkan at ELEMS=2"), "{text}");
    assert!(text.contains("Never ranked: OpenCL at ELEMS=2"), "{text}");
    assert!(text.contains("Never ranked: WebGPU at ELEMS=2"), "{text}");
    let row = text
        .lines()
        .find(|l| l.trim_start().starts_with("ELEMS=2"))
        .unwrap();
    assert!(row.contains("wrong"), "{row}");
}

#[test]
fn an_interrupted_tune_resumes_from_its_cache() {
    if !both() {
        return;
    }
    let dir = scratch("tune-resume");
    let cache = dir.join("cache.json");
    let json = dir.join("t.json");
    let spec = example("reduce-elems");
    let args = |c: &mut std::process::Command| {
        c.arg("sweep")
            .arg("--kernel")
            .arg(&spec)
            .args(QUICK)
            .args([
                "--size", "8192", "--blocks", "64,256", "--grid", "1w,2w", "--cache",
            ])
            .arg(&cache)
            .arg("-o")
            .arg(&json);
    };
    let mut first = std::process::Command::new(env!("CARGO_BIN_EXE_blocksweep"));
    args(&mut first);
    // Held after its first parameter set is saved (in the cache, then in the -o file) until
    // it is killed: the kill comes mid-tune however fast the machine.
    let mut child = first
        .env("BLOCKSWEEP_HOLD_AFTER_SAVE", "1")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(300);
    while !(cache.exists() && json.exists()) {
        assert!(child.try_wait().unwrap().is_none(), "the tune ended first");
        assert!(Instant::now() < deadline, "no parameter set saved in 300 s");
        std::thread::sleep(Duration::from_millis(10));
    }
    child.kill().unwrap();
    let _ = child.wait();
    // The -o file holds what was measured before the kill, as a sweep's does: the first
    // set's 2 blocks x 2 grids on each API (Vulkan, OpenCL, and WebGPU where it is here),
    // marked interrupted.
    let apis: &[&str] = if available("webgpu") {
        &["vulkan", "opencl", "webgpu"]
    } else {
        &["vulkan", "opencl"]
    };
    let per_set = 4 * apis.len() as u64;
    let kept = read_tune(&json);
    let n = kept["measurements"].as_array().unwrap().len() as u64;
    assert_eq!(n, per_set, "measurements kept: {kept}");
    assert_eq!(kept["interrupted"], true, "{kept}");
    let mut again = std::process::Command::new(env!("CARGO_BIN_EXE_blocksweep"));
    args(&mut again);
    let out = again.output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r = read_tune(&json);
    let s = &r["search"];
    let (cached, measured) = (
        s["from_cache"].as_u64().unwrap(),
        s["measured"].as_u64().unwrap(),
    );
    // 4 sets x 2 blocks x 2 grids on each API, every one present once.
    assert_eq!(cached + measured, 4 * per_set, "{s}");
    assert!(
        cached >= per_set,
        "at least one whole set came from the cache: {s}"
    );
    assert!(
        measured > 0,
        "what the interrupt lost was measured again: {s}"
    );
    for api in apis {
        assert_eq!(configs_of(&r, api).len(), 16);
    }
    // A third run measures nothing: everything, the winners' second times too, is cached.
    let mut third = std::process::Command::new(env!("CARGO_BIN_EXE_blocksweep"));
    args(&mut third);
    assert!(third.output().unwrap().status.success());
    let r = read_tune(&json);
    assert_eq!(r["search"]["measured"], 0);
    assert_eq!(r["search"]["compiles"], 0);
}

#[test]
fn a_budget_samples_the_same_configurations_from_the_same_seed() {
    if !both() {
        return;
    }
    let dir = scratch("tune-budget");
    let run = |seed: &str, name: &str| -> Value {
        let json = dir.join(name);
        let out = blocksweep()
            .args(["sweep", "--size", "160x90", "--blocks", "32,64,128,256"])
            .args([
                "--grid",
                "1w,2w,data",
                "--budget",
                "5",
                "--sample-seed",
                seed,
            ])
            .args(QUICK)
            .arg("--no-cache")
            .arg("-o")
            .arg(&json)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        read_tune(&json)
    };
    let (a, b, c) = (run("7", "a.json"), run("7", "b.json"), run("8", "c.json"));
    assert_eq!(a["search"]["order"], "sampled (seed 7)");
    assert_eq!(a["search"]["covered"], 5);
    assert_eq!(a["search"]["space"], 12);
    for api in ["vulkan", "opencl"] {
        assert_eq!(configs_of(&a, api).len(), 5);
        assert_eq!(
            configs_of(&a, api),
            configs_of(&b, api),
            "same seed, same sample"
        );
        assert_ne!(
            configs_of(&a, api),
            configs_of(&c, api),
            "another seed, another sample"
        );
    }
}

#[test]
fn tune_input_mistakes_are_one_line_and_exit_2() {
    bad_input(&["sweep", "--grid", "1w,1w"], "grid '1w' is listed twice");
    bad_input(
        &["sweep", "--grid", "1w,0.001w"],
        "is not a number of waves",
    );
    bad_input(
        &["sweep", "--grid", "1w", "--budget", "0"],
        "--budget 0 measures nothing",
    );
    let dir = scratch("tune-bad");
    let spec = reduce_elems(&dir, |f, t| match f {
        "kernel.toml" => t.replace("block * ELEMS <= n", "block * ELEMS"),
        _ => t,
    });
    let spec = spec.to_str().unwrap();
    bad_input(&["sweep", "--kernel", spec], "tune.restrict[0]");
}

#[test]
fn shares_of_one_space_merge_into_one_answer() {
    if !both() {
        return;
    }
    let dir = scratch("tune-shards");
    let share = |k: &str| -> PathBuf {
        let json = dir.join(format!("share-{}.json", &k[..1]));
        let out = blocksweep()
            .args([
                "sweep",
                "--size",
                "160x90",
                "--blocks",
                "32,64,128",
                "--grid",
                "1w,2w",
            ])
            .args(["--shard", k])
            .args(QUICK)
            .arg("--no-cache")
            .arg("-o")
            .arg(&json)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        json
    };
    let (a, b) = (share("1/2"), share("2/2"));
    assert_eq!(read_tune(&a)["search"]["covered"], 3);
    let merged = dir.join("merged.json");
    let out = blocksweep()
        .arg("compare")
        .arg(&a)
        .arg(&b)
        .arg("-o")
        .arg(&merged)
        .arg("--quiet")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // The merged file is a tune document like the shares', listing the devices they ran on.
    let doc = read_json(&merged);
    assert!(!doc["devices"].as_array().unwrap().is_empty(), "{doc}");
    let m = read_tune(&merged);
    assert_eq!(m["search"]["covered"], 6);
    let apis = crate::support::available_apis();
    for api in &apis {
        assert_eq!(
            configs_of(&m, api).len(),
            6,
            "both shares, each configuration once"
        );
    }
    // One best per API that ran (WebGPU's too, on lavapipe).
    assert_eq!(m["answer"]["best"].as_array().unwrap().len(), apis.len());
}

#[test]
fn a_parameter_set_that_crashes_or_hangs_an_api_is_a_value_and_the_tune_goes_on() {
    if !crate::support::available("opencl") {
        return;
    }
    let dir = scratch("tune-faults");
    // At ELEMS = 4 one work-item stores 4 GiB past `partials` (PoCL runs kernels in the worker
    // process: SIGSEGV); at ELEMS = 8 every work-item loops for ever.
    let spec = reduce_elems(&dir, |f, t| {
        if !f.ends_with(".cl") {
            return t;
        }
        t.replace(
            "    scratch[tid] = acc;",
            "#if ELEMS == 4\n    if (tid == 0) partials[1u << 30] = 1.0f;\n#endif\n\
             #if ELEMS == 8\n    { volatile uint k = 3; while (k != 0) k -= 2; }\n#endif\n\
             \x20   scratch[tid] = acc;",
        )
    });
    let json = dir.join("t.json");
    let out = blocksweep()
        .env("BLOCKSWEEP_DEADLINE_S", "1")
        .arg("sweep")
        .arg("--kernel")
        .arg(&spec)
        .args(QUICK)
        .args(["--backend", "opencl", "--size", "4096", "--blocks", "64"])
        .args(["--no-cache", "-o"])
        .arg(&json)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    // Each fault's line on stderr names its parameter set (two sets failed: two lines that
    // said the same without it).
    let said = stderr(&out);
    for (set, fault) in [("ELEMS=4", "SIGSEGV"), ("ELEMS=8", "did not finish")] {
        let lines: Vec<&str> = said.lines().filter(|l| l.contains(fault)).collect();
        assert!(!lines.is_empty(), "{said}");
        assert!(lines.iter().all(|l| l.contains(set)), "{said}");
    }
    let r = read_tune(&json);
    let errors: Vec<&str> = r["errors"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(
        errors
            .iter()
            .any(|e| e.contains("ELEMS=4") && e.contains("SIGSEGV")),
        "{errors:?}"
    );
    assert!(
        errors
            .iter()
            .any(|e| e.contains("ELEMS=8") && e.contains("did not finish within 1 s")),
        "{errors:?}"
    );
    // The sets before and between the faults ran, and only they are ranked.
    let ran: Vec<u64> = r["measurements"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["outcome"]["kind"] == "ran")
        .map(|e| e["config"]["params"]["ELEMS"].as_u64().unwrap())
        .collect();
    assert!(ran.contains(&1) && ran.contains(&2), "{ran:?}");
    assert!(!ran.contains(&4) && !ran.contains(&8), "{ran:?}");
    let best = &r["answer"]["best"][0]["config"]["params"]["ELEMS"];
    assert!(best == 1 || best == 2, "{best}");
}
